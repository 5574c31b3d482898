import {
  isAdjectiveOnly,
  isCommonNoun,
  isCommonNounNotName,
  isCommonProperNoun,
  isNationalityOrBelief,
  isNationalityOrFollower,
  isPlainAdjective,
} from "./concepts.js";
import { FIELD_LABELS, isInterjection, MESSAGE_LABELS, STOPWORDS } from "./english.js";

/**
 * Self-introductions: "my name is Priya", "call me Priya", "I go by Rob", "Hi, I'm Priya Shah.", a
 * form's "Name: Priya Shah." opening the message. A name is one to
 * three capitalised words, each with a lower-case letter ("ASAP" is none). "Call me X" counts where
 * it opens a clause or follows "you can", "just", "everyone"... ("could you call me Monday" asks for
 * a call; "my mom used to call me Bunny" is a nickname). "This is X" introduces someone else when a
 * description follows ("This is Max, our dog"). The bare "I'm X" form counts only when X ends its
 * clause ("I'm Priya, a nurse") and is not a nationality or language ("I'm Italian."), nor, without
 * a greeting before it, a member of a people or a follower of a belief ("I'm Christian"; "Hi, I'm
 * Christian" is a name), any word WordNet knows as a person, or one it has only as an adjective
 * ("I'm Sorry, I forgot").
 */
/** A title before a name ("Dr. Ahmed Khan"): not part of it, and never a name itself ("Dr."). */
const TITLE_WORD = String.raw`(?:Dr|Mr|Mrs|Ms|Mx|Miss|Prof|Professor|Sir|Dame|Rev|Fr)`;
export const TITLE = String.raw`(?:${TITLE_WORD}\.?\s+)?`;
// Each word at most 48 letters: a pattern built from a name found (withoutIntroduction) must
// compile, and a 33,000-letter "word" is no name.
const NAME = String.raw`(?!${TITLE_WORD}\b)\p{Lu}[\p{Ll}'][\p{L}'-]{0,46}(?:\s+\p{Lu}[\p{Ll}'][\p{L}'-]{0,46}){0,2}`;
const ENDS = String.raw`(?=\s*(?:[.!?,;:)]|$|\band\b|\bhere\b|\bfor short\b|\bbtw\b|\bby the way\b|\bnow\b|\bfrom now on\b|\binstead\b|\bplease\b))`;
const CLAUSE = String.raw`(?:^|[.!?,;:]\s*|\b(?:[Hh]i|[Hh]ello|[Hh]ey)[,!]?\s+)`;
const NAMED = new RegExp(String.raw`\b[Mm]y name(?: is|'s)\s+${TITLE}(${NAME})${ENDS}`, "u");
const CALLED = new RegExp(
  String.raw`${CLAUSE}(?:(?:[Yy]ou can|[Yy]ou may|[Pp]lease|[Jj]ust|[Ff]eel free to)\s+(?:just\s+)?)?[Cc]all me\s+${TITLE}(${NAME})${ENDS}|\b(?:[Ee]veryone|[Ee]verybody|[Pp]eople|[Mm]ost people|[Ff]riends|[Mm]y friends)\s+calls?\s+me\s+(${NAME})${ENDS}|${CLAUSE}I\s+(?:now\s+)?go\s+by\s+${TITLE}(${NAME})${ENDS}`,
  "u",
);
const IM = new RegExp(
  String.raw`(${CLAUSE})(I'm|I am|[Tt]his is)\s+${TITLE}(${NAME})${ENDS}(\s*,\s*(?:my|our|his|her|their|the|a|an)\b)?`,
  "u",
);
/** What describes the speaker after "I'm <name>,": an age, "a/an ...", where they are from. */
export const APPOSITIVE = /^\s*,\s*(?:(?:a|an|from|originally from|based in)\s|\d{1,3}\b)/;
/** The same said as a second claim: "I'm Dana and I'm 34", "I'm Bob and I am a nurse". */
const JOINED_DESCRIPTION =
  /^\s*,?\s*and I(?:'m| am)\s+(?:(?:a|an|from|originally from|based in)\s|\d{1,3}\b)/;
/** "Dana here." opening a message (after a greeting): the speaker saying who is writing. */
const HERE = new RegExp(
  String.raw`^(?:(?:[Hh]i|[Hh]ello|[Hh]ey)(?: there| all| everyone)?[,!]?\s+)?(${NAME}) here(?=\s*(?:[.!,;:-]|$))`,
  "u",
);
const WEEKDAY = /^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b/;
/** A form filled in, its name field opening the message: "Name: Dana Ruiz. Age: 34." */
const NAME_FIELD = new RegExp(
  String.raw`^\s*(?:Full )?Name:[ \t]+${TITLE}(${NAME})(?=[ \t]*(?:[.,;]|\n|$))`,
  "u",
);

/** A word's first letter in either case, for patterns without the "i" flag (it would make \p{Lu} any letter). */
const eitherCase = (words: string) =>
  words.replace(/(^|\|)(\p{L})/gu, (_m, bar, c) => `${bar}[${c.toUpperCase()}${c}]`);
/** Where a name said in another language ends: a stop or a comma, the text's end, or "and". */
const OTHER_ENDS = String.raw`(?=\s*(?:[.!?,;:)]|$)|\s(?:y|et|und|e|and)\s)`;
/**
 * Self-introductions of the major languages of Latin letters, a small table: "Me llamo Carlos",
 * "Je m'appelle Amélie", "Ich heiße Jan", "Mi chiamo Marco", "Eu me chamo João", "Mi nombre es
 * ...", "Mein Name ist ...", "Meu nome é ..."; and, after a greeting, "soy", "je suis", "ich bin",
 * "sono", "sou" ("Hola, soy José.": without one, "Soy vegano" says what, not who).
 */
const OTHER_NAMED = new RegExp(
  String.raw`(?:^|[.!?,;:¡¿]\s*)(?:${eitherCase("me llamo|je m'appelle|ich heiße|ich heisse|mi chiamo|eu me chamo|me chamo|mi nombre es|mon nom est|mein name ist|il mio nome è|meu nome é|o meu nome é")})\s+${TITLE}(${NAME})${OTHER_ENDS}`,
  "u",
);
const OTHER_GREETED = new RegExp(
  String.raw`^\s*¡?(?:${eitherCase("hola|buenas|bonjour|salut|hallo|guten tag|ciao|salve|olá|oi")})[,!]*\s+(?:${eitherCase("soy|je suis|ich bin|sono|sou")})\s+(${NAME})${OTHER_ENDS}`,
  "u",
);
/** A name in Chinese or Japanese characters: no capitals say where it is. */
const CJK_NAME = String.raw`[\p{Script=Han}\p{Script=Katakana}ー・]{1,8}`;
/** "我叫王伟", "我的名字是王伟" (Chinese); "田中と申します", "田中といいます" (Japanese). */
const CJK_NAMED = new RegExp(
  String.raw`(?:我叫|我的名字是|我名叫)(${CJK_NAME})(?=[。，！,.!\s]|$)|(?:^|[。、！\s]|私は)(${CJK_NAME})(?:と申します|といいます|と言います)`,
  "u",
);

export function introducedName(content: string): string | null {
  const named = NAMED.exec(content) ?? NAME_FIELD.exec(content) ?? OTHER_NAMED.exec(content);
  if (named) return named[1]!;
  const hello = OTHER_GREETED.exec(content);
  if (hello) return hello[1]!;
  const cjk = CJK_NAMED.exec(content);
  if (cjk) return cjk[1] ?? cjk[2]!;
  const called = CALLED.exec(content);
  const callName = called?.[1] ?? called?.[2] ?? called?.[3];
  if (callName && !WEEKDAY.test(callName)) return callName;
  const im = IM.exec(content);
  if (!im) return hereName(content);
  const [, before, form, name, described] = im as unknown as [string, string, string, string, string?];
  const another = /^[Tt]his/.test(form);
  if (another && described) return null;
  const first = name.split(/\s+/)[0]!;
  const greeted = /[Hh]i|[Hh]ello|[Hh]ey/.test(before);
  // A member of a people is a given name too ("Maya", "Frank", "Dakota"): after a greeting it is
  // one ("Hi, I'm Frank"); the people of a country, a language, a follower of a belief and a
  // party member never are ("Hi, I'm German", "Hi, I'm Catholic", "Hi, I'm Democrat").
  if (WEEKDAY.test(first) || (greeted ? isNationalityOrFollower(first) : isNationalityOrBelief(first)))
    return null;
  // "I'm Dana, 34, from Chicago", "I'm Bob, a backend engineer": a description after the name
  // says it is one, as a greeting does.
  const after = content.slice(im.index + im[0].length - (described?.length ?? 0));
  const appositive = !another && APPOSITIVE.test(after);
  // "I'm Dana and I'm 34" says it as a second claim: a name WordNet has is still one, but not a
  // word English has only as an adjective ("I'm Sorry and I'm a bit late").
  const joined = !another && JOINED_DESCRIPTION.test(after);
  // Without either, a word English has only as an adjective is how the speaker is ("I'm Sorry,
  // I forgot", "I'm Happy to help"), not who (a "Sandy" or "Sunny" is then known by a greeting,
  // "my name is" or "call me").
  if (
    !greeted &&
    !appositive &&
    (another || (isCommonProperNoun(first) && !joined) || isAdjectiveOnly(first.toLowerCase()))
  )
    return null;
  return name;
}

/**
 * The name of "Dana here." opening a message: not a weekday, a nationality, a common noun or an
 * adjective ("Snow here.", "Sunny here!" say the weather); a name WordNet has ("Dana") is one.
 */
function hereName(content: string): string | null {
  const name = HERE.exec(content.trim())?.[1];
  if (!name) return null;
  const first = name.split(/\s+/)[0]!;
  if (WEEKDAY.test(first) || isNationalityOrBelief(first) || STOPWORDS.has(first.toLowerCase())) return null;
  if (isCommonNoun(first) || isPlainAdjective(first.toLowerCase()) || isAdjectiveOnly(first.toLowerCase()))
    return null;
  return name;
}

/** The profile fact that records a user's name, and reads it back ("The user's name is Priya."). */
export const userNameFact = (name: string) => `The user's name is ${name}.`;
export const USER_NAME_FACT_PREFIX = "The user's name is ";
export function nameFromFact(text: string): string | null {
  const m = new RegExp(String.raw`^The user's name is (${NAME}|${CJK_NAME})\.$`, "u").exec(text);
  return m ? m[1]! : null;
}

/**
 * Whether a capitalised word before a colon ("Caroline: ...") can be a speaker's name: not a label
 * of a message ("Note:", "Update:"), a function word or an interjection ("Yes:", "Also:", "Sure:",
 * "Wait:"), an adverb of an adjective ("Honestly:") or an adjective alone ("Sorry:"), nor a common
 * noun that is plural or a kind of person ("Allergies:", "Mom:", "Doctor:"): in the user's own
 * message, "Mom: she turns 70" is about their mother; nor a form's field ("Name:", "Job:", "Time:",
 * FIELD_LABELS). A noun of another kind may be a name ("Rose:", "Will:"), and so may any word
 * WordNet lacks.
 */
export function couldBeName(label: string): boolean {
  if (FIELD_LABELS.has(label.toLowerCase())) return false;
  return label.split(/\s+/).every((word) => {
    const w = word.toLowerCase();
    if (STOPWORDS.has(w) || MESSAGE_LABELS.has(w) || isInterjection(w)) return false;
    if (/ly$/.test(w) && isPlainAdjective(w.slice(0, -2))) return false;
    return !isAdjectiveOnly(w) && !isCommonNounNotName(word);
  });
}

/**
 * Whether a label before a colon names a line's speaker in a conversation pasted into a message
 * (src/ingest/route.ts), where its lines read as someone's words: any capitalised word but a form's
 * field or a message's label, kinds of person and interjections too ("Mom:", "Man:", "Will:").
 */
export function couldBeSpeaker(label: string): boolean {
  if (FIELD_LABELS.has(label.toLowerCase())) return false;
  return !label.split(/\s+/).some((word) => MESSAGE_LABELS.has(word.toLowerCase()));
}
