import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg } from "../src/admin/orgs.js";
import { createDb, type Db } from "../src/db/db.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { waitFor } from "./helpers/harness.js";
import { type MnemoProcess, spawnMnemo } from "./helpers/process.js";
import { createTestDatabase, type TestDatabase } from "./helpers/test-db.js";

/**
 * SERVER-ONLY (left out of the embedded pass in vitest.config.ts): the production topology,
 * `npm run api` x2 and `npm run worker` x2 as real processes on one PostgreSQL server. The
 * embedded database is served by one process only, so this topology does not exist there.
 *
 * 500 ingests through both API processes while one worker is killed with SIGKILL five times and
 * restarted: every accepted job succeeds exactly once, wait=true answers on either API, each
 * webhook event arrives with one X-Webhook-Id, and one key's rate limit is shared.
 */
const JOBS = 500;
const KILLS = 5;
const WEBHOOK_TIMEOUT_MS = 2000;
const WAIT_EVERY = 25; // every 25th ingest holds with wait=true: 20 of them, on both APIs
const TIERS = JSON.stringify({ shared: { per_minute: 5, per_day: 6 } });

let database: TestDatabase;
let db: Db;
const procs: MnemoProcess[] = [];
let receiver: Awaited<ReturnType<typeof startCountingReceiver>>;

function env(): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
    MNEMO_SECRET_KEY: "split-processes-test-secret-key-0123456789",
    MNEMO_DB_POOL_SIZE: "4",
    MNEMO_JOB_EXPIRE_SECONDS: "5",
    MNEMO_WAIT_SECONDS: "90",
    MNEMO_RATE_TIERS: TIERS,
    MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
    MNEMO_WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    MNEMO_WEBHOOK_RETRY_SCHEDULE: "0,1,1",
    LOG_LEVEL: "info",
  };
}

async function startApi(): Promise<string> {
  const p = spawnMnemo(["api"], { ...env(), PORT: "0", HOST: "127.0.0.1" });
  procs.push(p);
  const m = await p.waitFor(/"url":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/, 90_000);
  return m[1]!;
}

async function startWorker(): Promise<MnemoProcess> {
  // direct: the child is the worker itself, so SIGKILL kills it (no launcher in between).
  const p = spawnMnemo(["worker"], env(), { direct: true });
  procs.push(p);
  await p.waitFor(/"msg":"ready"/, 90_000);
  return p;
}

/**
 * Records every delivery; answers 500 to the first attempt of every 7th event (by arrival order
 * of first attempts), so retries are exercised, and 204 otherwise.
 */
async function startCountingReceiver() {
  const attempts: Array<{ id: string; jobId: string; status: number; at: number }> = [];
  const seen = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const id = String(req.headers["x-webhook-id"]);
      const jobId = (JSON.parse(Buffer.concat(chunks).toString()) as { job_id: string }).job_id;
      const first = !seen.has(id);
      seen.add(id);
      const status = first && seen.size % 7 === 0 ? 500 : 204;
      attempts.push({ id, jobId, status, at: Date.now() });
      res.writeHead(status).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    attempts,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDb(database.url, 4);
  receiver = await startCountingReceiver();
});
afterAll(async () => {
  // SIGTERM: tsx's launcher forwards it to the API processes it runs (a SIGKILL would orphan them).
  await Promise.all(procs.map((p) => p.kill("SIGTERM")));
  await db?.close();
  await database?.drop();
  await receiver?.close();
});

const post = async (base: string, key: string, path: string, body?: unknown, method = "POST") => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe("two API and two worker processes on one PostgreSQL", () => {
  it("loses no job, duplicates nothing and delivers every webhook while a worker is killed five times", {
    // About a minute on an idle 2-core machine; process start-ups dominate when it is loaded.
    timeout: 600_000,
  }, async () => {
    const [apiA, apiB] = await Promise.all([startApi(), startApi()]);
    const apis = [apiA, apiB];
    let victim: MnemoProcess;
    [victim] = await Promise.all([startWorker(), startWorker()]);

    const { api_key: key } = await createOrg(db, { name: "split", tier: "unlimited" });
    const put = await post(apiA, key, "/v1/webhooks", { url: receiver.url }, "PUT");
    expect(put.status).toBe(200);

    // Ingest from 8 concurrent clients, alternating between the two API processes.
    const accepted: string[] = [];
    const waited: Array<{ api: string; status: number; job: any }> = [];
    let next = 0;
    const client = async () => {
      for (let i = next++; i < JOBS; i = next++) {
        const api = apis[i % 2]!;
        const wait = i % WAIT_EVERY === 0;
        const res = await post(api, key, `/v1/memories${wait ? "?wait=true" : ""}`, {
          user_id: `u${i % 40}`,
          conv_id: `c${i}`,
          messages: [
            { role: "user", content: `I adopted a cat named Whiskers${i} and I live in Porto.` },
            { role: "assistant", content: "Porto is a lovely city for a cat." },
          ],
        });
        expect([200, 202]).toContain(res.status);
        accepted.push(res.body.id);
        if (wait) waited.push({ api, status: res.status, job: res.body });
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, client));

    // Meanwhile: kill one worker mid-flight five times, restarting it each time.
    const kills: number[] = [];
    const running = async () =>
      (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM ingest_jobs WHERE status = 'running'"))
        .rows[0]!.n;
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 300));
      // Three of the four worker slots busy: the victim is in the middle of a job. (If the backlog
      // ran dry first, kill anyway after a few seconds.)
      await waitFor(async () => (await running()) >= 3, { timeoutMs: 5000, intervalMs: 20 }).catch(() => {});
      kills.push(Date.now());
      await victim.kill("SIGKILL");
      victim = await startWorker();
    }
    await load;
    expect(accepted).toHaveLength(JOBS);
    expect(new Set(accepted).size).toBe(JOBS);

    // Every accepted job reaches succeeded, exactly once.
    await waitFor(
      async () => {
        const { rows } = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM ingest_jobs WHERE status IN ('succeeded', 'failed')",
        );
        return rows[0]!.n === JOBS;
      },
      { timeoutMs: 150_000, intervalMs: 250 },
    );
    const { rows: states } = await db.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM ingest_jobs GROUP BY status",
    );
    expect(states).toEqual([{ status: "succeeded", n: JOBS }]);
    // Killed attempts left retries behind (the kills landed on running jobs), yet nothing doubled.
    const { rows: retried } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM ingest_jobs WHERE attempts > 1",
    );
    expect(retried[0]!.n).toBeGreaterThan(0);
    const { rows: perJob } = await db.query<{ job_id: string; episodes: number; n: number; keys: number }>(
      `SELECT job_id, count(*) FILTER (WHERE type = 'episode')::int AS episodes, count(*)::int AS n,
              count(DISTINCT write_key)::int AS keys
         FROM memories GROUP BY job_id`,
    );
    expect(perJob).toHaveLength(JOBS);
    for (const j of perJob) {
      expect(j.episodes).toBe(1);
      expect(j.keys).toBe(j.n);
    }
    const { rows: created } = await db.query<{ n: number }>(
      "SELECT coalesce(sum(jsonb_array_length(result->'memories_created')), 0)::int AS n FROM ingest_jobs",
    );
    expect(perJob.reduce((a, j) => a + j.n, 0)).toBe(created[0]!.n);

    // wait=true held on both API processes and answered with the finished job.
    expect(waited).toHaveLength(JOBS / WAIT_EVERY);
    expect(new Set(waited.map((w) => w.api))).toEqual(new Set(apis));
    for (const w of waited) {
      expect(w.status).toBe(200);
      expect(w.job.status).toBe("succeeded");
      expect(w.job.result.memories_created.length).toBeGreaterThan(0);
    }

    // Webhooks: every event acknowledged; all attempts of an event carry one id.
    await waitFor(
      async () => new Set(receiver.attempts.filter((a) => a.status < 300).map((a) => a.id)).size === JOBS,
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    const idsByJob = new Map<string, Set<string>>();
    for (const a of receiver.attempts) idsByJob.set(a.jobId, (idsByJob.get(a.jobId) ?? new Set()).add(a.id));
    expect(idsByJob.size).toBe(JOBS);
    expect([...idsByJob.values()].every((ids) => ids.size === 1)).toBe(true);
    const retriedEvents = new Set(receiver.attempts.filter((a) => a.status >= 500).map((a) => a.id));
    expect(retriedEvents.size).toBeGreaterThan(0);
    for (const id of retriedEvents) {
      expect(receiver.attempts.some((a) => a.id === id && a.status < 300)).toBe(true);
    }
    // Delivered once per event. At-least-once delivery can repeat an acknowledged attempt only
    // when its worker was killed between sending it and recording the receiver's answer (a
    // recorded delivery is never posted again): a repeat must come after a kill, and there are at
    // most as many as the killed workers had deliveries in hand (MNEMO_WORKER_CONCURRENCY batches
    // of five each; a kill between answer and record is rare). The kill's time is taken just
    // before the signal, and a request the victim sent around then (or that was still on the
    // wire) can be answered after it: so the kill may precede the first answer by up to one
    // request time-out (MNEMO_WEBHOOK_TIMEOUT_MS), never follow the repeat. (Seen once in CI: a
    // first answer 0-2 s after the kill that had cut its record off, then the retry's answer.)
    const acks = new Map<string, number[]>();
    for (const a of receiver.attempts) if (a.status < 300) acks.set(a.id, [...(acks.get(a.id) ?? []), a.at]);
    let repeats = 0;
    for (const times of acks.values()) {
      if (times.length === 1) continue;
      repeats += times.length - 1;
      expect(
        kills.some((k) => times[0]! - WEBHOOK_TIMEOUT_MS <= k && k <= times[1]!),
        `answers at ${times.join(", ")}; kills at ${kills.join(", ")}`,
      ).toBe(true);
    }
    expect(repeats).toBeLessThanOrEqual(KILLS * 5 * 2); // default MNEMO_WORKER_CONCURRENCY = 2

    // One key's rate limit, shared by both API processes.
    const { api_key: limited } = await createOrg(db, { name: "limited", tier: "shared" });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(apis[i % 2]!, limited, "/v1/groups", undefined, "GET")),
    );
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted).toBeLessThanOrEqual(5 + 1);
    expect(results.filter((r) => r.status === 429)).toHaveLength(20 - admitted);
  });
});
