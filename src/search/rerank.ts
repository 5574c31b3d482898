import type { MemoryType, RankRow } from "../db/memory-row.js";
import type { EpisodeLink } from "../db/memory-search.js";
import { factsBeforeTheirEpisode, sessionsThatMatch, withinOne, withLinkedFacts } from "./linked.js";
import { asksForSeveral } from "./several.js";
import { preferNamedSpeaker, preferTheUserThemself } from "./speaker.js";
import { preferDated, preferNamedDay } from "./temporal.js";

/**
 * The re-ranking after the hybrid statement: session agreement, each episode below its own facts,
 * one hop to linked facts (src/search/linked.ts), a named speaker's own words and the user's own
 * facts under a question about themselves (src/search/speaker.ts), the preference for dated facts under a "when" question and for the
 * memories of a day the question names (src/search/temporal.ts), and the list scaled back to
 * 0..1. A question asking for several things gets neither the session agreement nor the links:
 * they favour one conversation, and its answers are usually in several (src/search/several.ts).
 * Episodes are put below their facts twice: first so that the top facts bring their links, and
 * again after every weighting, which moves facts and not their episodes (a fact about the user's
 * sister halved under "Where do I live?" fell below its own one-turn episode, which then led).
 */
export function rerank(
  query: string,
  ranked: { row: RankRow; score: number }[],
  links: readonly EpisodeLink[],
  types: readonly MemoryType[],
  limit: number,
  several = asksForSeveral(query),
): { row: RankRow; score: number }[] {
  const grouped = factsBeforeTheirEpisode(several ? ranked : sessionsThatMatch(ranked));
  const linked = several ? grouped : withLinkedFacts(links, types, grouped, limit);
  const speakers = preferTheUserThemself(query, preferNamedSpeaker(query, linked, several));
  return withinOne(factsBeforeTheirEpisode(preferNamedDay(query, preferDated(query, speakers))));
}
