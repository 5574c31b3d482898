import { z } from "zod";
import { GroupListSchema } from "../../src/wire/groups.js";
import { groupLine } from "../render.js";
import { defineTool } from "../tool.js";

export const listGroupsTool = defineTool({
  name: "list_groups",
  title: "List groups",
  description:
    "List the organisation's groups: the tags that share memories across users (a team, a project). A group " +
    "with a prompt collects memories matching it; one without is a catch-all for shareable memories.",
  input: {
    include_archived: z.boolean().default(false).describe("True to include archived groups."),
  },
  output: GroupListSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const out = await env.service.listGroups({ includeArchived: args.include_archived });
    return {
      structured: out,
      text: out.data.length ? out.data.map(groupLine).join("\n") : "No groups.",
    };
  },
});
