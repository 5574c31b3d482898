import type { PgBoss } from "pg-boss";
import type { Deps } from "../src/context.js";
import { analyzeIfStale, checkpointWhereNoneRuns } from "../src/db/analyze.js";
import { sweepIngestJobs } from "../src/ingest/sweep.js";
import { embedMissingVectors } from "../src/memories/vectors.js";
import { sweepQueuedEventIndex, sweepWebhookDeliveries } from "../src/webhooks/sweep.js";

/**
 * Retention sweeps and, where no autovacuum or checkpointer runs, statistics, vacuum and a
 * checkpoint, every 10 minutes (pg-boss cron has minute granularity; one worker runs each).
 */
export async function registerMaintenance(deps: Deps, boss: PgBoss): Promise<void> {
  await boss.work("maintenance-sweep", { pollingIntervalSeconds: 30 }, async ([job]) => {
    // Every line a job writes carries its job id.
    const jobDeps = { ...deps, log: deps.log.child({ jobId: job?.id }) };
    await sweepIngestJobs({ deps: jobDeps });
    await sweepWebhookDeliveries({ deps: jobDeps });
    await sweepQueuedEventIndex({ deps: jobDeps });
    // Deletes, patches and imports change rows too (see analyzeIfStale).
    await analyzeIfStale(deps.db);
    // Where no checkpointer runs (the embedded database), the write-ahead log is released here.
    await checkpointWhereNoneRuns(deps.db);
    // Last: a model that is away fails only this step.
    await embedMissingVectors({ deps: jobDeps }).catch((err: unknown) =>
      jobDeps.log.warn({ err }, "embedding memories without a vector failed: the next sweep tries again"),
    );
  });
  await boss.schedule("maintenance-sweep", "*/10 * * * *");
}
