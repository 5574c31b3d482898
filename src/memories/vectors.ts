import type { CtxDeps, Deps } from "../context.js";
import type { Queryable } from "../db/db.js";
import { memoriesWithoutVector, setEmbeddings } from "../db/memories.js";
import type { MemoryType } from "../db/memory-row.js";
import { embeddingText } from "./write.js";

/** Rows embedded per statement, and at most per sweep. */
const BATCH = 100;
const PER_SWEEP = 1_000;

/**
 * Vectors for rows whose vector was dropped (an episode a deletion rewrote, updateEpisodeText),
 * from their text as it is now; each is set only while the row still has that text (setEmbeddings).
 */
export async function embedRows(
  deps: CtxDeps,
  db: Queryable,
  rows: ReadonlyArray<{
    id: string;
    org_id: string;
    type: MemoryType;
    text: string;
    details: Record<string, unknown>;
    context?: string | null;
  }>,
): Promise<void> {
  if (rows.length === 0) return;
  const vectors = await deps.providers.embedder.embed(rows.map(embeddingText), {
    timeoutMs: deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
  });
  const byOrg = new Map<string, Array<{ id: string; text: string; embedding: number[] }>>();
  rows.forEach((r, i) => {
    const list = byOrg.get(r.org_id) ?? [];
    list.push({ id: r.id, text: r.text, embedding: vectors[i]! });
    byOrg.set(r.org_id, list);
  });
  for (const [orgId, list] of byOrg) await setEmbeddings(db, orgId, list);
}

/**
 * Memories left without a vector get one (run by the maintenance sweep): an episode a deletion
 * rewrote whose embedding after the transaction failed (the model away) is found by full text
 * only until then (embedEpisodesAgain in src/memories/delete.ts). Returns how many were embedded.
 */
export async function embedMissingVectors({ deps }: { deps: Deps }): Promise<number> {
  let done = 0;
  while (done < PER_SWEEP) {
    const rows = await memoriesWithoutVector(deps.db, BATCH);
    await embedRows(deps, deps.db, rows);
    done += rows.length;
    if (rows.length < BATCH) break;
  }
  if (done) deps.log.info({ embedded: done }, "memories without a vector embedded");
  return done;
}
