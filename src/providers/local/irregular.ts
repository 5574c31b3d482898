/**
 * The base form of common irregular English verbs from their past tense and past participle
 * ("bought" -> "buy", "went"/"gone" -> "go"). PostgreSQL's English stemmer strips regular
 * endings only, so "what did she buy?" never reached "she bought": facts index the base form
 * beside the word written (concept terms, src/providers/local/concepts.ts). Forms that are as
 * often another word ("rose", "left", "ground", "lay", "fell", "wound", "bore", "dove") are left
 * out, and so are the auxiliaries (was, had, did), which search ignores anyway. Irregular noun
 * plurals are below (NOUNS), without those that are as often a verb ("lives", "leaves").
 */
const TABLE = `arise arose arisen|awake awoke awoken|bear born|beat beaten|become became|begin began begun
bend bent|bet|bind bound|bite bit bitten|bleed bled|blow blew blown|break broke broken|breed bred
bring brought|build built|burn burnt|buy bought|catch caught|choose chose chosen|cling clung
come came|cost|creep crept|cut|deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk
drive drove driven|eat ate eaten|feed fed|feel felt|fight fought|find found|flee fled|fly flew flown
forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen
get got gotten|give gave given|go went gone|grind|grow grew grown|hang hung|hear heard|hide hid hidden
hit|hold held|hurt|keep kept|kneel knelt|know knew known|lead led|lean leant|learn learnt|lend lent
let|light lit|lose lost|make made|mean meant|meet met|pay paid|prove proven|put|quit|read|ride rode ridden
ring rang rung|rise risen|run ran|say said|see saw seen|seek sought|sell sold|send sent|set
sew sewn|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|shut|sing sang sung
sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|speed sped|spend spent|spin spun
split|spread|spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung|stink stank
strike struck|strive strove striven|swear swore sworn|sweep swept|swim swam swum|swing swung
take took taken|teach taught|tear tore torn|tell told|think thought|throw threw thrown|understand understood
wake woke woken|wear wore worn|weave wove woven|weep wept|win won|wind|withdraw withdrew withdrawn
write wrote written`;

const BASE = new Map<string, string>();
for (const entry of TABLE.split(/[|\n]/)) {
  const [base, ...forms] = entry.trim().split(/\s+/);
  for (const f of forms) if (base && f !== base) BASE.set(f, base);
}

/**
 * Irregular noun plurals, both ways: the stemmer keeps "children" and "child" apart, so "how many
 * children?" missed "her child" and "what do the kids' children like?" the other way round.
 */
const NOUNS = `child children|person people|man men|woman women|foot feet|tooth teeth|mouse mice
goose geese|wife wives|knife knives|wolf wolves|shelf shelves
grandchild grandchildren`;
for (const entry of NOUNS.split(/[|\n]/)) {
  const [one, many] = entry.trim().split(/\s+/);
  if (one && many) {
    BASE.set(many, one);
    BASE.set(one, many);
  }
}

/**
 * The other form of an irregular word written in lower case: a verb's base form from its past
 * tense or participle, a noun's singular from its plural and the plural from the singular; or null.
 */
export function irregularBase(word: string): string | null {
  return BASE.get(word) ?? null;
}
