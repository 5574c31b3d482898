import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tryLockDir } from "../src/db/dir-lock.js";
import { DirectoryInUse, findRunningServer, ownOrAttach, startEmbedded } from "../src/db/embedded.js";
import {
  freePort,
  type MnemoProcess,
  migratedDataDir,
  runMnemo,
  spawnMnemo,
  unmigratedDataDir,
} from "./helpers/process.js";

/**
 * One owner per data directory: only the process holding the directory's lock opens the
 * database and creates or removes its socket; everyone else attaches through the socket.
 *
 * EMBEDDED-ONLY (left out of the PostgreSQL pass in vitest.config.ts): with DATABASE_URL there is
 * no data directory to own, and these processes never read MNEMO_TEST_DATABASE_URL.
 */
const dirs: string[] = [];
const procs: MnemoProcess[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGKILL")));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), "mn-own-"));
  dirs.push(d);
  return d;
};
/**
 * A data directory holding a database already (a copy of the run's migrated one, stopped
 * cleanly): for tests about a directory with a database in it, not about creating one, which
 * costs PGlite's initdb (about 5 s of CPU) a directory.
 */
const dataDirWithDb = () => {
  const d = migratedDataDir("mn-own-");
  dirs.push(d);
  return d;
};
const KEY = "mnemo_test_owner_bootstrap_key_0001";

async function serve(dataDir: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const p = spawnMnemo(["serve"], {
    MNEMO_DATA_DIR: dataDir,
    PORT: String(port),
    MNEMO_BOOTSTRAP_API_KEY: KEY,
    MNEMO_DB_POOL_SIZE: "3",
    ...env,
  });
  procs.push(p);
  return { p, base: `http://127.0.0.1:${port}` };
}

const groupNames = async (base: string) => {
  const r = await fetch(`${base}/v1/groups?include_archived=true`, { headers: { "x-api-key": KEY } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: Array<{ name: string }> }).data.map((g) => g.name).sort();
};

/**
 * V8 aborting itself on one of its own checks ("# Fatal error in , line 0 / # Check failed:
 * jit_page.has_value()"): a defect in V8's registry of compiled-code pages that many processes
 * compiling at once on a busy machine can meet (nodejs/node#64500), not this project's locking.
 * Seen once in about 40 runs of this file, in a process that had not yet logged a line.
 */
const v8Aborted = (p: MnemoProcess) => /# Fatal error in [^\n]*\n# Check failed/.test(p.stderr());

/** Ten servers started at once on one directory: one owner, nine attached, none corrupting it. */
async function tenAtOnce(dataDir: string, expectedGroups: string[], retries = 1): Promise<void> {
  const started = await Promise.all(Array.from({ length: 10 }, () => serve(dataDir)));
  const outcomes = await Promise.all(
    started.map(({ p }) =>
      p.waitFor(/"msg":"ready"/, 120_000).then(
        () => "ready",
        () => "exited",
      ),
    ),
  );
  // A process V8 aborted is a crashed peer: the others are stopped and the round starts again on
  // the same directory, once (its first start after the crash must open it intact too).
  const aborted = started.filter(({ p }) => v8Aborted(p));
  if (aborted.length > 0 && retries > 0) {
    console.warn(`V8 aborted ${aborted.length} of 10 processes: ${aborted[0]!.p.stderr().slice(0, 200)}`);
    await Promise.all(started.map(({ p }) => p.kill("SIGTERM")));
    return tenAtOnce(dataDir, expectedGroups, retries - 1);
  }
  expect(outcomes).toEqual(Array(10).fill("ready"));
  const logs = started.map(({ p }) => p.stdout());
  expect(logs.filter((l) => l.includes('"msg":"embedded database ready"'))).toHaveLength(1);
  expect(logs.filter((l) => l.includes('"msg":"attaching to the embedded database'))).toHaveLength(9);
  // Every one of them reads the same database.
  for (const { base } of started) expect(await groupNames(base)).toEqual(expectedGroups);
  // Attached ones first (they lose their database otherwise), then the owner.
  const owner = started.find(({ p }) => p.stdout().includes('"msg":"embedded database ready"'))!;
  await Promise.all(started.filter((s) => s !== owner).map(({ p }) => p.kill("SIGTERM")));
  expect(await owner.p.kill("SIGTERM")).toBe(0);
  expect(existsSync(path.join(dataDir, "server.json"))).toBe(false);
  expect(existsSync(path.join(dataDir, ".s.PGSQL.5432"))).toBe(false);

  // The directory opens afterwards with every row intact.
  const again = await serve(dataDir);
  await again.p.waitFor(/"msg":"ready"/, 170_000);
  expect(await groupNames(again.base)).toEqual(expectedGroups);
  const keys = await runMnemo(["admin", "list-keys", "--org", "org_default", "--json"], {
    MNEMO_DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
  });
  expect(keys.code).toBe(0);
  expect(JSON.parse(keys.stdout)).toHaveLength(1);
  expect(await again.p.kill("SIGTERM")).toBe(0);
}

describe("one owner per data directory", () => {
  it("a server that waited its time for an admin command says so, not that the owner does not serve it", async () => {
    const dir = dataDirWithDb();
    const command = await startEmbedded({ dataDir: dir, maxConnections: 10, transient: true });
    try {
      const waited = ownOrAttach({ dataDir: dir, maxConnections: 10, waitMs: 300 });
      await expect(waited).rejects.toBeInstanceOf(DirectoryInUse);
      await expect(waited).rejects.toThrow(
        new RegExp(
          `held by an admin command \\(PID ${process.pid}\\), which did not finish within MNEMO_OWNER_WAIT_MS \\(300 ms\\)`,
        ),
      );
      // An admin command attaches to it (both short-lived).
      const other = await ownOrAttach({ dataDir: dir, maxConnections: 10, transient: true, waitMs: 300 });
      expect(other.kind).toBe("attached");
    } finally {
      await command.stop();
    }
  });

  it("a copy taken while its server ran is its own directory, not a way to the original's server", async () => {
    const dir = dataDirWithDb();
    const server = await startEmbedded({ dataDir: dir, maxConnections: 10 });
    const copy = mkdtempSync(path.join(os.tmpdir(), "mn-copy-"));
    try {
      cpSync(dir, copy, {
        recursive: true,
        filter: (src) => !src.endsWith(".s.PGSQL.5432") && !src.endsWith(".lock"),
      });
      // The copy's owner record still names the original's socket, which answers.
      expect(await findRunningServer(dir)).toBeDefined();
      expect(await findRunningServer(copy)).toBeUndefined();
      // Opened, the copy is owned by this opener (admin migrate-to read the original through it).
      const opened = await ownOrAttach({ dataDir: copy, maxConnections: 10, transient: true, waitMs: 300 });
      expect(opened.kind).toBe("embedded");
      if (opened.kind === "embedded") await opened.server.stop();
    } finally {
      await server.stop();
      rmSync(copy, { recursive: true, force: true });
    }
  }, 180_000);

  it("a second owner in the same process is refused while the first lives, and admitted after", async () => {
    const dir = dataDirWithDb();
    const first = await startEmbedded({ dataDir: dir, maxConnections: 10 });
    expect(tryLockDir(dir)).toBeUndefined();
    const second = startEmbedded({ dataDir: dir, maxConnections: 10 });
    await expect(second).rejects.toBeInstanceOf(DirectoryInUse);
    await expect(second).rejects.toThrow(new RegExp(`PID ${process.pid}`));
    // The refused one did not touch the owner's socket.
    expect(existsSync(path.join(dir, ".s.PGSQL.5432"))).toBe(true);
    await first.stop();
    const lock = tryLockDir(dir);
    expect(lock).toBeDefined();
    lock!.release();
  }, 180_000);

  it("ten servers started at once on a fresh directory", async () => {
    await tenAtOnce(tempDir(), []);
  }, 180_000);

  it("ten servers started at once on a directory with data", async () => {
    const dir = dataDirWithDb();
    const s = await serve(dir);
    await s.p.waitFor(/"msg":"ready"/, 170_000);
    const names = Array.from({ length: 12 }, (_, i) => `group-${String(i).padStart(2, "0")}`);
    for (const name of names) {
      const r = await fetch(`${s.base}/v1/groups`, {
        method: "POST",
        headers: { "x-api-key": KEY, "content-type": "application/json" },
        body: JSON.stringify({ name }),
      });
      expect(r.status).toBe(201);
    }
    expect(await s.p.kill("SIGTERM")).toBe(0);
    await tenAtOnce(dir, names);
  }, 180_000);

  it("a server started beside an admin command keeps its socket when the command ends", async () => {
    // An empty database, unmigrated: the command migrates it, holding the directory for seconds
    // while the server starts (without PGlite's initdb first, which is not what this is about).
    const dir = unmigratedDataDir("mn-own-");
    dirs.push(dir);
    const adminRun = runMnemo(["admin", "create-org", "--name", "side", "--json"], {
      MNEMO_DATA_DIR: dir,
      LOG_LEVEL: "warn",
      MNEMO_BOOTSTRAP_API_KEY: KEY,
    });
    const s = await serve(dir);
    const done = await adminRun;
    expect(done.code).toBe(0);
    await s.p.waitFor(/"msg":"ready"/, 170_000);
    // The server owns the directory now (it waited for the command instead of attaching to it).
    expect(s.p.stdout()).toContain('"msg":"embedded database ready"');
    expect(existsSync(path.join(dir, ".s.PGSQL.5432"))).toBe(true);
    expect((await fetch(`${s.base}/readyz`)).status).toBe(200);
    const org = JSON.parse(done.stdout) as { api_key: string };
    expect((await fetch(`${s.base}/v1/groups`, { headers: { "x-api-key": org.api_key } })).status).toBe(200);
    // An admin command run now attaches, and leaves the owner's socket in place.
    const listed = await runMnemo(["admin", "list-keys", "--org", "org_default", "--json"], {
      MNEMO_DATA_DIR: dir,
      LOG_LEVEL: "warn",
    });
    expect(listed.code).toBe(0);
    expect(existsSync(path.join(dir, ".s.PGSQL.5432"))).toBe(true);
    expect((await fetch(`${s.base}/readyz`)).status).toBe(200);
    expect(await s.p.kill("SIGTERM")).toBe(0);
  }, 180_000);

  it("refuses to start, naming the owner's PID, when the owner never serves", async () => {
    const dir = tempDir();
    // This test process holds the lock without serving, like an owner stuck while starting.
    const lock = tryLockDir(dir)!;
    writeFileSync(path.join(dir, "server.json"), JSON.stringify({ pid: process.pid }));
    try {
      const r = await runMnemo(["admin", "list-keys", "--org", "org_default"], {
        MNEMO_DATA_DIR: dir,
        MNEMO_OWNER_WAIT_MS: "500",
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`in use by another process \\(PID ${process.pid}\\)`));
    } finally {
      lock.release();
    }
  }, 180_000);
  it("a file, or a directory of other files with no database: serve and admin refuse in one line, creating nothing", async () => {
    const dir = tempDir();
    const file = path.join(dir, "notes.txt");
    writeFileSync(file, "hi\n");
    const cases: Array<[string, RegExp]> = [
      // SQLite's lock said only "unable to open database file", with a stack trace.
      [file, /: ENOTDIR: not a directory/],
      // A new database was made among the files (pgdata, owner.lock).
      [
        dir,
        /: it holds other files \(notes\.txt\) and no Mnemo database; set it to the server's data directory/,
      ],
    ];
    for (const [dataDir, why] of cases) {
      const runs = await Promise.all([
        runMnemo(["admin", "list-keys", "--org", "org_default"], { MNEMO_DATA_DIR: dataDir }),
        runMnemo(["serve"], { MNEMO_DATA_DIR: dataDir, PORT: String(await freePort()) }),
      ]);
      for (const r of runs) {
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toMatch(
          new RegExp(`^mnemo: cannot use the data directory ${dataDir} \\(MNEMO_DATA_DIR\\)`),
        );
        expect(r.stderr).toMatch(why);
        expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
      }
    }
    expect(readdirSync(dir)).toEqual(["notes.txt"]);
  }, 180_000);

  it("a damaged data directory: start-up stops at once with PostgreSQL's reason and what to do", async () => {
    const dataDir = dataDirWithDb();
    // The control file is gone (a copy taken half-way, a disk that lost it).
    rmSync(path.join(dataDir, "pgdata", "global", "pg_control"));
    const damaged = await serve(dataDir);
    const ended = await Promise.race([
      damaged.p.exited,
      new Promise((r) => setTimeout(() => r("still running after 90 s"), 90_000)),
    ]);
    expect(ended, damaged.p.stderr()).toBe(1);
    const said = damaged.p.stderr();
    expect(said).toContain(`mnemo: cannot open the embedded database in ${dataDir}`);
    expect(said).toContain(
      'PostgreSQL says PANIC: could not open file "global/pg_control": No such file or directory',
    );
    expect(said).toMatch(/keep a copy of the directory as it is, then restore it from a backup/);
    // A message, not a stack trace, and not taken for a directory in use.
    expect(said).not.toMatch(/\n\s+at /);
    expect(said).not.toMatch(/in use/);
  }, 240_000);
});
