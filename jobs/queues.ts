import type { Job, PgBoss } from "pg-boss";
import { z } from "zod";
import { WEBHOOK_EVENTS } from "../src/webhooks/model.js";

type QueueOptions = Parameters<PgBoss["createQueue"]>[1];

/**
 * Every queue this service uses: its name (the key), its pg-boss options and the schema of its
 * jobs' data. Senders are typed by it (`Queue.send` in src/queue.ts) and checked against it when
 * sending; workers parse `job.data` with it. Created (idempotently) by every role at start, since
 * the API sends to queues that the workers drain.
 */
export const QUEUES = {
  // Our own job row counts attempts (at most 3, see src/ingest/run-job.ts); pg-boss may deliver once
  // more so that the last delivery can record the failure. Per-job expiry and heartbeat come from
  // send() (src/ingest/submit.ts).
  // `notify`: a send wakes the workers of every process at once (jobs/boss.ts).
  ingest: {
    options: { retryLimit: 3, retryDelay: 0, deleteAfterSeconds: 3600, notify: true },
    data: z.object({ jobId: z.string(), orgId: z.string(), requestId: z.string().optional() }),
  },
  // One attempt per job: the next attempt is a new job scheduled by the attempt (jobs/webhooks.ts).
  // pg-boss's retries are for an attempt whose worker died (expired; per-job expiry from send(),
  // src/webhooks/enqueue.ts): the same attempt runs again, up to five times, so an attempt whose
  // rerun also lands on a dying worker (workers killed one after another) is not lost. An attempt
  // that ends, however it ends, completes its job: these retries never repeat a delivered one.
  // `notify` as for ingest. `body` is the exact bytes sent and signed; it holds memories' text, so
  // an attempt's job is deleted an hour after it ends (pg-boss's default keeps it 7 days), and a
  // forget drops its jobs' deliveries (src/db/webhooks.ts).
  "webhook-delivery": {
    options: { retryLimit: 5, retryDelay: 0, expireInSeconds: 300, deleteAfterSeconds: 3600, notify: true },
    data: z.object({
      orgId: z.string(),
      eventId: z.string(),
      event: z.enum(WEBHOOK_EVENTS),
      jobId: z.string(),
      body: z.string(),
      attempt: z.number().int().min(1),
      /** The webhook's drop token when the event was queued (absent in jobs queued before it existed). */
      dropToken: z.string().optional(),
      /** Set by a forget of the event's scope while this attempt ran: no retry, and no rerun posts it. */
      forgotten: z.boolean().optional(),
    }),
  },
  // Retention sweeps on a schedule (jobs/maintenance.ts); the scheduled job carries no data.
  "maintenance-sweep": {
    options: { retryLimit: 1 },
    data: z.unknown(),
  },
} satisfies Record<string, { options: QueueOptions; data: z.ZodType }>;

export type QueueName = keyof typeof QUEUES;
export type JobData<N extends QueueName> = z.infer<(typeof QUEUES)[N]["data"]>;
export type IngestJobData = JobData<"ingest">;
export type DeliveryJobData = JobData<"webhook-delivery">;

const NAMES = Object.keys(QUEUES) as QueueName[];

/** Polling on a queue with `notify`, while the listener is up: only a backstop for delayed jobs and retries. */
export const NOTIFY_BACKSTOP_POLL_SECONDS = 2;

export async function ensureQueues(boss: PgBoss): Promise<void> {
  for (const name of NAMES) {
    await boss.createQueue(name, QUEUES[name].options);
    // createQueue leaves an existing queue as it was: bring its options up to date.
    await boss.updateQueue(name, QUEUES[name].options);
  }
  // createQueue empties pg-boss's queue cache; the first send() would then look the queue up on
  // pg-boss's own pool. Inside a caller's transaction on the embedded database (one shared session)
  // that lookup waits for the transaction, which waits for it: a deadlock. Fill the cache now.
  for (const name of NAMES) await boss.getJobById(name, "00000000-0000-4000-8000-000000000000");
}

/**
 * `count` workers on a queue, each running one job at a time and fetching again as soon as it is
 * done (a busy queue drains back to back; an empty fetch falls back to polling every 0.5 s, or
 * every NOTIFY_BACKSTOP_POLL_SECONDS while the listener is up): a slow job holds only its own
 * slot. Returns `wake`, which has one slot fetch now (round robin), for a job this process just
 * made runnable.
 */
export async function workSlots<N extends QueueName>(
  boss: PgBoss,
  name: N,
  count: number,
  handler: (job: Job<unknown>) => Promise<void>,
  /** At most this many of one group's jobs at once, over every process's slots. */
  perGroup?: number,
): Promise<{ wake: () => void }> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    let self = "";
    self = await boss.work(
      name,
      {
        batchSize: 1,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: NOTIFY_BACKSTOP_POLL_SECONDS,
        // A slot's fetch skips the jobs of a group with this many running (counted in the database,
        // over every process's slots; two fetches at the same moment may both pass it once).
        ...(perGroup ? { groupConcurrency: perGroup } : {}),
      },
      async ([job]) => {
        if (!job) return;
        try {
          await handler(job);
        } finally {
          boss.notifyWorker(self);
        }
      },
    );
    ids.push(self);
  }
  let next = 0;
  return { wake: () => boss.notifyWorker(ids[next++ % ids.length]!) };
}
