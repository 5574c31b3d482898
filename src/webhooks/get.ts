import { requireOrgWide } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { findWebhook } from "../db/webhooks.js";
import { CoreError } from "../errors.js";
import { type WebhookWire, webhookToWire } from "./model.js";

/** The organisation's webhook with its secret masked; 404 `webhook_not_found` when none is set. */
export async function getWebhook({ ctx }: { ctx: Ctx; input?: undefined }): Promise<WebhookWire> {
  requireOrgWide(ctx.principal, "Reading the webhook");
  const row = await findWebhook(ctx.db, ctx.principal.orgId);
  if (!row) throw new CoreError("webhook_not_found", "No webhook is configured for this organisation.");
  return webhookToWire(row);
}
