import type { Deps } from "../context.js";
import { memoriesWithoutVector, setEmbeddings } from "../db/memories.js";
import { embeddingText } from "./write.js";

/** Rows embedded per statement, and at most per sweep. */
const BATCH = 100;
const PER_SWEEP = 1_000;

/**
 * Memories left without a vector get one (run by the maintenance sweep): an episode a deletion
 * rewrote whose embedding after the transaction failed (the model away) is found by full text
 * only until then (embedEpisodesAgain in src/memories/delete.ts). Returns how many were embedded.
 */
export async function embedMissingVectors({ deps }: { deps: Deps }): Promise<number> {
  let done = 0;
  while (done < PER_SWEEP) {
    const rows = await memoriesWithoutVector(deps.db, BATCH);
    if (rows.length === 0) break;
    const vectors = await deps.providers.embedder.embed(rows.map(embeddingText), {
      timeoutMs: deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
    });
    const byOrg = new Map<string, Array<{ id: string; text: string; embedding: number[] }>>();
    rows.forEach((r, i) => {
      byOrg.set(r.org_id, [
        ...(byOrg.get(r.org_id) ?? []),
        { id: r.id, text: r.text, embedding: vectors[i]! },
      ]);
    });
    for (const [orgId, list] of byOrg) await setEmbeddings(deps.db, orgId, list);
    done += rows.length;
    if (rows.length < BATCH) break;
  }
  if (done) deps.log.info({ embedded: done }, "memories without a vector embedded");
  return done;
}
