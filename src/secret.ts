import { createHash, randomBytes } from "node:crypto";
import type { Db } from "./db/db.js";
import { serverSecretSeed } from "./db/settings.js";

/**
 * The server key, which seals cursors and console session cookies and encrypts webhook secrets:
 * MNEMO_SECRET_KEY when set, else one generated on first start and kept in the database so every
 * process shares it.
 */
export async function loadServerSecret(
  db: Db,
  configured: string | undefined,
): Promise<{ key: Buffer; source: "config" | "database" }> {
  if (configured) return { key: createHash("sha256").update(configured).digest(), source: "config" };
  const seed = await serverSecretSeed(db, randomBytes(32).toString("base64"));
  return { key: createHash("sha256").update(seed).digest(), source: "database" };
}
