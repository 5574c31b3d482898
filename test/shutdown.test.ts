import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  childEnv,
  freePort,
  type MnemoProcess,
  migratedDataDir,
  ROOT,
  spawnMnemo,
  unmigratedDataDir,
} from "./helpers/process.js";
import {
  createTestDatabase,
  onMaintenance,
  onServer,
  type TestDatabase,
  testServerUrl,
} from "./helpers/test-db.js";

/**
 * Graceful shutdown of the real process: signals, in-flight requests, keep-alive clients. On the
 * embedded database by default; in the PostgreSQL pass (MNEMO_TEST_DATABASE_URL) each server gets
 * a database of its own on that server (a copy of the migrated template, as the embedded pass
 * copies the migrated data directory; empty for the start-up test, which it migrates), so the stop
 * closes pg-boss, the LISTEN connection and the pool of a real server.
 */
const KEY = "mnemo_test_shutdown_bootstrap_key_001";
const dirs: string[] = [];
const procs: MnemoProcess[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGKILL")));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const db of databases) await db.drop();
});

async function start(env: Record<string, string> = {}) {
  const dataDir = migratedDataDir("mn-stop-");
  dirs.push(dataDir);
  const db = onServer() ? await createTestDatabase() : undefined;
  if (db) databases.push(db);
  const port = await freePort();
  const p = spawnMnemo(["serve"], {
    MNEMO_DATA_DIR: dataDir,
    ...(db ? { DATABASE_URL: db.url } : {}),
    PORT: String(port),
    MNEMO_BOOTSTRAP_API_KEY: KEY,
    ...env,
  });
  procs.push(p);
  await p.waitFor(/"msg":"ready"/, 170_000);
  return { p, dataDir, db, base: `http://127.0.0.1:${port}`, port };
}

const ingest = (base: string, wait = true) =>
  fetch(`${base}/v1/memories?wait=${wait}`, {
    method: "POST",
    headers: { "x-api-key": KEY, "content-type": "application/json" },
    body: JSON.stringify({
      user_id: "u1",
      conv_id: "c1",
      messages: [{ role: "user", content: "I live in Lisbon." }],
    }),
  });

/**
 * The database was closed cleanly and it was logged. Embedded: the owner removed its record and
 * socket. PostgreSQL: no connection of the process is left on the server, and the data directory
 * was never used.
 */
async function closedCleanly(s: { p: MnemoProcess; dataDir: string; db?: TestDatabase | undefined }) {
  expect(s.p.stdout()).toContain('"msg":"stopped"');
  expect(existsSync(path.join(s.dataDir, "server.json"))).toBe(false);
  expect(existsSync(path.join(s.dataDir, ".s.PGSQL.5432"))).toBe(false);
  if (!s.db) return;
  expect(existsSync(path.join(s.dataDir, "pgdata"))).toBe(false);
  const backends = () =>
    onMaintenance(testServerUrl()!, async (c) => {
      const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [
        s.db!.name,
      ]);
      return rows[0].n as number;
    });
  // A backend ends a moment after its client has gone.
  const until = Date.now() + 5_000;
  while ((await backends()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  expect(await backends()).toBe(0);
}

describe("shutdown", () => {
  it("SIGTERM during start-up: the service finishes starting, then stops, exit 0; the next start opens it", async () => {
    // An empty database (initdb run, in a copy; or on the server): start-up migrates it, seconds
    // after the database opened.
    const dataDir = onServer()
      ? mkdtempSync(path.join(os.tmpdir(), "mn-stop-early-"))
      : unmigratedDataDir("mn-stop-early-");
    dirs.push(dataDir);
    const db = onServer() ? await createTestDatabase({ fromTemplate: false }) : undefined;
    if (db) databases.push(db);
    const env = async () => ({
      MNEMO_DATA_DIR: dataDir,
      ...(db ? { DATABASE_URL: db.url } : {}),
      PORT: String(await freePort()),
      MNEMO_BOOTSTRAP_API_KEY: KEY,
    });
    const p = spawnMnemo(["serve"], await env());
    procs.push(p);
    await p.waitFor(/"msg":"(embedded database ready|migrations applied)"/, 170_000);
    expect(p.stdout()).not.toContain('"msg":"ready"');
    p.child.kill("SIGTERM");
    // It was killed by the signal (exit 143, null here), leaving its lock files behind.
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toContain('"msg":"shutting down"');
    const again = spawnMnemo(["serve"], await env());
    procs.push(again);
    await again.waitFor(/"msg":"ready"/, 170_000);
    expect(await again.kill("SIGTERM")).toBe(0);
  }, 360_000);

  it("two SIGTERMs 100 ms apart: the in-flight request finishes, the database closes, exit 0", async () => {
    const s = await start({ MNEMO_TEST_EXTRACT_DELAY_MS: "2000" });
    const inFlight = ingest(s.base);
    await s.p.waitFor(/"msg":"ingest accepted"/);
    s.p.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 100));
    s.p.child.kill("SIGTERM");
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("succeeded");
    expect(await s.p.exited).toBe(0);
    expect(s.p.stdout()).toContain('"msg":"already shutting down"');
    await closedCleanly(s);
  }, 180_000);

  it("a wait=true hold longer than the time-out answers 202 pending in time; exit 0", async () => {
    const s = await start({ MNEMO_TEST_EXTRACT_DELAY_MS: "20000", MNEMO_SHUTDOWN_TIMEOUT_MS: "3000" });
    const inFlight = ingest(s.base);
    await s.p.waitFor(/"msg":"ingest accepted"/);
    s.p.child.kill("SIGTERM");
    const res = await inFlight;
    expect(res.status).toBe(202);
    expect(res.headers.get("connection")).toBe("close");
    expect(((await res.json()) as { status: string }).status).toBe("pending");
    expect(await s.p.exited).toBe(0);
    await closedCleanly(s);
  }, 180_000);

  it("at the shortest time-out (1 s), with a job running: the wait=true hold answers 202 pending, no error is logged, exit 0", async () => {
    const s = await start({ MNEMO_TEST_EXTRACT_DELAY_MS: "20000", MNEMO_SHUTDOWN_TIMEOUT_MS: "1000" });
    const inFlight = ingest(s.base);
    await s.p.waitFor(/"msg":"ingest accepted"/);
    await new Promise((r) => setTimeout(r, 1500)); // a worker has taken the job
    s.p.child.kill("SIGTERM");
    const res = await inFlight;
    expect(res.status).toBe(202);
    expect(((await res.json()) as { status: string }).status).toBe("pending");
    expect(await s.p.exited).toBe(0);
    // An ordinary, documented stop: nothing at error level (50) or above.
    expect(s.p.stdout()).not.toMatch(/"level":[56]0/);
    await closedCleanly(s);
  }, 180_000);

  it("busy keep-alive clients: nothing sent after the signal is served, in-flight answers close their connection", async () => {
    const s = await start({ MNEMO_TEST_EXTRACT_DELAY_MS: "2500" });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 5 });
    type Answer = { status: number; connection: string | undefined; body: string };
    const send = (method: string, p: string, body?: string) =>
      new Promise<Answer>((resolve, reject) => {
        const req = http.request(
          `${s.base}${p}`,
          {
            method,
            agent,
            headers: { "x-api-key": KEY, ...(body ? { "content-type": "application/json" } : {}) },
          },
          (res) => {
            let text = "";
            res.on("data", (d) => {
              text += d;
            });
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text }),
            );
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    const ingestBody = JSON.stringify({
      user_id: "u1",
      conv_id: "c1",
      messages: [{ role: "user", content: "I live in Lisbon." }],
    });
    // Four clients sending back to back on kept-alive connections, before and after the signal.
    let signalled = false;
    let exited = false;
    void s.p.exited.then(() => {
      exited = true;
    });
    const afterSignal: Array<Answer | "refused"> = [];
    const loops = Array.from({ length: 4 }, async () => {
      while (!exited) {
        const sentAfter = signalled;
        try {
          const r = await send("POST", "/v1/memories", ingestBody);
          if (sentAfter) afterSignal.push(r);
        } catch {
          if (sentAfter) afterSignal.push("refused");
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    });
    // A wait=true request on the same kind of connection is in flight when the signal comes.
    const inFlight = send("POST", "/v1/memories?wait=true", ingestBody);
    await s.p.waitFor(/"msg":"ingest accepted"[\s\S]*"msg":"ingest accepted"/);
    s.p.child.kill("SIGTERM");
    await s.p.waitFor(/"msg":"shutting down"/);
    signalled = true;
    const answered = await inFlight;
    // Answered, never reset: 200 when its job finished in time, else 202 with the job still
    // pending or running (a stopping server ends wait=true holds before its time-out).
    expect([200, 202]).toContain(answered.status);
    expect(JSON.parse(answered.body).status).toMatch(
      answered.status === 200 ? /^succeeded$/ : /^(pending|running)$/,
    );
    expect(answered.connection).toBe("close");
    // The next request from that client is not served either.
    const next = await send("GET", "/v1/groups").catch(() => "refused" as const);
    if (next !== "refused") afterSignal.push(next);
    expect(await s.p.exited).toBe(0);
    await Promise.all(loops);
    agent.destroy();
    expect(afterSignal.length).toBeGreaterThan(0);
    for (const r of afterSignal) {
      if (r === "refused") continue;
      expect(r.status).toBe(503);
      expect(r.connection).toBe("close");
      expect(JSON.parse(r.body)).toMatchObject({ detail: { code: "service_unavailable" } });
    }
    await closedCleanly(s);
  }, 180_000);

  it("a request half received when the stop begins is answered 503 with Connection: close, not cut off", async () => {
    const s = await start();
    const sock = net.connect(s.port, "127.0.0.1");
    let got = "";
    sock.on("data", (d) => {
      got += d;
    });
    const closed = new Promise<string | undefined>((resolve) => {
      sock.on("error", (err: NodeJS.ErrnoException) => resolve(err.code));
      sock.on("close", () => resolve(undefined));
    });
    const request = "GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n";
    sock.write(request);
    const until = Date.now() + 10_000;
    while (!got.includes("\r\n\r\n") && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    got = "";
    // The next request on the kept-alive connection: its first bytes before the signal, the rest after.
    sock.write(request.slice(0, 10));
    await new Promise((r) => setTimeout(r, 100));
    s.p.child.kill("SIGTERM");
    await s.p.waitFor(/"msg":"shutting down"/);
    await new Promise((r) => setTimeout(r, 100));
    sock.write(request.slice(10));
    expect(await closed).toBeUndefined();
    expect(got).toMatch(/^HTTP\/1\.1 503/);
    expect(got.toLowerCase()).toContain("connection: close");
    expect(got).toContain('"service_unavailable"');
    expect(await s.p.exited).toBe(0);
  }, 180_000);

  it("keep-alive clients sending back to back: every request sent is answered (202, 200 or 503), none is reset (4 trials)", async () => {
    // The next request of a busy client is often already on the wire when the stop begins: it was
    // cut off unanswered (the idle connection it travels on closed at once, or destroyed with
    // everything else once the last request in flight finished). A request may only fail before
    // any byte of it was sent (its new connection refused).
    const failures: string[] = [];
    let answeredAfter = 0;
    for (let trial = 0; trial < 4; trial++) {
      const s = await start({ MNEMO_RATE_TIERS: JSON.stringify({ default: "unlimited" }) });
      const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
      let exited = false;
      void s.p.exited.then(() => {
        exited = true;
      });
      const body = JSON.stringify({
        user_id: "u-ka",
        conv_id: "c-ka",
        messages: [{ role: "user", content: "I live in Porto." }],
      });
      // One request (an ingest, or a quick /readyz): its status, or "refused" (failed before a
      // byte was sent, or a failure, recorded).
      const send = (method: "POST" | "GET") =>
        new Promise<number | "refused">((resolve) => {
          let sent = false;
          const req = http.request(`${s.base}${method === "POST" ? "/v1/memories" : "/readyz"}`, {
            method,
            agent,
            headers: { "x-api-key": KEY, "content-type": "application/json" },
          });
          req.on("socket", (sock) => {
            // A kept-alive socket carries the request at once; a new one once it has connected.
            if (!sock.connecting) sent = true;
            else sock.once("connect", () => (sent = true));
          });
          req.on("response", (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
            res.on("error", (err) => {
              failures.push(`trial ${trial}: response cut off: ${err.message}`);
              resolve("refused");
            });
          });
          req.on("error", (err: NodeJS.ErrnoException) => {
            if (sent) failures.push(`trial ${trial}: ${err.code ?? err.message} after the request was sent`);
            resolve("refused");
          });
          req.end(method === "POST" ? body : undefined);
        });
      let signalled = false;
      const loops = Array.from({ length: 6 }, async (_, i) => {
        const method = i % 2 ? "GET" : "POST";
        while (!exited) {
          const r = await send(method);
          if (r === "refused") await new Promise((res) => setTimeout(res, 10));
          else if (r !== 503 && r !== (method === "POST" ? 202 : 200))
            failures.push(`trial ${trial}: ${method} status ${r}`);
          else if (signalled) answeredAfter++;
          if (signalled && r === "refused") break;
        }
      });
      await new Promise((r) => setTimeout(r, 1000 + trial * 137));
      s.p.child.kill("SIGTERM");
      signalled = true;
      expect(await s.p.exited).toBe(0);
      await Promise.all(loops);
      agent.destroy();
    }
    expect(failures).toEqual([]);
    // The stop did meet busy connections (answered after the signal), so the trials tested something.
    expect(answeredAfter).toBeGreaterThan(0);
  }, 300_000);

  // `npm start` first runs its prestart build, a whole tsc compile (seconds of CPU, and the same
  // for both starts): dist/ is given that build's output once instead, the global setup's
  // (dist-test/: tsconfig.build.json and the console's assets, as `npm run build`), and npm runs
  // with --ignore-scripts, which skips only pre- and post-scripts. npm, its shell and the server
  // are the same processes as after the build.
  let built = false;
  const prebuild = () => {
    if (!built) cpSync(path.join(ROOT, "dist-test"), path.join(ROOT, "dist"), { recursive: true });
    built = true;
  };

  // To the group: what a process manager or a terminal's Ctrl-C sends. To npm alone: what `kill
  // <pid of npm>` sends; npm and its shell end without passing it on, and the server used to go on
  // serving, orphaned.
  it.each(["the process group of `npm start`", "the npm process alone"])(
    "SIGTERM to %s stops everything in it, with exit 0 and no orphans",
    async (target) => {
      const dataDir = migratedDataDir("mn-stop-");
      dirs.push(dataDir);
      // In the PostgreSQL pass a copy of the template there, as start() gives (without one, the
      // embedded database in an empty directory: PGlite's initdb and every migration first).
      const db = onServer() ? await createTestDatabase() : undefined;
      if (db) databases.push(db);
      const port = await freePort();
      prebuild();
      const npm = spawn("npm", ["start", "--silent", "--ignore-scripts"], {
        cwd: ROOT,
        env: childEnv({
          MNEMO_DATA_DIR: dataDir,
          ...(db ? { DATABASE_URL: db.url } : {}),
          PORT: String(port),
          MNEMO_BOOTSTRAP_API_KEY: KEY,
        }),
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      let out = "";
      npm.stdout!.on("data", (d) => {
        out += d;
      });
      npm.stderr!.on("data", (d) => {
        out += d;
      });
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        npm.once("exit", (code, signal) => resolve({ code, signal })),
      );
      const pgid = npm.pid!;
      try {
        const deadline = Date.now() + 170_000;
        while (!out.includes('"msg":"ready"')) {
          if (Date.now() > deadline || npm.exitCode !== null)
            throw new Error(`npm start did not get ready:\n${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        // The server runs as node itself (compiled), not under a tsx wrapper.
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
        const toGroup = target.startsWith("the process group");
        process.kill(toGroup ? -pgid : pgid, "SIGTERM");
        // npm itself may end by the signal it was sent; the server under it stops cleanly.
        const end = await exited;
        expect(
          end.code === 0 || end.signal === "SIGTERM",
          `npm ended with ${JSON.stringify(end)}\n${out}`,
        ).toBe(true);
        // No process of the group is left: node, sh and npm are all gone.
        const groupAlive = () => {
          try {
            process.kill(-pgid, 0);
            return true;
          } catch {
            return false;
          }
        };
        const until = Date.now() + 20_000;
        while (groupAlive() && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
        expect(groupAlive()).toBe(false);
        expect(out, out).toContain('"msg":"stopped"');
        if (!toGroup) expect(out).toContain('"msg":"the npm process that started this one is gone"');
        expect(existsSync(path.join(dataDir, "server.json"))).toBe(false);
      } finally {
        try {
          process.kill(-pgid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    },
    240_000,
  );
});
