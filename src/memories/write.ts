import type { Ctx } from "../context.js";
import { insertMemoryRows, type NewMemoryRow } from "../db/memories.js";
import { newMemoryId } from "../ids.js";
import type { MemoryRow } from "./model.js";

export type MemoryInput = Omit<NewMemoryRow, "id" | "org_id"> & { id?: string };

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
  return insertMemoryRows(
    ctx.db,
    inputs.map((m) => ({ ...m, id: m.id ?? newMemoryId(), org_id: ctx.principal.orgId })),
  );
}

/** What a memory's vector is computed from: its text, plus an artifact's title. */
export function embeddingText(m: Pick<MemoryInput, "type" | "text" | "details">): string {
  const title = typeof m.details?.title === "string" ? m.details.title : "";
  return title && !m.text.includes(title) ? `${title}: ${m.text}` : m.text;
}
