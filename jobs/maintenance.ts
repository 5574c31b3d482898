import type { PgBoss } from "pg-boss";
import type { Deps } from "../src/context.js";
import { sweepIngestJobs } from "../src/ingest/sweep.js";
import { sweepWebhookDeliveries } from "../src/webhooks/sweep.js";

export const MAINTENANCE_QUEUE = "maintenance-sweep";

/** Retention sweeps, every 10 minutes (pg-boss cron has minute granularity; one worker runs each). */
export async function registerMaintenance(deps: Deps, boss: PgBoss): Promise<void> {
  await boss.work(MAINTENANCE_QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    await sweepIngestJobs({ deps });
    await sweepWebhookDeliveries({ deps });
  });
  await boss.schedule(MAINTENANCE_QUEUE, "*/10 * * * *");
}
