import { z } from "zod";
import { groupLine } from "../render.js";
import { GroupListOut } from "../schemas.js";
import { defineTool } from "../tool.js";

export const listGroups = defineTool({
  name: "list_groups",
  title: "List groups",
  description:
    "List the organisation's groups: the tags that share memories across users (a team, a project). A group " +
    "with a prompt collects memories matching it; one without is a catch-all for shareable memories.",
  input: {
    include_archived: z.boolean().default(false).describe("True to include archived groups."),
  },
  output: GroupListOut,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const out = await env.client.listGroups(args.include_archived);
    const rows = (out.data ?? []) as Record<string, unknown>[];
    return { structured: out, text: rows.length ? rows.map(groupLine).join("\n") : "No groups." };
  },
});
