import type { Queryable } from "./db.js";

export interface LiveSession {
  org_id: string;
  key_id: string;
  user_id: string | null;
  tier: string;
  csrf: string;
  expires_at: Date;
}

export async function insertSession(
  db: Queryable,
  s: { tokenHash: string; orgId: string; keyId: string; csrf: string; ttlSeconds: number },
): Promise<Date> {
  const { rows } = await db.query<{ expires_at: Date }>(
    `INSERT INTO console_sessions (token_hash, org_id, key_id, csrf, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::int)) RETURNING expires_at`,
    [s.tokenHash, s.orgId, s.keyId, s.csrf, s.ttlSeconds],
  );
  return rows[0]!.expires_at;
}

/**
 * The session with this token hash if it has not expired and its key is still active, with the
 * key's user and the organisation's tier: one statement per console request, on the database clock.
 */
export async function findLiveSession(db: Queryable, tokenHash: string): Promise<LiveSession | undefined> {
  const { rows } = await db.query<LiveSession>(
    `SELECT s.org_id, s.key_id, k.user_id, o.tier, s.csrf, s.expires_at
     FROM console_sessions s
     JOIN api_keys k ON k.id = s.key_id AND k.org_id = s.org_id AND k.revoked_at IS NULL
     JOIN organisations o ON o.id = s.org_id
     WHERE s.token_hash = $1 AND s.expires_at > now()`,
    [tokenHash],
  );
  return rows[0];
}

export async function deleteSession(db: Queryable, tokenHash: string): Promise<void> {
  await db.query("DELETE FROM console_sessions WHERE token_hash = $1", [tokenHash]);
}

/** Drops expired sessions and those of revoked keys; returns how many. */
export async function deleteDeadSessions(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM console_sessions s WHERE s.expires_at <= now()
       OR EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id AND k.revoked_at IS NOT NULL)`,
  );
  return rowCount ?? 0;
}
