import { createRoute } from "@hono/zod-openapi";
import { deleteMemoriesInScope, deleteMemory } from "../../src/memories/delete.js";
import { getMemory } from "../../src/memories/get.js";
import { listMemories } from "../../src/memories/list.js";
import { patchMemoryGroups } from "../../src/memories/patch.js";
import { listRevisions } from "../../src/memories/revisions.js";
import {
  DeleteMemoriesQuery,
  ListMemoriesQuery,
  listMemoriesInput,
  MemoryDeletionSchema,
  MemoryGroupPatchRequest,
  MemoryListSchema,
  MemoryParams,
  MemorySchema,
} from "../../src/wire/memories.js";
import { errorResponses, json } from "../schemas.js";
import type { App } from "../types.js";

const notFound = { 404: ["memory_not_found" as const] };

export function registerMemoryRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories",
      tags: ["memories"],
      summary: "List memories (keyset cursor pagination on created_at, id)",
      description:
        "A query parameter the route does not know (a misspelt `userId`, search's plural `group_ids`) is 422 `invalid_request` naming it, never dropped.",
      request: { query: ListMemoriesQuery },
      responses: {
        200: { description: "One page", ...json(MemoryListSchema) },
        ...errorResponses({
          422: [
            "invalid_limit",
            "invalid_order",
            "unsupported_include_option",
            "invalid_memory_type",
            "cursor_mismatch",
            "invalid_request",
          ],
        }),
      },
    }),
    async (c) => {
      const input = listMemoriesInput(c.req.valid("query"));
      return c.json(await listMemories({ ctx: c.get("ctx"), input }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/memories",
      tags: ["memories"],
      summary: "Forget a scope: hard-delete every memory of a user, agent, conversation or app",
      description:
        "Every memory of the organisation whose scope matches each axis given (at least one; 422 " +
        "`missing_scope` without): facts (superseded ones too), episodes, artifacts, lessons and procedures. " +
        "No tombstone. A key confined to a user forgets only its own user's, and a blank axis other than " +
        "`user_id` names no one (422 `missing_scope`). The scope's finished ingest jobs go too, with their " +
        "webhook deliveries still queued; other jobs' results no longer report the deleted memories.",
      request: { query: DeleteMemoriesQuery },
      responses: {
        200: { description: "What was deleted (0 when nothing matched)", ...json(MemoryDeletionSchema) },
        ...errorResponses({ 422: ["missing_scope"], 500: ["delete_failed"] }),
      },
    }),
    async (c) => c.json(await deleteMemoriesInScope({ ctx: c.get("ctx"), input: c.req.valid("query") }), 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/{memory_id}",
      tags: ["memories"],
      summary: "Read one memory (artifacts with full_content)",
      request: { params: MemoryParams },
      responses: { 200: { description: "The memory", ...json(MemorySchema) }, ...errorResponses(notFound) },
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
      responses: {
        200: { description: "The chain, one page", ...json(MemoryListSchema) },
        ...errorResponses(notFound),
      },
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
        body: { required: true, ...json(MemoryGroupPatchRequest) },
      },
      responses: {
        200: { description: "The memory with its new group_ids", ...json(MemorySchema) },
        ...errorResponses(
          {
            ...notFound,
            422: [
              "empty_patch",
              "contradictory_group_ids",
              "invalid_group_ids",
              "immutable_field",
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
      description:
        "No tombstone. A deleted fact leaves the episodes that list it (their fact ids, sentences, title topics " +
        "and vector), and every ingest job result that reported it.",
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
