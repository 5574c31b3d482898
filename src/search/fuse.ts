import type { Candidate } from "../db/memory-search.js";

export interface RankedList {
  candidates: Candidate[];
  weight: number;
}

/**
 * Relative score fusion: each list's values min-max scaled to 0.05..1 (a row that made a list
 * keeps a little credit), then a weighted sum over the total weight, so `score` is 0..1. Reciprocal
 * rank fusion was tried first: it throws away how far ahead a strong match is, and on LoCoMo it
 * lost 5-8 points of recall@1 to this.
 */
export function fuseScores(lists: RankedList[]): { id: string; score: number }[] {
  const total = lists.reduce((s, l) => s + l.weight, 0) || 1;
  const scores = new Map<string, number>();
  for (const { candidates, weight } of lists) {
    if (!candidates.length) continue;
    const max = Math.max(...candidates.map((c) => c.value));
    const min = Math.min(...candidates.map((c) => c.value));
    const span = max - min || 1;
    // A list whose rows all score alike (one row, or ties) has no worst: each is its best, 1.
    const lo = max === min ? min - 1 : min;
    for (const c of candidates) {
      scores.set(c.id, (scores.get(c.id) ?? 0) + (weight * (c.value - lo + span * 0.05)) / (span * 1.05));
    }
  }
  return [...scores]
    .map(([id, s]) => ({ id, score: Math.round((s / total) * 1e6) / 1e6 }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

/**
 * How much the nearest-neighbour list counts beside full text (weight 1). The local hashed
 * embedder knows no synonyms and no word rarity, so on its own it ranks far below BM25 (LoCoMo
 * turn-level R@5 0.29 against 0.54); fused at full weight it drags good text matches down. A real
 * embedding model gets an equal say. With the re-ranking of issue 17 (links, session agreement,
 * a named speaker's words) the hashed list's vote mattered less still: on LoCoMo dev, categories
 * 1-5, R@1 / R@5 / R@10 at 0.45, 0.3, 0.25, 0.2, 0.15: 0.462 / 0.750 / 0.812, 0.478 / 0.758 /
 * 0.815, 0.480 / 0.761 / 0.819, 0.479 / 0.758 / 0.820, 0.479 / 0.756 / 0.821; 0.2, mid-plateau.
 */
export function vectorWeight(embedderName: string): number {
  return embedderName === "local-hash" ? 0.2 : 1;
}
