import { identifiersFromText, isKnownCommand, RUNNERS, sameJob } from "../../identifiers/identifiers.js";
import { truncate } from "../../truncate.js";
import type { ExtractedDirective, Turn } from "../types.js";
import { ASSISTANT_OFFER, ASSISTANT_SUPPOSING, splitSentences, stripInterjections } from "./english.js";
import { irregularBase } from "./irregular.js";
import { speakersRule } from "./rule-subject.js";
import { allSteps, STEP_MS, stepClock } from "./steps.js";

/**
 * Directives by rule: explicit rules ("always/never/make sure/don't ..."), corrections after the
 * assistant's turn, error-then-fix patterns, and numbered steps (procedures).
 */
const RULE =
  /^(please\s+)?(always|never|make sure|ensure|don't|do not|avoid|remember to|be sure to|prefer|use|stop using|quit using|switch(?: back)? to|go back to)\b/i;
const RULE_ANYWHERE =
  /\b(always|never|make sure|must|must not|should|shouldn't|do not|don't|stop using|no longer use)\b/i;
/** Every cue of RULE_ANYWHERE in a sentence (matchAll). */
const RULE_CUES = new RegExp(RULE_ANYWHERE.source, "gi");
/**
 * Weaker cues ("psql needs PGHOST=...", "use pnpm instead of yarn", "note for next time"): a rule
 * only where the sentence names something unmistakably technical (a command, a path or file, a
 * flag, a name with `_` or digits), since chat says them too ("the LGBTQ community needs more
 * platforms", "we need to get the word out about the cook-off").
 */
/** An acknowledgement that opens a reply: "Understood:", "Got it,", "Noted.", "Will do:". */
const ACKNOWLEDGED =
  /^(?:understood|got it|noted|will do|sure|ok|okay|of course|alright|all right)\b[,:.!]?\s+/i;
const WEAK_RULE = /\b(needs|needs? to|has to|have to|instead of|rather than|next time)\b/i;
const technical = (id: string) => isKnownCommand(id) || /[/._\d]|^-/.test(id);
/** The verbs an instruction starts with. */
const IMPERATIVE =
  "add|use|run|set|call|check|install|restart|delete|remove|update|keep|put|pass|export|source|wait|close|open|commit|push|pull|build|rebuild|clear|kill|start|stop|edit|change|bump|rerun|regenerate|point|include|exclude|register|import|write|read|create|drop|migrate|reset";
/**
 * "When adding a workspace package, add it to tsconfig.base.json": a condition, then an
 * imperative. The verbs an instruction starts with, so that a narration ("When I ran it, it
 * failed") is not taken for one.
 */
const CONDITIONAL_RULE = new RegExp(
  String.raw`^(when|whenever|before|after|if)\b[^,]{3,},\s*(?:always\s+|first\s+)?(${IMPERATIVE})\b`,
  "i",
);
/**
 * "From now on, run cargo clippy before cargo test": an opener that makes what follows a standing
 * instruction, when an imperative follows it.
 */
const STANDING_RULE = new RegExp(
  String.raw`^(?:from now on|from here on(?: out)?|going forward|henceforth)\s*,?\s*(?:please\s+)?(?:${IMPERATIVE})\b`,
  "i",
);
/**
 * A reply that sets the other speaker right: "Wrong, ...", "That is wrong: ...", and "No, ...",
 * "Nope, ...", "Actually, ..." (the interjection is the correction: it is read before the opener
 * is stripped, and a bare "No" needs its comma: "No need to ..." corrects nothing).
 */
const CORRECTION =
  /^(?:(?:no|nope|nah)\s*[,!.:]\s*|(?:actually|wrong|that's wrong|that is wrong|not quite|instead)\b[,!.:]?\s*)/i;
/**
 * What does not ask for anything though it says "never", "should" or "must" (RULE_ANYWHERE), or
 * opens with a condition: doubt ("I'm not sure if we should use poetry"), a hypothetical on what
 * the speakers may do one day ("If we ever adopt Kubernetes, we should ...": a plan, while "If the
 * deploy ever hangs, restart it" is a rule), and the past told ("My old team never used pytest";
 * see narratesPast).
 */
const DOUBT =
  /\b(?:not sure|unsure|wonder(?:ing|ed)?|whether|undecided|can't decide|cannot decide|(?:don't|do not) know (?:if|whether)|no idea (?:if|whether)|torn between)\b/i;
const HYPOTHETICAL =
  /\b(?:if|when|once|in case)\s+(?:we|I)\s+(?:ever|someday|some day|one day|eventually)\b|\b(?:we|I) were to\b/i;
/** A verb in the past after the rule's word: "never used", "always ran", "should have used". */
function narratesPast(sentence: string): boolean {
  const cues = [...sentence.matchAll(RULE_CUES)];
  return (
    cues.length > 0 &&
    cues.every((m) => {
      const next = sentence
        .slice(m.index + m[0].length)
        .match(/^(?:'ve\b|\s+(?:(?:ever|really|even|just|once)\s+)?[\w']+)/)?.[0]
        .trim()
        .replace(/^(?:ever|really|even|just|once)\s+/i, "")
        .toLowerCase();
      if (!next) return false;
      return (
        /^(?:have|'ve|been|had|was|were|did)$/.test(next) ||
        (/ed$/.test(next) && !/(?:eed|bed|shed)$/.test(next)) ||
        irregularBase(next) !== null
      );
    })
  );
}
// "psql: error: ..." and "panic: ..." end in a colon: no word boundary after it.
// npm's own errors ("npm ERR! code ERESOLVE") and the errno codes Node and npm print.
export const ERROR =
  /\b(?:[A-Z]\w*(?:Error|Exception)\b|[Ee]rror:|[Pp]anic:|[Ff]atal:|[Ff]ailed\b|[Tt]raceback\b|npm ERR!|E(?:NOENT|ACCES|CONNREFUSED|CONNRESET|ADDRINUSE|PERM|EXIST|NOTFOUND|TIMEDOUT|PIPE|ISDIR|NOTDIR|MFILE|NOSPC|RESOLVE|LIFECYCLE|INTEGRITY)\b)|^\[error\]/m;
// Not inside a name: the branch `HEAD:fix/cart-total` is no fix.
const FIX =
  /(?<![\w/.:-])(fix(ed)?|solved|resolved|the (issue|problem|cause|fix) (was|is)|works now|turned out|solution (was|is)|workaround)(?![\w/-])/i;
/**
 * A turn that only says the last advice worked ("That fixed it, thanks", "Yes that worked!"): the
 * fix is the advice before it, not these words.
 */
const CONFIRMED =
  /^(?:(?:yes|yep|yeah|great|perfect|awesome|nice|ok|okay|cool|thanks|thank you|wow)[,!.]*\s+)*(?:that|this|it|your (?:fix|suggestion|advice))(?: (?:fixed|solved|resolved) it| fixed the (?:issue|problem|error)| worked| works(?: now)?| did it| did the trick)\b[^.!?]{0,40}[.!]*$/i;
/** A reply that takes up the advice before it: "Yes, do that.", "Good idea.", "Sounds good, thanks!" */
const AGREED =
  /^(?:yes|yep|yeah|yup|agreed|exactly|good (?:idea|call|point)|sounds good|makes sense|let's do (?:that|it)|do (?:that|it)|please do|go for it)\b[^?]{0,80}$/i;
const agreedTo = (next: Turn | undefined) =>
  next !== undefined && next.role !== "assistant" && next.role !== "tool" && AGREED.test(next.content.trim());
const STEP = /^\s*(\d+)[.)]\s+(.+)$/;
const BULLET = /^\s*[-*\u2022]\s+(.+)$/;
/** The line that introduces bulleted steps: "To rotate the signing key:", "Release checklist:". */
const STEPS_HEADING = /^(to\s+\w+|how to\b).*:$|\b(steps?|procedure|checklist|process|runbook)\b.*:$/i;
/** The opening line of a Python traceback: the error is named by the line it ends with. */
export const TRACEBACK = /^\s*Traceback \(most recent call last\)/;
/** The marker the Claude Code Stop hook gives a failed tool result (examples/hooks/stop.mjs). */
export const ERROR_MARK = /^\[error\]\s*/;

/**
 * The steps a turn lists, the line that introduces them (when there is one) and the steps' lines:
 * numbered lines, or else bullets under a line that introduces steps ("To rotate the signing
 * key:"); none when it lists neither.
 */
function listedSteps(lines: string[]): { heading: string | null; steps: string[]; at: Set<number> } {
  const stepsBy = (re: RegExp, group: number, first: number) => {
    const at = new Set<number>();
    const steps: string[] = [];
    for (const [k, l] of lines.entries()) {
      const step = k >= first ? re.exec(l)?.[group]?.trim() : undefined;
      if (step) {
        at.add(k);
        steps.push(step);
      }
    }
    const heading = lines.slice(0, first).findLast((l) => l.trim());
    return { heading: heading?.trim() ?? null, steps, at };
  };
  const numbered = lines.findIndex((l) => STEP.test(l));
  if (numbered >= 0) return stepsBy(STEP, 2, numbered);
  const bullet = lines.findIndex((l) => BULLET.test(l));
  const listed = bullet > 0 ? stepsBy(BULLET, 1, bullet) : null;
  if (listed && STEPS_HEADING.test(listed.heading ?? "")) return listed;
  return { heading: null, steps: [], at: new Set() };
}

/**
 * The advice a confirmation ("That fixed it") answers: the turn before it (before the tool turns
 * that carried it out), when another speaker's and not the error's own turn or a tool's; its
 * sentences that are no question, at most 300 characters. None when there is no such turn.
 */
function adviceBefore(
  turns: Turn[],
  i: number,
  errorEventId: string,
): { text: string; eventIds: string[] } | null {
  // The tool turns between are the advice carried out (an agent runs the fix before the user
  // confirms it): the advice is the turn before them.
  let j = i - 1;
  while (j > 0 && turns[j]!.role === "tool" && turns[j]!.eventId !== errorEventId) j--;
  const prev = turns[j];
  if (!prev || prev.role === turns[i]!.role || prev.role === "tool" || prev.eventId === errorEventId)
    return null;
  const said = splitSentences(prev.content)
    .map(stripInterjections)
    .filter((s) => s.length >= 8 && !s.endsWith("?"))
    .join(" ");
  const text = truncate(said, 300).trim();
  return text ? { text, eventIds: [prev.eventId] } : null;
}

/** Takes back the rules read from the advice a confirmation made a fix ("Use X instead."). */
function dropRulesOf(
  out: ExtractedDirective[],
  seen: Set<string>,
  said: { text: string; eventIds: string[] },
) {
  for (let k = out.length - 1; k >= 0; k--) {
    const d = out[k]!;
    const same = d.source_event_ids.length === 1 && said.eventIds.includes(d.source_event_ids[0]!);
    if (d.type === "lesson" && same && said.text.includes(d.text.slice(1))) {
      seen.delete(`${d.type}:${d.text.toLowerCase()}`);
      out.splice(k, 1);
    }
  }
}

/**
 * The program an assistant's turn is about to run, which a correction right after it sets right
 * ("I'll run `npm install zod` in packages/api." gives `npm`): the one command it names, past a
 * package runner that runs another (`npx vitest run` gives `vitest`). None when it names no
 * command, or several (which of them the reply corrects is not said).
 */
function correctedProgram(turn: Turn | undefined): string | null {
  if (turn?.role !== "assistant") return null;
  const commands = identifiersFromText(turn.content).filter(isKnownCommand);
  const run = commands.length > 1 ? commands.filter((c) => !RUNNERS.has(c)) : commands;
  return run.length === 1 ? run[0]! : null;
}

export function extractDirectives(turns: Turn[]): ExtractedDirective[] {
  return allSteps(directivesInSteps(turns));
}

/**
 * extractDirectives, pausing (yield) once a step has run `stepMs` milliseconds (see STEP_MS), so
 * the local extractor gives the event loop a turn in between (a 5,000-message job read them in one
 * block of about 200 ms, with every request waiting behind it).
 */
export function* directivesInSteps(
  turns: Turn[],
  stepMs = STEP_MS,
): Generator<undefined, ExtractedDirective[], undefined> {
  const out: ExtractedDirective[] = [];
  const seen = new Set<string>();
  const push = (d: ExtractedDirective) => {
    const key = `${d.type}:${d.text.toLowerCase()}`;
    if (seen.has(key)) {
      // A rule said again comes where it was said last: after a reversal in between ("use pnpm",
      // "use yarn", "use pnpm" again), the order tells which holds (src/ingest/reconcile.ts).
      if (d.type !== "lesson") return;
      out.splice(
        out.findIndex((o) => `${o.type}:${o.text.toLowerCase()}` === key),
        1,
      );
    }
    seen.add(key);
    out.push(d);
  };

  let lastError: { text: string; entities: string[]; eventId: string } | null = null;
  const clock = stepClock(stepMs);
  for (const [i, turn] of turns.entries()) {
    if (clock.due()) {
      yield;
      clock.restart();
    }
    const prev = turns[i - 1];
    // A tool's own turn (its call, its output) states no rule and no fix: it is not advice, though
    // its output may say "must" ("Changes must be made through a pull request") or name a
    // branch `fix/...`. Its errors still wait for a later fix.
    const advice = turn.role !== "tool";
    const lines = turn.content.split("\n");
    const listed = advice ? listedSteps(lines) : null;
    const steps = listed?.steps ?? [];
    // The sentences a rule may be read from: with a procedure, those outside its steps (the list
    // is read as one sentence with the line that introduces it), since one list is one procedure:
    // a step's "make sure" made the joined list a lesson too. The list still tells an earlier
    // error's fix ("The fix was: 1. ... 2. ...").
    let outsideList: Set<string> | null = null;
    if (listed && steps.length >= 2) {
      const heading = listed.heading?.replace(/[:.]$/, "") ?? "Procedure";
      outsideList = new Set(splitSentences(lines.filter((_, k) => !listed.at.has(k)).join("\n")));
      const entities = identifiersFromText([heading, ...steps].join("\n"));
      push({
        type: "procedure",
        text: `${heading}:\n${steps.map((s, k) => `${k + 1}. ${s}`).join("\n")}`,
        steps,
        trigger_entities: entities,
        source_event_ids: [turn.eventId],
      });
    }

    // The assistant's own advice ("You should also run `pnpm lint --fix`") is the user's rule only
    // when the user agrees to it next.
    const heard = turn.role !== "assistant" || agreedTo(turns[i + 1]);
    let fixedHere = false;
    for (const raw of advice ? splitSentences(turn.content) : []) {
      const sentence = stripInterjections(raw);
      if (sentence.endsWith("?") || sentence.length < 8) continue;
      const ids = identifiersFromText(sentence);
      // The fix of an earlier error, said with it; the same sentence is not a second lesson.
      const err = lastError as { text: string; entities: string[]; eventId: string } | null;
      const confirmed = CONFIRMED.test(sentence);
      if (err && err.eventId !== turn.eventId && (FIX.test(sentence) || confirmed)) {
        // "That fixed it": the advice of the turn before (another speaker's, after the error).
        const said = confirmed ? adviceBefore(turns, i, err.eventId) : { text: sentence, eventIds: [] };
        const entities = [...new Set([...err.entities, ...identifiersFromText(said?.text ?? ""), ...ids])];
        if (!said) continue;
        if (entities.length) {
          // The advice is the fix now, not also a rule of its own turn.
          if (confirmed) dropRulesOf(out, seen, said);
          push({
            type: "lesson",
            text: `When "${err.text}" occurs: ${said.text}`,
            steps: null,
            trigger_entities: entities,
            source_event_ids: [err.eventId, ...said.eventIds, turn.eventId],
          });
          lastError = null;
          fixedHere = true;
          continue;
        }
      }
      // The assistant acknowledging the user's instruction ("Understood: I'll use yarn ... instead of
      // pnpm") restates the rule the user's turn gave: stored too, it came first in every recall.
      if (turn.role === "assistant" && prev?.role === "user" && ACKNOWLEDGED.test(raw)) continue;
      // A rule without an exact identifier could never be triggered: keep only those with one.
      const opened = CORRECTION.test(raw.trim()) ? raw.trim() : sentence;
      const isCorrection =
        CORRECTION.test(opened) &&
        turn.role !== "assistant" &&
        prev !== undefined &&
        prev.role !== turn.role &&
        // "No, ..." to a question answers it: it sets nothing right.
        !(/^(?:no|nope|nah)\b/i.test(opened) && prev.content.trim().endsWith("?"));
      // Said in passing ("never", "should", "must" inside a sentence), a rule is the user's (or
      // advice the user agrees to next), asks for something (no doubt, no hypothetical), does not
      // tell the past, and has the speakers or no one (an imperative) as its subject, not another
      // person ("my wife always buys yarn") or another's words ("my dad always said never ...").
      // The assistant supposing, illustrating, speaking in general or offering ("For example, if
      // ...", "If you'd like, I'll ...") and its weaker cues ("I've found the 50/30/20 rule works:
      // 50% needs, ...") are the user's rule only when the user agrees next, as its "should" is.
      const offered =
        turn.role === "assistant" && (ASSISTANT_SUPPOSING.test(sentence) || ASSISTANT_OFFER.test(sentence));
      const considered = !DOUBT.test(sentence) && !HYPOTHETICAL.test(sentence) && (!offered || heard);
      const isRule =
        RULE.test(sentence) ||
        STANDING_RULE.test(sentence) ||
        (RULE_ANYWHERE.test(sentence) &&
          considered &&
          heard &&
          !narratesPast(sentence) &&
          speakersRule(sentence, RULE_CUES)) ||
        (CONDITIONAL_RULE.test(sentence) && considered) ||
        (WEAK_RULE.test(sentence) && considered && heard && ids.some(technical));
      if (ids.length > 0 && (isCorrection || isRule) && (outsideList?.has(raw) ?? true)) {
        const text = isCorrection ? stripInterjections(opened.replace(CORRECTION, "")) : sentence;
        // A correction of the assistant's command is recalled before that command is run again:
        // "No, we use pnpm." after "I'll run `npm install zod`" fires on `npm` too, as "No, we use
        // pnpm, not npm." does. Only when the program it names does the same job (sameJob): "No,
        // we use pnpm." after `git status`, or "No, we use helm." after `kubectl apply`, replaces
        // neither git nor kubectl, and is not about every call of it.
        const found = isCorrection ? correctedProgram(prev) : null;
        const corrected =
          found && !ids.includes(found) && ids.some((id) => sameJob(id, opened, found, prev!.content))
            ? found
            : null;
        // Said as one short clause naming the program to use instead, the lesson names what it
        // replaces too ("We use pnpm, not npm."), so it reads as what to avoid where it is served.
        const said =
          corrected && ids.some(isKnownCommand) && /^[^,;:]{1,60}[.!]?$/.test(text)
            ? `${text.replace(/[.!]$/, "")}, not ${corrected}.`
            : text;
        push({
          type: "lesson",
          text: said.charAt(0).toUpperCase() + said.slice(1),
          steps: null,
          trigger_entities: corrected ? [...ids, corrected] : ids,
          source_event_ids: [turn.eventId],
        });
      }
    }
    // An error this turn reports waits for a later turn's fix; a turn that tells how an earlier
    // error was fixed (naming that error as it does) starts no new one.
    // Advice that names the pending error ("Run npm install --legacy-peer-deps to get past
    // ERESOLVE") answers it; it reports no new one.
    const pending = lastError as { text: string; entities: string[]; eventId: string } | null;
    const answers =
      pending !== null &&
      turn.role === "assistant" &&
      turns.find((t) => t.eventId === pending.eventId)?.role !== "assistant" &&
      identifiersFromText(turn.content).some((id) => pending.entities.includes(id));
    if (!fixedHere && !answers && ERROR.test(turn.content)) {
      // The line naming the error, not the first line for its `[error]` mark (npm's script banner,
      // "> shop-api@2.3.0 test", became the lesson's error); the first line when none names one.
      const lines = turn.content.split("\n").map((l) => l.replace(ERROR_MARK, ""));
      // A Python traceback is named by the exception it ends with, not its opening line.
      const naming = lines.filter((l) => ERROR.test(l) && !TRACEBACK.test(l));
      const traceback = lines.some((l) => TRACEBACK.test(l));
      const line = (traceback ? naming.at(-1) : naming[0]) ?? lines.find((l) => ERROR.test(l)) ?? lines[0]!;
      lastError = {
        text: truncate(line.trim(), 200),
        entities: identifiersFromText(line),
        eventId: turn.eventId,
      };
    }
  }
  // A short flag ("-d", or letters run together: "-ti", "-rf", "-fsS") is in half the commands of
  // a shell: beside a more specific identifier it would fire the directive on unrelated calls, and
  // alone it triggers on anything (the rule is still a fact of the conversation, found by search).
  const kept: ExtractedDirective[] = [];
  for (const d of out) {
    d.trigger_entities = d.trigger_entities.filter((e) => !/^-[A-Za-z]+$/.test(e));
    if (d.trigger_entities.length) kept.push(d);
  }
  return kept;
}
