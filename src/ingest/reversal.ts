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
 * "Don't run eslint (anymore)": against the tool itself when nothing but GENERIC words follow it in
 * its clause; "don't run vitest in watch mode" is against a way of running it, and reads as neither.
 */
const NOT_RUN =
  /\b(?:never|don't|do not|dont|not|avoid|no longer|stop)\s+(?:run|running|to run|call|calling)\s+$/i;
/** Words that say a choice has ended: "don't run eslint anymore", "no longer use jest". */
const ENDED = /\b(?:anymore|any more|no longer|stop(?:ped)?|from now on)\b/i;
/** A number or version as a command's argument: 18, v22, 3.12. */
const VERSION = /^v?\d+(?:\.\d+)*$/i;
/** A program's name as the first word of a command line: npm, pnpm, docker (not a path or a file). */
const PROGRAM = /^[a-z][\w-]*$/i;
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
      const after = clause.slice(at).replace(named, "");
      if (AGAINST.test(before)) out.set(entity.toLowerCase(), -1);
      else if (NOT_RUN.test(before) && words(after).length === 0) out.set(entity.toLowerCase(), -1);
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
  if (changesValue(newer, older) || endsToolOf(newer, older)) return true;
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
  return words(l.text).filter((w) => !entities.has(w));
}

/** A text's words beyond GENERIC ones, lower-cased. */
function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/\u2019/g, "'")
      .match(/[\p{L}\p{N}'_./-]+/gu) ?? []
  )
    .map((w) => w.replace(/^[-'./]+|[-'./]+$/g, ""))
    .filter((w) => w && !GENERIC.has(w));
}

/** The command lines a lesson prescribes: its code spans' words, those not under a negation. */
function commandLines(text: string): string[][] {
  const out: string[][] = [];
  for (const clause of text.replace(/\u2019/g, "'").split(/[;!?]|\.(?=\s|$)|,\s+(?=not\s)/)) {
    for (const m of clause.matchAll(/`([^`\n]+)`/g)) {
      if (NEGATED.test(clause.slice(0, m.index))) continue;
      out.push(m[1]!.trim().split(/\s+/));
    }
  }
  return out;
}

/**
 * Whether `newer` prescribes a command line of `older` with one value changed, and is otherwise
 * the same rule: "Always run `pnpm test` before committing." after "Always run `npm test` before
 * committing." (another program for the same subcommand), "Always run `nvm use 22`, not 18." after
 * "Always use Node 18: run `nvm use 18` first." (another version). Only a program's name or a
 * number changed counts: "run `npm run lint`" and "run `npm test`" are two rules, and so are
 * "run `nvm use 22` for the api" and "run `nvm use 18` for the legacy app" (each scoped its own
 * way, by the words beyond the command lines and numbers).
 */
function changesValue(
  newer: { text: string; trigger_entities?: readonly string[] | null },
  older: { text: string; trigger_entities?: readonly string[] | null },
): boolean {
  const mine = commandLines(newer.text);
  const theirs = commandLines(older.text);
  const key = (line: string[]) => line.join(" ").toLowerCase();
  const held = new Set(mine.map(key));
  const changed = theirs.some(
    (old) =>
      !held.has(key(old)) &&
      mine.some((line) => {
        if (line.length !== old.length || line.length < 2) return false;
        const at = line.map((w, k) => w.toLowerCase() !== old[k]!.toLowerCase());
        const k = at.indexOf(true);
        if (k < 0 || at.lastIndexOf(true) !== k) return false;
        return k === 0
          ? PROGRAM.test(line[0]!) && PROGRAM.test(old[0]!)
          : VERSION.test(line[k]!) && VERSION.test(old[k]!);
      }),
  );
  if (!changed) return false;
  // Beyond the command lines, the entities and the numbers, not each scoped its own way.
  const entities = new Set(
    [...(newer.trigger_entities ?? []), ...(older.trigger_entities ?? [])].map((e) => e.toLowerCase()),
  );
  const prose = (text: string) =>
    words(text.replace(/`[^`\n]*`/g, " ")).filter((w) => !VERSION.test(w) && !entities.has(w));
  const [a, b] = [new Set(prose(newer.text)), new Set(prose(older.text))];
  return ![...a].some((w) => !b.has(w)) || ![...b].some((w) => !a.has(w));
}

/**
 * Whether `newer` ends the use of a tool `older` relies on: "Don't run eslint anymore, run `pnpm
 * biome check --write` before pushing." after "Always run `npm run lint` before pushing, ESLint
 * catches a lot.": an entity chosen against with words of a change ("anymore", "no longer",
 * "stop"), in a sentence that scopes it no further ("For the e2e suite, don't use vitest
 * anymore" leaves "Use vitest for unit tests"), named in `older` by a clause not against it.
 */
function endsToolOf(
  newer: { text: string; trigger_entities?: readonly string[] | null },
  older: { text: string },
): boolean {
  const text = newer.text.replace(/\u2019/g, "'");
  for (const [entity, side] of stances(text, newer.trigger_entities ?? [])) {
    if (side !== -1 || !naming(entity).test(older.text)) continue;
    const sentence = splitAt(text, entity);
    if (!sentence || !ENDED.test(sentence)) continue;
    if (words(sentence).some((w) => w !== entity && !/^(?:run|running|call|calling)$/.test(w))) continue;
    if (stances(older.text, [entity]).get(entity) === -1) continue;
    return true;
  }
  return false;
}

/** The words of `text` from its sentence's start to the end of the clause that names `entity`. */
function splitAt(text: string, entity: string): string | null {
  for (const sentence of text.split(/(?<=[.!?;])\s+/)) {
    const at = sentence.search(naming(entity));
    if (at < 0) continue;
    const end = sentence.slice(at).search(CLAUSES);
    return end < 0 ? sentence : sentence.slice(0, at + end);
  }
  return null;
}

/**
 * Whether a fact states the lesson's rule ("The user asked the assistant never to use yarn here,
 * use pnpm." for "Never use yarn here, use pnpm."): it takes the same side on every entity the
 * lesson takes one on; or, for a rule that takes none, it holds every command line the lesson
 * prescribes ("... to always run `npm test` before committing." for "Always run `npm test`
 * before committing.").
 */
export function statesRule(
  fact: { text: string },
  lesson: { text: string; trigger_entities?: readonly string[] | null },
): boolean {
  const rule = stances(lesson.text, lesson.trigger_entities ?? []);
  const said = stances(fact.text, lesson.trigger_entities ?? []);
  if (rule.size > 0) return [...rule].every(([entity, side]) => said.get(entity) === side);
  const lines = commandLines(lesson.text);
  return (
    lines.length > 0 &&
    lines.every((line) => commandLines(fact.text).some((l) => l.join(" ") === line.join(" ")))
  );
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

/**
 * What a procedure is for, read from the line that introduces its steps ("To release the webapp:"
 * -> "to release the webapp"), lower-cased; null when that line names no goal ("Procedure:",
 * "Steps:") or there is none. A procedure with the goal of one in force replaces it.
 */
export function procedureGoal(text: string): string | null {
  const first = text.split("\n", 1)[0]!.trim();
  if (!first.endsWith(":") || !text.includes("\n")) return null;
  const goal = first.slice(0, -1).trim().toLowerCase().replace(/\s+/g, " ");
  const named = words(goal).filter(
    (w) => !/^(?:steps?|procedure|checklist|process|runbook|here|are|is|the|these|follow)$/.test(w),
  );
  return named.length ? goal : null;
}
