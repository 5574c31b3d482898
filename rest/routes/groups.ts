import { createRoute, z } from "@hono/zod-openapi";
import { archiveGroup } from "../../src/groups/archive.js";
import { createGroup } from "../../src/groups/create.js";
import { getGroup } from "../../src/groups/get.js";
import { listGroups } from "../../src/groups/list.js";
import { GROUP_NAME_MAX, GROUP_PROMPT_MAX } from "../../src/groups/model.js";
import { updateGroup } from "../../src/groups/update.js";
import { DateTime, errorResponses, Str } from "../schemas.js";
import type { App } from "../types.js";

export const GroupSchema = z
  .object({
    id: z.string().openapi({ example: "grp_0123456789abcdef0123456789abcdef" }),
    object: z.literal("group"),
    name: z.string(),
    prompt: z
      .string()
      .nullable()
      .openapi({ description: "Classifier criterion; null marks a catch-all group." }),
    status: z.enum(["active", "archived"]),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .openapi("Group");

export const GroupListSchema = z
  .object({
    object: z.literal("list"),
    data: z.array(GroupSchema),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
  })
  .openapi("GroupList");

const Name = Str().trim().min(1).max(GROUP_NAME_MAX);
const Prompt = Str().trim().min(1).max(GROUP_PROMPT_MAX);

const CreateGroupRequest = z
  .object({
    name: Name,
    prompt: Prompt.nullable()
      .optional()
      .openapi({ description: "What belongs in the group. Omitted or null: a catch-all group." }),
  })
  .openapi("CreateGroupRequest");

const UpdateGroupRequest = z
  .object({
    name: Name.nullable().optional(),
    prompt: Prompt.nullable()
      .optional()
      .openapi({ description: "Sets the criterion (also on a catch-all group); it can never be removed." }),
    status: z.string().nullable().optional().openapi({
      description: "`active` (un-archives) or `archived`; anything else is 422 `invalid_request`.",
    }),
  })
  .openapi("UpdateGroupRequest");

const GroupParams = z.object({
  group_id: z
    .string()
    .openapi({ param: { name: "group_id", in: "path" }, example: "grp_0123456789abcdef0123456789abcdef" }),
});

const json = <T>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const BoolQuery = z
  .enum(["true", "false", "1", "0"])
  .optional()
  .transform((v) => v === "true" || v === "1");

export function registerGroupRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/groups",
      tags: ["groups"],
      summary: "Register a group",
      request: {
        body: { required: true, content: { "application/json": { schema: CreateGroupRequest } } },
      },
      responses: {
        201: json(GroupSchema, "The new active group"),
        ...errorResponses({ 422: ["groups_quota_exceeded"] }, { body: true }),
      },
    }),
    async (c) => c.json(await createGroup({ ctx: c.get("ctx"), input: c.req.valid("json") }), 201),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/groups",
      tags: ["groups"],
      summary: "List the organisation's groups (one page, no cursor)",
      request: {
        query: z.object({
          include_archived: BoolQuery.openapi({
            param: { name: "include_archived", in: "query" },
            type: "boolean",
            description: "Include archived groups (default false).",
          }),
        }),
      },
      responses: { 200: json(GroupListSchema, "Groups, oldest first"), ...errorResponses() },
    }),
    async (c) =>
      c.json(
        await listGroups({
          ctx: c.get("ctx"),
          input: { includeArchived: c.req.valid("query").include_archived },
        }),
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/groups/{group_id}",
      tags: ["groups"],
      summary: "Read a group",
      request: { params: GroupParams },
      responses: { 200: json(GroupSchema, "The group"), ...errorResponses({ 404: ["group_not_found"] }) },
    }),
    async (c) =>
      c.json(await getGroup({ ctx: c.get("ctx"), input: { id: c.req.valid("param").group_id } }), 200),
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/v1/groups/{group_id}",
      tags: ["groups"],
      summary: "Update a group (null fields unchanged; status active un-archives)",
      request: {
        params: GroupParams,
        body: { required: true, content: { "application/json": { schema: UpdateGroupRequest } } },
      },
      responses: {
        200: json(GroupSchema, "The updated group"),
        ...errorResponses(
          { 404: ["group_not_found"], 422: ["invalid_request", "groups_quota_exceeded"] },
          { body: true },
        ),
      },
    }),
    async (c) =>
      c.json(
        await updateGroup({
          ctx: c.get("ctx"),
          input: { ...c.req.valid("json"), id: c.req.valid("param").group_id },
        }),
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/groups/{group_id}",
      tags: ["groups"],
      summary: "Archive a group (idempotent)",
      request: { params: GroupParams },
      responses: {
        200: json(GroupSchema, "The group, now archived"),
        ...errorResponses({ 404: ["group_not_found"] }),
      },
    }),
    async (c) =>
      c.json(await archiveGroup({ ctx: c.get("ctx"), input: { id: c.req.valid("param").group_id } }), 200),
  );
}
