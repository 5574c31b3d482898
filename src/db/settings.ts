import type { Queryable } from "./db.js";

/**
 * The server secret's seed: the stored one, or `candidate` stored now when there is none yet. Every
 * process that starts at once gets the same value (the first insert wins).
 */
export async function serverSecretSeed(db: Queryable, candidate: string): Promise<string> {
  await db.query(
    "INSERT INTO settings (key, value) VALUES ('server_secret', $1) ON CONFLICT (key) DO NOTHING",
    [candidate],
  );
  const { rows } = await db.query<{ value: string }>(
    "SELECT value FROM settings WHERE key = 'server_secret'",
  );
  return rows[0]!.value;
}
