import { type Queryable, queryPrepared } from "./db.js";
import { RELAXED_COMMIT } from "./usage.js";

export interface RateHitRow {
  minute_count: number;
  day_count: number;
  minute_start: Date;
  /** UTC day as YYYY-MM-DD. */
  day: string;
  seen_at: Date;
  admitted: boolean;
}

const NO_LIMIT = 2_147_483_647;

/**
 * The per-request upsert on a subject's (day) row, as SQL: `source` is a FROM list giving `subject`,
 * `org_id`, `key_id` and `now`; `perMinute` and `perDay` are SQL expressions (null limits passed as
 * NO_LIMIT). It advances the minute window and counts the request only when admitted. Its
 * transaction commits without waiting for the disk (RELAXED_COMMIT): run it as its own statement.
 */
function rateUpsertSql(source: string, perMinute: string, perDay: string): string {
  // The stored minute's count, or 0 when the stored minute is not the current one.
  const minute = "(CASE WHEN r.minute_start = EXCLUDED.minute_start THEN r.minute_count ELSE 0 END)";
  const admit = `(${minute} < ${perMinute} AND r.day_count < ${perDay})`;
  return `INSERT INTO rate_limit_counters AS r
       (subject, day, org_id, key_id, day_count, minute_start, minute_count, seen_at, admitted)
     SELECT s.subject, (s.now AT TIME ZONE 'UTC')::date, s.org_id, s.key_id, 1, date_trunc('minute', s.now), 1,
       s.now, true
     FROM ${source}, ${RELAXED_COMMIT}
     ON CONFLICT (subject, day) DO UPDATE SET
       admitted = ${admit},
       minute_count = ${minute} + (CASE WHEN ${admit} THEN 1 ELSE 0 END),
       day_count = r.day_count + (CASE WHEN ${admit} THEN 1 ELSE 0 END),
       minute_start = EXCLUDED.minute_start,
       seen_at = EXCLUDED.seen_at
     RETURNING minute_count, day_count, minute_start, day::text AS day, seen_at, admitted`;
}

/**
 * One request against a subject's limits, in ONE statement on the database clock (or `at`, the
 * test clock): upserts the subject's row for the UTC day, advances the minute window, and counts
 * the request only when admitted. Every API process runs the same upsert on the same row, so the
 * limit is shared without any coordination in memory. The day's count is also the usage count of
 * requests (see usageTotals), so a request costs one write. Null limits mean none.
 */
export async function hitRateLimit(
  db: Queryable,
  input: {
    subject: string;
    perMinute: number | null;
    perDay: number | null;
    orgId: string;
    keyId: string | null;
    at?: Date | undefined;
  },
): Promise<RateHitRow> {
  const { rows } = await db.query<RateHitRow>(
    rateUpsertSql(
      "(SELECT $1::text AS subject, $5::text AS org_id, $6::text AS key_id, coalesce($4::timestamptz, now()) AS now) s",
      "$2::int",
      "$3::int",
    ),
    [
      input.subject,
      input.perMinute ?? NO_LIMIT,
      input.perDay ?? NO_LIMIT,
      input.at ?? null,
      input.orgId,
      input.keyId ?? "",
    ],
  );
  return rows[0]!;
}

/** Every tier's limits, as the folded key statement takes them. */
export interface TierTable {
  names: string[];
  perMinute: (number | null)[];
  perDay: (number | null)[];
  /** The limits of a tier name not in `names`. */
  fallback: { perMinute: number | null; perDay: number | null };
}

export interface KeyHitRow {
  id: string;
  org_id: string;
  user_id: string | null;
  tier: string;
  /** Null when the request was not counted. */
  hit: RateHitRow | null;
}

/**
 * The active key with this hash, its organisation's tier, and (when `count`) the request counted
 * against the key's limits, in ONE statement: no row means no such active key, and nothing is
 * counted. The key is looked up on every request (nothing caches it), so a revocation holds on
 * the next request everywhere; the counter row is the same one every process upserts. The key's
 * last_used_at is refreshed in the same statement, at most once a minute.
 */
export async function findKeyAndHit(
  db: Queryable,
  input: { keyHash: string; tiers: TierTable; count: boolean; at?: Date | undefined },
): Promise<KeyHitRow | undefined> {
  const lim = (v: number | null) => v ?? NO_LIMIT;
  // Prepared once per session (queryPrepared): its plan is the same for every key.
  const { rows } = await queryPrepared<Omit<KeyHitRow, "hit"> & Partial<RateHitRow> & { counted: boolean }>(
    db,
    `WITH k AS (
       SELECT k.id, k.org_id, k.user_id, o.tier
       FROM api_keys k JOIN organisations o ON o.id = k.org_id
       WHERE k.key_hash = $1 AND k.revoked_at IS NULL),
     lim AS (
       SELECT k.id AS subject, k.org_id, k.id AS key_id, coalesce($7::timestamptz, now()) AS now,
         coalesce(t.per_minute, $5::int) AS per_minute, coalesce(t.per_day, $6::int) AS per_day
       FROM k LEFT JOIN unnest($2::text[], $3::int[], $4::int[]) AS t (name, per_minute, per_day)
         ON t.name = k.tier
       WHERE $8::boolean),
     hit AS (${rateUpsertSql("lim s", "(SELECT per_minute FROM lim)", "(SELECT per_day FROM lim)")}),
     touched AS (
       UPDATE api_keys SET last_used_at = now()
       WHERE id = (SELECT id FROM k) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
       RETURNING 1)
     SELECT k.id, k.org_id, k.user_id, k.tier, hit.*, hit.admitted IS NOT NULL AS counted FROM k LEFT JOIN hit ON true`,
    [
      input.keyHash,
      input.tiers.names,
      input.tiers.perMinute.map(lim),
      input.tiers.perDay.map(lim),
      lim(input.tiers.fallback.perMinute),
      lim(input.tiers.fallback.perDay),
      input.at ?? null,
      input.count,
    ],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    id: r.id,
    org_id: r.org_id,
    user_id: r.user_id,
    tier: r.tier,
    hit: r.counted
      ? {
          minute_count: r.minute_count!,
          day_count: r.day_count!,
          minute_start: r.minute_start!,
          day: r.day!,
          seen_at: r.seen_at!,
          admitted: r.admitted!,
        }
      : null,
  };
}
