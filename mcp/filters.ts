import { CoreError } from "../src/errors.js";
import { FILTER_MAX_DEPTH, parseFilters, pinnedValue } from "../src/memories/filters.js";
import { nestsDeeper } from "../src/wire/common.js";
import type { Memory, MemoryList } from "../src/wire/memories.js";
import type { SearchResult } from "../src/wire/search.js";
import type { VariantList, VariantMemory, VariantSearchResult } from "../src/wire/variant.js";
import { ToolFailure } from "./errors.js";
import type { DefaultScope } from "./scope.js";
import { readScope } from "./tool.js";

/**
 * Tools with a `filters` argument go through the variant operations (the filter language) and
 * answer in the same output shape as without filters: a memory's `memory` reads as `text` again.
 */

export const fromVariant = ({ memory, ...rest }: VariantMemory): Memory => ({ ...rest, text: memory });

export function searchFromVariant(r: VariantSearchResult): SearchResult {
  return {
    object: "search",
    mode: r.mode === "context" ? "compose" : "retrieve",
    data: r.results.map(fromVariant),
    context: r.context,
    context_selection_applied: false,
    stage_timings: r.extras?.stage_timings ?? {},
  };
}

export function listFromVariant(l: VariantList): MemoryList {
  return { object: "list", data: l.results.map(fromVariant), has_more: l.next !== null, next_cursor: l.next };
}

type Axes = { user_id?: string | undefined; agent_id?: string | undefined; app_id?: string | undefined };

/**
 * The call's scope axes as filter conditions ANDed with its filters. Axes named in the call are
 * used as given; the configured defaults fill in only when the filters name no scope axis themselves.
 * A conversation (list_memories' `conv_id`) is a condition here, as `conv_id` in the filters is,
 * not an axis: the variant list needs a user, agent, app or group besides it, so with it the
 * defaults fill in too (it made every such call `missing_scope`, a default pinned or not).
 */
export function scopedFilters(
  args: Axes & { group_ids?: string[] | undefined },
  filters: Record<string, unknown>,
  scope: DefaultScope,
): Record<string, unknown> {
  const keys = filterKeys(filters);
  const named = {
    user_id: args.user_id,
    agent_id: args.agent_id,
    app_id: args.app_id,
    group_ids: args.group_ids,
  };
  const axes = AXES.some((a) => keys.has(a)) ? readScope(named, {}) : readScope(named, scope);
  const parts: Record<string, unknown>[] = [];
  if (axes.user_id) parts.push({ user_id: axes.user_id });
  if (axes.agent_id) parts.push({ agent_id: axes.agent_id });
  if (axes.app_id) parts.push({ app_id: axes.app_id });
  if (axes.group_ids?.length) parts.push({ group_ids: { $in: axes.group_ids } });
  return parts.length ? { AND: [...parts, filters] } : filters;
}

const AXES = ["user_id", "agent_id", "app_id", "group_ids"];

/**
 * Runs a filtered operation whose `sent` filters wrap the caller's `given` ones in conditions of
 * the tool's own (scope axes, conversation, kinds): a filter error then names the path in the
 * caller's filters, as REST names it (`filters.$bogus`, not `filters.AND[1].$bogus`, a place the
 * caller never wrote).
 */
export async function withCallerPaths<T>(
  given: Record<string, unknown>,
  sent: Record<string, unknown>,
  op: () => Promise<T>,
): Promise<T> {
  try {
    return await op();
  } catch (err) {
    const at = placeOf(given, sent, "filters");
    if (!(err instanceof CoreError) || err.code !== "invalid_filters" || !at || at === "filters") throw err;
    const back = (s: string) =>
      s.startsWith(at) && /^(?:$|[.[:])/.test(s.slice(at.length)) ? `filters${s.slice(at.length)}` : s;
    throw new CoreError(err.code, back(err.message), {
      cause: err,
      ...(err.field ? { field: back(err.field) } : {}),
    });
  }
}

/** Where `given` sits in `tree` (through the ANDs a tool wraps it in), as an error path names it. */
function placeOf(given: unknown, tree: unknown, path: string): string | null {
  if (tree === given) return path;
  const and = (tree as { AND?: unknown } | null)?.AND;
  if (!Array.isArray(and)) return null;
  for (const [i, t] of and.entries()) {
    const found = placeOf(given, t, `${path}.AND[${i}]`);
    if (found) return found;
  }
  return null;
}

/** JSON levels a filter the language accepts can span: each of its levels is an object and an array. */
const JSON_DEPTH = 4 * FILTER_MAX_DEPTH + 8;

/**
 * The keys a filter tree uses anywhere in it. A tree deeper than any filter the language accepts
 * is refused here, with the code the filter parser gives (422 `invalid_filters` over REST): it was
 * serialised whole to look for keys, which overflowed the stack at 5,000 levels.
 */
export function filterKeys(filters: Record<string, unknown>): Set<string> {
  if (nestsDeeper(filters, JSON_DEPTH)) {
    throw new ToolFailure("invalid_filters", `filters: nesting deeper than ${FILTER_MAX_DEPTH} levels`);
  }
  const keys = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) {
        keys.add(k);
        walk(v);
      }
  };
  walk(filters);
  return keys;
}

/**
 * Whether the filters pin `user_id` and `conv_id` to one value each (an equality in their
 * top-level conjunction, not `$ne`, `$in`, an OR or a NOT): what the variant search needs to
 * compose (src/search/variant.ts), read with its own parser. A tree the parser refuses does not
 * compose; the search then refuses it, naming the field.
 */
export function pinsConversation(filters: Record<string, unknown>): boolean {
  let tree: ReturnType<typeof parseFilters>;
  try {
    tree = parseFilters(filters);
  } catch {
    return false;
  }
  return pinnedValue(tree, "user_id") !== undefined && pinnedValue(tree, "conv_id") !== undefined;
}
