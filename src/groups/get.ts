import type { Ctx } from "../context.js";
import { findGroup } from "../db/groups.js";
import { type Group, groupNotFound, isGroupId, toGroupWire } from "./model.js";

export async function getGroup({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<Group> {
  const row = isGroupId(input.id) ? await findGroup(ctx.db, ctx.principal.orgId, input.id) : undefined;
  if (!row) throw groupNotFound(input.id);
  return toGroupWire(row);
}
