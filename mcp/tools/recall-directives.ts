import { z } from "zod";
import { SearchResultSchema } from "../../src/wire/search.js";
import { searchText } from "../render.js";
import { agentId, appId, groupIds, namespace, userId } from "../schemas.js";
import { defineTool, readScope } from "../tool.js";

export const recallDirectivesTool = defineTool({
  name: "recall_directives",
  title: "Recall lessons and procedures",
  description:
    "Before (or after) a tool call, recall the lessons and procedures learned earlier that apply to it. Pass the " +
    "pending call as `tool` with its `args` (and `output` if you have it): identifiers such as file paths, " +
    "function names, commands and error names are matched exactly against what was learned. Or pass `entities` " +
    "directly. `task` (your current goal) lets compose mode keep only relevant advice.",
  input: {
    tool: z.string().optional().describe("Name of the tool being called, e.g. Bash or Edit."),
    args: z.record(z.string(), z.unknown()).optional().describe("The tool call's arguments, as sent."),
    output: z.string().optional().describe("The tool's output or error, when recalling after the call."),
    entities: z
      .array(z.string())
      .optional()
      .describe("Identifiers to match instead of a tool call (file names, symbols, commands)."),
    task: z.string().max(2000).optional().describe("What you are trying to do; used to judge relevance."),
    namespace,
    include: z
      .array(z.enum(["lesson", "procedure"]))
      .optional()
      .describe("Which directives: lesson, procedure. Default both."),
    mode: z
      .enum(["compose", "retrieve"])
      .default("compose")
      .describe("compose: advice as markdown with reasons; retrieve: the matched directives only."),
    user_id: userId,
    agent_id: agentId,
    app_id: appId,
    group_ids: groupIds,
  },
  output: SearchResultSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const ns = args.namespace ?? env.scope.namespace;
    const action =
      args.tool !== undefined || args.args !== undefined || args.output !== undefined
        ? {
            action: {
              tool: args.tool ?? null,
              args: args.args ?? null,
              output: args.output ?? null,
            },
          }
        : {};
    const body = {
      ...action,
      ...(args.entities ? { entities: args.entities } : {}),
      ...(args.task ? { task: args.task } : {}),
      ...(ns ? { namespace: ns } : {}),
      ...(args.include ? { include: args.include } : {}),
      mode: args.mode,
      ...readScope(args, env.scope),
    };
    const out = await env.service.trigger(body);
    return { structured: out, text: searchText(out, "No lessons or procedures apply.") };
  },
});
