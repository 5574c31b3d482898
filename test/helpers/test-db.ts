import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { inject } from "vitest";

/**
 * The suite runs on the embedded database (PGlite) by default, and on any PostgreSQL server with
 * pgvector when `MNEMO_TEST_DATABASE_URL` names one (`npm run test:pg`). On a server, global setup
 * builds one migrated template database per run, and every test service gets its own database
 * copied from it (`CREATE DATABASE ... TEMPLATE`), dropped when it stops. Names start with
 * `mnemo_test_` and carry the run's pid and random bytes, so runs sharing a server never collide.
 */
export const TEST_DB_PREFIX = "mnemo_test_";

/** The server URL of this run, or undefined on the embedded database. */
export function testServerUrl(): string | undefined {
  const url = inject("testServerUrl");
  return url || undefined;
}

export const onServer = (): boolean => testServerUrl() !== undefined;

/** The URL of database `name` on the server that `serverUrl` points at. */
export function databaseUrl(serverUrl: string, name: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * The run's migrated embedded database as a dump (test/helpers/global-setup.ts), for an in-memory
 * PGlite to load instead of running initdb; embedded pass only.
 */
export function migratedTemplateDump(): Blob {
  return new Blob([readFileSync(inject("templatePath"))]);
}

/** `mnemo_test_<run>_<kind>_<random>`: the run id lets global teardown drop whatever a crash left. */
export function uniqueDbName(kind: string): string {
  return `${TEST_DB_PREFIX}${inject("testRunId")}_${kind}_${randomBytes(4).toString("hex")}`;
}

/** Runs `sql` on the server's maintenance database, on a connection of its own. */
export async function onMaintenance<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * A new database on the test server: a copy of the migrated template, or empty (`fromTemplate:
 * false`, for start-up tests that migrate it themselves). Dropped with FORCE, so connections a
 * stopped process left behind never keep it alive.
 */
export async function createTestDatabase(options: { fromTemplate?: boolean } = {}): Promise<TestDatabase> {
  const server = testServerUrl();
  if (!server) throw new Error("createTestDatabase needs MNEMO_TEST_DATABASE_URL");
  const name = uniqueDbName(options.fromTemplate === false ? "bare" : "db");
  const template = options.fromTemplate === false ? "template0" : inject("testTemplateDb");
  await onMaintenance(server, async (c) => {
    // Copies of one template may be requested by several test files at once; PostgreSQL refuses
    // a copy while another session is connected to the template, so retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        return;
      } catch (err) {
        if (attempt >= 50 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
  let dropped = false;
  return {
    name,
    url: databaseUrl(server, name),
    async drop() {
      if (dropped) return;
      dropped = true;
      await dropDatabase(server, name);
    },
  };
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onMaintenance(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

declare module "vitest" {
  export interface ProvidedContext {
    /** MNEMO_TEST_DATABASE_URL, or "" on the embedded database. */
    testServerUrl: string;
    /** The migrated template database on the server ("" on the embedded database). */
    testTemplateDb: string;
    /** Unique per run (pid and random bytes): every database of the run starts with it. */
    testRunId: string;
  }
}
