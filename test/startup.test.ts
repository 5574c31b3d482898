import { existsSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { createDb } from "../src/db/db.js";
import { loadMigrations, migrate } from "../src/db/migrate.js";
import { openDatabase, StartupError } from "../src/db/open.js";
import { silentLogger } from "../src/logger.js";
import { startBareDatabase } from "./helpers/bare-db.js";
import { freePort, migratedDataDir, runMnemo, spawnMnemo } from "./helpers/process.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe("configuration", () => {
  it("names the variable that is wrong", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ DATABASE_URL: "not a url" })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ MNEMO_BOOTSTRAP_API_KEY: "short" })).toThrow(/MNEMO_BOOTSTRAP_API_KEY/);
    // More than pgvector's HNSW index takes: refused before any migration, not half-way through.
    expect(() => loadConfig({ MNEMO_EMBEDDING_DIM: "3072" })).toThrow(/MNEMO_EMBEDDING_DIM.*2000/);
  });

  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 8080,
      HOST: "127.0.0.1",
      MNEMO_DATA_DIR: "./.mnemo-data",
      LOG_LEVEL: "info",
    });
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it("stops the process with the variable's name", async () => {
    const r = await runMnemo(["serve"], { PORT: "eighty" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid configuration[\s\S]*PORT/);
  });
});

// Each test spawns several real processes one after another: on a loaded shared machine a
// start-up alone can take tens of seconds.
describe("database start-up", { timeout: 180_000 }, () => {
  it("refuses a PostgreSQL without pgvector, saying how to install it", async () => {
    const bare = await startBareDatabase({ vector: false });
    cleanups.push(bare.stop);
    const config = loadConfig({ DATABASE_URL: bare.url });
    await expect(openDatabase(config, silentLogger())).rejects.toThrow(StartupError);
    const r = await runMnemo(["api"], { DATABASE_URL: bare.url, PORT: String(await freePort()) });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pgvector/);
    expect(r.stderr).toMatch(/install/i);
  });

  it("applies each migration once when two processes start together", async () => {
    const bare = await startBareDatabase({ vector: true });
    cleanups.push(bare.stop);
    const procs = await Promise.all(
      [0, 1].map(async () =>
        spawnMnemo(["serve"], { DATABASE_URL: bare.url, PORT: String(await freePort()) }),
      ),
    );
    cleanups.push(() => Promise.all(procs.map((p) => p.kill())));
    await Promise.all(procs.map((p) => p.waitFor(/"msg":"ready"/)));
    const { rows } = await bare.query<{ version: number; n: number }>(
      "SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version",
    );
    expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
    expect(rows.every((r) => r.n === 1)).toBe(true);
    // Exactly one of the two printed the first-start key.
    const printed = procs.filter((p) => /First start/.test(p.stdout()));
    expect(printed).toHaveLength(1);
    const codes = await Promise.all(procs.map((p) => p.kill("SIGTERM")));
    expect(codes).toEqual([0, 0]);
  });

  it("a data directory the file system refuses: exit 1 naming MNEMO_DATA_DIR and why, no stack trace", async () => {
    const r = await runMnemo(["serve"], {
      MNEMO_DATA_DIR: path.join(import.meta.filename, "data"), // below a file
      PORT: String(await freePort()),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^mnemo: cannot use the data directory .*\(MNEMO_DATA_DIR\): ENOTDIR: not a directory/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses a different embedding dimension than the database was created with", async () => {
    const bare = await startBareDatabase({ vector: true });
    cleanups.push(bare.stop);
    const db = createDb(bare.url, 2);
    cleanups.push(() => db.close());
    await migrate(db, { embeddingDim: 384 });
    await expect(migrate(db, { embeddingDim: 384 })).resolves.toEqual({ applied: [] });
    await expect(migrate(db, { embeddingDim: 256 })).rejects.toThrow(/MNEMO_EMBEDDING_DIM[\s\S]*384/);
  });

  it("creates a database for the largest embedding dimension allowed (2,000) and stores a row in it", async () => {
    const bare = await startBareDatabase({ vector: true });
    cleanups.push(bare.stop);
    const db = createDb(bare.url, 2);
    cleanups.push(() => db.close());
    await migrate(db, { embeddingDim: loadConfig({ MNEMO_EMBEDDING_DIM: "2000" }).MNEMO_EMBEDDING_DIM });
    const v = `[${Array.from({ length: 2000 }, (_, i) => Math.cos(i)).join(",")}]`;
    await db.query("INSERT INTO organisations (id, name) VALUES ('org_wide', 'wide')");
    await db.query(
      "INSERT INTO memories (id, org_id, type, text, embedding) VALUES (gen_random_uuid(), 'org_wide', 'fact', 'wide', $1::vector)",
      [v],
    );
    const { rows } = await db.query(
      "SELECT vector_dims(embedding) AS d FROM memories WHERE org_id = 'org_wide'",
    );
    expect(rows).toEqual([{ d: 2000 }]);
  });
});

describe("a port another process holds", { timeout: 180_000 }, () => {
  it.each(["PORT", "MNEMO_METRICS_PORT"])(
    "%s: exit 1 naming it, the database closed; the next start still prints the first-start key",
    async (setting) => {
      const holder = net.createServer();
      await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
      cleanups.push(() => new Promise((resolve) => holder.close(resolve)));
      const port = (holder.address() as net.AddressInfo).port;
      const dataDir = migratedDataDir("mn-port-");
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      const serverDb = onServer() ? await createTestDatabase() : undefined;
      if (serverDb) cleanups.push(() => serverDb.drop());
      const env = { MNEMO_DATA_DIR: dataDir, ...(serverDb ? { DATABASE_URL: serverDb.url } : {}) };
      const busy =
        setting === "PORT"
          ? { PORT: String(port) }
          : { PORT: String(await freePort()), MNEMO_METRICS_PORT: String(port) };

      const failed = spawnMnemo(["serve"], { ...env, ...busy });
      cleanups.push(() => failed.kill("SIGKILL"));
      const ended = await Promise.race([
        failed.exited,
        new Promise((r) => setTimeout(() => r("still running after 90 s"), 90_000)),
      ]);
      // Before: the API port was an unhandled 'error' event (a stack trace, the database left
      // open); the metrics port left the process running, its workers polling a closed database.
      expect(ended, failed.stderr()).toBe(1);
      expect(failed.stderr()).toContain(
        `mnemo: cannot listen on 127.0.0.1:${port} (${setting}): the address is already in use`,
      );
      expect(failed.stderr()).not.toMatch(/Unhandled 'error' event|\n\s+at /);
      expect(failed.stdout()).not.toMatch(/First start/);
      if (!serverDb) expect(existsSync(path.join(dataDir, "server.json"))).toBe(false);

      // The failed start's organisation and key were taken back: the next start creates a key
      // and prints it (before, the database was no longer empty and no key was ever shown).
      const free = await freePort();
      const next = spawnMnemo(["serve"], { ...env, PORT: String(free) });
      cleanups.push(() => next.kill("SIGKILL"));
      const m = await next.waitFor(/API key \(shown once, keep it\):\s+(mnemo_\S+)/, 90_000);
      const r = await fetch(`http://127.0.0.1:${free}/v1/groups`, { headers: { "x-api-key": m[1]! } });
      expect(r.status).toBe(200);
      expect(await next.kill("SIGTERM")).toBe(0);
    },
  );
});
