import type { PgBoss } from "pg-boss";
import { type Deps, systemCtx } from "../src/context.js";
import { jobSignals } from "../src/ingest/signals.js";
import { deliverWebhook } from "../src/webhooks/deliver.js";
import { type DeliveryJobData, WEBHOOK_QUEUE } from "../src/webhooks/enqueue.js";

/**
 * Deliveries run one attempt per job. pg-boss's own retry is off for this queue (jobs/queues.ts:
 * retryLimit 0): the next attempt is a new job with `startAfter`, scheduled by the attempt itself
 * (persisted, so a restart between attempts loses nothing), which lets the schedule honour
 * Retry-After.
 */
export async function registerWebhookJobs(deps: Deps, boss: PgBoss): Promise<void> {
  // Batches keep a busy queue moving (a batch of one waits a polling interval after each job);
  // the attempts of a batch run side by side, each bounded by MNEMO_WEBHOOK_TIMEOUT_MS.
  const worker = await boss.work<DeliveryJobData>(
    WEBHOOK_QUEUE,
    {
      batchSize: 5,
      burstWhenBatchFull: true,
      pollingIntervalSeconds: 0.5,
      localConcurrency: deps.config.MNEMO_WORKER_CONCURRENCY,
    },
    async (jobs) => {
      await Promise.all(
        jobs.map(async (job) => {
          const ctx = systemCtx(deps, job.data.orgId, `webhook:${job.id}`);
          try {
            await deliverWebhook({ ctx, input: job.data });
          } catch (err) {
            // A webhook's fate never touches the ingest job, nor the other attempts of the batch.
            ctx.log.error({ err, eventId: job.data.eventId }, "webhook delivery crashed");
          }
        }),
      );
    },
  );
  // A job that finished in this process may have just enqueued its delivery: fetch it now rather
  // than at the next poll.
  jobSignals(deps).on("finished", () => boss.notifyWorker(worker));
}
