import type { MemoryType, RankRow } from "../db/memory-row.js";
import type { EpisodeLink } from "../db/memory-search.js";

/** How many of the top hits may bring linked facts, and how far from each (places in its episode). */
const LINK_FROM = 5;
export const LINK_SPAN = 2;
/**
 * The ranked rows whose neighbours the search statement reads: the re-ranking before the links
 * (session agreement, episodes below their facts) moves a row a few places at most, so the top
 * LINK_FROM after it come from the statement's top 10 (on LoCoMo dev, reading the neighbours of
 * the top 10 or of all 20 gives the same ranking; it halves the rows read).
 */
export const LINK_CANDIDATES = 2 * LINK_FROM;
/** A linked fact scores this share of the hit that brought it: always below that hit. */
const LINK_FACTOR = 0.6;
/**
 * Session agreement: among the top SESSION_WINDOW rows, a fact whose episode has other hits there
 * gains SESSION_BOOST of its score per other hit (at most three). On LoCoMo dev 0.1 over the top
 * 20 kept R@1 (0.464) and raised R@5 0.703 -> 0.712; 0.15 or the top 10 traded R@1 for R@5.
 */
const SESSION_WINDOW = 20;
const SESSION_BOOST = 0.1;

/** Scores are kept to six places, as the search statement rounds them. */
export const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Best first, ties by id: the order of every re-ranked list. */
export const byScore = (a: { row: RankRow; score: number }, b: { row: RankRow; score: number }) =>
  b.score - a.score || (a.row.id < b.row.id ? -1 : 1);

/** The episode a fact belongs to (facts only). */
const episodeOf = (row: RankRow): string | undefined => {
  const ep = row.type === "fact" ? row.details?.episode_id : undefined;
  return typeof ep === "string" ? ep : undefined;
};

/**
 * One hop of multi-hop retrieval: the facts next to a top hit in its episode (the turn it answers,
 * the turn that follows up on it, the speaker's own turn before and after it: see sameSpeaker)
 * join the ranking, scored below the hit that brought them, so a question needing two
 * neighbouring facts can see both. Bounded: LINK_FROM hits, LINK_SPAN places either side, and the
 * list keeps its length. `links` are the neighbours of the statement's top LINK_CANDIDATES rows,
 * read by the ranking statement itself (rankCandidates), so this costs no round trip.
 */
export function withLinkedFacts(
  links: readonly EpisodeLink[],
  types: readonly MemoryType[],
  ranked: { row: RankRow; score: number }[],
  limit: number,
): { row: RankRow; score: number }[] {
  if (!types.includes("fact")) return ranked;
  const from = ranked.slice(0, LINK_FROM).filter((r) => r.row.type === "fact");
  if (from.length === 0) return ranked;
  const byId = new Map(ranked.map((r) => [r.row.id, r]));
  const hitOf = new Map(from.map((r) => [r.row.id, r]));
  let changed = false;
  for (const link of links) {
    const hit = hitOf.get(link.of);
    if (!hit || link.distance > LINK_SPAN) continue;
    const same = sameSpeaker(link.row, hit.row);
    const steps = link.distance === 1 || same ? 1 : 2;
    // Ties among one hit's links (same steps, same score) are broken by the conversation, not by
    // ids: the speaker's own turns first, then a turn after the hit before one before it.
    const tie = (same ? 0 : 2e-6) + (link.offset < 0 ? 1e-6 : 0);
    const score = round6(hit.score * LINK_FACTOR ** steps - tie);
    // A linked fact already ranked keeps the better of its own score and the linked one.
    if (score > (byId.get(link.row.id)?.score ?? -1)) {
      byId.set(link.row.id, { row: byId.get(link.row.id)?.row ?? link.row, score });
      changed = true;
    }
  }
  if (!changed) return ranked;
  return [...byId.values()].sort(byScore).slice(0, limit);
}

/**
 * Steps between a linked fact and the hit that brought it (its score is the hit's times LINK_FACTOR
 * per step). The turn
 * just before or after the hit (the question it answers, the reply it got) is one step, and so is
 * the same speaker's own turn before or after it: two places away where speakers take turns, it
 * carries the speaker's own thread on ("it feels great!" ... "we even won a trophy!"). Another
 * speaker's turn two places away is two steps. Ties between one hit's links are broken as
 * withLinkedFacts says. On LoCoMo dev, against the adjacent turns alone (0.728 / 0.795): R@5
 * 0.751, R@10 0.812, R@1 unchanged (a linked fact scores below its hit). The other tie orders
 * measured 0.738 to 0.747 at R@5; ties left to random ids, 0.742 to 0.747 between runs.
 */
const sameSpeaker = (a: RankRow, b: RankRow): boolean => {
  const speaker = (row: RankRow) => row.details?.source_role;
  return speaker(a) != null && speaker(a) === speaker(b);
};

/**
 * A text as lines are compared: no leading day ("On 8 May 2023, "), no "X said:", words only,
 * lower case. A fact's text compared so is inside the text of every episode that quotes it.
 */
export const bareWords = (text: string) =>
  text
    .replace(/^On \d{1,2} [A-Z][a-z]+ \d{4}, /, "")
    .replace(/^(?:the assistant|\p{Lu}[\p{L}'-]*(?: \p{Lu}[\p{L}'-]*)?) said: /iu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();

/** Whether `outer`'s words hold `inner`'s, in order and whole (bareWords of each). */
export const holdsWords = (outer: string, inner: string) =>
  inner !== "" && ` ${outer} `.includes(` ${inner} `);

/**
 * An episode ranks below every one of its own facts that made the list: its summary is made of
 * their sentences, so where they match the facts are the precise answers and the summary only
 * repeats them (placed below the best of them only, it still took a slot above the others; on
 * LoCoMo dev R@5 0.717 -> 0.724). So does an episode below a fact of another conversation that it
 * quotes word for word: a fact restated in later conversations is stored once, in the first one's
 * episode, and each later episode repeats its sentence (twelve restatements put eleven episodes
 * above the fact). An episode none of whose facts made the list keeps its place.
 */
export function factsBeforeTheirEpisode<T extends { row: RankRow; score: number }>(ranked: T[]): T[] {
  const lowest = new Map<string, number>();
  const facts: { words: string; score: number }[] = [];
  for (const r of ranked) {
    const ep = episodeOf(r.row);
    if (ep && r.score < (lowest.get(ep) ?? 2)) lowest.set(ep, r.score);
    if (r.row.type === "fact") facts.push({ words: bareWords(r.row.text), score: r.score });
  }
  let changed = false;
  const out = ranked.map((r) => {
    if (r.row.type !== "episode") return r;
    let fact = lowest.get(r.row.id);
    const words = bareWords(r.row.text);
    for (const f of facts) if (f.score < (fact ?? 2) && holdsWords(words, f.words)) fact = f.score;
    if (fact === undefined || r.score < fact) return r;
    changed = true;
    return { ...r, score: Math.max(0, round6(fact - 1e-6)) };
  });
  return changed ? out.sort(byScore) : ranked;
}

/**
 * Facts of an episode that several hits share are lifted a little: when a conversation keeps
 * matching, its other matching turns are likelier to be what was asked than a stray match
 * elsewhere. Only facts already in the list move; a score may pass 1 here (withinOne scales the
 * list back), so facts lifted past the best one keep their order instead of tying at 1.
 */
export function sessionsThatMatch<T extends { row: RankRow; score: number }>(ranked: T[]): T[] {
  const top = ranked.slice(0, SESSION_WINDOW);
  const hits = new Map<string, number>();
  for (const r of top) {
    const ep = episodeOf(r.row);
    if (ep) hits.set(ep, (hits.get(ep) ?? 0) + 1);
  }
  let changed = false;
  const out = ranked.map((r) => {
    const ep = episodeOf(r.row);
    const n = ep ? (hits.get(ep) ?? 0) : 0;
    if (n < 2) return r;
    changed = true;
    return { ...r, score: round6(r.score * (1 + SESSION_BOOST * Math.min(n - 1, 3))) };
  });
  return changed ? out.sort(byScore) : ranked;
}

/**
 * The boosts above multiply scores, and a boosted score may pass 1. Clamping it at 1 tied every
 * such row (a quarter of LoCoMo questions had two or more at 1 in their top 5, their order then
 * decided by random ids), so the list is scaled by its best score instead: order kept, 0..1.
 */
export function withinOne<T extends { score: number }>(ranked: T[]): T[] {
  const top = ranked.reduce((m, r) => Math.max(m, r.score), 0);
  if (top <= 1) return ranked;
  return ranked.map((r) => ({ ...r, score: round6(r.score / top) }));
}
