import type { JobRow } from "../db/jobs.js";

export interface IngestJob {
  id: string;
  object: "ingest_job";
  status: JobRow["status"];
  created_at: string;
  updated_at: string;
  result: Record<string, unknown> | null;
  error: { type: string; code: string; message: string } | null;
}

/** The job's wire shape: the same fields on every read of its lifecycle. */
export function toJobWire(row: JobRow): IngestJob {
  return {
    id: row.id,
    object: "ingest_job",
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    result: row.status === "succeeded" ? row.result : null,
    error: row.status === "failed" ? row.error : null,
  };
}

export const isTerminal = (s: JobRow["status"]) => s === "succeeded" || s === "failed";
