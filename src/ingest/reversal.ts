/**
 * A lesson that reverses an earlier one ("Never use yarn here, use pnpm", later "Use yarn from now
 * on, not pnpm"): the later supersedes the earlier (src/ingest/reconcile.ts), so recall serves the
 * rule the user holds now, not both. Read from the lessons' own words, whoever extracted them (the
 * local rules or a model): each trigger entity the lesson chooses (see FOR) or chooses against
 * (AGAINST), in the clause that names it.
 */

/**
 * The words right before an entity that choose against it ("never use yarn", "not pnpm", "instead
 * of yarn", "over pnpm") or for it ("use pnpm", "prefer yarn", "switch to bun", "run tests with
 * vitest"). Only a choice of the entity itself counts: "don't run vitest in watch mode" is against
 * a way of running it, not against vitest, and reads as neither.
 */
const AGAINST =
  /\b(?:never(?: use)?|don't use|do not use|dont use|avoid(?: using)?|not|no longer use|no more|stop using|instead of|rather than|over|without)\s+$/i;
const FOR = /\b(?:use|using|prefer|switch(?:ed)?(?: back)? to|go with|stick (?:to|with)|with)\s+$/i;
/** Clause ends: punctuation, and the words that open a contrast ("..., not pnpm", "pnpm over yarn"). */
const CLAUSES = /(?:[,;!?]|\.(?=\s|$))\s*|\s+(?=(?:not|instead of|rather than|over|but)\s)/i;

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** For (1) or against (-1) each entity the lesson takes a side on, by lower-cased entity. */
export function stances(text: string, entities: readonly string[]): Map<string, 1 | -1> {
  const clauses = text.replace(/\u2019/g, "'").split(CLAUSES);
  const out = new Map<string, 1 | -1>();
  for (const entity of entities) {
    const named = new RegExp(`(?<![\\w./-])${literal(entity)}(?![\\w/-])`, "i");
    for (const clause of clauses) {
      const at = clause.search(named);
      if (at < 0) continue;
      const before = clause.slice(0, at);
      if (AGAINST.test(before)) out.set(entity.toLowerCase(), -1);
      else if (FOR.test(before)) out.set(entity.toLowerCase(), 1);
      break;
    }
  }
  return out;
}

/**
 * Whether `newer` reverses `older`: of the entities both take a side on, at least one is taken
 * the other way, and none the same way ("use pnpm, never yarn" does not reverse "use pnpm, never
 * npm": they agree on pnpm).
 */
export function reverses(
  newer: { text: string; trigger_entities?: readonly string[] | null },
  older: { text: string; trigger_entities?: readonly string[] | null },
): boolean {
  const a = stances(newer.text, newer.trigger_entities ?? []);
  const b = stances(older.text, older.trigger_entities ?? []);
  let opposite = false;
  for (const [entity, side] of a) {
    const was = b.get(entity);
    if (was === undefined) continue;
    if (was === side) return false;
    opposite = true;
  }
  return opposite;
}
