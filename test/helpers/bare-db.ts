import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PgliteWireServer } from "../../src/db/pglite-server.js";

/**
 * An empty PostgreSQL (PGlite, not migrated) served over the wire, as a stand-in for a fresh
 * production server reached through DATABASE_URL. `vector: false` is a server without pgvector.
 */
export async function startBareDatabase(options: { vector: boolean }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mn-bare-"));
  const db = await PGlite.create(options.vector ? { extensions: { vector } } : {});
  const server = new PgliteWireServer(db, 60);
  await server.listen({ path: path.join(dir, ".s.PGSQL.5432") });
  return {
    url: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dir)}`,
    db,
    async stop() {
      await server.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
