import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import pg from "pg";

/**
 * A fresh database on the native PostgreSQL + pgvector server (`../shared/tools/pg-native.sh`),
 * MNEMO_TEST_PG_URL or the script's default address. Database names start with
 * MNEMO_TEST_DB_PREFIX (default `mnemo_test`) so that people sharing a cluster keep theirs apart.
 */
export const NATIVE_PG_URL = process.env.MNEMO_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:54329/postgres";

/** The shared script that installs and starts PostgreSQL 15 + pgvector on this machine. */
const PG_NATIVE_SCRIPT = path.resolve(import.meta.dirname, "../../../shared/tools/pg-native.sh");

async function reachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: NATIVE_PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => {});
  }
}

/**
 * Called once per run by the global set-up: the tests that copy an embedded directory onto a
 * server (migrate-to, import) need the native server even in the embedded pass, so when nothing
 * answers at the default address and the shared script is there, it is started (`--fast`).
 */
export async function ensureNativeServer(): Promise<void> {
  if (process.env.MNEMO_TEST_PG_URL || (await reachable()) || !existsSync(PG_NATIVE_SCRIPT)) return;
  console.log(`starting native PostgreSQL for the migrate-to and import tests: ${PG_NATIVE_SCRIPT} --fast`);
  // A child process awaited, not execFileSync: the global set-up builds the embedded template
  // meanwhile (on a machine without the server, the script creates a cluster, seconds).
  const child = spawn("bash", [PG_NATIVE_SCRIPT, "--fast"], { stdio: ["ignore", "ignore", "inherit"] });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`${PG_NATIVE_SCRIPT} --fast exited with ${code}`);
}

export async function createNativeDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${process.env.MNEMO_TEST_DB_PREFIX ?? "mnemo_test"}_${label}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: NATIVE_PG_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `native PostgreSQL not reachable at ${NATIVE_PG_URL} (start it: eval "$(../shared/tools/pg-native.sh --fast)"): ${(err as Error).message}`,
    );
  }
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(NATIVE_PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: NATIVE_PG_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
