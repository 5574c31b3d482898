import type { PgBoss } from "pg-boss";

/**
 * Every queue this service uses, with its options. Created (idempotently) by every role at start,
 * since the API sends to queues that the workers drain.
 */
export const QUEUES: Array<{ name: string; options: Parameters<PgBoss["createQueue"]>[1] }> = [
  { name: "webhook-delivery", options: { retryLimit: 0, expireInSeconds: 300 } }, // jobs/webhooks.ts
];

export async function ensureQueues(boss: PgBoss): Promise<void> {
  for (const q of QUEUES) await boss.createQueue(q.name, q.options);
}
