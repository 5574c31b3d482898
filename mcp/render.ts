import { truncate } from "../src/truncate.js";
import type { SearchResult } from "../src/wire/search.js";

/** Readable text renderings of tool results, for the language model reading them. */

type Row = Record<string, unknown>;

/**
 * One memory as a list line. A fact that is not current says so in its kind (`[fact, superseded]`):
 * list, get and revisions return superseded facts, and a model reading the text alone (what
 * Claude Code hands it) would otherwise take the old claim for the current one.
 */
export function memoryLine(m: Row, note?: string): string {
  const score = typeof m.score === "number" ? `, score ${m.score.toFixed(2)}` : "";
  const extra = note ? `, ${note}` : "";
  return `- [${kind(m)}] ${oneLine(String(m.text ?? ""))} (id ${m.id}${score}${groups(m)}${extra})`;
}

export function memoryList(rows: Row[], empty: string): string {
  return rows.length ? rows.map((m) => memoryLine(m)).join("\n") : empty;
}

/**
 * A revision chain, oldest first: each superseded fact names the fact that superseded it, the
 * active one is marked current; an artifact's versions say which is the latest.
 */
export function revisionList(rows: Row[], empty: string): string {
  if (!rows.length) return empty;
  const supersededBy = new Map(rows.map((m) => [details(m).supersedes, m.id]));
  const latest = Math.max(...rows.map((m) => Number(details(m).version) || 0));
  return rows
    .map((m) => {
      const d = details(m);
      if (m.type === "artifact")
        return memoryLine(m, `version ${d.version}${d.version === latest ? ", current" : ""}`);
      if (d.status === "active") return memoryLine(m, "current");
      const by = supersededBy.get(m.id);
      return memoryLine(m, by ? `superseded by ${by}` : undefined);
    })
    .join("\n");
}

/** A search answer as text: the composed context when there is one, else the rows. */
export function searchText(out: SearchResult, empty: string): string {
  return out.mode === "compose" && out.context?.trim() ? out.context : memoryList(out.data, empty);
}

/**
 * One memory in full: its whole text (a list line cuts it at 300 characters), where it belongs,
 * and every detail it carries (a fact's status and what it supersedes, a lesson's trigger
 * entities, outcome, confidence and steps), then an artifact's full content.
 */
export function memoryDetail(m: Row): string {
  const current = details(m).status === "superseded" ? " (memory_revisions names the current fact)" : "";
  const lines = [`[${kind(m)}] id ${m.id}${groups(m)}${current}`, String(m.text ?? "")];
  for (const k of ["user_id", "agent_id", "conv_id", "app_id", "created_at", "updated_at"] as const) {
    if (m[k]) lines.push(`  ${k}: ${m[k]}`);
  }
  if (Array.isArray(m.categories) && m.categories.length)
    lines.push(`  categories: ${m.categories.join(", ")}`);
  if (m.metadata && typeof m.metadata === "object" && Object.keys(m.metadata).length)
    lines.push(`  metadata: ${JSON.stringify(m.metadata)}`);
  const { full_content: full, steps, ...rest } = details(m);
  for (const [k, v] of Object.entries(rest)) {
    if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) continue;
    lines.push(`  ${k}: ${Array.isArray(v) ? v.join(", ") : typeof v === "object" ? JSON.stringify(v) : v}`);
  }
  if (Array.isArray(steps) && steps.length) {
    lines.push("  steps:", ...steps.map((step, i) => `    ${i + 1}. ${step}`));
  }
  if (typeof full === "string") lines.push("", full);
  return lines.join("\n");
}

const details = (m: Row) => (m.details ?? {}) as Row;

/** ", groups a b" for a memory in groups, else nothing. */
const groups = (m: Row) =>
  Array.isArray(m.group_ids) && m.group_ids.length ? `, groups ${m.group_ids.join(" ")}` : "";

/** The memory's type, with its status when it is not the current one. */
function kind(m: Row): string {
  const status = details(m).status;
  return typeof status === "string" && status !== "active" ? `${m.type}, ${status}` : String(m.type);
}

/** How many memories an ingest's text names, and how long each line's text may be. */
const JOB_LINES = 25;
const LINE_CHARS = 200;
const clip = (s: string) => truncate(s, LINE_CHARS, "…");

export function jobText(job: Row): string {
  const status = String(job.status);
  if (status === "succeeded") {
    const r = (job.result ?? {}) as Row;
    const created = (r.memories_created ?? []) as Row[];
    const updated = (r.memories_updated ?? []) as Row[];
    const ignored = (r.ignored_group_ids ?? []) as string[];
    // A big ingest creates hundreds of memories: the text (what the model reads) names the first
    // JOB_LINES, each cut short; the structured result lists every one in full.
    const lines = [
      ...created.map((m) => ["created", m] as const),
      ...updated.map((m) => ["updated", m] as const),
    ].map(
      ([what, m]) => `- ${what} ${m.type ? `[${m.type}] ` : ""}${clip(oneLine(String(m.text)))} (id ${m.id})`,
    );
    const parts = [
      `Ingest job ${job.id} succeeded: ${created.length} memories created, ${updated.length} updated.`,
      ...lines.slice(0, JOB_LINES),
    ];
    if (lines.length > JOB_LINES)
      parts.push(
        `... and ${lines.length - JOB_LINES} more (every one is in the structured result; list_memories reads them).`,
      );
    if (ignored.length) parts.push(`Ignored unknown or archived group ids: ${ignored.join(", ")}`);
    return parts.join("\n");
  }
  if (status === "failed") {
    const e = (job.error ?? {}) as Row;
    return `Ingest job ${job.id} failed: ${e.code ?? "ingest_failed"}: ${e.message ?? ""}`;
  }
  return `Ingest job ${job.id} is ${status}. Call get_ingest_job with this id later to read its result.`;
}

export function groupLine(g: Row): string {
  const prompt = g.prompt ? `: ${oneLine(String(g.prompt))}` : " (catch-all)";
  return `- ${g.name} (id ${g.id}, ${g.status})${prompt}`;
}

const oneLine = (s: string) => truncate(s, 300, "...").replace(/\s*\n\s*/g, " ");
