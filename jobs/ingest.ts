import { setTimeout } from "node:timers/promises";
import type { PgBoss } from "pg-boss";
import { type Deps, systemCtx } from "../src/context.js";
import { untilReachable } from "../src/db/db.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import { ModelUnavailable, runIngestJob } from "../src/ingest/run-job.js";
import { jobSignals } from "../src/ingest/signals.js";
import { QUEUES, workSlots } from "./queues.js";

/**
 * The ingest worker: MNEMO_WORKER_CONCURRENCY slots of one job each (workSlots). Woken at once by
 * the NOTIFY that every send to the queue carries (from any process, jobs/boss.ts) and directly
 * when this process enqueued, so an idle server picks a job up within milliseconds. Polls every
 * 0.5 s (the floor pg-boss allows) when no listener is up, and every NOTIFY_BACKSTOP_POLL_SECONDS
 * while one is (retries of killed attempts).
 */
export async function registerIngest(deps: Deps, boss: PgBoss): Promise<void> {
  const slots = await workSlots(boss, "ingest", deps.config.MNEMO_WORKER_CONCURRENCY, async (job) => {
    try {
      const { jobId, orgId, requestId } = QUEUES.ingest.data.parse(job.data);
      const ctx = systemCtx(deps, orgId, requestId ?? jobId);
      ctx.log = ctx.log.child({ jobId }); // every line a job writes carries its job id
      await runIngestJob({ ctx, input: { jobId } });
    } catch (err) {
      // An attempt interrupted by the database going away (a restart, a failover): pg-boss
      // records the failed attempt, and so its retry, in that database. Recorded while it is
      // still away, the record is lost and the job shows `running` until its heartbeat lapses
      // (MNEMO_JOB_HEARTBEAT_SECONDS); so wait for the database first (until the job's signal: a
      // shutdown, the expiry), and the retry runs as soon as it is back.
      if (isDatabaseUnavailable(err)) await untilReachable(deps.db, job.signal).catch(() => {});
      // The model's endpoint out of reach: a pause first, so the retry does not find it down again
      // at once (ended early by a shutdown or the expiry).
      if (err instanceof ModelUnavailable)
        await setTimeout(err.retryInMs, undefined, { signal: job.signal }).catch(() => {});
      throw err;
    }
  });
  // Wake one idle slot; a busy one picks the job up on its next fetch anyway.
  jobSignals(deps).on("enqueued", slots.wake);
}
