import type { Ctx } from "../context.js";
import { insertMemoryRows, type NewMemoryRow } from "../db/memories.js";
import type { MemoryRow } from "../db/memory-row.js";
import { newMemoryId } from "../ids.js";

export type MemoryInput = Omit<NewMemoryRow, "id" | "org_id"> & { id?: string };

/** Rows per INSERT statement. */
export const WRITE_CHUNK_ROWS = 200;

/**
 * The core write: stores memories for the caller's organisation, embedding any row that comes
 * without a vector. Ingest stores through this (inside its transaction); tests create memories
 * through it too, never by raw SQL.
 */
export async function writeMemories(ctx: Ctx, inputs: MemoryInput[]): Promise<MemoryRow[]> {
  const missing = inputs.filter((m) => m.embedding === undefined);
  if (missing.length) {
    const vectors = await ctx.deps.providers.embedder.embed(missing.map((m) => embeddingText(m)));
    missing.forEach((m, i) => {
      m.embedding = vectors[i]!;
    });
  }
  // In bounded statements: one INSERT of thousands of rows holds the database (and a payload
  // of that size) for its whole length; chunks keep each statement short.
  const rows = inputs.map((m) => ({ ...m, id: m.id ?? newMemoryId(), org_id: ctx.principal.orgId }));
  const out: MemoryRow[] = [];
  for (let i = 0; i < rows.length; i += WRITE_CHUNK_ROWS)
    out.push(...(await insertMemoryRows(ctx.db, rows.slice(i, i + WRITE_CHUNK_ROWS))));
  return out;
}

/** What a memory's vector is computed from: its text, plus an artifact's title. */
export function embeddingText(m: Pick<MemoryInput, "type" | "text" | "details">): string {
  const title = typeof m.details?.title === "string" ? m.details.title : "";
  return title && !m.text.includes(title) ? `${title}: ${m.text}` : m.text;
}
