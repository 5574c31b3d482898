import { isVerb } from "./concepts.js";

/**
 * Whose rule a sentence says, when its "always", "never", "should", "must" ... stand inside it
 * (directives.ts, RULE_ANYWHERE): a rule has the speakers as its subject, or none (an imperative).
 */

/** Where a clause starts: its subject is after this. */
const CLAUSE_BREAK =
  /[,;:()\u2013\u2014]|\b(?:and|but|so|because|since|while|when|whenever|if|unless|although|though|which|who|that|where)\b/i;
/** The speakers and the one spoken to, or everyone: their "always" and "never" are rules. */
const SPEAKERS =
  /^(?:i|i'm|i'd|i've|i'll|we|we're|we'd|we've|we'll|you|you're|you'd|you've|you'll|let's|everyone|everybody|nobody|one)$/;
/** Pronouns of other people. */
const OTHER_PERSON = /^(?:he|she|they|him|her|his|their|them|he's|she's|they're|they've|he'd|she'd|they'd)$/;
/** Nouns for other people, one's kin and company: "my wife", "my dad", "the kids". */
const PERSON_NOUNS = new Set(
  `wife husband partner spouse boyfriend girlfriend fiance fiancee mom mum mother dad father parent
  parents son sons daughter daughters kid kids child children baby brother brothers sister sisters
  sibling siblings grandma grandpa grandmother grandfather granny grandparents aunt uncle cousin
  cousins nephew niece friend friends buddy neighbor neighbour neighbors neighbours roommate
  roommates flatmate boss coworker coworkers colleague colleagues teacher doctor family`.split(/\s+/),
);
/** Verbs that report what someone says or thinks: what follows them is their words. */
const SAYING =
  /^(?:said|says|say|told|tells|tell|asked|asks|thinks|thought|believes|believed|claims|claimed|insists|insisted|swears|swore|warned|warns|reckons)$/;
/** Words between a subject and the rule's cue that are neither: "we should also always". */
const BETWEEN =
  /^(?:please|also|just|really|then|now|still|so|honestly|basically|definitely|probably|seriously|obviously|actually|should|must|will|would|can|could|shall|may|might|do|does|did|not|ever|always|never|usually|often|to)$/;

/** A verb in the third person: "buys", "brings", "has" (no speaker's: "I buy", "we bring"). */
function thirdPersonForm(word: string): boolean {
  if (/^(?:has|does|goes|is)$/.test(word)) return true;
  if (word.length < 4 || !/s$/.test(word) || /(?:ss|us|is)$/.test(word)) return false;
  const bases = [word.slice(0, -1), word.replace(/es$/, ""), word.replace(/ies$/, "y")];
  return bases.some((b) => b !== word && isVerb(b));
}

/**
 * Whether some cue (`cues`, a global pattern) of a sentence sets a rule of the speakers':
 * its clause has no subject ("..., never use X"), the speakers ("we should", "you must", "I
 * never") or a thing ("the build must") as subject; not another person ("my wife always buys
 * yarn", "she always brings cookies"), nor a habit told in the third person ("Alice always uses
 * yarn"), nor another's words ("my dad always said never trust ...").
 */
export function speakersRule(sentence: string, cues: RegExp): boolean {
  return [...sentence.matchAll(cues)].some((m) => {
    const clause = sentence.slice(0, m.index).split(CLAUSE_BREAK).pop() ?? "";
    let words: string[] =
      clause
        .toLowerCase()
        .replace(/\u2019/g, "'")
        .match(/[\p{L}']+/gu) ?? [];
    const said = words.findLastIndex((w) => SAYING.test(w));
    if (said >= 0) {
      // Reported words are a rule only as the speakers' own ("I always say never ...").
      const speaker = words.slice(0, said).filter((w) => !BETWEEN.test(w));
      if (!SPEAKERS.test(speaker[0] ?? "i")) return false;
      words = words.slice(said + 1);
    }
    const subject = words.filter((w) => !BETWEEN.test(w));
    const last = subject.at(-1);
    if (last === undefined || SPEAKERS.test(last)) return true;
    if (subject.some((w) => OTHER_PERSON.test(w) || PERSON_NOUNS.has(w))) return false;
    // "always"/"never" before a third-person verb tells what someone or something does.
    const next = /^(?:always|never)$/i.test(m[0])
      ? (/^\s+([\p{L}']+)/u.exec(sentence.slice(m.index + m[0].length))?.[1]?.toLowerCase() ?? "")
      : "";
    return !thirdPersonForm(next);
  });
}
