import type { Ctx } from "../context.js";
import { directivesByKeys } from "../db/memory-search.js";
import { CoreError, isCoreError } from "../errors.js";
import {
  type ActionContext,
  identifiersFromAction,
  matchedOn,
  normaliseEntities,
} from "../identifiers/identifiers.js";
import { DIRECTIVE_TYPES, type DirectiveType, type Memory, toWire } from "../memories/model.js";
import { resolveScope, type Scope } from "../search/scope.js";
import type { SearchResult } from "../search/search.js";
import { elapsed } from "../search/timing.js";
import { checkMonthlyQuota } from "../usage/quota.js";
import { type GateItem, lexicalVerdict, modelVerdicts, type Verdict } from "./gate.js";
import { renderDirectives } from "./render.js";

export interface TriggerInput extends Scope {
  action?: ActionContext | null | undefined;
  entities?: string[] | null | undefined;
  include?: DirectiveType[] | undefined;
  namespace?: string | null | undefined;
  task?: string | null | undefined;
  mode?: "retrieve" | "compose" | undefined;
}

/** Matched directives served at most per call: advice, not a dump. */
const MAX_MATCHES = 20;

/**
 * Symbol-triggered recall: identifiers from the tool call (or as given) matched exactly
 * against directives' trigger entities; under compose, a relevance gate against the task.
 */
export async function triggerDirectives({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: TriggerInput;
}): Promise<SearchResult> {
  const action = input.action ?? null;
  if (!action && !input.entities) {
    throw new CoreError("missing_trigger", "Supply `action` (the tool call) or `entities`.");
  }
  const scope = resolveScope(ctx, input);
  const quota = await checkMonthlyQuota(ctx, { searches: 1 });
  const mode = input.mode ?? "compose";
  const types = input.include?.length
    ? DIRECTIVE_TYPES.filter((t) => input.include!.includes(t))
    : DIRECTIVE_TYPES;
  const timings: Record<string, number> = {};
  const started = performance.now();
  try {
    let t = performance.now();
    const identifiers = input.entities
      ? normaliseEntities(input.entities)
      : identifiersFromAction(action ?? {});
    timings.extract_entities = elapsed(t);

    t = performance.now();
    const rows = await directivesByKeys(
      ctx.db,
      scope,
      types,
      identifiers,
      input.namespace ?? null,
      MAX_MATCHES,
      // The search is counted in the same statement (no round trip of its own), unless the
      // monthly-cap check counted it already.
      quota.counted ? undefined : { keyId: ctx.principal.keyId },
    );
    const idSet = new Set(identifiers);
    const items: GateItem[] = rows
      .map((row) => ({ row, matchedOn: matchedOn(row.trigger_entities, idSet) }))
      // More identifiers hit first; the SQL order (resolved, then newest) breaks ties.
      .sort((a, b) => b.matchedOn.length - a.matchedOn.length);
    timings.match = elapsed(t);

    let data: Memory[];
    let context: string | null = null;
    let applied = false;
    if (mode === "compose") {
      t = performance.now();
      const task = input.task ?? null;
      // The shell command the call runs, as one line in lower case ("npm test").
      const args = action?.args as Record<string, unknown> | null | undefined;
      const command =
        typeof args?.command === "string"
          ? args.command.split("\n")[0]!.trim().replace(/\s+/g, " ").toLowerCase()
          : null;
      const verdicts = await modelVerdicts(ctx, items, task, describeAction(action, identifiers));
      applied = verdicts !== null;
      const none: Verdict = { keep: false, because: "", confidence: 0 };
      const kept = items
        .map((i) => ({
          ...i,
          verdict: verdicts ? (verdicts.get(i.row.id) ?? none) : lexicalVerdict(i, task, undefined, command),
        }))
        .filter((i) => i.verdict.keep)
        .sort((a, b) => b.verdict.confidence - a.verdict.confidence);
      context = renderDirectives(kept);
      data = kept.map((i) =>
        toWire(i.row, {
          directive: {
            matched_on: i.matchedOn,
            because: i.verdict.because,
            confidence: i.verdict.confidence,
          },
        }),
      );
      timings.gate = elapsed(t);
    } else {
      data = items.map((i) => toWire(i.row, { directive: { matched_on: i.matchedOn } }));
    }

    timings.total = elapsed(started);
    ctx.deps.metrics.triggerDuration.observe(timings.total);
    return {
      object: "search",
      mode,
      data,
      context,
      context_selection_applied: applied,
      stage_timings: timings,
    };
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("trigger_failed", "Trigger failed.", { cause: err });
  }
}

function describeAction(action: ActionContext | null, identifiers: string[]): string {
  if (!action) return `entities ${identifiers.join(", ")}`;
  const args = action.args ? JSON.stringify(action.args).slice(0, 1500) : "";
  return `${action.tool ?? "(tool)"} ${args}`.trim();
}
