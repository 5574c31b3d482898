import { createHash, randomBytes } from "node:crypto";
import type { Db } from "./db/db.js";

/**
 * The server key for cursor signatures and webhook-secret encryption: MNEMO_SECRET_KEY when set,
 * else one generated on first start and kept in the database so every process shares it.
 */
export async function loadServerSecret(
  db: Db,
  configured: string | undefined,
): Promise<{ key: Buffer; source: "config" | "database" }> {
  if (configured) return { key: createHash("sha256").update(configured).digest(), source: "config" };
  await db.query(
    "INSERT INTO settings (key, value) VALUES ('server_secret', $1) ON CONFLICT (key) DO NOTHING",
    [randomBytes(32).toString("base64")],
  );
  const { rows } = await db.query<{ value: string }>(
    "SELECT value FROM settings WHERE key = 'server_secret'",
  );
  return { key: createHash("sha256").update(rows[0]!.value).digest(), source: "database" };
}
