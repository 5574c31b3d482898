import type { Ctx } from "../context.js";
import type { Group } from "./model.js";
import { updateGroup } from "./update.js";

/**
 * DELETE on a group archives it: rows already tagged keep the tag and stay reachable, ingest and
 * memory PATCH stop accepting it. Idempotent: archiving an archived group changes nothing.
 */
export async function archiveGroup({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<Group> {
  return updateGroup({ ctx, input: { id: input.id, status: "archived" } });
}
