import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { startBoss } from "../../jobs/boss.js";
import { createDb } from "../../src/db/db.js";
import { startEmbedded } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { silentLogger } from "../../src/logger.js";
import { TEST_EMBEDDING_DIM } from "./constants.js";
import { ensureNativeServer } from "./native-pg.js";
import { databaseUrl, dropDatabase, onMaintenance, TEST_DB_PREFIX } from "./test-db.js";

/**
 * Builds one migrated database (our schema and pg-boss's) per run. On the embedded database it is
 * dumped, and every test service loads that dump into its own in-memory PGlite in well under a
 * second. With MNEMO_TEST_DATABASE_URL it is a template database on that server, and every test
 * service gets a `CREATE DATABASE ... TEMPLATE` copy (test/helpers/test-db.ts).
 */
export default async function setup(project: TestProject) {
  const runId = `${process.pid}_${randomBytes(3).toString("hex")}`;
  project.provide("testRunId", runId);
  const built = buildForChildren(runId);
  try {
    return await setupDatabase(project, runId);
  } finally {
    await built;
  }
}

/**
 * Compiles the service for the processes tests start (MAIN in test/helpers/process.ts), as `npm
 * run build` does, into a directory of its own renamed into place, so a process started by another
 * run never reads a half-written file. Runs beside the database set-up.
 */
async function buildForChildren(runId: string): Promise<void> {
  const ROOT = path.resolve(import.meta.dirname, "../..");
  const out = path.join(ROOT, `dist-test-${runId}`);
  const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
  try {
    await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", out], {
      cwd: ROOT,
    });
  } catch (err) {
    rmSync(out, { recursive: true, force: true });
    const { stdout = "", message } = err as { stdout?: string; message: string };
    throw new Error(`building the service for child processes failed: ${stdout || message}`);
  }
  cpSync(path.join(ROOT, "console/assets"), path.join(out, "console/assets"), { recursive: true });
  const dest = path.join(ROOT, "dist-test");
  rmSync(dest, { recursive: true, force: true });
  renameSync(out, dest);
}

async function setupDatabase(project: TestProject, runId: string) {
  const serverUrl = process.env.MNEMO_TEST_DATABASE_URL;
  if (serverUrl !== undefined) {
    if (!serverUrl) {
      throw new Error(
        "MNEMO_TEST_DATABASE_URL is empty: set it (or DATABASE_URL for `npm run test:pg`) to a PostgreSQL server with pgvector",
      );
    }
    return setupServer(project, serverUrl, runId);
  }
  project.provide("testServerUrl", "");
  project.provide("testTemplateDb", "");
  // The native server (for the migrate-to and import tests) starts beside the template's build.
  const [, teardown] = await Promise.all([ensureNativeServer(), setupEmbedded(project)]);
  return teardown;
}

async function setupEmbedded(project: TestProject) {
  const dir = path.join(os.tmpdir(), `mnemo-test-template-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  // Persisted, and stopped cleanly below: the data directory that tests starting a real server
  // copy (test/helpers/process.ts, migratedDataDir) instead of creating and migrating their own.
  const dataDir = path.join(dir, "data");
  const server = await startEmbedded({ dataDir, maxConnections: 20 });
  // The same database before anything is created in it: what tests of an empty PostgreSQL load
  // (test/helpers/bare-db.ts) instead of running PGlite's initdb (2-5 s of CPU) for each.
  const bareFile = path.join(dir, "bare.tar.gz");
  writeFileSync(bareFile, Buffer.from(await (await server.dump()).arrayBuffer()));
  const db = createDb(server.connectionString, 4);
  await migrate(db, { embeddingDim: TEST_EMBEDDING_DIM });
  const boss = await startBoss(server.connectionString, silentLogger(), { schedule: false });
  await boss.stop({ graceful: false });
  await db.pool.end();
  const dump = await server.dump();
  const file = path.join(dir, "template.tar.gz");
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  await server.stop();
  // The empty database as a data directory as well, stopped cleanly: what tests of a start-up
  // that migrates copy (test/helpers/process.ts, unmigratedDataDir) instead of running initdb.
  const bareDataDir = path.join(dir, "bare");
  const bare = await startEmbedded({
    dataDir: bareDataDir,
    maxConnections: 5,
    loadDataDir: new Blob([readFileSync(bareFile)]),
  });
  await bare.stop();
  project.provide("templatePath", file);
  project.provide("templateDataDir", dataDir);
  project.provide("bareTemplatePath", bareFile);
  project.provide("bareDataDir", bareDataDir);
  return () => rmSync(dir, { recursive: true, force: true });
}

async function setupServer(project: TestProject, serverUrl: string, runId: string) {
  const template = `${TEST_DB_PREFIX}${runId}_template`;
  await onMaintenance(serverUrl, (c) => c.query(`CREATE DATABASE "${template}" TEMPLATE template0`));
  const url = databaseUrl(serverUrl, template);
  const db = createDb(url, 4);
  await migrate(db, { embeddingDim: TEST_EMBEDDING_DIM });
  const boss = await startBoss(url, silentLogger(), { schedule: false });
  await boss.stop({ graceful: false, close: true });
  await db.pool.end();
  // Nothing may stay connected to a template while it is copied.
  await onMaintenance(serverUrl, (c) =>
    c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [template]),
  );
  project.provide("testServerUrl", serverUrl);
  project.provide("testTemplateDb", template);
  project.provide("templatePath", "");
  project.provide("templateDataDir", "");
  project.provide("bareTemplatePath", "");
  project.provide("bareDataDir", "");
  const { hostname, port } = new URL(serverUrl);
  console.log(
    `test databases: PostgreSQL server at ${hostname || "localhost"}:${port || 5432} (template ${template})`,
  );
  return async () => {
    // Every database of this run: the template and any copy a crashed test file left behind.
    const { rows } = await onMaintenance(serverUrl, (c) =>
      c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [
        `${TEST_DB_PREFIX}${runId}_`,
      ]),
    );
    for (const r of rows) await dropDatabase(serverUrl, r.datname);
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    templatePath: string;
    /** A migrated embedded data directory, stopped cleanly ("" on a PostgreSQL server). */
    templateDataDir: string;
    /** A dump of an empty embedded database, nothing migrated ("" on a PostgreSQL server). */
    bareTemplatePath: string;
    /** That empty database as a data directory, stopped cleanly ("" on a PostgreSQL server). */
    bareDataDir: string;
  }
}
