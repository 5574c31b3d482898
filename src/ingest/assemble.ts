import type { NewMemoryRow } from "../db/memories.js";
import { sha256Hex, uuidFromSeed } from "../ids.js";
import { normaliseText, splitSentences, withoutSentencesOf } from "../providers/local/english.js";
import type { Extraction, Turn } from "../providers/types.js";
import type { StoredRequest } from "./submit.js";

/** A memory row planned by a job: its write key makes a retried job write the same row. */
export type PlannedRow = NewMemoryRow & { write_key: string; job_id: string };

export interface Plan {
  episode: PlannedRow;
  facts: PlannedRow[];
  artifacts: PlannedRow[];
  directives: PlannedRow[];
}

export const factHash = (text: string) => sha256Hex(`fact:${normaliseText(text)}`);
export const artifactHash = (content: string) => sha256Hex(`artifact:${content.trim()}`);
export const directiveHash = (type: string, text: string) => sha256Hex(`${type}:${normaliseText(text)}`);

/**
 * Turns the extraction into rows with deterministic ids (job id + write key), scope columns on
 * every row, and the links between facts, artifacts and the episode.
 */
export function assemblePlan(
  jobId: string,
  orgId: string,
  request: StoredRequest,
  turns: Turn[],
  ex: Extraction,
  jobCreatedAt: Date,
): Plan {
  const id = (key: string) => uuidFromSeed(`${jobId}:${key}`);
  const scope = {
    org_id: orgId,
    user_id: request.user_id,
    agent_id: request.agent_id ?? null,
    conv_id: request.conv_id,
    app_id: request.app_id ?? null,
    job_id: jobId,
  };
  const byEvent = new Map(turns.map((t) => [t.eventId, t]));
  const episodeId = id("e0");
  // What an approach that failed advised is kept as its failed directives, never served as advice
  // (spec 4.1, `outcome`): a fact saying the same leaves the plan, and the episode's summary.
  // A text advises it when it contains a failed directive's words in order, or when nearly all of
  // its own words are one's (the turn the directive was read from, a title quoting it).
  const failedAdvice =
    request.outcome === "failed" ? ex.directives.map((d) => normaliseText(d.text)).filter(Boolean) : [];
  const adviceWords = failedAdvice.map((a) => new Set(a.split(" ")));
  const advises = (text: string) => {
    const t = normaliseText(text);
    if (!t) return false;
    if (failedAdvice.some((a) => t.includes(a))) return true;
    const words = t.split(" ").filter((w) => w.length > 2);
    return (
      words.length >= 3 && adviceWords.some((a) => words.filter((w) => a.has(w)).length >= 0.8 * words.length)
    );
  };
  let { summary, title, gist } = ex.episode;
  if (failedAdvice.length) {
    for (const f of ex.facts.filter((f) => advises(f.text))) summary = withoutSentencesOf(summary, f.text);
    summary = splitSentences(summary)
      .filter((s) => !advises(s))
      .join(" ");
    // An agentic session's title and gist quote its goal: "Session: <the advice>".
    const goal = title.replace(/^Session: /, "");
    if (goal !== title && advises(goal)) title = "Session";
    if (gist && typeof gist.goal === "string" && advises(gist.goal)) gist = { ...gist, goal: null };
  }
  ex = {
    ...ex,
    facts: ex.facts.filter((f) => !advises(f.text)),
    episode: { ...ex.episode, summary, title, gist },
  };

  const artifacts: PlannedRow[] = ex.artifacts.map((a, i) => ({
    ...scope,
    id: id(`a${i}`),
    write_key: `a${i}`,
    type: "artifact",
    text: a.summary || a.title,
    full_content: a.content,
    content_hash: artifactHash(a.content),
    details: {
      title: a.title,
      rationale: a.rationale,
      version: 1,
      root_id: id(`a${i}`),
      source_fact_ids: [] as string[],
      episode_ids: [episodeId],
      source_event_ids: a.source_event_ids,
    },
  }));

  const facts: PlannedRow[] = ex.facts.map((f, i) => {
    const fid = id(`f${i}`);
    const src = f.source_event_ids.map((e) => byEvent.get(e)).filter((t): t is Turn => !!t);
    const linked = artifacts.filter((a) =>
      (a.details!.source_event_ids as string[]).some((e) => f.source_event_ids.includes(e)),
    );
    for (const a of linked) (a.details!.source_fact_ids as string[]).push(fid);
    return {
      ...scope,
      id: fid,
      write_key: `f${i}`,
      type: "fact",
      text: f.text,
      context: f.context ?? null,
      categories: f.categories,
      content_hash: factHash(f.text),
      details: {
        fact_type: f.fact_type,
        source_role: f.source_role,
        episode_id: episodeId,
        artifact_id: linked[0]?.id ?? null,
        artifact_ids: linked.map((a) => a.id),
        source_event_ids: f.source_event_ids,
        date: src[0]?.date ?? null,
        occurred_at: src[0]?.at?.toISOString() ?? null,
      },
    };
  });

  // A directive was last confirmed when the conversation said it: its latest source message's
  // date where the messages carry one (an imported history's lesson is not "learned today").
  const confirmedAt = (eventIds: string[]) =>
    eventIds
      .map((e) => {
        const t = byEvent.get(e);
        return t?.at ?? t?.refDate;
      })
      .filter((at): at is Date => at instanceof Date)
      .sort((a, b) => a.getTime() - b.getTime())
      .at(-1) ?? jobCreatedAt;
  const directives: PlannedRow[] = ex.directives.map((d, i) => ({
    ...scope,
    id: id(`d${i}`),
    write_key: `d${i}`,
    type: d.type,
    text: d.text,
    trigger_entities: d.trigger_entities,
    namespace: request.namespace ?? null,
    outcome: request.outcome ?? null,
    content_hash: directiveHash(d.type, d.text),
    details: {
      steps: d.type === "procedure" ? d.steps : null,
      observation_count: 1,
      last_confirmed_at: confirmedAt(d.source_event_ids).toISOString(),
      source_event_ids: d.source_event_ids,
      episode_id: episodeId,
    },
  }));

  const dated = turns.filter((t) => t.date);
  const iso = (t: Turn | undefined) => (t ? (t.at?.toISOString() ?? t.date) : null);
  const parsed = turns.filter((t) => t.at).sort((a, b) => a.at!.getTime() - b.at!.getTime());
  const started = parsed.length ? iso(parsed[0]) : (iso(dated[0]) ?? jobCreatedAt.toISOString());
  const ended = parsed.length ? iso(parsed.at(-1)) : (iso(dated.at(-1)) ?? jobCreatedAt.toISOString());
  const episode: PlannedRow = {
    ...scope,
    id: episodeId,
    write_key: "e0",
    type: "episode",
    text: ex.episode.summary || ex.episode.title,
    details: {
      title: ex.episode.title,
      started_at: started,
      ended_at: ended,
      fact_ids: facts.map((f) => f.id),
      artifact_ids: artifacts.map((a) => a.id),
      ...(ex.episode.gist ? { gist: ex.episode.gist } : {}),
    },
  };
  return { episode, facts, artifacts, directives };
}
