import type { DeliveryJobData } from "../../jobs/queues.js";
import type { CtxDeps } from "../context.js";
import type { Queryable } from "../db/db.js";
import { findWebhook, indexQueuedEvent } from "../db/webhooks.js";
import { sha256Hex } from "../ids.js";
import type { LearningCompletedEvent, LearningFailedEvent } from "../wire/webhooks.js";
import type { WebhookEvent } from "./model.js";

/** What a terminal ingest job tells the webhook subsystem. */
export interface JobTerminalEvent {
  orgId: string;
  jobId: string;
  status: "succeeded" | "failed";
  convId: string;
  userId: string;
  memories: LearningCompletedEvent["memories"];
  memoriesUpdated: LearningCompletedEvent["memories_updated"];
  error: { type: string; code: string; message: string } | null;
  finishedAt: Date;
}

/**
 * The delivery body: `event`, `job_id`, `conv_id`, `user_id`, `timestamp`, and `memories` plus
 * `memories_updated` on success or `error` on failure; nothing else.
 */
export function eventBody(event: JobTerminalEvent): { name: WebhookEvent; body: string } {
  const base = { job_id: event.jobId, conv_id: event.convId, user_id: event.userId };
  const timestamp = event.finishedAt.toISOString();
  if (event.status === "succeeded") {
    const name = "memory.learning.completed" as const;
    return {
      name,
      body: JSON.stringify({
        event: name,
        ...base,
        memories: event.memories.map((m) => ({ id: m.id, type: m.type })),
        memories_updated: event.memoriesUpdated,
        timestamp,
      } satisfies LearningCompletedEvent),
    };
  }
  const name = "memory.learning.failed" as const;
  const error = event.error ?? { type: "server_error", code: "ingest_failed", message: "Ingest failed." };
  return {
    name,
    body: JSON.stringify({ event: name, ...base, error, timestamp } satisfies LearningFailedEvent),
  };
}

/** Stable per event, so receivers can deduplicate (sent as X-Webhook-Id on every attempt). */
export const eventIdFor = (orgId: string, jobId: string, name: string) =>
  `evt_${sha256Hex(`${orgId}\n${jobId}\n${name}`).slice(0, 32)}`;

/**
 * Called by the ingest job inside the same transaction that records the job's terminal state:
 * enqueues a delivery when the organisation's webhook is enabled and subscribed to the event.
 * The send uses that transaction, so the delivery exists exactly when the terminal state does.
 */
export async function enqueueJobWebhook(
  db: Queryable,
  deps: CtxDeps,
  event: JobTerminalEvent,
): Promise<void> {
  const hook = await findWebhook(db, event.orgId);
  if (!hook?.enabled) return;
  const { name, body } = eventBody(event);
  if (!hook.events.includes(name)) return;
  const data: DeliveryJobData = {
    orgId: event.orgId,
    eventId: eventIdFor(event.orgId, event.jobId, name),
    event: name,
    jobId: event.jobId,
    body,
    attempt: 1,
    dropToken: hook.drop_token,
  };
  const queued = await deps.queue.send("webhook-delivery", data, {
    db,
    startAfterSeconds: deps.config.MNEMO_WEBHOOK_RETRY_SCHEDULE[0] ?? 0,
    expireInSeconds: deliveryExpirySeconds(deps.config.MNEMO_WEBHOOK_TIMEOUT_MS),
    group: event.orgId,
  });
  // A delete of a memory it names finds it by the memory's id (rewriteQueuedEvents).
  if (queued) await indexQueuedEvent(db, event.orgId, queued, body);
}

/**
 * How long a delivery attempt may run before pg-boss takes its worker as dead and runs the same
 * attempt again (same X-Webhook-Id): twice the request time-out plus room to record it.
 */
export const deliveryExpirySeconds = (timeoutMs: number) => Math.ceil(timeoutMs / 1000) * 2 + 5;
