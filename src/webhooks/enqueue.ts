import type { Deps } from "../context.js";
import type { Queryable } from "../db/db.js";

/** What a terminal ingest job tells the webhook subsystem (section 6 of the spec). */
export interface JobTerminalEvent {
  orgId: string;
  jobId: string;
  status: "succeeded" | "failed";
  convId: string;
  userId: string;
  memories: Array<{ id: string; type: string }>;
  memoriesUpdated: Array<{ id: string; type: string; text: string }>;
  error: { type: string; code: string; message: string } | null;
  finishedAt: Date;
}

/**
 * Called by the ingest job inside the same transaction that records the job's terminal state:
 * enqueues a delivery when the organisation's webhook is enabled and subscribed to the event.
 * (Filled in by the webhooks issue.)
 */
export async function enqueueJobWebhook(
  _db: Queryable,
  _deps: Deps,
  _event: JobTerminalEvent,
): Promise<void> {}
