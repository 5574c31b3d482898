import { confinedUser, mayWriteRow } from "../auth/user-scope.js";
import { type Ctx, inTx } from "../context.js";
import { findMemory, patchMemoryGroupIds, supersedeChainRows } from "../db/memories.js";
import { CoreError, isCoreError } from "../errors.js";
import { memoryNotFound } from "./get.js";
import { type Memory, toWire } from "./model.js";

export interface PatchMemoryGroupsInput {
  id: string;
  add_group_ids?: string[] | null | undefined;
  remove_group_ids?: string[] | null | undefined;
}

/** Trims entries, drops blank ones and duplicates, keeps first-seen order. */
const cleanIds = (ids: string[] | null | undefined) => [
  ...new Set((ids ?? []).map((s) => s.trim()).filter((s) => s.length > 0)),
];

const quoted = (ids: string[]) => ids.map((g) => JSON.stringify(g)).join(", ");

/**
 * Edits a memory's group tags as a set: removal first, then addition, computed and written in one
 * statement on the locked row so concurrent patches never lose each other's tags. Only ids that
 * would really be added are checked against the registry (each must be an active group); an id
 * already on the row is ignored, so resending a patch stays a no-op even after its group was
 * archived. A no-op writes nothing and leaves `updated_at` alone.
 */
export async function patchMemoryGroups({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: PatchMemoryGroupsInput;
}): Promise<Memory> {
  const add = cleanIds(input.add_group_ids);
  const remove = cleanIds(input.remove_group_ids);
  if (add.length === 0 && remove.length === 0) {
    throw new CoreError("empty_patch", "Send at least one id in add_group_ids or remove_group_ids.");
  }
  const both = add.filter((g) => remove.includes(g));
  if (both.length > 0) {
    throw new CoreError("contradictory_group_ids", `These ids are both added and removed: ${quoted(both)}.`);
  }
  const orgId = ctx.principal.orgId;
  const max = ctx.deps.config.MAX_GROUP_IDS_PER_INGEST;
  if (confinedUser(ctx.principal) !== null) {
    // Only the user's own rows; user_id is immutable, so the check cannot race with the write.
    const owned = await findMemory(ctx.db, orgId, input.id);
    if (!owned || !mayWriteRow(ctx.principal, owned)) throw memoryNotFound(input.id);
  }
  try {
    // One transaction with the later versions' un-share (below): both land or neither.
    const outcome = await inTx(ctx, async (tx) => {
      const patched = await patchMemoryGroupIds(tx.db, orgId, input.id, { add, remove, maxTags: max });
      if (patched.removed.length > 0) await unshareLaterVersions(tx, input.id, patched.removed, max);
      return patched;
    });
    if (!outcome.found) throw memoryNotFound(input.id);
    if (outcome.superseded) {
      throw new CoreError(
        "invalid_request",
        "This fact is already superseded; add groups to the active fact of its chain (its revisions name it).",
        { field: "add_group_ids" },
      );
    }
    if (outcome.invalid.length > 0) {
      throw new CoreError("invalid_group_ids", `Unknown or archived group ids: ${quoted(outcome.invalid)}.`, {
        field: "add_group_ids",
      });
    }
    if (outcome.count > max) {
      throw new CoreError(
        "invalid_request",
        `A memory can carry at most ${max} group ids (MAX_GROUP_IDS_PER_INGEST); this patch would leave ${outcome.count}.`,
        { field: "add_group_ids" },
      );
    }
    const row = await findMemory(ctx.db, orgId, input.id);
    // Deleted between the patch and the read: answer as for any missing row.
    if (!row) throw memoryNotFound(input.id);
    if (outcome.updated) ctx.log.info({ memoryId: row.id, groupIds: row.group_ids }, "memory groups patched");
    return toWire(row);
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("patch_failed", "The group tags could not be written.", { cause: err });
  }
}

/**
 * Tags taken off a superseded fact leave the later versions of its chain too (those the caller may
 * write): only the tags the fact carried. A text edit copies the tags to the new version; an
 * un-share that met the edit (sent while the fact was still the active one, granted its lock after
 * the edit committed) otherwise changed only the row search never serves, answered 200, and left
 * the current claim shared with the group. The chain is read in a statement of its own, after the
 * patch's, so an edit that committed first is seen.
 */
async function unshareLaterVersions(ctx: Ctx, id: string, removed: string[], maxTags: number): Promise<void> {
  const orgId = ctx.principal.orgId;
  const row = await findMemory(ctx.db, orgId, id);
  if (row?.status !== "superseded" || (row.type !== "fact" && row.type !== "lesson")) return;
  const chain = await supersedeChainRows(ctx.db, orgId, row.id, row.type);
  const later = chain.slice(chain.findIndex((r) => r.id === row.id) + 1);
  for (const next of later) {
    if (!mayWriteRow(ctx.principal, next) || !next.group_ids?.some((g) => removed.includes(g))) continue;
    const outcome = await patchMemoryGroupIds(ctx.db, orgId, next.id, { add: [], remove: removed, maxTags });
    if (outcome.updated) ctx.log.info({ memoryId: next.id, removed }, "later version's groups patched");
  }
}
