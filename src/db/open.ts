import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import { createDb, type Db } from "./db.js";
import { findRunningServer, startEmbedded } from "./embedded.js";

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
 * Connects to `DATABASE_URL`, or else to the embedded database: attached to the process already
 * serving the data directory if one is, otherwise opened and served by this process.
 */
export async function openDatabase(config: Config, log: Logger): Promise<OpenedDatabase> {
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
  const running = await findRunningServer(config.MNEMO_DATA_DIR);
  if (running) {
    log.info(
      { dataDir: config.MNEMO_DATA_DIR },
      "attaching to the embedded database served by another process",
    );
    return { db: createDb(running, poolSize), connectionString: running, kind: "attached" };
  }
  // Room for this process's pool, pg-boss's pool and a few attached processes (admin, mcp).
  const embedded = await startEmbedded({ dataDir: config.MNEMO_DATA_DIR, maxConnections: poolSize * 2 + 20 });
  log.info({ dataDir: config.MNEMO_DATA_DIR, psql: embedded.psqlHint }, "embedded database ready");
  const db = createDb(embedded.connectionString, poolSize, () => embedded.stop());
  return { db, connectionString: embedded.connectionString, kind: "embedded" };
}

/** Start-up stops with a clear message when the `vector` extension cannot be had. */
export async function requireVector(db: Db): Promise<void> {
  const { rows } = await db.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
  if (rows.length === 0) {
    await db.close();
    throw new StartupError(
      "the PostgreSQL server at DATABASE_URL does not have the pgvector extension ('vector').\n" +
        "Install pgvector on the database server (https://github.com/pgvector/pgvector#installation;\n" +
        "for example `apt install postgresql-16-pgvector`, or use the pgvector/pgvector Docker image),\n" +
        "then restart. Mnemo runs `CREATE EXTENSION IF NOT EXISTS vector` itself.",
    );
  }
}
