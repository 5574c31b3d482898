import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startWorkers } from "../jobs/workers.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";
import { danglingLinks } from "./helpers/links.js";
import { MAIN } from "./helpers/process.js";

const services: TestService[] = [];
let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
});
afterAll(async () => {
  for (const s of services) await s.stop();
});

const messages = [
  { role: "user", content: "I moved to Lisbon in March and I work as a nurse." },
  { role: "assistant", content: "Lisbon is lovely in spring." },
];

async function jobRow(svc: TestService, id: string) {
  const { rows } = await svc.deps.db.query("SELECT status, attempts FROM ingest_jobs WHERE id = $1", [id]);
  return rows[0] as { status: string; attempts: number } | undefined;
}

describe("slow extraction", () => {
  it("wait=true falls back to 202 pending when the window ends, and the job still finishes", async () => {
    const svc = await startTestService({
      env: { MNEMO_TEST_EXTRACT_DELAY_MS: "1500", MNEMO_WAIT_SECONDS: "1" },
    });
    services.push(svc);
    const { key } = await svc.newOrg();
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages },
    });
    expect(res.status).toBe(202);
    expect(res.body.status === "pending" || res.body.status === "running").toBe(true);
    expect(res.body.result).toBeNull();
    const done = await waitFor(async () => {
      const r = await svc.request("GET", `/v1/memories/jobs/${res.body.id}`, { key });
      return r.body.status === "succeeded" ? r.body : undefined;
    });
    expect(done.result.memories_created.length).toBeGreaterThan(0);
  });
});

describe("worker killed mid-job", () => {
  it("leaves the job to be retried once its heartbeat stops, long before it expires; the retry finishes it without duplicate memories", async () => {
    // No in-process workers at first: the spawned worker process must take the job. The attempt's
    // expiry stays at its default (10 minutes): the killed attempt is retried because its worker
    // stopped refreshing the job's heartbeat (every 5 s here), within 10 s of the last one.
    const svc = await startTestService({ workers: false, env: { MNEMO_JOB_HEARTBEAT_SECONDS: "10" } });
    services.push(svc);
    const { key, orgId } = await svc.newOrg();
    const res = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages },
    });
    expect(res.status).toBe(202);
    const jobId = res.body.id as string;

    // node itself (no launcher, which would run the program in a grandchild that SIGKILL would
    // miss): the worker is this one process.
    child = spawn(process.execPath, [MAIN, "worker"], {
      env: {
        ...process.env,
        // a socket address reads "postgresql://postgres@/postgres?host=DIR", which URL parsing rejects;
        // the host query parameter still wins over the placeholder host
        DATABASE_URL: svc.connectionString.replace("@/", "@localhost/"),
        MNEMO_EMBEDDING_DIM: String(svc.deps.config.MNEMO_EMBEDDING_DIM),
        MNEMO_TEST_EXTRACT_DELAY_MS: "600000",
        LOG_LEVEL: "silent",
      },
      stdio: "ignore",
    });
    await waitFor(async () => (await jobRow(svc, jobId))?.status === "running", {
      timeoutMs: 45_000,
      intervalMs: 100,
    });
    expect((await jobRow(svc, jobId))!.attempts).toBe(1);
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    expect((await jobRow(svc, jobId))!.status).toBe("running");

    // Another worker (this process, no delay) picks the job up once pg-boss sees the attempt expired.
    await startWorkers(svc.deps, svc.runtime.boss);
    await waitFor(async () => (await jobRow(svc, jobId))?.status === "succeeded", {
      timeoutMs: 45_000,
      intervalMs: 100,
    });
    const job = (await svc.request("GET", `/v1/memories/jobs/${jobId}`, { key })).body;
    expect((await jobRow(svc, jobId))!.attempts).toBe(2);
    const { rows } = await svc.deps.db.query(
      "SELECT type, count(*)::int AS n, count(DISTINCT write_key)::int AS keys FROM memories WHERE org_id = $1 GROUP BY type",
      [orgId],
    );
    const byType = Object.fromEntries(rows.map((r) => [r.type, r]));
    expect(byType.episode).toMatchObject({ n: 1, keys: 1 });
    const facts = job.result.memories_created.filter((m: { type: string }) => m.type === "fact");
    expect(byType.fact.n).toBe(facts.length);
    expect(byType.fact.keys).toBe(byType.fact.n);
  });
});

describe("worker killed between the store stage's transactions", () => {
  it("leaves the facts it committed; the retry stores the rest once, not a fact deleted in between", async () => {
    // The killed attempt is retried once its heartbeat lapses (10 s). The retry's own worker keeps
    // its heartbeat fresh, so however long a loaded machine makes it take, it is never failed
    // under it (with an expiry of 8 s, it was, and a third attempt ran, at four test files at once).
    const svc = await startTestService({ workers: false, env: { MNEMO_JOB_HEARTBEAT_SECONDS: "10" } });
    services.push(svc);
    const { key, orgId } = await svc.newOrg();
    // 450 distinct facts: store transactions of 50 (src/ingest/store.ts), the last with the rest.
    const many = Array.from({ length: 450 }, (_, i) => ({
      role: "user",
      content: `I planted ${i} tulip bulbs of variety number ${i} in garden bed ${i}.`,
    }));
    const res = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages: many },
    });
    expect(res.status).toBe(202);
    const jobId = res.body.id as string;
    const stored = async () =>
      (
        await svc.deps.db.query(
          "SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS txs FROM memories WHERE job_id = $1",
          [jobId],
        )
      ).rows[0] as { n: number; txs: number };

    child = spawn(process.execPath, [MAIN, "worker"], {
      env: {
        ...process.env,
        DATABASE_URL: svc.connectionString.replace("@/", "@localhost/"),
        MNEMO_EMBEDDING_DIM: String(svc.deps.config.MNEMO_EMBEDDING_DIM),
        MNEMO_TEST_STORE_CHUNK_DELAY_MS: "600000",
        LOG_LEVEL: "silent",
      },
      stdio: "ignore",
    });
    // The first chunk committed, the worker pausing before the next: killed there.
    await waitFor(async () => (await stored()).n > 0, { timeoutMs: 60_000, intervalMs: 100 });
    child.kill("SIGKILL");
    await new Promise((r) => child!.once("exit", r));
    expect(await stored()).toEqual({ n: 50, txs: 1 });
    expect((await jobRow(svc, jobId))!.status).toBe("running");
    // A committed fact deleted before the retry stays deleted (its id is the retry's too).
    const { rows: gone } = await svc.deps.db.query(
      "SELECT id::text FROM memories WHERE job_id = $1 AND write_key = 'f10'",
      [jobId],
    );
    expect((await svc.request("DELETE", `/v1/memories/${gone[0].id}`, { key })).status).toBe(204);

    await startWorkers(svc.deps, svc.runtime.boss);
    await waitFor(async () => (await jobRow(svc, jobId))?.status === "succeeded", {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    expect((await jobRow(svc, jobId))!.attempts).toBe(2);
    const { rows } = await svc.deps.db.query(
      `SELECT type, count(*)::int AS n, count(DISTINCT write_key)::int AS keys, count(DISTINCT xmin::text)::int AS txs
       FROM memories WHERE org_id = $1 GROUP BY type`,
      [orgId],
    );
    const byType = Object.fromEntries(rows.map((r) => [r.type, r]));
    // Each fact once, the deleted one not again: the 49 of the killed attempt, then the retry's.
    expect(byType.fact).toMatchObject({ n: 449, keys: 449 });
    expect((await svc.request("GET", `/v1/memories/${gone[0].id}`, { key })).status).toBe(404);
    expect(byType.fact.txs).toBeGreaterThanOrEqual(3);
    expect(byType.episode).toMatchObject({ n: 1, keys: 1 });
    // The result names every stored fact as created, the killed attempt's too; nothing as restated.
    const job = (await svc.request("GET", `/v1/memories/jobs/${jobId}`, { key })).body;
    const created = job.result.memories_created.filter((m: { type: string }) => m.type === "fact");
    expect(created).toHaveLength(449);
    expect(job.result.memories_updated).toEqual([]);
    // The episode's facts and every fact's neighbours are stored rows: the retry writes the
    // episode without the fact deleted before it, and its four neighbours, committed before it,
    // lost their links to it when it was deleted.
    expect(await danglingLinks(svc.deps.db, orgId)).toEqual([0, 0]);
    const { rows: ep } = await svc.deps.db.query(
      "SELECT jsonb_array_length(details -> 'fact_ids')::int AS n FROM memories WHERE org_id = $1 AND type = 'episode'",
      [orgId],
    );
    expect(ep[0].n).toBe(449);
  });
});
