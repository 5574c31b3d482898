import type { PgBoss } from "pg-boss";
import type { Deps } from "../src/context.js";

/** Attaches every background worker and schedule. Each area registers its own jobs here. */
export async function startWorkers(_deps: Deps, _boss: PgBoss): Promise<void> {}
