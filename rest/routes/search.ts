import { createRoute, z } from "@hono/zod-openapi";
import { translateLegacySearch } from "../../src/search/legacy.js";
import { searchMemories } from "../../src/search/search.js";
import { triggerDirectives } from "../../src/trigger/trigger.js";
import { errorResponses, NullableString, Str } from "../schemas.js";
import type { App } from "../types.js";
import { MemorySchema } from "./memories.js";

const NullableStr = () => Str().nullable();

const ScopeFields = {
  user_id: NullableStr().optional().openapi({ description: "Scope axis (exact match)." }),
  agent_id: NullableStr().optional().openapi({ description: "Scope axis (exact match)." }),
  app_id: NullableStr().optional().openapi({ description: "Scope axis (exact match)." }),
  group_ids: z
    .array(Str())
    .nullable()
    .optional()
    .openapi({ description: "Scope axis: rows tagged with at least one of these groups." }),
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
    limit: z.number().int().min(1).max(100).optional().openapi({ description: "1..100, default 20." }),
  })
  .openapi("SearchRequest");

// Legacy shapes (4.8 rule 8) are rewritten before validation, here and nowhere else.
const SearchRequest = z.preprocess(translateLegacySearch, SearchBody);

const ActionContext = z
  .object({
    tool: NullableString.optional(),
    args: z.record(z.string(), z.unknown()).nullable().optional(),
    output: NullableString.optional(),
  })
  .openapi("ActionContext");

const TriggerRequest = z
  .object({
    action: ActionContext.nullable().optional(),
    entities: z.array(Str()).nullable().optional(),
    include: z.array(z.enum(["lesson", "procedure"])).optional(),
    namespace: Str().max(256).nullable().optional(),
    task: z.string().max(2000).nullable().optional(),
    mode: Mode.optional(),
    ...ScopeFields,
  })
  .openapi("TriggerRequest");

const SearchEnvelope = z
  .object({
    object: z.literal("search"),
    mode: Mode,
    data: z.array(MemorySchema),
    context: z.string().nullable(),
    context_selection_applied: z.boolean(),
    stage_timings: z.record(z.string(), z.number()),
  })
  .openapi("SearchResult");

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

export function registerSearchRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories/search",
      tags: ["search"],
      summary: "Hybrid search, optionally composed into a markdown context block",
      request: { body: { required: true, ...json(SearchRequest) } },
      responses: {
        200: { description: "Search envelope", ...json(SearchEnvelope) },
        ...errorResponses({ 422: ["missing_scope"], 500: ["search_failed"] }, { body: true }),
      },
    }),
    async (c) => {
      const result = await searchMemories({ ctx: c.get("ctx"), input: c.req.valid("json") });
      return c.json(result, 200);
    },
  );
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories/trigger",
      tags: ["search"],
      summary: "Procedural recall for an agent's pre-tool-call hook",
      request: { body: { required: true, ...json(TriggerRequest) } },
      responses: {
        200: { description: "Search envelope; rows are lessons and procedures", ...json(SearchEnvelope) },
        ...errorResponses(
          { 422: ["missing_scope", "missing_trigger"], 500: ["trigger_failed"] },
          { body: true },
        ),
      },
    }),
    async (c) => {
      const result = await triggerDirectives({ ctx: c.get("ctx"), input: c.req.valid("json") });
      return c.json(result, 200);
    },
  );
}
