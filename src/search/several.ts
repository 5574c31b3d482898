/**
 * A question that asks for several things: "what books has she read?", "which cities has he been
 * to?", "what kind of films does she enjoy?" (a plural noun after what/which, then its verb),
 * "how many ...", "... both ...". Its answers are usually told in different conversations, so the
 * re-ranking that favours one conversation (session agreement, a hit's neighbouring turns) is left
 * out for it (src/search/search.ts). On LoCoMo dev, where 73 of the 142 multi-hop questions and 37
 * of the other 855 read so: multi-hop R@5 0.352 -> 0.382, all categories 0.750 -> 0.755, R@1 the
 * same.
 *
 * The plural noun may follow a modifier written with a hyphen, plus or slash ("transgender-specific
 * events", "LGBTQ+ events", "career-high performances"), be an irregular plural ("people",
 * "children"), carry a short prepositional phrase ("types of pottery have", "events for veterans
 * has"), and be followed by "is" ("what events is she planning"). "What has she painted?",
 * "Where has he camped?" (the present perfect of what someone has done over time; not "what has
 * he decided to do?") ask for several too. Those widenings took the multi-hop questions read so
 * from 73 to 85 (and 4 more of the other 855):
 * multi-hop R@5 0.405 -> 0.417, R@10 0.501 -> 0.512, all categories R@5 0.757 -> 0.758, R@10
 * 0.814 -> 0.815, R@1 0.479 -> 0.478.
 */
const PLURAL_ASKED =
  /^\s*(?:what|which)(?: (?:kinds?|types?|sorts?) of)?(?: [\w+/-]+)? (?:\w*[^\Ws]s|people|children)\b(?: (?:for|of|about|in|at|with|from) \w+)? (?:do|does|did|has|have|had|are|were|is|can|could|will|would|might)\b/i;
const HAS_DONE = /^\s*(?:what|where) (?:has|have) \w+ \w+ed\b(?! to\b)/i;

export function asksForSeveral(question: string): boolean {
  return /\bhow many\b|\bboth\b/i.test(question) || PLURAL_ASKED.test(question) || HAS_DONE.test(question);
}
