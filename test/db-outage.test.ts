import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "./helpers/harness.js";
import { freePort, type MnemoProcess, spawnMnemo } from "./helpers/process.js";
import { startTcpProxy, type TcpProxy } from "./helpers/tcp-proxy.js";
import { createTestDatabase, type TestDatabase } from "./helpers/test-db.js";

/**
 * PostgreSQL goes away for a few seconds (a restart, a failover) while an ingest job runs: the
 * attempt is interrupted, and pg-boss records that in the database too. Before, the record was
 * attempted while the database was still away, failed, and the job waited out its expiry
 * (MNEMO_JOB_EXPIRE_SECONDS, 10 minutes by default) showing `running`. Now the worker waits for the
 * database to answer before handing the failure over, and the retry runs as soon as it is back.
 *
 * The real server process talks to PostgreSQL through a TCP proxy that the test unplugs, so the
 * server the other test files share keeps running. SERVER-ONLY (vitest.config.ts).
 */
let db: TestDatabase;
let proxy: TcpProxy;
let server: MnemoProcess;
let dataDir: string;
let base: string;
const key = `mnemo_test_outage_${Math.random().toString(36).slice(2)}_bootstrap_key`;

beforeAll(async () => {
  db = await createTestDatabase();
  const target = new URL(db.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
  const via = new URL(db.url);
  via.host = `127.0.0.1:${proxy.port}`;
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  dataDir = mkdtempSync(path.join(os.tmpdir(), "mnemo-outage-"));
  server = spawnMnemo(["serve"], {
    PORT: String(port),
    HOST: "127.0.0.1",
    MNEMO_DATA_DIR: dataDir,
    MNEMO_BOOTSTRAP_API_KEY: key,
    DATABASE_URL: via.toString(),
    // The job sits in its extract stage long enough for the database to go away under it.
    MNEMO_TEST_EXTRACT_DELAY_MS: "2500",
    MNEMO_JOB_EXPIRE_SECONDS: "600",
    // A request's statements wait this long for a database that stopped answering.
    MNEMO_DB_QUERY_TIMEOUT_MS: "3000",
  });
  await server.waitFor(/"msg":"ready"/);
});
afterAll(async () => {
  await server?.kill("SIGTERM");
  await proxy?.close();
  await db?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const api = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe("the database goes away for seconds under a running ingest job", () => {
  it("retries the interrupted attempt once the database is back, not after the job's expiry", async () => {
    const accepted = await api("POST", "/v1/memories", {
      user_id: "u1",
      conv_id: "c1",
      messages: [{ role: "user", content: "I moved to Tromsø in March and I teach chemistry there." }],
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.id as string;
    await waitFor(async () => (await api("GET", `/v1/memories/jobs/${id}`)).body.status === "running", {
      timeoutMs: 20_000,
    });

    // Away for longer than the rest of the extract stage: the store stage finds no database.
    await proxy.cut();
    await server.waitFor(/ingest attempt interrupted/, 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    const away = await fetch(`${base}/readyz`);
    expect(away.status).toBe(503);
    await proxy.restore();

    // Far inside the job's 600 s expiry.
    let job: any;
    await waitFor(
      async () => {
        job = (await api("GET", `/v1/memories/jobs/${id}`)).body;
        return job.status === "succeeded";
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    expect(job.result.memories_created.length).toBeGreaterThan(0);
    const listed = await api("GET", "/v1/memories?user_id=u1&type=fact");
    expect(listed.status).toBe(200);
    const texts: string[] = listed.body.data.map((m: { text: string }) => m.text);
    // Stored once each (the interrupted attempt left nothing behind): the job's facts, no more.
    const created = job.result.memories_created.filter((m: { type: string }) => m.type === "fact");
    expect(texts.filter((t) => /Tromsø/.test(t)).length).toBeGreaterThan(0);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts.length).toBe(created.length);
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    // The queue's failed polls while the database was away: at most one warning per 10 s, not an
    // error line per worker slot and poll.
    const lines = server.stdout().split("\n");
    expect(lines.filter((l) => l.includes('"msg":"pg-boss error"'))).toEqual([]);
    const warned = lines.filter((l) => l.includes('"msg":"pg-boss: the database is unavailable"'));
    expect(warned.length).toBeGreaterThanOrEqual(1);
    expect(warned.length).toBeLessThanOrEqual(2);
  });
});

describe("the database stops answering but keeps its connections open (paused, partitioned)", () => {
  it("answers /readyz 503 within 2 s and a request 503 within the statement deadline, then 200 again", async () => {
    // Warm the pool: the requests below get a connection that is open, and hangs.
    const warm = await Promise.all([1, 2, 3, 4].map(() => api("GET", "/v1/memories?user_id=u-frozen")));
    expect(warm.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    proxy.freeze();
    try {
      const timed = async (p: string, headers: Record<string, string> = {}) => {
        const t0 = Date.now();
        const res = await fetch(`${base}${p}`, { headers });
        return { res, ms: Date.now() - t0, body: await res.json() };
      };
      const [ready, listed] = await Promise.all([
        timed("/readyz"),
        timed("/v1/memories?user_id=u-frozen", { "x-api-key": key }),
      ]);
      // Before: both hung for as long as the database did, then answered 200.
      expect(ready.res.status).toBe(503);
      expect(ready.body).toEqual({ status: "database not answering" });
      expect(ready.ms).toBeLessThan(3500);
      expect(listed.res.status).toBe(503);
      expect(listed.body.error.code).toBe("service_unavailable");
      expect(listed.res.headers.get("retry-after")).toBe("1");
      // One statement deadline (3 s here), not one per statement tried.
      expect(listed.ms).toBeLessThan(5500);
    } finally {
      proxy.thaw();
    }
    // No restart: the timed-out connections were dropped, the pool opens new ones.
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 15_000 });
    expect((await api("GET", "/v1/memories?user_id=u-frozen")).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});

describe("the database stops answering for longer than the queue's LISTEN heartbeat", () => {
  it("is a throttled warning that the database is unavailable, not an error line, and the queue listens again", async () => {
    const logged = server.stdout().length;
    // pg-boss checks its LISTEN connection every 10 s and gives it 5 s to answer: 16 s frozen
    // takes in one whole check.
    proxy.freeze();
    try {
      await new Promise((r) => setTimeout(r, 16_000));
    } finally {
      proxy.thaw();
    }
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 15_000 });
    const lines = () => server.stdout().slice(logged).split("\n");
    expect(lines().filter((l) => l.includes('"msg":"pg-boss error"'))).toEqual([]);
    const warned = lines().filter((l) => l.includes('"msg":"pg-boss: the database is unavailable"'));
    expect(warned.length).toBeGreaterThanOrEqual(1);
    // Jobs still run: an ingest accepted now finishes.
    const accepted = await api("POST", "/v1/memories?wait=true", {
      user_id: "u-listen",
      conv_id: "c1",
      messages: [{ role: "user", content: "I keep bees in my garden." }],
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.status).toBe("succeeded");
  });
});

describe("the server refuses new connections: too many clients (max_connections)", () => {
  it("names the cause in /readyz and in one warning, not 'database unreachable'", async () => {
    // The pool's connections gone, each new one refused at start-up as at max_connections.
    await proxy.cut();
    await proxy.restore({ tooManyClients: true });
    const logged = server.stdout().length;
    try {
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        status: "database refuses connections: too many clients (max_connections)",
      });
      for (let i = 0; i < 3; i++) {
        const listed = await api("GET", "/v1/memories?user_id=u-full");
        expect(listed.status).toBe(503);
        expect(listed.body.error.code).toBe("service_unavailable");
      }
      // Three refused requests, one warning naming the cause and the sizing rule. The server's
      // output reaches this process through a pipe, after the answer may have: waited for.
      const named = await waitFor(async () => {
        const found = server
          .stdout()
          .slice(logged)
          .split("\n")
          .filter((l) => l.includes("too many clients (max_connections): raise it"));
        return found.length ? found : null;
      });
      expect(named.length).toBe(1);
      expect(named[0]).toContain("sorry, too many clients already");
    } finally {
      await proxy.cut();
      await proxy.restore();
    }
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 15_000 });
  });
});

describe("the server ends connections as they are established (a fast shutdown)", () => {
  it("answers 503 and keeps running, then serves again once the database is back", async () => {
    // Every connection the pool holds is gone; each new one is ended by the server as it is
    // made: its ReadyForQuery and a FATAL 57P01 in one chunk. Before, pg-pool handed such a client
    // over with no error listener for an instant, and the FATAL ended the process.
    await proxy.cut();
    await proxy.restore({ shuttingDown: true });
    const logged = server.stdout().length;
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 50));
        return (await api("GET", "/v1/memories?user_id=u1")).status;
      }),
    );
    expect(new Set(statuses)).toEqual(new Set([503]));
    expect(server.child.exitCode).toBeNull();
    expect(server.child.signalCode).toBeNull();
    // One line per 10 s at most for each warning (an earlier test's may fall in the same 10 s),
    // not two per request (24 lines for these 12 before).
    const lines = server.stdout().slice(logged).split("\n");
    expect(lines.filter((l) => l.includes('"msg":"database unavailable"')).length).toBeLessThanOrEqual(1);
    expect(lines.filter((l) => l.includes("rate limiter unavailable")).length).toBeLessThanOrEqual(1);

    await proxy.restore();
    await waitFor(async () => (await api("GET", "/v1/memories?user_id=u1")).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    expect(server.child.exitCode).toBeNull();
  });
});

describe("the database goes away while a wait=true ingest waits for its job", () => {
  it("answers 202 with the committed job, which runs once the database is back", async () => {
    // Before, the wait's next read of the job failed and the request answered 503 with no job
    // id, although the job was committed: a client retrying the 503 sent the conversation twice.
    const waiting = api("POST", "/v1/memories?wait=true", {
      user_id: "u3",
      conv_id: "waited",
      messages: [{ role: "user", content: "I moved to Narvik in May and I coach handball there." }],
    });
    // The job in its (delayed) extract stage, the request waiting on it.
    let running: { id: string } | undefined;
    await waitFor(
      async () => {
        const jobs = await api("GET", "/v1/memories/jobs?status=running");
        running = jobs.body?.data?.[0];
        return running !== undefined;
      },
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    await proxy.cut();
    const answered = await waiting;
    await proxy.restore();
    expect(answered.status, JSON.stringify(answered.body)).toBe(202);
    expect(answered.body.id).toBe(running!.id);
    expect(answered.body.status).toBe("pending");

    let job: any;
    await waitFor(
      async () => {
        job = (await api("GET", `/v1/memories/jobs/${running!.id}`)).body;
        return job.status === "succeeded";
      },
      { timeoutMs: 45_000, intervalMs: 250 },
    );
    expect(job.result.memories_created.length).toBeGreaterThan(0);
  });
});
