import type { Queryable } from "./db.js";

export interface RateHitRow {
  minute_count: number;
  day_count: number;
  minute_start: Date;
  /** UTC day as YYYY-MM-DD. */
  day: string;
  seen_at: Date;
  admitted: boolean;
}

// Counts of the stored window, or 0 when the stored window is not the current one.
const MINUTE = "(CASE WHEN r.minute_start = EXCLUDED.minute_start THEN r.minute_count ELSE 0 END)";
const DAY = "(CASE WHEN r.day = EXCLUDED.day THEN r.day_count ELSE 0 END)";
const ADMIT = `(${MINUTE} < $2 AND ${DAY} < $3)`;

/**
 * One request against a subject's limits, in ONE statement on the database clock (or `at`, the
 * test clock): advances the minute and UTC-day windows, counts the request only when admitted,
 * and, when admitted, adds it to the organisation's usage for that day. Every API process runs
 * the same upsert on the same row, so the limit is shared without any coordination in memory.
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
    `WITH hit AS (
       INSERT INTO rate_limit_counters AS r
         (subject, minute_start, minute_count, day, day_count, seen_at, admitted)
       SELECT $1, date_trunc('minute', c.now), 1, (c.now AT TIME ZONE 'UTC')::date, 1, c.now, true
       FROM (SELECT coalesce($4::timestamptz, now()) AS now) c
       ON CONFLICT (subject) DO UPDATE SET
         admitted = ${ADMIT},
         minute_count = ${MINUTE} + (CASE WHEN ${ADMIT} THEN 1 ELSE 0 END),
         day_count = ${DAY} + (CASE WHEN ${ADMIT} THEN 1 ELSE 0 END),
         minute_start = EXCLUDED.minute_start,
         day = EXCLUDED.day,
         seen_at = EXCLUDED.seen_at
       RETURNING minute_count, day_count, minute_start, day, seen_at, admitted
     ), used AS (
       INSERT INTO usage_counters AS u (org_id, day, key_id, requests)
       SELECT $5, hit.day, $6, 1 FROM hit WHERE hit.admitted
       ON CONFLICT (org_id, day, key_id) DO UPDATE SET requests = u.requests + 1
     )
     SELECT minute_count, day_count, minute_start, day::text AS day, seen_at, admitted FROM hit`,
    [
      input.subject,
      input.perMinute ?? 2_147_483_647,
      input.perDay ?? 2_147_483_647,
      input.at ?? null,
      input.orgId,
      input.keyId ?? "",
    ],
  );
  return rows[0]!;
}
