import type { Ctx } from "../context.js";
import { insertMemoryRows, type NewMemoryRow } from "../db/memories.js";
import type { MemoryRow } from "../db/memory-row.js";
import { newMemoryId } from "../ids.js";
import { conceptTerms } from "../providers/local/concepts.js";

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
  // of that size) for its whole length; chunks keep each statement short. A chunk's concept terms
  // are computed just before it is written, so this thread computes a chunk's worth at a time
  // between waits (all 3,000 facts of a big job at once held every request for about 50 ms).
  const rows = inputs.map((m) => ({ ...m, id: m.id ?? newMemoryId(), org_id: ctx.principal.orgId }));
  const out: MemoryRow[] = [];
  for (let i = 0; i < rows.length; i += WRITE_CHUNK_ROWS) {
    const chunk = rows.slice(i, i + WRITE_CHUNK_ROWS);
    for (const m of chunk) {
      // Facts only: an episode's summary repeats its facts' words, and expanded it outranked them.
      if (m.concepts === undefined) m.concepts = m.type === "fact" ? conceptText(m) : null;
    }
    out.push(...(await insertMemoryRows(ctx.db, chunk)));
  }
  return out;
}

/**
 * What a memory's vector is computed from: its text, plus an artifact's title and the indexed
 * context (the question a reply answered), which say what the text is about.
 */
export function embeddingText(m: Pick<MemoryInput, "type" | "text" | "details" | "context">): string {
  const title = typeof m.details?.title === "string" ? m.details.title : "";
  const text = title && !m.text.includes(title) ? `${title}: ${m.text}` : m.text;
  return m.context ? `${text} ${m.context}` : text;
}

/**
 * The concept terms full text indexes beside a memory (sql/090): WordNet synonyms and broader
 * terms of the words of its text and context, for every provider (a model's embedding knows
 * synonyms, BM25 does not). Null when there are none.
 */
export function conceptText(m: Pick<MemoryInput, "text" | "context">): string | null {
  const terms = conceptTerms(m.context ? `${m.text} ${m.context}` : m.text);
  return terms.length ? terms.join("; ") : null;
}
