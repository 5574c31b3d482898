import type { Queryable } from "./db.js";
import { analyzeMemoriesUnlessBusy } from "./locks.js";

/**
 * Planner statistics where nothing else keeps them. A PostgreSQL server's autovacuum analyzes a
 * table once about a tenth of it has changed; the embedded database (PGlite, one session, no
 * background workers) has no autovacuum, so without this its statistics stay those of the empty
 * tables, and the planner, believing `memories` nearly empty, walks a user's whole slice of the
 * b-tree for full text and sorts every row by distance instead of using the GIN and HNSW indexes
 * (3,010 memories: a search's statement 36 ms instead of 9).
 *
 * `analyzeIfStale` applies autovacuum's own default rules to this schema's tables: ANALYZE once 50
 * rows plus 10% of the table changed since the last analyze, VACUUM (ANALYZE) once 50 rows plus
 * 20% of it are dead (updated or deleted rows, whose space is otherwise never reused); and only
 * when no autovacuum launcher runs on the server (a table with a nearest-neighbour index is
 * vacuumed after a rebuild of that index: vacuumWithRebuiltGraphs). Runs after each ingest job and
 * with the maintenance sweep; one at a time per process.
 *
 * On a server, autovacuum looks at a table only once a minute (autovacuum_naptime), and a user
 * searches what was just ingested: after a 5,000-message job the planner, still believing the
 * scope held a row or two, walked it whole for full text and ordered it by exact distance (a
 * search's statement 10 ms instead of 3). So an ingest job that stored more memories than
 * autovacuum's own threshold (50 plus 10% of the table as last counted) analyzes `memories`
 * itself, at once; one process at a time (a try-lock: a busy one means another is doing it).
 */
let running: Promise<string[]> | undefined;

export function analyzeIfStale(db: Queryable, options: { stored?: number } = {}): Promise<string[]> {
  running ??= analyze(db, options.stored ?? 0).finally(() => {
    running = undefined;
  });
  return running;
}

async function analyzeAfterBigWrite(db: Queryable, stored: number): Promise<string[]> {
  const { rows } = await db.query<{ big: boolean }>(
    "SELECT $1::int > 50 + 0.1 * greatest(reltuples, 0) AS big FROM pg_class WHERE oid = 'memories'::regclass",
    [stored],
  );
  if (!rows[0]?.big) return [];
  await analyzeMemoriesUnlessBusy(db);
  return ["memories"];
}

/**
 * The kinds of background process the server behind a handle runs (pg_stat_activity's
 * backend_type): asked once per handle, not per ingest job. The embedded database runs none.
 */
const backends = new WeakMap<Queryable, Promise<Set<string>>>();

function runs(db: Queryable, backendType: string): Promise<boolean> {
  let known = backends.get(db);
  if (!known) {
    known = db
      .query<{ backend_type: string }>(
        "SELECT DISTINCT backend_type FROM pg_stat_activity WHERE backend_type IS NOT NULL",
      )
      .then(({ rows }) => new Set(rows.map((r) => r.backend_type)));
    known.catch(() => backends.delete(db));
    backends.set(db, known);
  }
  return known.then((types) => types.has(backendType));
}

const hasAutovacuum = (db: Queryable) => runs(db, "autovacuum launcher");

/**
 * A checkpoint where no checkpointer process runs (the embedded database), if anything was written
 * since the last one; true when one was made. A server's checkpointer starts one every five
 * minutes (checkpoint_timeout) or after max_wal_size of write-ahead log; the embedded database has
 * none, so without this only a clean stop checkpoints: a scale probe saw 5.6 GB of write-ahead log
 * beside 1.6 GB of data, and a start after a crash replayed all of it (16 s). One took 0.17 s
 * there. Run by the ten-minute maintenance sweep and after an import.
 */
export async function checkpointWhereNoneRuns(db: Queryable): Promise<boolean> {
  if (await runs(db, "checkpointer")) return false;
  const { rows } = await db.query<{ written: boolean }>(
    // The checkpoint's own record follows its redo point: 1 KB covers it.
    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn) > 1024 AS written FROM pg_control_checkpoint()",
  );
  if (!rows[0]?.written) return false;
  await db.query("CHECKPOINT");
  return true;
}

async function analyze(db: Queryable, stored: number): Promise<string[]> {
  if (await hasAutovacuum(db)) return stored > 0 ? analyzeAfterBigWrite(db, stored) : [];
  // Counts of changed rows reach pg_stat_user_tables at most once a second unless told (the
  // statement's own end flushes them; PostgreSQL 15 and later, as PGlite is).
  await db.query("SELECT pg_stat_force_next_flush()");
  const { rows } = await db.query<{ relname: string; vacuum: boolean }>(
    `SELECT relname, n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0) AS vacuum FROM pg_stat_user_tables
     WHERE schemaname = 'public'
       AND (n_mod_since_analyze > 50 + 0.1 * greatest(n_live_tup, 0) OR n_dead_tup > 50 + 0.2 * greatest(n_live_tup, 0))
     ORDER BY relname`,
  );
  for (const { relname, vacuum } of rows) {
    if (!/^[a-z_][a-z0-9_]*$/.test(relname)) continue;
    if (!vacuum) await db.query(`ANALYZE ${relname}`);
    // A server with autovacuum off still has other sessions, which a REINDEX would hold up.
    else if (await runs(db, "checkpointer")) await db.query(`VACUUM (ANALYZE) ${relname}`);
    else await vacuumWithRebuiltGraphs(db, relname);
  }
  return rows.map((r) => r.relname);
}

/**
 * VACUUM of a table with a nearest-neighbour (HNSW) index, as pgvector's own README advises: the
 * index rebuilt first, then the vacuum. A vacuum that cleans an HNSW index repairs the graph
 * around every dead row's entry, and on the embedded database that held its one session far
 * longer than a rebuild: 25,275 memories of 384 dimensions with 3,000 deleted took 84 s to
 * vacuum, 250 deleted 19 s; the rebuild took 15 s and the vacuum after it 0.4 s, as the rebuilt
 * index holds no dead entries. INDEX_CLEANUP ON: the vacuum must not skip the other indexes'
 * cleanup either (PostgreSQL skips it when dead rows sit on under 2% of the pages). Only on the
 * embedded database (one session, no checkpointer): on a server whose autovacuum is off, a REINDEX
 * would hold every search of the table for its length, where a vacuum holds none.
 */
async function vacuumWithRebuiltGraphs(db: Queryable, relname: string): Promise<void> {
  const { rows } = await db.query<{ index: string }>(
    `SELECT quote_ident(i.relname) AS index FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_am a ON a.oid = i.relam
     WHERE x.indrelid = to_regclass('public.' || $1) AND a.amname = 'hnsw'`,
    [relname],
  );
  for (const { index } of rows) await db.query(`REINDEX INDEX ${index}`);
  await db.query(`VACUUM (ANALYZE${rows.length ? ", INDEX_CLEANUP ON" : ""}) ${relname}`);
}
