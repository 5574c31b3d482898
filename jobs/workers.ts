import type { PgBoss } from "pg-boss";
import type { Deps } from "../src/context.js";
import { registerIngest } from "./ingest.js";

/** Attaches every background worker and schedule. Each area registers its own jobs here. */
export async function startWorkers(deps: Deps, boss: PgBoss): Promise<void> {
  await registerIngest(deps, boss);
}
