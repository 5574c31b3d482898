import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { createDb, type Db } from "./db.js";
import { DataDirUnopenable, DirectoryInUse, ownOrAttach } from "./embedded.js";

export class StartupError extends Error {
  override name = "StartupError";
}

export interface OpenedDatabase {
  db: Db;
  connectionString: string;
  /** "external" (DATABASE_URL), "embedded" (this process serves PGlite) or "attached" (another does). */
  kind: "external" | "embedded" | "attached";
}

/**
 * Connects to `DATABASE_URL`, or else to the embedded database: opened and served by this process
 * when it can take the data directory's lock, otherwise attached to the process that holds it.
 * `transient` marks a short-lived process (admin commands): long-running ones never attach to it.
 */
export async function openDatabase(
  config: Config,
  log: Logger,
  options: { transient?: boolean } = {},
): Promise<OpenedDatabase> {
  const poolSize = config.MNEMO_DB_POOL_SIZE;
  if (config.DATABASE_URL) {
    const db = createDb(config.DATABASE_URL, poolSize);
    try {
      await db.query("SELECT 1");
    } catch (err) {
      await db.close();
      throw new StartupError(`cannot connect to DATABASE_URL: ${(err as Error).message}`);
    }
    await requireVector(db);
    return { db, connectionString: config.DATABASE_URL, kind: "external" };
  }
  // Room for this pool, pg-boss's and those of attached processes (api, worker, admin): a
  // connection to the wire server is only a socket, they all share one database session.
  let opened: Awaited<ReturnType<typeof ownOrAttach>>;
  try {
    opened = await ownOrAttach({
      dataDir: config.MNEMO_DATA_DIR,
      maxConnections: poolSize * 2 + 200,
      waitMs: config.MNEMO_OWNER_WAIT_MS,
      ...(options.transient ? { transient: true } : {}),
      onCrash: (err) => {
        // The database of this process is gone: nothing it does from here on can be stored.
        const hint = /PANIC/.test(err.message)
          ? "PostgreSQL stopped after a PANIC, most often a write that failed (a full disk, a file size limit): make room in MNEMO_DATA_DIR and start again; the next start recovers the files as after a crash"
          : undefined;
        log.fatal({ err, ...(hint ? { hint } : {}) }, "the embedded database stopped unexpectedly");
        process.exit(1);
      },
    });
  } catch (err) {
    if (err instanceof DirectoryInUse || err instanceof DataDirUnopenable)
      throw new StartupError(err.message);
    // The file system refused the directory (a path through a file, no permission, read-only).
    if (typeof (err as NodeJS.ErrnoException).syscall === "string")
      throw new StartupError(
        `cannot use the data directory ${config.MNEMO_DATA_DIR} (MNEMO_DATA_DIR): ${(err as Error).message}`,
      );
    throw err;
  }
  if (opened.kind === "attached") {
    log.info(
      { dataDir: config.MNEMO_DATA_DIR, ownerPid: opened.ownerPid },
      "attaching to the embedded database served by another process",
    );
    return {
      db: createDb(opened.connectionString, poolSize),
      connectionString: opened.connectionString,
      kind: "attached",
    };
  }
  const embedded = opened.server;
  log.info({ dataDir: config.MNEMO_DATA_DIR, psql: embedded.psqlHint }, "embedded database ready");
  const db = createDb(embedded.connectionString, poolSize, () => embedded.stop());
  return { db, connectionString: embedded.connectionString, kind: "embedded" };
}

/**
 * Start-up stops with a clear message (one line) when the `vector` extension cannot be had;
 * `setting` names where the server came from (DATABASE_URL, or migrate-to's --target).
 */
export async function requireVector(db: Db, setting = "DATABASE_URL"): Promise<void> {
  const { rows } = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (rows.length === 0) {
    await db.close();
    throw new StartupError(
      `the PostgreSQL server at ${setting} does not have the pgvector extension ('vector'): ` +
        "install pgvector on the database server (https://github.com/pgvector/pgvector#installation; " +
        "for example `apt install postgresql-16-pgvector`, or use the pgvector/pgvector Docker image), " +
        "then run again. Mnemo runs `CREATE EXTENSION IF NOT EXISTS vector` itself.",
    );
  }
}

/**
 * What a crash of the PostgreSQL server at DATABASE_URL can cost with its durability settings,
 * or null when it keeps every commit it acknowledged: `fsync = off` (a power loss or an operating
 * system crash can corrupt the database) and `synchronous_commit = off` (a crash loses the last
 * commits it acknowledged; accepted ingest jobs are committed durably all the same, insertJob).
 */
export async function durabilityWarning(db: Db): Promise<string | null> {
  const { rows } = await db.query<{ fsync: string; sync: string }>(
    "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
  );
  const { fsync, sync } = rows[0]!;
  const risks: string[] = [];
  if (fsync === "off")
    risks.push("fsync is off: a power loss or an operating system crash can corrupt the database");
  if (sync === "off")
    risks.push(
      "synchronous_commit is off: a crash of the server loses the last commits it acknowledged " +
        "(memory writes, job results: a job whose result was lost runs again once its heartbeat lapses, MNEMO_JOB_HEARTBEAT_SECONDS; " +
        "accepted ingest jobs are committed durably all the same)",
    );
  return risks.length
    ? `PostgreSQL ${risks.join("; ")}. Fine for tests and benchmarks, not for data you keep.`
    : null;
}
