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

// The stored minute's count, or 0 when the stored minute is not the current one.
const MINUTE = "(CASE WHEN r.minute_start = EXCLUDED.minute_start THEN r.minute_count ELSE 0 END)";
const ADMIT = `(${MINUTE} < $2 AND r.day_count < $3)`;
const NO_LIMIT = 2_147_483_647;

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
    `INSERT INTO rate_limit_counters AS r
       (subject, day, org_id, key_id, day_count, minute_start, minute_count, seen_at, admitted)
     SELECT $1, (c.now AT TIME ZONE 'UTC')::date, $5, $6, 1, date_trunc('minute', c.now), 1, c.now, true
     FROM (SELECT coalesce($4::timestamptz, now()) AS now) c
     ON CONFLICT (subject, day) DO UPDATE SET
       admitted = ${ADMIT},
       minute_count = ${MINUTE} + (CASE WHEN ${ADMIT} THEN 1 ELSE 0 END),
       day_count = r.day_count + (CASE WHEN ${ADMIT} THEN 1 ELSE 0 END),
       minute_start = EXCLUDED.minute_start,
       seen_at = EXCLUDED.seen_at
     RETURNING minute_count, day_count, minute_start, day::text AS day, seen_at, admitted`,
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
