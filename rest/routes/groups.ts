import { createRoute, z } from "@hono/zod-openapi";
import { archiveGroup } from "../../src/groups/archive.js";
import { createGroup } from "../../src/groups/create.js";
import { getGroup } from "../../src/groups/get.js";
import { listGroups } from "../../src/groups/list.js";
import { updateGroup } from "../../src/groups/update.js";
import { QueryBool } from "../../src/wire/common.js";
import {
  CreateGroupRequest,
  GroupListSchema,
  GroupParams,
  GroupSchema,
  UpdateGroupRequest,
} from "../../src/wire/groups.js";
import { errorResponses, json } from "../schemas.js";
import type { App } from "../types.js";

export function registerGroupRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/groups",
      tags: ["groups"],
      summary: "Register a group",
      request: { body: { required: true, ...json(CreateGroupRequest) } },
      responses: {
        201: { description: "The new active group", ...json(GroupSchema) },
        ...errorResponses(
          {
            422: ["empty_name", "name_too_long", "empty_prompt", "prompt_too_long", "groups_quota_exceeded"],
          },
          { body: true },
        ),
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
        query: z
          .object({
            include_archived: QueryBool.openapi({
              param: { name: "include_archived", in: "query" },
              description: "Include archived groups (default false).",
            }),
          })
          // A parameter it does not know (`limit`, `cursor`: the list is one page) is a 422 naming it.
          .strict(),
      },
      responses: {
        200: { description: "Groups, oldest first", ...json(GroupListSchema) },
        ...errorResponses(),
      },
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
      responses: {
        200: { description: "The group", ...json(GroupSchema) },
        ...errorResponses({ 404: ["group_not_found"] }),
      },
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
      request: { params: GroupParams, body: { required: true, ...json(UpdateGroupRequest) } },
      responses: {
        200: { description: "The updated group", ...json(GroupSchema) },
        ...errorResponses(
          {
            404: ["group_not_found"],
            422: [
              "empty_name",
              "name_too_long",
              "empty_prompt",
              "prompt_too_long",
              "invalid_request",
              "groups_quota_exceeded",
            ],
          },
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
        200: { description: "The group, now archived", ...json(GroupSchema) },
        ...errorResponses({ 404: ["group_not_found"] }),
      },
    }),
    async (c) =>
      c.json(await archiveGroup({ ctx: c.get("ctx"), input: { id: c.req.valid("param").group_id } }), 200),
  );
}
