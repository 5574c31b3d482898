import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startBoss } from "../../jobs/boss.js";
import { createDb } from "../../src/db/db.js";
import { startEmbedded } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { silentLogger } from "../../src/logger.js";
import { TEST_EMBEDDING_DIM } from "./constants.js";

/**
 * Builds one migrated database (our schema and pg-boss's) and dumps it; every test file loads
 * that dump into its own in-memory PGlite in well under a second.
 */
export default async function setup(project: TestProject) {
  const dir = path.join(os.tmpdir(), `mnemo-test-template-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const server = await startEmbedded({ dataDir: dir, maxConnections: 20, inMemory: true });
  const db = createDb(server.connectionString, 4);
  await migrate(db, { embeddingDim: TEST_EMBEDDING_DIM });
  const boss = await startBoss(server.connectionString, silentLogger(), { schedule: false });
  await boss.stop({ graceful: false });
  await db.pool.end();
  const dump = await server.pglite.dumpDataDir("gzip");
  const file = path.join(dir, "template.tar.gz");
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await server.stop();
  project.provide("templatePath", file);
}

declare module "vitest" {
  export interface ProvidedContext {
    templatePath: string;
  }
}
