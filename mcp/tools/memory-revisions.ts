import { MemoryListSchema } from "../../src/wire/memories.js";
import { revisionList } from "../render.js";
import { memoryId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const memoryRevisionsTool = defineTool({
  name: "memory_revisions",
  title: "Show a memory's history",
  description:
    "Show how a memory changed over time, oldest first: for a fact, the facts it superseded and those that " +
    "superseded it; for an artifact, its versions.",
  input: { memory_id: memoryId },
  output: MemoryListSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const out = await env.service.memoryRevisions(args.memory_id);
    return {
      structured: out,
      text: revisionList(out.data, "No revisions."),
    };
  },
});
