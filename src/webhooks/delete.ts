import { requireOrgWide } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { deleteWebhook } from "../db/webhooks.js";

/** Removes the organisation's webhook; idempotent. Deliveries already queued are then dropped. */
export async function removeWebhook({ ctx }: { ctx: Ctx; input?: undefined }): Promise<void> {
  requireOrgWide(ctx.principal, "Removing the webhook");
  await deleteWebhook(ctx.db, ctx.principal.orgId);
}
