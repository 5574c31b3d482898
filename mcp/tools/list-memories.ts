import { z } from "zod";
import { JsonObject } from "../../src/wire/common.js";
import { MemoryListSchema } from "../../src/wire/memories.js";
import { ToolFailure } from "../errors.js";
import { listFromVariant, scopedFilters, withCallerPaths } from "../filters.js";
import { memoryList } from "../render.js";
import { agentId, appId, userId } from "../schemas.js";
import { defineTool, readScope } from "../tool.js";

export const listMemoriesTool = defineTool({
  name: "list_memories",
  title: "List memories",
  description:
    "List stored memories, newest first, one page at a time (pass `cursor` = the previous next_cursor for more). " +
    "Filters are exact matches; when no user_id, agent_id, app_id, conv_id or group_id is given the configured " +
    "defaults apply (with `filters`, conv_id does not count: the defaults apply unless a user, agent, app or " +
    "group is named).",
  input: {
    user_id: userId,
    agent_id: agentId,
    app_id: appId,
    conv_id: z.string().min(1).optional().describe("Only memories from this conversation."),
    group_id: z.string().min(1).optional().describe("Only memories tagged with this group id."),
    type: z.enum(["fact", "artifact", "episode"]).optional().describe("Only this kind of memory."),
    limit: z.number().int().min(1).max(500).default(20).describe("Page size (1-500)."),
    cursor: z.string().optional().describe("next_cursor from the previous page."),
    order: z.enum(["created_at_desc", "created_at_asc"]).optional().describe("Default newest first."),
    full_content: z.boolean().optional().describe("True to include artifacts' full bodies."),
    filters: JsonObject("expected an object of conditions")
      .optional()
      .describe(
        'Optional filter language, e.g. {"metadata.project": "apollo", "type": {"$in": ["fact", "episode"]}} ' +
          "(operators $eq $ne $in $nin $exists $gt $gte $lt $lte $between, AND/OR/NOT). With filters the page " +
          "size is at most 100, the order newest first (created_at_asc is refused), and a next page needs the same " +
          "filters with the cursor.",
      ),
  },
  output: MemoryListSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    if (args.filters) {
      if (args.order === "created_at_asc")
        throw new ToolFailure("invalid_order", "With filters the order is newest first: leave out order.");
      const exact: Record<string, unknown>[] = [];
      if (args.conv_id) exact.push({ conv_id: args.conv_id });
      if (args.group_id) exact.push({ group_ids: args.group_id });
      if (args.type) exact.push({ type: args.type });
      const given = exact.length ? { AND: [...exact, args.filters] } : args.filters;
      const filters = scopedFilters(args, given, env.scope);
      const out = listFromVariant(
        await withCallerPaths(args.filters, filters, () =>
          env.service.listFiltered({
            filters,
            limit: args.limit,
            ...(args.cursor ? { cursor: args.cursor } : {}),
            ...(args.full_content ? { include: ["full_content"] } : {}),
          }),
        ),
      );
      const more = out.has_more
        ? `\nMore: call again with the same filters and cursor ${out.next_cursor}`
        : "";
      return { structured: out, text: memoryList(out.data, "No memories.") + more };
    }
    const scope = readScope({ ...args, ...(args.group_id ? { group_ids: [args.group_id] } : {}) }, env.scope);
    const out = await env.service.listMemories({
      user_id: scope.user_id,
      agent_id: scope.agent_id,
      app_id: scope.app_id,
      conv_id: args.conv_id,
      group_id: args.group_id,
      type: args.type,
      limit: args.limit,
      cursor: args.cursor,
      order: args.order,
      include: args.full_content ? "full_content" : undefined,
    });
    const more = out.has_more ? `\nMore: call again with cursor ${out.next_cursor}` : "";
    return { structured: out, text: memoryList(out.data, "No memories.") + more };
  },
});
