import { createHash, randomBytes } from "node:crypto";
import type { Db } from "./db/db.js";
import { serverSecretSeed, swapKeyFingerprint } from "./db/settings.js";

/**
 * The server key, which seals cursors and console session cookies and encrypts webhook secrets:
 * MNEMO_SECRET_KEY when set, else one generated on first start and kept in the database so every
 * process shares it.
 */
export async function loadServerSecret(
  db: Db,
  configured: string | undefined,
): Promise<{ key: Buffer; source: "config" | "database" }> {
  if (configured) return { key: serverKeyOf(configured), source: "config" };
  return {
    key: serverKeyOf(await serverSecretSeed(db, randomBytes(32).toString("base64"))),
    source: "database",
  };
}

/** The server key made from a configured MNEMO_SECRET_KEY or the stored seed. */
export const serverKeyOf = (secret: string) => createHash("sha256").update(secret).digest();

/** A short public fingerprint of a server key: equal keys, equal fingerprints; it reveals nothing of the key. */
export const keyFingerprint = (key: Buffer) =>
  createHash("sha256").update("mnemo server key fingerprint\0").update(key).digest("hex").slice(0, 12);

/**
 * What to tell the operator when this process's server key is not the one the database last saw a
 * process start with (null when it is, or on the first start): the processes sharing a database
 * must share one key, or they refuse each other's cursors and cannot read each other's webhook
 * secrets. A key changed on purpose reads the same once, at the first restart with it.
 */
export async function keyMismatch(
  db: Db,
  secret: { key: Buffer; source: "config" | "database" },
): Promise<string | null> {
  const mine = keyFingerprint(secret.key);
  const before = await swapKeyFingerprint(db, mine);
  if (before === null || before === mine) return null;
  const how =
    secret.source === "config"
      ? "this process has MNEMO_SECRET_KEY set to another key"
      : "this process has no MNEMO_SECRET_KEY and uses the key stored in the database";
  return (
    `The server key differs from the one the last process started on this database used (fingerprint ${before}; ` +
    `this one ${mine}): ${how}. Processes with different keys refuse each other's list and search cursors ` +
    "(422 cursor_mismatch), sign each other's console users out and cannot read the webhook secrets the others stored. " +
    "Set the same MNEMO_SECRET_KEY on every process; if you changed it on purpose, restart them all with the new one."
  );
}
