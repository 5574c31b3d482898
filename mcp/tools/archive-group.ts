import { GroupSchema } from "../../src/wire/groups.js";
import { groupLine } from "../render.js";
import { groupId } from "../schemas.js";
import { defineTool } from "../tool.js";

export const archiveGroupTool = defineTool({
  name: "archive_group",
  title: "Archive a group",
  description:
    "Archive a group: new memories are no longer tagged with it, memories already tagged stay searchable. " +
    "Undo with update_group status 'active'.",
  input: { group_id: groupId },
  output: GroupSchema,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const g = await env.service.archiveGroup(args.group_id);
    return { structured: g, text: `Archived group:\n${groupLine(g)}` };
  },
});
