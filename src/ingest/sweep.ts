import type { Deps } from "../context.js";
import { deleteFinishedJobs } from "../db/jobs.js";

/**
 * Deletes terminal jobs past MNEMO_JOB_RETENTION_HOURS (run by a schedule; callable directly).
 * `now` lets tests sweep "later" without waiting a day.
 */
export async function sweepIngestJobs({
  deps,
  input = {},
}: {
  deps: Deps;
  input?: { now?: Date };
}): Promise<{ deleted: number }> {
  const now = input.now ?? new Date();
  const before = new Date(now.getTime() - deps.config.MNEMO_JOB_RETENTION_HOURS * 3_600_000);
  const deleted = await deleteFinishedJobs(deps.db, before);
  if (deleted) deps.log.info({ deleted }, "swept finished ingest jobs");
  return { deleted };
}
