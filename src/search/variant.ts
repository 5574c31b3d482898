import type { Ctx } from "../context.js";
import { CoreError } from "../errors.js";
import { parseFilters, pinnedValue } from "../memories/filters.js";
import { toVariant } from "../memories/variant.js";
import { fingerprint, seal, unseal } from "../seal.js";
import type { VariantSearchRequest, VariantSearchResult } from "../wire/variant.js";
import { searchMemories } from "./search.js";

/** How deep `next` cursors page into one ranking (ranked search is not a full scan of the scope). */
export const SEARCH_CURSOR_DEPTH = 300;
const CURSOR_PURPOSE = "mnemo:search-cursor";

/** A search cursor names the page offset of one query: same organisation, query, filters and include. */
function queryFingerprint(input: VariantSearchRequest): string {
  return fingerprint([input.query, input.filters ?? null, [...(input.include ?? [])].sort()]);
}

function openCursor(ctx: Ctx, input: VariantSearchRequest, cursor: string): number {
  const p = unseal(ctx.deps.secret, CURSOR_PURPOSE, cursor) as
    | { v?: unknown; org?: unknown; q?: unknown; o?: unknown }
    | undefined;
  if (
    p?.v !== 1 ||
    p.org !== ctx.principal.orgId ||
    p.q !== queryFingerprint(input) ||
    !Number.isInteger(p.o) ||
    (p.o as number) <= 0 ||
    (p.o as number) >= SEARCH_CURSOR_DEPTH
  ) {
    throw new CoreError(
      "cursor_mismatch",
      "The cursor was not issued for this organisation, query, filters and include, or it is damaged. Restart from the first page.",
      { field: "cursor" },
    );
  }
  return p.o as number;
}

/**
 * The variant search (spec 4.12): the same hybrid search, narrowed by the filter language (which
 * must pin a scope axis). `flat` mode is retrieval only; `include: ["context_prompt"]` composes a
 * markdown block for one user's conversation and returns it under `extras`.
 */
export async function searchVariant({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: VariantSearchRequest;
}): Promise<VariantSearchResult> {
  const maxGroupIds = ctx.deps.config.MNEMO_MAX_GROUP_IDS_PER_QUERY;
  const filter =
    input.filters !== undefined && input.filters !== null
      ? parseFilters(input.filters, { maxGroupIds })
      : undefined;
  const include = input.include ?? [];
  const contextPrompt = include.includes("context_prompt");
  if (contextPrompt) {
    if (!filter || pinnedValue(filter, "user_id") === undefined) {
      throw new CoreError("missing_user_id", "include context_prompt needs filters.user_id.", {
        field: "filters.user_id",
      });
    }
    if (pinnedValue(filter, "conv_id") === undefined) {
      throw new CoreError("missing_conv_id", "include context_prompt needs filters.conv_id.", {
        field: "filters.conv_id",
      });
    }
  }
  // `cursor` pages further down the same ranking (offset pages, up to SEARCH_CURSOR_DEPTH rows);
  // the context block belongs to the first page only.
  const offset = input.cursor ? openCursor(ctx, input, input.cursor) : 0;
  const limit = input.limit ?? 20;
  const end = Math.min(SEARCH_CURSOR_DEPTH, offset + limit);
  const compose = contextPrompt && offset === 0;
  const out = await searchMemories({
    ctx,
    input: {
      query: input.query,
      filter,
      mode: compose ? "compose" : "retrieve",
      ...(include.includes("full_content") ? { include: ["full_content"] } : {}),
      // One row past the page says whether there is a next one.
      limit: Math.min(SEARCH_CURSOR_DEPTH, end + 1),
    },
  });
  const next =
    out.data.length > end && end < SEARCH_CURSOR_DEPTH
      ? seal(ctx.deps.secret, CURSOR_PURPOSE, {
          v: 1,
          org: ctx.principal.orgId,
          q: queryFingerprint(input),
          o: end,
        })
      : null;
  const results = out.data.slice(offset, end).map(toVariant);
  const of = (type: string) => results.filter((m) => m.type === type);
  return {
    results,
    facts: of("fact"),
    artifacts: of("artifact"),
    episodes: of("episode"),
    context: compose ? out.context : null,
    mode: compose ? "context" : "flat",
    next,
    ...(compose ? { extras: { context_prompt: out.context ?? "", stage_timings: out.stage_timings } } : {}),
  };
}
