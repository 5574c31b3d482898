import { z } from "zod";
import { memoryList } from "../render.js";
import { agentId, appId, groupIds, SearchOut, userId } from "../schemas.js";
import { defineTool, readScope } from "../tool.js";

export const searchMemory = defineTool({
  name: "search_memory",
  title: "Search memories",
  description:
    "Find what is remembered about a topic. In `compose` mode (default) the answer is a ready-to-use markdown " +
    "context block of the relevant memories; in `retrieve` mode it is the ranked list of matching memories with " +
    "scores. Scope: when no user_id, agent_id, app_id or group_ids is given, the configured defaults apply.",
  input: {
    query: z.string().min(1).max(4000).describe("What to look for, in natural language."),
    user_id: userId,
    agent_id: agentId,
    app_id: appId,
    group_ids: groupIds,
    include: z
      .array(z.enum(["fact", "artifact", "episode"]))
      .optional()
      .describe("Kinds of memory to search: fact, artifact, episode. Default all three."),
    mode: z
      .enum(["compose", "retrieve"])
      .default("compose")
      .describe("compose: a markdown context block; retrieve: the raw ranked list."),
    limit: z.number().int().min(1).max(100).optional().describe("How many memories at most (default 20)."),
  },
  output: SearchOut,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const body = {
      query: args.query,
      ...readScope(args, env.scope),
      mode: args.mode,
      ...(args.include ? { include: args.include } : {}),
      ...(args.limit ? { limit: args.limit } : {}),
    };
    const out = await env.client.search(body);
    const rows = (out.data ?? []) as Record<string, unknown>[];
    const text =
      args.mode === "compose" && typeof out.context === "string" && out.context.trim()
        ? out.context
        : memoryList(rows, "No memories matched.");
    return { structured: out, text };
  },
});
