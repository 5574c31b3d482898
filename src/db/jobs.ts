import type { Queryable } from "./db.js";

export type JobStatus = "pending" | "running" | "succeeded" | "failed";

export interface JobRow {
  id: string;
  org_id: string;
  api_key_id: string | null;
  status: JobStatus;
  request: Record<string, any>;
  result: Record<string, unknown> | null;
  error: { type: string; code: string; message: string } | null;
  attempts: number;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  /** Plan position before which the job's new facts are committed (sql/094_ingest_progress.sql). */
  stored_facts: number;
}

const JOB_COLUMNS =
  "id, org_id, api_key_id, status, request, result, error, attempts, created_at, updated_at, started_at, finished_at, stored_facts";

/**
 * Inserts an accepted job, in the caller's transaction, and makes that transaction's commit
 * durable: a server running with `synchronous_commit = off` acknowledges a commit before its WAL
 * is written, and a crash then loses it, so a client holding a 202 and a job id would poll a job
 * that never existed (seen with `bench:soak` stopping PostgreSQL in immediate mode). Raised to
 * `on` for this transaction only; any other setting (local, remote_write, remote_apply) is kept.
 */
export async function insertJob(
  db: Queryable,
  job: { id: string; orgId: string; apiKeyId: string | null; request: object },
): Promise<JobRow> {
  // The setting is raised by the statement itself (its FROM item runs once), not a round trip more.
  const { rows } = await db.query<JobRow>(
    `INSERT INTO ingest_jobs (id, org_id, api_key_id, request)
     SELECT $1, $2, $3, $4::jsonb
     FROM (SELECT CASE WHEN current_setting('synchronous_commit') = 'off'
                  THEN set_config('synchronous_commit', 'on', true) END) durable
     RETURNING ${JOB_COLUMNS}`,
    [job.id, job.orgId, job.apiKeyId, JSON.stringify(job.request)],
  );
  return rows[0]!;
}

/** The organisation's job, or undefined (unknown, swept and foreign ids alike). */
export async function findJob(db: Queryable, orgId: string, id: string): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>(
    `SELECT ${JOB_COLUMNS} FROM ingest_jobs WHERE org_id = $1 AND id = $2`,
    [orgId, id],
  );
  return rows[0];
}

/** The organisation's jobs, newest first; `after` is the (created_at, id) of the previous page's last. */
export async function listJobRows(
  db: Queryable,
  orgId: string,
  q: {
    limit: number;
    after: { createdAt: string; id: string } | null;
    status: JobStatus | null;
    /** Only this user's jobs (a credential confined to a user). */
    userId: string | null;
  },
): Promise<(JobRow & { cursor_ts: string })[]> {
  const { rows } = await db.query<JobRow & { cursor_ts: string }>(
    `SELECT ${JOB_COLUMNS},
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_ts
       FROM ingest_jobs
      WHERE org_id = $1
        AND ($2::text IS NULL OR status = $2)
        AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::text))
        AND ($6::text IS NULL OR request->>'user_id' = $6)
      ORDER BY created_at DESC, id DESC
      LIMIT $5::int`,
    [orgId, q.status, q.after?.createdAt ?? null, q.after?.id ?? null, q.limit, q.userId],
  );
  return rows;
}

/**
 * Claims a job for an attempt: pending (or running, when a dead worker's attempt comes back) to
 * running, counting the attempt. A `rerun` (the same attempt again, after the database failed
 * under it) is not counted, unless no claim was ever recorded (the first one was lost with its
 * connection). Terminal and swept jobs return undefined. `updated_at` moves only on a state
 * change (spec 2.3: the time of the latest state transition), not when a running job is claimed again.
 */
export async function claimJob(
  db: Queryable,
  id: string,
  options: { rerun?: boolean } = {},
): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>(
    `UPDATE ingest_jobs SET status = 'running',
       attempts = attempts + CASE WHEN $2::boolean AND attempts > 0 THEN 0 ELSE 1 END,
       started_at = coalesce(started_at, now()),
       updated_at = CASE WHEN status = 'running' THEN updated_at ELSE now() END
     WHERE id = $1 AND status IN ('pending', 'running')
     RETURNING ${JOB_COLUMNS}`,
    [id, options.rerun === true],
  );
  return rows[0];
}

/** The NOTIFY channel on which a job's terminal state is announced (payload: the job id). */
export const JOB_FINISHED_CHANNEL = "mnemo_job_finished";

/**
 * Records the terminal state; only a running job can finish, so a stale attempt changes nothing.
 * The same statement sends a NOTIFY on JOB_FINISHED_CHANNEL, delivered when the caller's
 * transaction commits (never for a rolled-back one), which ends `wait=true` holds in any process.
 */
export async function finishJob(
  db: Queryable,
  id: string,
  outcome: { status: "succeeded"; result: object } | { status: "failed"; error: object },
): Promise<JobRow | undefined> {
  const { rows } = await db.query<JobRow>(
    `WITH done AS (
       UPDATE ingest_jobs SET status = $2, result = $3::jsonb, error = $4::jsonb, finished_at = now(), updated_at = now()
        WHERE id = $1 AND status = 'running'
        RETURNING ${JOB_COLUMNS}
     ), wake AS (SELECT pg_notify('${JOB_FINISHED_CHANNEL}', done.id) FROM done)
     SELECT done.* FROM done, (SELECT count(*) FROM wake) AS woken`,
    [
      id,
      outcome.status,
      outcome.status === "succeeded" ? JSON.stringify(outcome.result) : null,
      outcome.status === "failed" ? JSON.stringify(outcome.error) : null,
    ],
  );
  return rows[0];
}

/**
 * Records, in a store transaction, that the job's new facts before plan position `storedFacts`
 * are committed with it. False when the job is no longer running (a later attempt finished it).
 */
export async function recordStoredFacts(db: Queryable, id: string, storedFacts: number): Promise<boolean> {
  const { rowCount } = await db.query(
    // Progress, not a state transition: `updated_at` (spec 2.3) stays the time of the last one.
    "UPDATE ingest_jobs SET stored_facts = $2 WHERE id = $1 AND status = 'running'",
    [id, storedFacts],
  );
  return (rowCount ?? 0) > 0;
}

/** Deletes terminal jobs that finished before `before`; returns how many. */
export async function deleteFinishedJobs(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query(
    "DELETE FROM ingest_jobs WHERE status IN ('succeeded', 'failed') AND finished_at < $1",
    [before],
  );
  return rowCount ?? 0;
}
