import { escapeRe } from "../../dates/strptime.js";
import { isKnownCommand } from "../../identifiers/identifiers.js";
import type { FactType } from "../types.js";
import {
  isCommonNoun,
  isCommonWord,
  isMostlyVerb,
  isNationalityOrBelief,
  isPersonalNoun,
  isPlainAdjective,
  isVerb,
} from "./concepts.js";
import { standardWords } from "./informal.js";
import { irregularBase } from "./irregular.js";

/** Rule-based English helpers for the local extractor: sentences, person, fact types, categories. */

/** Apostrophes that "smart punctuation" types: right and left single quotation marks, the modifier letter. */
const TYPED_APOSTROPHE = /(?<=\p{L})[\u2019\u2018\u02bc](?=\p{L})/gu;
/**
 * `text` with a typed apostrophe between two letters written as ASCII's ("I’m" -> "I'm", "don’t",
 * "name’s"), as the English rules read contractions and possessives; code (fenced or inline) as
 * written. Phones and word processors type "’": read as it came, "I’m vegan" became "the user’m
 * vegan" and "I don’t work at Acme anymore" superseded nothing.
 */
export function asciiApostrophes(text: string): string {
  if (!/[\u2019\u2018\u02bc]/.test(text)) return text;
  return text
    .split(/(```[\s\S]*?```|`[^`\n]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(TYPED_APOSTROPHE, "'")))
    .join("");
}

/**
 * A run of Chinese, Japanese (kana) or Korean characters: scripts written without spaces between
 * words. The same ranges as sql/100_cjk_bigrams.sql.
 */
export const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+/g;

/**
 * `text` with each CJK run written as its overlapping two-character pieces, space-separated
 * ("我喜欢寿司" -> "我喜 喜欢 欢寿 寿司"), as full text indexes it: a word of two characters or
 * more is then one of the pieces wherever it is written.
 */
export function cjkSpaced(text: string): string {
  return text.replace(CJK_RUN, (run) => {
    const chars = [...run];
    if (chars.length < 2) return ` ${run} `;
    return ` ${chars
      .slice(0, -1)
      .map((c, i) => c + chars[i + 1])
      .join(" ")} `;
  });
}

/**
 * Labels that lead a claim ("Remember: my wife's birthday is 3 May"): no part of it, so a fact
 * leaves them out (CLAIM_LABEL).
 */
const CLAIM_LABELS = [
  "remember",
  "reminder",
  "note",
  "nb",
  "ps",
  "p.s.",
  "fyi",
  "important",
  "update",
  "heads up",
  "edit",
  "tl;dr",
  "tldr",
  "change of plan",
  "change of plans",
  "plan change",
  "plot twist",
  "change of heart",
];
/**
 * The same kind of label with a word or two before it ("Quick update:", "Random fact:", "Personal
 * stuff:", "One more thing:"): the words before it are a closed list, so a claim that starts with a
 * noun and a colon ("My favourite thing: pizza") keeps its subject.
 */
const LABEL_MODIFIERS =
  "quick|small|little|short|brief|another|one more|random|fun|personal|side|important|last|final|general|big|good|bad|sad|exciting|some|life|work|family|health|unrelated|totally unrelated|different|slight|minor|major|new";
const LABEL_NOUNS =
  "update|note|fact|thing|stuff|news|info|question|reminder|confession|change|change of plans?|change of heart";
/** What ends a label: a colon, or a dash with a space after it ("Quick update - I moved ..."). */
const LABEL_END = "\\s*(?::|[-\u2013\u2014](?=\\s))";
export const CLAIM_LABEL = new RegExp(
  `^(?:(?:${CLAIM_LABELS.map(escapeRe).join("|")})${LABEL_END}|p\\.\\s?s\\.:?|(?:(?:a|an)\\s+)?(?:${LABEL_MODIFIERS})\\s+(?:${LABEL_NOUNS})${LABEL_END})\\s+`,
  "i",
);

/**
 * A lead-in before what it introduces, left in a sentence when the code it introduced is taken out
 * ("Here is my migration script: It hangs on the index."): no part of the claim after it.
 */
const LEAD_IN = /^(?:here(?: is|'s| are)|below is|see) ([^:]{1,80}):\s+(?=\S)/i;
/** A sentence without its lead-in; a pronoun for what it introduced names it ("My script hangs"). */
export function withoutLeadIn(s: string): string {
  const m = LEAD_IN.exec(s);
  if (!m) return s;
  const rest = s.slice(m[0].length);
  const named = m[1]!.charAt(0).toUpperCase() + m[1]!.slice(1);
  return /^(?:it|this|that|they|these)\b/i.test(rest) ? rest.replace(/^\w+/, named) : rest;
}

/**
 * Words that lead a message as a label ("Remember: ...", "Question: ..."), never as its speaker's
 * name ("Caroline: ..." is one): the claim labels and others that head a message.
 */
export const MESSAGE_LABELS = new Set([
  ...CLAIM_LABELS,
  ...`notes edit correction btw tip hint warning caution question answer summary context example
  background problem issue error result output input goal task todo plan idea status rule lesson
  fact source subject title quote re tldr disclaimer spoiler aside fixed done solved resolved`.split(/\s+/),
]);

/**
 * The labels of a form's or a profile's fields ("Name: Dana Ruiz.", "Budget: $2,000.", "Time:
 * 3pm."): a closed list. Never a speaker's name before a colon (src/ingest/route.ts: "Job" and
 * "Date" are nouns WordNet has of another kind, so they "may be" names), and in the user's message
 * a line of one is the user's attribute (attributeLine). The fields of an event (EVENT_FIELDS)
 * describe the event, not the user: their lines are kept as said.
 */
const PROFILE_FIELDS =
  `name, full name, first name, last name, surname, nickname, age, birthday, birthdate, date of
  birth, dob, gender, pronouns, height, weight, nationality, religion, city, town, hometown, country,
  address, home address, location, zip, zip code, postcode, job, job title, occupation, profession,
  role, position, employer, company, workplace, school, university, college, major, degree, salary,
  income, budget, diet, allergies, blood type, email, email address, phone, phone number, mobile,
  cell, website, username, password, pin, relationship status, marital status, languages, hobbies`
    .split(/,\s*/)
    .map((f) => f.replace(/\s+/g, " "));
const EVENT_FIELDS = new Set(["time", "date", "place", "venue", "when", "where", "deadline", "duration"]);
export const FIELD_LABELS = new Set([...PROFILE_FIELDS, ...EVENT_FIELDS]);

/** "Here's", "Here are", "Below is" opening the line that introduces a list (its last sentence). */
const LIST_LEAD_IN = /(^|[.!?]\s+)(?:here(?: is|'s| are)|below (?:is|are))\s+(?=[^:]{1,80}:$)(\p{L})/iu;
const upperNext = (_m: string, before: string, letter: string) => `${before}${letter.toUpperCase()}`;

/** A line of a numbered or bulleted list: its item. */
const LIST_ITEM = /^\s*(?:\d{1,3}[.)]|[-*•])\s+(\S.*?)\s*$/;

/**
 * A list's lines as one sentence, its items separated by semicolons, and after the line that
 * introduces it when that ends with a colon, blank lines between or not ("How to release:\n1.
 * Build\n2. Deploy" reads "How to release: Build; Deploy."; "Shopping list:\nEggs: 12\nMilk: 2
 * liters" reads "Shopping list: Eggs: 12; Milk: 2 liters."): an item alone is rarely a claim, and
 * split at its number ("2. Run ...") the list lost its short items. A list's items are its
 * numbered or bulleted lines and its "Label: value" lines of things (labelledItem).
 */
function listsAsSentences(text: string): string {
  const out: string[] = [];
  const lines = text.split("\n");
  // The last line said before this one, past blank lines: it introduces a list when it ends with ":".
  let lead = -1;
  for (let i = 0; i < lines.length; ) {
    const introduced = lead >= 0 && out[lead]!.trimEnd().endsWith(":");
    const itemOf = (line: string) => LIST_ITEM.exec(line)?.[1] ?? labelledItem(line, introduced);
    if (itemOf(lines[i]!) === null) {
      if (lines[i]!.trim()) lead = out.length;
      out.push(lines[i++]!);
      continue;
    }
    const items: string[] = [];
    for (let item = itemOf(lines[i]!); item !== null; item = ++i < lines.length ? itemOf(lines[i]!) : null)
      items.push(item.replace(/[.;,]$/, ""));
    // A list ends with its last item's "!" ("stove!", not "stove!."); after a "?" it ends with a
    // stop all the same: a list of questions ("Questions for the vet: ...") is no question asked.
    const list = `${items.join("; ")}${items.at(-1)!.endsWith("!") ? "" : "."}`;
    // "Here's what I need for the trip:" says what the list is: "What I need for the trip: ...".
    if (introduced) {
      out.splice(lead + 1);
      out[lead] = `${out[lead]!.trimEnd().replace(LIST_LEAD_IN, upperNext)} ${list}`;
    } else {
      lead = out.length;
      out.push(list);
    }
  }
  return out.join("\n");
}

/**
 * Abbreviations a sentence does not end at: titles, "e.g.", months before a day ("Jan. 5"), company
 * and street words ("Acme Inc.", "Elm Ave."), "approx.". A sentence that does end at one
 * joins the next: two claims in one fact, never a claim cut in two.
 */
const ABBREVIATION =
  /\b(?:e\.g|i\.e|Dr|Mr|Mrs|Ms|St|Jr|Sr|Prof|Mt|Ft|vs|etc|Inc|Corp|Ltd|Ave|Rd|Blvd|approx|Dept|Univ|Capt|Sgt)\.$/i;
/** Abbreviations that stay inside a sentence only before a number ("Jan. 5", "No. 7"): "No. I ..." ends one. */
const BEFORE_NUMBER = /\b(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|No|Nos|Vol|pp?)\.$/;

/**
 * An assistant's sentence that supposes, illustrates or speaks in general ("For example, if you
 * flew into Osaka, ...", "Suppose you worked nights: ...", "Say you ...", "Imagine ...",
 * "Generally, customers who ..."): nothing that happened or holds in the user's affairs, no fact
 * and no rule (directives.ts).
 */
export const ASSISTANT_SUPPOSING =
  /^(?:(?:if|suppose|supposing|imagine|say|let's say|hypothetically|for example|for instance|generally|in general|typically)\b|e\.g\.)/i;
/**
 * An offer waiting on the user's word ("If you'd like, I'll book ...", "I'll book it if you want",
 * "Want me to ...?", "Just say the word"): nothing done yet, nor the user's rule.
 */
export const ASSISTANT_OFFER =
  /\b(?:if you(?:'d| would)? (?:like|want|prefer|wish)|if that works|want me to|would you like me to|shall I|should I|just (?:say the word|let me know|confirm))\b/i;
/**
 * Such a sentence that says nothing of the user's own affairs. One speaking in general or of a
 * condition about "your" plan or account ("Generally, your Premium plan includes 2 TB ...",
 * "Typically, accounts like yours get ...") or naming code ("If you run `make test`, it loads
 * ...") tells what holds, and is kept; one supposing or illustrating ("Imagine you had a week in
 * Kyoto with your wife") is not.
 */
export const isAssistantSupposing = (sentence: string) =>
  ASSISTANT_SUPPOSING.test(sentence) &&
  !(
    /^(?:if|generally|in general|typically)\b/i.test(sentence) &&
    /\byours?\b|`/i.test(sentence) &&
    !ASSISTANT_OFFER.test(sentence)
  );

/** A line's label: a capitalised noun with at most two words after it ("Blood type"). */
const LABEL = String.raw`\p{Lu}[\p{Ll}'-]+(?:\s\p{Ll}[\p{Ll}'-]*){0,2}`;
/** A "Label: value" line: a label (LABEL), a colon, a value. */
const LABELLED_LINE = new RegExp(String.raw`^\s*(${LABEL}):\s+\S`, "u");
const knownLabel = (line: string) => {
  const label = LABELLED_LINE.exec(line)?.[1]?.toLowerCase();
  return !!label && (FIELD_LABELS.has(label) || MESSAGE_LABELS.has(label));
};

/** A "Label: value" line's label and value. */
const LABEL_VALUE = new RegExp(String.raw`^\s*(${LABEL}):\s+(\S.*?)\s*$`, "u");
/** Words that make the noun after them someone's own ("Favorite food:", "New number:", "Current job:"). */
const OWN_MODIFIERS = new Set(
  "favorite favourite preferred usual current new old former previous".split(" "),
);
/** A label's words (lower case) that are no function word, message label or interjection ("Also:", "Question:"). */
const isPlainLabel = (words: string[]) =>
  !words.some((w) => STOPWORDS.has(w) || MESSAGE_LABELS.has(w) || isInterjection(w));

/**
 * Whether a line's label (lower case) names something of the speaker's: a form's field
 * (FIELD_LABELS), a noun of what a person is, has in their life or does ("Allergies:", "Mom:",
 * "Hobbies:", "Weekend:", isPersonalNoun), or one said to be their favourite or current one
 * ("Favorite food:", "New number:"). A thing's name ("Milk:", "Eggs:", "Clothes:") labels an item.
 */
function isAttributeLabel(key: string): boolean {
  const words = key.split(" ");
  return FIELD_LABELS.has(key) || OWN_MODIFIERS.has(words[0]!) || isPersonalNoun(words.at(-1)!);
}

/** A value that ends as a question ("Really?", "(why?)"). */
const isQuestion = (value: string) => /\?["')\]]*$/.test(value);
/**
 * A value said, not noted: a question or an interjection, exclaimed or not ("Really?", "Yes.",
 * "Wow!"). An item noted with a "!" ("Sunscreen: SPF 50!") is still an item.
 */
const isSpeech = (value: string) => isQuestion(value) || isInterjection(value.replace(/[.,;!]+$/, ""));
/** A label that is someone's name ("Sam:", "Sam Lee:"), no thing's: no word of it a common noun. */
const isNameLabel = (label: string) =>
  label.split(" ").every((w) => /^\p{Lu}\p{Ll}+$/u.test(w) && !isCommonNoun(w));

/**
 * A "Label: value" line that is a list's item ("Eggs: 12", "Clothes: thermal layers"), as said, or
 * null: its value no one's words (isUtterance: "Mom: she turns 70" is not; isSpeech: "Sam: Really?"
 * is not), its label no one's name ("Sam:") and no form's
 * field ("Age: 34") nor a message's label, and, unless a line ending with a colon introduces the
 * list ("Packing list:"), a thing's name, not the speaker's attribute (isAttributeLabel:
 * "Allergies: penicillin").
 */
function labelledItem(line: string, introduced: boolean): string | null {
  const m = LABEL_VALUE.exec(line);
  // Under a line introducing a list ("Packing list:"), "Passport: yes" is a checked item, not a reply.
  if (!m || isUtterance(m[2]!) || (introduced ? isQuestion : isSpeech)(m[2]!) || isNameLabel(m[1]!))
    return null;
  const key = m[1]!.toLowerCase();
  if (FIELD_LABELS.has(key) || !isPlainLabel(key.split(" "))) return null;
  return introduced || !isAttributeLabel(key) ? line.trim() : null;
}

/**
 * Lines that end their sentence though they lack its stop: a markdown heading ("# Packing list",
 * its marks left out; before a list, its items next, it introduces them as a line ending with a
 * colon does), a form's field or a message's label with its value before another line ("Age: 34",
 * "Subject: Quarterly budget review"), or any "Label: value" line before another, and a line
 * before a blank one (a paragraph never goes on after it). Flattened with the rest, each ran into
 * the next line's sentence ("Subject: Quarterly budget review Hi team, ...").
 */
function linesEnded(text: string): string {
  const lines = text.split("\n");
  return lines
    .map((line, i) => {
      const heading = /^\s{0,3}#{1,6}\s+(.*?)[\s#]*$/.exec(line);
      const l = heading ? heading[1]! : line;
      if (!l.trim() || /[.!?:;,]["')\]]*\s*$/.test(l) || LIST_ITEM.test(l)) return l;
      if (heading) {
        let j = i + 1;
        while (j < lines.length && !lines[j]!.trim()) j++;
        const after = lines[j];
        const list = after !== undefined && (LIST_ITEM.test(after) || labelledItem(after, true) !== null);
        return `${l.trimEnd()}${list ? ":" : "."}`;
      }
      const next = lines[i + 1];
      const ends =
        next !== undefined &&
        (!next.trim() || (LABELLED_LINE.test(l) && (knownLabel(l) || LABELLED_LINE.test(next))));
      return ends ? `${l.trimEnd()}.` : l;
    })
    .join("\n");
}

/**
 * Whether the stop that ends `before` stays inside its sentence, `next` being the text after it:
 * an abbreviation ("Dr.", "e.g."), a month or "No." before a number, a name's initial ("Ursula K.
 * Le Guin") or dotted initials ("the U.S. Postal Service", "at 7 a.m. Friday", "D.C.").
 */
export function stopsInside(before: string, next: string): boolean {
  return (
    ABBREVIATION.test(before) ||
    (BEFORE_NUMBER.test(before) && /^\d/.test(next)) ||
    /(?:^|\s)[A-Z]\.$/.test(before) ||
    /(?:^|[\s("'])(?:[A-Za-z]\.){2,}$/.test(before)
  );
}

export function splitSentences(text: string): string[] {
  const flat = listsAsSentences(linesEnded(text.replace(/```[\s\S]*?```/g, " ")))
    .replace(/\s+/g, " ")
    .trim();
  if (!flat) return [];
  // A sentence ends at . ! ? followed by space and a capital, quote or digit; abbreviations such
  // as "e.g." and "Dr." stay inside, and so do dots inside names ("invoice.ts") and a name's
  // initials ("Ursula K. Le Guin", "J. R. R. Tolkien").
  const out: string[] = [];
  let buf = "";
  const parts = flat.split(/(?<=[.!?])\s+(?=["'([A-Z0-9])/);
  for (const [i, part] of parts.entries()) {
    buf = buf ? `${buf} ${part}` : part;
    if (stopsInside(buf, parts[i + 1] ?? "")) continue;
    out.push(buf.trim());
    buf = "";
  }
  if (buf.trim()) out.push(buf.trim());
  return out;
}

/**
 * Function words and chat filler: they carry no topic. The one stopword list of the local
 * providers: the extractor's content words and the embedder's features both leave them out (left
 * in, they dominate the cosine of short texts; hashed features cannot learn IDF).
 */
export const STOPWORDS = new Set(
  `a an the and or but if then so of to in on at by for with from as is am are was were be been being it
  its this that these those i me my mine we us our you your he him his she her they them their there
  here what which who whom whose when where why how do does did done have has had having not no yes
  just very really also too can could will would shall should may might must about into over under up
  down out off again more most some any all each every other such only own same than both few lot lots
  much many get got gonna wanna like well said says oh hey hi hello yeah yep ok okay thanks thank
  please sure one thing things above after because before below between doing during further hers
  herself himself itself myself nor now once ours theirs through until while yours yourself`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * The one stemmer of the local providers: a light suffix strip so that "paints", "painted" and
 * "painting" share a stem.
 */
export function stem(w: string): string {
  if (w.length <= 4) return w;
  for (const suffix of ["ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "ly", "s"]) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      return suffix === "ies" ? `${w.slice(0, -3)}y` : w.slice(0, -suffix.length);
    }
  }
  return w;
}

export const contentWords = (s: string) =>
  (s.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{M}\p{N}'-]*/gu) ?? []).filter(
    (w) => w.length > 2 && !STOPWORDS.has(w),
  );

const PLEASANTRY =
  /^(thanks|thank you|thx|great|cool|awesome|nice|sounds (good|great|fun|awesome)|that's (great|awesome|amazing|cool|nice|so \w+)|that sounds|glad|good to (hear|see)|congrats|congratulations|wow|haha|lol|no problem|you're welcome|bye|see you|take care|have a (good|great|nice)|by the way|take a look|check (this|it) out|look at this)\b/i;
/**
 * Words that open a sentence and say nothing themselves ("Oh,", "Yes:", "Wait no,", "You know
 * what,"): no part of the claim, and never a speaker's name before a colon (src/ingest/route.ts).
 */
const INTERJECTION_WORDS =
  "no thanks|no thank you|no worries|never ?mind|jesus|(?:oh )?(?:my )?god|man|dude|hey|hi|hello|oh|wow|yeah|yes|yep|well|ok|okay|so|um|hmm|aw+|omg|ha|hah|heh|haha|hehe|lol|lmao|gosh|thanks|thank you|sure|honestly|alright|correction|update|ugh|argh|ah+|phew|meh|whoa|woah|oops|uh|oof|yikes|geez|jeez|yay|woohoo|ngl|tbh|imo|imho|fwiw|sorry|my bad|(?:oh |no )?wait(?:,?\\s+no)?|you know what";
const INTERJECTION = new RegExp(`^(?:${INTERJECTION_WORDS})$`, "i");
export const isInterjection = (word: string) => INTERJECTION.test(word);
const LEADING_INTERJECTION = new RegExp(`^((${INTERJECTION_WORDS})(\\s+[A-Z][a-z]+)?[,!.:]+\\s*)+`, "i");
/** Pictographs before the words ("🎉🎉 Just got engaged!"): the sentence starts after them. */
const LEADING_PICTOGRAPHS = /^(?:(?:\p{Extended_Pictographic}|\u{FE0F}|\u{200D}|\p{Emoji_Modifier})+\s*)+/u;
/** The same openers run into the speaker's own words without a comma ("Yeah I'm her maid of honor"). */
const OPENER_BEFORE_SELF =
  /^(?:(?:yeah|yep|yes|well|ok|okay|so|oh|hmm|um|sure|honestly|alright|lol|haha|lmao|omg|ugh|ngl|tbh|imo|imho|fwiw)\s+)+(?=(?:I|I'm|I've|I'll|I'd|we|we're|my|our)\b)/i;

/** Words of a three-word reply that says nothing of the speaker ("I know, right.", "I agree totally."). */
const CHAT_REPLY = new Set(
  "i'm i've we're know right agree totally guess mean think see true exactly same understand hope bet let sure".split(
    " ",
  ),
);
/** A reaction to what was just said: "I didn't know that (at all)", "I never knew that before". */
const NEWS_TO_ME =
  /^(?:I|we) (?:didn't|did not|never|had no idea|don't|do not) ?(?:know|knew|reali[sz]e|think of)? (?:that|this|it)(?: (?:at all|before|either|yet|until now))?\s*[.!]*$/i;
/** A line of a log or a code marker: its level or marker in capitals, then a colon or in brackets. */
const LOG_LINE = /^\[?(?:ERROR|ERR|WARN|WARNING|INFO|DEBUG|TRACE|FATAL|CRITICAL|PANIC)(?:\]|:|\s+\d)/;
/** An answer that only says yes or no: "I don't think so.", "I guess so.", "I hope not." */
const SO_OR_NOT =
  /^(?:I|we) (?:(?:don't|do not|really|kind of|kinda) )?(?:think|guess|hope|suppose|believe|reckon|expect) (?:so|not)\s*[.!]*$/i;
/** Where one lives, said as "home": "Denver is home.", "Lisbon is my home now." */
const HOME = /^\p{Lu}[\p{L}' -]*? (?:is|was|has been|will be|became) (?:my |our )?home(?: now)?[.!]*$/u;
/** Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Burmese). */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;
const HANGUL = /\p{Script=Hangul}/gu;

/**
 * Whether a sentence says something worth keeping as a fact: four words or more, or three that
 * the speaker says of themselves ("I'm vegan now.", "I love jazz."), or, in a script without
 * spaces, six characters of it or more.
 */
/** A speaker's age or diet, said in a few words. */
const SELF_AGE_OR_DIET =
  /^(?:I'm|I am|I just turned|I turned|I'll be)\s+(?:now\s+)?(?:a |an )?(?:\d{1,3}|vegetarian|vegan|pescatarian|pescetarian)\b/i;

/** Someone's age by their name alone, said in a few words: "Noah is 9.", "Noah's 10 now.". */
const NAMED_AGE = /^(\p{Lu}\p{Ll}+)(?:'s| is| just turned| turned) (?:now )?\d{1,3}(?: now)?[.!]*$/u;

/**
 * A speaker's life event, said short and said of themselves: "I just got married!", "We got
 * engaged 💍", "I'm pregnant!", "I finally graduated", "Just got engaged!"; not a phrase that only
 * starts with such a word ("A dad joke.", "Pregnant pause.", "Graduated cylinder.").
 */
const LIFE_EVENT =
  /^(?:(?:I|We)\s+(?:(?:just|finally|officially|recently)\s+)*(?:got\s+|became\s+|(?=retired|graduated))|(?:I'm|I am|We're|We are)\s+(?:(?:now|officially|finally)\s+)*|(?:just|finally)\s+got\s+)(?:married|engaged|divorced|pregnant|retired|graduated|promoted|laid off|widowed|a (?:mom|mum|dad|father|mother|grandma|grandpa|grandmother|grandfather))(?:\s+(?:today|yesterday|last \w+))?[\s!.]*(?:\p{Extended_Pictographic}(?:[\s!.]|\u{FE0F})*)*$/iu;

/** A speaker saying what they have or got: "I have a dog", "We own a boat", "I've got a PhD". */
const OWNS =
  /^(?:I|We)(?:'ve)?\s+(?:(?:also|still|now|just|finally|recently|actually|already)\s+)*(?:have|own|got|adopted|bought|rescued|inherited)\s+(?:a|an|one|two|three|four|\d+|my|our|some|several)\s+\S/i;
/** What a conversation has, not the speaker: "I have a question", "I got an idea", "I have a sec". */
const TALK_THINGS = new Set(
  "question questions idea ideas feeling clue doubt doubts point minute minutes moment second sec sense suggestion suggestions thought thoughts answer favor favour request problem issue plan story confession update news announcement hunch chance time lot bit few couple thing things".split(
    " ",
  ),
);
/**
 * A lasting trait or standing said of oneself: "I'm left-handed.", "We're both diabetic.", "I'm
 * unemployed.", "I'm gay."
 */
const TRAIT =
  /^(?:I'm|I am|We're|We are)\s+(?:(?:now|still|also|both)\s+)?(?:left-handed|right-handed|ambidextrous|diabetic|colou?r-?blind|deaf|blind|autistic|dyslexic|asthmatic|epileptic|celiac|coeliac|lactose[- ]intolerant|gluten[- ]free|sober|teetotal|single|divorced|widowed|adopted|bilingual|trilingual|introverted|extroverted|unemployed|self-employed|retired|disabled|homeless|gay|lesbian|bisexual|bi|straight|queer|asexual|pansexual|trans|transgender|non-?binary)[\s!.]*$/i;

/** A speaker saying what they like: "I (really) like ...", "we liked ...". */
const PREFERENCE = /^(?:I|We)\s+(?:(?:really|also|still|just|do|totally|kinda|kind of)\s+)*(?:like|liked)\b/i;

/**
 * Greetings and courtesies of other languages, said alone ("Hola!", "很高兴认识你！", "よろしくお願いします！",
 * "आपसे मिलकर खुशी हुई!"): nothing about anyone, as their English ones (PLEASANTRY, ASSISTANT_OWN in
 * extractor.ts) are not. A small table of the major languages, no dictionary: what it misses is kept
 * as said.
 */
const COURTESIES = new Set(
  `hola|buenos días|buenas tardes|buenas noches|gracias|muchas gracias|mucho gusto|encantado|encantada|de nada|adiós|hasta luego
  bonjour|bonsoir|salut|merci|merci beaucoup|enchanté|enchantée|ravi de vous rencontrer|au revoir|de rien
  hallo|guten morgen|guten tag|guten abend|danke|danke schön|vielen dank|freut mich|tschüss|bitte schön
  ciao|buongiorno|buonasera|grazie|grazie mille|piacere|arrivederci|prego
  olá|oi|bom dia|boa tarde|boa noite|obrigado|obrigada|muito obrigado|muito obrigada|prazer|tchau
  привет|здравствуйте|спасибо|спасибо большое|очень приятно|пока
  你好|您好|谢谢|谢谢你|非常感谢|很高兴认识你|认识你很高兴|再见|不客气
  こんにちは|こんばんは|おはようございます|ありがとう|ありがとうございます|はじめまして|よろしくお願いします|どうぞよろしくお願いします|さようなら
  안녕하세요|감사합니다|고맙습니다|만나서 반갑습니다|반갑습니다
  नमस्ते|धन्यवाद|शुक्रिया|आपसे मिलकर खुशी हुई|आपसे मिलकर अच्छा लगा
  مرحبا|شكرا|شكرا جزيلا|السلام عليكم
  שלום|תודה|תודה רבה
  สวัสดี|สวัสดีครับ|สวัสดีค่ะ|ขอบคุณ|ขอบคุณครับ|ขอบคุณค่ะ`
    .split(/\s*\n\s*|\|/)
    .map((w) => w.trim())
    .filter(Boolean),
);
/** Whether a sentence is only a greeting or courtesy of COURTESIES, its punctuation and pictographs aside. */
export const isCourtesy = (sentence: string) =>
  COURTESIES.has(
    sentence
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s]+/gu, " ")
      .replace(/\s+/g, " ")
      .trim(),
  );

/**
 * Function words of English that no other language written in Latin letters has as its own ("is",
 * "was", "will", "to", "for", "of" are Dutch, German, Polish or Scandinavian words too).
 */
const ENGLISH_FUNCTION_WORDS = new Set(
  "the and with from that this it are were have had not you your they their what would can could there which who something anything everything nothing gotta".split(
    " ",
  ),
);
/** An English contraction: "that's", "we've", "don't", "I'm" (another language's apostrophe comes first: "l'école"). */
const CONTRACTION = /^\p{L}+(?:'(?:s|ve|re|ll|d|m)|n't)$/u;
/**
 * Whether a sentence reads as English, for the English person rules (toThirdPerson): no function
 * word of another language (otherLanguage), and an English function word, a contraction or "I",
 * or else at least half of its words of three letters or more English to WordNet (a common word or
 * its regular form: "arrived") or the stop words (names inside the sentence aside). "Yo me llamo Carlos y me gusta el fútbol." is not
 * ("me" is the Spanish reflexive, not the speaker as an object), nor "ผมอาศัยอยู่ที่เชียงใหม่";
 * "Love my new bike!" is.
 */
export function readsAsEnglish(sentence: string): boolean {
  if (otherLanguage(sentence)) return false;
  // An address, a file's or a compound name, and code are no words of a language.
  const words =
    sentence
      .replace(ADDRESSES, " ")
      .replace(/`[^`]*`/g, " ")
      .match(/[\p{L}\p{M}][\p{L}\p{M}']*/gu) ?? [];
  if (words.some((w) => w === "I" || ENGLISH_FUNCTION_WORDS.has(w.toLowerCase()) || CONTRACTION.test(w)))
    return true;
  // Shorter words: WordNet has most as abbreviations ("em", "eu", "el").
  const plain = words
    .filter((w, i) => w.length > 2 && (i === 0 || !/^\p{Lu}/u.test(w)))
    .map((w) => w.toLowerCase());
  // A regular form of a common word is English too ("arrived", "packages", "waiting").
  const regular = (w: string) =>
    [
      w.replace(/e?d$/, ""),
      w.replace(/d$/, ""),
      w.replace(/e?s$/, ""),
      w.replace(/ing$/, ""),
      w.replace(/ing$/, "e"),
    ]
      .filter((b) => b !== w && b.length > 2)
      .some(isCommonWord);
  const english = plain.filter(
    (w) =>
      STOPWORDS.has(w) ||
      isCommonWord(w) ||
      irregularBase(w) !== null ||
      standardWords(w) !== null ||
      regular(w),
  );
  return 2 * english.length >= plain.length;
}

/**
 * A request asked as a question ("Can you remember that my locker code is 4821?") is the request
 * ("Remember that my locker code is 4821."): the claim it carries is kept.
 */
export function politeRequest(sentence: string): string {
  const m =
    /^(?:can|could|would|will) you(?: please)? (remember|note|keep in mind|write down|save|remind me)\b(.*?)\s*\?+$/i.exec(
      sentence.trim(),
    );
  return m ? `${m[1]!.charAt(0).toUpperCase()}${m[1]!.slice(1)}${m[2]}.` : sentence;
}

export function isSubstantive(sentence: string): boolean {
  // "I am a nurse." says what "I'm a nurse." says, in one word more: counted as the contraction.
  const s = sentence
    .trim()
    .replace(/^I am\b/, "I'm")
    .replace(/^We are\b/, "We're");
  if (/[?？؟]$/.test(s)) return false;
  // A log's line pasted in ("ERROR: connection refused", "[WARN] ..."): written in capitals, a
  // program's words, not the speaker's. ("TODO: book the vet" is the speaker's own to-do.)
  if (LOG_LINE.test(s)) return false;
  // A form's field and its value, however short ("Time: 3pm.", "Age: 34.").
  const field = LABELLED_LINE.exec(s);
  if (field && FIELD_LABELS.has(field[1]!.toLowerCase())) return true;
  // Numbers say it: "My kids are 4 and 7.", "Our flat is 60 square metres."
  if (/^(?:my|our) [\p{L}' -]+ (?:is|are|was|were) (?:about |around |now )?\d/iu.test(s)) return true;
  if (isCourtesy(s)) return false;
  if ((s.match(UNSPACED)?.length ?? 0) >= 6) return true;
  // Korean puts spaces between words of several syllables, particles attached: few words say
  // much ("제 남편은 요리사예요.", "my husband is a chef", is three).
  if ((s.match(HANGUL)?.length ?? 0) >= 6) return true;
  // Words of a script the English rules below cannot read (Devanagari, Thai, Cyrillic, Hebrew ...):
  // three words say something, as three of the speaker's own do in English, or four characters of
  // a script without spaces ("我是学生。").
  if (/\p{L}/u.test(s) && !/\p{Script=Latin}/u.test(s))
    return s.split(/\s+/).length >= 3 || (s.match(UNSPACED)?.length ?? 0) >= 4;
  // A two-letter name in capitals is a word of content too ("I moved to the UK.", "We live in LA.").
  const words = [...contentWords(s), ...(s.match(/\b(?!OK\b)\p{Lu}{2}\b/gu) ?? [])];
  if (PLEASANTRY.test(s) && words.length < 4) return false;
  const n = s.split(/\s+/).length;
  // Short, and about the speaker all the same: an age or a diet ("I'm 34.", "I just turned 35.",
  // "I'm vegetarian.").
  // A correction after it is no more words of the claim ("I am 30, not 29.").
  if (s.replace(/,\s*not\s+\S+$/i, "").split(/\s+/).length <= 4 && SELF_AGE_OR_DIET.test(s)) return true;
  // ... or someone's age, by their name ("Noah is 9.", "Noah's 10 now."; not "Dinner is 7.").
  const aged = NAMED_AGE.exec(s)?.[1]?.toLowerCase();
  if (aged && !STOPWORDS.has(aged) && !isCommonWord(aged)) return true;
  // ... a life event ("I just got married!", "Just got engaged 💍", "I'm pregnant!") or where the
  // speaker is from or what they believe ("I'm French.", "I'm Buddhist.").
  if (n <= 6 && LIFE_EVENT.test(s)) return true;
  const who = /^(?:I'm|I am|We're|We are)\s+(\p{Lu}\p{Ll}+)[.!]?$/u.exec(s);
  if (who && isNationalityOrBelief(who[1]!)) return true;
  if (n === 3 && /^(I|I'm|I've|My|We|We're)\b/.test(s)) return words.some((w) => !CHAT_REPLY.has(w));
  // What the speaker has, in a few words ("I have a dog.", "We own a boat.", "I got a puppy!"), not
  // what the talk has ("I have a question.", "I have no idea."); a lasting trait ("I'm left-handed.").
  if (n <= 5 && OWNS.test(s)) return words.some((w) => !CHAT_REPLY.has(w) && !TALK_THINGS.has(w));
  if (n <= 3 && TRAIT.test(s)) return true;
  // Talk about the talk ("I see what you mean.", "Let me think about it.", "I didn't know that at
  // all!") says nothing either.
  if (words.length && words.every((w) => CHAT_REPLY.has(w))) return false;
  if (s.length < 60 && (NEWS_TO_ME.test(s) || SO_OR_NOT.test(s))) return false;
  if (HOME.test(s)) return true;
  // A lead-in to what follows ("Here is my backup script backup.sh:") is no claim of its own.
  if (/^(?:here(?: is|'s| are)|below is|this is|see)\b.*:$/i.test(s)) return false;
  // "I really like tea", "We like jazz a lot": "like" is chat filler elsewhere ("it's like, fine"),
  // so the one content word left is what the speaker likes.
  if (words.length === 1 && n >= 3 && PREFERENCE.test(s)) return !CHAT_REPLY.has(words[0]!);
  // A date says enough beside one word of content ("My birthday is May 5.": "May" is also a
  // modal verb, and "5" too short a word, so it counted one content word and was dropped).
  if (words.length >= 1 && n >= 4 && MONTH_DAY.test(s)) return true;
  return words.length >= 2 && n >= 4;
}

/** A month and a day: "May 5", "Sept. 12th", "5 May". */
const MONTH_NAME = String.raw`(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?`;
const MONTH_DAY = new RegExp(
  String.raw`\b${MONTH_NAME} \d{1,2}(?:st|nd|rd|th)?\b|\b\d{1,2}(?:st|nd|rd|th)? ${MONTH_NAME}(?![\w])`,
);

/** Openers that join a sentence to the talk before it and say nothing themselves. */
const LEADING_LINK =
  /^(?:(?:(?:oh|ah|um|so)\s+)?(?:and|but|also|plus)\s*[,:]?\s+|(?:nope|nah|no)\s*,\s*|(?:big|good|bad|great|exciting|some) news\s*[:!,.-]+\s*|(?:(?:a |one )?(?:slight |small |quick |little |big |minor |major )?change of plans?|plot twist|(?:quick |small |little |short |brief )?update)\s*[:!,.\-\u2013\u2014]+\s+|actually\s*,?\s+|(?:I(?:'ve| have)? changed my mind|on second thought)\s*[,:;.!-]+\s*|(?:just |as )?(?:a )?(?:quick |friendly )?reminder\s*[,:;.!-]+\s*|(?:for the record|just so you know|as (?:I|we) (?:said|mentioned|told you)(?: before| earlier)?|like I said(?: before| earlier)?|as (?:always|usual|ever))\s*[,:;.!-]+\s*)+/i;
/** The same said after the claim ("..., just so you know.", "..., as always."): no part of it. */
const TRAILING_ASIDE =
  /,\s*(?:just so you know|for the record|as (?:always|usual|ever)|as (?:I|we) (?:said|mentioned)(?: before| earlier)?|like I said(?: before| earlier)?)(?=[.!]*$)/i;

export const stripInterjections = (s: string) =>
  s
    .replace(LEADING_PICTOGRAPHS, "")
    .replace(LEADING_INTERJECTION, "")
    .replace(OPENER_BEFORE_SELF, "")
    .replace(LEADING_LINK, "")
    .replace(TRAILING_ASIDE, "")
    .trim();

/**
 * The first person as chat types it, in standard spelling: "i", "im", "ive", "dont", "cant"...
 * ("im allergic to peanuts" -> "I'm allergic to peanuts"), so the third person reads it.
 */
export function standardFirstPerson(s: string): string {
  if (s.includes("`")) return s;
  const contracted = s.replace(
    /\b(do|does|did|is|was|are|were|ca|could|would|should|have|has|had|wo)nt\b/gi,
    (_m, v: string) => `${v}n't`,
  );
  // In another language "im", "i" and "Ive" are words of their own (German "im Klinikum", the
  // Italian or Swedish "i"): left as they are.
  if (otherLanguage(s)) return contracted;
  return (
    contracted
      .replace(/\bi(?='(?:m|ve|ll|d)\b)/g, "I")
      .replace(/\b[Ii]m\b/g, "I'm")
      // "Ive" before what follows "I've" ("Ive been", "Ive never", "Ive finished"), or not after a
      // name; after one it is a surname ("Jony Ive and his work").
      .replace(
        /\bive\b|\bIve\b(?=\s+(?:been|got|gotten|had|never|always|just|already|ever|finally|really|seen|done|made|[a-z]+ed)\b)|(?<!\p{Lu}[\p{L}'-]*\s+)\bIve\b/gu,
        "I've",
      )
      // A lone "i" before a word, not in code ("for i in range(10)", "i = 0") nor "i.e.".
      .replace(/(^|[\s,;])i(?=\s+[a-z])(?!\s+in\b)/g, "$1I")
  );
}

/**
 * Function words of other languages written in Latin letters that English does not use (German,
 * Dutch, the Scandinavian languages, French, Italian, Spanish, Portuguese, Catalan; not those an
 * English sentence may hold, as "med school", "EST", "Las Vegas", "bin" or "example.com" do).
 * A sentence holding one, in lower case or opening it ("Ich ...": a name is capitalised, "Mia",
 * "Uma", "Che Guevara"), is not English.
 */
const OTHER_LANGUAGE = new Set(
  `ich und nicht ist sind wir auch aber oder sehr habe mein meine meinen nach einen eine als
  ik het een niet ook jag och är på inte jeg og ikke ett
  je une avec nous suis mais très dans
  ho il che sono miei mia mio della nella gli anche molto perché
  está estoy pero una porque también
  não uma muito
  els amb però`
    .split(/\s+/)
    .filter(Boolean),
);
const otherLanguage = (s: string): boolean =>
  (s.match(/\p{L}+/gu) ?? []).some(
    (w, i) => (i === 0 ? OTHER_LANGUAGE.has(w.toLowerCase()) : OTHER_LANGUAGE.has(w)) && w !== "I",
  );

const MODALS = new Set([
  "can",
  "could",
  "will",
  "would",
  "should",
  "might",
  "must",
  "may",
  "shall",
  "was",
  "had",
  "did",
  "didn't",
  "can't",
  "won't",
  "wouldn't",
  "couldn't",
  "shouldn't",
  "wasn't",
]);
const ADVERBS = new Set(
  "really just also never always still recently finally actually usually often sometimes already totally definitely absolutely even truly honestly probably currently mostly only now ever seldom first then later soon once almost".split(
    " ",
  ),
);
/** Verbs that end in -ly ("I apply", "I rely"): not adverbs. */
const LY_VERBS = new Set("supply multiply comply rely reply apply imply ally bully rally tally".split(" "));
const isAdverb = (w: string) => ADVERBS.has(w) || (/ly$/.test(w) && w.length > 4 && !LY_VERBS.has(w));
const IRREGULAR_PAST = new Set(
  "went saw made got took found felt thought bought brought began became came ran wrote read said told knew grew gave kept left lost met paid put sat set sold sent slept spent stood taught won built caught chose drew drove ate fell flew forgot held heard hurt led lay meant rode rose sang sank shot shut spoke stole swam threw understood woke wore overcame forgave mistook undertook withdrew foresaw quit cut hit let cost spread split arose awoke blew bled bred broke clung crept dealt dug drank fed fought fled forbade froze hid hung knelt lent bent shook shone shrank slid sped spun sprang stung struck strove swore swept swung tore wove wept sought underwent overslept overheard overtook outgrew rebuilt".split(
    " ",
  ),
);

const NON_VERBS = new Set("and or but to the a an in at on so too as of for with is if".split(" "));

/** Past forms that are also the base form: at a sentence's start an imperative as often ("Read the docs"). */
const PAST_AS_BASE = new Set("read set put cut hit let cost spread split quit shut lay left".split(" "));
/** How someone feels, said without "I'm" ("Excited for Friday!", "So tired today."). */
const FEELING = new Set(
  "tired excited worried bored scared interested amazed stressed exhausted thrilled disappointed annoyed confused surprised shocked relieved overwhelmed frustrated obsessed stuck nervous sick busy stoked pumped psyched".split(
    " ",
  ),
);

const ADJECTIVE_PARTICIPLE = new Set(
  "based used related located born aged supposed given named dated limited advanced detailed agreed blessed mixed appreciated".split(
    " ",
  ),
);

/**
 * The base form of a regular past ("finished" -> "finish", "baked" -> "bake", "planned" -> "plan",
 * "tried" -> "try"), when it is a verb; else null. Participles read as adjectives first ("Based on
 * that", "Used cars") are none.
 */
function regularPastBase(w: string): string | null {
  if (!/^[a-z]{2,}ed$/.test(w) || BASE_IN_ED.has(w) || ADJECTIVE_PARTICIPLE.has(w)) return null;
  const stem = w.slice(0, -2);
  const candidates = [
    /ied$/.test(w) ? `${w.slice(0, -3)}y` : null,
    stem,
    w.slice(0, -1),
    /(.)\1$/.test(stem) ? stem.slice(0, -1) : null,
  ];
  return candidates.find((c): c is string => !!c && isVerb(c)) ?? null;
}

/** Verbs of a need, never said as an order: "Need help with my taxes" is the speaker's need. */
const NEEDING = new Set(["need", "want"]);

/**
 * A chat sentence that drops its subject ("Went to the dentist yesterday.", "Finished my thesis!",
 * "Excited for Friday!") is the speaker's: "I" (or "I'm" before a feeling) put back, so it reads
 * in the third person like the rest. Only a past tense, a feeling or a need ("Need help with my
 * taxes", "Want to learn Spanish"): any other base form opens an imperative ("Run the tests").
 */
export function withDroppedSubject(sentence: string): string {
  // A question ("Got any tips?") or a reaction to the other ("Glad you ...", "So proud of you")
  // is no dropped "I"; nor a verb whose object is the speaker ("Really made me think": "it" did).
  if (
    /[?？؟]$/.test(sentence.trim()) ||
    /^got it\b/i.test(sentence) ||
    /^\S+(?:\s+\S+)?\s+(?:me|you|your|of you|for you)\b/i.test(sentence)
  )
    return sentence;
  const m = /^(?:(so|really|just|finally|very)\s+)?(\p{L}+)(?=[\s,.!]|$)/iu.exec(sentence);
  // Written "Went" or, in chat, "went"; not "WENT" or "iPhone".
  if (!m || !/^\p{L}\p{Ll}+$/u.test(m[2]!)) return sentence;
  const first = sentence.split(/\s+/)[0]!.toLowerCase();
  const word = m[2]!.toLowerCase();
  // A name that is also a verb's past, sharing the subject: "Rose and I went to the park", "Rose
  // and Tom went hiking" (while "Ate and slept all day" dropped its "I").
  // What follows the word, tested by fixed patterns: a pattern built from the word itself would
  // fail on a 33,000-letter one ("Regular expression too large") and lose the whole job.
  const after = sentence.slice(m[0].length);
  if (!m[1] && /^\s+and\s+(?:I|we|my|our|\p{Lu}\p{Ll}+)\b/u.test(after)) return sentence;
  const lower = sentence.charAt(0).toLowerCase() + sentence.slice(1);
  if (FEELING.has(word) || FEELING.has(first)) return `I'm ${lower}`;
  // A state said by an adjective and what it is about: "Allergic to penicillin.", "Proud of my kids."
  // (not a participle: "Based on the forecast, ..." says no state of the speaker)
  if (
    isPlainAdjective(word) &&
    !/(?:ed|ing)$/.test(word) &&
    /^\s+(?:to|of|about|with|at|for|from|on|in)\s/i.test(after)
  )
    return `I'm ${lower}`;
  if ((IRREGULAR_PAST.has(word) && !PAST_AS_BASE.has(word)) || regularPastBase(word) || NEEDING.has(first))
    return `I ${lower}`;
  return sentence;
}

/** First- or second-person words: a line with one is someone speaking ("I live in Berlin", "see you"). */
const SPEAKING =
  /(?:^|[^\p{L}'])(?:I|I'm|I've|I'll|I'd|[Mm]e|[Mm]y|[Mm]ine|[Ww]e|[Ww]e're|[Ww]e've|[Ww]e'll|us|[Oo]ur|[Yy]ou|[Yy]ou're|[Yy]ou've|[Yy]ou'll|[Yy]our)(?![\p{L}'])/u;
/** A finite verb a clause turns on, or a third-person subject before its verb ("she's", "they left"). */
const FINITE =
  /\b(?:is|are|was|were|am|isn't|aren't|wasn't|weren't|has|have|had|hasn't|haven't|does|did|do|don't|doesn't|didn't|can|can't|could|couldn't|will|won't|would|wouldn't|should|shouldn't|must|shall|gonna)\b|\b(?:he|she|they)(?:'s|'re|'ll|'d|'ve)?\s+\p{L}|\b(?:it|that|there|this)(?:'s|'ll)\b/iu;
/**
 * Whether a line's text reads as someone's words: a clause (a finite verb, a subject before its
 * verb) or first- or second-person words ("I live in Berlin", "Great, I'm bringing the pie", "The
 * bus is always late"), not a list's item ("2 litres", "sourdough from the bakery", "review Q3
 * spend", "UA 837 on April 2").
 */
export const isUtterance = (text: string) => SPEAKING.test(text) || FINITE.test(text);
/** What opens no noun phrase: a negation or a conjunction ("don't forget ...", "and he wants ..."). */
const NOT_A_NOUN_PHRASE = /^(?:don't|do not|never|not|and|but|or|so|because|then|also|please)\b/i;

const ATTRIBUTE_LINE = new RegExp(
  String.raw`^(${LABEL}):\s+(?!(?:I|I'm|I've|I'll|I'd|me|my|we|we're|our|you|your)\b)(\S.{0,100})$`,
  "u",
);
/** A list's sentence (listsAsSentences) after its heading: "Shopping list: Eggs: 12; Milk: 2 liters." */
const HEADED_LIST = new RegExp(String.raw`^(${LABEL}):\s+(?=${LABEL}:\s+\S)`, "u");
/** A list's sentence without a heading, two items or more: "Milk: 2 litres; Eggs: 12." */
const LABELLED_LIST = new RegExp(String.raw`^(${LABEL}):\s+[^;]+;\s+${LABEL}:\s+\S`, "u");
/** Whether a label (its words in lower case) is a common noun's, no function word nor a message's label. */
const isNounLabel = (words: string[]) => isPlainLabel(words) && isCommonNoun(words.at(-1)!);

/**
 * A line naming an attribute of the speaker and giving its value ("Allergies: penicillin, cats.",
 * "Blood type: O-.", "Favorite food: ramen.", "New number: 555-0177.", "Mom: she turns 70 next
 * month."): said as the speaker's claim ("My allergies are penicillin, cats.", "My mom turns 70
 * next month."; "My weekend: went hiking" where the value is no noun phrase). The label is a noun
 * with at most two words before it, none a function word or a message's label ("Question:",
 * "Summary:"), and the value no clause of the speaker's own ("Goal: I want to ..."); a form's field
 * (FIELD_LABELS) is one always, its value a noun phrase ("Job: nurse at St. Mary's." reads "My job is
 * nurse at St. Mary's."; "Age: 34." "I'm 34."), an event's field left as said ("Time: 3pm.").
 * A thing's name labels no attribute but an item of the speaker's list (isAttributeLabel): "Milk: 2
 * litres; Eggs: 12." reads "I noted: Milk: 2 litres; Eggs: 12.", and a list after its heading is
 * the speaker's ("Shopping list: Eggs: 12; Milk: 2 liters." reads "My shopping list: Eggs: 12; ...").
 */
export function attributeLine(sentence: string): string {
  const s = sentence.trim();
  const headed = HEADED_LIST.exec(s);
  if (headed && isNounLabel(headed[1]!.toLowerCase().split(" ")))
    return `My ${headed[1]!.charAt(0).toLowerCase()}${headed[1]!.slice(1)}: ${s.slice(headed[0].length)}`;
  const items = LABELLED_LIST.exec(s)?.[1]?.toLowerCase();
  if (items && isNounLabel(items.split(" ")) && !isAttributeLabel(items)) return `I noted: ${s}`;
  const m = ATTRIBUTE_LINE.exec(s);
  if (!m) return sentence;
  const words = m[1]!.toLowerCase().split(/\s/);
  const key = words.join(" ");
  // A form's field (FIELD_LABELS) is one whatever WordNet says of its word ("Job: nurse" is no verb).
  const field = FIELD_LABELS.has(key);
  if (!field && !isNounLabel(words)) return sentence;
  // "Git: always rebase, ...": a command's rule (directives.ts), not an attribute of the user's.
  if (words.length === 1 && isKnownCommand(words[0]!)) return sentence;
  // "Time: 3pm.", "Place: the old library.": the event's, said as it is (isSubstantive keeps it).
  if (EVENT_FIELDS.has(key)) return sentence;
  const label = m[1]!.charAt(0).toLowerCase() + m[1]!.slice(1);
  const value = m[2]!;
  // "Age: 34." says an age in the words of one ("I'm 34."), so a later age supersedes it.
  if (key === "age" && /^\d{1,3}(?:\s+(?:years old|yrs old|yo))?[.!]?$/.test(value)) return `I'm ${value}`;
  const plural = /[^su]s$/.test(words.at(-1)!);
  // "Mom: she turns 70": the pronoun is the labelled one.
  const pronoun = /^(?:he|she|it|they)(?:('s|'re)\b)?\s+(?=\S)/i.exec(value);
  if (pronoun)
    return `My ${label}${pronoun[1] ? (pronoun[1] === "'s" ? " is" : " are") : ""} ${value.slice(pronoun[0].length)}`;
  // Only a noun phrase is the label's value: a clause, an imperative or what opens with a negation
  // or a conjunction is someone's words ("Mom: don't forget ...", "Woman: The bus is late").
  const first = value.split(/\s/)[0]!.toLowerCase();
  if (NOT_A_NOUN_PHRASE.test(value) || FINITE.test(value)) return sentence;
  if (!field) {
    const past = IRREGULAR_PAST.has(first) || !!regularPastBase(first);
    if (!past && isMostlyVerb(first)) return sentence;
    if (past || /ing$/.test(first)) return `My ${label}: ${value}`;
  }
  // "Milk: 2 litres.": an item the user noted, not the user's milk; "Tom: Wow!" is someone's words.
  if (!isAttributeLabel(key)) return isSpeech(value) ? sentence : `I noted: ${s}`;
  return `My ${label} ${plural ? "are" : "is"} ${value}`;
}

/** Whether a word (lower case) is a verb's past tense or participle: "issued", "sent", "written". */
export function isPastForm(w: string): boolean {
  const base = irregularBase(w);
  return IRREGULAR_PAST.has(w) || !!regularPastBase(w) || (!!base && base !== w && isVerb(base));
}

/** Verbs whose base form ends in -ed or -eed ("I need", "I feed"): not past tenses. */
const BASE_IN_ED = new Set(
  "need feed bleed breed speed seed heed weed proceed succeed exceed embed shed wed shred".split(" "),
);
/** Words that follow a subject but take no third-person -s ("you gotta", "you better"). */
const NO_S = new Set("gotta gonna wanna better ought".split(" "));

export function thirdPersonVerb(v: string): string {
  const w = v.toLowerCase();
  if (MODALS.has(w) || NO_S.has(w) || IRREGULAR_PAST.has(w) || (/ed$/.test(w) && !BASE_IN_ED.has(w)))
    return v;
  if (w === "have") return "has";
  if (w === "do") return "does";
  if (w === "go") return "goes";
  if (w === "don't") return "doesn't";
  if (w === "haven't") return "hasn't";
  if (w === "aren't") return "isn't";
  if (/n't$/.test(w)) return v;
  if (/(s|sh|ch|x|z|o)$/.test(w)) return `${v}es`;
  if (/[^aeiou]y$/.test(w)) return `${v.slice(0, -1)}ies`;
  return `${v}s`;
}

/**
 * Addresses and compound names hold "me", "I" and "my" that are no pronoun (maria.g@proton.me,
 * maria.me, I/O, C:\Users\me\proj, me-cli), and so do words with a letter outside ASCII, where a JavaScript `\b`
 * sees a word's edge ("Iñaki", "Iğdır"): `fn` runs on the text with each such token held aside,
 * then put back.
 */
const ADDRESSES =
  /(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b[a-z][\w+.-]*:\/\/\S+|\b[\w-]+(?:\.[\w-]+)+\b|\b\w+(?:\/\w+)+\b|\b[A-Za-z]:\\\S*|\b\w+(?:\\\w+)+\b|\b(?:\w+-)+\w+\b/gu;
const NOT_PRONOUNS = new RegExp(
  String.raw`${ADDRESSES.source}|(?<![\p{L}\p{M}\p{N}_])[\p{L}\p{M}\p{N}_]*(?:(?![\0-\x7f])[\p{L}\p{M}])[\p{L}\p{M}\p{N}_]*`,
  "gu",
);
export function shielded(text: string, fn: (s: string) => string): string {
  const held: string[] = [];
  const masked = text.replace(NOT_PRONOUNS, (m) => {
    if (!/\b(?:me|I|my|we|us|our|you|your)\b/i.test(m)) return m;
    held.push(m);
    return `\uE000${held.length - 1}\uE001`;
  });
  if (!held.length) return fn(text);
  return fn(masked).replace(/\uE000(\d+)\uE001/g, (_m, i: string) => held[Number(i)]!);
}

/**
 * First-person statements become third-person facts about the speaker:
 * "I went to a support group" -> "Caroline went to a support group".
 */
export function toThirdPerson(sentence: string, name: string): string {
  return shielded(sentence, (s) => toThirdPersonUnshielded(s, name));
}

function toThirdPersonUnshielded(sentence: string, name: string): string {
  // Another language's "me", "my" and "I" are no English speaker's ("Je me lève tôt", "Yo me llamo
  // Carlos"): a sentence in another language stays as said.
  if (!readsAsEnglish(sentence)) return sentence;
  // Words inside quotes are someone's own words, and inline code is code: they stay as said.
  const parts = sentence.split(/("[^"]*"|“[^”]*”|`[^`]*`)/);
  const out = parts.map((p, i) => (i % 2 === 1 ? p : unquotedToThird(p, name))).join("");
  return sentenceCase(out);
}

/**
 * A sentence's first letter in capitals, unless its first word is written so on purpose: a command
 * before its subcommand or argument ("git branch", "npm ls"; not "kind of"), a word followed by a flag, a name in mixed case ("iPhone", "macOS")
 * or a file or code name ("package.json", "user_id"). A command copied from a fact must still run
 * on a case-sensitive shell.
 */
export function sentenceCase(s: string): string {
  if (!/^\p{Ll}/u.test(s)) return s;
  const first = /^[^\s]+/.exec(s)?.[0] ?? "";
  const asWritten =
    (isKnownCommand(first) && /^\S+ (?!of\b)[a-z-]/.test(s)) ||
    /^\S+ --?[A-Za-z]/.test(s) ||
    /^\p{Ll}+\p{Lu}/u.test(first) ||
    (/^\p{Ll}[\p{L}\p{N}]*[._/][\p{L}\p{N}_]/u.test(first) && !/^(?:e\.g|i\.e|etc)\b/.test(first)) ||
    /^\p{Ll}+_/u.test(first);
  return asWritten ? s : s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * A request to the assistant ("Remind me to call my mom") is no claim about the speaker; it
 * reads as one once said as a request: "The user asked the assistant to remind them to ...". In a
 * chat between two people, the one asked is the other speaker ("Caroline asked Melanie to ...").
 */
const REQUEST =
  /^(?:please\s+)?(?:(?:from now on|going forward|in future|in the future),?\s+)?(?:please\s+)?(?:(always|never|also|just|don't|do not)\s+)?(remind|tell|help|show|give|find|book|send|write|make|add|set|schedule|note|remember|keep|check|suggest|recommend|explain|list|summari[sz]e|translate|draft|generate|create|fix|refactor|review|compare|rewrite|update|run|answer|reply|respond|speak|use|format|start|stop|restart|open|close|edit|delete|remove|rename|install|deploy|build|push|commit)\b\s+(.*)$/i;
/**
 * A reaction before the request ("That is interesting, tell me more about ..."): a few words
 * that say nothing themselves ("Maria, keep it up!" names who is asked; "When picking endorsements,
 * make sure ..." is advice).
 */
const REMARK_THEN_REQUEST =
  /^(?:that(?:'s| is) (?:so |really |very )?(?:interesting|cool|great|amazing|fascinating|neat|helpful)|interesting|fascinating|got it|makes sense|alright|all right)\s*[,;:]\s+(.+)$/i;

/**
 * A request's verb that is also a noun, the first word of one before a verb of its own: "Book club meets on
 * Tuesdays", "Check engine light came on", "Review sessions are on Mondays" say something, ask
 * nothing.
 */
const NOUN_BEFORE_VERB =
  /^(?:book|check|review|list|set|help|update|draft|run|answer|reply|use|format|schedule|start|stop|open|close|build|push|commit|install|edit)\s+(?:(?!(?:a|an|the|my|our|your|his|her|their|this|that|these|those|me|us|him|them|it|some|all|every|each|one|two|three|more|out|up|down|off|on|in|to|for|about|sure|what|which|who|how|when|where|why|if|whether)\b)[a-z][a-z-]*\s+){1,2}(?:is|are|was|were|has|have|had|will|would|can|could|should|might|must|does|did|meets|starts|begins|ends|runs|opens|closes|came|went|got|gets|takes|took|costs|helps|makes|made|seems|looks|sounds|needs|lasts|happens|broke|keeps|kept)\b/i;

export function asRequest(sentence: string, name: string, asked = "the assistant"): string | null {
  const trimmed = sentence.trim();
  if (NOUN_BEFORE_VERB.test(trimmed)) return null;
  let m = REQUEST.exec(trimmed);
  if (!m) {
    const after = REMARK_THEN_REQUEST.exec(trimmed)?.[1];
    if (after) m = REQUEST.exec(after);
  }
  if (!m) return null;
  // "Make sure you run cargo fmt ..." asks the assistant to run it.
  const adverb = m[1] ? `${m[1].toLowerCase().replace(/^(?:don't|do not)$/, "not")} ` : "";
  let verb = m[2]!.toLowerCase();
  let said = m[3]!;
  const sure = verb === "make" ? /^sure (?:that )?you (\w+)\s+(.*)$/i.exec(said) : null;
  if (sure) [verb, said] = [sure[1]!.toLowerCase(), sure[2]!];
  const rest = shielded(said, (r) =>
    r
      // "... please." is the request's manners, not its content.
      .replace(/,?\s+please([.!]*)$/i, "$1")
      .replace(/\b(?:me|us)\b/g, "them")
      .replace(/\b(?:[Mm]y|[Oo]ur)\b/g, "their")
      .replace(/\bI'm\b|\bI am\b/g, "they're")
      .replace(/\bI was\b/g, "they were")
      .replace(/\bI've\b/g, "they've")
      .replace(/\bI'll\b/g, "they'll")
      .replace(/\bI'd\b/g, "they'd")
      .replace(/\bI\b/g, "they"),
  );
  const out = `${name} asked ${asked} ${adverb === "never " || adverb === "not " ? `${adverb}to ` : `to ${adverb}`}${verb} ${rest}`;
  return out.charAt(0).toUpperCase() + out.slice(1);
}

/** Words that open what follows a verb: "work as a nurse", "teach at a school", "play the piano". */
const VERB_OBJECT_START =
  "as at in on for with to from into onto home there the a an my our his her their some every each all this that these those two three it him them us".split(
    " ",
  );

/**
 * "and <word>" (or "and now <word>", an adverb between) before what a verb takes: a word
 * `withCoordinatedVerbs` may conjugate.
 */
const COORDINATED = new RegExp(
  `\\b(and|or|but) ((?:${[...ADVERBS].join("|")}) )?([a-z]+)(?= (?:${VERB_OBJECT_START.join("|")})\\b)`,
  "g",
);

/**
 * The verbs the same clause coordinates with one conjugated for the third person: "(lives in
 * Lisbon) and work as a nurse" -> "and works as a nurse", "(left Google) and now work at Stripe"
 * -> "and now works at Stripe" (`afterPast`: the first verb an irregular past, which may read as
 * a present or not, so only after an adverb of the present). Only a word used mostly as a verb and
 * followed by what a verb takes, up to the clause's end, so "tea and cake" and "music and dance"
 * stay as they are.
 */
function withCoordinatedVerbs(rest: string, afterPast = false): string {
  const clause = /^[^,;:.!?]*/.exec(rest)![0];
  const done = clause.replace(
    COORDINATED,
    (m, conj: string, adverb: string | undefined, word: string, at: number) => {
      // "love to cook and bake for friends": verbs after an infinitive's "to" stay as they are.
      const infinitive = [...clause.slice(0, at).matchAll(/\bto ([a-z]+)/g)].some((t) => isVerb(t[1]!));
      const third = thirdPersonVerb(word);
      return infinitive ||
        // After an irregular past ("left", "read"), only a verb the clause moves to the present.
        (afterPast && !PRESENT_ADVERBS.has(adverb?.trim() ?? "")) ||
        NON_VERBS.has(word) ||
        /(?:ing|ed)$/.test(word) ||
        third === word ||
        !isMostlyVerb(word)
        ? m
        : `${conj} ${adverb ?? ""}${third}`;
    },
  );
  return done + rest.slice(clause.length);
}

/** Adverbs that move a clause to the present: "(left Google) and now work at Stripe". */
const PRESENT_ADVERBS = new Set(["now", "currently", "still"]);

const isRegularPast = (w: string) => /ed$/.test(w) && !BASE_IN_ED.has(w);

const INVERTED_AUX: Record<string, string> = { do: "does", am: "is", have: "has" };
const matchCase = (like: string, word: string) =>
  /^\p{Lu}/u.test(like) ? word.charAt(0).toUpperCase() + word.slice(1) : word;

/**
 * The speaker's own thing in the clause the speaker alone is the subject of ("I gave my notice",
 * "I told my boss", "I and my wife", "we sold our house"): "their", as English says it, not "the
 * user gave the user's notice". Only the first one before anyone or anything else is named (a
 * determiner, a pronoun or a name between): after "their boss" another "their" could be the
 * boss's ("The user told their boss about the user's plans"). Not a subject shared with someone
 * named before it ("My sister and I visited my parents": "their parents" would be both of theirs).
 */
const OWN_POSSESSIVE =
  /(?<!\b(?:and|or|nor) )\b(I|[Ww]e|^\s*[Mm]e(?= and\b))((?:'(?:m|ve|d|ll|re))?(?: (?!(?:my|our|the|a|an|this|that|these|those|his|her|its|their|your|you|him|them|it|he|she|they|who|whom|whose|which|what|someone|somebody|everyone|everybody)\b)[a-z]+){0,6}) (?:my|our)\b/;
const withOwnPossessive = (s: string) =>
  s.replace(OWN_POSSESSIVE, (m, subject: string, between: string) =>
    // "I" owns "my", "we" "our": "we sold my car" is no one's "their".
    /^I$|^\s*[Mm]e$/.test(subject) === m.endsWith(" my") ? `${subject}${between} their` : m,
  );

function unquotedToThird(sentence: string, name: string): string {
  let s = withOwnPossessive(sentence);
  const poss = `${name}'s`;
  s = s.replace(/^(\s*)[Mm]e and\b/, (_m, sp: string) => `${sp}${name} and`);
  // "My partner and I are", "Jamie and I have": the speaker in a plural subject keeps its verb.
  s = s.replace(
    /^(\s*(?:(?:[Mm]y|[Oo]ur)\s+(?:[\p{L}'-]+\s+){0,2}?[\p{L}'-]+|\p{Lu}\p{Ll}[\p{L}'-]*))\s+and I(?:'ve\b|(?=\s+(?!am\b|was\b)[a-z']+))/u,
    (m, subj: string) => `${subj} and ${name}${m.endsWith("'ve") ? " have" : ""}`,
  );
  s = s.replace(/\band I (are|were)\b/g, `and ${name} $1`);
  // A question's inverted subject ("How do I list branches?", "Am I late?"): the auxiliary agrees,
  // the verb after it stays in the base form.
  if (s.includes("I"))
    s = s.replace(
      /\b(do|am|have|did|can|could|should|would|will|shall|may|might|must)\s+I\b/gi,
      (_m, aux: string) =>
        `${INVERTED_AUX[aux.toLowerCase()] ? matchCase(aux, INVERTED_AUX[aux.toLowerCase()]!) : aux} ${name}`,
    );
  s = s.replace(/\bI'm\b|\bI am\b/g, `${name} is`);
  s = s.replace(/\bI've\b/g, `${name} has`);
  s = s.replace(/\bI'd\b/g, `${name} would`);
  s = s.replace(/\bI'll\b/g, `${name} will`);
  s = s.replace(
    /\bI (was|will|would|can|could|should|might|must|had|did|didn't|can't|won't|couldn't)\b/g,
    `${name} $1`,
  );
  // "I <adverbs> <verb>": conjugate the verb, the first word that is no adverb, for the third
  // person ("I no longer work" -> "works", "I hardly ever drink" -> "drinks").
  // What follows, up to the next "I", may coordinate more verbs with this one.
  s = s.replace(/\bI ((?:[a-z]+ ){0,2}[a-z']+)\b((?:(?!\bI\b).)*)/g, (_m, words: string, after: string) => {
    const w = words.split(" ");
    let i = 0;
    while (i < w.length - 1 && (isAdverb(w[i]!) || (w[i] === "no" && w[i + 1] === "longer")))
      i += w[i] === "no" ? 2 : 1;
    if (i >= w.length || NON_VERBS.has(w[i]!)) return `${name} ${words}${after}`;
    const verb = thirdPersonVerb(w[i]!);
    // A verb of its own tense: not a modal or "gotta" (their verbs stay in the base form), nor a
    // past that reads as a present ("I read and write").
    const finite = verb !== w[i] || isRegularPast(w[i]!);
    const rest =
      w
        .slice(i + 1)
        .map((x) => ` ${x}`)
        .join("") + after;
    const past = !finite && IRREGULAR_PAST.has(w[i]!);
    return `${name} ${[...w.slice(0, i), verb].join(" ")}${finite || past ? withCoordinatedVerbs(rest, past) : rest}`;
  });
  s = s.replace(/\bI\b/g, name);
  s = s.replace(/\b[Mm]yself\b/g, "themselves");
  s = s.replace(/\b[Mm]ine\b/g, poss);
  // Every "my" is the speaker's: "their" after the first read as someone else's ("The user's
  // parents live in Kraków and their brother ...").
  s = s.replace(/\b[Mm]y\b/g, poss);
  s = s.replace(/\bme\b/g, name);
  s = s.replace(/\b[Ww]e're\b|\b[Ww]e are\b/g, `${name} and others are`);
  s = s.replace(/\b[Ww]e've\b/g, `${name} and others have`);
  s = s.replace(/\b[Ww]e'll\b/g, `${name} and others will`);
  s = s.replace(/\b[Ww]e'd\b/g, `${name} and others would`);
  s = s.replace(/\b[Ww]e\b/g, `${name} and others`);
  s = s.replace(/\b[Oo]ur\b/g, poss);
  s = s.replace(/\b[Oo]urs\b/g, poss);
  s = s.replace(/\bus\b/g, `${name} and others`);
  return s;
}

const TYPE_RULES: Array<[FactType, RegExp]> = [
  [
    "preference",
    /\b(like|likes|love|loves|enjoy|enjoys|prefer|prefers|hate|hates|dislike|favou?rite|fan of|into)\b/i,
  ],
  [
    "plan",
    /\b(will|going to|gonna|plan|plans|planning|intend|want to|wants to|hope to|next (week|month|year)|tomorrow|thinking (of|about))\b/i,
  ],
  [
    "relationship",
    /\b(wife|husband|partner|son|daughter|mother|mom|mum|father|dad|sister|brother|friend|friends|boyfriend|girlfriend|married|kids|children|family|cousin|aunt|uncle|grand\w+|colleague|boss|neighbou?r)\b/i,
  ],
  ["opinion", /\b(think|thinks|believe|believes|feel|feels|opinion|reckon|in my view)\b/i],
  ["skill", /\b(can|know how|good at|skilled|learn(ed|ing)? (to|how)|speak|speaks|fluent)\b/i],
  [
    "event",
    /\b(went|visited|attended|met|saw|got|did|took|made|started|finished|joined|moved|yesterday|last|ago)\b|\b\w+ed\b/i,
  ],
  ["attribute", /\b(am|is|are|i'm|work(s|ed)? (as|at|for)|live(s|d)? in|born|years old|name is|from)\b/i],
];

export function factTypeOf(sentence: string): FactType {
  for (const [t, re] of TYPE_RULES) if (re.test(sentence)) return t;
  return "other";
}

const CATEGORY_RULES: Array<[string, RegExp]> = [
  [
    "work",
    /\b(work|job|career|office|boss|colleague|company|project|meeting|client|salary|hired|promotion)\b/i,
  ],
  [
    "family",
    /\b(wife|husband|son|daughter|mother|mom|mum|father|dad|sister|brother|kids|children|family|parents?)\b/i,
  ],
  [
    "health",
    /\b(health|doctor|hospital|sick|ill|allerg\w*|medication|therapy|diagnos\w*|pain|injur\w*|surgery)\b/i,
  ],
  [
    "hobbies",
    /\b(hobby|painting|drawing|reading|books?|camping|hiking|gaming|games|guitar|piano|photograph\w*|garden\w*|pottery|knitting)\b/i,
  ],
  [
    "food",
    /\b(food|eat|eats|ate|cook\w*|recipe|restaurant|dinner|lunch|breakfast|coffee|tea|vegan|vegetarian)\b/i,
  ],
  ["travel", /\b(travel\w*|trip|flight|vacation|holiday|visit\w*|abroad|beach|city|country)\b/i],
  ["finance", /\b(money|bank|loan|debt|budget|invest\w*|savings|mortgage|rent|salary|paid)\b/i],
  ["education", /\b(school|college|university|class|course|degree|study|studying|exam|teacher|student)\b/i],
  ["relationships", /\b(friend\w*|partner|boyfriend|girlfriend|dating|married|wedding|relationship)\b/i],
  [
    "technology",
    /\b(code|software|app|computer|api|database|server|deploy\w*|bug|programming|python|typescript|git|npm|commit|repo|docker|kubectl|terraform|lint)\b/i,
  ],
  ["pets", /\b(dog|dogs|cat|cats|pet|pets|puppy|kitten)\b/i],
  [
    "sports",
    // "run" alone is as often a command ("run npm test", "never run terraform destroy"): a run
    // that is exercise says so ("went for a run", "my morning run"), and running runs nothing.
    /\b(?:(?:for a|a long|a short|morning|evening|daily|weekly|sunday|charity) runs?|runner|jogging|marathon|gym|football|soccer|tennis|swim\w*|yoga|cycling|sport\w*)\b|\brunning\b(?! (?:the |a |an |all |my |our )?(?:tests?|scripts?|commands?|builds?|servers?|code|npm|migrations?|jobs?|queries|query|containers?|pods?|services?|apps?|programs?|late|out|low)\b)/i,
  ],
  ["music", /\b(music|song|songs|concert|band|sing\w*|album)\b/i],
  ["art", /\b(art|artist|paint\w*|museum|gallery|sculpt\w*)\b/i],
  ["community", /\b(support group|volunteer\w*|charity|community|lgbtq\w*|activis\w*|pride)\b/i],
];

export function categoriesOf(sentence: string): string[] {
  return CATEGORY_RULES.filter(([, re]) => re.test(sentence)).map(([c]) => c);
}

/**
 * Normalised text for hashing: lower case, words only. A word keeps its combining marks (the vowel
 * signs of Devanagari, Thai, Tamil, Hebrew points, a decomposed accent): without them two
 * different Hindi sentences could hash as one.
 */
export const normaliseText = (s: string) =>
  (s.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu) ?? []).join(" ");

/**
 * A fact as a sentence of an episode's summary: ending with a period, unless it already ends with
 * a question mark or a full stop of its own script (a Devanagari danda, "।" or "॥", Chinese and
 * Japanese "。！？"), which had been followed by a period ("…हूँ।.").
 */
export const asSentence = (s: string) => (/[?。！？।॥]$/u.test(s) ? s : s.replace(/[.!]?$/, "."));

/**
 * `text` without the sentences of `removed` (an extractive summary without one of its facts), the
 * first said as `instead` when one is given (a sentence rewritten to what of it still holds). A
 * sentence is also taken out where the summary's split did not isolate it (the sentence after it
 * begins with a character that starts no sentence, such as "<"): the summary is its sentences
 * joined by spaces, so each one is also found as a whole in the text.
 */
export function withoutSentencesOf(text: string, removed: string, instead = ""): string {
  const gone = new Set(splitSentences(removed).map(asSentence));
  const sentences = splitSentences(text);
  // Said once: not where the text says it already ("A and B. B." is "B.", not "B. B.").
  let put =
    instead && !sentences.some((s) => !gone.has(asSentence(s)) && asSentence(s) === asSentence(instead))
      ? instead
      : "";
  const next = (): string => {
    const out = put;
    put = "";
    return out;
  };
  let kept = sentences
    .map((s) => (gone.has(asSentence(s)) ? next() : s))
    .filter(Boolean)
    .join(" ");
  for (const sentence of gone) {
    for (let at = kept.indexOf(sentence); at >= 0; at = kept.indexOf(sentence, at)) {
      const before = at === 0 || /[.!?] $/.test(kept.slice(Math.max(0, at - 2), at));
      const after = at + sentence.length === kept.length || kept[at + sentence.length] === " ";
      if (before && after) {
        const now = next();
        kept = `${kept.slice(0, at)}${now}${kept.slice(at + sentence.length)}`.replace(/\s{2,}/g, " ");
        at += now.length;
      } else at += sentence.length;
    }
  }
  return kept.trim();
}
