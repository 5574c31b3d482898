import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
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

// Each test spawns several real processes one after another: on a loaded shared machine a
// start-up alone can take tens of seconds.
describe("database start-up", { timeout: 180_000 }, () => {
  it("the embedded database, owned or attached to, is one session (store transactions are sized by time there); a server is not", async () => {
    const dataDir = migratedDataDir("mn-one-session-");
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const owner = await openDatabase(loadConfig({ MNEMO_DATA_DIR: dataDir }), silentLogger());
    cleanups.push(() => owner.db.close());
    expect(owner.kind).toBe("embedded");
    expect(owner.db.oneSession).toBe(true);
    const attached = await openDatabase(loadConfig({ MNEMO_DATA_DIR: dataDir }), silentLogger());
    cleanups.push(() => attached.db.close());
    expect(attached.kind).toBe("attached");
    expect(attached.db.oneSession).toBe(true);
    // DATABASE_URL: a server, even this one.
    const external = await openDatabase(
      loadConfig({ DATABASE_URL: owner.connectionString, MNEMO_DATA_DIR: dataDir }),
      silentLogger(),
    );
    cleanups.push(() => external.db.close());
    expect(external.kind).toBe("external");
    expect(external.db.oneSession).toBe(false);
  });

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

  it("refuses a server certificate it cannot verify in one line saying sslmode=require verifies and how to give the CA", async () => {
    // A PostgreSQL endpoint with TLS and a self-signed certificate: 'S' to the SSLRequest, then
    // the handshake. psql connects with sslmode=require; node-postgres verifies the certificate.
    const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-tls-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const [keyFile, certFile] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"],
        ...["-keyout", keyFile, "-out", certFile],
      ],
      { stdio: "ignore" },
    );
    const server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.once("data", () => {
        socket.write("S");
        const tlsSocket = new tls.TLSSocket(socket, {
          isServer: true,
          key: readFileSync(keyFile),
          cert: readFileSync(certFile),
        });
        tlsSocket.on("error", () => {});
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as net.AddressInfo).port;
    const r = await runMnemo(["api"], {
      DATABASE_URL: `postgres://mnemo@127.0.0.1:${port}/mnemo?sslmode=require`,
      PORT: String(await freePort()),
    });
    expect(r.code).toBe(1);
    // node-postgres's own notice of its sslmode aliases may come before; Mnemo's line is one.
    const ours = r.stderr.split("\n").filter((l) => l.startsWith("mnemo:"));
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatch(/cannot connect to DATABASE_URL: self-signed certificate/);
    expect(ours[0]).toMatch(/sslmode=require too, unlike psql/);
    expect(ours[0]).toMatch(/NODE_EXTRA_CA_CERTS/);
    expect(ours[0]).toMatch(/sslrootcert=/);
    expect(ours[0]).toMatch(/sslmode=no-verify/);
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
    // A file system that answers ENOENT under an existing directory (/proc): Node's recursive
    // mkdir looped for ever there, and start-up hung with no output.
    const proc = await runMnemo(["serve"], {
      MNEMO_DATA_DIR: "/proc/mnemo-nope/data",
      PORT: String(await freePort()),
    });
    expect([proc.code, proc.stderr]).toEqual([
      1,
      "mnemo: cannot use the data directory /proc/mnemo-nope/data (MNEMO_DATA_DIR): ENOENT: no such file or directory, mkdir '/proc/mnemo-nope'\n",
    ]);
  });

  it("refuses a different embedding dimension than the database was created with", async () => {
    const bare = await startBareDatabase({ vector: true });
    cleanups.push(bare.stop);
    const db = createDb(bare.url, 2);
    cleanups.push(() => db.close());
    await migrate(db, { embeddingDim: 384 });
    await expect(migrate(db, { embeddingDim: 384 })).resolves.toEqual({ applied: [], newer: [] });
    await expect(migrate(db, { embeddingDim: 256 })).rejects.toThrow(/MNEMO_EMBEDDING_DIM[\s\S]*384/);
    // A migration this version does not know (a newer version upgraded the database) is named.
    await db.query(
      "INSERT INTO schema_migrations (version, name) VALUES (99999, '99999_from_the_future.sql')",
    );
    await expect(migrate(db, { embeddingDim: 384 })).resolves.toEqual({
      applied: [],
      newer: ["99999_from_the_future.sql"],
    });
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

describe("MNEMO_METRICS_PORT equal to PORT", { timeout: 120_000 }, () => {
  it("is refused at once, naming both, before the database is made", async () => {
    const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), "mn-sameport-")), "data");
    cleanups.push(async () => rmSync(path.dirname(dataDir), { recursive: true, force: true }));
    const port = String(await freePort());
    const failed = spawnMnemo(["serve"], { MNEMO_DATA_DIR: dataDir, PORT: port, MNEMO_METRICS_PORT: port });
    cleanups.push(() => failed.kill("SIGKILL"));
    expect(await failed.exited, failed.stderr()).toBe(1);
    expect(failed.stderr()).toContain(`MNEMO_METRICS_PORT equals PORT (${port})`);
    expect(existsSync(dataDir)).toBe(false);
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

describe("the first-start key", { timeout: 180_000 }, () => {
  it("an admin command that made another organisation first does not take it: the start that creates `default` prints its key, once", async () => {
    const dataDir = migratedDataDir("mn-first-key-");
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    if (serverDb) cleanups.push(() => serverDb.drop());
    const env = { MNEMO_DATA_DIR: dataDir, ...(serverDb ? { DATABASE_URL: serverDb.url } : {}) };
    const acme = await runMnemo(["admin", "create-org", "--name", "acme", "--json"], env);
    expect(acme.code, acme.stderr).toBe(0);

    // Before, the start created `org_default` without a key and printed none (the database
    // already held an organisation).
    const port = await freePort();
    const first = spawnMnemo(["serve"], { ...env, PORT: String(port) });
    cleanups.push(() => first.kill("SIGKILL"));
    const m = await first.waitFor(/API key \(shown once, keep it\):\s+(mnemo_\S+)/, 90_000);
    const usage = await fetch(`http://127.0.0.1:${port}/v1/usage`, { headers: { "x-api-key": m[1]! } });
    expect(usage.status).toBe(200);
    expect(JSON.stringify(await usage.json())).toContain('"org_default"');
    expect(await first.kill("SIGTERM")).toBe(0);

    // The next start finds `default` and prints nothing.
    const again = spawnMnemo(["serve"], { ...env, PORT: String(await freePort()) });
    cleanups.push(() => again.kill("SIGKILL"));
    await again.waitFor(/"msg":"ready"/, 90_000);
    expect(again.stdout()).not.toMatch(/First start/);
    expect(await again.kill("SIGTERM")).toBe(0);
    const keys = await runMnemo(["admin", "list-keys", "--org", "org_default", "--json"], env);
    expect(JSON.parse(keys.stdout).map((k: { name: string }) => k.name)).toEqual(["first-start"]);
  });

  it("a worker started first on a new database prints no key; the first API process does, with a URL that answers", async () => {
    const dataDir = migratedDataDir("mn-first-key-");
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    if (serverDb) cleanups.push(() => serverDb.drop());
    const env = { MNEMO_DATA_DIR: dataDir, ...(serverDb ? { DATABASE_URL: serverDb.url } : {}) };

    // Before, the worker won the first start and printed the key with a "Try it" URL on
    // 127.0.0.1:8080, where nothing listened.
    const worker = spawnMnemo(["worker"], env);
    cleanups.push(() => worker.kill("SIGKILL"));
    await worker.waitFor(/"msg":"ready"/, 90_000);
    expect(worker.stdout()).not.toMatch(/First start|API key/);

    // The API started beside it creates `default` and prints the key, with its own URL.
    const port = await freePort();
    const api = spawnMnemo(["api"], { ...env, PORT: String(port) });
    cleanups.push(() => api.kill("SIGKILL"));
    const m = await api.waitFor(
      /API key \(shown once, keep it\):\s+(mnemo_\S+)[\s\S]*?(http:\/\/\S+\/v1\/groups)/,
      90_000,
    );
    expect(m[2]).toBe(`http://127.0.0.1:${port}/v1/groups`);
    expect((await fetch(m[2]!, { headers: { "x-api-key": m[1]! } })).status).toBe(200);
    expect(await api.kill("SIGTERM")).toBe(0);
    expect(await worker.kill("SIGTERM")).toBe(0);
    expect(worker.stdout()).not.toMatch(/First start/);
    const keys = await runMnemo(["admin", "list-keys", "--org", "org_default", "--json"], env);
    expect(JSON.parse(keys.stdout).map((k: { name: string }) => k.name)).toEqual(["first-start"]);
  });
});
