import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { vector } from "@electric-sql/pglite-pgvector";
import pg from "pg";
import { inject } from "vitest";
import { PgliteWireServer } from "../../src/db/pglite-server.js";
import { createTestDatabase, onServer } from "./test-db.js";

export interface BareDatabase {
  url: string;
  query<R extends pg.QueryResultRow = any>(sql: string): Promise<{ rows: R[] }>;
  stop(): Promise<void>;
}

/**
 * An empty PostgreSQL (not migrated) reached through DATABASE_URL, as a fresh production server
 * would be: with MNEMO_TEST_DATABASE_URL a new empty database on that server, else PGlite served
 * over the wire. `vector: false` is a server without pgvector, which only PGlite can stand in for
 * (a real server here has the extension installed), so it is PGlite on both passes.
 */
export async function startBareDatabase(options: { vector: boolean }): Promise<BareDatabase> {
  if (options.vector && onServer()) {
    const created = await createTestDatabase({ fromTemplate: false });
    const pool = new pg.Pool({ connectionString: created.url, max: 2 });
    pool.on("error", () => {});
    return {
      url: created.url,
      query: (sql) => pool.query(sql),
      async stop() {
        await pool.end();
        await created.drop();
      },
    };
  }
  return startPgliteBare(options);
}

/**
 * An empty PGlite served over the wire (also for tests of the wire server itself). On the
 * embedded pass it loads the run's dump of an empty database (test/helpers/global-setup.ts)
 * rather than running initdb again; its extensions are only offered, none is created in it.
 */
export async function startPgliteBare(options: { vector: boolean }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mn-bare-"));
  const bare = inject("bareTemplatePath");
  const db = await PGlite.create({
    ...(bare ? { loadDataDir: new Blob([readFileSync(bare)]) } : {}),
    ...(options.vector ? { extensions: { vector, btree_gin } } : {}),
  });
  const server = new PgliteWireServer(db, 60);
  await server.listen({ path: path.join(dir, ".s.PGSQL.5432") });
  return {
    url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`,
    db,
    query: <R extends pg.QueryResultRow = any>(sql: string) => db.query<R>(sql),
    async stop() {
      await server.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
