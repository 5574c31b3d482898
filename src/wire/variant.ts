import { z } from "@hono/zod-openapi";
import { DigitsLimit, Ident, JsonObject, Limit, LooseText, Str } from "./common.js";
import { IngestRequestSchema } from "./ingest.js";
import { GroupIdList, MemorySchema } from "./memories.js";

/*
 * The variant shapes of spec 4.12, served on trailing-slash paths (`/v1/memories/`, `/v1/memories/add/`,
 * `/v1/memories/search/`, `/v1/memories/{id}/`). Items carry `memory` instead of `text`; lists are
 * `{count, next, previous, results}`; filters use the filter language (src/memories/filters.ts).
 */

export const VARIANT_LIST_LIMIT_MAX = 100;
export const VARIANT_LIST_LIMIT_DEFAULT = 50;
export const VARIANT_SEARCH_LIMIT_DEFAULT = 20;

export const VariantMemorySchema = MemorySchema.omit({ text: true })
  .extend({ memory: z.string().openapi({ description: "The memory's short text (`text` elsewhere)." }) })
  .openapi("VariantMemory");
export type VariantMemory = z.infer<typeof VariantMemorySchema>;

const Filters = JsonObject("expected an object of conditions").openapi("Filters", {
  description:
    "Filter language: `{field: value}` equality, or `{field: {$eq|$ne|$in|$nin|$exists|$gt|$gte|$lt|$lte|$between: …}}`, " +
    "combined with `AND`, `OR` (arrays) and `NOT` (an object), nested at most 8 levels and 100 conditions (field comparisons; AND, OR and NOT at most 100 of their own), naming " +
    "at most MNEMO_MAX_GROUP_IDS_PER_QUERY group ids in all (default 100; more is 422 `invalid_request`). Fields: " +
    "user_id, agent_id, conv_id, app_id, type, status, categories, group_ids, created_at, updated_at (ISO 8601; a " +
    "day without a time is the whole day in UTC: `$lte` and `$between`'s high end take it in, `$gt` starts after it) and " +
    "`metadata.<key>` (a bare unknown key means metadata). It must pin a scope axis (equality or $in on user_id, " +
    "agent_id, app_id or group_ids). A malformed filter is 422 `invalid_filters` naming the path.",
  example: {
    AND: [{ user_id: "u1" }, { created_at: { $gte: "2026-01-01" } }, { "metadata.topic": "travel" }],
  },
});

export const VariantSearchRequestSchema = z
  .object({
    query: Str().min(1).max(4000),
    filters: Filters.nullish(),
    limit: Limit(VARIANT_LIST_LIMIT_MAX)
      .default(VARIANT_SEARCH_LIMIT_DEFAULT)
      .openapi({ description: "1..100, default 20." }),
    cursor: Str()
      .nullish()
      .openapi({
        description:
          "`next` of an earlier page of the same query, filters and include (else 422 `cursor_mismatch`); pages reach 300 rows deep, " +
          "and no row comes on two pages (each page leaves out the rows already served).",
      }),
    include: z
      .array(z.enum(["full_content", "context_prompt"]))
      .optional()
      .openapi({
        description:
          "`full_content`: artifact bodies; `context_prompt`: a markdown context block under `extras.context_prompt` " +
          "(needs `user_id` and `conv_id` in the filters).",
      }),
  })
  .openapi("VariantSearchRequest");
export type VariantSearchRequest = z.input<typeof VariantSearchRequestSchema>;

export const VariantSearchResultSchema = z
  .object({
    results: z.array(VariantMemorySchema),
    facts: z.array(VariantMemorySchema),
    artifacts: z.array(VariantMemorySchema),
    episodes: z.array(VariantMemorySchema),
    context: z.string().nullable(),
    mode: z
      .enum(["flat", "context"])
      .openapi({ description: "`context` on the first page of a `context_prompt` search." }),
    next: z
      .string()
      .nullable()
      .openapi({ description: "Cursor of the next page of this ranking, or null on the last one." }),
    extras: z
      .object({ context_prompt: z.string(), stage_timings: z.record(z.string(), z.number()) })
      .optional(),
  })
  .openapi("VariantSearchResult");
export type VariantSearchResult = z.infer<typeof VariantSearchResultSchema>;

const ListLimit = DigitsLimit(VARIANT_LIST_LIMIT_MAX).default(VARIANT_LIST_LIMIT_DEFAULT);

export const VariantListRequestSchema = z
  .object({
    filters: Filters.nullish(),
    limit: ListLimit.openapi({
      type: "integer",
      minimum: 1,
      maximum: VARIANT_LIST_LIMIT_MAX,
      default: VARIANT_LIST_LIMIT_DEFAULT,
      description: "1..100, default 50.",
    }),
    cursor: Str().nullish().openapi({ description: "`next` or `previous` of an earlier page." }),
    include: z.array(z.enum(["full_content"])).optional(),
  })
  // A field it does not know is a 422, never dropped: dropped, `{"user_id": "a"}` or a misspelt
  // `filter` listed every user's rows, and an ingest body sent here stored nothing.
  .strict()
  .openapi("VariantListRequest");
export type VariantListRequest = z.input<typeof VariantListRequestSchema>;

const q = (name: string, value = Str()) => value.optional().openapi({ param: { name, in: "query" } });
export const VariantListQuery = z
  .object({
    user_id: q("user_id", Ident()),
    agent_id: q("agent_id", Ident()),
    conv_id: q("conv_id", Ident()),
    app_id: q("app_id", Ident()),
    group_id: q("group_id", Ident()).openapi({
      description: "Rows tagged with this group id, as on GET /v1/memories.",
    }),
    type: z
      .enum(["fact", "artifact", "episode", "lesson", "procedure"])
      .optional()
      .openapi({ param: { name: "type", in: "query" } }),
    limit: ListLimit.openapi({
      param: { name: "limit", in: "query" },
      type: "integer",
      minimum: 1,
      maximum: VARIANT_LIST_LIMIT_MAX,
      default: VARIANT_LIST_LIMIT_DEFAULT,
    }),
    cursor: q("cursor"),
  })
  // Unknown parameters are a 422, as on the POST form above and on GET /v1/memories.
  .strict();

export const VariantListSchema = z
  .object({
    count: z.number().int().openapi({
      description:
        "Rows matching the filters (all pages), counted when the first page was read; the cursors carry that count to later pages. A cursor sent with other filters counts afresh.",
    }),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(VariantMemorySchema),
  })
  .openapi("VariantList");
export type VariantList = z.infer<typeof VariantListSchema>;

const VariantPatchBody = z
  .looseObject({
    // Free text, as message content: NUL dropped, a lone surrogate U+FFFD (a 500 before).
    text: LooseText()
      .optional()
      .openapi({
        description:
          "Facts only: supersedes the fact with this text. Free text as message content: a NUL is dropped " +
          "and a lone surrogate becomes U+FFFD; empty or blank is 422 `empty_text_field`.",
      }),
    metadata: JsonObject()
      .optional()
      .openapi({ description: "Merged onto the memory's metadata; keys are never deleted." }),
    add_group_ids: GroupIdList,
    remove_group_ids: GroupIdList,
  })
  .openapi("VariantPatchRequest");

/**
 * The variant PATCH refuses a field it does not take (src/memories/variant.ts), but zod's object
 * leaves a `__proto__` key out of its output (assigning it would set the prototype), so
 * `{"__proto__": {...}, "metadata": {...}}` was merged with the key silently gone, and
 * `{"__proto__": {...}}` alone read as an empty patch. It is refused here, from the body as sent,
 * as any other unknown field is. (Inside `metadata` it is a key like any other: JsonObject.)
 */
export const VariantPatchRequestSchema = z.preprocess((body, check) => {
  if (body && typeof body === "object" && !Array.isArray(body) && Object.hasOwn(body, "__proto__")) {
    check.addIssue({
      code: "custom",
      path: ["__proto__"],
      message: "Unknown field; a PATCH takes text, metadata, add_group_ids and remove_group_ids.",
      params: { code: "invalid_request" },
    });
  }
  return body;
}, VariantPatchBody);
export type VariantPatchRequest = z.output<typeof VariantPatchBody>;
/** The PATCH body as a caller writes it (the preprocess step's input is `unknown`). */
export type VariantPatchInput = z.input<typeof VariantPatchBody>;

export const VariantAddRequestSchema = IngestRequestSchema;

const AddItem = z
  .object({
    id: z.string(),
    type: z.string(),
    memory: z.string(),
    event: z.enum(["ADD", "UPDATE"]),
  })
  .openapi("VariantAddItem");

export const VariantAddResultSchema = z
  .object({
    results: z.array(AddItem),
    stored_facts: z.number().int(),
    stored_artifacts: z.number().int(),
    flush_result: z.null(),
    mode: z.enum(["chat", "import"]),
    status: z.enum(["pending", "running", "succeeded", "failed"]),
    message: z.string(),
    job_id: z.string(),
    stage_timings: z.record(z.string(), z.number()),
  })
  .openapi("VariantAddResult");
export type VariantAddResult = z.infer<typeof VariantAddResultSchema>;
