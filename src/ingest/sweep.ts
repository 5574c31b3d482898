import { deleteFinishedJobs } from "../db/jobs.js";
import { retentionSweep } from "../retention.js";

/** Deletes terminal jobs past MNEMO_JOB_RETENTION_HOURS (run by a schedule; callable directly). */
export const sweepIngestJobs = retentionSweep(
  "finished ingest jobs",
  deleteFinishedJobs,
  (config) => config.MNEMO_JOB_RETENTION_HOURS * 3_600_000,
);
