import { createRoute } from "@hono/zod-openapi";
import { addVariant } from "../../src/ingest/add-variant.js";
import { deleteMemory } from "../../src/memories/delete.js";
import { getMemory } from "../../src/memories/get.js";
import { listVariant, patchVariant, toVariant } from "../../src/memories/variant.js";
import { searchVariant } from "../../src/search/variant.js";
import { MemoryParams } from "../../src/wire/memories.js";
import {
  VariantAddRequestSchema,
  VariantAddResultSchema,
  VariantListQuery,
  VariantListRequestSchema,
  VariantListSchema,
  VariantMemorySchema,
  VariantPatchRequestSchema,
  VariantSearchRequestSchema,
  VariantSearchResultSchema,
} from "../../src/wire/variant.js";
import { errorResponses, INGEST_ERRORS, json } from "../schemas.js";
import type { App } from "../types.js";

/**
 * The variant shapes of spec 4.12 on trailing-slash paths (Hono's strict routing keeps
 * `/v1/memories` and `/v1/memories/` apart, so the routes without a slash keep their contract).
 */
export function registerVariantRoutes(app: App) {
  const tags = ["memories (variant shapes)"];
  const notFound = { 404: ["memory_not_found" as const] };

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories/add/",
      tags,
      summary:
        "Ingest and answer inline (held up to the wait window; past it, status pending with the job id)",
      request: { body: { required: true, ...json(VariantAddRequestSchema) } },
      responses: {
        200: { description: "The inline result", ...json(VariantAddResultSchema) },
        ...errorResponses(INGEST_ERRORS, { body: true }),
      },
    }),
    async (c) => c.json(await addVariant({ ctx: c.get("ctx"), input: c.req.valid("json") }), 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories/search/",
      tags,
      summary: "Search with the filter language; results split by type",
      request: { body: { required: true, ...json(VariantSearchRequestSchema) } },
      responses: {
        200: { description: "Search results", ...json(VariantSearchResultSchema) },
        ...errorResponses(
          {
            422: [
              "missing_scope",
              "invalid_filters",
              "missing_user_id",
              "missing_conv_id",
              "empty_query",
              "query_too_long",
              "invalid_limit",
              "unsupported_include_option",
              "cursor_mismatch",
              "invalid_request",
            ],
            500: ["search_failed"],
          },
          { body: true },
        ),
      },
    }),
    async (c) => c.json(await searchVariant({ ctx: c.get("ctx"), input: c.req.valid("json") }), 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories/",
      tags,
      summary: "List memories with the filter language in the body, newest first",
      request: { body: { required: true, ...json(VariantListRequestSchema) } },
      responses: {
        200: { description: "One page", ...json(VariantListSchema) },
        ...errorResponses(
          {
            422: [
              "missing_scope",
              "invalid_filters",
              "invalid_limit",
              "unsupported_include_option",
              "cursor_mismatch",
              "invalid_request",
            ],
          },
          { body: true },
        ),
      },
    }),
    async (c) => {
      const { include, ...body } = c.req.valid("json");
      const input = { ...body, fullContent: include?.includes("full_content") ?? false };
      return c.json(await listVariant({ ctx: c.get("ctx"), input }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/",
      tags,
      summary: "List memories (exact-match query parameters), newest first",
      description:
        "A query parameter the route does not know is 422 `invalid_request` naming it, never dropped.",
      request: { query: VariantListQuery },
      responses: {
        200: { description: "One page", ...json(VariantListSchema) },
        ...errorResponses({
          422: ["invalid_limit", "invalid_memory_type", "cursor_mismatch", "invalid_request"],
        }),
      },
    }),
    async (c) => c.json(await listVariant({ ctx: c.get("ctx"), input: c.req.valid("query") }), 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/{memory_id}/",
      tags,
      summary: "Read one memory (variant shape)",
      request: { params: MemoryParams },
      responses: {
        200: { description: "The memory", ...json(VariantMemorySchema) },
        ...errorResponses(notFound),
      },
    }),
    async (c) =>
      c.json(
        toVariant(await getMemory({ ctx: c.get("ctx"), input: { id: c.req.valid("param").memory_id } })),
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/v1/memories/{memory_id}/",
      tags,
      summary: "Supersede a fact's text, merge metadata, edit group tags",
      request: { params: MemoryParams, body: { required: true, ...json(VariantPatchRequestSchema) } },
      responses: {
        200: {
          description: "The memory as it now stands (the new fact after a text change)",
          ...json(VariantMemorySchema),
        },
        ...errorResponses(
          {
            ...notFound,
            422: [
              "empty_patch",
              "empty_text_field",
              "immutable_field",
              "reserved_field",
              "invalid_metadata",
              "contradictory_group_ids",
              "invalid_group_ids",
              "invalid_request",
            ],
            500: ["patch_failed"],
          },
          { body: true },
        ),
      },
    }),
    async (c) =>
      c.json(
        await patchVariant({
          ctx: c.get("ctx"),
          input: { id: c.req.valid("param").memory_id, patch: c.req.valid("json") },
        }),
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/memories/{memory_id}/",
      tags,
      summary: "Hard-delete a memory",
      request: { params: MemoryParams },
      responses: {
        204: { description: "Deleted" },
        ...errorResponses({ ...notFound, 500: ["delete_failed"] }),
      },
    }),
    async (c) => {
      await deleteMemory({ ctx: c.get("ctx"), input: { id: c.req.valid("param").memory_id } });
      return c.body(null, 204);
    },
  );
}
