import type { Queryable } from "./db.js";

export interface UsageCounts {
  messages_ingested: number;
  searches: number;
  requests: number;
}

/**
 * Makes the current transaction commit without waiting for its WAL flush, as a FROM item. Only for
 * statements or transactions that write nothing but counters (rate limit, usage): a server crash
 * may lose the last fraction of a second of counts, never a memory, and a counted request does not
 * wait for a disk flush (1-20 ms on a busy disk).
 */
export const RELAXED_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS relaxed_commit";

/**
 * The usage upsert as SQL, for a data-modifying CTE of a statement whose only write is this count
 * (search, trigger), so counting costs no round trip of its own; that statement's transaction
 * commits without waiting for the disk (RELAXED_COMMIT). `org` and `key` are parameter references;
 * the counts are constants.
 */
export function usageUpsertSql(
  org: string,
  key: string,
  counts: { messages?: number; searches?: number; requests?: number },
): string {
  const n = (v: number | undefined) => String(Math.trunc(v ?? 0));
  return `INSERT INTO usage_counters AS u (org_id, day, key_id, messages, searches, requests)
     SELECT ${org}::text, (now() AT TIME ZONE 'UTC')::date, ${key}::text, ${n(counts.messages)}, ${n(counts.searches)},
       ${n(counts.requests)}
     FROM ${RELAXED_COMMIT}
     ON CONFLICT (org_id, day, key_id) DO UPDATE SET
       messages = u.messages + EXCLUDED.messages,
       searches = u.searches + EXCLUDED.searches,
       requests = u.requests + EXCLUDED.requests`;
}

/** Adds to one (organisation, UTC day, key) row: per-key rows keep busy organisations off one hot row. */
export async function addUsage(
  db: Queryable,
  d: { orgId: string; keyId: string | null; messages: number; searches: number; requests: number },
): Promise<void> {
  await db.query(
    `INSERT INTO usage_counters AS u (org_id, day, key_id, messages, searches, requests)
     VALUES ($1, (now() AT TIME ZONE 'UTC')::date, $2, $3, $4, $5)
     ON CONFLICT (org_id, day, key_id) DO UPDATE SET
       messages = u.messages + EXCLUDED.messages,
       searches = u.searches + EXCLUDED.searches,
       requests = u.requests + EXCLUDED.requests`,
    [d.orgId, d.keyId ?? "", d.messages, d.searches, d.requests],
  );
}

export interface MonthBounds {
  month: string;
  /** First and last day (inclusive), YYYY-MM-DD. */
  start: string;
  end: string;
  /** The first instant of the next month (UTC), ISO 8601. */
  resets_at: string;
  /** The database clock now, ISO 8601. */
  as_of: string;
}

const ISO_UTC = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** The calendar month (UTC) holding `month` (YYYY-MM), or the current one by the database clock. */
export async function monthBounds(db: Queryable, month: string | undefined): Promise<MonthBounds> {
  const { rows } = await db.query<MonthBounds>(
    `SELECT to_char(s, 'YYYY-MM') AS month, s::text AS start, (s + interval '1 month' - interval '1 day')::date::text AS "end",
            to_char((s + interval '1 month')::timestamp, ${ISO_UTC}) AS resets_at,
            to_char(now() AT TIME ZONE 'UTC', ${ISO_UTC}) AS as_of
     FROM (SELECT date_trunc('month', coalesce(to_date($1::text, 'YYYY-MM'), (now() AT TIME ZONE 'UTC')::date))::date AS s) m`,
    [month ?? null],
  );
  return rows[0]!;
}

// Requests are counted by the rate limiter's per-subject day rows; the rest by usage_counters.
// With $4 (a credential confined to a user), only the rows of that user's API keys.
const OF_USER =
  "($4::text IS NULL OR key_id IN (SELECT id FROM api_keys WHERE org_id = $1 AND user_id = $4))";
const OPS = `(
  SELECT day, key_id, messages, searches, requests FROM usage_counters
  WHERE org_id = $1 AND day BETWEEN $2::date AND $3::date AND ${OF_USER}
  UNION ALL
  SELECT day, key_id, 0, 0, day_count FROM rate_limit_counters
  WHERE org_id = $1 AND day BETWEEN $2::date AND $3::date AND ${OF_USER}
) ops`;

const SUMS =
  "coalesce(sum(messages), 0)::bigint AS messages_ingested, coalesce(sum(searches), 0)::bigint AS searches, " +
  "coalesce(sum(requests), 0)::bigint AS requests";

/** The month's counts: the organisation's, or with `userId` those of that user's API keys. */
export async function usageTotals(
  db: Queryable,
  orgId: string,
  start: string,
  end: string,
  userId: string | null = null,
) {
  const { rows } = await db.query<UsageCounts>(`SELECT ${SUMS} FROM ${OPS}`, [orgId, start, end, userId]);
  return rows[0]!;
}

export async function usageByDay(
  db: Queryable,
  orgId: string,
  start: string,
  end: string,
  userId: string | null = null,
) {
  const { rows } = await db.query<UsageCounts & { date: string }>(
    `SELECT day::text AS date, ${SUMS} FROM ${OPS} GROUP BY day ORDER BY day`,
    [orgId, start, end, userId],
  );
  return rows;
}

export interface UsageByKeyRow extends UsageCounts {
  key_id: string;
  name: string | null;
  kind: string | null;
  prefix: string | null;
  last_four: string | null;
  key_hash: string | null;
  last_used_at: string | null;
}

/**
 * The month's counts per key. With `userId` (a credential confined to a user), only that user's
 * keys' lines, not the line of requests made with no key (identity-provider tokens, every user's),
 * chosen in the statement, not after reading every key's line.
 */
export async function usageByKey(
  db: Queryable,
  orgId: string,
  start: string,
  end: string,
  userId: string | null = null,
) {
  const { rows } = await db.query<UsageByKeyRow>(
    `SELECT ops.key_id, k.name, k.kind, k.prefix, k.last_four, k.key_hash,
            to_char(k.last_used_at AT TIME ZONE 'UTC', ${ISO_UTC}) AS last_used_at, ${SUMS}
     FROM ${OPS} LEFT JOIN api_keys k ON k.id = ops.key_id AND k.org_id = $1
     GROUP BY ops.key_id, k.name, k.kind, k.prefix, k.last_four, k.key_hash, k.last_used_at ORDER BY ops.key_id`,
    [orgId, start, end, userId],
  );
  return rows;
}

export interface StorageCounts {
  memories_active: number;
  episodes_active: number;
  artifacts_active: number;
  directives_active: number;
}

/**
 * Current stored rows per type: active facts, episodes, artifacts, and directives. Kept per
 * organisation by the statements that write memories (sql/098_storage_counts.sql), so this reads
 * at most 16 small rows, not the organisation's memories.
 */
export async function storageCounts(db: Queryable, orgId: string): Promise<StorageCounts> {
  const { rows } = await db.query<StorageCounts>(
    `SELECT coalesce(sum(facts), 0)::bigint AS memories_active, coalesce(sum(episodes), 0)::bigint AS episodes_active,
            coalesce(sum(artifacts), 0)::bigint AS artifacts_active,
            coalesce(sum(directives), 0)::bigint AS directives_active
     FROM storage_counts WHERE org_id = $1`,
    [orgId],
  );
  return rows[0]!;
}

/**
 * One user's stored rows per type, counted as storage_counts counts them (sql/098_storage_counts.sql):
 * what a credential confined to that user is shown instead of its organisation's.
 */
export async function userStorageCounts(
  db: Queryable,
  orgId: string,
  userId: string,
): Promise<StorageCounts> {
  const { rows } = await db.query<StorageCounts>(
    `SELECT count(*) FILTER (WHERE kind = 'facts')::bigint AS memories_active,
            count(*) FILTER (WHERE kind = 'episodes')::bigint AS episodes_active,
            count(*) FILTER (WHERE kind = 'artifacts')::bigint AS artifacts_active,
            count(*) FILTER (WHERE kind = 'directives')::bigint AS directives_active
     FROM (SELECT mnemo_storage_kind(type, status) AS kind FROM memories WHERE org_id = $1 AND user_id = $2) m`,
    [orgId, userId],
  );
  return rows[0]!;
}
