import { z } from "zod";
import { JsonObject } from "../../src/wire/common.js";
import { SearchResultSchema } from "../../src/wire/search.js";
import { pinsConversation, scopedFilters, searchFromVariant, withCallerPaths } from "../filters.js";
import { searchText } from "../render.js";
import { agentId, appId, groupIds, userId } from "../schemas.js";
import { defineTool, readScope } from "../tool.js";

export const searchMemoryTool = defineTool({
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
      .array(z.enum(["fact", "artifact", "episode", "lesson", "procedure"]))
      .optional()
      .describe(
        "Kinds of memory to search: fact, artifact, episode (the default: all three); lesson and procedure " +
          "add the directives the query names or matches, ahead of the ranked rows (recall_directives matches a tool call).",
      ),
    mode: z
      .enum(["compose", "retrieve"])
      .default("compose")
      .describe("compose: a markdown context block; retrieve: the raw ranked list."),
    limit: z.number().int().min(1).max(100).optional().describe("How many memories at most (default 20)."),
    filters: JsonObject("expected an object of conditions")
      .optional()
      .describe(
        'Optional narrowing, e.g. {"metadata.topic": "travel", "created_at": {"$gte": "2026-01-01"}}. Operators: ' +
          "$eq $ne $in $nin $exists $gt $gte $lt $lte $between; combine with AND/OR (arrays) and NOT. Fields: " +
          "user_id, agent_id, conv_id, app_id, type, status, categories, group_ids, created_at, updated_at, " +
          "metadata.<key>. With filters, compose needs user_id and conv_id each pinned to one value by an equality " +
          "(user_id may come from the call); otherwise the ranked list is returned.",
      ),
  },
  output: SearchResultSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    if (args.filters) {
      const filters = scopedFilters(args, args.filters, env.scope);
      const canCompose = args.mode === "compose" && pinsConversation(filters);
      // The kinds asked for narrow the filtered search too: as a condition on `type`.
      const kinds = args.include ? { AND: [filters, { type: { $in: args.include } }] } : filters;
      const out = searchFromVariant(
        await withCallerPaths(args.filters, kinds, () =>
          env.service.searchFiltered({
            query: args.query,
            filters: kinds,
            ...(args.limit ? { limit: args.limit } : {}),
            ...(canCompose ? { include: ["context_prompt"] } : {}),
          }),
        ),
      );
      return { structured: out, text: searchText(out, "No memories matched.") };
    }
    const body = {
      query: args.query,
      ...readScope(args, env.scope),
      mode: args.mode,
      ...(args.include ? { include: args.include } : {}),
      ...(args.limit ? { limit: args.limit } : {}),
    };
    const out = await env.service.search(body);
    return { structured: out, text: searchText(out, "No memories matched.") };
  },
});
