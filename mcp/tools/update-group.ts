import { z } from "zod";
import { GroupSchema } from "../../src/wire/groups.js";
import { groupLine } from "../render.js";
import { groupId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const updateGroupTool = defineTool({
  name: "update_group",
  title: "Update a group",
  description:
    "Rename a group, change its prompt (existing memories keep their tags), or un-archive it with " +
    "status 'active'. Fields left out are unchanged.",
  input: {
    group_id: groupId,
    name: z.string().min(1).max(120).optional().describe("New name."),
    prompt: z.string().min(1).max(2000).optional().describe("New prompt; a prompt cannot be removed."),
    status: z.enum(["active", "archived"]).optional().describe("'active' un-archives; 'archived' archives."),
  },
  output: GroupSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const { group_id, ...patch } = args;
    const g = await env.service.updateGroup(group_id, patch);
    return { structured: g, text: `Updated group:\n${groupLine(g)}` };
  },
});
