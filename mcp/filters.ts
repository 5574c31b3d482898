import type { Memory, MemoryList } from "../src/wire/memories.js";
import type { SearchResult } from "../src/wire/search.js";
import type { VariantList, VariantMemory, VariantSearchResult } from "../src/wire/variant.js";
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
 */
export function scopedFilters(
  args: Axes & { group_ids?: string[] | undefined },
  filters: Record<string, unknown>,
  scope: DefaultScope,
): Record<string, unknown> {
  const text = JSON.stringify(filters);
  const filtersNameAxis = /"(user_id|agent_id|app_id|group_ids)"/.test(text);
  const axes = filtersNameAxis ? readScope(args, {}) : readScope(args, scope);
  const parts: Record<string, unknown>[] = [];
  if (axes.user_id) parts.push({ user_id: axes.user_id });
  if (axes.agent_id) parts.push({ agent_id: axes.agent_id });
  if (axes.app_id) parts.push({ app_id: axes.app_id });
  if (axes.group_ids?.length) parts.push({ group_ids: { $in: axes.group_ids } });
  return parts.length ? { AND: [...parts, filters] } : filters;
}
