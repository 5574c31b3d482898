import type { PgBoss } from "pg-boss";

/**
 * Every queue this service uses, with its options. Created (idempotently) by every role at start,
 * since the API sends to queues that the workers drain.
 */
export const QUEUES: Array<{ name: string; options: Parameters<PgBoss["createQueue"]>[1] }> = [
  { name: "webhook-delivery", options: { retryLimit: 0, expireInSeconds: 300 } }, // jobs/webhooks.ts
];

export async function ensureQueues(boss: PgBoss): Promise<void> {
  for (const q of QUEUES) {
    await boss.createQueue(q.name, q.options);
    // Warms pg-boss's queue cache (filled at start, before these queues existed). Otherwise the
    // first `send` inside a caller's transaction looks the queue up on another pooled connection,
    // which on embedded PGlite (one shared session) waits for that very transaction: a deadlock.
    await boss.getJobById(q.name, "00000000-0000-0000-0000-000000000000");
  }
}
