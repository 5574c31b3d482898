import type { PgBoss } from "pg-boss";
import { type Deps, systemCtx } from "../src/context.js";
import { untilReachable } from "../src/db/db.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import { runIngestJob } from "../src/ingest/run-job.js";
import { jobSignals } from "../src/ingest/signals.js";
import { NOTIFY_BACKSTOP_POLL_SECONDS, QUEUES } from "./queues.js";

/**
 * The ingest worker. Woken at once by the NOTIFY that every send to the queue carries (from any
 * process, jobs/boss.ts) and directly when this process enqueued, so an idle server picks a job
 * up within milliseconds. Polls every 0.5 s (the floor pg-boss allows) when no listener is up,
 * and every NOTIFY_BACKSTOP_POLL_SECONDS while one is (retries of killed attempts).
 */
export async function registerIngest(deps: Deps, boss: PgBoss): Promise<void> {
  const ids: string[] = [];
  const concurrency = deps.config.MNEMO_WORKER_CONCURRENCY;
  for (let i = 0; i < concurrency; i++) {
    let self = "";
    self = await boss.work(
      "ingest",
      {
        batchSize: 1,
        pollingIntervalSeconds: 0.5,
        notifyPollingIntervalSeconds: NOTIFY_BACKSTOP_POLL_SECONDS,
      },
      async ([job]) => {
        if (!job) return;
        try {
          const { jobId, orgId, requestId } = QUEUES.ingest.data.parse(job.data);
          const ctx = systemCtx(deps, orgId, requestId ?? jobId);
          ctx.log = ctx.log.child({ jobId }); // every line a job writes carries its job id
          await runIngestJob({ ctx, input: { jobId } });
        } catch (err) {
          // An attempt interrupted by the database going away (a restart, a failover): pg-boss
          // records the failed attempt, and so its retry, in that database. Recorded while it is
          // still away, the record is lost and the job shows `running` until its heartbeat
          // lapses (MNEMO_JOB_HEARTBEAT_SECONDS); so wait for the database first (until the job's signal:
          // a shutdown, the expiry), and the retry runs as soon as it is back.
          if (isDatabaseUnavailable(err)) await untilReachable(deps.db, job.signal).catch(() => {});
          throw err;
        } finally {
          // Fetch again right after this job instead of sleeping a poll interval: a backlog drains
          // at full speed, and an empty fetch falls back to polling.
          boss.notifyWorker(self);
        }
      },
    );
    ids.push(self);
  }
  let next = 0;
  jobSignals(deps).on("enqueued", () => {
    // Wake one idle worker; a busy one picks the job up on its next fetch anyway.
    boss.notifyWorker(ids[next++ % ids.length]!);
  });
}
