import { setTimeout as sleep } from "node:timers/promises";
import { formatDay, parseLooseDate, resolveRelativeDates } from "../../dates/dates.js";
import { escapeRe } from "../../dates/strptime.js";
import { foldLatin } from "../../fold.js";
import { identifiersFromText } from "../../identifiers/identifiers.js";
import { truncate } from "../../truncate.js";
import type {
  ExtractedFact,
  ExtractInput,
  Extraction,
  Extractor,
  JudgeCase,
  JudgeVerdict,
  Turn,
} from "../types.js";
import { extractArtifacts, toolCallInput, toolCallPath } from "./artifacts.js";
import { isCommonWord, isMostlyVerb, isNeverName, isTimeName, isVerb, placeKinds } from "./concepts.js";
import { directivesInSteps, ERROR, ERROR_MARK, TRACEBACK } from "./directives.js";
import {
  ASSISTANT_OFFER,
  asciiApostrophes,
  asRequest,
  asSentence,
  attributeLine,
  CLAIM_LABEL,
  categoriesOf,
  contentWords,
  factTypeOf,
  isAssistantSupposing,
  isPastForm,
  isSubstantive,
  normaliseText,
  politeRequest,
  STOPWORDS,
  sentenceCase,
  splitSentences,
  standardFirstPerson,
  stem,
  stripInterjections,
  thirdPersonVerb,
  toThirdPerson,
  withDroppedSubject,
  withoutLeadIn,
} from "./english.js";
import { APPOSITIVE, introducedName, TITLE, userNameFact } from "./names.js";
import { allSteps, STEP_MS, stepClock, stepsWithPauses } from "./steps.js";

/**
 * The deterministic extractor: no network, no model. Facts keep the specific content of each turn
 * (names, dates, places, objects) so retrieval can find the turn again through
 * `source_event_ids`. `delayMs` is a test-only slow-down (MNEMO_TEST_EXTRACT_DELAY_MS).
 */
export function createLocalExtractor(options: { delayMs?: number } = {}): Extractor {
  return {
    name: "local",
    async extract(input) {
      if (options.delayMs) await sleep(options.delayMs);
      // A step at a time, giving the event loop a turn between steps: thousands of turns in one
      // go held every request of the process for a few hundred milliseconds.
      return stepsWithPauses(extractInSteps(input));
    },
    judge: async (cases) => cases.map(judgeLocally),
  };
}

/**
 * A sentence that opens with its speaker changing the subject ("By the way, ...", "Oh, and btw -
 * ...", "Anyway, ...", "On another note, ...", "In other news, ..."): the marker, to strip.
 */
const TOPIC_SHIFT =
  /^(?:and\s+)?(?:by the way|btw|anyway|anyways|on (?:another|a different|an unrelated|a side|a separate) note|in other news|side note|changing the subject|unrelated(?:ly)?,? but|one more thing)\b\s*[,:;!.\-\u2013\u2014]*\s*/i;

/**
 * A line of a log or a progress bar, tested on the line without its leading blanks. No part may
 * backtrack over the line: a 50,000-tab line took 1.7 s under the first version.
 */
const NOISE_LINE =
  /^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|[\w.]+:\d+:\d+|[#=\-*.]{6}|\d+%|npm (?:warn|notice)|\$ )/;
/**
 * A JavaScript stack frame: "at fn (file.js:1:2)", a path with brackets of its own included
 * ("at Page (/app/(marketing)/page.tsx:5:3)", "C:\proj (copy)\a.js"), "at /srv/x.js:3:4", "at
 * async Promise.all (index 0)", "at new Promise (<anonymous>)". Tested by its ends, in linear time.
 */
const isStackFrame = (line: string) =>
  /^at\s+\S/.test(line) &&
  (/:\d+:\d+\)?\s*$/.test(line) || /\((?:index \d+|<anonymous>|native)\)\s*$/.test(line));
const isNoiseLine = (line: string) => {
  const l = line.trimStart();
  return NOISE_LINE.test(l) || isStackFrame(l);
};

/** How an assistant's sentence about itself or its courtesy to the user begins. */
const ASSISTANT_OWN =
  /^(?:I|I'm|I'll|I'd|I've|Let me|Here|Congratulations|Congrats|Thanks|Thank you|You're welcome|Good luck|Sorry|Glad|Happy to|Great|Awesome|Wonderful|Sounds good|Of course|Sure|No problem|Noted|Got it|Understood|Will do|Good to know|Important to know|Makes sense|Fair enough|Tell me|That's|That is|What a|How (?:exciting|wonderful|lovely|nice|great|fun|cool)|Happy (?:belated\s+)?(?:birthday|anniversary|holidays|new year|hunting|travels)|Fingers crossed|So (?:glad|happy|sorry|exciting|excited)|Sounds like|Hope|Enjoy|Have (?:fun|a (?:great|good|nice|wonderful|lovely))|Safe travels|Get well|Feel better|Best of luck|Worth it|Well done|Nice (?:work|job|one)|Good job|Yay|Wow|Oh no|Aww?|Hooray|Cheers|Take care|Break a leg|Bon voyage|Welcome back)\b/i;

/**
 * A courtesy the assistant asks of the user ("Please congratulate Tom for me!", "Say hi to your mom
 * for me."): nothing about anyone.
 */
const ASSISTANT_ASKS_COURTESY =
  /^(?:please\s+)?(?:give|send|say|tell|congratulate|wish|pass|thank|hug)\b.*\bfor me\b[\s.!]*$/i;

/**
 * What the assistant did or will do in the user's affairs ("I've issued a $15 credit to your
 * account", "I refunded the duplicate charge.", "I have escalated this to our billing team", "I'll
 * remind you on June 2", "I checked your account: you're on the Family plan"): a claim the user may
 * ask about, though it opens as the assistant's courtesies do (ASSISTANT_OWN). A verb of doing in
 * the past or the present perfect (what was done, whoever it names), or after "will" with the user
 * named ("you", "your": a promise to them); not a thought, a feeling or a courtesy ("I understood",
 * "I noticed that too", "I'll keep that in mind for you", "I hope you ...", "I'll let you know").
 */
const ASSISTANT_ACTION =
  /^I(?<aux>'ve| have|'ll| will)?\s+(?:(?:just|also|already|now|gone ahead and|went ahead and)\s+)*(?<verb>[a-z]+)\b/i;
const NO_ACTION = new Set(
  `be been think thought hope hoped understand understood know knew see saw seen feel felt believe believed
  guess guessed wish wished love loved like liked bet agree agreed mean meant appreciate appreciated
  apologize apologized apologise apologised imagine imagined note noted keep kept remember remembered get
  got gotten hear heard want wanted need needed miss missed try tried help helped do did done let say said
  tell told enjoy enjoyed notice noticed realize realized realise realised wonder wondered assume assumed
  figure figured suspect suspected mention mentioned forget forgot forgotten misunderstand misunderstood
  misread gather gathered`.split(/\s+/),
);

/**
 * A hedged suggestion that names nothing ("Maybe try cutting back a little.", "Perhaps consider a
 * break."): a reaction, where advice that names a thing, a place or a number ("Maybe try the Thai
 * place on 5th Street") is kept as the assistant's claim.
 */
const VAGUE_ADVICE = /^(?:[Mm]aybe|[Pp]erhaps)\s+(?:try|consider)\b(?!.*(?:\s\p{Lu}|\d))/u;

/**
 * What an action about the assistant's own words names ("I updated my answer above", "I made a
 * mistake in my previous answer", "I corrected the code above"): the chat's, no memory.
 */
const OWN_WORDS =
  /\b(?:made (?:a|an|the|some) (?:\w+ )?(?:mistake|error|typo|slip)s?\b|(?:my (?:(?:previous|last|earlier|original|first) )?|the (?:previous|last|earlier|original|first) )(?:answer|message|response|reply|explanation)s?\b|(?:above|below)[\s.!]*$|(?:earlier )?in (?:this|our|the) (?:chat|conversation|thread))/i;

/**
 * A request to the assistant that states no claim of the speaker's ("Please cancel my
 * subscription.", "Please look at the docs."): no "I" or "we" in it, as "Please cancel my
 * subscription, I'm moving abroad." has.
 */
const BARE_REQUEST = /^please\s+(?!.*\b(?:I|I'm|I've|I'd|I'll|we|we're|we've)\b)[a-z]+\b/i;

/** "Note to self:", "Reminder to myself -": the speaker's own, read as "My note (reminder) to self:". */
const NOTE_TO_SELF =
  /^(?:(?:a|my)\s+)?(?:quick\s+)?(note|reminder|memo) to (?:self|myself)\s*(?::|[-\u2013\u2014](?=\s))\s*/i;

/**
 * A past the sentence dates ("last spring", "in March", "two years ago", "when I was a kid"): an
 * assistant telling a life of its own ("I adopted a beagle in March"), not what it did in this
 * exchange, unless it is done for the user ("Yesterday I escalated your ticket").
 */
const DATED_PAST =
  /\b(?:last (?:week|weekend|month|year|spring|summer|autumn|fall|winter|night|\w+day)|(?:in|since) (?:January|February|March|April|May|June|July|August|September|October|November|December|\d{4})\b|\w+ (?:days?|weeks?|months?|years?) ago|yesterday|when I was|as a (?:kid|child|teen(?:ager)?)|growing up)\b/i;

function isAssistantAction(sentence: string): boolean {
  if (ASSISTANT_OFFER.test(sentence) || OWN_WORDS.test(sentence)) return false;
  if (DATED_PAST.test(sentence) && !/\b(?:you|your)\b/i.test(sentence)) return false;
  const m = ASSISTANT_ACTION.exec(sentence);
  const verb = m?.groups?.verb?.toLowerCase();
  if (!verb || NO_ACTION.has(verb)) return false;
  const aux = m!.groups!.aux ?? "";
  if (/'ll| will/.test(aux)) return isVerb(verb) && /\b(?:you|your)\b/i.test(sentence);
  // A regular past of a verb the word list has too few uses of ("escalated"), and after "have" a
  // participle with a prefix ("reset", "re-sent", "unblocked").
  const past = (w: string) => isPastForm(w) || (/^[a-z]{2,}ed$/.test(w) && !isVerb(w));
  return (
    past(verb) ||
    (aux !== "" && /^(?:re|un|pre)-?[a-z]{3,}$/.test(verb) && past(verb.replace(/^(?:re|un|pre)-?/, "")))
  );
}

/**
 * An assistant's verdict on what was just said, in a few words and not about the user ("Cats are
 * great companions.", "Ottawa is a lovely city.", "Porto in May is beautiful.", "Makes sense, it's
 * quieter than Toronto.", "Tea is a fun rabbit hole.", "Beagles are very loyal.", "Pandas are a
 * hit with kids."): a reaction, not a claim of the conversation.
 */
const EVALUATIVE = String.raw`(?:lovely|great|beautiful|adorable|wonderful|amazing|fun|nice|cool|fantastic|excellent|delightful|charming|awesome|perfect|ideal|gorgeous|cute|sweet|exciting|brilliant|impressive|fascinating|stunning|breathtaking|incredible|special|interesting|good|smart|clever|wise|sensible|thoughtful|fair|understandable|tough|hard|rough|brutal|intense|challenging|tricky|stressful|scary|frustrating|delicious|tasty|yummy|relaxing|peaceful|soothing|calming|refreshing|cozy|cosy|magical|memorable|iconic|classic|vibrant|lively|scenic|inspiring|touching|heartwarming|loyal|friendly|affectionate|playful|gentle|popular|handy|helpful|useful|worthwhile|rewarding)`;
/** A noun that praises what it names ("a hit with kids", "a real treat", "a gem"). */
const PRAISE_NOUN = String.raw`(?:hit|treat|gem|classic|winner|keeper|delight|joy|blast|must|favou?rite|crowd[- ]pleaser|game[- ]changer|lifesaver)`;
const ASSISTANT_VERDICT = new RegExp(
  String.raw`^(?:makes sense|fair enough|true|indeed)?[,!. ]*(?!.*\b(?:you|your|yours)\b)[\p{L}' -]{1,40}?\s*(?:\bis|\bare|'s|'re|\bsounds?|\blooks?|\bseems?)\s+(?:such\s+|so\s+|really\s+|very\s+|truly\s+|absolutely\s+|quite\s+|pretty\s+)?(?:(?:a|an)\s+)?(?:${EVALUATIVE}(?:\s+[\p{L}-]+){0,2}|(?:real\s+|big\s+|huge\s+)?${PRAISE_NOUN}(?:\s+(?:with|for|among)\s+[\p{L} -]{1,30})?|\p{L}+er than\s+[\p{L} ]{1,30})[.!]*$|^[\p{L}' -]{1,40}?\s(?:could|would|might|will|must) be\s+(?:so\s+|really\s+|a lot of\s+)?${EVALUATIVE}(?:\s+to\s+\p{L}+)?[.!]*$|^(?!.*\b(?:you|your)\b)\p{Lu}[\p{L}' -]{0,30}?\s(?:has|have)\s+(?:such\s+|some\s+|really\s+|an?\s+)?(?:${EVALUATIVE})\s+[\p{L} -]{1,30}[.!]*$`,
  "iu",
);

/**
 * An assistant's verdict said without a subject ("Perfect for road trips.", "Always good to
 * repeat.", "Sounds ideal for the kids.", "A nice weekend ritual."): no one's affairs, so no "you", no number and no name
 * after its first word.
 */
const ASSISTANT_REMARK = new RegExp(
  String.raw`^(?!.*\b(?:you|your|yours)\b)(?!.*\d)(?:(?:always|so|really|very|just|truly|pretty|quite)\s+)*(?:(?:sounds?|looks?|seems?)\s+(?:like\s+)?)?(?:(?:a|an)\s+)?(?:(?:so|really|very|truly|absolutely|pretty|quite)\s+)?${EVALUATIVE}(?:\s+[\p{L}-]+){0,2}(?:\s+(?:for|to|with|in|on|at|when)\s+[\p{L}' -]{1,40})?[.!]*$`,
  "iu",
);
/**
 * A verdict whose subject names something ("Mount Rainier is a hit with hikers in summer.",
 * "Alfama is very charming and central."): said in answer to the user's question ("Where should
 * we hike?"), the assistant's recommendation, not a reaction.
 */
const namesItsSubject = (sentence: string) => {
  const subject = /^(.*?)\s+(?:is|are|sounds?|looks?|seems?)\b|^(.*?)'(?:s|re)\b/i.exec(sentence);
  const words = (subject?.[1] ?? subject?.[2] ?? "").match(/\p{Lu}[\p{L}'-]*/gu) ?? [];
  return words.some((w) => !isCommonWord(w));
};

/** ASSISTANT_REMARK, no capital after its first word (a name: "Perfect for Lily's party."). */
const isAssistantRemark = (sentence: string) =>
  ASSISTANT_REMARK.test(sentence) && !/\s\p{Lu}/u.test(sentence);

export function extractLocally(raw: ExtractInput): Extraction {
  return allSteps(extractInSteps(raw));
}

/** extractLocally, pausing (yield) once a step has run `stepMs` milliseconds (see STEP_MS). */
function* extractInSteps(raw: ExtractInput, stepMs = STEP_MS): Generator<undefined, Extraction, undefined> {
  // Every rule below reads the ASCII apostrophe: a typed one ("I’m", "don’t") is written so once, here.
  const { input, introduced } = withUserName({
    ...raw,
    turns: raw.turns.map((t) => ({ ...t, content: asciiApostrophes(t.content) })),
  });
  // Turns that now speak as the user's name: their facts also index "the user", so a question
  // either way reaches them.
  const renamed = new Set(
    raw.turns.filter((t, i) => !t.speaker && input.turns[i]?.speaker).map((t) => t.eventId),
  );
  const facts: ExtractedFact[] = [];
  const seen = new Set<string>();
  if (introduced) {
    // The name is a profile fact of its own; "'s name is" makes a later name supersede it.
    const text = userNameFact(introduced.name);
    seen.add(normaliseText(text));
    facts.push({
      text,
      fact_type: "attribute",
      categories: ["profile"],
      source_role: "user",
      source_event_ids: [introduced.eventId],
    });
  }
  const speakers = new Set(
    input.turns.filter((t) => t.role !== "tool" && t.role !== "system").map(speakerName),
  );
  // Names as the input writes them: its speakers, and capitalised words inside its sentences.
  let namesMemo: Set<string> | null = null;
  const names = () => (namesMemo ??= namesOf(input.turns, speakers));
  const clock = stepClock(stepMs);
  for (const turn of input.turns) {
    if (clock.due()) {
      yield;
      clock.restart();
    }
    if (turn.role === "tool" || turn.role === "system") continue; // tool output is not a claim
    const name = speakerName(turn);
    // Between two speakers "you" is the other one; among more, it is no one the text says.
    const other = speakers.size > 2 ? null : counterpart(input.turns, turn);
    const nameOnce = namesOnce(other ? [other, name] : [name]);
    let content = withShortCodeInline(turn.content);
    if (input.agentic)
      content = content
        .split("\n")
        .filter((l) => !isNoiseLine(l))
        .join("\n");
    // One fact per topic of a turn, holding every substantive sentence of it: a turn is what a
    // reader asks about, and its sentences explain each other ("We went camping. The kids loved
    // the meteor shower." answers "where did they see the meteor shower?" only together). Split
    // into sentence facts, one turn also filled several search slots with near-copies of one
    // source; split into claims (a sentence naming the speaker and the ones after it), LoCoMo dev
    // lost R@1 0.433 -> 0.424 and R@5 0.690 -> 0.685. So a turn is split only where its speaker
    // says the subject changes ("By the way, ...", "Anyway, ...", "On another note, ..."): the
    // claims either side of that are unrelated, and each is a fact of its own.
    const topics: Array<{ parts: string[]; attributes: string[]; shifted: boolean }> = [];
    // A reply is often meaningless alone ("Yes, at the lake last summer!"): the question it answers
    // says what it is about, so it travels with the turn's fact as context.
    // It is kept as the fact's indexed context: searched (full text, vector), never shown in `text`.
    // Read only for a turn that says something (a third of the extraction's time otherwise).
    let askedMemo: string | null | undefined;
    const askedOf = () => {
      if (askedMemo === undefined) askedMemo = questionAnswered(input.turns, turn, name);
      return askedMemo;
    };
    let antecedent: string | null = null;
    let first = true;
    for (const said of splitSentences(content)) {
      // Chat spelling of the first person ("im", "i dont") read as written out; a request asked
      // as a question ("Can you remember that ...?") as the request.
      const typed = standardFirstPerson(said);
      const raw = turn.role === "user" ? politeRequest(stripInterjections(typed)) : typed;
      // A label leading the message ("Remember: ...", "Note: ...") is no part of the claim, nor
      // a lead-in the code it introduced was taken from ("Here is my script: It hangs").
      // A note to self is the speaker's own ("Note to self: never deploy on Fridays."), no request.
      const interjectionless = withoutLeadIn(
        stripInterjections(raw)
          .replace(CLAIM_LABEL, "")
          .replace(NOTE_TO_SELF, (_, noun: string) => `My ${noun.toLowerCase()} to self: `),
      );
      const shift = TOPIC_SHIFT.exec(interjectionless);
      const shifted = shift ? interjectionless.slice(shift[0].length) : interjectionless;
      // The user's chat drops its subject ("Went hiking today."), and the fact would name no one. A
      // named speaker's is said as theirs ("Caroline said: Went hiking"): on LoCoMo, where every
      // speaker is named, putting the "I" back there too lowered R@1 0.479 -> 0.478.
      // A user named by a self-introduction on record is still the chat's user here.
      const chatUser = turn.role === "user" && (!turn.speaker || renamed.has(turn.eventId));
      // A labelled line ("Allergies: penicillin.") is the user's attribute, said as a claim.
      const sentence = chatUser ? withDroppedSubject(attributeLine(shifted)) : shifted;
      // A short answer to the question before it ("At Lake Tahoe.", "She's 7.", "It's Canberra,
      // actually.") says enough with that question beside it: a name or a number. The user's or
      // the assistant's: between named speakers (LoCoMo) it lowered open-domain R@5 0.400 -> 0.392.
      const answer = first && (!turn.speaker || chatUser) && isShortAnswer(sentence) && askedOf() !== null;
      first = false;
      if (!isSubstantive(sentence) && !answer) continue;
      // The assistant's own offers ("I can help with that") and courtesies ("Congratulations on
      // the new role!") say nothing about anyone.
      if (
        !turn.speaker &&
        turn.role === "assistant" &&
        ((ASSISTANT_OWN.test(sentence) && !isAssistantAction(sentence)) ||
          ASSISTANT_ASKS_COURTESY.test(sentence) ||
          isAssistantSupposing(sentence) ||
          (ASSISTANT_VERDICT.test(sentence) && !(askedOf() !== null && namesItsSubject(sentence))) ||
          isAssistantRemark(sentence) ||
          VAGUE_ADVICE.test(sentence))
      )
        continue;
      const request =
        turn.role === "user" ? asRequest(sentence, speakerName(turn), other ?? undefined) : null;
      // A request to the assistant not read as one (REQUEST's verbs) states nothing about the user.
      if (request === null && chatUser && !turn.speaker && BARE_REQUEST.test(sentence)) continue;
      let text = request ?? toThirdPerson(sentence, name);
      if (other) text = secondToThird(text, other);
      text = nameOnce(text);
      text = inWordsOfAge(text);
      if (shift || topics.length === 0) topics.push({ parts: [], attributes: [], shifted: !!shift });
      const topic = topics.at(-1)!;
      topic.parts.push(text);
      // "He"/"She" opening a sentence is the person the sentence before named ("The user's
      // brother ... He now works at NASA."): alone, as an attribute, it says who.
      const alone = antecedent ? text.replace(/^(?:He|She)(?= [a-z])/, antecedent) : text;
      antecedent = NAMED_SUBJECT.exec(text)?.[1] ?? null;
      // A sentence stating an attribute is one; one that joins several claims ("The user lives in
      // Oslo and the user works as a carpenter") gives each of its attribute clauses alone.
      if (slotsOf(alone).length) topic.attributes.push(alone);
      else topic.attributes.push(...attributeClauses(alone));
    }
    if (topics.length === 0) continue;
    // A single-valued attribute inside a longer topic ("Ana moved to Berlin.") also stands alone,
    // so a later change of that attribute supersedes it without hiding the rest of the turn.
    // A topic longer than FACT_BUDGET is several facts, cut between its sentences (never dropped).
    const texts = topics.flatMap(({ parts, attributes, shifted }) =>
      [...inPieces(parts), ...attributes.filter((a) => parts.length > 1 || a !== parts[0])].map(
        (text, i) => ({
          text,
          shifted,
          i,
        }),
      ),
    );
    // The day the message carried leads the fact: a fact read later keeps its time, and questions
    // that name one ("what did Ana do in May 2023?") find it by full text. Not a day its date was
    // not read as (an unreadable date resolves "yesterday" as a missing one, and leads with none).
    const read = turn.date && (turn.at ?? parseLooseDate(turn.date));
    const day = read && turn.refDate ? formatDay(turn.refDate) : null;
    // A topic's fact carries context: the question answered (by what the turn says before changing
    // the subject) and, for a user known by name, "the user". Attributes repeated alone carry none.
    const contextOf = (shifted: boolean, i: number): { context?: string } => {
      const context = [shifted ? null : askedOf(), renamed.has(turn.eventId) ? "(the user)" : null]
        .filter(Boolean)
        .join(" ");
      return i === 0 && context ? { context } : {};
    };
    for (let { text, shifted, i } of texts) {
      // Relative dates are read from the clause's own words: the "said" of "X said:" is not its
      // tense ("A quick pasta on Saturday works well." means the coming Saturday).
      text = resolveRelativeDates(text, turn.refDate, [...speakers]);
      // Say whose statement it is when the text does not name them ("X said: ..."); what an
      // assistant says ("You might enjoy Spanish") is its claim or advice, never the user's.
      // (The chat's user named by a self-introduction is the user as before: no "Dana said:".)
      if (turn.speaker && !renamed.has(turn.eventId) && !text.includes(turn.speaker))
        text = `${turn.speaker} said: ${text}`;
      else if (!turn.speaker && turn.role === "assistant" && !/^the assistant\b/i.test(text))
        text = `The assistant said: ${text}`;
      if (day) text = `On ${day}, ${leadLowered(text, names)}`;
      text = text.replace(/\s+/g, " ").trim();
      const key = normaliseText(text);
      // A fact the user already has (an agentic ingest's `known`) is given all the same: the
      // dedup stage touches the existing row and reports it, as on any ingest (skipped here, it
      // was neither, and the episode of a conversation sent again no longer matched its first).
      if (seen.has(key)) continue;
      seen.add(key);
      facts.push({
        text,
        fact_type: factTypeOf(text),
        categories: categoriesOf(text),
        source_role: turn.role,
        source_event_ids: [turn.eventId],
        ...contextOf(shifted, i),
      });
    }
  }
  const artifacts = input.extractArtifacts ? extractArtifacts(input.turns, input.agentic) : [];
  const directives = yield* directivesInSteps(input.turns, stepMs);
  return { facts, episode: episodeFor(input, facts), artifacts, directives };
}

/**
 * A fenced block of one short line that completes the sentence before it ("My go-to bash alias
 * is:\n```bash\nalias gs='git status -sb'\n```") written inline as code, so the fact keeps what
 * the sentence says; a sentence after it starts a sentence of its own. Other code ("Here is my
 * script:", longer blocks) is an artifact and leaves the fact (splitSentences).
 */
function withShortCodeInline(content: string): string {
  if (!content.includes("```")) return content;
  return content.replace(
    /(\b(?:is|are|was|were)\s*:\s*\n)```[^\n`]*\n([^\n`]{1,120})\n```([ \t]*\n\s*(?=\p{Lu}))?/gu,
    (_m, lead: string, line: string, next: string | undefined) =>
      `${lead.replace(/\s*\n$/, " ")}\`${line.trim()}\`${next ? ".\n" : ""}`,
  );
}

/**
 * The most a fact's text holds of what its speaker said, in characters (its "X said:" and date
 * lead come on top): a long turn is several facts, each a run of whole sentences.
 */
const FACT_BUDGET = 900;
/** At most this many facts of one topic of a turn; what is beyond is cut, with "...". */
const MAX_PIECES = 20;

/**
 * Sentences joined into runs of at most FACT_BUDGET characters; a sentence longer than that alone
 * is cut between words. At most MAX_PIECES runs.
 */
export function inPieces(sentences: string[]): string[] {
  const pieces: string[] = [];
  let run = "";
  const flush = () => {
    if (run) pieces.push(run);
    run = "";
  };
  for (const sentence of sentences) {
    let rest = sentence;
    while (rest.length > FACT_BUDGET) {
      flush();
      const cut = rest.lastIndexOf(" ", FACT_BUDGET);
      const at = cut > FACT_BUDGET / 2 ? cut : FACT_BUDGET;
      const piece = truncate(rest, at);
      pieces.push(piece.trim());
      rest = rest.slice(piece.length).trim();
    }
    if (!rest) continue;
    if (run && run.length + 1 + rest.length > FACT_BUDGET) flush();
    run = run ? `${run} ${rest}` : rest;
  }
  flush();
  if (pieces.length <= MAX_PIECES) return pieces;
  const kept = pieces.slice(0, MAX_PIECES);
  kept[MAX_PIECES - 1] = `${truncate(kept[MAX_PIECES - 1]!, FACT_BUDGET - 3)}...`;
  return kept;
}

/**
 * The user's name, from a self-introduction in this request ("Hi, I'm Priya") or from earlier ones
 * (`userName`): unnamed user turns then speak as that name, so facts read "Priya moved to Lisbon"
 * instead of "The user moved to Lisbon", and the introduction itself leaves the turn ("Hi, I'm
 * Priya and I work as a nurse" keeps "I work as a nurse").
 */
function withUserName(input: ExtractInput): {
  input: ExtractInput;
  introduced: { name: string; eventId: string } | null;
} {
  let introduced: { name: string; eventId: string } | null = null;
  for (const t of input.turns) {
    if (t.role !== "user" || t.speaker) continue;
    const name = introducedName(t.content);
    if (name) introduced = { name, eventId: t.eventId };
  }
  const name = introduced?.name ?? input.userName ?? null;
  const turns = input.turns.map((t) => {
    if (name && t.role === "user" && !t.speaker)
      return { ...t, speaker: name, content: withoutIntroduction(t.content, name) };
    // A named speaker introducing themself ("Hey! I am Dave, I just adopted a cat") says nothing
    // the speaker's name does not: "Dave is Dave just adopted ..." otherwise (accents aside: "Zoë"
    // typing "I'm Zoe").
    const own = t.speaker ? introducedName(t.content) : null;
    if (own && foldLatin(own) === foldLatin(t.speaker!))
      return { ...t, content: withoutIntroduction(t.content, own) };
    // "Name: Jordan Lee. I just started at Stripe" from Jordan: the full name speaks this turn.
    if (own && t.speaker && own.startsWith(`${t.speaker} `))
      return { ...t, speaker: own, content: withoutIntroduction(t.content, own) };
    return t;
  });
  return { input: { ...input, turns }, introduced };
}

function withoutIntroduction(content: string, name: string): string {
  const intro = new RegExp(
    `(?:\\b(?:[Yy]ou can|[Yy]ou may|[Pp]lease|[Jj]ust|[Ff]eel free to)\\s+)?\\b(?:[Mm]y name is|[Mm]y name's|[Cc]all me|(?:[Ee]veryone|[Ee]verybody|[Pp]eople|[Mm]ost people|[Ff]riends|[Mm]y friends) calls? me|I (?:now )?go by|I'm|I am|[Tt]his is|^\\s*(?:Full )?Name:)\\s+${TITLE}${escapeRe(name)}(?![\\p{L}\\p{N}_])(?:\\s+(?:here|btw|by the way|now|from now on|instead|please))?(?:\\s*(?:,|and)\\s*)?`,
    "u",
  );
  // A description after the name stays the speaker's ("I'm Priya, a nurse in Austin" reads "I'm a
  // nurse in Austin"); the introduction alone goes.
  return (
    content
      .replace(intro, (m, offset: number, all: string) =>
        /^(?:I'm|I am)\b/.test(m) &&
        APPOSITIVE.test(all.slice(offset + m.length - (m.match(/\s*,\s*$/)?.[0].length ?? 0)))
          ? `${m.startsWith("I am") ? "I am" : "I'm"} `
          : "",
      )
      // The introduction said last leaves what joined it ("I'm French, and my name is Amélie.",
      // "Don't call me Robert, call me Rob."), and a greeting before it nothing to greet ("Hi
      // I'm Rose, I'm a florist").
      .replace(/\s*,?\s+(?:and|but)\s*([.!?]?)\s*$/, "$1")
      .replace(/\s*,\s*([.!?]?)\s*$/, "$1")
      .replace(/^(?:hi|hello|hey)(?: there| all| everyone)?\b[,!]?\s+(?=\S)/i, "")
      // "Dana here." says who writes, and nothing more.
      .replace(new RegExp(`^${escapeRe(name)} here(?![\\p{L}\\p{N}_])\\s*[.!,;:-]*\\s*`, "u"), "")
      .trim()
  );
}

/**
 * The questions the previous turn asked this speaker, in the third person ("What got you into
 * running?" becomes "What got Ana into running?"), or null when it asked none or was their own.
 */
function questionAnswered(turns: Turn[], turn: Turn, me: string): string | null {
  const prev = turns[turn.index - 1];
  if (!prev || prev.role === "tool" || prev.role === "system" || speakerName(prev) === me) return null;
  const asker = speakerName(prev);
  const questions = splitSentences(prev.content)
    .map(stripInterjections)
    .filter((q) => q.endsWith("?") && contentWords(q).length > 0);
  if (!questions.length) return null;
  return questions.map((q) => secondToThird(toThirdPerson(q, asker), me)).join(" ");
}

function speakerName(turn: Turn): string {
  if (turn.speaker) return turn.speaker;
  // Lower case: the name also stands mid-sentence ("... and the user works as a nurse");
  // toThirdPerson capitalises a sentence's first letter.
  if (turn.role === "user") return "the user";
  if (turn.role === "assistant") return "the assistant";
  return turn.role;
}

/** The other party of a two-way chat: the nearest turn with a different speaker. */
function counterpart(turns: Turn[], turn: Turn): string | null {
  const me = speakerName(turn);
  const other = (x: Turn) => x.role !== "tool" && x.role !== "system" && speakerName(x) !== me;
  // Earlier turns nearest first, then later ones; no copy of the list per turn (5,000 turns
  // copied 5,000 times held the event loop for about 80 ms).
  for (let i = turn.index - 1; i >= 0; i--) if (other(turns[i]!)) return speakerName(turns[i]!);
  for (let i = turn.index + 1; i < turns.length; i++) if (other(turns[i]!)) return speakerName(turns[i]!);
  return null;
}

/**
 * "you" opening a clause (the start of the text or of a sentence, after a comma, or after "if",
 * "when", "that", "hope", "know" ...), an adverb ("really", "ever", "-ly") or none, then a word:
 * the verb.
 */
const YOU_AS_SUBJECT =
  /(^|[.!?,;:]\s+|\b(?:if|when|whenever|because|since|that|and|but|so|as|where|how|how much|what|hopes?|thinks?|knows?|bets?|guess(?:es)?|wish(?:es)?|unless|until|while|though|although)\s+)you\s+((?:really|just|also|ever|never|always|still|totally|definitely|actually|usually|often|sometimes|even|truly|\w+ly)\s+)?([a-z']+)\b/gi;
/** Words after "you" that are not its verb: "you too", "you guys", "you and me", "you all". */
const NON_VERB_AFTER_YOU =
  /^(?:too|and|or|the|a|an|to|in|at|on|so|as|of|for|with|all|both|two|three|guys|is|are|were|was)$/;

/**
 * A name said twice in a row after the rewrite: the other speaker addressed and then "you" ("No
 * doubt Jon, you've got this" -> "No doubt Jon, Jon has got this"), or "me" then "I" ("reminding
 * me I'm not alone"): once is enough.
 */
function namesOnce(names: string[]): (s: string) => string {
  // Word edges of any script ("José", not only ASCII's \b).
  const twice = names.map(
    (n) =>
      [
        new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRe(n)},? ${escapeRe(n)}(?![\\p{L}\\p{N}_])`, "gu"),
        n,
      ] as const,
  );
  return (s) => twice.reduce((t, [re, n]) => t.replace(re, n), s);
}

/**
 * "you" as the other speaker, in the third person. Words inside quotes are someone's own words, as
 * toThirdPerson keeps them: "My doctor said \"you have high blood pressure\"" quotes the doctor
 * speaking to the user, and its "you" is no assistant.
 */
function secondToThird(s: string, name: string): string {
  const parts = s.split(/("[^"]*"|“[^”]*”|`[^`]*`)/);
  return sentenceCase(parts.map((p, i) => (i % 2 === 1 ? p : unquotedSecondToThird(p, name))).join(""));
}

function unquotedSecondToThird(s: string, name: string): string {
  return (
    s
      .replace(/\b([Dd])o you\b/g, (_m, d: string) => `${d}oes ${name}`)
      .replace(/\b([Dd])on't you\b/g, (_m, d: string) => `${d}oesn't ${name}`)
      // A question's verb before "you" agrees with the third person: "Where are you headed?" ->
      // "Where is the user headed?", "Have you been?" -> "Has the user been?".
      .replace(/\b([Aa])re you\b/g, (_m, a: string) => `${a === "A" ? "I" : "i"}s ${name}`)
      .replace(/\b([Ww])ere you\b/g, (_m, w: string) => `${w}as ${name}`)
      .replace(/\b([Hh])ave you\b/g, (_m, h: string) => `${h}as ${name}`)
      .replace(/\b([Hh])aven't you\b/g, (_m, h: string) => `${h}asn't ${name}`)
      .replace(/\b([Aa])ren't you\b/g, (_m, a: string) => `${a === "A" ? "I" : "i"}sn't ${name}`)
      .replace(/\b[Yy]ou're\b|\b[Yy]ou are\b/g, `${name} is`)
      .replace(/\b[Yy]ou were\b/g, `${name} was`)
      .replace(/\b[Yy]ou've\b|\b[Yy]ou have\b/g, `${name} has`)
      .replace(/\b[Yy]ou'd\b/g, `${name} would`)
      .replace(/\b[Yy]ou'll\b/g, `${name} will`)
      .replace(/\b[Yy]our\b/g, `${name}'s`)
      .replace(/\b[Yy]ourself\b/g, "themselves")
      .replace(/\b(?:[Yy]ou guys|[Yy]ou two|[Yy]'all)\b/g, `${name} and others`)
      // "you" as a subject ("if you need anything", "hope you do too"): the verb after it takes
      // the third person. Only after a clause opening, where "you" is not an object ("I'll call you
      // tomorrow").
      .replace(YOU_AS_SUBJECT, (_m, lead: string, adv: string | undefined, verb: string) => {
        // A past tense stays (thirdPersonVerb keeps it); so does an -ing form, which is no verb here.
        const keep = NON_VERB_AFTER_YOU.test(verb) || /ing$/.test(verb);
        return `${lead}${name} ${adv ?? ""}${keep ? verb : thirdPersonVerb(verb)}`;
      })
      .replace(/\b[Yy]ou\b/g, name)
  );
}

/**
 * A fact's text after its day ("On 8 May 2023, the user ..."): its first word in lower case when
 * it is a function word ("if", "the") or a word no one is named (a verb form or adverb with no noun
 * or adjective sense, an -ing form: isNeverName). Any other capitalised word may be a name and keeps
 * its capital: "Mark", "Amber", "Apple", "March", "Will", a speaker, a word the input capitalises
 * inside a sentence, a word WordNet lacks ("Caroline"); and so do "I" and words in capitals or
 * mixed case ("NASA", "iPhone").
 */
export function leadLowered(text: string, names: () => Set<string> = () => new Set()): string {
  const first = /^(\p{Lu}[\p{Ll}]*)(?='s\b|[^\p{L}\p{N}'_-]|$)/u.exec(text)?.[1];
  if (!first || first === "I") return text;
  const lower = () => text.charAt(0).toLowerCase() + text.slice(1);
  if (LEADING_FUNCTION_WORD.test(text)) return lower();
  if (names().has(first)) return text;
  const word = first.toLowerCase();
  return (STOPWORDS.has(word) && !NAME_STOPWORDS.has(word)) || isNeverName(word) ? lower() : text;
}

/** Stop words that are names and months too ("Will and I", "May is when ..."). */
const NAME_STOPWORDS = new Set(["will", "may"]);

/** The speakers' names and the words written capitalised inside a sentence of the input ("... with Rose"). */
function namesOf(turns: Turn[], speakers: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const s of speakers) for (const w of s.split(/\s+/)) out.add(w);
  for (const t of turns)
    for (const m of t.content.matchAll(/(?<=[\p{L}\p{N},;]\s+)\p{Lu}\p{Ll}+/gu)) out.add(m[0]);
  return out;
}

/** A sentence's first word that is lower case inside a sentence ("On 8 May 2023, the user ..."). */
const LEADING_FUNCTION_WORD =
  /^(The|A|An|It|Its|It's|This|That|These|Those|There|They|We|He|She|His|Her|Their|Our|My|Your|You|Some|All|Both|Each|Every|No|Last|Next|Yesterday|Today|Tonight|Tomorrow|Earlier|Later|Recently|Lately|Now|Then|One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|A few|Several|In|At|On|For|With|From|About|Around|Over|Just|Also|So|And|But|After|Before|During|Since|When|Back)\b/;

/** Words of the dates that lead facts ("On 8 May 2023, ..."): no topic of a conversation. */
const DATE_WORD =
  /^(\d+|january|february|march|april|may|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weeks|month|months|year|years|today|yesterday|tomorrow|last|next|ago)$/;

/**
 * A topic word as the facts write it inside a sentence: "Lisbon" and "Maria" keep their capital
 * ("Conversation about Lisbon, Maria"), a word capitalised only where it opens a sentence does not.
 */
function asWritten(word: string, sentences: string[]): string {
  // No word a topic names is that long; a pattern of a 33,000-letter one fails to compile.
  if (word.length > 64) return word;
  // After a word or a comma: not where a sentence or a quoted remark ("said: It's ...") opens.
  const re = new RegExp(`(?<=[\\p{L}\\p{N},]\\s+)${escapeRe(word)}(?![\\p{L}\\p{N}_])`, "iu");
  for (const s of sentences) {
    const m = re.exec(s);
    if (m) return m[0];
  }
  return word;
}

/** Words the third person puts in facts for the speakers ("the user and others"): no topic. */
const PERSON_WORDS = new Set(["user", "user's", "others", "assistant", "assistant's"]);

function episodeFor(input: ExtractInput, facts: ExtractedFact[]): Extraction["episode"] {
  const speakers = [...new Set(input.turns.filter((t) => t.role !== "tool").map(speakerName))];
  const freq = new Map<string, number>();
  for (const f of facts) for (const w of new Set(contentWords(f.text))) freq.set(w, (freq.get(w) ?? 0) + 1);
  const names = new Set(speakers.flatMap((s) => contentWords(s).flatMap((w) => [w, `${w}'s`])));
  const topics = [...freq.entries()]
    // A contraction ("it's", "let's", "can't") is no topic.
    .filter(
      ([w, n]) => n > 1 && !names.has(w) && !PERSON_WORDS.has(w) && !DATE_WORD.test(w) && !w.includes("'"),
    )
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 3)
    .map(([w]) => w);
  // Extractive summary: the sentences that share most vocabulary with the rest, in conversation
  // order. Sentences, not facts: a fact holds a whole turn, and three whole turns make a summary
  // so long that it matches (and crowds out of search) half the questions about its session.
  // Each sentence once: an attribute also stands alone as a fact, so its sentence comes twice, or
  // inside the sentence it was a clause of ("Priya moved to Leeds and Priya works as a nurse").
  const said = [...new Set(facts.flatMap((f) => splitSentences(f.text)))];
  // Compared without the day that leads a fact: a dated clause ("On 10 January 2024, the user
  // works at Initech.") is inside its dated sentence all the same.
  const lower = said.map((s) => bareClaim(s).toLowerCase());
  const within = (i: number) => {
    const s = lower[i]!.replace(/[.!]$/, "");
    return lower.some((o, j) => j !== i && o.includes(s) && (o !== lower[i] || j < i));
  };
  // The three best sentences, each checked against the rest only once it is a candidate: checked
  // all against all first, 3,000 sentences held the event loop for 2 s (every other request with
  // it). The same three as filtering first: the order by score is stable.
  const chosen: Array<{ i: number; text: string }> = [];
  const byScore = said
    .map((text, i) => ({
      i,
      text,
      score: contentWords(text).reduce((s, w) => s + (freq.get(w) ?? 0), 0) / Math.sqrt(1 + text.length / 80),
      // The assistant's remark or courtesy ("the assistant said: Lots going on in your family!") sums
      // up no conversation while a fact of the user's is left: dated by the message before it, its
      // day's words had raised it above the user's own lines.
      remark: /^the assistant said:/.test(lower[i]!),
    }))
    .sort((a, b) => Number(a.remark) - Number(b.remark) || b.score - a.score);
  for (const c of byScore) {
    if (chosen.length === 3) break;
    if (!within(c.i)) chosen.push(c);
  }
  chosen.sort((a, b) => a.i - b.i);
  const firstTurn = input.turns.find((t) => t.content.trim())?.content.trim() ?? "";
  const summary = chosen.length ? chosen.map((c) => asSentence(c.text)).join(" ") : truncate(firstTurn, 300);
  const who = speakers.filter((s) => !/^the /i.test(s));
  // One named speaker (a user who said their name, talking alone) is talked with, not between.
  let title =
    who.length > 1
      ? `Conversation between ${who.join(" and ")}`
      : who.length
        ? `Conversation with ${who[0]}`
        : "Conversation";
  if (topics.length) title += ` about ${topics.map((w) => asWritten(w, said)).join(", ")}`;

  let gist: Record<string, unknown> | null = null;
  if (input.agentic) {
    const userTurns = input.turns.filter((t) => t.role === "user");
    const goal = splitSentences(userTurns[0]?.content ?? "")[0] ?? null;
    // Stack frames name the library's files, not the session's; a diff's lines are code.
    const lines = input.turns
      .flatMap((t) => t.content.split("\n"))
      .map((l) => l.replace(ERROR_MARK, "").trim())
      .filter((l) => !STACK_FRAME.test(l) && !DIFF_LINE.test(l));
    // The files the tool calls name first (what was read and edited), then the others.
    const named = input.turns.flatMap((t) => {
      const args = t.role === "tool" ? toolCallInput(t.content) : null;
      const path = args && toolCallPath(args);
      return path ? [path] : [];
    });
    const ids = [...new Set([...named, ...identifiersFromText(lines.join("\n"))])];
    // The exception a traceback ends with, not its opening line.
    const errors = lines
      .filter((l) => ERROR.test(l) && !TRACEBACK.test(l))
      .map((l) => truncate(l, 200))
      .slice(0, 5);
    const lastAssistant = [...input.turns].reverse().find((t) => t.role === "assistant");
    const outcome = lastAssistant ? (splitSentences(lastAssistant.content).pop() ?? null) : null;
    gist = {
      goal,
      tools: [...new Set(input.turns.filter((t) => t.role === "tool" && t.speaker).map((t) => t.speaker!))],
      files: ids.filter(isFileName).slice(0, 20),
      errors,
      outcome,
    };
    if (goal) title = `Session: ${truncate(goal, 100)}`;
  }
  return { title, summary, gist };
}

// Single-valued attributes: a new value for the same subject and slot supersedes the old one; a
// negated one ("no longer works at Acme", "left Acme", "isn't vegetarian") supersedes the same
// value. A kind may have several statements; those that only ever negate ("left Acme") are not
// how its stored facts are found (`negation`).
const NEG = `(?<neg>no longer |doesn't |does not |is no longer )?`;
const ROLE = String.raw`is (?:now )?(?:a|an) (?:[a-z-]+ ){0,3}?[a-z-]+`;
const ORG = String.raw`[A-Z][A-Za-z0-9&.'-]*(?: [A-Z][A-Za-z0-9&.'-]*)*`;
export const INTRODUCED_EMPLOYER = new RegExp(String.raw`^(?<s>.+?) ${ROLE} (?:at|for|with) (?<v>${ORG})`);
export const INTRODUCED_RESIDENCE = new RegExp(
  String.raw`^(?<s>.+?) ${ROLE}(?: (?:at|for|with) ${ORG})? (?:in|based in) (?<v>[A-Z][A-Za-z'-]*(?: [A-Z][A-Za-z'-]*)*)[.!]?$`,
);
/** Adverbs between a subject and its verb ("the user just moved to Seattle"): no part of either. */
const ADV = `(?:(?:now|currently|recently|just|finally|also|still|actually|officially) )*`;
/**
 * Retirement ends working: at the employer it names ("retired from Boeing"), else at any (an empty
 * value: "the user retired last year", "the user is retired"); not "retired the old laptop".
 */
const RETIRED =
  /^(?<s>.+?) (?:(?:has|have|had|just|recently|finally|officially|is|am|was|got|now) )*(?<neg>retired)(?: from (?<v>.+?))?(?: (?:last|this|in|on|at|after|because|early|yesterday|today|since|when|now)\b.*)?$/i;
/** The diets that eating a food again ends (the "diet" slot's negation by a food). */
const FOOD_ENDS: Record<string, string[]> = {
  meat: ["vegetarian", "vegan", "pescatarian", "pescetarian"],
  chicken: ["vegetarian", "vegan", "pescatarian", "pescetarian"],
  beef: ["vegetarian", "vegan", "pescatarian", "pescetarian"],
  pork: ["vegetarian", "vegan", "pescatarian", "pescetarian"],
  fish: ["vegetarian", "vegan"],
  seafood: ["vegetarian", "vegan"],
  dairy: ["vegan"],
  eggs: ["vegan"],
  cheese: ["vegan"],
};
/**
 * For the slot patterns that need one, a word a sentence must hold for the pattern to match,
 * tested first (gated): a pattern with a lazy subject tries every split of the sentence.
 */
const SLOT_GATES = new Map<RegExp, RegExp>();
function gated(gate: RegExp, re: RegExp): RegExp {
  SLOT_GATES.set(re, gate);
  return re;
}
/**
 * The time said after an age turned ("today", "last week", "on Monday", "on 3 May", "on her
 * birthday", "on the weekend", "two days ago", "in May"); "on" a day, a date, a holiday, a
 * birthday or an anniversary only ("turned 30 on page 5" is no age).
 */
const TURNED_ON = String.raw`on (?:(?:the )?\d{1,2}(?:st|nd|rd|th)?\b[^,]*|\d{4}-\d{2}-\d{2}\b|\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|(?:[A-Z][\w']* )*(?:[A-Z][a-z]*day|Day|Eve|Christmas|Easter|Thanksgiving|Halloween|Hanukkah|Diwali|Eid|Passover)\b[^,]*?|(?:January|February|March|April|May|June|July|August|September|October|November|December)\b[^,]*?|(?:[\w']+ ){1,3}?(?:birthday|anniversary)|(?:a|the|that|this) (?:[\w']+ ){0,2}?(?:weekend|day|night|morning|afternoon|evening|\w+day)\b[^,]*?)`;
const TURNED_WHEN = String.raw`today|yesterday|(?:this|last|past) [A-Za-z]+|${TURNED_ON}|in [A-Za-z]+(?: \d{4})?|(?:a|an|one|two|three|four|five|six|a few|a couple of|several|\d+) (?:days?|weeks?|months?) ago|\([^)]*\)`;
const SLOTS: Array<[string, RegExp, "negation"?]> = [
  [
    "residence",
    new RegExp(
      String.raw`^(?<s>.+?) ${NEG}${ADV}(?:lives|live|is living|(?<move>moved|has moved|relocated)) (?:back )?(?:from (?<f>(?:\S+ ){0,2}?))?(?:in|to) (?<v>.+)$`,
      "i",
    ),
  ],
  ["employer", new RegExp(`^(?<s>.+?) ${NEG}${ADV}(?:works|work|is working) (?:at|for) (?<v>.+)$`, "i")],
  [
    "employer",
    new RegExp(`^(?<s>.+?) ${NEG}${ADV}(?:works|work|is working) as .+? (?:at|for) (?<v>.+)$`, "i"),
  ],
  [
    "employer",
    // "quit the user's job at Google last week": the employer is Google; "got laid off from Amazon".
    /^(?<s>.+?) (?:(?:just|recently|finally|officially) )*(?<neg>left|quit|has left|resigned from|stopped working at|stopped working for|(?:got |was |has been |have been |had been )?(?:laid off|let go|fired|sacked|made redundant) (?:from|by|at)) (?:(?:(?:the )?[\w-]+'s|his|her|their|the|a) (?:job|position|role|post) (?:at|with) )?(?<v>.+?)(?: (?:last|this|yesterday|today|on|in|after|because|to|for)\b.*)?$/i,
    "negation",
  ],
  // Retired: from the employer named, or from any ("I retired last year", "I'm retired").
  ["employer", gated(/\bretired\b/i, RETIRED), "negation"],
  // A new employer said as a start: "started at Alan", "joined Cloudflare as ...", "was hired by
  // Stripe", "got a job at Stripe" (an employer that joins is a name: "joined a gym" is none).
  [
    "employer",
    gated(
      /\b(?:start|began|begin)/i,
      /^(?<s>.+?) (?:has |have |just |recently |will |is |am )*(?:started|starts|starting|start|began|begins) (?:a (?:new )?job |work |working )?at (?<v>.+)$/i,
    ),
  ],
  [
    "employer",
    gated(
      /\b(?:job|position|role|offer)\b/i,
      /^(?<s>.+?) (?:has |just |recently )*(?:got|gets|landed|accepted|took|has|started) (?:a |an |the )?(?:new )?(?:job|position|role|offer) (?:at|with|from) (?<v>.+)$/i,
    ),
  ],
  [
    "employer",
    gated(
      /\b(?:hired|recruited|employed)\b/i,
      /^(?<s>.+?) (?:was |got |has been |just got |is )(?:hired|recruited|employed) (?:by|at) (?<v>.+)$/i,
    ),
  ],
  [
    "employer",
    gated(
      /\bjoin/i,
      /^(?<s>.+?) (?:has |have |just |recently |will |is |am )*(?:joined|joining|join) (?<v>[A-Z][A-Za-z0-9&.'-]*(?: [A-Z][A-Za-z0-9&.'-]*)*)(?: as .*| (?:last|this|in|on|yesterday|today)\b.*)?$/,
    ),
  ],
  // An introduction's description: "Alex is a backend developer at Globex (in Chicago)"; found
  // among stored facts by the concept terms it indexes ("work", "lives": src/providers/local/concepts.ts).
  ["employer", gated(/ is (?:now )?an? /, INTRODUCED_EMPLOYER)],
  ["residence", gated(/ is (?:now )?an? /, INTRODUCED_RESIDENCE)],
  ["job", new RegExp(`^(?<s>.+?) ${NEG}${ADV}(?:works|work) as (?<v>.+)$`, "i")],
  [
    "job",
    gated(
      /\b(?:join|start|hired|recruited)/i,
      /^(?<s>.+?) (?:has |have |just |recently |will |is |am |was |got )*(?:joined|joining|join|started at|starting at|start at|hired by|hired at|recruited by) [A-Z][A-Za-z0-9&.'-]*(?: [A-Z][A-Za-z0-9&.'-]*)* as (?:a |an )?(?<v>.+)$/,
    ),
  ],
  ["job", new RegExp(`^(?<s>.+?) ${NEG}${ADV}(?:works|work) (?:at|for) .+? as (?<v>.+)$`, "i")],
  ["job", gated(/\bretired\b/i, RETIRED), "negation"],
  // "The user's favorite book these days is ...": when, between the kind and its value.
  [
    "favourite",
    /^(?<s>.+?)'s (?:new )?favou?rite (?<k>[\w ]+?)(?: (?:these days|nowadays|now|right now|at the moment|lately|currently))? is (?:now |currently )?(?<v>.+)$/i,
  ],
  // "Blue used to be the user's favorite color but now it's green."
  [
    "favourite",
    gated(
      /\bused to be\b/i,
      /^.+? used to be (?<s>.+?)'s favou?rite (?<k>[\w ]+?),? but (?:now |these days )?(?:it's|it is) (?:now )?(?<v>.+)$/i,
    ),
  ],
  // "The user's new number is ...", "The user's email changed to ...".
  [
    "contact",
    /^(?<s>.+?)'s (?:new |current )?(?<k>email address|email|e-mail|phone number|phone|cell phone number|cell phone|cell number|cell|mobile number|mobile|number|home address|address) (?:is (?:now )?|(?:has )?changed to |is changing to )(?<v>.+)$/i,
  ],
  ["name", /^(?<s>.+?)'s name is (?<v>.+)$/i],
  ["age", /^(?<s>.+?) is (?:now )?(?<v>\d+) years old/i],
  // "... turned 53 today (10 March 2025)", "... turned 40 last week", "... last Sunday", "... two
  // days ago", "... in May": any time said after it.
  [
    "age",
    new RegExp(
      String.raw`^(?<s>.+?) (?:just )?turned (?<v>\d{1,3})(?: years old)?(?:,? (?:${TURNED_WHEN}))*$`,
      "i",
    ),
  ],
  ["preference", /^(?<s>.+?) (?:now |actually )?prefers (?<v>.+)$/i],
  // Eating again what a diet leaves out ends it ("started eating meat again": no longer vegetarian;
  // FOOD_ENDS). Before the statements of a diet: "..., so the user is pescatarian now" is this one's.
  [
    "diet",
    gated(
      /\beat/i,
      /^(?<s>.+?) (?:has |have |just |recently |finally |now )*(?:started|starts|began|is|am|went back to) (?:eating|to eat) (?<neg>)(?<v>meat|fish|seafood|chicken|beef|pork|dairy|eggs|cheese)\b/i,
    ),
    "negation",
  ],
  [
    "diet",
    /^(?<s>.+?) (?:is|are) (?<neg>no longer |not |not a |no longer a )?(?:now |still |actually )?(?:a |an )?(?<v>vegetarian|vegan|pescatarian|pescetarian|flexitarian|carnivore)\b/i,
  ],
  [
    "diet",
    /^(?<s>.+?) (?<neg>isn't|aren't) (?:a |an )?(?:now |still )?(?<v>vegetarian|vegan|pescatarian|pescetarian|flexitarian|carnivore)\b/i,
    "negation",
  ],
];

/** Words (stemmed by PostgreSQL's english configuration) that every statement of a slot holds. */
const SLOT_WORDS: Record<string, string> = {
  residence: "lives | live | living | moved | relocated",
  employer:
    "works | work | working | started | starting | start | job | position | role | offer | hired | recruited | employed | joined | joining | join",
  job: "works | work | joined | joining | join | started | starting | start | hired | recruited",
  favourite: "favourite | favorite",
  contact: "email | phone | address | number | mobile | cell",
  name: "name",
  age: "old | turned",
  preference: "prefers",
  diet: "vegetarian | vegan | pescatarian | pescetarian | flexitarian | carnivore",
};

/** A slot's value ends where the next claim about it starts ("Acme as a designer": the employer is Acme). */
const VALUE_END: Record<string, RegExp> = {
  // "Denver with two kids", "Denver near Wash Park": the city is Denver.
  // "Austin on Saturday", "Tulsa in January", "Austin now and the user will ...": the city is Austin.
  residence:
    / (?:with|near|close to|next to|since|for|because|but|where|when|while|until|after|before|and|(?:on|by) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|the \d)|in (?:january|february|march|april|may|june|july|august|september|october|november|december|\d{4}|the (?:spring|summer|fall|autumn|winter))|(?:last|this|next) (?:week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today)\b.*$/,
  employer: / (?:as|in|since|from|on|last|this|next|yesterday|today|tomorrow)\b.*$/,
  job: / (?:at|for|in|since|from) .*$/,
};

export interface SlotSearch {
  kind: string;
  /** A full-text query every statement of the kind matches. */
  words: string;
  /** Whether a text is a (positive) statement of the kind. */
  states: (text: string) => boolean;
}

/**
 * How to find the stored facts stating the same kinds of attribute as this one ("lives in", "works
 * at"...), none when it states none: for each kind, a full-text query that every such statement
 * matches (it narrows by the user's scoped text index) and the test of a statement of the kind
 * (its positive patterns: not "left Google", not "isn't vegan"), run here on the rows the query
 * finds. Candidates for the judge beside the nearest neighbours, which miss "lives in Paris"
 * against "moved to Berlin". The test ran in the database as one regular expression of all the
 * kind's patterns, a third of an embedded database's time per job once the patterns grew.
 */
export function slotSearches(text: string): SlotSearch[] {
  // An unsure move ("from Kyiv to Lviv") looks for the homes held too: the judge ends the one it leaves.
  const kinds = [
    ...new Set(slotsOf(text, { unsure: true }).map((s) => s.slot.slice(0, s.slot.indexOf(":")))),
  ];
  const searches: SlotSearch[] = kinds.map((kind) => ({
    kind,
    words: SLOT_WORDS[kind]!,
    states: (t: string) => slotsOf(t).some((s) => !s.denial && s.slot.startsWith(`${kind}:`)),
  }));
  // What an ending ended: the statements holding the thing's words (or, for a habit, the verb's).
  for (const ending of endingsOf(text)) {
    const words = ending.object.length ? ending.object : [...(ending.verbs ?? [])];
    const terms = words.map((w) => w.replace(/[^\p{L}\p{N}]+/gu, "")).filter(Boolean);
    if (terms.length)
      searches.push({
        kind: `ended:${terms.join(" ")}`,
        words: ending.object.length ? terms.join(" & ") : terms.join(" | "),
        states: (t: string) => endedBy(ending, t),
      });
  }
  return searches;
}

const FIRST_PERSON_START = /^(?:I|I'm|I've|I am|My)\b/;

/**
 * Whether `a` may change what `b` states: the same attribute of the same subject (the judge decides
 * the rest), not a value said beside another ("also works at a bakery on weekends" changes no
 * job, nor does a new job end that one; a negation still ends it: "quit the bakery").
 */
export function sameSlot(a: string, b: string): boolean {
  if (endingsOf(a).some((ending) => endedBy(ending, b))) return true;
  const ys = slotsOf(b);
  return slotsOf(a).some((x) =>
    ys.some((y) => x.slot === y.slot && x.subject === y.subject && (x.negated || (!x.adds && !y.adds))),
  );
}

/** Who a home is shared with, after "with": someone's ("the user's partner Daniel"), a number of them, a name. */
const COMPANIONS =
  /^(?:the user's|the user and others'|his|her|their|our|\p{Lu}\p{Ll}+'s|(?:two|three|four|five|six|seven|eight|nine|ten|\d+) |\p{Lu}\p{Ll}+\b)/u;
/** Where who a home is shared with ends: what else is said of the home ("near the park", "since 2019"). */
const COMPANIONS_END =
  /,.*$| (?:near|close to|next to|since|for|because|but|where|when|while|until|after|before|now|these days|on|in)\b.*$|\s*\([^)]*\)/g;

/**
 * Who a home was shared with, when a change of home supersedes it ("The user lives in Portland with
 * the user's partner Daniel and the user's two kids." -> "The user lives with the user's partner
 * Daniel and the user's two kids."): still true after the move, and kept as a fact of its own, with
 * the old fact's day. Null when the home was said with no one, or the new home says the same
 * people.
 */
export function companionsOf(old: string, by: string): string | null {
  const t = claimOf(old);
  if (t === null || !slotsOf(old).some((x) => x.slot === "residence:" && !x.negated)) return null;
  const m =
    /^(?<s>.+?) (?:(?:now|currently|recently|just|finally|also|still|actually|officially) )*(?:lives|live|is living|moved|has moved|relocated) .*? with (?<w>.+)$/.exec(
      t,
    );
  if (!m?.groups) return null;
  const who = m.groups.w!.replace(COMPANIONS_END, "").trim();
  if (!COMPANIONS.test(who) || contentWords(who).length === 0) return null;
  const theirs = new Set(contentWords(bareClaim(by)));
  if (contentWords(who).every((w) => theirs.has(w))) return null;
  const subject = m.groups.s!;
  const verb = /^(?:we|they)$| and /i.test(subject) ? "live" : "lives";
  const claim = `${subject} ${verb} with ${who}.`;
  const body = bareClaim(old);
  const lead = old.slice(0, old.indexOf(body));
  return lead ? `${lead}${leadLowered(claim)}` : sentenceCase(claim);
}

/**
 * For each of one job's facts, in message order, the earlier ones (indexes, latest first, at most
 * `limit`) that state the same attribute of the same subject, or what it says ended (sameSlot):
 * a change said within one conversation is judged as one said in a later one. Only facts that
 * `apart` allows (another turn's: one turn naming two employers names two, it changes none).
 * Each fact is read once, its statements indexed by attribute and subject.
 */
export function earlierStatements(
  texts: string[],
  limit: number,
  apart: (i: number, j: number) => boolean,
): number[][] {
  const byKey = new Map<string, number[]>();
  const key = (x: Statement) => `${x.slot}\u0000${x.subject}`;
  const lower = texts.map((t) => t.toLowerCase());
  return texts.map((text, i) => {
    const mine = slotsOf(text);
    const found = new Set<number>();
    for (const x of mine) for (const j of byKey.get(key(x)) ?? []) found.add(j);
    for (const ending of endingsOf(text)) {
      // Its words first (a substring test), as the full-text query does for stored facts.
      const verbs = [...(ending.verbs ?? [])];
      const mentions = (t: string) =>
        ending.object.length ? ending.object.every((w) => t.includes(w)) : verbs.some((w) => t.includes(w));
      for (let j = i - 1; j >= 0; j--) if (mentions(lower[j]!) && endedBy(ending, texts[j]!)) found.add(j);
    }
    for (const x of mine)
      if (!x.denial && !x.negated) {
        const list = byKey.get(key(x)) ?? [];
        if (!list.includes(i)) list.push(i);
        byKey.set(key(x), list);
      }
    return [...found]
      .filter((j) => apart(i, j))
      .sort((a, b) => b - a)
      .slice(0, limit);
  });
}

/**
 * A fact without its context, the leading "On 8 May 2023, " and the trailing "(answering: ...)":
 * the same claim restated another day or in reply to another question is the same claim.
 */
export const bareClaim = (text: string) =>
  text.replace(/^On \d{1,2} [A-Z][a-z]+ \d{4}, /, "").replace(/ \(answering: .*\)$/, "");

/** Words that lead a claim and change nothing of it ("Now the user works at Initech"). */
const LEAD_ADVERB =
  /^(?:now|currently|these days|nowadays|actually|also|so|well|anyway|today|recently)\b,?\s+/i;
/**
 * A recent time leading a claim, with the date it resolved to ("last month (March 2024) the user
 * and others moved to Austin"): when, not who. Not a year or a month ("In 2015 the user moved to
 * Berlin for two years"), which tells of the past more than of now.
 */
const LEAD_TIME =
  /^(?:(?:last|this|earlier this) (?:week|weekend|month|year|summer|winter|spring|fall|autumn|morning|afternoon|evening|night|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|yesterday|today|tonight|lately|(?:a|one|two|three|four|five|six|a few|a couple of|several|\d+) (?:days?|weeks?|months?) ago|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))(?: \([^)]*\))?,?\s+/i;
/** A claim without what leads it and changes nothing of it (LEAD_ADVERB, LEAD_TIME). */
function withoutLead(claim: string): string {
  let t = claim;
  for (let prev = ""; prev !== t; ) {
    prev = t;
    t = t.replace(LEAD_ADVERB, "").replace(LEAD_TIME, "");
  }
  return t;
}

/** The verbs that open a second claim of a sentence's subject ("... and works as ..."). */
const CLAIM_VERB = String.raw`(?:now |currently |also |still |no longer )?(?:lives|moved|works|work|is|was|has|left|quit|prefers|(?!(?:others|always|sometimes|perhaps|this|his|its|thanks|yes)\b)[a-z]+s)\b`;

/**
 * A claim's clauses, each with its subject: where the sentence joins a second claim of the same
 * subject ("... and the user works ...", "... and Priya works ...", "... and now works ..."),
 * "the user left Google", "the user now works at Stripe".
 */
function clausesOf(claim: string): string[] {
  const subject =
    /^(.+?) (?:no longer |now |currently |also |still |is |isn't |doesn't |does not )*(?:lives|live|moved|works|work|is|left|quit|prefers|has|likes|loves)\b/i.exec(
      claim,
    )?.[1];
  if (!subject) return [claim];
  // Joins after the subject only ("The user and others moved ..." is one claim).
  const rest = claim.slice(subject.length);
  const parts: string[] = [];
  let from = 0;
  for (const m of rest.matchAll(AND_JOIN)) {
    const end = m.index + m[0].length;
    if (!joinsClaim(rest.slice(end), subject)) continue;
    parts.push(rest.slice(from, m.index));
    from = end;
  }
  if (parts.length === 0) return [claim];
  parts.push(rest.slice(from));
  parts[0] = subject + parts[0];
  const own = (p: string) =>
    /^the user\b/i.test(p) || p.toLowerCase().startsWith(`${subject.toLowerCase()} `) || KIN_SUBJECT.test(p);
  return parts.map((p, i) => (i === 0 || own(p) ? p : `${subject} ${p}`));
}

/** ", and" or "and" between two claims (clausesOf): followed by joinsClaim. */
const AND_JOIN = /,? and /gi;
const CLAIM_VERB_START = new RegExp(`^${CLAIM_VERB}`, "i");

/**
 * Whether `text` (what follows an "and") opens a claim of `subject`: a claim verb, after "the
 * user", the subject or nothing. Tested piece by piece, not with one expression built around the
 * subject: compiling that expression for every fact was two thirds of the local extractor's time.
 */
function joinsClaim(text: string, subject: string): boolean {
  if (CLAIM_VERB_START.test(text)) return true;
  const lead = (prefix: string) =>
    text.slice(0, prefix.length).toLowerCase() === prefix.toLowerCase() &&
    CLAIM_VERB_START.test(text.slice(prefix.length));
  // Another subject of the user's ("..., and the user's son Theo is 3"): a claim of its own.
  const kin = KIN_SUBJECT.exec(text);
  return (
    lead("the user ") || lead(`${subject} `) || (!!kin && CLAIM_VERB_START.test(text.slice(kin[0].length)))
  );
}

/** A fact's claim (bareClaim) without its end mark, or null when it is several sentences. */
function oneSentence(text: string): string | null {
  const claim = bareClaim(text);
  return splitSentences(claim).length > 1 ? null : claim.replace(/[.!]+$/, "").trim();
}

/**
 * The attribute clauses of a sentence joining several claims, each a sentence of its own, when
 * at least one of them states an attribute; none otherwise.
 */
function attributeClauses(text: string): string[] {
  const claim = oneSentence(text);
  if (claim === null) return [];
  const clauses = clausesOf(claim);
  if (clauses.length < 2) return [];
  return clauses
    .map((c) => inWordsOfAge(`${c.charAt(0).toUpperCase()}${c.slice(1)}.`))
    .filter((c) => slotsOf(c).length > 0);
}

/** A relative or someone of a person's life, as a subject names them ("the user's daughter"). */
const KIN =
  "brother|sister|mother|mom|mum|father|dad|son|daughter|wife|husband|partner|friend|boyfriend|girlfriend|cousin|uncle|aunt|niece|nephew|grandmother|grandma|grandfather|grandpa|boss|manager|colleague|coworker|neighbou?r|roommate|flatmate|teacher|doctor|kid|child|baby|grandson|granddaughter|stepson|stepdaughter";
/** A subject naming someone of a person's, and the space after it ("the user's son Theo "). */
const KIN_SUBJECT = new RegExp(
  String.raw`^(?:[Tt]he user|\p{Lu}\p{Ll}+)'s (?:[\p{Ll}-]+ ){0,2}(?:${KIN})(?: \p{Lu}\p{Ll}+)? `,
  "u",
);
/**
 * Whose age a claim may state: the user, a name, or someone of theirs ("the user's daughter Lily");
 * not a thing's pronoun ("It's 5." answers what time it is).
 */
const AGED = String.raw`(?:(?:[Tt]he user|\p{Lu}\p{Ll}+)'s (?:[\p{Ll}-]+ ){0,2}(?:${KIN})(?: \p{Lu}\p{Ll}+)?|[Tt]he user|(?!(?:It|This|That|There|Here|What|Which|Who)\b)\p{Lu}\p{Ll}+(?: \p{Lu}\p{Ll}+)?)`;
/**
 * "The user is 34.", "the user's son Theo is 3": an age, each clause of the sentence that says one
 * (the first of several claims: "The user is 29 and the user works as a nurse", "Zoë is 9 and she
 * loves horses", "Dana is 34, from Chicago"; said now or as a correction: "is 30 now", "is 30, not 29").
 */
const AGE_IS = new RegExp(
  String.raw`(?<=^|,? and |^[\p{L}' ]{1,40}: )(${AGED})(?: is|'s) ((?:now )?\d{1,3})(?=(?: now)?(?:,? not \d{1,3})?[.!]?$|,? and (?:the user\b|\p{Lu}\p{Ll}+(?:'s| \p{Lu}\p{Ll}+)? \p{Ll}|(?:he|she|they) \p{Ll})|, (?:from|originally from|based in)\b)`,
  "gu",
);
/** "The user turned 30 on Monday", "Lily turned 7 today": an age turned; not "turned 180 degrees". */
const AGE_TURNED = new RegExp(
  String.raw`^((?:(?:[Tt]he user|\p{Lu}\p{Ll}+)'s (?:[\p{Ll}-]+ ){0,2}[\p{Ll}-]+(?: \p{Lu}\p{Ll}+)?|${AGED}) (?:just )?turned \d{1,3})(?=(?:,? (?:now|just now|recently|${TURNED_WHEN}))*(?:[.!]?$|,? (?:and|but|so) |; ))`,
  "u",
);

/**
 * A claim of an age in the words every statement of an age has ("is 34 years old", "turned 7 years
 * old"), so a later age supersedes it and "how old ...?" finds it.
 */
function inWordsOfAge(text: string): string {
  return text
    .replace(AGE_IS, (all, who: string, age: string) =>
      // A bare capitalised word that is a common one is a thing, not someone ("Versions: Node is 24
      // and Python is 3"), as a short statement of an age by name is read (english.ts).
      /^\p{Lu}\p{Ll}+$/u.test(who) && isCommonWord(who) ? all : `${who} is ${age} years old`,
    )
    .replace(AGE_TURNED, "$1 years old");
}

/**
 * A file's name for a session's gist: a known extension ("onChange.cancel" is a property, and
 * "fix/webhook-sig" a branch), no address ("@db.internal/shop" is what a URL left).
 */
const isFileName = (id: string) => !/[\s@]/.test(id) && FILE_EXTENSION.test(id);
const FILE_EXTENSION =
  /\.(?:[cm]?[jt]sx?|py|pyi|ipynb|rb|go|rs|java|kt|kts|swift|scala|c|cc|cpp|h|hpp|cs|php|lua|pl|r|dart|ex|exs|erl|hs|clj|sql|sh|bash|zsh|ps1|json|jsonc|ya?ml|toml|ini|cfg|conf|env|xml|html?|css|scss|sass|less|vue|svelte|astro|md|mdx|rst|txt|csv|tsv|lock|tf|tfvars|proto|graphql|gql|prisma|gradle|dockerfile|mk|cmake|patch|diff|log)$/i;
/** A stack frame: "at fn (file:1:2)", Python's `File "x.py", line 3`. */
const STACK_FRAME = /^(?:at\s|File\s+"[^"]+",\s+line\s+\d+)/;
/** A line a diff adds or removes ("+ raise X", "- return y"), not its file headers. */
const DIFF_LINE = /^[+-](?![+-]{2}\s)\s/;

/**
 * A short answer: no question, and a name (a capitalised word after the first, not "I") or a
 * number after its first character. Three tests, not one pattern: `^\S+.*?(?:...)` backtracked
 * over every split of the sentence (a 50,000-character one without a space took 1.6 s).
 */
const isShortAnswer = (s: string) =>
  /^\S/.test(s) &&
  !/^[^\n\r\u2028\u2029]*[?？؟]$/.test(s) &&
  /\s(?!I\b|I'[a-z]+\b)\p{Lu}\p{Ll}|\d/u.test(s.slice(1));

/** A sentence's subject that names one other person: "The user's best friend", "Priya's brother Tom". */
const NAMED_SUBJECT =
  /^((?:[Tt]he user's|\p{Lu}\p{Ll}+'s) (?:[\p{Ll}-]+ ){0,2}(?:brother|sister|mother|mom|mum|father|dad|son|daughter|wife|husband|partner|friend|boyfriend|girlfriend|cousin|uncle|aunt|niece|nephew|grandmother|grandma|grandfather|grandpa|boss|manager|colleague|coworker|neighbou?r|roommate|flatmate|teacher|doctor)(?: \p{Lu}\p{Ll}+)?) (?!and\b)[a-z]/u;
const PRONOUN_SUBJECT =
  /^(?:he|she|they|it|him|her|them|this|that|these|those|someone|somebody|everyone|everybody|one|who)$/;

/** A subject that names someone of a person's ("the user's daughter Lily", "Nora's friend Sam"): the name. */
const NAMED_KIN = /^(?:[Tt]he user|\p{Lu}\p{Ll}+)'s (?:[\p{Ll}-]+ ){1,3}(\p{Lu}\p{Ll}+(?: \p{Lu}\p{Ll}+)?)$/u;

/** A statement of an attribute (slotsOf). */
interface Statement {
  slot: string;
  subject: string;
  value: string;
  /** What the statement says is no longer so: its value, any value when empty ("retired"). */
  negated: boolean;
  /** A pattern of the denial only ("left Google", "isn't vegan"). */
  denial: boolean;
  /** Where a move says it came from ("moved from Paris to Berlin"): the residence it ends. */
  from?: string;
  /**
   * A value said beside the one held, not instead of it ("also works at a bakery on weekends",
   * "is vegan on weekdays"): it changes none (ADDED).
   */
  adds: boolean;
  /**
   * A move from a name WordNet does not know as a place to another it does not know ("moved from
   * Ottawa to Kyiv", as "from Vim to Emacs" reads): a move of home only when the place it leaves is
   * a home held (judgeLocally); never a home of its own. Only with slotsOf's `unsure`.
   */
  unsure?: boolean;
}

/** A contact detail's kind, one name for each ("number", "cell phone": phone). */
const contactKind = (k: string) => (/mail/.test(k) ? "email" : /address/.test(k) ? "address" : "phone");

/**
 * A correction after a value ("York, not Leeds", "30, not 29"): no part of it. A value that is
 * itself denied ("is not blue, it is still green") is none.
 */
const CORRECTION_TAIL = /,?\s+(?:not|rather than|instead of)\s.*$/i;

/**
 * Words that add a value to the one held rather than change it: "also", "too", "as well", a
 * second or side job, part of the time ("part-time", "on weekends", "on Tuesdays", "sometimes").
 * "I also work at a bakery on weekends" keeps the job at Acme; "I'm vegan on weekdays" keeps
 * "vegetarian". Said of the value's own clause (valueClause), not of another clause beside it
 * ("My favorite food is ramen now, I got tired of sushi too"), nor of a relative clause after it
 * ("Acme, which is closed on weekends").
 */
const ADDED =
  /\b(?:also|as well|in addition|besides|on the side|part[- ]time|second job|side (?:job|gig|hustle)|(?:on|at) (?:the )?weekends|on weekdays|on (?:mon|tues|wednes|thurs|fri|satur|sun)days|sometimes|occasionally)\b|,? too(?=[,.!?]|$)/i;
/** Words that say a value is a change, whatever else it adds ("I'm vegan now", "I also work at Google now"). */
const CHANGED = /\b(?:now|nowadays|these days|anymore|any more)\b/i;
/**
 * Where another clause starts: a comma or a conjunction followed, within a few words, by a
 * subject ("..., the user got tired of sushi too", "..., and on weekends the user goes hiking",
 * "..., which is closed on weekends"); not a phrase of the same clause (", too", ", part-time",
 * "and at a bakery on weekends").
 */
const NEXT_CLAUSE =
  /(?:,\s*(?:(?:and|but|so|because|though|although|while|whereas|since|then|or)\s+)?|\s(?:and|but|so|because|though|although|while|whereas)\s+)(?:[\p{L}'-]+\s+){0,3}?(?:the user|he|she|they|it|it's|we|you|there|which|who|where)\b/iu;

/**
 * The clause of a sentence that states the value found at `at`: from its subject (`from`) to
 * where the next clause starts (NEXT_CLAUSE).
 */
function valueClause(t: string, from: number, at: number): string {
  const next = NEXT_CLAUSE.exec(t.slice(at));
  return t.slice(from, next ? at + next.index : t.length);
}

const titleCase = (w: string) => `${w.charAt(0).toUpperCase()}${w.slice(1)}`;
const DETERMINER = /^(?:a|an|my|our|his|her|their|its|this|that|some|the user's)\b/i;

/** Lower-case words that place a name within a place ("downtown Chicago", "upstate New York"). */
const PLACE_MODIFIER =
  /^(?:downtown|uptown|midtown|suburban|rural|central|greater|upstate|downstate|inner|outer|coastal|north|south|east|west|northern|southern|eastern|western|northeast|northwest|southeast|southwest|northeastern|northwestern|southeastern|southwestern)$/;
/** Nouns of a place a name may be set beside ("the user's hometown, Tulsa"). */
const PLACE_NOUN =
  /^(?:hometown|town|city|village|state|country|county|province|region|island|suburb|neighbou?rhood|borough|district|area)$/;
/** Words that join a phrase to another rather than modify a name ("the suburbs of", "decaf in"). */
const JOINING = /^(?:of|in|on|at|to|for|from|by|with|near|and|or|but|outside|inside|into|onto)$/;

/**
 * Where a residence's value names a place, or null when it names none: at its start ("Denver",
 * "New York", "the Bay Area", "denver" written in lower case and known to WordNet as a place), past
 * lower-case modifiers of a name WordNet knows as a place or of a place's part ("downtown Chicago",
 * "the beautiful Tulsa"), after "in", "near", "outside", "of" ("a new house in Tacoma", "the suburbs
 * of Chicago"), or set beside a noun ("the user's hometown, Tulsa"). A home, a shift, a drink is no
 * place ("a small apartment near the park", "the night shift", "decaf in January": a month is a
 * time; "the new Google office": a name that is no place). `known`: a name at the start is a place
 * only when WordNet knows it as one (of a move from a name that is no place: "Vim to Emacs").
 */
function placeAt(said: string, known = false): number | null {
  const nameAt = (i: number): number | null => {
    const rest = said.slice(i);
    const cap = /^(?:the )?(\p{Lu}[\p{L}'.-]*)((?: \p{Lu}[\p{L}'.-]*){0,2})/u.exec(rest);
    if (cap) {
      if (isTimeName(cap[1]!)) return null;
      const names = `${cap[1]}${cap[2]}`.split(" ");
      const place = (n: number) => placeKinds(names.slice(0, n).join(" ")).length > 0;
      return !known || [3, 2, 1].some(place) ? i : null;
    }
    if (DETERMINER.test(rest)) return null;
    const modified = /^(?:the )?((?:[a-z][a-z'-]* ){1,2})(\p{Lu}[\p{L}'.-]*(?: \p{Lu}[\p{L}'.-]*)*)/u.exec(
      rest,
    );
    if (modified) {
      const modifiers = modified[1]!.trim().split(" ");
      const name = modified[2]!;
      const known = modifiers.some((w) => PLACE_MODIFIER.test(w)) || placeKinds(name).length > 0;
      if (known && !isTimeName(name) && !modifiers.some((w) => JOINING.test(w)))
        return i + modified[0].length - name.length;
    }
    const words = (/^(?:the )?([a-z][a-z'-]*(?: [a-z][a-z'-]*){0,2})/.exec(rest)?.[1] ?? "").split(" ");
    for (let n = words.length; n > 0; n--)
      if (words[0] && placeKinds(words.slice(0, n).map(titleCase).join(" ")).length) return i;
    return null;
  };
  const first = nameAt(0);
  if (first !== null) return first;
  // A name set beside a noun is a place when the noun is one or WordNet knows the name as one
  // ("the user's hometown, Tulsa"; not "a new team, Payments").
  const beside =
    /^(?:(?:a|an|the|my|our|his|her|their|the user's) )?(?:[a-z'-]+ ){0,2}([a-z'-]+), (\p{Lu}[\p{L}'.-]*(?: \p{Lu}[\p{L}'.-]*)*)/u.exec(
      said,
    );
  if (beside && !isTimeName(beside[2]!) && (PLACE_NOUN.test(beside[1]!) || placeKinds(beside[2]!).length))
    return beside[0].length - beside[2]!.length;
  for (const m of said.matchAll(/ (?:in|near|outside(?: of)?|close to|next to|of) /gi)) {
    const at = nameAt(m.index + m[0].length);
    if (at !== null) return at;
  }
  return null;
}

/** The attributes a one-claim fact states (none for a whole turn, or a sentence of several claims). */
function slotsOf(text: string, options: { unsure?: boolean } = {}): Statement[] {
  // A whole turn of several sentences is no attribute statement: its attribute sentences are
  // stored as facts of their own, and those are what a later change supersedes. So is a sentence
  // joining several claims (attributeClauses). A text written in the first person (a PATCH, an
  // import, an agent's add_memory: "My favourite colour is green") states the user's attribute as
  // an extracted fact does: read the same way (claimOf), a later change supersedes it (they stayed
  // active side by side).
  const t = claimOf(text);
  if (t === null || clausesOf(t).length > 1) return [];
  const out: Statement[] = [];
  for (const [slot, re, negation] of SLOTS) {
    const gate = SLOT_GATES.get(re);
    if (gate && !gate.test(t)) continue;
    const m = re.exec(t);
    if (!m?.groups) continue;
    const kind = (m.groups.k ?? "").toLowerCase().replace(/colour/g, "color");
    const name = `${slot}:${slot === "contact" ? contactKind(kind) : kind}`;
    if (out.some((o) => o.slot === name)) continue;
    let said = m.groups.v ?? "";
    if (/^not\s/i.test(said)) continue;
    // "The user also changed jobs last month, the user works at Google now": the subject is the
    // value's clause's, the clause before it another claim of that subject.
    let subjectText = m.groups.s!;
    const comma = subjectText.lastIndexOf(", ");
    const own = subjectText.slice(comma + 2);
    const from = comma > 0 && subjectText.toLowerCase().startsWith(`${own.toLowerCase()} `) ? comma + 2 : 0;
    subjectText = subjectText.slice(from);
    // A value said beside the one held (ADDED, in the value's clause) adds one, unless that
    // clause says it is a change ("now"); a move is never said beside another home.
    const clause = valueClause(t, from, t.indexOf(said, m.groups.s!.length));
    const adds = !m.groups.move && ADDED.test(clause) && !CHANGED.test(clause);
    // Where a person lives is a place: "lives in a small apartment" states none, "moved to a new
    // house in Tacoma" states Tacoma.
    let unsure = false;
    if (slot === "residence") {
      // A move from a name that is no place is a move of home only to one WordNet knows ("moved
      // from Vim to Emacs", "from Fly to Render" move none; "from Leeds to York" does).
      const known = m.groups.f !== undefined && placeAt(m.groups.f.trim(), true) === null;
      let at = placeAt(said.replace(CORRECTION_TAIL, ""), known);
      if (at === null && known && options.unsure) {
        at = placeAt(said.replace(CORRECTION_TAIL, ""));
        unsure = at !== null;
      }
      if (at === null) continue;
      // "Tulsa, in January": the place, not the time said after it ("Austin, Texas" is one).
      said = said.slice(at).replace(/,\s+(?=\p{Ll}).*$/u, "");
    }
    // A resolved date ("last month (October 2026)") and a time word say when, not what.
    const when =
      / (now|currently|anymore|any more|these days|at the moment|recently|yesterday|(last|this) (week|month|year))$/;
    let value = normaliseText(said.replace(CORRECTION_TAIL, "").replace(/\s*\([^)]*\)/g, "")).replace(
      when,
      "",
    );
    value = value.replace(VALUE_END[slot] ?? /$^/, "").replace(when, "");
    // "The user and others moved ...": the user moved. Someone named is who the name says:
    // "the user's daughter Lily" is "Lily".
    const named = NAMED_KIN.exec(subjectText)?.[1];
    const subject = normaliseText(named ?? subjectText).replace(/ and .*$/, "");
    // A pronoun names no one alone ("He now works at NASA." after "My brother ..."): as its own
    // fact it would be anyone's, and one "he" would supersede another's.
    if (PRONOUN_SUBJECT.test(subject)) continue;
    const origin = m.groups.f ? normaliseText(m.groups.f) : "";
    out.push({
      slot: name,
      subject,
      value,
      negated: m.groups.neg !== undefined,
      denial: negation === "negation",
      adds,
      ...(origin ? { from: origin } : {}),
      ...(unsure ? { unsure } : {}),
    });
  }
  return out;
}

/**
 * What a claim says its subject stopped doing, liking, using or having: "stopped playing tennis",
 * "quit smoking", "gave up coffee", "no longer plays chess", "doesn't like sushi anymore",
 * "switched from Vim to VS Code", "sold the user's Civic". `verbs`: the forms of the verb a
 * statement of it would use ("plays"), none when only the thing is named; `object`: the thing's
 * content words, lower case. Facts outside the fixed attributes (SLOTS) that such a claim ends are
 * superseded by it (endedBy).
 */
interface Ending {
  subject: string;
  verbs: Set<string> | null;
  object: string[];
  /**
   * The words of a scope the claim limits its change to, which the ended statement must say too:
   * "On Sundays the user drinks tea instead of coffee" ends "drinks coffee on Sundays", not "drinks
   * coffee every morning"; "uses Vim instead of VS Code for Go" not "uses VS Code for Python".
   */
  scope?: string[];
}

/** Verbs of liking: "doesn't like sushi anymore" ends "loves sushi" too. */
const LIKING = ["like", "love", "enjoy", "adore"];
const ENDING_LEAD = String.raw`(?:(?:has|had|just|recently|finally|eventually|already) )*`;
/**
 * The verbs of using a thing, what "moved from Vim to Emacs" ends (not "loves Paris"), and being
 * on it, a verb with its particle: "moved from the Pro plan to the Enterprise plan" ends "is on
 * the Pro plan", "changed from the night shift to the day shift" "are on the night shift".
 */
const USING = ["use", "run", "prefer"];
const BEING_ON = ["is on", "are on"];
/**
 * Whom a change from one thing to another is made for, when the assistant makes it: the user, or
 * their account ("The assistant has upgraded your account from the Pro plan to the Team plan" ends
 * the user's "is on the Pro plan", as "We upgraded from the Pro plan to ..." does).
 */
const ON_USER =
  "(?: (?<on>you|the user|(?:your|the user's|their) (?:account|subscription|membership|plan|team|workspace)))?";
const ENDINGS: Array<[RegExp, "gerund" | "verb" | "object" | "using" | "instead"]> = [
  [
    new RegExp(
      String.raw`^(?<s>.+?) ${ENDING_LEAD}(?:stopped|quit|quitted|gave up|given up) (?<v>[a-z]+ing)\b(?<o>.*)$`,
      "i",
    ),
    "gerund",
  ],
  [
    // "Quit the gym", "gave up coffee"; not "stopped the car", which stopped it moving.
    new RegExp(String.raw`^(?<s>.+?) ${ENDING_LEAD}(?:quit|gave up|given up) (?<o>.+)$`, "i"),
    "object",
  ],
  [/^(?<s>.+?) (?:no longer|doesn't|does not|don't|do not) (?<v>[a-z]+) (?<o>.+)$/i, "verb"],
  [
    new RegExp(
      String.raw`^(?<s>.+?) ${ENDING_LEAD}(?:switched|migrated|converted|upgraded|downgraded)(?: over| back)?${ON_USER} from (?<o>.+?) to .+$`,
      "i",
    ),
    "object",
  ],
  // "Moved from Vim to Emacs": a move from a city is a residence's (slotsOf), this one a tool's.
  [
    new RegExp(
      String.raw`^(?<s>.+?) ${ENDING_LEAD}(?:moved|went|changed)(?: over| back)?${ON_USER} from (?<o>.+?) to .+$`,
      "i",
    ),
    "using",
  ],
  // "Ditched Vim for Neovim", "ditched Vim, the user is all in on Neovim", "replaced Vim with Helix".
  [
    new RegExp(
      String.raw`^(?<s>.+?) ${ENDING_LEAD}(?:ditched|dumped) (?<o>.+?)(?: (?:for|in favou?r of) .*|,.*| and .*)?$`,
      "i",
    ),
    "object",
  ],
  [new RegExp(String.raw`^(?<s>.+?) ${ENDING_LEAD}replaced (?<o>.+?) with .+$`, "i"), "object"],
  [
    new RegExp(
      String.raw`^(?<s>.+?) ${ENDING_LEAD}(?:sold|got rid of|gave away) (?<o>.+?)(?:,? and .*)?$`,
      "i",
    ),
    "object",
  ],
  // "(Change of plan:) we are going to Rome instead of Paris", "drinks tea rather than coffee": the
  // same verb and words before the new thing, with the old one, are what ended ("are going to
  // Paris in May"). The subject is a person as a fact names one, so the verb is the word after it.
  [
    /^(?<s>(?:the user|\p{Lu}[\p{L}'-]*(?: \p{Lu}[\p{L}'-]*)?)(?:'s (?:[\p{Ll}-]+ ){0,2}?[\p{Ll}-]+)?(?: and others)?) (?:(?:now|also|still|really|actually|currently) )*(?<v>[a-z]+) (?<p>.+?),? (?:instead of|rather than) (?<o>.+)$/iu,
    "instead",
  ],
];
/** The forms of "be" a statement in the present may use: "is going to Paris", "are going to Paris". */
const BE_FORMS = new Set(["is", "are", "am"]);
/** What may follow the thing without being part of it ("tennis last month", "sushi anymore"). */
const ENDING_TAIL =
  /\s+(?:anymore|any more|these days|now|at all|for good|last \w+|this \w+|yesterday|today|recently|in \d{4}|a while ago|\([^)]*\)|because .*|since .*|after .*)$/i;
/** What took the thing's place, said after it: ", only tea", ", just tea now", ", tea instead", "; ...". */
const REPLACED_BY =
  /(?:,\s*(?:only|just|but|now|instead)\b|,[^,]*\binstead\b|\s*[;:]|\s+(?:but|instead of|rather than)\s).*$/i;
const OWNER = /^(?:the user's|his|her|their|its|the|a|an|my|\p{Lu}\p{Ll}+'s)\s+/u;

/**
 * The present forms of a verb given as a base ("play"), a gerund ("playing") or a third-person form
 * ("plays"): the third person's ("plays") and the plural's ("the user and others play").
 */
function presentForms(word: string, gerund: boolean): Set<string> {
  const w = word.toLowerCase();
  const bases = new Set<string>();
  if (gerund) {
    const g = w.slice(0, -3);
    bases.add(g).add(`${g}e`);
    if (/([b-df-hj-np-tv-z])\1$/.test(g)) bases.add(g.slice(0, -1));
  } else bases.add(w);
  if (bases.has("like") || [...bases].some((b) => LIKING.includes(b))) for (const l of LIKING) bases.add(l);
  const out = new Set<string>();
  for (const b of bases) {
    out.add(`${b}s`).add(`${b}es`);
    if (/[^aeiou]y$/.test(b)) out.add(`${b.slice(0, -1)}ies`);
  }
  // "no longer plays": the verb was given in its present form already.
  if (!gerund && /s$/.test(w)) out.add(w);
  // The plural's forms too ("the user and others play"): the bases, and those of a form in -s.
  for (const b of bases) out.add(b);
  if (!gerund && /[^s]s$/.test(w)) {
    out.add(w.slice(0, -1)); // "plays", "uses"
    if (/ies$/.test(w))
      out.add(`${w.slice(0, -3)}y`); // "studies"
    else if (/es$/.test(w)) out.add(w.slice(0, -2)); // "watches"
  }
  return out;
}

/** A claim as endings and their statements are read: no date, no lead adverb, in the third person. */
function claimOf(text: string): string | null {
  const claim = oneSentence(text);
  return claim === null ? null : readClaim(claim);
}
/** A sentence's claim (claimOf) without its lead adverb, in the third person. */
function readClaim(sentence: string): string {
  const t = withoutLead(sentence);
  return FIRST_PERSON_START.test(t) ? toThirdPerson(t, "the user") : t;
}
/**
 * Each sentence's claim of a fact (claimOf), for endings: a fact of several sentences (a whole
 * turn, "In this repo we use jest for tests. Always run `npm test` before committing.") states,
 * and ends, what each of its sentences does.
 */
function claimsOf(text: string): string[] {
  return splitSentences(bareClaim(text))
    .map((s) => readClaim(s.replace(/[.!]+$/, "").trim()))
    .filter(Boolean);
}

/** Words every ending holds, tested before the patterns (whose lazy subject tries every split). */
const ENDING_WORD =
  /\b(?:stopped|quit|quitted|gave up|given up|no longer|doesn't|does not|don't|do not|(?:switched|migrated|converted|upgraded|downgraded|moved|went|changed)(?: over| back)?(?: (?:you|the user|(?:your|the user's|their) [a-z]+))? from|ditched|dumped|replaced|sold|got rid of|gave away|instead of|rather than)\b/i;

/** What a fact's sentences say ended (endingOfClaim), each sentence's. */
function endingsOf(text: string): Ending[] {
  if (!ENDING_WORD.test(text)) return [];
  return claimsOf(text).flatMap((t) => (ENDING_WORD.test(t) ? (endingOfClaim(t) ?? []) : []));
}

/**
 * A phrase of where or when before a claim's subject ("in this repo", "at work,", "on weekends"):
 * no part of who says it, so "In this repo I use jest" is the user's as "I use jest" is.
 */
const LEAD_PHRASE =
  /^(?:[Ii]n|[Aa]t|[Oo]n|[Ff]or|[Ww]ithin|[Aa]cross|[Ii]nside|[Oo]utside|[Dd]uring|[Aa]round) (?:[\p{L}\p{N}'-]+ ){0,3}?[\p{L}\p{N}'-]+,? (?=the user\b|\p{Lu})/u;
/** A clause of when before a claim's subject ("When it rains, the user takes the bus ..."). */
const LEAD_CLAUSE = /^(?:[Ww]hen(?:ever)?|[Ii]f|[Ww]hile|[Oo]nce|[Uu]nless) [^,]+?,? (?=the user\b|\p{Lu})/u;
/** A qualifier after the thing given up ("instead of VS Code for Go", "rather than coffee in the evening"). */
const TRAILING_SCOPE = /\s+(?:for|in|on|at|during|when|whenever|while|if|with)\s+.+$/i;
/** A negation in a claim's predicate ("are not going to Rome instead of Paris"): it ends nothing. */
const NEGATED = /\b(?:not|never|no longer|neither|nor)\b|n't\b/i;
const SCOPE_STOP = new Set(
  "a an the this that these those my our your his her their its user user's others and of for in on at during when whenever if while once unless it with".split(
    " ",
  ),
);
/** A scope's words (Ending.scope), stemmed. */
function scopeWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [])
    .filter((w) => !SCOPE_STOP.has(w))
    .map(stem);
}
/** "The user and others" (what "we" becomes): the user among them, the same speaker. */
const AND_OTHERS = / and others$/;

/** What one sentence's claim (claimOf) says ended. */
function endingOfClaim(claim: string): Ending | null {
  const t = claim.replace(LEAD_PHRASE, "");
  // A choice of one thing over another holds only where it is said to ("On Sundays", "When it
  // rains"): its scope, which the ended statement must say too.
  const lead = LEAD_PHRASE.exec(claim)?.[0] ?? LEAD_CLAUSE.exec(claim)?.[0] ?? "";
  for (const [re, kind] of ENDINGS) {
    const m = re.exec(kind === "instead" ? claim.slice(lead.length) : t);
    if (!m?.groups) continue;
    // The thing ends where another clause starts, or what took its place ("no longer drinks
    // coffee, only tea now", "..., the user drinks tea instead").
    const said = m.groups.o ?? "";
    const next = NEXT_CLAUSE.exec(said);
    let rest = ` ${said.slice(0, next?.index).replace(REPLACED_BY, "")}`.trimEnd();
    for (let prev = ""; prev !== rest; ) {
      prev = rest;
      rest = rest.replace(ENDING_TAIL, "");
    }
    rest = rest.trim().replace(OWNER, "");
    let scope: string[] | undefined;
    if (kind === "instead") {
      // A negated choice ("are not going to Rome instead of Paris") ends nothing.
      if (NEGATED.test(`${m.groups.v} ${m.groups.p}`)) continue;
      const qualifier = TRAILING_SCOPE.exec(rest);
      if (qualifier) rest = rest.slice(0, qualifier.index);
      scope = [...scopeWords(lead), ...scopeWords(qualifier?.[0] ?? "")];
    }
    let object = contentWords(rest).slice(0, 4);
    if (kind === "instead") {
      // The words before the new thing ("going to" of "going to Rome"), as many words taken off
      // its end as the old thing has ("Rome" for "Paris", "the red one" for "the blue one").
      const verb = m.groups.v!.toLowerCase();
      // A verb in the present: what ends is what holds now ("went to Rome instead" ends nothing).
      if (!BE_FORMS.has(verb) && (isPastForm(verb) || ![...presentForms(verb, false)].some(isVerb))) continue;
      const before = m.groups.p!.split(" ");
      object = [...contentWords(before.slice(0, -rest.split(" ").length).join(" ")), ...object];
    }
    const verbs =
      kind === "object"
        ? null
        : kind === "using"
          ? new Set([...USING.flatMap((v) => [...presentForms(v, false)]), ...BEING_ON])
          : kind === "instead" && BE_FORMS.has(m.groups.v!.toLowerCase())
            ? BE_FORMS
            : presentForms(m.groups.v!, kind === "gerund");
    // "stopped playing" alone ends the habit only ("plays every week"), see endedBy.
    if ((kind === "object" || kind === "using") && object.length === 0) continue;
    let subject = normaliseText(m.groups.s!).replace(AND_OTHERS, "");
    if (m.groups.on) {
      // A change the assistant made for the user is the user's; anyone else's names no one's own.
      if (subject === "the assistant") subject = "the user";
      else if (subject !== "the user") continue;
    }
    if (PRONOUN_SUBJECT.test(subject)) return null;
    return scope?.length ? { subject, verbs, object, scope } : { subject, verbs, object };
  }
  return null;
}

/** What may follow a habit's verb in a statement of it with no object ("plays every week"). */
const HABIT_TAIL =
  /^(?:$|every\b|each\b|daily\b|weekly\b|regularly\b|often\b|a lot\b|twice\b|once\b|on \w+s\b|in the (?:morning|evening)s?\b|(?:a|an|one|two|three|\d+) \w+ (?:a|per|every) (?:day|week|month|year)\b)/i;

/** Words after a plural subject that state no present ("the user and others will", "... were"). */
const NOT_PRESENT = /^(?:will|would|can|could|shall|should|may|might|must|were|was|had|did|used)$/;

/**
 * Whether `text` states, in the present, what `ending` ended: the same subject, a present verb
 * (of the ended one's forms when it names one), and the thing's every content word. "The user
 * plays tennis every weekend" is ended by "stopped playing tennis"; "watched a tennis match" (a
 * past event), "the user's sister plays tennis" and "doesn't play tennis" are not. "We" ("the user
 * and others") is the user, on either side ("We use jest" is ended by "I moved from jest to
 * vitest", "drives a Honda Civic" by "We sold the Civic"), and a phrase of where or when before
 * the subject is no matter ("In this repo the user uses jest").
 */
function endedBy(ending: Ending, text: string): boolean {
  return claimsOf(text).some((claim) => statesEnded(ending, claim));
}

/** Whether one sentence's claim states what `ending` ended (endedBy); an ending itself states none. */
function statesEnded(ending: Ending, claim: string): boolean {
  if (ENDING_WORD.test(claim) && endingOfClaim(claim)) return false;
  const t = claim.replace(LEAD_PHRASE, "");
  const subject = ending.subject;
  if (normaliseText(t.slice(0, subject.length)) !== subject || t[subject.length] !== " ") return false;
  const after = t.slice(subject.length + 1);
  const plural = /^and others /i.exec(after);
  const m =
    /^(?:(?:now|still|really|also|currently|usually|often|always|sometimes) )*(?<v>[a-z]+)\b(?<rest>.*)$/i.exec(
      plural ? after.slice(plural[0].length) : after,
    );
  const verb = m?.groups?.v?.toLowerCase();
  if (!verb || /n't$/.test(verb)) return false;
  const present = plural
    ? !NOT_PRESENT.test(verb) && (BE_FORMS.has(verb) || isVerb(verb)) && !isPastForm(verb)
    : verb !== "was" && /s$/.test(verb);
  if (!present) return false;
  const rest = m!.groups!.rest!.trim();
  const particle = `${verb} ${/^\S*/.exec(rest)![0].toLowerCase()}`;
  if (ending.verbs && !ending.verbs.has(verb) && !ending.verbs.has(particle)) return false;
  if (ending.object.length === 0) return ending.verbs !== null && HABIT_TAIL.test(rest);
  const words = new Set(contentWords(rest));
  if (!ending.object.every((w) => words.has(w))) return false;
  if (ending.scope) {
    const said = new Set(scopeWords(claim));
    if (!ending.scope.every((w) => said.has(w))) return false;
  }
  // A claim of several things ("a dog named Max and a cat named Luna", "coffee and tea") is ended
  // only by an ending of each: "We don't have Max anymore" leaves Luna said.
  const ended = new Set(ending.object);
  return listedItems(rest).every((item) => item.length === 0 || item.some((w) => ended.has(w)));
}

/** A part of a list that starts a clause of its own ("and it's great", "and they love it"). */
const PRONOUN_START = /^(?:it|it's|its|they|they're|he|he's|she|she's|which|who|that|this|there|then)$/;

/**
 * The things a claim's object lists, each as its content words: "a dog named Max and a cat named
 * Luna" is two, "coffee, tea and juice every morning" three. Only the object itself is read, up to
 * a preposition or a time ("tennis every weekend with friends and neighbours" is one), and what
 * follows "and" as a verb ("and run it in CI") is a clause of the same thing, no item of its own.
 */
function listedItems(rest: string): string[][] {
  const head = rest.split(
    /\s(?:with|for|at|in|on|every|each|to|from|near|since|because|when|while|after|before|by|about|during|until|except|so|but)\s/i,
  )[0]!;
  const items: string[] = [];
  // Commas list things only in a list that ends with "and" ("coffee, tea and juice"); elsewhere a
  // comma starts a clause ("a Honda Civic, it's great in the snow").
  const parts = / and /.test(head) ? head.split(/\s*,\s*(?:and\s+)?|\s+and\s+/) : [head];
  for (const part of parts) {
    const first = /^[\p{L}'-]+/u.exec(part)?.[0]?.toLowerCase() ?? "";
    const clause = !first || isMostlyVerb(first) || isPastForm(first) || PRONOUN_START.test(first);
    if (items.length && clause) items[items.length - 1] += ` ${part}`;
    else items.push(part);
  }
  return items.map((item) => contentWords(item));
}

/**
 * A claim's specifics: its numbers, and its names (capitalised words after the first), lower case,
 * a resolved date in brackets left out ("last month (October 2026)" said another month is the
 * same claim). Two facts naming different cats, "Tom0x27" and "Tom2x12", are close neighbours
 * under a hashed embedding (one word of eight differs) but never the same claim.
 */
function specifics(text: string): Set<string> {
  const words =
    bareClaim(text)
      .replace(/\([^)]*\)/g, " ")
      .match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
  return new Set(
    words.filter((w, i) => /\d/.test(w) || (i > 0 && /^\p{Lu}/u.test(w))).map((w) => w.toLowerCase()),
  );
}
/**
 * Whether a claim says again what another says: the same specifics, and nearly the same words (a
 * close neighbour) or the same words once words of no change ("still", "as always", "again") and a
 * request to remember it ("The user asked the assistant to remember they're allergic to ...") are
 * left out ("The user still does yoga every Tuesday evening", "Yoga every Tuesday evening").
 */
function restates(text: string, other: string, similarity: number): boolean {
  if (!sameSet(specifics(text), specifics(other))) return false;
  if (similarity >= 0.93) return true;
  const [a, b] = [restatedWords(text), restatedWords(other)];
  return a !== null && b !== null && sameSet(a, b);
}
/** Stop words that change what a claim says: a negation, a modal, a past. */
const SENSE_WORDS = new Set(
  "not no nor never will would can could shall should may might must was were had did".split(" "),
);
/**
 * A present claim's words (restates), stemmed; null for a past one ("went to the gym again" is
 * another visit, not the same claim).
 */
function restatedWords(text: string): Set<string> | null {
  const claim = bareClaim(text)
    .replace(/\([^)]*\)/g, " ")
    .toLowerCase()
    .replace(/^the user asked the assistant to remember (?:that )?/, "")
    .replace(/\b(?:still|again|currently|nowadays|these days|as (?:always|usual|ever|before))\b/g, " ");
  const words = claim.match(/[\p{L}\p{N}][\p{L}\p{N}'-]*/gu) ?? [];
  if (words.some((w) => isPastForm(w))) return null;
  const out = new Set(
    contentWords(claim)
      .filter((w) => !PEOPLE_WORDS.has(w) && !/^(?:they|their|they're|them)$/.test(w))
      .map(stem),
  );
  for (const w of words) if (SENSE_WORDS.has(w)) out.add(w);
  return out;
}
const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

/** The same value, or one a word-wise start of the other ("acme" and "acme corp"). */
const sameValue = (a: string, b: string) => a === b || a.startsWith(`${b} `) || b.startsWith(`${a} `);

/**
 * Words that say nothing changed, not what: "still", "now", "again", "nothing changed" (a
 * restatement with them adds no detail). Words of when ("last month", "on Saturday") are detail: a
 * restatement that lacks the day a move was made on ("lives in Austin now" after "moved to Austin on
 * Saturday") does not replace it.
 */
const NO_DETAIL =
  /\b(?:still|now|currently|nowadays|these days|at the moment|right now|anymore|any more|again|yet|already|actually|really|definitely|recently|lately|finally|just|also|nothing(?:'s| has)? changed|as (?:always|usual|before|ever))\b/g;
const PEOPLE_WORDS = new Set(["user", "assistant", "others"]);

/**
 * A claim's words of detail: its content words, a possessive's "'s" off, without the people
 * words, the words of when (NO_DETAIL) and the verbs that state the attribute (SLOT_WORDS: "lives"
 * and "moved" say the same of a city).
 */
function detailWords(text: string, slots: Statement[]): Set<string> {
  const verbs = new Set(slots.flatMap((x) => SLOT_WORDS[x.slot.slice(0, x.slot.indexOf(":"))]!.split(" | ")));
  const claim = bareClaim(text)
    .replace(/\([^)]*\)/g, " ")
    .toLowerCase()
    .replace(NO_DETAIL, " ")
    .replace(/colour/g, "color");
  return new Set(
    contentWords(claim)
      .map((w) => w.replace(/'s$/, ""))
      .filter((w) => !PEOPLE_WORDS.has(w) && !verbs.has(w)),
  );
}

/**
 * The claims of one clause of a fact, each with its subject ("the user lives in Denver and works at
 * Acme" is "the user lives in Denver" and "the user works at Acme"): the parts a change of one of
 * them leaves the others of (src/ingest/reconcile.ts).
 */
export const claimsOfClause = (clause: string): string[] => clausesOf(clause);

/** A phrase about the thing said before it ("it's great in the snow", "which is closed on weekends"). */
const ABOUT_IT = /^(?:it|it's|its|which|that|they|they're)\b/i;

/**
 * The words of a claim that a change ended (`by`: what superseded it) says nothing of: the words of
 * detail (detailWords) of its phrases (cut at commas and at conjunctions) that name nothing the
 * change names, neither what `by` says (its words, what it says ended) nor the values of the
 * attributes the claim states (their first word). "the user is vegetarian, allergic to peanuts",
 * by "the user is not vegetarian anymore", has "allergic" and "peanuts": still true, and said
 * nowhere else once the claim goes; "works as a nurse at Mercy Hospital in Ottawa", by "works as a product manager at
 * Stripe", has none (where the old job was is of the old job), nor has a phrase of where or when
 * before the subject ("in this repo"), nor one about the ended thing ("it's great in the snow").
 */
export function wordsBeyondChange(claim: string, by: readonly string[]): string[] {
  const slots = slotsOf(claim);
  return phrasesBeyondChange(claim, by).flatMap((phrase) => [...detailWords(phrase, slots)]);
}

/**
 * The phrases of a claim that hold its words beyond a change (wordsBeyondChange), as said: "allergic
 * to peanuts" of "the user is vegetarian, allergic to peanuts", "the user's back hurts" of "the user
 * goes to the gym on Mondays because the user's back hurts".
 */
export function phrasesBeyondChange(claim: string, by: readonly string[]): string[] {
  const slots = slotsOf(claim);
  // Whose attributes the change is of: the subjects it states one of, else the user (an ending).
  const subjects = new Set(by.flatMap((b) => slotsOf(b).map((x) => x.subject)));
  if (subjects.size === 0) subjects.add("the user");
  const told = new Set([
    ...by.flatMap((b) => [...detailWords(b, slotsOf(b))]),
    // The value's first word: a value read past its phrase ("Google where the user met ...") is no
    // longer it. Of the changed subject's attributes only ("the user's husband prefers tea" is still so).
    ...slots
      .filter((x) => subjects.has(x.subject))
      // A number's first part when it has no word ("555 0142").
      .map((x) => contentWords(x.value.toLowerCase())[0] ?? x.value.split(" ")[0]!),
    ...by.flatMap((b) => endingsOf(b).flatMap((e) => [...e.object, ...(e.verbs ?? [])])),
  ]);
  return bareClaim(claim)
    .replace(LEAD_PHRASE, "")
    .split(/[,;:]|\s(?:and|but|because|so|while|whereas|where|who|though|although)\s/i)
    .map((phrase) => phrase.trim())
    .filter((phrase) => !ABOUT_IT.test(phrase))
    .filter((phrase) => {
      const words = [...detailWords(phrase, slots)];
      // A value's word as the value says it ("555-0142" is the value "555 0142").
      const isTold = (w: string) =>
        told.has(w) ||
        normaliseText(w)
          .split(" ")
          .some((x) => told.has(x));
      return words.length > 0 && !words.some(isTold);
    });
}

/** Whether a negation ends a value: the same value, any (an empty value), a diet a food ends. */
const negates = (negation: Statement, value: string) =>
  !negation.value || sameValue(value, negation.value) || !!FOOD_ENDS[negation.value]?.includes(value);

/** A verdict superseding every one of `ended` (distinct ids, the first as `id`, the rest `also`). */
function superseding(ended: Array<{ id: string }>): JudgeVerdict {
  const [id, ...also] = [...new Set(ended.map((x) => x.id))];
  return also.length ? { verdict: "supersedes", id: id!, also } : { verdict: "supersedes", id: id! };
}

export function judgeLocally(c: JudgeCase): JudgeVerdict {
  const norm = normaliseText(bareClaim(c.text));
  for (const cand of c.candidates) {
    if (normaliseText(bareClaim(cand.text)) === norm) return { verdict: "duplicate", id: cand.id };
  }
  // Each attribute the fact states, against the candidates' statements of it: a new value
  // supersedes (a negation: the value it ends; a move from a place: that place); when every
  // attribute holds its value already the fact restates one, a duplicate unless it adds to it.
  // A value said beside another ("also", "on weekends": Statement.adds) changes none, and no new
  // value ends one said so; a negation ends either.
  const slots = slotsOf(c.text, { unsure: true });
  const stated = slots.length ? c.candidates.map((cand) => ({ id: cand.id, slots: slotsOf(cand.text) })) : [];
  const held: string[] = [];
  for (const mine of slots) {
    const same = stated.flatMap(({ id, slots: theirs }) =>
      theirs
        .filter((t) => t.slot === mine.slot && t.subject === mine.subject && !t.negated)
        .map((t) => ({ id, value: t.value, adds: t.adds })),
    );
    if (mine.negated) {
      const ended = same.filter((x) => negates(mine, x.value));
      if (ended.length) return superseding(ended);
      continue;
    }
    // A move between names WordNet does not know as places ends the home it leaves, if held
    // ("lives in Ottawa", then "moved from Ottawa to Kyiv"), and nothing else ("from Vim to Emacs").
    if (mine.unsure) {
      const left = same.filter((x) => sameValue(x.value, mine.from ?? ""));
      if (left.length) return superseding(left);
      continue;
    }
    const holding = same.find((x) => sameValue(x.value, mine.value));
    if (holding) {
      held.push(holding.id);
      continue;
    }
    if (mine.adds) continue;
    // A move from a place ends no residence but that one's. Every statement of the value changed
    // ends, not the first only: two held ("lives in Denver now", "we live in Denver with the
    // kids") would leave one active beside the new value.
    const changed = same.filter(mine.from ? (x) => sameValue(x.value, mine.from!) : (x) => !x.adds);
    if (changed.length) return superseding(changed);
  }
  if (slots.length && held.length === slots.length) {
    // A restatement that adds detail ("lives in Denver with two kids" after "lives in Denver")
    // replaces the one it restates, so lists and searches of facts see the detail; one that says
    // less, or the same, is a duplicate; each saying something the other does not, both stay.
    const id = held[0]!;
    const old = c.candidates.find((x) => x.id === id)!;
    if (held.some((h) => h !== id)) return { verdict: "duplicate", id };
    const mine = detailWords(c.text, slots);
    const theirs = detailWords(old.text, slots);
    const adds = [...mine].some((w) => !theirs.has(w));
    if (!adds) return { verdict: "duplicate", id };
    return [...theirs].every((w) => mine.has(w)) ? { verdict: "supersedes", id } : { verdict: "new" };
  }
  // Something the user stopped doing, liking or having ends the statements of it.
  // Every statement of it, as every statement of a value changed (a whole turn and the sentence
  // said in it).
  const endings = endingsOf(c.text);
  const ended = endings.length
    ? c.candidates.filter((cand) => endings.some((ending) => endedBy(ending, cand.text)))
    : [];
  if (ended.length) return superseding(ended);
  const best = c.candidates.find((x) => restates(c.text, x.text, x.similarity));
  return best ? { verdict: "duplicate", id: best.id } : { verdict: "new" };
}
