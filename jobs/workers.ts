import type { PgBoss } from "pg-boss";
import type { Deps } from "../src/context.js";
import { registerIngest } from "./ingest.js";
import { registerWebhookJobs } from "./webhooks.js";

/** Attaches every background worker and schedule. Each area registers its own jobs here. */
export async function startWorkers(deps: Deps, boss: PgBoss): Promise<void> {
  await registerIngest(deps, boss);
  await registerWebhookJobs(deps, boss);
}
