import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

/**
 * An empty PostgreSQL (PGlite, not migrated) served over the wire, as a stand-in for a fresh
 * production server reached through DATABASE_URL. `vector: false` is a server without pgvector.
 */
export async function startBareDatabase(options: { vector: boolean }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mn-bare-"));
  const db = await PGlite.create(options.vector ? { extensions: { vector } } : {});
  const server = new PGLiteSocketServer({ db, path: path.join(dir, ".s.PGSQL.5432"), maxConnections: 60 });
  await server.start();
  return {
    url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`,
    db,
    async stop() {
      await server.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
