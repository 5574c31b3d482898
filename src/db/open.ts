import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { createDb, type Db } from "./db.js";
import {
  DataDirUnopenable,
  DirectoryInUse,
  ForeignDirectory,
  ownOrAttach,
  takeOverWhenOwnerGone,
} from "./embedded.js";

export class StartupError extends Error {
  override name = "StartupError";
}

export interface OpenedDatabase {
  db: Db;
  connectionString: string;
  /** "external" (DATABASE_URL), "embedded" (this process serves PGlite) or "attached" (another does). */
  kind: "external" | "embedded" | "attached";
  /** Attached: the process that serves the embedded database. */
  ownerPid?: number;
}

/**
 * Connects to `DATABASE_URL`, or else to the embedded database: opened and served by this process
 * when it can take the data directory's lock, otherwise attached to the process that holds it.
 * `transient` marks a short-lived process (admin commands): long-running ones never attach to it.
 * A long-running process attached serves the database itself once the owner is gone
 * (takeOverWhenOwnerGone; the first to take the lock wins, the others stay attached to it): an
 * owner may be one nothing restarts (an IDE's `mnemo mcp`, with `serve` attached to it), and a
 * process manager that restarts an owner finds it served and attaches. A transient one never does.
 */
export async function openDatabase(
  config: Config,
  log: Logger,
  options: { transient?: boolean } = {},
): Promise<OpenedDatabase> {
  const poolSize = config.MNEMO_DB_POOL_SIZE;
  if (config.DATABASE_URL) {
    // An admin command's connections name themselves apart from the service's (admin reembed
    // counts the service's: src/admin/reembed.ts).
    const db = createDb(
      config.DATABASE_URL,
      poolSize,
      undefined,
      false,
      options.transient ? "mnemo-admin" : "mnemo",
    );
    try {
      await db.query("SELECT 1");
    } catch (err) {
      await db.close();
      throw new StartupError(
        `cannot connect to DATABASE_URL: ${(err as Error).message}${certificateHint(err)}`,
      );
    }
    await requireVector(db);
    return { db, connectionString: config.DATABASE_URL, kind: "external" };
  }
  const onCrash = (err: Error) => {
    // The database of this process is gone: nothing it does from here on can be stored.
    const hint = /PANIC/.test(err.message)
      ? "PostgreSQL stopped after a PANIC, most often a write that failed (a full disk, a file size limit): make room in MNEMO_DATA_DIR and start again; the next start recovers the files as after a crash"
      : undefined;
    log.fatal({ err, ...(hint ? { hint } : {}) }, "the embedded database stopped unexpectedly");
    process.exit(1);
  };
  // Room for this pool, pg-boss's and those of attached processes (api, worker, admin): a
  // connection to the wire server is only a socket, they all share one database session.
  let opened: Awaited<ReturnType<typeof ownOrAttach>>;
  try {
    opened = await ownOrAttach({
      dataDir: config.MNEMO_DATA_DIR,
      maxConnections: poolSize * 2 + 200,
      waitMs: config.MNEMO_OWNER_WAIT_MS,
      ...(options.transient ? { transient: true } : {}),
      onCrash,
    });
  } catch (err) {
    if (err instanceof DirectoryInUse || err instanceof DataDirUnopenable)
      throw new StartupError(err.message);
    // The file system refused the directory (a path through a file, no permission, read-only), or
    // it is someone else's.
    if (err instanceof ForeignDirectory || typeof (err as NodeJS.ErrnoException).syscall === "string")
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
    const takeover = options.transient
      ? undefined
      : takeOverWhenOwnerGone({
          dataDir: config.MNEMO_DATA_DIR,
          maxConnections: poolSize * 2 + 200,
          onCrash,
          onTaken: () =>
            log.warn(
              { dataDir: config.MNEMO_DATA_DIR, formerOwnerPid: opened.ownerPid },
              "the process that served the embedded database is gone; this one serves it now",
            ),
          onFailed: (err) => log.warn({ err }, "could not take over the embedded database"),
        });
    return {
      db: createDb(opened.connectionString, poolSize, takeover ? () => takeover.stop() : undefined, true),
      connectionString: opened.connectionString,
      kind: "attached",
      ownerPid: opened.ownerPid,
    };
  }
  const embedded = opened.server;
  log.info({ dataDir: config.MNEMO_DATA_DIR, psql: embedded.psqlHint }, "embedded database ready");
  const db = createDb(embedded.connectionString, poolSize, () => embedded.stop(), true);
  return { db, connectionString: embedded.connectionString, kind: "embedded" };
}

/**
 * Start-up stops with a clear message (one line) when the `vector` extension cannot be had, or
 * only in a version older than the migrations and searches use; `setting` names where the server
 * came from (DATABASE_URL, or migrate-to's --target).
 */
export async function requireVector(db: Db, setting = "DATABASE_URL"): Promise<void> {
  const { rows } = await db.query<{ available: string | null; installed: string | null }>(
    "SELECT default_version AS available, installed_version AS installed FROM pg_available_extensions WHERE name = 'vector'",
  );
  const problem =
    rows.length === 0
      ? `the PostgreSQL server at ${setting} does not have the pgvector extension ('vector'): ` +
        `install pgvector ${MIN_PGVECTOR} or newer on the database server (https://github.com/pgvector/pgvector#installation; ` +
        "for example the PGDG apt repository's postgresql-NN-pgvector, as a distribution's own package can be older, " +
        "or the pgvector/pgvector Docker image), then run again. Mnemo runs `CREATE EXTENSION IF NOT EXISTS vector` itself."
      : vectorVersionProblem(rows[0]!, setting);
  if (problem) {
    await db.close();
    throw new StartupError(problem);
  }
}

/** The oldest pgvector with what the migrations and searches use: `sparsevec` (0.7), iterative index scans (0.8). */
export const MIN_PGVECTOR = "0.8.0";

/**
 * Why the server's pgvector will not do, or null: the version installed in the database, or
 * before the first start the one `CREATE EXTENSION` would install, is older than MIN_PGVECTOR.
 */
export function vectorVersionProblem(
  versions: { available: string | null; installed: string | null },
  setting = "DATABASE_URL",
): string | null {
  const { available, installed } = versions;
  const older = (v: string | null) => v !== null && compareVersions(v, MIN_PGVECTOR) < 0;
  if (installed !== null ? !older(installed) : !older(available)) return null;
  const where = `the PostgreSQL server at ${setting} has pgvector`;
  if (installed !== null && available !== null && !older(available))
    return (
      `${where} ${installed} in this database, and Mnemo needs ${MIN_PGVECTOR} or newer: the server has ${available}, ` +
      "so run `ALTER EXTENSION vector UPDATE` in the database, then run again."
    );
  return (
    `${where} ${installed ?? available}, and Mnemo needs ${MIN_PGVECTOR} or newer (sparse vectors, iterative index scans): ` +
    "upgrade pgvector on the database server (distribution packages can be older: the PGDG apt repository " +
    "or the pgvector/pgvector Docker image are current), run `ALTER EXTENSION vector UPDATE` in the database, then run again."
  );
}

/** Compares dotted version numbers ("0.10.1" > "0.8.6"); a part that is not a number counts as 0. */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
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

/**
 * Node's codes for a TLS certificate it did not trust: self-signed, an unknown issuer, expired, or
 * for another host name.
 */
const CERTIFICATE_FAILURE =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(VERIFY_LEAF_SIGNATURE|GET_ISSUER_CERT(_LOCALLY)?)|CERT_(HAS_EXPIRED|NOT_YET_VALID|UNTRUSTED)|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * A refused server certificate, explained: node-postgres verifies it for `sslmode=require` (and
 * `prefer`) too, where psql and libpq do not, so a URL that works for psql can fail here.
 */
function certificateHint(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string" || !CERTIFICATE_FAILURE.test(code)) return "";
  return (
    " (the server's TLS certificate is verified, for sslmode=require too, unlike psql: give its CA with" +
    " NODE_EXTRA_CA_CERTS=/path/ca.pem or sslrootcert=/path/ca.pem in the URL, or use" +
    " sslmode=no-verify to encrypt without verifying; see README, Running in production)"
  );
}
