import { z } from "zod";
import { MemorySchema } from "../../src/wire/memories.js";
import { memoryLine } from "../render.js";
import { memoryId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const tagMemoryTool = defineTool({
  name: "tag_memory",
  title: "Share or unshare a memory",
  description:
    "Add or remove group tags on a memory, to share it with a group or stop sharing it. Added ids must be " +
    "active groups (see list_groups). Removal is applied before addition; repeating a call changes nothing. " +
    "Tags removed from a superseded fact also leave the later versions of its chain.",
  input: {
    memory_id: memoryId,
    add_group_ids: z.array(z.string()).optional().describe("Group ids to add."),
    remove_group_ids: z.array(z.string()).optional().describe("Group ids to remove."),
  },
  output: MemorySchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const m = await env.service.tagMemory(args.memory_id, {
      ...(args.add_group_ids ? { add_group_ids: args.add_group_ids } : {}),
      ...(args.remove_group_ids ? { remove_group_ids: args.remove_group_ids } : {}),
    });
    return {
      structured: m,
      text: `Tags now: ${m.group_ids.join(", ") || "(none)"}\n${memoryLine(m)}`,
    };
  },
});
