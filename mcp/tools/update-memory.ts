import { z } from "zod";
import { JsonObject } from "../../src/wire/common.js";
import { MemorySchema } from "../../src/wire/memories.js";
import { ToolFailure } from "../errors.js";
import { fromVariant } from "../filters.js";
import { memoryLine } from "../render.js";
import { memoryId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const updateMemoryTool = defineTool({
  name: "update_memory",
  title: "Correct or annotate a memory",
  description:
    "Correct a remembered fact or annotate a memory. `text` replaces a fact's text: a new fact supersedes the " +
    "old one, which stays in the history (memory_revisions). `metadata` is merged onto the memory (keys are never " +
    "removed). Only facts take a new text; ids, scope and type never change.",
  input: {
    memory_id: memoryId,
    text: z.string().min(1).optional().describe("The corrected text of the fact."),
    metadata: JsonObject()
      .optional()
      .describe(
        "Keys to set on the memory's metadata (merged; reserved keys tag1-tag5, kb_type, org_id refused).",
      ),
  },
  output: MemorySchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args, env) {
    // The service's own refusal names the REST body's group fields, which this tool has not.
    if (args.text === undefined && args.metadata === undefined)
      throw new ToolFailure("empty_patch", "Send text or metadata (tag_memory adds and removes group tags).");
    const m = fromVariant(
      await env.service.updateMemory(args.memory_id, {
        ...(args.text !== undefined ? { text: args.text } : {}),
        ...(args.metadata ? { metadata: args.metadata } : {}),
      }),
    );
    const note = m.id === args.memory_id ? "Updated" : `Superseded ${args.memory_id}; the current fact is`;
    return { structured: m, text: `${note}:\n${memoryLine(m)}` };
  },
});
