/**
 * A lesson that reverses an earlier one ("Never use yarn here, use pnpm", later "Use yarn from now
 * on, not pnpm"): the later supersedes the earlier (src/ingest/reconcile.ts), so recall serves the
 * rule the user holds now, not both. Read from the lessons' own words, whoever extracted them (the
 * local rules or a model): each trigger entity the lesson chooses (see FOR) or chooses against
 * (AGAINST), in the clause that names it.
 */

import { escapeRe } from "../dates/strptime.js";

/**
 * The words right before an entity that choose against it ("never use yarn", "not pnpm", "instead
 * of yarn", "over pnpm") or for it ("use pnpm", "prefer yarn", "switch to bun", "run tests with
 * vitest"). Only a choice of the entity itself counts: "don't run vitest in watch mode" is against
 * a way of running it, not against vitest, and reads as neither.
 */
const AGAINST =
  /\b(?:never|don't|do not|dont|not|avoid|no longer|stop)(?:\s+(?:use|using|to use))?\s+$|\b(?:no more|instead of|rather than|over|without)\s+$/i;
const FOR =
  /\b(?:use|using|prefer|switch(?:ed)?(?: back)? to|go(?:ing)? back to|go with|stick (?:to|with)|with)\s+$/i;
/** A choice under a negation is one against: "never commit with --no-verify", "don't run tests with jest". */
const NEGATED = /\b(?:never|don't|do not|dont|not|avoid|stop)\b/i;
/**
 * Words that say no more than the choice itself ("here", "from now on", "in this repo"): beyond
 * them, words one lesson has and the other lacks scope it ("for unit tests", "in the frontend/
 * package"), and two lessons each scoped their own way do not contradict each other.
 */
const GENERIC = new Set(
  "use using used prefer always never not don't do dont avoid instead rather over without no more longer stop switch switched back to stick go with here now from on anymore again this that these the a an in for of and but please actually okay ok sure repo repository project codebase workspace package packages one".split(
    " ",
  ),
);
/** Clause ends: punctuation, and the words that open a contrast ("..., not pnpm", "pnpm over yarn"). */
const CLAUSES = /(?:[,;!?]|\.(?=\s|$))\s*|\s+(?=(?:not|instead of|rather than|over|but)\s)/i;

/** An entity named as a word of a lesson's text ("npm", not the "npm" of "pnpm" or "npm/cli"). */
const naming = (entity: string) => new RegExp(`(?<![\\w./-])${escapeRe(entity)}(?![\\w/-])`, "i");

/** For (1) or against (-1) each entity the lesson takes a side on, by lower-cased entity. */
export function stances(text: string, entities: readonly string[]): Map<string, 1 | -1> {
  const clauses = text.replace(/\u2019/g, "'").split(CLAUSES);
  const out = new Map<string, 1 | -1>();
  for (const entity of entities) {
    const named = naming(entity);
    for (const clause of clauses) {
      const at = clause.search(named);
      if (at < 0) continue;
      const before = clause.slice(0, at);
      if (AGAINST.test(before)) out.set(entity.toLowerCase(), -1);
      else if (FOR.test(before)) out.set(entity.toLowerCase(), NEGATED.test(before) ? -1 : 1);
      break;
    }
  }
  return out;
}

/**
 * Whether `newer` reverses `older`: of the entities both take a side on, at least one is taken
 * the other way, and none the same way ("use pnpm, never yarn" does not reverse "use pnpm, never
 * npm": they agree on pnpm); and not both scoped their own way (see GENERIC: "use vitest for unit
 * tests" and "for the e2e suite, don't use vitest" both hold).
 */
export function reverses(
  newer: { text: string; trigger_entities?: readonly string[] | null },
  older: { text: string; trigger_entities?: readonly string[] | null },
): boolean {
  // Most pairs share no entity: no side to compare, and no clause worth reading.
  const theirs = new Set((older.trigger_entities ?? []).map((e) => e.toLowerCase()));
  if (!(newer.trigger_entities ?? []).some((e) => theirs.has(e.toLowerCase()))) return false;
  const a = stances(newer.text, newer.trigger_entities ?? []);
  const b = stances(older.text, older.trigger_entities ?? []);
  const own = (l: typeof newer, other: typeof newer) => {
    const mine = context(l);
    const theirs = new Set(context(other));
    return mine.some((w) => !theirs.has(w));
  };
  if (own(newer, older) && own(older, newer)) return false;
  let opposite = false;
  for (const [entity, side] of a) {
    const was = b.get(entity);
    if (was === undefined) continue;
    if (was === side) return false;
    opposite = true;
  }
  return opposite;
}

/**
 * Whether `newer` says `older`'s rule again in other words ("Please don't use npm here, use pnpm."
 * after "Don't use npm in this repo, use pnpm."), or part of it ("Go back to yarn." after "Go back
 * to yarn, not pnpm."): entities among older's, each taken the same side, and no words beyond
 * them that either one alone has (a scope of its own: "for unit tests"). Such a lesson is the old
 * one seen again, not a second one recalled beside it.
 */
export function restates(
  newer: { text: string; trigger_entities?: readonly string[] | null },
  older: { text: string; trigger_entities?: readonly string[] | null },
): boolean {
  const lower = (l: typeof newer) => new Set((l.trigger_entities ?? []).map((e) => e.toLowerCase()));
  const [mine, theirs] = [lower(newer), lower(older)];
  if (mine.size === 0 || [...mine].some((e) => !theirs.has(e))) return false;
  const a = stances(newer.text, newer.trigger_entities ?? []);
  const b = stances(older.text, older.trigger_entities ?? []);
  if (a.size === 0 || [...mine].some((e) => a.get(e) !== b.get(e))) return false;
  const words = (l: typeof newer) => new Set(context(l));
  const [x, y] = [words(newer), words(older)];
  return [...x].every((w) => y.has(w)) && [...y].every((w) => x.has(w));
}

/** A lesson's words beyond its entities and GENERIC ones, lower-cased. */
function context(l: { text: string; trigger_entities?: readonly string[] | null }): string[] {
  const entities = new Set((l.trigger_entities ?? []).map((e) => e.toLowerCase()));
  return (
    l.text
      .toLowerCase()
      .replace(/\u2019/g, "'")
      .match(/[\p{L}\p{N}'_./-]+/gu) ?? []
  )
    .map((w) => w.replace(/^[-'./]+|[-'./]+$/g, ""))
    .filter((w) => w && !entities.has(w) && !GENERIC.has(w));
}

/**
 * Whether a fact states the lesson's rule ("The user asked the assistant never to use yarn here,
 * use pnpm." for "Never use yarn here, use pnpm."): it takes the same side on every entity the
 * lesson takes one on.
 */
export function statesRule(
  fact: { text: string },
  lesson: { text: string; trigger_entities?: readonly string[] | null },
): boolean {
  const rule = stances(lesson.text, lesson.trigger_entities ?? []);
  const said = stances(fact.text, lesson.trigger_entities ?? []);
  return rule.size > 0 && [...rule].every(([entity, side]) => said.get(entity) === side);
}

/**
 * What a reversal leaves unsaid of the rule it reverses: "Go back to yarn." after "Don't use yarn
 * in this repo, use pnpm instead." chooses yarn, which the old rule chose against, and says
 * nothing of pnpm, which it chose; taken back to yarn, pnpm is what is now chosen against. The
 * entities `older` chose that `newer` neither names nor has among its own, when `newer` chooses
 * one that `older` chose against; none otherwise.
 */
export function otherHalf(
  newer: { text: string; trigger_entities?: readonly string[] | null },
  older: { text: string; trigger_entities?: readonly string[] | null },
): string[] {
  const a = stances(newer.text, newer.trigger_entities ?? []);
  const b = stances(older.text, older.trigger_entities ?? []);
  if (![...a].some(([entity, side]) => side === 1 && b.get(entity) === -1)) return [];
  const mine = new Set((newer.trigger_entities ?? []).map((e) => e.toLowerCase()));
  const text = newer.text.toLowerCase();
  return (older.trigger_entities ?? []).filter((e) => {
    const lower = e.toLowerCase();
    return b.get(lower) === 1 && !mine.has(lower) && !naming(lower).test(text);
  });
}
