import { setTimeout } from "node:timers/promises";
import type { PgBoss } from "pg-boss";
import { type Ctx, type Deps, systemCtx } from "../src/context.js";
import { untilReachable } from "../src/db/db.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import { jobSignals } from "../src/ingest/signals.js";
import { deliverWebhook } from "../src/webhooks/deliver.js";
import { type DeliveryJobData, QUEUES, workSlots } from "./queues.js";

/** Runs of one attempt again after the database failed under it (deliverWithReruns). */
const MAX_RERUNS = 3;

/**
 * Deliveries run one attempt per job: the next attempt is a new job with `startAfter`, scheduled
 * by the attempt itself (persisted, so a restart between attempts loses nothing), which lets the
 * schedule honour Retry-After. pg-boss's own single retry (jobs/queues.ts) only reruns an attempt
 * whose worker died before it finished.
 */
export async function registerWebhookJobs(deps: Deps, boss: PgBoss): Promise<void> {
  // MNEMO_WEBHOOK_CONCURRENCY slots of one attempt each: a receiver that hangs until the time-out
  // holds only its own slot. Batches held every attempt of a batch until its slowest ended, so one
  // stuck request in ten cut the drain rate tenfold (bench:webhooks --slow). One organisation's
  // attempts hold MNEMO_WEBHOOK_CONCURRENCY_PER_ORG slots at most: a receiver that never answers
  // took every slot, and every other organisation's events waited behind its time-outs.
  const { MNEMO_WEBHOOK_CONCURRENCY: concurrency, MNEMO_WEBHOOK_CONCURRENCY_PER_ORG: perOrg } = deps.config;
  const slots = await workSlots(
    boss,
    "webhook-delivery",
    concurrency,
    async (job) => {
      const parsed = QUEUES["webhook-delivery"].data.safeParse(job.data);
      if (!parsed.success) {
        deps.log.error({ err: parsed.error, pgBossJobId: job.id }, "malformed webhook delivery job dropped");
        return;
      }
      const input = parsed.data;
      const ctx = systemCtx(deps, input.orgId, `webhook:${job.id}`);
      // Every line carries the delivery's job id and the ingest job it is about.
      ctx.log = ctx.log.child({ jobId: job.id, ingestJobId: input.jobId });
      await deliverWithReruns(deps, ctx, input, job.signal, job.id);
    },
    Math.min(concurrency, perOrg || Math.max(1, concurrency - 1)),
  );
  // A job that finished in this process may have just enqueued its delivery: a slot fetches it now
  // rather than at its next poll (another process's delivery wakes the slots through NOTIFY).
  jobSignals(deps).on("finished", slots.wake);
}

/**
 * One delivery attempt. When the database fails under it (away or out of room: a reset
 * connection, a restart, a full disk) while it reads its webhook, it runs again once the database
 * answers, at most MAX_RERUNS times, 1, 2 and 4 s apart (until `signal`: a shutdown, the job's
 * expiry); otherwise the event would be lost, with no record and no next attempt. An outcome that
 * cannot be recorded after the POST is recorded again by deliverWebhook itself (until `signal`),
 * not posted again; only when `signal` ends that does the receiver see the event twice (same
 * X-Webhook-Id), as after a worker that died. Any other failure is logged: a webhook's fate never touches the ingest job, nor the
 * other attempts of the batch.
 */
async function deliverWithReruns(
  deps: Deps,
  ctx: Ctx,
  input: DeliveryJobData,
  signal: AbortSignal,
  deliveryJobId: string,
) {
  for (let rerun = 0; ; rerun++) {
    try {
      await deliverWebhook({ ctx, input, signal, deliveryJobId });
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err) || rerun === MAX_RERUNS || signal.aborted) {
        ctx.log.error({ err, eventId: input.eventId }, "webhook delivery crashed");
        return;
      }
      ctx.log.warn(
        { err, eventId: input.eventId },
        "webhook delivery interrupted (database unavailable); it will run again",
      );
      try {
        await setTimeout(1000 * 2 ** rerun, undefined, { signal });
        await untilReachable(deps.db, signal);
      } catch {
        // Given up (a shutdown, the job's expiry): the queue runs the attempt again.
        ctx.log.warn({ eventId: input.eventId }, "webhook delivery left to the queue's retry");
        return;
      }
    }
  }
}
