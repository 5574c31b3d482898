import { createRoute, z } from "@hono/zod-openapi";
import { deleteMemory } from "../../src/memories/delete.js";
import { getMemory } from "../../src/memories/get.js";
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, listMemories } from "../../src/memories/list.js";
import { MEMORY_TYPES } from "../../src/memories/model.js";
import { patchMemoryGroups } from "../../src/memories/patch.js";
import { listRevisions } from "../../src/memories/revisions.js";
import { DateTime, errorResponses, Str } from "../schemas.js";
import type { App } from "../types.js";

/** The Memory wire shape (section 2.1); other routes that return memories can reuse it. */
export const MemorySchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    object: z.literal("memory"),
    type: z.enum(MEMORY_TYPES),
    text: z.string(),
    user_id: z.string().nullable(),
    agent_id: z.string().nullable(),
    conv_id: z.string().nullable(),
    app_id: z.string().nullable(),
    group_ids: z.array(z.string()),
    categories: z.array(z.string()),
    score: z.number().nullable(),
    created_at: DateTime.nullable(),
    updated_at: DateTime.nullable(),
    details: z
      .record(z.string(), z.unknown())
      .openapi({ description: "Always an object; its shape depends on `type`." }),
  })
  .openapi("Memory");

export const MemoryListSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(MemorySchema),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
  })
  .openapi("MemoryList");

const q = (name: string, description: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, description });

const ListQuery = z.object({
  user_id: q("user_id", "Exact match; ANDed with the other filters."),
  agent_id: q("agent_id", "Exact match."),
  conv_id: q("conv_id", "Exact match."),
  app_id: q("app_id", "Exact match."),
  group_id: q("group_id", "Rows tagged with this group id."),
  type: z
    .enum(["fact", "artifact", "episode"])
    .optional()
    .openapi({ param: { name: "type", in: "query" }, description: "Default: all three." }),
  cursor: q("cursor", "`next_cursor` of the previous page (same organisation and order)."),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(LIST_LIMIT_MAX)
    .default(LIST_LIMIT_DEFAULT)
    .openapi({
      param: { name: "limit", in: "query" },
      type: "integer",
      minimum: 1,
      maximum: LIST_LIMIT_MAX,
      default: LIST_LIMIT_DEFAULT,
    }),
  order: z
    .enum(["created_at_desc", "created_at_asc"])
    .default("created_at_desc")
    .openapi({ param: { name: "order", in: "query" } }),
  include: z
    .string()
    .optional()
    .refine(
      (v) =>
        v === undefined ||
        v
          .split(",")
          .map((s) => s.trim())
          .every((s) => s === "" || s === "full_content"),
      { message: "only `full_content` is supported" },
    )
    .openapi({
      param: { name: "include", in: "query" },
      description: "Comma-separated; only `full_content` (fills `details.full_content` on artifacts).",
    }),
});

const MemoryParams = z.object({
  memory_id: z.string().openapi({ param: { name: "memory_id", in: "path" }, format: "uuid" }),
});

const GroupIdList = z.array(Str().max(200)).max(1000).nullable().optional();
const MemoryGroupPatchRequest = z
  .object({
    add_group_ids: GroupIdList.openapi({ description: "Active groups of the organisation to add." }),
    remove_group_ids: GroupIdList.openapi({
      description: "Tags to remove (not checked against the registry).",
    }),
  })
  .openapi("MemoryGroupPatchRequest");

const json = <T>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const notFound = { 404: ["memory_not_found" as const] };

export function registerMemoryRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories",
      tags: ["memories"],
      summary: "List memories (keyset cursor pagination on created_at, id)",
      request: { query: ListQuery },
      responses: {
        200: json(MemoryListSchema, "One page"),
        ...errorResponses({ 422: ["cursor_mismatch"] }),
      },
    }),
    async (c) => {
      const { include, ...query } = c.req.valid("query");
      const fullContent = (include ?? "").split(",").some((s) => s.trim() === "full_content");
      return c.json(await listMemories({ ctx: c.get("ctx"), input: { ...query, fullContent } }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/{memory_id}",
      tags: ["memories"],
      summary: "Read one memory (artifacts with full_content)",
      request: { params: MemoryParams },
      responses: { 200: json(MemorySchema, "The memory"), ...errorResponses(notFound) },
    }),
    async (c) =>
      c.json(await getMemory({ ctx: c.get("ctx"), input: { id: c.req.valid("param").memory_id } }), 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/{memory_id}/revisions",
      tags: ["memories"],
      summary:
        "Revision chain, oldest first (facts: supersede chain; artifacts: versions; episodes: the row)",
      request: { params: MemoryParams },
      responses: { 200: json(MemoryListSchema, "The chain, one page"), ...errorResponses(notFound) },
    }),
    async (c) =>
      c.json(await listRevisions({ ctx: c.get("ctx"), input: { id: c.req.valid("param").memory_id } }), 200),
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/v1/memories/{memory_id}",
      tags: ["memories"],
      summary: "Edit a memory's group tags (set semantics; removal before addition)",
      request: {
        params: MemoryParams,
        body: { required: true, content: { "application/json": { schema: MemoryGroupPatchRequest } } },
      },
      responses: {
        200: json(MemorySchema, "The memory with its new group_ids"),
        ...errorResponses(
          {
            ...notFound,
            422: ["empty_patch", "contradictory_group_ids", "invalid_group_ids", "invalid_request"],
            500: ["patch_failed"],
          },
          { body: true },
        ),
      },
    }),
    async (c) =>
      c.json(
        await patchMemoryGroups({
          ctx: c.get("ctx"),
          input: { ...c.req.valid("json"), id: c.req.valid("param").memory_id },
        }),
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/memories/{memory_id}",
      tags: ["memories"],
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
