import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg } from "../src/admin/orgs.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";
import { freePort, migratedDataDir, spawnMnemo } from "./helpers/process.js";
import { startStubOpenAI } from "./helpers/stub-openai.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";
import { startReceiver } from "./helpers/webhook-receiver.js";

const TOKEN = "metrics-token-0123456789";
let svc: TestService;
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  rx = await startReceiver();
  svc = await startTestService({
    env: {
      MNEMO_METRICS_TOKEN: TOKEN,
      MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
      MNEMO_RATE_TIERS: JSON.stringify({ tiny: { per_minute: 2, per_day: null } }),
    },
  });
});
afterAll(async () => {
  await svc?.stop();
  await rx?.close();
});

/** Parses the exposition text into `name{labels}` -> value. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

async function scrape() {
  const res = await svc.request("GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return parse(res.text);
}

const value = (m: Map<string, number>, key: string) => m.get(key) ?? 0;

describe("GET /metrics", () => {
  it("needs the bearer token when MNEMO_METRICS_TOKEN is set", async () => {
    const none = await svc.request("GET", "/metrics");
    expect(none.status).toBe(401);
    expect(none.body.detail.code).toBe("unauthorized");
    const wrong = await svc.request("GET", "/metrics", { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
  });

  it("series move after real requests, an ingest job, a webhook delivery, searches and refusals", async () => {
    const before = await scrape();
    const { key } = await svc.newOrg();
    const put = await svc.request("PUT", "/v1/webhooks", { key, body: { url: `${rx.base}/m` } });
    expect(put.status).toBe(200);
    const ingest = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: {
        user_id: "u1",
        conv_id: "c1",
        messages: [{ role: "user", content: "I drink green tea every morning." }],
      },
    });
    expect(ingest.status).toBe(200);
    expect(ingest.body.status).toBe("succeeded");
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "tea", user_id: "u1" },
    });
    expect(search.status).toBe(200);
    const trig = await svc.request("POST", "/v1/memories/trigger", {
      key,
      body: { user_id: "u1", mode: "retrieve", entities: ["deploy.sh"] },
    });
    expect(trig.status).toBe(200);
    const got = await svc.request("GET", `/v1/memories/${ingest.body.result.memories_created[0].id}`, {
      key,
    });
    expect(got.status).toBe(200);
    // A reserved word where an id would be is refused, and counted under its own route, not as a
    // request for a memory (Hono alone would match the memory-id route).
    expect((await svc.request("GET", "/v1/memories/search", { key })).status).toBe(405);
    expect((await svc.request("GET", "/v1/no/such/route", { key })).status).toBe(404);
    // Hono also matches the memory-id routes here, after the jobs routes that answer.
    expect((await svc.request("GET", "/v1/memories/jobs", { key })).status).toBe(200);
    expect((await svc.request("GET", "/v1/memories/jobs/revisions", { key })).status).toBe(404);
    await waitFor(async () => rx.at("/m").length > 0);

    // A tier of two requests a minute: the third is refused.
    const tiny = await createOrg(svc.deps.db, { name: "tiny", tier: "tiny" });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await svc.request("GET", "/v1/groups", { key: tiny.api_key })).status);
    expect(statuses).toEqual([200, 200, 429]);

    const after = await waitFor(async () => {
      const m = await scrape();
      return value(m, 'mnemo_webhook_deliveries_total{outcome="delivered",attempt="1"}') >
        value(before, 'mnemo_webhook_deliveries_total{outcome="delivered",attempt="1"}')
        ? m
        : undefined;
    });
    const moved = (k: string) => expect(value(after, k), k).toBeGreaterThan(value(before, k));
    moved('mnemo_http_requests_total{route="/v1/memories",method="POST",status="200"}');
    moved('mnemo_http_request_duration_seconds_count{route="/v1/memories",method="POST",status="200"}');
    moved(
      'mnemo_http_requests_total{route="/v1/memories/:memory_id",method="GET",status="' + got.status + '"}',
    );
    moved('mnemo_http_requests_total{route="/v1/memories/search",method="GET",status="405"}');
    moved('mnemo_http_requests_total{route="/v1/memories/jobs",method="GET",status="200"}');
    moved('mnemo_http_requests_total{route="/v1/memories/jobs/:job_id",method="GET",status="404"}');
    const memoryGets = 'mnemo_http_requests_total{route="/v1/memories/:memory_id",method="GET",status="200"}';
    expect(value(after, memoryGets) - value(before, memoryGets)).toBe(1);
    expect(
      after.has(
        'mnemo_http_requests_total{route="/v1/memories/:memory_id/revisions",method="GET",status="404"}',
      ),
    ).toBe(false);
    expect(
      after.has('mnemo_http_requests_total{route="/v1/memories/:memory_id",method="GET",status="405"}'),
    ).toBe(false);
    moved('mnemo_http_requests_total{route="unmatched",method="GET",status="404"}');
    moved('mnemo_http_requests_total{route="/v1/groups",method="GET",status="429"}');
    moved('mnemo_rate_limited_total{code="rate_limited"}');
    moved('mnemo_ingest_jobs_total{outcome="succeeded"}');
    moved("mnemo_ingest_queue_wait_seconds_count");
    for (const stage of ["extract", "embed", "dedup", "store"])
      moved(`mnemo_ingest_stage_duration_seconds_count{stage="${stage}"}`);
    moved("mnemo_search_duration_seconds_count");
    moved("mnemo_trigger_duration_seconds_count");
    // Bounded labels: no path with an id in it, no organisation or user id anywhere.
    const text = (await svc.request("GET", "/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }))
      .text;
    expect(text).not.toContain(ingest.body.id);
    expect(text).not.toContain(tiny.org_id);
    expect(text).not.toContain('"u1"');
    // Gauges read at scrape time.
    expect(after.has('mnemo_db_pool_connections{state="idle"}')).toBe(true);
    expect(after.has('mnemo_db_pool_connections{state="waiting"}')).toBe(true);
    for (const q of ["ingest", "webhook-delivery"])
      expect(after.has(`mnemo_queue_jobs{queue="${q}",state="ready"}`)).toBe(true);
    // Only the documented queues: not pg-boss's internal ones (`__pgboss__send-it`).
    const queues = new Set(
      [...after.keys()].flatMap((k) => k.match(/^mnemo_queue_jobs\{queue="([^"]+)"/)?.slice(1) ?? []),
    );
    expect([...queues].sort()).toEqual(["ingest", "maintenance-sweep", "webhook-delivery"]);
    // prom-client's process series come along.
    expect(after.has("process_cpu_user_seconds_total")).toBe(true);
    // The local providers call no model: no model series values.
    expect([...after.keys()].some((k) => k.startsWith("mnemo_model_calls_total{"))).toBe(false);
  });
});

describe("worker-only process", () => {
  it("serves /metrics and /healthz on MNEMO_METRICS_PORT", async () => {
    const dir = migratedDataDir("mn-wm-");
    // In the PostgreSQL pass a copy of the template there (without one, the embedded database in
    // an empty directory: PGlite's initdb and every migration first).
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    const port = await freePort();
    const proc = spawnMnemo(["worker"], {
      MNEMO_DATA_DIR: dir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
      MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
      MNEMO_METRICS_PORT: String(port),
    });
    try {
      await proc.waitFor(/"ready"/, 150_000);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const m = parse(await res.text());
      expect(m.has('mnemo_queue_jobs{queue="ingest",state="ready"}')).toBe(true);
      expect(m.has('mnemo_db_pool_connections{state="idle"}')).toBe(true);
    } finally {
      await proc.kill("SIGTERM");
      await serverDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000); // a cold start of a worker process
});

describe("model call series", () => {
  it("count and time each call to a configured model by kind and outcome", async () => {
    const stub = await startStubOpenAI({ dim: TEST_EMBEDDING_DIM });
    const llm = await startTestService({
      env: { MNEMO_LLM_BASE_URL: stub.url, OPENAI_API_KEY: "sk-test", MNEMO_LLM_MAX_RETRIES: "0" },
    });
    try {
      const { key } = await llm.newOrg();
      const ok = await llm.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "I play the cello." }] },
      });
      expect(ok.body.status).toBe("succeeded");
      // No stored fact to judge the new one against: no judge call, and none counted.
      const judgeCalls = () => stub.requests.filter((r) => r.kind === "judge").length;
      const judged = async () =>
        parse(await llm.deps.metrics.registry.metrics()).get(
          'mnemo_model_calls_total{kind="judge",outcome="ok"}',
        );
      expect([judgeCalls(), await judged()]).toEqual([0, undefined]);
      // The same fact again meets the stored one: one call, counted once.
      const again = await llm.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "u", conv_id: "c1", messages: [{ role: "user", content: "I play the cello." }] },
      });
      expect(again.body.status).toBe("succeeded");
      expect([judgeCalls(), await judged()]).toEqual([1, 1]);
      // A 400 (the model refuses the request) fails the job at once; a 5xx would be retried.
      stub.enqueue("extract", { status: 400, body: { error: { message: "bad request" } } });
      const failed = await llm.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "u", conv_id: "c2", messages: [{ role: "user", content: "I play the oboe." }] },
      });
      expect(failed.body.status).toBe("failed");
      const m = parse(await llm.deps.metrics.registry.metrics());
      expect(m.get('mnemo_model_calls_total{kind="extract",outcome="ok"}')).toBeGreaterThanOrEqual(1);
      expect(m.get('mnemo_model_calls_total{kind="extract",outcome="error"}')).toBeGreaterThanOrEqual(1);
      expect(m.get('mnemo_model_calls_total{kind="embed",outcome="ok"}')).toBeGreaterThanOrEqual(1);
      expect(
        m.get('mnemo_model_call_duration_seconds_count{kind="extract",outcome="ok"}'),
      ).toBeGreaterThanOrEqual(1);
      expect(m.get('mnemo_ingest_jobs_total{outcome="failed"}')).toBe(1);
    } finally {
      await llm.stop();
      await stub.close();
    }
  });
});
