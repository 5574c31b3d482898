import { existsSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { createDb } from "../src/db/db.js";
import { loadMigrations, migrate } from "../src/db/migrate.js";
import { openDatabase, requireVector, StartupError, vectorVersionProblem } from "../src/db/open.js";
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
    // 0 closed the connections before a wait=true hold could answer (no response at all).
    expect(() => loadConfig({ MNEMO_SHUTDOWN_TIMEOUT_MS: "0" })).toThrow(/MNEMO_SHUTDOWN_TIMEOUT_MS.*1000/);
    expect(loadConfig({ MNEMO_SHUTDOWN_TIMEOUT_MS: "1000" }).MNEMO_SHUTDOWN_TIMEOUT_MS).toBe(1000);
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

  it("stops the process with the variable's name, in one line", async () => {
    const r = await runMnemo(["serve"], { PORT: "eighty", LOG_LEVEL: "loud" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/invalid configuration[\s\S]*PORT/);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mnemo: invalid configuration: PORT: .*; LOG_LEVEL: /);
  });

  it("takes an empty value as unset: the default, never every interface or the working directory", () => {
    const empty = Object.fromEntries(
      [
        "HOST",
        "MNEMO_DATA_DIR",
        "LOG_LEVEL",
        "LOG_FORMAT",
        "MNEMO_LLM_MODEL",
        "MNEMO_EMBEDDING_MODEL",
        "MNEMO_JWT_ORG_CLAIM",
        "MNEMO_JWT_USER_CLAIM",
        "MNEMO_WEBHOOK_RETRY_SCHEDULE",
      ].map((k) => [k, ""]),
    );
    const defaults = loadConfig({});
    expect(loadConfig(empty)).toEqual(defaults);
    expect(loadConfig({ ...empty, HOST: " " }).HOST).toBe("127.0.0.1");
    // All interfaces only when asked.
    expect(loadConfig({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
    expect(loadConfig({ HOST: "::" }).HOST).toBe("::");
  });

  it("refuses an empty entry in MNEMO_WEBHOOK_RETRY_SCHEDULE (it was an extra immediate attempt)", () => {
    for (const v of [",", "5,", "5,,30", " ,5"])
      expect(() => loadConfig({ MNEMO_WEBHOOK_RETRY_SCHEDULE: v }), v).toThrow(
        /MNEMO_WEBHOOK_RETRY_SCHEDULE/,
      );
    expect(loadConfig({ MNEMO_WEBHOOK_RETRY_SCHEDULE: "5, 30" }).MNEMO_WEBHOOK_RETRY_SCHEDULE).toEqual([
      5, 30,
    ]);
  });

  it("HOST= (empty) serves on 127.0.0.1 only", { timeout: 180_000 }, async () => {
    const dataDir = migratedDataDir("mn-host-");
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    if (serverDb) cleanups.push(() => serverDb.drop());
    const port = await freePort();
    const proc = spawnMnemo(["serve"], {
      HOST: "",
      PORT: String(port),
      MNEMO_DATA_DIR: dataDir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
    });
    cleanups.push(() => proc.kill("SIGKILL"));
    const m = await proc.waitFor(/"url":"([^"]+)"/, 90_000);
    expect(m[1]).toBe(`http://127.0.0.1:${port}`);
    await proc.waitFor(/"msg":"ready"/, 90_000);
    expect(await proc.kill("SIGTERM")).toBe(0);
  });
});

describe("admin CLI: wrong use", { timeout: 60_000 }, () => {
  // A data directory that does not exist: nothing may create it (nor open or migrate a database).
  const env = () => ({ MNEMO_DATA_DIR: path.join(os.tmpdir(), `mn-admin-typo-${process.pid}`) });
  afterEach(() => rmSync(env().MNEMO_DATA_DIR, { recursive: true, force: true }));

  it("a missing option value or an unknown option: one line naming it, exit 2, no stack", async () => {
    const cases = [
      [["create-org", "--name"], "--name"],
      [["create-org", "--name", "x", "--bogus"], "--bogus"],
      [["list-keys", "--org"], "--org"],
    ] as const;
    // A required option left out, or a value out of its set, is wrong use too, refused before any
    // database is opened (or a data directory created).
    const required = [
      [["create-org"], "mnemo: admin create-org: --name is required"],
      [["revoke-key"], "mnemo: admin revoke-key: KEY_ID is required"],
      [["export", "--user", "u"], "mnemo: admin export: --org is required"],
      [["migrate-to"], "mnemo: admin migrate-to: --target is required"],
      [["import", "--org", "o", "--format", "csv"], "mnemo: admin import: --format is mnemo or mem0"],
    ] as const;
    const refused = await Promise.all(required.map(([args]) => runMnemo(["admin", ...args], env())));
    required.forEach(([args, said], i) => {
      expect([args, refused[i]!.code, refused[i]!.stderr]).toEqual([args, 2, `${said}\n`]);
    });
    // At once: each is a process start, and none touches anything.
    const runs = await Promise.all(cases.map(([args]) => runMnemo(["admin", ...args], env())));
    cases.forEach(([args, named], i) => {
      const r = runs[i]!;
      expect(r.code, args.join(" ")).toBe(2);
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^mnemo: admin ${args[0]}: .*'${named}`));
    });
    expect(existsSync(env().MNEMO_DATA_DIR)).toBe(false);
  });

  it("admin help, --help and an unknown command answer without opening or creating a database", async () => {
    const subs = ["help", "--help", "-h"];
    // A top-level typo is not read as anything either, even with a configuration that is wrong.
    const [typo, topTypo, none, ...helps] = await Promise.all([
      runMnemo(["admin", "lsit-keys", "--org", "x"], env()),
      runMnemo(["--version"], { ...env(), PORT: "not-a-port" }),
      runMnemo(["admin"], env()),
      ...subs.map((sub) => runMnemo(["admin", sub], env())),
    ]);
    helps.forEach((r, i) => {
      expect(r!.code, subs[i]).toBe(0);
      expect(r!.stdout).toContain("migrate-to --target");
    });
    // One line each, naming the word and where the commands are listed.
    expect([typo!.code, typo!.stderr]).toEqual([
      2,
      "mnemo: unknown admin command 'lsit-keys'; `admin help` lists them\n",
    ]);
    expect([topTypo!.code, topTypo!.stderr]).toEqual([
      2,
      "mnemo: unknown command '--version'; `help` lists the commands\n",
    ]);
    expect([none!.code, none!.stderr]).toEqual([
      2,
      "mnemo: admin needs a command; `admin help` lists them\n",
    ]);
    expect(existsSync(env().MNEMO_DATA_DIR)).toBe(false);
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
    // One line, as every start-up failure.
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("refuses a pgvector older than 0.8, saying whether to upgrade the server or the database's extension", async () => {
    // Debian 12 packages pgvector 0.4, Ubuntu 24.04 0.6: the migrations need sparsevec (0.7) and
    // every search iterative index scans (0.8).
    const old = vectorVersionProblem({ available: "0.6.0", installed: null });
    expect(old).toMatch(/has pgvector 0\.6\.0, and Mnemo needs 0\.8\.0 or newer/);
    expect(old).toMatch(/upgrade pgvector on the database server/);
    expect(vectorVersionProblem({ available: "0.7.4", installed: "0.7.4" }, "--target")).toMatch(
      /^the PostgreSQL server at --target has pgvector 0\.7\.4/,
    );
    // The server was upgraded, the database's extension was not.
    const stale = vectorVersionProblem({ available: "0.8.1", installed: "0.5.1" });
    expect(stale).toMatch(/has pgvector 0\.5\.1 in this database.*ALTER EXTENSION vector UPDATE/);
    expect(stale).not.toMatch(/upgrade pgvector on the database server/);
    for (const fine of [
      { available: "0.8.0", installed: null },
      { available: "0.8.6", installed: "0.8.6" },
      { available: "0.10.0", installed: "0.9.1" },
      // A newer extension installed than the server now offers is not ours to judge.
      { available: "0.7.0", installed: "0.8.1" },
    ])
      expect([fine, vectorVersionProblem(fine)]).toEqual([fine, null]);
    // The server here (PGlite's pgvector, or the one pg-native.sh builds) passes, before and after
    // the extension is created.
    const bare = await startBareDatabase({ vector: true });
    cleanups.push(bare.stop);
    const db = createDb(bare.url, 1);
    try {
      await requireVector(db);
      await db.query("CREATE EXTENSION IF NOT EXISTS vector");
      await requireVector(db);
    } finally {
      await db.close();
    }
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
