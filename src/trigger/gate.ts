import { z } from "zod";
import type { Ctx } from "../context.js";
import type { MemoryRow } from "../db/memory-row.js";
import { COMMON_WORDS } from "../identifiers/common-words.js";
import { baseName, RUNNERS } from "../identifiers/identifiers.js";
import { clipModelText } from "../ingest/redact.js";
import { STOPWORDS } from "../providers/local/english.js";
import { requestModelCall } from "../providers/openai.js";
import { describeModelError, generateStructured } from "../providers/structured.js";

export interface Verdict {
  keep: boolean;
  because: string;
  confidence: number;
}

export interface GateItem {
  row: MemoryRow;
  matchedOn: string[];
}

/**
 * A directive without a `resolved` outcome is served hedged, as unverified (spec 4.1 `outcome`;
 * failed ones are never served): trigger's block, search's compose block and the gate's confidence.
 */
export const unverified = (row: MemoryRow) => row.outcome !== "resolved";

/** Below this lexical relevance a directive is dropped (when a task is given). */
const LEXICAL_THRESHOLD = 0.2;

const round2 = (x: number) => Math.round(x * 100) / 100;

/** Words of a go-ahead ("go ahead", "sounds good, continue"): they name no task. */
const ASSENT = new Set(
  "ahead continue proceed sure thanks yeah yep yup alright fine good great sounds right perfect cool nice carry going keep".split(
    " ",
  ),
);

/**
 * Lowercase content words with a crude suffix strip, so "migrations" meets "migrate": each stem
 * with the first word that gave it (what `because` shows: "database", not "databas"). Search's
 * compose block keeps a long fact's sentences that share one with the query.
 */
export function contentTerms(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (w.length < 3 || COMMON_WORDS.has(w) || ASSENT.has(w)) continue;
    const s = stem(w);
    if (!out.has(s)) out.set(s, w);
  }
  return out;
}

const stem = (w: string) => w.replace(/(ations?|ing|ed|es|s|e)$/, "") || w;

/**
 * Whether a directive (text, steps, trigger entities) and a text share a content word: one of at
 * least three letters that is no English function word nor one of the vaguest words ("use",
 * "new", "run": COMMON_WORDS). Search leads with a directive found by its text only then: "Always
 * use pnpm" matched "Port 3000 already in use" on "use" alone.
 */
export function sharesContentWord(row: MemoryRow, text: string): boolean {
  const have = contentTerms(directiveText(row));
  return [...contentTerms(text).keys()].some((w) => have.has(w));
}

/** Whether a text names an identifier as a whole word: "npm" is not named by "pnpm", nor "git" by "github". */
function names(text: string, id: string): boolean {
  const wordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
  for (let at = text.indexOf(id); at >= 0; at = text.indexOf(id, at + 1))
    if (!wordChar(text[at - 1]) && !wordChar(text[at + id.length])) return true;
  return false;
}

function directiveText(row: MemoryRow): string {
  const steps = Array.isArray(row.details?.steps) ? (row.details.steps as unknown[]).join(" ") : "";
  return `${row.text} ${steps} ${row.trigger_entities.join(" ")}`;
}

/** Words a rule may put between a command and what it runs ("npm run lint", "pnpm exec tsc"). */
const VERB_OF_COMMAND = new Set(["run", "exec", "x", "dlx"]);
/**
 * Words that may follow a command's name in prose without naming a use of it, beside English
 * function words (STOPWORDS: "yarn here", "yarn, not pnpm"): "yarn instead", "git commands".
 */
const PROSE_AFTER_COMMAND = new Set(
  "without instead first command commands anymore anywhere ever never always".split(" "),
);

/** A word as a call or a rule writes it for comparison: lower case, no `./` before or `/` after. */
const bare = (w: string) =>
  w
    .toLowerCase()
    .replace(/^\.\//, "")
    .replace(/[/.,:;!?]+$/, "");

/** Words after which a clause starts with its subject: "..., and yarn breaks", "because pip installs". */
const CLAUSE_OPENERS = new Set(
  "and but or so because since as while though although if unless when whenever once that which then".split(
    " ",
  ),
);

interface Word {
  text: string;
  code: boolean;
  opensClause: boolean;
  endsClause: boolean;
}

/**
 * An English verb of which a command is the subject, not a use of the command: a third-person
 * form ("yarn breaks the lockfile", "pip installs into the system Python"), where the command
 * opens its clause in prose. In a code span the word after it is what it runs whatever its form
 * (`docker logs`), and so it is after a verb ("check docker logs"); "status" and "ls" are no
 * third-person forms.
 */
const isVerbOf = (w: Word, next: string) =>
  !w.code && w.opensClause && next.length >= 4 && /s$/.test(next) && !/(?:ss|us|is)$/.test(next);

/**
 * A rule's words in lower case, each with whether it is inside a code span, opens a clause (first
 * of the text or after , ; : . ! ? or a conjunction) or ends one (punctuation right after it).
 */
function wordsOf(text: string): Word[] {
  const out: Word[] = [];
  text
    .toLowerCase()
    .split("`")
    .forEach((part, k) => {
      const code = k % 2 === 1;
      let opens = k === 0;
      for (const raw of part.split(/[\s"()[\]{}\u201c\u201d]+/)) {
        const token = raw.replace(/^['\u2018\u2019]+|['\u2018\u2019]+$/g, "");
        const ends = /[,;:.!?]$/.test(token);
        const word = token.replace(/[,;:.!?]+$/, "");
        if (word) out.push({ text: word, code, opensClause: opens, endsClause: ends });
        else if (ends && out.length) out[out.length - 1]!.endsClause = true;
        opens = ends || CLAUSE_OPENERS.has(word);
      }
    });
  return out;
}

/** Words that set what a rule asks against an alternative: "instead of --force", "never plain vitest". */
const CONTRAST = /^(?:instead|not|never|rather|plain|avoid)$|n't$/;

/** Words that open the goal a rule is for: "To publish tags, ...", "... for a release", "When releasing, ...". */
const GOAL_OPENERS = new Set(["to", "for", "when", "whenever", "if"]);

/**
 * The stems of the words of a rule's goals: prose after "to", "for", "when" or "if", up to the end
 * of its clause or the next command line ("To publish tags, always run `git push --tags`": publish,
 * tag).
 */
function goalStems(words: Word[]): Set<string> {
  const out = new Set<string>();
  words.forEach((w, i) => {
    if (w.code || w.endsClause || !GOAL_OPENERS.has(w.text)) return;
    for (let j = i + 1; j < words.length && !words[j]!.code && !/^-/.test(words[j]!.text); j++) {
      out.add(stem(bare(words[j]!.text)));
      if (words[j]!.endsClause) break;
    }
  });
  return out;
}

/**
 * Whether a flag is what the rule is for: its goal names the flag's word ("To publish tags, always
 * run `git push --tags`"). Such a rule is about the flagged use, and a call of that use without the
 * flag does not pursue its goal. A flag no goal names is prescribed ("Always run `npx vitest run
 * --coverage` in CI"): a call without it breaks the rule. So is a flag the rule sets against
 * another form (namedUses: "When force pushing, always use `git push --force-with-lease` instead of
 * `--force`"), whatever its goal: the rule is about the calls that take the other form.
 */
const isGoalFlag = (flag: string, goal: Set<string>) =>
  flag
    .replace(/^-+/, "")
    .split(/[-_=]/)
    .some((w) => w.length >= 3 && !STOPWORDS.has(w) && goal.has(stem(w)));

/**
 * The uses of `command` a rule's text names: the word after the command (past its flags, and past
 * "run" or "exec" and the flags after it), as in "never run rm -rf build/", "git pull --rebase",
 * "npm run lint" (build, pull, lint); "run" itself when nothing follows it but flags
 * (`vitest run --coverage`: a flag the rule prescribes is no use of its own, so a call that lacks
 * it is still the use the rule is about). None when it names the command alone ("don't use yarn
 * here", "Git: always rebase") or as the subject of a verb ("yarn breaks the workspace lockfile").
 * Each use comes with the flags its goal names (isGoalFlag): `git push --tags` "to publish tags"
 * is the use `push` with `--tags`.
 */
function namedUses(text: string, command: string): Map<string, string[]> {
  const words = wordsOf(text);
  // A rule that names an alternative ("instead of", "not", "never plain", "rather than") prescribes
  // its flags in place of another form, and the calls of that form are the ones it is about.
  const contrasts = words.some((w) => !w.code && CONTRAST.test(w.text));
  const goal = contrasts ? new Set<string>() : goalStems(words);
  const out = new Map<string, string[]>();
  const add = (use: string, from: number, to: number) => {
    const line = words.slice(from, to).map((w) => w.text);
    // A flag the rule names besides the command line's is another form it sets the line against.
    const other = words.some((w, k) => (k < from || k >= to) && /^-/.test(w.text) && !line.includes(w.text));
    const flags = line.filter((f) => /^-/.test(f) && !other && isGoalFlag(f, goal));
    out.set(use, [...(out.get(use) ?? []), ...flags]);
  };
  const isUse = (w: Word, use: string) =>
    use.length >= 2 &&
    /^[\w@+~./:-]+$/.test(use) &&
    !/^-/.test(use) &&
    !PROSE_AFTER_COMMAND.has(use) &&
    !STOPWORDS.has(use) &&
    !isVerbOf(w, use);
  words.forEach((w, i) => {
    if (bare(w.text) !== command || w.endsClause) return;
    // Past the flags (to the end of the clause: "vitest --coverage, never ..." names no use).
    const pastFlags = (from: number) => {
      let j = from;
      while (j < words.length && /^-/.test(words[j]!.text) && !words[j]!.endsClause) j++;
      return j < words.length && /^-/.test(words[j]!.text) ? words.length : j;
    };
    let j = pastFlags(i + 1);
    const verb = words[j];
    const afterVerb = verb && VERB_OF_COMMAND.has(bare(verb.text)) ? j : -1;
    if (afterVerb >= 0) j = verb!.endsClause ? words.length : pastFlags(j + 1);
    const use = bare(words[j]?.text ?? "");
    // The flags of the command line: before the use, and after it to the end of its clause.
    let end = j + 1;
    while (end < words.length && /^-/.test(words[end]!.text) && !words[end - 1]!.endsClause) end++;
    if (isUse(w, use)) add(use, i + 1, end);
    // `vitest run --coverage`: the flags are what the rule asks of `run`, itself the use.
    else if (afterVerb >= 0 && (verb!.code || j > afterVerb + 1)) add(bare(verb!.text), i + 1, j);
  });
  return out;
}

/**
 * Whether a rule that matched a shell call only on its command's name (and flags) is about other
 * uses of that command: it names uses ("never run rm -rf build/", "use npm ci instead of npm
 * install"), and the call's arguments are none of them and no word of the rule either
 * (`rm -rf node_modules`, `npm test`). Such a rule bears on some calls of the command, not on
 * every one: "rm" and "npm" alone would fire it for all of them. Returns the uses it names, or
 * null when it may bear on the call.
 */
function otherUses(item: GateItem, line: string): string[] | null {
  const matched = new Set(item.matchedOn.map((e) => e.toLowerCase()));
  // What the rule says (its text and steps), not its trigger list: "yarn pnpm" is no use of yarn.
  const steps = Array.isArray(item.row.details?.steps)
    ? (item.row.details.steps as unknown[]).join("\n")
    : "";
  const text = `${item.row.text}\n${steps}`;
  const commands = new Set<string>();
  const uses = new Map<string, string[]>();
  const args = new Set<string>();
  const flags = new Set<string>();
  for (const segment of line.split(/&&|\|\||[|;]/)) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    const name = (w: string | undefined) =>
      bare(w ?? "")
        .replace(/^.*\//, "")
        .replace(/(?<=.)@.*$/, "");
    let at = 0;
    if (RUNNERS.has(name(words[0]))) {
      commands.add(name(words[0]));
      at = 1;
      while (at < words.length && words[at]!.startsWith("-")) at++;
    }
    const command = name(words[at]);
    if (!command) continue;
    commands.add(command);
    if (!matched.has(command)) continue;
    for (const [u, f] of namedUses(text, command)) uses.set(u, [...(uses.get(u) ?? []), ...f]);
    for (const w of words.slice(at + 1)) {
      if (w.startsWith("-")) {
        flags.add(w.toLowerCase().replace(/=.*$/, ""));
        continue;
      }
      args.add(bare(w));
      for (const part of bare(w).split("/")) if (part) args.add(part);
    }
  }
  // Matched on something besides command names and flags (a file, an error): it is about the call.
  if (uses.size === 0 || [...matched].some((e) => !e.startsWith("-") && !commands.has(e))) return null;
  // A use whose goal flag the call lacks is not the call's use (`git push --tags` "to publish
  // tags" before `git push origin feature-x`), and its word is no shared word of the rule either.
  const lacking = (u: string) => (uses.get(u) ?? []).filter((f) => !flags.has(f));
  const unmet = new Set([...uses.keys()].filter((u) => lacking(u).length > 0));
  const met = [...uses.keys()].filter((u) => !unmet.has(u));
  if (met.some((u) => args.has(u) || u.split("/").some((part) => part && args.has(part)))) return null;
  const ruleWords = new Set((text.toLowerCase().match(/[\p{L}\p{N}_.-]+/gu) ?? []).map(bare));
  if ([...args].some((a) => a.length >= 3 && !VERB_OF_COMMAND.has(a) && !unmet.has(a) && ruleWords.has(a)))
    return null;
  return [...uses.keys()].map((u) => [u, ...lacking(u)].join(" "));
}

/**
 * The trigger entities a call hit: those it matched, and the base name of each path it matched
 * when the directive lists that too ("src/generated/" and "generated" are one thing: a call inside
 * `src/generated/` hits both, not one of them). A base name hit alone counts only itself, since
 * `lib/other/migrate.ts` is not `src/db/migrate.ts`.
 */
function hitEntities(item: GateItem): Set<string> {
  const own = new Set(item.row.trigger_entities);
  const hit = new Set(item.matchedOn);
  for (const e of item.matchedOn) if (own.has(baseName(e))) hit.add(baseName(e));
  return hit;
}

/**
 * The gate without a language model: the share of the task's content words that the
 * directive (text, steps, trigger entities) also uses, plus the matched identifiers the task
 * names. With no task, or one without content words ("ok", "go ahead"), there is nothing to gate
 * against: every match is kept, at middling confidence. Unverified directives (no outcome) are held a little less confidently.
 */
export function lexicalVerdict(
  item: GateItem,
  task: string | null,
  matchedWhat = "the action",
  command: string | null = null,
): Verdict {
  const hedge = unverified(item.row) ? 0.8 : 1;
  const elsewhere = command ? otherUses(item, command) : null;
  if (elsewhere)
    return {
      keep: false,
      because: `It concerns other uses of the command (${elsewhere.join(", ")}).`,
      confidence: 0,
    };
  const matched = item.matchedOn.length
    ? `matched on ${item.matchedOn.join(", ")}`
    : `matched ${matchedWhat}`;
  const want = contentTerms(task ?? "");
  // A task with no content words ("ok", "yes, do it", "go ahead") says nothing to gate against,
  // like no task at all: the exact match stands.
  if (!task?.trim() || want.size === 0)
    return { keep: true, because: `It ${matched}.`, confidence: round2(0.5 * hedge) };
  const have = contentTerms(directiveText(item.row));
  const shared = [...want.keys()].filter((w) => have.has(w));
  const namedInTask = item.matchedOn.filter((e) => names(task, e)).length;
  // A directive about the very identifier the tool call uses (its text names it, and it is at
  // least half of what the directive triggers on) bears on the call whatever the task says:
  // "Don't use yarn here, use pnpm" before `yarn add lodash` under "add lodash to the
  // dashboard", a task that shares no word with it. A long procedure that merely mentions `npm`
  // among many identifiers still has to concern the task.
  const text = item.row.text.toLowerCase();
  // So does one that names the very command the call runs ("... before running npm test" before
  // `npm test`), however many identifiers it triggers on.
  const aboutCall =
    (item.matchedOn.some((e) => names(text, e.toLowerCase())) &&
      hitEntities(item).size * 2 >= item.row.trigger_entities.length) ||
    (command !== null && command.length >= 4 && text.replace(/\s+/g, " ").includes(command));
  const overlap = want.size ? shared.length / Math.min(want.size, Math.max(have.size, 1)) : 0;
  const relevance = Math.min(1, overlap + (namedInTask || aboutCall ? 0.3 : 0));
  if (relevance < LEXICAL_THRESHOLD) {
    return {
      keep: false,
      because: "It shares too little with the task.",
      confidence: round2(relevance * hedge),
    };
  }
  const words = shared
    .slice(0, 4)
    .map((stem) => want.get(stem))
    .join(", ");
  const concerns = words ? ` and the task concerns ${words}` : aboutCall ? ", which the tool call uses" : "";
  return {
    keep: true,
    because: `It ${matched}${concerns}.`,
    confidence: round2((0.4 + 0.6 * relevance) * hedge),
  };
}

/** The longest `because` the model's gate may give: one short sentence, as long as a title. */
export const BECAUSE_MAX = 300;

const GateReply = z.object({
  verdicts: z.array(
    z.object({
      id: z.string(),
      relevant: z.boolean(),
      because: z.string().describe("one short sentence: why it helps (or not) with the task"),
      confidence: z.number().min(0).max(1),
    }),
  ),
});

/**
 * One model call judging every matched directive against the task. Returns null when the model
 * fails, so the caller falls back to the lexical gate.
 */
export async function modelVerdicts(
  ctx: Ctx,
  items: GateItem[],
  task: string | null,
  action: string,
): Promise<Map<string, Verdict> | null> {
  const llm = ctx.deps.providers.llm;
  if (!llm || items.length === 0) return null;
  const list = items.map(
    (i) =>
      `[${i.row.id}] (${i.row.type}${i.row.outcome ? `, ${i.row.outcome}` : ", unverified"}) ${i.row.text.replace(/\s+/g, " ")}` +
      ` | matched on: ${i.matchedOn.join(", ")}`,
  );
  try {
    const output = await requestModelCall(ctx.deps.config, "relevance gate", () =>
      generateStructured(llm, ctx.deps.config, {
        schema: GateReply,
        system:
          "An AI agent is about to call a tool. Judge which recalled lessons and procedures are relevant " +
          "to its current task. Keep only those that would change or confirm what it is about to do.",
        timeoutMs: ctx.deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
        prompt: `Task: ${task?.trim() || "(not stated)"}\nTool call: ${action}\n\nRecalled directives:\n${list.join("\n")}`,
      }),
    );
    // Verdicts on the directives asked about only, and a `because` of at most BECAUSE_MAX
    // characters: a runaway reply (2 MB of it) was served whole in the hook's answer.
    const asked = new Set(items.map((i) => i.row.id));
    const out = new Map<string, Verdict>();
    for (const v of output.verdicts) {
      if (!asked.has(v.id)) continue;
      // Masked as the turns were: the model may quote a secret the directives hold in pieces.
      const because = clipModelText(
        v.because.trim(),
        BECAUSE_MAX,
        ctx.deps.config.MNEMO_REDACT_SECRETS,
        BECAUSE_MAX,
      );
      out.set(v.id, { keep: v.relevant, because, confidence: round2(v.confidence) });
    }
    return out;
  } catch (err) {
    ctx.log.warn({ cause: describeModelError(err) }, "relevance gate failed; using the lexical gate");
    return null;
  }
}
