import type { Ctx } from "../context.js";
import { deliveryCountsByDay } from "../db/webhooks.js";
import { CoreError } from "../errors.js";

/**
 * Deliveries per UTC day over the last `days` days (today included), oldest first: delivered, and
 * failed for good (attempts still to be retried count in neither).
 */
export async function webhookDeliveryStats({ ctx, input }: { ctx: Ctx; input: { days: number } }) {
  if (!Number.isInteger(input.days) || input.days < 1 || input.days > 90) {
    throw new CoreError("invalid_request", "days must be an integer from 1 to 90.");
  }
  const days = await deliveryCountsByDay(ctx.db, ctx.principal.orgId, input.days);
  return { object: "webhook_delivery_stats" as const, days };
}
