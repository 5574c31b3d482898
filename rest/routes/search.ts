import { createRoute } from "@hono/zod-openapi";
import { searchMemories } from "../../src/search/search.js";
import { triggerDirectives } from "../../src/trigger/trigger.js";
import { SearchRequestSchema, SearchResultSchema, TriggerRequestSchema } from "../../src/wire/search.js";
import { errorResponses, json } from "../schemas.js";
import type { App } from "../types.js";

export function registerSearchRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories/search",
      tags: ["search"],
      summary: "Hybrid search, optionally composed into a markdown context block",
      request: { body: { required: true, ...json(SearchRequestSchema) } },
      responses: {
        200: { description: "Search envelope", ...json(SearchResultSchema) },
        ...errorResponses(
          {
            422: [
              "empty_query",
              "query_too_long",
              "invalid_mode",
              "unsupported_include_option",
              "invalid_limit",
              "missing_scope",
              "invalid_filters",
              "invalid_request",
            ],
            500: ["search_failed"],
          },
          { body: true },
        ),
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
      request: { body: { required: true, ...json(TriggerRequestSchema) } },
      responses: {
        200: { description: "Search envelope; rows are lessons and procedures", ...json(SearchResultSchema) },
        ...errorResponses(
          {
            422: [
              "invalid_mode",
              "unsupported_include_option",
              "namespace_too_long",
              "task_too_long",
              "missing_scope",
              "missing_trigger",
              "invalid_request",
            ],
            500: ["trigger_failed"],
          },
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
