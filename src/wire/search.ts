import { z } from "@hono/zod-openapi";
import { GROUP_IDS_PER_QUERY_CEILING } from "../config.js";
import { translateLegacySearch } from "../search/legacy.js";
import { Ident, Limit, NullableString, nestsDeeper, Str } from "./common.js";
import { MemorySchema } from "./memories.js";

const NullableStr = () => Ident().nullable();

const ScopeFields = {
  user_id: NullableStr().optional().openapi({ description: "Scope axis (exact match)." }),
  agent_id: NullableStr().optional().openapi({ description: "Scope axis (exact match)." }),
  app_id: NullableStr().optional().openapi({ description: "Scope axis (exact match)." }),
  group_ids: z
    .array(Ident())
    .nullable()
    .optional()
    .openapi({
      description:
        "Scope axis: rows tagged with at least one of these groups. At most MNEMO_MAX_GROUP_IDS_PER_QUERY " +
        `ids (default 100, configurable up to ${GROUP_IDS_PER_QUERY_CEILING}); more is 422 \`invalid_request\`.`,
      maxItems: GROUP_IDS_PER_QUERY_CEILING,
    }),
};
const Mode = z.enum(["compose", "retrieve"]);

const SearchBody = z
  .object({
    query: Str().min(1).max(4000),
    ...ScopeFields,
    mode: Mode.optional().openapi({ description: "`compose` (default) or `retrieve`." }),
    include: z
      .array(z.enum(["fact", "artifact", "episode", "lesson", "procedure", "full_content"]))
      .optional()
      .openapi({
        description:
          "Corpora to search (default fact, artifact, episode). `lesson`/`procedure` add matched directives, " +
          "which lead the list with a null score. `full_content` returns artifact bodies.",
      }),
    limit: Limit(100)
      .optional()
      .openapi({ description: "1..100, default 20; the whole list, leading directives included." }),
  })
  .openapi("SearchRequest");

/** The search request; legacy shapes are rewritten to the current one before the fields are checked. */
export const SearchRequestSchema = z.preprocess(
  (body, ctx) => translateLegacySearch(body, (i) => ctx.addIssue({ code: "custom", input: body, ...i })),
  SearchBody,
);
export type SearchRequest = z.input<typeof SearchBody>;

/** A tool call's arguments nest at most this many levels (identifiers are read from 12). */
const ARGS_MAX_DEPTH = 32;

const ActionContext = z
  .object({
    tool: NullableString.optional(),
    // Serialised for the query text (describeAction): 5,000 levels overflowed the stack, a 500.
    args: z
      .record(z.string(), z.unknown())
      .refine((a) => !nestsDeeper(a, ARGS_MAX_DEPTH), {
        message: `Tool arguments may nest at most ${ARGS_MAX_DEPTH} levels`,
      })
      .nullable()
      .optional()
      .openapi({
        description: `The tool call's arguments, as sent; at most ${ARGS_MAX_DEPTH} levels of nesting.`,
      }),
    output: NullableString.optional(),
  })
  .openapi("ActionContext");

export const TriggerRequestSchema = z
  .object({
    action: ActionContext.nullable().optional(),
    entities: z.array(Ident()).nullable().optional(),
    include: z.array(z.enum(["lesson", "procedure"])).optional(),
    namespace: Ident().nullable().optional(),
    task: z.string().max(2000).nullable().optional(),
    mode: Mode.optional(),
    ...ScopeFields,
  })
  .openapi("TriggerRequest");
export type TriggerRequest = z.input<typeof TriggerRequestSchema>;

/** What search and trigger answer. */
export const SearchResultSchema = z
  .object({
    object: z.literal("search"),
    mode: Mode,
    data: z.array(MemorySchema),
    context: z.string().nullable(),
    context_selection_applied: z.boolean(),
    stage_timings: z.record(z.string(), z.number()),
  })
  .openapi("SearchResult");
export type SearchResult = z.infer<typeof SearchResultSchema>;
