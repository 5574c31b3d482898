import type { MemoryRow } from "../db/memory-row.js";
import { byScore, round6 } from "./linked.js";

/** A question about time: "when did ...", "what year ...", "how long ago ...". */
const WHEN =
  /^\s*(?:(?:and|so)\s+)?(?:when\b|what (?:date|day|year|month|time)\b|which (?:date|day|year|month)\b|how long ago\b)/i;
/** A date inside the text, beyond the "On 8 May 2023, " the message date leads with. */
const DATE_IN_TEXT =
  /\((?:[^()]*\b\d{4}\b[^()]*)\)|\b\d{1,2} (?:January|February|March|April|May|June|July|August|September|October|November|December) \d{4}\b|\b(?:in|since|by) (?:19|20)\d{2}\b/;
/** How much a dated memory's score is raised under a question about time. */
const DATED_BOOST = 1.15;

/**
 * Temporal questions prefer memories that say when: a fact whose text carries a resolved date
 * ("last week (the week before 21 November 2023)", "in 2019") is lifted a little under "when did
 * ...?" questions. Pure re-ordering of the ranked list; a score may pass 1 (search scales the
 * list back, withinOne).
 */
export function preferDated<T extends { row: MemoryRow; score: number }>(query: string, ranked: T[]): T[] {
  if (!WHEN.test(query)) return ranked;
  let changed = false;
  const out = ranked.map((r) => {
    const body = r.row.text.replace(/^On \d{1,2} [A-Z][a-z]+ \d{4}, /, "");
    if (!DATE_IN_TEXT.test(body)) return r;
    changed = true;
    return { ...r, score: round6(r.score * DATED_BOOST) };
  });
  return changed ? out.sort(byScore) : ranked;
}
