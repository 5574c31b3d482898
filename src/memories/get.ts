import { mayReadRow } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { findMemory } from "../db/memories.js";
import { CoreError, quotedId } from "../errors.js";
import { type Memory, toWire } from "./model.js";

/** Unknown, malformed and other organisations' ids all read the same. */
export const memoryNotFound = (id: string) =>
  new CoreError("memory_not_found", `No memory ${quotedId(id)} in this organisation.`);

/** The full row; artifacts always carry `details.full_content`. */
export async function getMemory({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<Memory> {
  const row = await findMemory(ctx.db, ctx.principal.orgId, input.id);
  if (!row || !mayReadRow(ctx.principal, row)) throw memoryNotFound(input.id);
  return toWire(row, { fullContent: true });
}
