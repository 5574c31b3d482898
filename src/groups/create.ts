import { type Ctx, inTx } from "../context.js";
import { countActiveGroups, insertGroup, lockOrgGroups } from "../db/groups.js";
import { newGroupId } from "../ids.js";
import {
  checkText,
  GROUP_NAME_MAX,
  GROUP_PROMPT_MAX,
  type Group,
  quotaExceeded,
  toGroupWire,
} from "./model.js";

export interface CreateGroupInput {
  name: string;
  /** Null or absent: a catch-all group. */
  prompt?: string | null | undefined;
}

/** Registers an active group, within the organisation's MAX_GROUPS_PER_ORG active groups. */
export async function createGroup({ ctx, input }: { ctx: Ctx; input: CreateGroupInput }): Promise<Group> {
  const name = checkText("name", input.name, GROUP_NAME_MAX);
  const prompt =
    input.prompt === undefined || input.prompt === null
      ? null
      : checkText("prompt", input.prompt, GROUP_PROMPT_MAX);
  const max = ctx.deps.config.MAX_GROUPS_PER_ORG;
  const orgId = ctx.principal.orgId;
  const row = await inTx(ctx, async ({ db: tx }) => {
    await lockOrgGroups(tx, orgId);
    if ((await countActiveGroups(tx, orgId)) >= max) throw quotaExceeded(max);
    return insertGroup(tx, { id: newGroupId(), orgId, name, prompt });
  });
  ctx.log.info({ groupId: row.id }, "group created");
  return toGroupWire(row);
}
