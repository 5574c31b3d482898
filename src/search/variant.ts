import type { Ctx } from "../context.js";
import { CoreError } from "../errors.js";
import { parseFilters, pinnedValue } from "../memories/filters.js";
import { toVariant } from "../memories/variant.js";
import type { VariantSearchRequest, VariantSearchResult } from "../wire/variant.js";
import { searchMemories } from "./search.js";

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
  const filter =
    input.filters !== undefined && input.filters !== null ? parseFilters(input.filters) : undefined;
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
  const out = await searchMemories({
    ctx,
    input: {
      query: input.query,
      filter,
      mode: contextPrompt ? "compose" : "retrieve",
      ...(include.includes("full_content") ? { include: ["full_content"] } : {}),
      limit: input.limit ?? 20,
    },
  });
  const results = out.data.map(toVariant);
  const of = (type: string) => results.filter((m) => m.type === type);
  return {
    results,
    facts: of("fact"),
    artifacts: of("artifact"),
    episodes: of("episode"),
    context: out.context,
    mode: contextPrompt ? "context" : "flat",
    ...(contextPrompt
      ? { extras: { context_prompt: out.context ?? "", stage_timings: out.stage_timings } }
      : {}),
  };
}
