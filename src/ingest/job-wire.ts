import type { JobRow } from "../db/jobs.js";
import type { IngestJob, IngestResult } from "../wire/ingest.js";

export type { IngestJob };

/** The job's wire shape: the same fields on every read of its lifecycle. */
export function toJobWire(row: JobRow): IngestJob {
  return {
    id: row.id,
    object: "ingest_job",
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    result: row.status === "succeeded" ? (row.result as IngestResult) : null,
    error: row.status === "failed" ? row.error : null,
  };
}

export const isTerminal = (s: JobRow["status"]) => s === "succeeded" || s === "failed";
