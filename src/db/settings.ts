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

/**
 * Records the fingerprint of the server key this process runs with, returning the one recorded
 * before it (null on the first start): processes that disagree about the key refuse each other's
 * cursors and cannot read the webhook secrets the others stored.
 */
export async function swapKeyFingerprint(db: Queryable, fingerprint: string): Promise<string | null> {
  const { rows } = await db.query<{ before: string | null }>(
    `WITH before AS (SELECT value FROM settings WHERE key = 'server_key_fingerprint'),
     upsert AS (
       INSERT INTO settings (key, value) VALUES ('server_key_fingerprint', $1)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value)
     SELECT (SELECT value FROM before) AS before`,
    [fingerprint],
  );
  return rows[0]?.before ?? null;
}

/**
 * The mark a reembed leaves while it runs (settings `reembed`): the embedder it makes vectors with,
 * and the last memory done. While it is there the database holds vectors of two models, and no
 * process starts on it (src/db/migrate.ts, checkEmbedder; src/admin/reembed.ts) until a reembed completes.
 */
export interface ReembedMark {
  to: string;
  after: string;
}

export async function reembedMark(db: Queryable): Promise<ReembedMark | undefined> {
  const { rows } = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'reembed'");
  return rows[0] ? (JSON.parse(rows[0].value) as ReembedMark) : undefined;
}

export async function setReembedMark(db: Queryable, mark: ReembedMark): Promise<void> {
  await db.query(
    `INSERT INTO settings (key, value) VALUES ('reembed', $1)
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    [JSON.stringify(mark)],
  );
}
