import type { CtxDeps, Deps } from "../context.js";
import type { Queryable } from "../db/db.js";
import { type EmbeddableRow, memoriesWithoutVector, setEmbeddings } from "../db/memories.js";
import type { Embedder } from "../providers/types.js";
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
  rows: ReadonlyArray<Omit<EmbeddableRow, "context"> & { context?: string | null }>,
): Promise<void> {
  if (rows.length === 0) return;
  await embedWith(deps.providers.embedder, db, rows, {
    timeoutMs: deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
  });
}

/**
 * Rows embedded by `embedder` and their vectors set while each still has the text embedded;
 * `replace`: over the vector a row has (admin reembed), else only where it has none.
 */
export async function embedWith(
  embedder: Embedder,
  db: Queryable,
  rows: ReadonlyArray<Omit<EmbeddableRow, "context"> & { context?: string | null }>,
  options: { timeoutMs?: number; replace?: boolean } = {},
): Promise<void> {
  const vectors = await embedder.embed(
    rows.map(embeddingText),
    options.timeoutMs === undefined ? undefined : { timeoutMs: options.timeoutMs },
  );
  const byOrg = new Map<string, Array<{ id: string; text: string; embedding: number[] }>>();
  rows.forEach((r, i) => {
    const list = byOrg.get(r.org_id) ?? [];
    list.push({ id: r.id, text: r.text, embedding: vectors[i]! });
    byOrg.set(r.org_id, list);
  });
  for (const [orgId, list] of byOrg)
    await setEmbeddings(db, orgId, list, options.replace ? { replace: true } : {});
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
