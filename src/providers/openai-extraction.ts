import { z } from "zod";
import { identifiersFromText } from "../identifiers/identifiers.js";
import { clipModelText } from "../ingest/redact.js";
import { truncate } from "../truncate.js";
import { normaliseText } from "./local/english.js";
import type { Extraction, Turn } from "./types.js";
import { FACT_TYPES } from "./types.js";

/**
 * The model extractor's side of a call: the schema its reply must match, the prompt it is given
 * for one window of turns, and the reply made into an extraction of that window.
 */

export const ExtractionSchema = z.object({
  facts: z.array(
    z.object({
      text: z.string(),
      fact_type: z.enum(FACT_TYPES),
      categories: z.array(z.string()),
      source_event_ids: z.array(z.string()),
    }),
  ),
  episode: z.object({ title: z.string(), summary: z.string() }),
  artifacts: z.array(
    z.object({
      title: z.string(),
      summary: z.string(),
      rationale: z.string().nullable(),
      content: z.string(),
      source_event_ids: z.array(z.string()),
    }),
  ),
  directives: z.array(
    z.object({
      type: z.enum(["lesson", "procedure"]),
      text: z.string(),
      trigger_entities: z.array(z.string()),
      steps: z.array(z.string()).nullable(),
      source_event_ids: z.array(z.string()),
    }),
  ),
  gist: z
    .object({
      goal: z.string().nullable(),
      actions: z.array(z.string()),
      outcome: z.string().nullable(),
      open_issues: z.array(z.string()),
    })
    .nullable(),
});

export function extractSystem(input: { extractArtifacts: boolean; agentic: boolean }): string {
  return [
    "You extract long-term memories from a conversation. Reply with JSON matching the schema.",
    "facts: one or more self-contained claims per substantive turn, from every speaker, in the third person with the speaker's name when known. Keep specific names, dates, places and objects; resolve relative dates against the turn's date. source_event_ids lists the ids in square brackets of the turns the fact came from.",
    "episode: a short title and a two or three sentence summary of the session.",
    input.extractArtifacts
      ? "artifacts: code blocks, documents and structured objects worth keeping, with their full content verbatim, a stable title (a file name when known), a one-line summary and the reason they were produced."
      : "artifacts: always an empty list.",
    "directives: lessons (rules, corrections, fixes for errors) and procedures (numbered steps) an agent should follow later; trigger_entities are exact identifiers from the text (tool names, file paths, qualified names, error classes, commands, flags).",
    input.agentic
      ? "This is a tool-using agent transcript: ignore tool-output noise, treat files written by tools as artifacts, and fill gist with the goal, the actions taken, the outcome and open issues. Do not repeat facts listed as already known."
      : "gist: null.",
  ].join("\n");
}

export function renderTurns(turns: Turn[], known: string[]): string {
  const lines = turns.map(renderTurn);
  return `${knownHeader(known)}${lines.join("\n")}`;
}

/** One turn as the extraction prompt shows it: `[id] (role, speaker, date) content`. */
export const renderTurn = (t: Turn) =>
  `[${t.eventId}] (${t.role}${t.speaker ? `, ${t.speaker}` : ""}${t.date ? `, ${t.date}` : ""}) ${t.content}`;

/** What every window's prompt opens with on the agentic path: the facts already known. */
export const knownHeader = (known: string[]) =>
  known.length ? `Already known:\n- ${known.join("\n- ")}\n\nConversation:\n` : "";

/** The longest episode summary joined from the windows' summaries. */
export const SUMMARY_MAX = 4_000;

/** What is read past a cut for a secret that runs across it. */
const CUT_MARGIN = 1_000;

/** The longest episode title a model may give. */
const TITLE_MAX = 300;

/**
 * The most a model's reply for one window may hold: generous for 40 turns (five facts a turn, a
 * directive or artifact a turn), and what is beyond is dropped (and logged), not stored and
 * embedded: a runaway reply of 3,000 facts for two turns was stored whole.
 */
export const REPLY_CAPS = {
  facts: 200,
  directives: 40,
  artifacts: 40,
  categories: 10,
  trigger_entities: 30,
  steps: 50,
  gist_items: 40,
} as const;

/** What normalising a reply left out, by kind: over REPLY_CAPS, or tied to no turn of the window. */
export type Dropped = Record<string, number>;

export function normaliseExtraction(
  out: z.infer<typeof ExtractionSchema>,
  turns: Turn[],
  options: { withArtifacts: boolean; redact: boolean },
  dropped: Dropped,
): Extraction {
  const { withArtifacts, redact } = options;
  const byId = new Map(turns.map((t) => [t.eventId, t]));
  // The ids as the prompt shows them ("[D1:3]") are the turns' ids too.
  const ids = (list: string[]) =>
    list.map((id) => id.trim().replace(/^\[(.*)\]$/, "$1")).filter((id) => byId.has(id));
  const transcript = turns.map((t) => t.content).join("\n");
  // Nothing the model writes from this window is longer than the window itself (an artifact's
  // content is quoted from it): a runaway reply of megabytes is cut there, not stored and served.
  // Every text the model wrote passes here: its secrets are masked as the turns' were (a secret
  // put together from several turns; src/ingest/redact.ts, clipModelText).
  const most = Math.max(2_000, transcript.length);
  const clip = (s: string, max = most) => clipModelText(s, max, redact, CUT_MARGIN);
  const cap = <T>(list: T[], kind: keyof typeof REPLY_CAPS): T[] => {
    const max = REPLY_CAPS[kind];
    if (list.length <= max) return list;
    dropped[kind] = (dropped[kind] ?? 0) + list.length - max;
    return list.slice(0, max);
  };
  // A fact cites the turns it came from; one citing none of this window's is a claim of no one's
  // (it was stored as the user's), and is dropped.
  const said = out.facts.filter((f) => f.text.trim());
  const sourced = said.map((f) => ({ f, src: ids(f.source_event_ids) })).filter(({ src }) => src.length > 0);
  const unsourced = said.length - sourced.length;
  if (unsourced) dropped.unsourced_facts = (dropped.unsourced_facts ?? 0) + unsourced;
  return {
    facts: cap(sourced, "facts").map(({ f, src }) => ({
      text: clip(f.text.trim()),
      fact_type: f.fact_type,
      categories: cap(f.categories, "categories").map((c) => clip(c, TITLE_MAX)),
      source_role: byId.get(src[0]!)!.role,
      source_event_ids: src,
    })),
    episode: {
      title: clip(out.episode.title, TITLE_MAX),
      summary: clip(out.episode.summary),
      gist: out.gist && {
        goal: out.gist.goal === null ? null : clip(out.gist.goal),
        actions: cap(out.gist.actions, "gist_items").map((x) => clip(x)),
        outcome: out.gist.outcome === null ? null : clip(out.gist.outcome),
        open_issues: cap(out.gist.open_issues, "gist_items").map((x) => clip(x)),
      },
    },
    artifacts: withArtifacts
      ? cap(out.artifacts, "artifacts").map((a) => ({
          ...a,
          title: clip(a.title, TITLE_MAX),
          summary: clip(a.summary),
          rationale: a.rationale === null ? null : clip(a.rationale),
          content: clip(a.content),
          source_event_ids: ids(a.source_event_ids),
        }))
      : [],
    directives: cap(
      out.directives.filter((d) => d.text.trim()),
      "directives",
    ).map((d) => {
      // Trigger entities must be exact strings: keep the model's only when they occur verbatim.
      const text = clip(d.text);
      const steps = d.steps ? cap(d.steps, "steps").map((x) => clip(x)) : null;
      const own = identifiersFromText([text, ...(steps ?? [])].join("\n"));
      const proposed = d.trigger_entities.filter((e) => transcript.includes(e) || text.includes(e));
      return {
        type: d.type,
        text,
        steps: d.type === "procedure" ? (steps ?? []) : null,
        trigger_entities: cap([...new Set([...proposed, ...own])], "trigger_entities"),
        source_event_ids: ids(d.source_event_ids),
      };
    }),
  };
}

/**
 * The windows' extractions as one. A fact said more than once (in two windows, or five times in
 * one reply) is one fact, and so is a directive of the same type and words (what the store's
 * content hash compares): kept where it was said last, so a value the conversation changed and
 * changed back is judged in that order, with the source turns of every mention, in order.
 */
export function joinWindows(
  parts: Extraction[],
  { turns, agentic }: { turns: Turn[]; agentic: boolean },
): Extraction {
  const first = parts[0]!;
  const title = parts.map((p) => p.episode.title.trim()).find(Boolean) ?? "";
  // A summary of summaries, not a transcript: 85 windows' summaries joined made one of 35,000
  // characters, past an embedding model's context.
  const summary = truncate(
    parts
      .map((p) => p.episode.summary.trim())
      .filter(Boolean)
      .join(" "),
    SUMMARY_MAX,
    " …",
  );
  const firstWords = truncate(turns.find((t) => t.content.trim())?.content.trim() ?? "", 300);
  const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];
  return {
    facts: onceEach(
      parts.flatMap((p) => p.facts),
      (f) => normaliseText(f.text),
      (earlier, later) => ({
        ...later,
        categories: union(earlier.categories, later.categories).slice(0, REPLY_CAPS.categories),
        source_role: earlier.source_role,
        source_event_ids: union(earlier.source_event_ids, later.source_event_ids),
      }),
    ),
    artifacts: parts.flatMap((p) => p.artifacts),
    directives: onceEach(
      parts.flatMap((p) => p.directives),
      (d) => `${d.type}:${normaliseText(d.text)}`,
      (earlier, later) => ({
        ...later,
        trigger_entities: union(earlier.trigger_entities, later.trigger_entities).slice(
          0,
          REPLY_CAPS.trigger_entities,
        ),
        source_event_ids: union(earlier.source_event_ids, later.source_event_ids),
      }),
    ),
    episode: {
      // An episode always says something, as the local extractor's does: without a title from the
      // model it is "Conversation", and without a title or summary its text is the first turn's
      // (an episode of "" was stored, which no client can write).
      title: title || "Conversation",
      summary: summary || (title ? "" : firstWords),
      gist: agentic ? first.episode.gist : null,
    },
  };
}

/** Items with the same key as one (`merge`d), at the place of the last of them. */
function onceEach<T>(items: T[], key: (item: T) => string, merge: (earlier: T, later: T) => T): T[] {
  const out = new Map<string, T>();
  items.forEach((item, i) => {
    // A text with no word to compare is no repeat of another.
    const k = key(item).replace(/^\w+:$/, "") || `#${i}`;
    const earlier = out.get(k);
    out.delete(k);
    out.set(k, earlier === undefined ? item : merge(earlier, item));
  });
  return [...out.values()];
}
