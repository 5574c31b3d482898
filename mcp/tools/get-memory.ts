import { MemorySchema } from "../../src/wire/memories.js";
import { memoryDetail } from "../render.js";
import { memoryId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const getMemoryTool = defineTool({
  name: "get_memory",
  title: "Read one memory",
  description: "Read one memory in full by id, including an artifact's full content.",
  input: { memory_id: memoryId },
  output: MemorySchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const m = await env.service.getMemory(args.memory_id);
    return { structured: m, text: memoryDetail(m) };
  },
});
