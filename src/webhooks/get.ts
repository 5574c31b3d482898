import { requireOrgWide } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { findWebhook } from "../db/webhooks.js";
import { CoreError } from "../errors.js";
import { type WebhookWire, webhookToWire } from "./model.js";
import { requireSameOrg } from "./put.js";

/** The organisation's webhook with its secret masked; 404 `webhook_not_found` when none is set. */
export async function getWebhook({
  ctx,
  input,
}: {
  ctx: Ctx;
  input?: { orgId?: string };
}): Promise<WebhookWire> {
  requireOrgWide(ctx.principal, "Reading the webhook");
  requireSameOrg(ctx, input?.orgId);
  const row = await findWebhook(ctx.db, ctx.principal.orgId);
  if (!row) throw new CoreError("webhook_not_found", "No webhook is configured for this organisation.");
  return webhookToWire(row);
}
