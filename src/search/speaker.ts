import type { RankRow } from "../db/memory-row.js";
import { foldLatin } from "../fold.js";
import { byScore, round6 } from "./linked.js";
import { asksForSeveral } from "./several.js";

/** How much a named speaker's own memories are lifted. */
const OWN_WORDS_BOOST = 1.1;
/**
 * ... and under a question asking for several things of them ("what books has Tim read?", "what
 * types of yoga has Maria practiced?"): the list is the named person's own account, told over
 * several conversations, and the other speaker's turns that share its words (his own reading,
 * his own yoga class) are the likeliest wrong answers. On LoCoMo dev: multi-hop R@5 0.390 ->
 * 0.405, all categories 0.754 -> 0.757, adversarial unchanged (at 1.5 and above it lost).
 */
const OWN_LIST_BOOST = 1.3;
/**
 * ... and under a question asking what the named person would, might or is likely to do, be or
 * like ("Would Caroline pursue writing as a career?", "What might John's degree be in?", "Does
 * Tim likely enjoy fantasy?"): it asks for an inference about that person, and what it rests on
 * is their own account of themselves, their plans, tastes and values in their own words; the
 * other speaker's turns that share its words are replies about them. Their own memories are
 * tripled, whoever leads, which in practice puts them first (on LoCoMo dev every factor from 2.5
 * to 100 gives the same ranking; 2 left one of them below an episode). "Could" (mostly ability,
 * "could she swim?"), "may" and "probably" are not read so: with them, temporal and adversarial
 * questions lost. On LoCoMo dev, where 29 of the 44 open-domain questions and one other read so:
 * open-domain R@5 0.339 -> 0.400, all categories R@5 0.765 -> 0.768, R@1 0.480 -> 0.482.
 */
const OWN_NATURE_BOOST = 3;
const HYPOTHETICAL = /\b(?:would|might|likely)\b/i;

/**
 * A question naming one speaker of the conversation ("What books has John read?", where "John" is
 * the `role` or `name` his messages came with) prefers what that speaker said: his own account of
 * his reading over the other speaker's about theirs, which shares every other word. Only when the
 * question names exactly one of the speakers among the ranked memories ("What did Melanie think of
 * Caroline's decision?" names two, and either may hold the answer). On LoCoMo dev, categories 1-4:
 * R@1 0.461 -> 0.466, R@5 0.723 -> 0.727, R@10 0.783 -> 0.788 (multi-hop R@5 0.382 -> 0.392,
 * open-domain 0.305 -> 0.324). The adversarial category loses (R@5 0.861 -> 0.840): its questions
 * put one speaker's name on what the other said, so there the named speaker's words are the wrong
 * ones by construction; all five categories: R@5 0.756 -> 0.754, R@10 0.814 -> 0.816.
 *
 * A question asking for one thing is lifted only when its best match said by someone is the
 * named speaker's own: when it is the other speaker's words, the question's words fit what the
 * other one said (it may be about what was said to the named person, or put the name on the
 * other's account), and lifting the named speaker only pushes that match down. On LoCoMo dev (the
 * hashed weight at 0.2): R@5 0.758 -> 0.764, R@10 0.8196 -> 0.8206, R@1 0.4787 -> 0.4792; the
 * gain is the adversarial category's (R@5 0.844 -> 0.869), categories 1-4 lose a little (R@1 0.468
 * -> 0.462, R@5 0.732 -> 0.731, R@10 0.790 -> 0.789; multi-hop and single-hop R@5 unchanged,
 * open-domain 0.324 -> 0.316, one question).
 */
export function preferNamedSpeaker<T extends { row: RankRow; score: number }>(
  query: string,
  ranked: T[],
  // Whether the question asks for several things (asksForSeveral), when the caller knows.
  several = asksForSeveral(query),
): T[] {
  // Accents aside: a speaker "Zoë" is named by "What does Zoe like?".
  const named = new Set(
    (query.match(/\p{Lu}[\p{L}'-]*/gu) ?? []).map((w) => foldLatin(w.replace(/'s$/, ""))),
  );
  const speakerOf = (r: T) => {
    const role = r.row.details?.source_role;
    return typeof role === "string" && named.has(foldLatin(role)) ? role : undefined;
  };
  const speakers = new Set(ranked.map(speakerOf).filter((s) => s !== undefined));
  if (speakers.size !== 1) return ranked;
  const hypothetical = HYPOTHETICAL.test(query);
  const lead = ranked.find((r) => typeof r.row.details?.source_role === "string");
  if (!several && !hypothetical && lead && !speakerOf(lead)) return ranked;
  const boost = hypothetical ? OWN_NATURE_BOOST : several ? OWN_LIST_BOOST : OWN_WORDS_BOOST;
  return ranked.map((r) => (speakerOf(r) ? { ...r, score: round6(r.score * boost) } : r)).sort(byScore);
}

/**
 * How much a fact about one of the user's people weighs under a question the user asks about
 * themselves.
 */
const SOMEONE_ELSES_FACT = 0.5;
/**
 * The user asking about themselves: "I", "me", "myself" in the question, or "the user" ("Who is
 * the user's employer?", as an agent asks), and no "my <someone>" or "the user's <someone>".
 */
const ABOUT_MYSELF = /\b(?:I|I'm|I've|I'd|me|myself)\b|\b[Tt]he user\b/;
const PEOPLE =
  "mom|mum|mother|dad|father|parents?|brothers?|sisters?|siblings?|wife|husband|partner|spouse|girlfriend|boyfriend|fianc[eé]e?|sons?|daughters?|kids?|children|child|baby|grand(?:ma|pa|mother|father|son|daughter|parents?|kids?|children)|aunt|uncle|cousins?|nieces?|nephews?|in-laws?|(?:mother|father|brother|sister|son|daughter)-in-law|friends?|roommates?|boss|manager|colleagues?|coworkers?|co-workers?|neighbou?rs?|doctor|therapist|dentist|teacher";
const MY_SOMEONE = new RegExp(String.raw`\b(?:my|the user's)\s+(?:\w+\s+)?(?:${PEOPLE})\b`, "i");
/**
 * A fact whose subject is one of someone's people, after any date lead: the user's ("The user's
 * mom lives in Lyon"), or a named person's ("Priya's mom lives in Lyon": the user's own name, once
 * on record, stands where "the user" would, src/providers/local/names.ts; or a friend's).
 */
const THEIR_PERSONS_FACT = new RegExp(
  String.raw`^(?:On [^,]{3,40}, )?(?:[Tt]he user's|\p{Lu}[\p{L}-]*'s) (?:\w+ )?(?:${PEOPLE})\b`,
  // Case matters: under "i", \p{Lu} would take any letter ("today's kids" read as someone's).
  "u",
);

/**
 * A question the user asks about themselves ("Where do I live?", "Do I have pets?") prefers what
 * is said of the user over what is said of the user's people: the mother's city and the sister's
 * cats share the question's words ("live", "pets" by their concepts) and ranked first. A fact about
 * one of them weighs half, unless it names the user again ("The user's mom lives with the user").
 * Not under a question naming one of them ("Where does my mom live?", "the user's mom"). Asked
 * of "the user" too: its son's peanut allergy led "Does the user have any allergies?" and a
 * brother's new job "Who is the user's employer?". Memories of a user whose
 * name is on record read "Priya's mom ...": a named person's people count as not the user either
 * (LoCoMo's questions name their speakers, never "I", so it changes nothing there).
 */
export function preferTheUserThemself<T extends { row: RankRow; score: number }>(
  query: string,
  ranked: T[],
): T[] {
  if (!ABOUT_MYSELF.test(query) || MY_SOMEONE.test(query)) return ranked;
  let changed = false;
  const out = ranked.map((r) => {
    const text = r.row.text;
    if (r.row.type !== "fact" || !THEIR_PERSONS_FACT.test(text)) return r;
    if (/\bthe user\b/i.test(text.replace(THEIR_PERSONS_FACT, ""))) return r;
    changed = true;
    return { ...r, score: round6(r.score * SOMEONE_ELSES_FACT) };
  });
  return changed ? out.sort(byScore) : ranked;
}
