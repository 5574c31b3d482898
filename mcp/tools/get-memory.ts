import { memoryDetail } from "../render.js";
import { MemoryOut, memoryId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const getMemory = defineTool({
  name: "get_memory",
  title: "Read one memory",
  description: "Read one memory in full by id, including an artifact's full content.",
  input: { memory_id: memoryId },
  output: MemoryOut,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const m = await env.client.getMemory(args.memory_id);
    return { structured: m, text: memoryDetail(m) };
  },
});
