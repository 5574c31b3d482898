import { randomBytes } from "node:crypto";
import { type ApiKeyRow, insertApiKey } from "../db/api-keys.js";
import type { Queryable } from "../db/db.js";
import { newKeyId, sha256Hex } from "../ids.js";

export const KEY_PREFIX = "mnemo_";

/** A new random key: fixed prefix + 40 base62-ish characters (238 bits). */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(30).toString("base64url").replace(/[-_]/g, "x");
}

export const hashApiKey = (key: string) => sha256Hex(key);

/** Display form: prefix + last four, never the whole key. */
export const maskKey = (prefix: string, lastFour: string) => `${prefix}...${lastFour}`;

export interface CreatedKey {
  row: ApiKeyRow;
  /** The full key, shown once. */
  key: string;
}

/** Stores a key as its SHA-256 hash; the clear key is returned once and never again. */
export async function createApiKey(
  db: Queryable,
  input: {
    orgId: string;
    userId?: string | null;
    name?: string | null;
    kind?: "api" | "service";
    key?: string;
  },
): Promise<CreatedKey> {
  const key = input.key ?? generateApiKey();
  const row = await insertApiKey(db, {
    id: newKeyId(),
    org_id: input.orgId,
    user_id: input.userId ?? null,
    name: input.name ?? null,
    kind: input.kind ?? "api",
    key_hash: hashApiKey(key),
    prefix: key.startsWith(KEY_PREFIX) ? KEY_PREFIX : key.slice(0, 4),
    last_four: key.slice(-4),
  });
  return { row, key };
}

/** Public view of a key (admin CLI, service-key listing). */
export function keyView(row: ApiKeyRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    user_id: row.user_id,
    name: row.name,
    kind: row.kind,
    display: maskKey(row.prefix, row.last_four),
    prefix: row.prefix,
    last_four: row.last_four,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}
