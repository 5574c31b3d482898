import { z } from "zod";
import type { Ctx } from "../context.js";
import { parseLooseDate, saidAt } from "../dates/dates.js";
import type { MemoryRow, MemoryType } from "../db/memory-row.js";
import { redactModelText } from "../ingest/redact.js";
import { splitSentences } from "../providers/local/english.js";
import { requestModelCall } from "../providers/openai.js";
import { describeModelError, generateStructured } from "../providers/structured.js";
import { contentTerms, unverified } from "../trigger/gate.js";
import { truncate } from "../truncate.js";
import { bareWords, holdsWords } from "./linked.js";

/** How many candidates the deterministic block renders, and how many the model is shown. */
const DETERMINISTIC_ROWS = 12;
const MODEL_ROWS = 40;
/**
 * The most characters of a row's text a line of the deterministic block shows, and the most
 * characters of the block's lines together: a 40-step procedure and a long note made a
 * 16,311-character block for one query. A row that would pass the block's bound is left out, and
 * the rows ranked below it too. The line's bound is generous: at 500 characters a 714-character
 * fact lost the office, start date and budget it was found for, and an 8-step procedure its last
 * three steps. How a longer text is cut: `fitted`.
 */
export const LINE_CHARS = 2_000;
export const BLOCK_CHARS = 8_000;

const HEADINGS: Record<MemoryType, string> = {
  lesson: "Lessons",
  procedure: "Procedures",
  fact: "Facts",
  episode: "Episodes",
  artifact: "Artifacts",
};
const ORDER: MemoryType[] = ["lesson", "procedure", "fact", "episode", "artifact"];

/**
 * The day a memory is about, when extraction recorded one; else when it was stored. A fact's is the
 * day its message was said on, read as ingest read it for the fact's "On <day>" lead (saidAt: the
 * batch path's `timestamp_format` reading, else the loose formats, on the sender's clock), so the
 * two agree: "2023-05-08T23:30:00-0500" is 8 May, not the UTC day, and "08/05/2023", which ingest
 * reads as neither day, is no day. A directive's is when it was last confirmed. A date that cannot
 * be read is passed over, never printed as sent.
 */
export function memoryDate(row: MemoryRow): string {
  const d = row.details ?? {};
  const text = (key: string) => {
    const v = d[key];
    return typeof v === "string" && v.trim() ? v.trim() : null;
  };
  const said = text("date");
  const at = text("occurred_at");
  const atDate = at ? parseLooseDate(at) : null;
  const day =
    (said ? saidAt(said, atDate) : atDate) ??
    ["event_date", "started_at", "last_confirmed_at"].reduce<Date | null>((found, key) => {
      const v = text(key);
      return found ?? (v ? saidAt(v) : null);
    }, null);
  return (day ?? row.created_at).toISOString().slice(0, 10);
}

const MONTHS = "January February March April May June July August September October November December".split(
  " ",
);

/**
 * A row's text without the day its sentences lead with ("On 10 January 2025, ...") where that is
 * the date the line already shows: a fact's first, and each of an episode's, made of its facts'
 * sentences ("On 8 May 2023, Caroline ... On 8 May 2023, Melanie ..."); another day stays.
 */
function withoutShownDay(text: string, date: string): string {
  return text.replace(
    /(^|[.!?]\s+)On (\d{1,2}) ([A-Z][a-z]+) (\d{4}), (.)/g,
    (all, before: string, day: string, month: string, year: string, next: string) => {
      const iso = `${year}-${String(MONTHS.indexOf(month) + 1).padStart(2, "0")}-${day.padStart(2, "0")}`;
      return iso === date ? `${before}${next.toUpperCase()}` : all;
    },
  );
}

/** A lesson or procedure served hedged, as trigger serves it (`unverified`). */
const hedged = (row: MemoryRow) => (row.type === "lesson" || row.type === "procedure") && unverified(row);

/**
 * A text cut to at most `max` characters (UTF-16 units, "…" included) at a word, with "…" where it
 * was cut; without a space in its second half (a path, a run of Chinese), at the bound itself,
 * between two graphemes (`truncate`).
 */
export function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = truncate(text, max - 1);
  const space = head.lastIndexOf(" ");
  const cut = space > max / 2 ? head.slice(0, space) : head;
  return `${cut.replace(/[\s,;:.!?-]+$/, "")}…`;
}

const flat = (text: string) => text.replace(/\s+/g, " ").trim();

/** Where a procedure's next step starts: a line opening with its number ("\n3. Build the image"). */
const STEP = /\n\s*(?=\d{1,3}[.)]\s)/;

/**
 * A procedure's text ("Deploy:\n1. ...\n2. ...") in at most `max` characters: its heading and
 * the steps that fit, in order, cut between two steps and never inside one, with how many were
 * left out.
 */
function fittedSteps(parts: string[], max: number): string {
  const kept = [flat(parts[0]!)];
  let size = kept[0]!.length;
  let i = 1;
  for (; i < parts.length; i++) {
    const step = flat(parts[i]!);
    // Room for the note of what was left out ("… (12 more steps left out)").
    if (size + 1 + step.length + 30 > max) break;
    kept.push(step);
    size += 1 + step.length;
  }
  const left = parts.length - i;
  const head = cutAtWord(kept.join(" "), max - 30);
  return left ? `${head} … (${left} more step${left === 1 ? "" : "s"} left out)` : head;
}

/**
 * A text longer than `max` in at most `max` characters, cut between sentences: those sharing a
 * content word with the query first (the answer it was found for stays), then the others from the
 * start, each in its own place, with "…" where sentences were left out. One sentence longer than
 * the bound is cut at a word.
 */
function fittedSentences(text: string, query: Set<string>, max: number): string {
  const sentences = splitSentences(text);
  const matched = sentences.map((s) => [...contentTerms(s).keys()].some((w) => query.has(w)));
  const keep = new Set<number>();
  let size = 0;
  for (const wanted of [true, false])
    for (const [i, s] of sentences.entries()) {
      if (matched[i] !== wanted || size + s.length + 3 > max) continue;
      keep.add(i);
      size += s.length + 3;
    }
  if (keep.size === 0) return cutAtWord(sentences[matched.indexOf(true)] ?? text, max);
  let out = "";
  for (const [i, s] of sentences.entries()) {
    if (keep.has(i)) out += `${out ? " " : ""}${s}`;
    else if (!out.endsWith("…")) out += `${out ? " " : ""}…`;
  }
  return out;
}

/** A row's text as its line shows it: whole up to LINE_CHARS, else `fittedSteps` or `fittedSentences`. */
function fitted(row: MemoryRow, title: string, date: string, query: Set<string>): string {
  const text = withoutShownDay(flat(row.text), date);
  if (title.length + text.length <= LINE_CHARS) return `${title}${text}`;
  const max = LINE_CHARS - title.length;
  const steps = row.text.trim().split(STEP);
  return `${title}${steps.length > 2 ? fittedSteps(steps, max) : fittedSentences(text, query, max)}`;
}

function line(row: MemoryRow, query: Set<string>): string {
  const title =
    typeof row.details?.title === "string" && row.details.title ? `**${row.details.title}**: ` : "";
  const date = memoryDate(row);
  const hedge = hedged(row) ? "(unverified) " : "";
  return `- ${date}: ${hedge}${fitted(row, title, date, query)}`;
}

/**
 * The rows worth a line each, in rank order: not one whose words a line above already holds (the
 * episode of a one-turn conversation is its fact again; a fact the assistant said is often a
 * lesson's fix), nor an episode left with nothing but its title (every sentence of it superseded).
 * A row of the same type that holds the words of lines above (the whole sentence below its own
 * clause, both facts of one turn) takes the place of the best of them, and the others go: one
 * line, the fuller text, at the better rank. A row of another type that holds them (an episode
 * holding its facts) is a line of its own. Copies spent the block's twelve lines: 10 of 12 in one
 * probe, 5 of 12 clauses beside their sentences in another. Nor is an episode that repeats only
 * lines an episode above already repeats and says nothing else of the query's words: a fact
 * restated in twelve conversations left one fact line and eleven episodes, each that fact and a
 * remark about something else.
 */
function distinct(rows: MemoryRow[], query: Set<string>): MemoryRow[] {
  const out: { row: MemoryRow; words: string }[] = [];
  // The lines an episode already shown repeats.
  const repeated = new Set<string>();
  const asked = (s: string) => [...contentTerms(s).keys()].some((w) => query.has(w));
  for (const row of rows) {
    const words = bareWords(row.text);
    const title = typeof row.details?.title === "string" ? bareWords(row.details.title) : "";
    if (!words || (row.type === "episode" && words === title)) continue;
    if (out.some((s) => holdsWords(s.words, words))) continue;
    if (row.type === "episode") {
      const quoted = out
        .filter((s) => s.row.type !== "episode" && holdsWords(words, s.words))
        .map((s) => s.words);
      const rest = splitSentences(row.text).filter((s) => !quoted.some((q) => holdsWords(q, bareWords(s))));
      if (quoted.length && quoted.every((q) => repeated.has(q)) && !rest.some(asked)) continue;
      for (const q of quoted) repeated.add(q);
    }
    const held = out.filter((s) => s.row.type === row.type && holdsWords(words, s.words));
    if (held.length === 0) {
      out.push({ row, words });
      continue;
    }
    out[out.indexOf(held[0]!)] = { row, words };
    for (const s of held.slice(1)) out.splice(out.indexOf(s), 1);
  }
  return out.map((s) => s.row);
}

/**
 * The markdown block without a model: the top rows grouped by type, each with its date, each
 * line's text at most LINE_CHARS (a longer one cut for the query: `fitted`) and the lines
 * together at most BLOCK_CHARS.
 */
export function composeDeterministic(rows: MemoryRow[], query = ""): string {
  const terms = new Set(contentTerms(query).keys());
  const top: { row: MemoryRow; text: string }[] = [];
  let size = 0;
  for (const row of distinct(rows, terms).slice(0, DETERMINISTIC_ROWS)) {
    const text = line(row, terms);
    size += text.length + 1;
    if (size > BLOCK_CHARS) break;
    top.push({ row, text });
  }
  if (top.length === 0) return "";
  const sections = ORDER.map((type) => {
    const of = top.filter((r) => r.row.type === type);
    return of.length ? `### ${HEADINGS[type]}\n${of.map((r) => r.text).join("\n")}` : "";
  }).filter(Boolean);
  return `## Relevant memories\n\n${sections.join("\n\n")}\n`;
}

const Selection = z.object({
  selected_ids: z
    .array(z.string())
    .describe("ids of the memories that help answer the query, most useful first"),
  context: z.string().describe("a concise markdown block of the selected memories, with dates, for a prompt"),
});

/**
 * One context-selection call: the model picks the candidates that bear on the query and writes
 * the markdown block. Returns null when the model fails or picks nothing usable, so the caller
 * falls through to the deterministic block.
 */
export async function composeWithModel(
  ctx: Ctx,
  query: string,
  rows: MemoryRow[],
): Promise<{ context: string; selected: string[] } | null> {
  const llm = ctx.deps.providers.llm;
  if (!llm || rows.length === 0) return null;
  const shown = rows.slice(0, MODEL_ROWS);
  const list = shown.map(
    (r) =>
      `[${r.id}] (${r.type}${hedged(r) ? ", unverified" : ""}, ${memoryDate(r)}) ${r.text.replace(/\s+/g, " ")}`,
  );
  try {
    const output = await requestModelCall(ctx.deps.config, "context selection", () =>
      generateStructured(llm, ctx.deps.config, {
        schema: Selection,
        system:
          "You select long-term memories for an AI agent. Pick only the memories that help with the query " +
          "and write a short markdown block of them (keep dates, and mark unverified ones as unverified). " +
          "Never invent facts.",
        timeoutMs: ctx.deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
        prompt: `Query: ${query}\n\nCandidate memories:\n${list.join("\n")}`,
      }),
    );
    const known = new Set(shown.map((r) => r.id));
    const selected = output.selected_ids.filter((id) => known.has(id));
    // Served to the agent: masked as the turns were (the model may put a secret together from
    // the memories' pieces).
    const context = redactModelText(output.context.trim(), ctx.deps.config.MNEMO_REDACT_SECRETS);
    if (!context && selected.length === 0) return { context: "", selected: [] };
    // A block written from none of the candidates is not theirs to serve (a model that invents);
    // one longer than all of them together is not a selection of them. The deterministic block
    // answers instead.
    const candidates = shown.reduce((n, r) => n + r.text.length + 100, 0);
    if (selected.length === 0 || context.length > candidates + 2_000) {
      ctx.log.warn(
        { selected: selected.length, contextLength: context.length },
        "context selection unusable; using the deterministic block",
      );
      return null;
    }
    return { context, selected };
  } catch (err) {
    ctx.log.warn(
      { cause: describeModelError(err) },
      "context selection failed; using the deterministic block",
    );
    return null;
  }
}
