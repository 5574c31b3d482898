/**
 * A question that asks for several things: "what books has she read?", "which cities has he been
 * to?", "what kind of films does she enjoy?" (a plural noun after what/which, then its verb),
 * "how many ...", "... both ...". Its answers are usually told in different conversations, so the
 * re-ranking that favours one conversation (session agreement, a hit's neighbouring turns) is left
 * out for it (src/search/search.ts). On LoCoMo dev, where 73 of the 142 multi-hop questions and 37
 * of the other 855 read so: multi-hop R@5 0.352 -> 0.382, all categories 0.750 -> 0.755, R@1 the
 * same.
 */
const PLURAL_ASKED =
  /^\s*(?:what|which)(?: (?:kinds?|types?|sorts?) of)?(?: \w+)? \w*[^\Ws]s (?:do|does|did|has|have|had|are|were|can|could|will|would|might)\b/i;

export function asksForSeveral(question: string): boolean {
  return /\bhow many\b|\bboth\b/i.test(question) || PLURAL_ASKED.test(question);
}
