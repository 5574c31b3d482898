import type { Queryable } from "./db.js";

export interface ApiKeyRow {
  id: string;
  org_id: string;
  user_id: string | null;
  name: string | null;
  kind: "api" | "service";
  prefix: string;
  last_four: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLS = "id, org_id, user_id, name, kind, prefix, last_four, created_at, last_used_at, revoked_at";

export async function insertApiKey(
  db: Queryable,
  key: Omit<ApiKeyRow, "created_at" | "last_used_at" | "revoked_at"> & { key_hash: string },
): Promise<ApiKeyRow> {
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_keys (id, org_id, user_id, name, kind, key_hash, prefix, last_four)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLS}`,
    [key.id, key.org_id, key.user_id, key.name, key.kind, key.key_hash, key.prefix, key.last_four],
  );
  return rows[0]!;
}

/**
 * The active key with this hash and its organisation's rate-limit tier, if any. Revoked keys are
 * never returned; nothing caches this, so a revocation holds on the very next request everywhere.
 */
export async function findActiveKeyByHash(
  db: Queryable,
  keyHash: string,
): Promise<(ApiKeyRow & { tier: string }) | undefined> {
  const { rows } = await db.query<ApiKeyRow & { tier: string }>(
    `SELECT ${COLS.split(", ")
      .map((c) => `k.${c}`)
      .join(", ")}, o.tier
     FROM api_keys k JOIN organisations o ON o.id = k.org_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash],
  );
  return rows[0];
}

/** An organisation's keys that still work (service-key listing), oldest first; `userId` narrows. */
export async function listActiveApiKeys(
  db: Queryable,
  orgId: string,
  userId: string | null = null,
): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT ${COLS} FROM api_keys
     WHERE org_id = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR user_id = $2)
     ORDER BY created_at, id`,
    [orgId, userId],
  );
  return rows;
}

export async function findKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(`SELECT ${COLS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
  return rows[0];
}

export async function listApiKeys(db: Queryable, orgId: string): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(
    `SELECT ${COLS} FROM api_keys WHERE org_id = $1 ORDER BY created_at, id`,
    [orgId],
  );
  return rows;
}

/**
 * Revokes a key; `orgId` narrows to one organisation and `userId` to one user's keys when given.
 * Returns the key, or undefined when none matched.
 */
export async function revokeApiKey(
  db: Queryable,
  keyId: string,
  orgId?: string,
  userId: string | null = null,
): Promise<ApiKeyRow | undefined> {
  const { rows } = await db.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
     WHERE id = $1 AND ($2::text IS NULL OR org_id = $2) AND ($3::text IS NULL OR user_id = $3)
     RETURNING ${COLS}`,
    [keyId, orgId ?? null, userId],
  );
  return rows[0];
}

/** Best-effort, at most once a minute per key, so hot keys do not write on every request. */
export async function touchApiKey(db: Queryable, keyId: string): Promise<void> {
  await db.query(
    `UPDATE api_keys SET last_used_at = now()
     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [keyId],
  );
}
