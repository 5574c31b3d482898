import { truncate } from "../src/truncate.js";
import type { SearchResult } from "../src/wire/search.js";

/** Readable text renderings of tool results, for the language model reading them. */

type Row = Record<string, unknown>;

export function memoryLine(m: Row): string {
  const score = typeof m.score === "number" ? `, score ${m.score.toFixed(2)}` : "";
  const groups = Array.isArray(m.group_ids) && m.group_ids.length ? `, groups ${m.group_ids.join(" ")}` : "";
  return `- [${m.type}] ${oneLine(String(m.text ?? ""))} (id ${m.id}${score}${groups})`;
}

export function memoryList(rows: Row[], empty: string): string {
  return rows.length ? rows.map(memoryLine).join("\n") : empty;
}

/** A search answer as text: the composed context when there is one, else the rows. */
export function searchText(out: SearchResult, empty: string): string {
  return out.mode === "compose" && out.context?.trim() ? out.context : memoryList(out.data, empty);
}

export function memoryDetail(m: Row): string {
  const lines = [memoryLine(m)];
  for (const k of ["user_id", "agent_id", "conv_id", "app_id", "created_at", "updated_at"] as const) {
    if (m[k]) lines.push(`  ${k}: ${m[k]}`);
  }
  const details = (m.details ?? {}) as Row;
  if (typeof details.full_content === "string") lines.push("", details.full_content);
  return lines.join("\n");
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
