import { setTimeout } from "node:timers/promises";
import type { PgBoss } from "pg-boss";
import { type Deps, systemCtx } from "../src/context.js";
import { untilReachable } from "../src/db/db.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import { RetryLater, runIngestJob } from "../src/ingest/run-job.js";
import { jobSignals } from "../src/ingest/signals.js";
import { QUEUES, workSlots } from "./queues.js";

/**
 * Runs of one attempt again after the database failed under it, 0.25, 0.5, 1, 2 and 4 s apart,
 * before the attempt is left to the queue's retry (a delivery of its own, counted).
 */
const MAX_RERUNS = 5;

/**
 * The ingest worker: MNEMO_WORKER_CONCURRENCY slots of one job each (workSlots). Woken at once by
 * the NOTIFY that every send to the queue carries (from any process, jobs/boss.ts) and directly
 * when this process enqueued, so an idle server picks a job up within milliseconds. Polls every
 * 0.5 s (the floor pg-boss allows) when no listener is up, and every NOTIFY_BACKSTOP_POLL_SECONDS
 * while one is (retries of killed attempts).
 */
export async function registerIngest(deps: Deps, boss: PgBoss): Promise<void> {
  const slots = await workSlots(boss, "ingest", deps.config.MNEMO_WORKER_CONCURRENCY, async (job) => {
    const { jobId, orgId, requestId } = QUEUES.ingest.data.parse(job.data);
    const ctx = systemCtx(deps, orgId, requestId ?? jobId);
    ctx.log = ctx.log.child({ jobId }); // every line a job writes carries its job id
    for (let rerun = 0; ; rerun++) {
      try {
        await runIngestJob({ ctx, input: { jobId, rerun: rerun > 0 } });
        return;
      } catch (err) {
        // An attempt interrupted by the database going away (a dropped connection, a restart, a
        // failover) runs again here once it answers, uncounted: dropped connections are no fault
        // of the job's, and the same job cut off four times in a row (connections ended every
        // 300 ms under load) used to fail for good with its messages unread. After MAX_RERUNS it
        // is the queue's retry, which pg-boss records in that database: recorded while it is
        // still away, the record is lost and the job shows `running` until its heartbeat lapses
        // (MNEMO_JOB_HEARTBEAT_SECONDS); so that also waits for the database first. Both waits
        // end with the job's signal (a shutdown, the expiry), leaving the job to the queue.
        if (isDatabaseUnavailable(err)) {
          const back = await setTimeout(250 * 2 ** rerun, undefined, { signal: job.signal })
            .then(() => untilReachable(deps.db, job.signal))
            .then(
              () => true,
              () => false,
            );
          if (back && rerun < MAX_RERUNS) continue;
        }
        // The model's endpoint out of reach, a lock conflict: a pause first, so the retry does not
        // meet it again at once (ended early by a shutdown or the expiry).
        if (err instanceof RetryLater)
          await setTimeout(err.retryInMs, undefined, { signal: job.signal }).catch(() => {});
        throw err;
      }
    }
  });
  // Wake one idle slot; a busy one picks the job up on its next fetch anyway.
  jobSignals(deps).on("enqueued", slots.wake);
}
