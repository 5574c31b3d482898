import type { PgBoss } from "pg-boss";

/**
 * Every queue this service uses, with its options. Created (idempotently) by every role at start,
 * since the API sends to queues that the workers drain.
 */
export const QUEUES: Array<{ name: string; options: Parameters<PgBoss["createQueue"]>[1] }> = [
  // Our own job row counts attempts (at most 3, see src/ingest/run-job.ts); pg-boss may deliver once
  // more so that the last delivery can record the failure. Per-job expiry comes from send().
  { name: "ingest", options: { retryLimit: 3, retryDelay: 0, deleteAfterSeconds: 3600 } },
  { name: "ingest-sweep", options: { retryLimit: 1 } },
  { name: "webhook-delivery", options: { retryLimit: 0, expireInSeconds: 300 } }, // jobs/webhooks.ts
];

export async function ensureQueues(boss: PgBoss): Promise<void> {
  for (const q of QUEUES) await boss.createQueue(q.name, q.options);
  // createQueue empties pg-boss's queue cache; the first send() would then look the queue up on
  // pg-boss's own pool. Inside a caller's transaction on the embedded database (one shared session)
  // that lookup waits for the transaction, which waits for it: a deadlock. Fill the cache now.
  for (const q of QUEUES) await boss.getJobById(q.name, "00000000-0000-4000-8000-000000000000");
}
