import type { Deps } from "../context.js";
import { deleteDeliveriesBefore, deleteIndexOfGoneDeliveries } from "../db/webhooks.js";
import { retentionSweep } from "../retention.js";

/** Deletes delivery records past MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS (scheduled; callable directly). */
export const sweepWebhookDeliveries = retentionSweep(
  "old webhook delivery records",
  deleteDeliveriesBefore,
  (config) => config.MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000,
);

/**
 * Forgets which memories the delivery jobs that pg-boss has deleted since named (their rows of
 * webhook_event_memories; scheduled, callable directly).
 */
export async function sweepQueuedEventIndex({ deps }: { deps: Deps }): Promise<{ deleted: number }> {
  const deleted = await deleteIndexOfGoneDeliveries(deps.db);
  if (deleted) deps.log.info({ deleted }, "swept the memory index of deleted webhook delivery jobs");
  return { deleted };
}
