import type { DeliveryRow, WebhookRow } from "../db/webhooks.js";
import type { Delivery, Webhook } from "../wire/webhooks.js";
import { maskSecret } from "./secrets.js";

export const WEBHOOK_EVENTS = ["memory.learning.completed", "memory.learning.failed"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export type WebhookWire = Webhook;

/** Row to wire. The secret is masked unless `freshSecret` (just minted) is given. */
export function webhookToWire(row: WebhookRow, freshSecret?: string): WebhookWire {
  return {
    object: "webhook",
    url: row.url,
    events: row.events.filter((e): e is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(e)),
    enabled: row.enabled,
    secret: freshSecret ?? maskSecret(row.secret_last_four),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export type DeliveryWire = Delivery;

export function deliveryToWire(row: DeliveryRow): DeliveryWire {
  return {
    object: "webhook_delivery",
    id: row.id,
    event_id: row.event_id,
    event: row.event,
    job_id: row.job_id,
    url: row.url,
    attempt: row.attempt,
    outcome: row.outcome,
    status_code: row.status_code,
    error: row.error,
    duration_ms: row.duration_ms,
    next_attempt_at: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
  };
}
