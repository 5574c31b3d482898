import type { PgBoss } from "pg-boss";
import { type Deps, systemCtx } from "../src/context.js";
import { runIngestJob } from "../src/ingest/run-job.js";
import { jobSignals } from "../src/ingest/signals.js";
import { INGEST_QUEUE } from "../src/ingest/submit.js";
import { sweepIngestJobs } from "../src/ingest/sweep.js";

export const INGEST_SWEEP_QUEUE = "ingest-sweep";

interface IngestJobData {
  jobId: string;
  orgId: string;
  requestId?: string;
}

/**
 * The ingest worker and the retention sweep. Polls every 0.5 s (the floor pg-boss allows) and is
 * woken at once when this process enqueued, so an idle server picks a job up within milliseconds.
 */
export async function registerIngest(deps: Deps, boss: PgBoss): Promise<void> {
  const ids: string[] = [];
  const concurrency = deps.config.MNEMO_WORKER_CONCURRENCY;
  for (let i = 0; i < concurrency; i++) {
    let self = "";
    self = await boss.work<IngestJobData>(
      INGEST_QUEUE,
      { batchSize: 1, pollingIntervalSeconds: 0.5 },
      async ([job]) => {
        if (!job) return;
        try {
          const { jobId, orgId, requestId } = job.data;
          await runIngestJob({ ctx: systemCtx(deps, orgId, requestId ?? jobId), input: { jobId } });
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

  await boss.work(INGEST_SWEEP_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    await sweepIngestJobs({ deps });
  });
  await boss.schedule(INGEST_SWEEP_QUEUE, "*/10 * * * *");
}
