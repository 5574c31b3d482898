import { z } from "zod";
import type { Ctx } from "../context.js";
import { parseLooseDate } from "../dates/dates.js";
import type { MemoryRow, MemoryType } from "../db/memory-row.js";
import { requestModelCall } from "../providers/openai.js";
import { describeModelError, generateStructured } from "../providers/structured.js";
import { unverified } from "../trigger/gate.js";

/** How many candidates the deterministic block renders, and how many the model is shown. */
const DETERMINISTIC_ROWS = 12;
const MODEL_ROWS = 40;

const HEADINGS: Record<MemoryType, string> = {
  lesson: "Lessons",
  procedure: "Procedures",
  fact: "Facts",
  episode: "Episodes",
  artifact: "Artifacts",
};
const ORDER: MemoryType[] = ["lesson", "procedure", "fact", "episode", "artifact"];

/**
 * The day a memory is about, when extraction recorded one (a message date as the chat export
 * wrote it, "1:56 pm on 8 May, 2023", is read as ingest reads it; a directive's, when it was last
 * confirmed); else when it was stored.
 */
export function memoryDate(row: MemoryRow): string {
  const d = row.details ?? {};
  for (const key of ["occurred_at", "event_date", "date", "started_at", "last_confirmed_at"]) {
    const v = d[key];
    if (typeof v === "string" && v.trim()) {
      const parsed = parseLooseDate(v) ?? new Date(v);
      return Number.isNaN(parsed.getTime()) ? v.trim() : parsed.toISOString().slice(0, 10);
    }
  }
  return row.created_at.toISOString().slice(0, 10);
}

const MONTHS = "January February March April May June July August September October November December".split(
  " ",
);

/**
 * A row's text without the day it leads with ("On 10 January 2025, ...") when that is the date the
 * line already shows.
 */
function withoutShownDay(text: string, date: string): string {
  const m = /^On (\d{1,2}) ([A-Z][a-z]+) (\d{4}), (.)/.exec(text);
  if (!m) return text;
  const month = MONTHS.indexOf(m[2]!) + 1;
  const iso = `${m[3]}-${String(month).padStart(2, "0")}-${m[1]!.padStart(2, "0")}`;
  return iso === date ? m[4]!.toUpperCase() + text.slice(m[0].length) : text;
}

/** A lesson or procedure served hedged, as trigger serves it (`unverified`). */
const hedged = (row: MemoryRow) => (row.type === "lesson" || row.type === "procedure") && unverified(row);

function line(row: MemoryRow): string {
  const title =
    typeof row.details?.title === "string" && row.details.title ? `**${row.details.title}**: ` : "";
  const date = memoryDate(row);
  const hedge = hedged(row) ? "(unverified) " : "";
  return `- ${date}: ${hedge}${title}${withoutShownDay(row.text.replace(/\s+/g, " ").trim(), date)}`;
}

/** A text as the block compares it: no leading day, no "X said:", words only, lower case. */
const bare = (text: string) =>
  text
    .replace(/^On \d{1,2} [A-Z][a-z]+ \d{4}, /, "")
    .replace(/^(?:the assistant|\p{Lu}[\p{L}'-]*(?: \p{Lu}[\p{L}'-]*)?) said: /iu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/**
 * The rows worth a line each, in rank order: not one whose words a line above already holds (the
 * episode of a one-turn conversation is its fact again; a fact the assistant said is often a
 * lesson's fix), nor an episode left with nothing but its title (every sentence of it superseded).
 * Copies spent the block's twelve lines: 10 of 12 in one probe.
 */
function distinct(rows: MemoryRow[]): MemoryRow[] {
  const shown: string[] = [];
  const out: MemoryRow[] = [];
  for (const row of rows) {
    const words = bare(row.text);
    const title = typeof row.details?.title === "string" ? bare(row.details.title) : "";
    if (!words || (row.type === "episode" && words === title)) continue;
    if (shown.some((s) => ` ${s} `.includes(` ${words} `))) continue;
    shown.push(words);
    out.push(row);
  }
  return out;
}

/** The markdown block without a model: the top rows grouped by type, each with its date. */
export function composeDeterministic(rows: MemoryRow[]): string {
  const top = distinct(rows).slice(0, DETERMINISTIC_ROWS);
  if (top.length === 0) return "";
  const sections = ORDER.map((type) => {
    const of = top.filter((r) => r.type === type);
    return of.length ? `### ${HEADINGS[type]}\n${of.map(line).join("\n")}` : "";
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
    const output = await requestModelCall(ctx.deps.config, () =>
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
    const context = output.context.trim();
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
