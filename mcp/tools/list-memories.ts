import { z } from "zod";
import { memoryList } from "../render.js";
import { agentId, appId, MemoryListOut, userId } from "../schemas.js";
import { defineTool, readScope } from "../tool.js";

export const listMemories = defineTool({
  name: "list_memories",
  title: "List memories",
  description:
    "List stored memories, newest first, one page at a time (pass `cursor` = the previous next_cursor for more). " +
    "Filters are exact matches; when no user_id, agent_id, app_id, conv_id or group_id is given the configured " +
    "defaults apply.",
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
  },
  output: MemoryListOut,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const scope = readScope({ ...args, ...(args.group_id ? { group_ids: [args.group_id] } : {}) }, env.scope);
    const out = await env.client.listMemories({
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
    const rows = (out.data ?? []) as Record<string, unknown>[];
    const more = out.has_more ? `\nMore: call again with cursor ${out.next_cursor}` : "";
    return { structured: out, text: memoryList(rows, "No memories.") + more };
  },
});
