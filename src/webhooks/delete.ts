import { requireOrgWide } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { deleteWebhook } from "../db/webhooks.js";
import { requireSameOrg } from "./put.js";

/** Removes the organisation's webhook; idempotent. Deliveries already queued are then dropped. */
export async function removeWebhook({ ctx, input }: { ctx: Ctx; input?: { orgId?: string } }): Promise<void> {
  requireOrgWide(ctx.principal, "Removing the webhook");
  requireSameOrg(ctx, input?.orgId);
  await deleteWebhook(ctx.db, ctx.principal.orgId);
}
