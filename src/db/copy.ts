import type { Queryable } from "./db.js";

/**
 * Catalogue-driven table copy for `admin migrate-to`: every table of the public schema, its
 * non-generated columns, the foreign keys between tables, and a paged row copy that goes through
 * JSON (`to_jsonb` on the source, `jsonb_populate_recordset` on the target), so every type,
 * vectors included, arrives through its own input function. Identifiers come from the catalogue
 * and are always quoted.
 */

export interface TableInfo {
  name: string;
  columns: string[];
}

const PAGE = 500;
export const quoteIdent = (s: string) => `"${s.replaceAll('"', '""')}"`;

export async function publicTables(db: Queryable): Promise<TableInfo[]> {
  const { rows } = await db.query<{ table_name: string; columns: string[] }>(
    `SELECT c.table_name, array_agg(c.column_name::text ORDER BY c.ordinal_position) AS columns
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.is_generated = 'NEVER'
     GROUP BY c.table_name ORDER BY c.table_name`,
  );
  return rows.map((r) => ({ name: r.table_name, columns: r.columns }));
}

export async function foreignKeyEdges(db: Queryable): Promise<Array<{ child: string; parent: string }>> {
  const { rows } = await db.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent
     FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
     WHERE k.contype = 'f' AND c.relnamespace = 'public'::regnamespace`,
  );
  return rows;
}

export async function countRows(db: Queryable, table: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quoteIdent(table)}`);
  return rows[0]!.n;
}

/**
 * What the target already holds: tables in the public schema, whether pg-boss's schema exists, and
 * `data`: rows in any of them beyond what the migrations write (`schema_migrations`, the
 * `embedding_dim` setting) or any job in pg-boss (its own internal queues aside). A target with Mnemo's schema and no data is what an
 * interrupted `migrate-to` leaves (its copy is one transaction): a new run may carry on there.
 */
export async function existingContents(
  db: Queryable,
): Promise<{ tables: number; boss: boolean; migrated: boolean; data: boolean }> {
  const { rows } = await db.query<{ tables: number; boss: boolean; migrated: boolean }>(
    `SELECT (SELECT count(*)::int FROM information_schema.tables WHERE table_schema = 'public') AS tables,
            EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss') AS boss,
            to_regclass('public.schema_migrations') IS NOT NULL AS migrated`,
  );
  const out = { ...rows[0]!, data: false };
  for (const t of await publicTables(db)) {
    if (t.name === "schema_migrations") continue;
    const where = t.name === "settings" ? " WHERE key <> 'embedding_dim'" : "";
    const { rows: any } = await db.query(`SELECT 1 FROM ${quoteIdent(t.name)}${where} LIMIT 1`);
    if (any.length) out.data = true;
  }
  if (out.boss && (await db.query("SELECT to_regclass('pgboss.job')::text AS t")).rows[0]?.t) {
    const { rows: jobs } = await db.query(
      "SELECT 1 FROM pgboss.job WHERE name NOT LIKE '\\_\\_pgboss%' LIMIT 1",
    );
    if (jobs.length) out.data = true;
  }
  return out;
}

/** Copies all rows of `table` from the source (a snapshot client) into the target transaction. */
export async function copyTableRows(
  source: Queryable,
  target: Queryable,
  table: TableInfo,
  onRows: (n: number) => void,
): Promise<void> {
  const t = quoteIdent(table.name);
  const cols = table.columns.map(quoteIdent).join(", ");
  const cursor = quoteIdent(`copy_${table.name}`);
  await source.query(
    `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT to_jsonb(x) AS r FROM (SELECT ${cols} FROM ${t}) x`,
  );
  try {
    for (;;) {
      const { rows } = await source.query<{ r: unknown }>(`FETCH ${PAGE} FROM ${cursor}`);
      if (rows.length === 0) break;
      await target.query(
        `INSERT INTO ${t} (${cols}) OVERRIDING SYSTEM VALUE
         SELECT ${cols} FROM jsonb_populate_recordset(NULL::${t}, $1::jsonb)
         ON CONFLICT DO NOTHING`,
        [JSON.stringify(rows.map((x) => x.r))],
      );
      onRows(rows.length);
    }
  } finally {
    await source.query(`CLOSE ${cursor}`);
  }
}

/** Moves every sequence owned by a public column past the largest value copied. */
export async function fixSequences(db: Queryable): Promise<void> {
  const { rows } = await db.query<{ seq: string; tbl: string; col: string }>(
    `SELECT s.oid::regclass::text AS seq, t.relname AS tbl, a.attname AS col
     FROM pg_class s
     JOIN pg_depend d ON d.objid = s.oid AND d.deptype IN ('a', 'i')
     JOIN pg_class t ON t.oid = d.refobjid
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid
     WHERE s.relkind = 'S' AND t.relnamespace = 'public'::regnamespace`,
  );
  for (const r of rows) {
    await db.query(
      `SELECT setval($1::regclass, coalesce(max(${quoteIdent(r.col)}), 1), max(${quoteIdent(r.col)}) IS NOT NULL)
       FROM ${quoteIdent(r.tbl)}`,
      [r.seq],
    );
  }
}

export interface PendingJob {
  id: string;
  name: string;
  data: object | null;
  start_after: Date;
  singleton_key: string | null;
  expire_seconds: number | null;
  heartbeat_seconds: number | null;
}

/** pg-boss jobs of our queues not yet finished (waiting, retrying or running at copy time). */
export async function pendingJobs(db: Queryable, queues: string[]): Promise<PendingJob[]> {
  const { rows: has } = await db.query<{ t: string | null }>("SELECT to_regclass('pgboss.job')::text AS t");
  if (!has[0]?.t) return [];
  const { rows } = await db.query<PendingJob>(
    `SELECT id::text AS id, name, data, start_after, singleton_key, expire_seconds, heartbeat_seconds FROM pgboss.job
     WHERE name = ANY($1::text[]) AND state IN ('created', 'retry', 'active')
     ORDER BY created_on, id`,
    [queues],
  );
  return rows;
}

/**
 * Turns a table's own triggers off or on (foreign-key checks stay). A copy brings every row as it
 * is, so triggers that maintain derived rows (statistics kept by memory inserts) must not run
 * again on the target. The copying user owns the tables: it created them by the migrations.
 */
export async function setUserTriggers(db: Queryable, table: string, enabled: boolean): Promise<void> {
  await db.query(`ALTER TABLE ${quoteIdent(table)} ${enabled ? "ENABLE" : "DISABLE"} TRIGGER USER`);
}
