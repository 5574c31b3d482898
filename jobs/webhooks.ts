import type { PgBoss } from "pg-boss";
import { type Deps, systemCtx } from "../src/context.js";
import { jobSignals } from "../src/ingest/signals.js";
import { deliverWebhook } from "../src/webhooks/deliver.js";
import { NOTIFY_BACKSTOP_POLL_SECONDS, QUEUES } from "./queues.js";

/**
 * Deliveries run one attempt per job: the next attempt is a new job with `startAfter`, scheduled
 * by the attempt itself (persisted, so a restart between attempts loses nothing), which lets the
 * schedule honour Retry-After. pg-boss's own single retry (jobs/queues.ts) only reruns an attempt
 * whose worker died before it finished.
 */
export async function registerWebhookJobs(deps: Deps, boss: PgBoss): Promise<void> {
  // Batches keep a busy queue moving (a batch of one waits a polling interval after each job);
  // the attempts of a batch run side by side, each bounded by MNEMO_WEBHOOK_TIMEOUT_MS.
  const worker = await boss.work(
    "webhook-delivery",
    {
      batchSize: 5,
      burstWhenBatchFull: true,
      pollingIntervalSeconds: 0.5,
      notifyPollingIntervalSeconds: NOTIFY_BACKSTOP_POLL_SECONDS,
      localConcurrency: deps.config.MNEMO_WORKER_CONCURRENCY,
    },
    async (jobs) => {
      await Promise.all(
        jobs.map(async (job) => {
          const parsed = QUEUES["webhook-delivery"].data.safeParse(job.data);
          if (!parsed.success) {
            deps.log.error(
              { err: parsed.error, pgBossJobId: job.id },
              "malformed webhook delivery job dropped",
            );
            return;
          }
          const input = parsed.data;
          const ctx = systemCtx(deps, input.orgId, `webhook:${job.id}`);
          // Every line carries the delivery's job id and the ingest job it is about.
          ctx.log = ctx.log.child({ jobId: job.id, ingestJobId: input.jobId });
          try {
            await deliverWebhook({ ctx, input });
          } catch (err) {
            // A webhook's fate never touches the ingest job, nor the other attempts of the batch.
            ctx.log.error({ err, eventId: input.eventId }, "webhook delivery crashed");
          }
        }),
      );
    },
  );
  // A job that finished in this process may have just enqueued its delivery: fetch it now rather
  // than at the next poll (another process's delivery wakes this worker through NOTIFY).
  jobSignals(deps).on("finished", () => boss.notifyWorker(worker));
}
