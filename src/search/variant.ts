import type { Ctx } from "../context.js";
import { CoreError } from "../errors.js";
import { namedValues, parseFilters, pinnedValue } from "../memories/filters.js";
import { CONTENT_TYPES, DIRECTIVE_TYPES } from "../memories/model.js";
import { toVariant } from "../memories/variant.js";
import { fingerprint, seal, unseal } from "../seal.js";
import type { VariantSearchRequest, VariantSearchResult } from "../wire/variant.js";
import { type SearchInclude, searchMemories } from "./search.js";

/** How deep `next` cursors page into one ranking (ranked search is not a full scan of the scope). */
export const SEARCH_CURSOR_DEPTH = 300;
const CURSOR_PURPOSE = "mnemo:search-cursor";

/** A search cursor names one query: same organisation, query, filters and include. */
function queryFingerprint(input: VariantSearchRequest): string {
  return fingerprint([input.query, input.filters ?? null, [...(input.include ?? [])].sort()]);
}

/** Memory ids (UUIDs) as one base64url string of their bytes, for a cursor; and back. */
const packIds = (ids: string[]) =>
  Buffer.concat(ids.map((id) => Buffer.from(id.replaceAll("-", ""), "hex"))).toString("base64url");
const unpackIds = (packed: string) => {
  const raw = Buffer.from(packed, "base64url");
  const ids: string[] = [];
  for (let at = 0; at + 16 <= raw.length; at += 16) {
    const h = raw.toString("hex", at, at + 16);
    ids.push(`${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
  }
  return ids;
};

/** The ids the pages before this cursor served. */
function openCursor(ctx: Ctx, input: VariantSearchRequest, cursor: string): string[] {
  const p = unseal(ctx.deps.secret, CURSOR_PURPOSE, cursor) as
    | { v?: unknown; org?: unknown; q?: unknown; s?: unknown }
    | undefined;
  const served = p?.v === 2 && typeof p.s === "string" ? unpackIds(p.s) : [];
  if (
    p?.v !== 2 ||
    p.org !== ctx.principal.orgId ||
    p.q !== queryFingerprint(input) ||
    served.length === 0 ||
    served.length >= SEARCH_CURSOR_DEPTH
  ) {
    throw new CoreError(
      "cursor_mismatch",
      "The cursor was not issued for this organisation, query, filters and include, or it is damaged, or the server key (MNEMO_SECRET_KEY) changed or differs between the server's processes. Restart from the first page.",
      { field: "cursor" },
    );
  }
  return served;
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
  // `cursor` pages further down the ranking, up to SEARCH_CURSOR_DEPTH rows: each page ranks as
  // deep as the rows served before it, this page and one more (which says whether there is a next
  // page), and leaves out what was served, which the cursor carries. A ranking depends on how deep
  // it looks, so pages cut by position from rankings of different depths repeated some rows and
  // skipped others. The context block belongs to the first page only.
  const served = input.cursor ? openCursor(ctx, input, input.cursor) : [];
  const limit = Math.min(input.limit ?? 20, SEARCH_CURSOR_DEPTH - served.length);
  const compose = contextPrompt && served.length === 0;
  // Lessons and procedures are in no default corpus: a `type` filter naming them (equality or
  // $in) searches them too, beside the content types (another branch of the filter may still ask
  // for those). They lead, as in search, and come under `results` only.
  const directives = filter ? DIRECTIVE_TYPES.filter((t) => namedValues(filter, "type").includes(t)) : [];
  const corpora: SearchInclude[] = [
    ...(directives.length ? [...CONTENT_TYPES, ...directives] : []),
    ...(include.includes("full_content") ? (["full_content"] as const) : []),
  ];
  const out = await searchMemories({
    ctx,
    input: {
      query: input.query,
      filter,
      mode: compose ? "compose" : "retrieve",
      ...(corpora.length ? { include: corpora } : {}),
      limit: Math.min(SEARCH_CURSOR_DEPTH, served.length + limit + 1),
    },
  });
  const before = new Set(served);
  const remaining = out.data.filter((m) => !before.has(m.id));
  const page = remaining.slice(0, limit);
  const next =
    remaining.length > limit && served.length + limit < SEARCH_CURSOR_DEPTH
      ? seal(ctx.deps.secret, CURSOR_PURPOSE, {
          v: 2,
          org: ctx.principal.orgId,
          q: queryFingerprint(input),
          s: packIds([...served, ...page.map((m) => m.id)]),
        })
      : null;
  const results = page.map(toVariant);
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
