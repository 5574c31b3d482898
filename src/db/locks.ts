import type { Queryable } from "./db.js";

/**
 * Every advisory lock the service takes, in one place so that no two uses share an id by accident.
 * All are transaction-level: they are released when the transaction ends, so a crashed process
 * never leaves one held. The constants are shared by every Mnemo process. One more lives in SQL:
 * the full-text statistics trigger (sql/065_bm25_sparse.sql) and the storage counts' trigger
 * (sql/098_storage_counts.sql) take the two-key form
 * `pg_advisory_xact_lock(hashtext('mnemo_text_stats:' || org), shard)`, the same lock, first, so
 * writers of one organisation's shard queue there before touching either table's rows; a space of
 * its own (the one-key locks here never meet it).
 */
const LOCK = {
  /** Concurrent migrators apply each migration exactly once. */
  migrations: 7_236_001,
  /** Concurrent first starts create the default organisation's key only once. */
  bootstrap: 7_236_002,
  /** One process at a time analyzes `memories` after a big ingest job (a try-lock: see analyze.ts). */
  analyze: 7_236_003,
} as const;

export const lockMigrations = async (tx: Queryable) => {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [LOCK.migrations]);
};

export const lockBootstrap = async (tx: Queryable) => {
  await tx.query("SELECT pg_advisory_xact_lock($1)", [LOCK.bootstrap]);
};

/**
 * Serialises the ingest stores of one user: keyed by a 64-bit hash of organisation and user (a
 * chance collision with another key only makes two stores wait for each other).
 */
export const lockIngestUser = async (tx: Queryable, orgId: string, userId: string) => {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`ingest:${orgId}:${userId}`]);
};

/**
 * Serialises the changes of one organisation's webhook config (PUT, DELETE): a PUT reads the
 * stored secret to keep it, and without the lock two first PUTs each minted a secret shown in
 * full (only the last one signs), or a plain PUT wrote back the secret a rotation had just
 * replaced. Held for a read and a write, so it is short.
 */
export const lockWebhookConfig = async (tx: Queryable, orgId: string) => {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`webhook:${orgId}`]);
};

/**
 * Serialises the monthly-cap checks of one organisation with the counting of the work they admit
 * (src/usage/quota.ts), so requests racing at the cap cannot all read the same count. Taken only
 * by organisations whose tier has a monthly cap.
 */
export const lockMonthlyQuota = async (tx: Queryable, orgId: string) => {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`quota:${orgId}`]);
};

/**
 * ANALYZE of `memories` by whichever process gets the lock first; the others skip it. In one
 * statement, so the transaction-level try-lock and the ANALYZE share a connection and a
 * transaction.
 */
export const analyzeMemoriesUnlessBusy = async (db: Queryable) => {
  await db.query(
    `DO $$ BEGIN IF pg_try_advisory_xact_lock(${LOCK.analyze}) THEN ANALYZE memories; END IF; END $$`,
  );
};
