import { z } from "zod";
import { GroupSchema } from "../../src/wire/groups.js";
import { groupLine } from "../render.js";
import { defineTool } from "../tool.js";

export const createGroupTool = defineTool({
  name: "create_group",
  title: "Create a group",
  description:
    "Register a group to share memories across users. Give a `prompt` describing what belongs in it (e.g. " +
    "'decisions about the billing service'); without one it collects every shareable memory ingested with it.",
  input: {
    name: z.string().min(1).max(120).describe("A human label."),
    prompt: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .describe("What belongs in the group. Omit for a catch-all."),
  },
  output: GroupSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(args, env) {
    const g = await env.service.createGroup({
      name: args.name,
      ...(args.prompt ? { prompt: args.prompt } : {}),
    });
    return { structured: g, text: `Created group:\n${groupLine(g)}` };
  },
});
