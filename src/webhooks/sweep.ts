import type { Deps } from "../context.js";
import { deleteDeliveriesBefore } from "../db/webhooks.js";

/** Deletes delivery records past MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS (scheduled; callable directly). */
export async function sweepWebhookDeliveries({
  deps,
  input = {},
}: {
  deps: Deps;
  input?: { now?: Date };
}): Promise<{ deleted: number }> {
  const now = input.now ?? new Date();
  const before = new Date(now.getTime() - deps.config.MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000);
  const deleted = await deleteDeliveriesBefore(deps.db, before);
  if (deleted) deps.log.info({ deleted }, "swept old webhook delivery records");
  return { deleted };
}
