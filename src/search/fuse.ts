import type { Candidate } from "../db/memory-search.js";

/** Reciprocal-rank-fusion constant: the usual 60 flattens the head just enough. */
const RRF_K = 60;

export interface RankedList {
  candidates: Candidate[];
  weight: number;
}

/**
 * Reciprocal rank fusion of several ranked lists, scaled to 0..1 (1 = ranked first by every
 * retriever). Ranks, not raw values, are fused: cosine similarities and BM25 scores live on
 * unrelated scales, and rank fusion holds up when either retriever is weak (the local embedder).
 */
export function fuseRanks(lists: RankedList[]): { id: string; score: number }[] {
  const best = lists.reduce((s, l) => s + l.weight / (RRF_K + 1), 0) || 1;
  const scores = new Map<string, number>();
  for (const { candidates, weight } of lists) {
    candidates.forEach((c, rank) => {
      scores.set(c.id, (scores.get(c.id) ?? 0) + weight / (RRF_K + rank + 1));
    });
  }
  return [...scores]
    .map(([id, s]) => ({ id, score: Math.round((s / best) * 1e6) / 1e6 }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}
