import { confinedUser, mayWriteRow } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { deleteMemoryRow, findMemory } from "../db/memories.js";
import { CoreError, isCoreError } from "../errors.js";
import { memoryNotFound } from "./get.js";

/**
 * Hard delete, no tombstone. A fact that others supersede simply leaves their chain (there is no
 * foreign key on `supersedes`; the revision walker stops at the gap).
 */
export async function deleteMemory({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<void> {
  let deleted: boolean;
  if (confinedUser(ctx.principal) !== null) {
    // user_id is immutable, so checking the owner first cannot race with a change of owner.
    const row = await findMemory(ctx.db, ctx.principal.orgId, input.id);
    if (!row || !mayWriteRow(ctx.principal, row)) throw memoryNotFound(input.id);
  }
  try {
    deleted = await deleteMemoryRow(ctx.db, ctx.principal.orgId, input.id);
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("delete_failed", "The memory could not be deleted.", { cause: err });
  }
  if (!deleted) throw memoryNotFound(input.id);
  ctx.log.info({ memoryId: input.id }, "memory deleted");
}
