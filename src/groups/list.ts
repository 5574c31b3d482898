import type { Ctx } from "../context.js";
import { listGroupRows } from "../db/groups.js";
import { type GroupList, toGroupWire } from "./model.js";

/** The organisation's groups, oldest first: active ones, plus archived ones when asked. */
export async function listGroups({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { includeArchived?: boolean };
}): Promise<GroupList> {
  const rows = await listGroupRows(ctx.db, ctx.principal.orgId, input.includeArchived ?? false);
  return { object: "list", data: rows.map(toGroupWire), has_more: false, next_cursor: null };
}
