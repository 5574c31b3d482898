import type { Ctx } from "../context.js";
import { findGroupsByIds } from "../db/groups.js";
import { lockMemoryById, setMemoryGroupIds } from "../db/memories.js";
import { CoreError, isCoreError } from "../errors.js";
import { memoryNotFound } from "./get.js";
import { type Memory, type MemoryRow, toWire } from "./model.js";

export interface PatchMemoryGroupsInput {
  id: string;
  add_group_ids?: string[] | null | undefined;
  remove_group_ids?: string[] | null | undefined;
}

/** Trims entries, drops blank ones and duplicates, keeps first-seen order. */
const cleanIds = (ids: string[] | null | undefined) => [
  ...new Set((ids ?? []).map((s) => s.trim()).filter((s) => s.length > 0)),
];

/**
 * Edits a memory's group tags as a set: removal first, then addition. The read-modify-write runs on
 * the row locked FOR UPDATE, so concurrent patches of one row queue up instead of losing each
 * other's tags. Only ids that would really be added are checked against the registry (each must be
 * an active group); an id already on the row is ignored, so resending a patch stays a no-op even
 * after its group was archived. A no-op writes nothing and leaves `updated_at` alone.
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
    throw new CoreError(
      "contradictory_group_ids",
      `These ids are both added and removed: ${both.map((g) => JSON.stringify(g)).join(", ")}.`,
    );
  }
  const orgId = ctx.principal.orgId;
  const max = ctx.deps.config.MAX_GROUP_IDS_PER_INGEST;
  let row: MemoryRow;
  try {
    row = await ctx.deps.db.tx(async (tx) => {
      const current = await lockMemoryById(tx, orgId, input.id);
      if (!current) throw memoryNotFound(input.id);
      const kept = current.group_ids.filter((g) => !remove.includes(g));
      const adding = add.filter((g) => !kept.includes(g));
      if (adding.length > 0) {
        const active = new Set(
          (await findGroupsByIds(tx, orgId, adding)).filter((g) => g.status === "active").map((g) => g.id),
        );
        const invalid = adding.filter((g) => !active.has(g));
        if (invalid.length > 0) {
          throw new CoreError(
            "invalid_group_ids",
            `Unknown or archived group ids: ${invalid.map((g) => JSON.stringify(g)).join(", ")}.`,
          );
        }
      }
      const next = [...kept, ...adding];
      if (next.length > max) {
        throw new CoreError(
          "invalid_request",
          `A memory can carry at most ${max} group ids (MAX_GROUP_IDS_PER_INGEST); this patch would leave ${next.length}.`,
        );
      }
      const unchanged =
        next.length === current.group_ids.length && next.every((g) => current.group_ids.includes(g));
      if (unchanged) return current;
      return (await setMemoryGroupIds(tx, orgId, current.id, next))!;
    });
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("patch_failed", "The group tags could not be written.", { cause: err });
  }
  return toWire(row);
}
