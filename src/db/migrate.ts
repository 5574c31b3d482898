import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Db } from "./db.js";
import { lockMigrations } from "./locks.js";
import { StartupError } from "./open.js";
import { reembedMark } from "./settings.js";

// sql/ at the package root: two levels up from src/db/, three from the compiled dist/src/db/.
const here = path.dirname(fileURLToPath(import.meta.url));
const SQL_DIR = [path.resolve(here, "../../sql"), path.resolve(here, "../../../sql")].find((d) =>
  existsSync(d),
)!;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .map((f) => ({ version: Number.parseInt(f, 10), name: f, sql: readFileSync(path.join(dir, f), "utf8") }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Applies pending migrations forward-only, each in its own transaction, under a transaction-level
 * advisory lock so that processes starting together apply each migration exactly once.
 * `{{EMBEDDING_DIM}}` in a migration is replaced by the configured dimension, which is recorded
 * when the database is created; a later mismatch is a start-up error.
 */
export async function migrate(
  db: Db,
  options: {
    embeddingDim: number;
    /**
     * The embedder this process makes vectors with (`Embedder.name`): recorded by the first process
     * to name one; another later is a start-up error while the database holds vectors (those of two
     * models cannot be compared), unless `reembedding` (admin reembed makes them all again).
     */
    embedder?: string;
    reembedding?: boolean;
  },
): Promise<{ applied: string[]; newer: string[] }> {
  await db
    .tx(async (tx) => {
      await lockMigrations(tx);
      await tx.query("CREATE EXTENSION IF NOT EXISTS vector");
      await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
    })
    .catch((err: Error) => {
      throw new StartupError(
        `cannot prepare the database (pgvector extension, migrations table): ${err.message}`,
        { cause: err },
      );
    });
  const applied: string[] = [];
  for (const m of loadMigrations()) {
    const done = await db.tx(async (tx) => {
      await lockMigrations(tx);
      const seen = await tx.query("SELECT 1 FROM schema_migrations WHERE version = $1", [m.version]);
      if (seen.rowCount) return false;
      await tx.query(m.sql.replaceAll("{{EMBEDDING_DIM}}", String(options.embeddingDim)));
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      return true;
    });
    if (done) applied.push(m.name);
  }
  const dim = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'embedding_dim'");
  const stored = Number(dim.rows[0]?.value);
  if (stored !== options.embeddingDim) {
    throw new StartupError(
      `MNEMO_EMBEDDING_DIM is ${options.embeddingDim} but this database was created with embedding dimension ` +
        `${stored}. The dimension is fixed when the database is first created: set MNEMO_EMBEDDING_DIM=${stored}, ` +
        "or start on a new database.",
    );
  }
  if (options.embedder && !options.reembedding) await checkEmbedder(db, options.embedder);
  // Migrations this version does not know: a newer version upgraded the database (a rollback, or
  // an old process started during a rolling upgrade). Said, not refused: the process may still
  // work against the newer schema, and refusing would stop an old process restarting mid-upgrade.
  const known = new Set(loadMigrations().map((m) => m.version));
  const { rows } = await db.query<{ version: number; name: string }>(
    "SELECT version, name FROM schema_migrations ORDER BY version",
  );
  return { applied, newer: rows.filter((r) => !known.has(r.version)).map((r) => r.name) };
}

/**
 * The embedder that made the database's vectors, recorded by the first process that names one (a
 * database from before this record takes the embedder of the first process started after the
 * upgrade). A process configured for another one is refused while any memory has a vector: its
 * query vectors would be compared with another model's (a model configured on a directory the
 * local embedder filled, at the same dimension, ranked an unrelated fact first), so every search
 * would rank by noise. A database without vectors takes the new one.
 */
async function checkEmbedder(db: Db, embedder: string): Promise<void> {
  // An `admin reembed` that did not finish (interrupted, or failed on the model) left vectors of
  // two models: a process of either would rank by noise, the old model's rows first or the new's.
  const mark = await reembedMark(db);
  if (mark) {
    throw new StartupError(
      `an \`admin reembed\` to the embedder ${mark.to} started and did not finish: this database holds vectors ` +
        `of two models, and no process starts on it until a reembed completes. Run \`mnemo admin reembed\` again ` +
        `with ${mark.to} configured to finish it (it resumes where it stopped), or with another embedder to make ` +
        `every vector with that one (README, "Changing the embedding model").`,
    );
  }
  await db.query("INSERT INTO settings (key, value) VALUES ('embedder', $1) ON CONFLICT (key) DO NOTHING", [
    embedder,
  ]);
  const { rows } = await db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'embedder'");
  const recorded = rows[0]?.value;
  if (recorded === undefined || recorded === embedder) return;
  const { rows: any } = await db.query<{ has: boolean }>(
    "SELECT EXISTS (SELECT 1 FROM memories WHERE embedding IS NOT NULL) AS has",
  );
  if (!any[0]?.has) {
    await db.query("UPDATE settings SET value = $1 WHERE key = 'embedder'", [embedder]);
    return;
  }
  throw new StartupError(
    `this database's vectors were made by the embedder ${recorded}, and this process is configured for ` +
      `${embedder}: vectors of two models cannot be compared. Configure ${recorded} again ` +
      "(OPENAI_API_KEY / MNEMO_LLM_BASE_URL and MNEMO_EMBEDDING_MODEL, or none of them for the local embedder), " +
      `or make every vector again with ${embedder}: \`mnemo admin reembed\` (README, "Changing the embedding model").`,
  );
}

/** Whether every migration on disk has been applied (readiness). */
export async function isMigrated(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ version: number }>("SELECT version FROM schema_migrations");
  const have = new Set(rows.map((r) => r.version));
  return loadMigrations().every((m) => have.has(m.version));
}
