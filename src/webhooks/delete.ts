import { requireOrgWide } from "../auth/user-scope.js";
import { type Ctx, inTx } from "../context.js";
import { lockWebhookConfig } from "../db/locks.js";
import { deleteWebhook } from "../db/webhooks.js";
import { requireSameOrg } from "./put.js";

/** Removes the organisation's webhook; idempotent. Deliveries already queued are then dropped. */
export async function removeWebhook({ ctx, input }: { ctx: Ctx; input?: { orgId?: string } }): Promise<void> {
  requireOrgWide(ctx.principal, "Removing the webhook");
  requireSameOrg(ctx, input?.orgId);
  // After any PUT in progress (lockWebhookConfig): that PUT's config is what is removed.
  await inTx(ctx, async ({ db: tx }) => {
    await lockWebhookConfig(tx, ctx.principal.orgId);
    await deleteWebhook(tx, ctx.principal.orgId);
  });
}
