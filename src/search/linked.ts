import type { Queryable } from "../db/db.js";
import { episodeNeighbours } from "../db/memory-links.js";
import type { MemoryRow, MemoryType } from "../db/memory-row.js";
import type { ResolvedScope } from "../db/scope.js";

/** How many of the top hits may bring linked facts, and how far from each (places in its episode). */
const LINK_FROM = 5;
const LINK_SPAN = 1;
/** A linked fact scores this share of the hit that brought it: always below that hit. */
const LINK_FACTOR = 0.6;

/**
 * One hop of multi-hop retrieval: the facts next to a top hit in its episode (the turn it answers,
 * the turn that follows up on it) join the ranking, scored below the hit that brought them, so a
 * question needing two neighbouring facts can see both. Bounded: LINK_FROM hits, LINK_SPAN places
 * either side, and the list keeps its length.
 */
export async function withLinkedFacts(
  db: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  ranked: { row: MemoryRow; score: number }[],
  limit: number,
): Promise<{ row: MemoryRow; score: number }[]> {
  if (!types.includes("fact")) return ranked;
  const from = ranked.slice(0, LINK_FROM).filter((r) => r.row.type === "fact");
  if (from.length === 0) return ranked;
  const byId = new Map(ranked.map((r) => [r.row.id, r]));
  const scoreOf = new Map(from.map((r) => [r.row.id, r.score]));
  let changed = false;
  for (const link of await episodeNeighbours(db, scope, ["fact"], [...scoreOf.keys()], LINK_SPAN)) {
    const score = Math.round((scoreOf.get(link.of) ?? 0) * LINK_FACTOR ** link.distance * 1e6) / 1e6;
    // A linked fact already ranked keeps the better of its own score and the linked one.
    if (score > (byId.get(link.row.id)?.score ?? -1)) {
      byId.set(link.row.id, { row: byId.get(link.row.id)?.row ?? link.row, score });
      changed = true;
    }
  }
  if (!changed) return ranked;
  return [...byId.values()]
    .sort((a, b) => b.score - a.score || (a.row.id < b.row.id ? -1 : 1))
    .slice(0, limit);
}

/**
 * An episode ranks below the best of its own facts that made the list: its summary repeats their
 * sentences, so where both match the fact is the more precise answer and the summary the context.
 * An episode none of whose facts made the list keeps its place.
 */
export function factsBeforeTheirEpisode<T extends { row: MemoryRow; score: number }>(ranked: T[]): T[] {
  const best = new Map<string, number>();
  for (const r of ranked) {
    const ep = r.row.type === "fact" ? r.row.details?.episode_id : undefined;
    if (typeof ep === "string" && r.score > (best.get(ep) ?? -1)) best.set(ep, r.score);
  }
  let changed = false;
  const out = ranked.map((r) => {
    const fact = r.row.type === "episode" ? best.get(r.row.id) : undefined;
    if (fact === undefined || r.score < fact) return r;
    changed = true;
    return { ...r, score: Math.max(0, Math.round((fact - 1e-6) * 1e6) / 1e6) };
  });
  return changed ? out.sort((a, b) => b.score - a.score || (a.row.id < b.row.id ? -1 : 1)) : ranked;
}
