import { deleteDeliveriesBefore } from "../db/webhooks.js";
import { retentionSweep } from "../retention.js";

/** Deletes delivery records past MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS (scheduled; callable directly). */
export const sweepWebhookDeliveries = retentionSweep(
  "old webhook delivery records",
  deleteDeliveriesBefore,
  (config) => config.MNEMO_WEBHOOK_DELIVERY_RETENTION_DAYS * 86_400_000,
);
