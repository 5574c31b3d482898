import { z } from "zod";
import { memoryId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const deleteMemoryTool = defineTool({
  name: "delete_memory",
  title: "Delete a memory",
  description:
    "Permanently delete one memory (no undo). Use when the user asks to forget something or a memory is wrong.",
  input: { memory_id: memoryId },
  output: z.object({ id: z.string(), deleted: z.literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    await env.service.deleteMemory(args.memory_id);
    return { structured: { id: args.memory_id, deleted: true }, text: `Deleted memory ${args.memory_id}.` };
  },
});
