import { type Ctx, inTx } from "../context.js";
import { countActiveGroups, lockGroup, lockOrgGroups, updateGroupRow } from "../db/groups.js";
import { CoreError } from "../errors.js";
import {
  checkText,
  GROUP_NAME_MAX,
  GROUP_PROMPT_MAX,
  type Group,
  groupNotFound,
  isGroupId,
  quotaExceeded,
  toGroupWire,
} from "./model.js";

export interface UpdateGroupInput {
  id: string;
  /** Null or absent fields are left unchanged. */
  name?: string | null | undefined;
  prompt?: string | null | undefined;
  status?: string | null | undefined;
}

/**
 * Partial update. A prompt can be set on a catch-all group but never removed (there is no way to
 * send "no prompt": null means unchanged). Changing the prompt does not re-tag existing rows.
 * Un-archiving counts against MAX_GROUPS_PER_ORG like a create. Nothing changed: nothing written.
 */
export async function updateGroup({ ctx, input }: { ctx: Ctx; input: UpdateGroupInput }): Promise<Group> {
  const name = input.name == null ? undefined : checkText("name", input.name, GROUP_NAME_MAX);
  const prompt = input.prompt == null ? undefined : checkText("prompt", input.prompt, GROUP_PROMPT_MAX);
  let status: "active" | "archived" | undefined;
  if (input.status != null) {
    if (input.status !== "active" && input.status !== "archived") {
      throw new CoreError("invalid_request", "status must be `active` or `archived`.", { field: "status" });
    }
    status = input.status;
  }
  if (!isGroupId(input.id)) throw groupNotFound(input.id);
  const orgId = ctx.principal.orgId;
  const max = ctx.deps.config.MAX_GROUPS_PER_ORG;
  const row = await inTx(ctx, async ({ db: tx }) => {
    // Org lock first (same order as create), only when the quota may be at stake.
    if (status === "active") await lockOrgGroups(tx, orgId);
    const current = await lockGroup(tx, orgId, input.id);
    if (!current) throw groupNotFound(input.id);
    const next = {
      name: name ?? current.name,
      prompt: prompt ?? current.prompt,
      status: status ?? current.status,
    };
    if (next.name === current.name && next.prompt === current.prompt && next.status === current.status) {
      return current;
    }
    if (
      current.status === "archived" &&
      next.status === "active" &&
      (await countActiveGroups(tx, orgId)) >= max
    ) {
      throw quotaExceeded(max);
    }
    return (await updateGroupRow(tx, orgId, input.id, next))!;
  });
  return toGroupWire(row);
}
