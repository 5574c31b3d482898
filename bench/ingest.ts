/**
 * Ingest benchmark, local provider, through real HTTP, on the embedded database or (DATABASE_URL)
 * a fresh database on that PostgreSQL server:
 * - sustained throughput: 4 concurrent clients submitting 10-turn conversations for a fixed time,
 *   measured from the first submission until every job has succeeded (messages per second);
 * - wait=true latency for a 4-turn conversation (p50/p95), one request at a time on an idle server.
 * Run with `npm run bench:ingest`. BENCH_SECONDS and BENCH_WAIT_REQUESTS tune the run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createOrg } from "../src/admin/orgs.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { benchDatabase } from "./lib.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const waitRequests = Number(process.env.BENCH_WAIT_REQUESTS ?? 60);
const CLIENTS = 4;

const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-"));
const database = await benchDatabase("ingest");
const config = loadConfig({ MNEMO_DATA_DIR: dir, PORT: "0", LOG_LEVEL: "silent", ...database.env });
const rt = await startRuntime(config, createLogger({ level: process.env.BENCH_LOG_LEVEL ?? "silent" }), {
  api: true,
  worker: true,
});
// The unlimited tier: the rate limiter still counts each request, but never refuses the benchmark.
const { api_key: key } = await createOrg(rt.deps.db, { name: "bench", tier: "unlimited" });
const url = rt.url!;

const SENTENCES = [
  "I moved to Lisbon last spring and I work as a nurse at the city hospital.",
  "My daughter Ana started learning the cello at school this year.",
  "We went hiking in the Serra da Estrela with friends last weekend.",
  "The deploy pipeline for the billing service runs terraform every Friday.",
  "I prefer green tea in the morning and I never drink coffee after noon.",
  "Always run `npm test` before pushing to the main branch.",
  "Our team is migrating the reporting database to PostgreSQL 16.",
  "I adopted a beagle named Max from the shelter in March.",
];
const conversation = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: `${SENTENCES[(seed + i) % SENTENCES.length]} (note ${seed}-${i})`,
  }));

async function post(body: object, wait: boolean) {
  const res = await fetch(`${url}/v1/memories${wait ? "?wait=true" : ""}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(body),
  });
  return { status: res.status, job: (await res.json()) as { id: string; status: string } };
}

async function jobStatus(id: string) {
  const res = await fetch(`${url}/v1/memories/jobs/${id}`, { headers: { "x-api-key": key } });
  return ((await res.json()) as { status: string }).status;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

// wait=true latency first, on an idle server
const latencies: number[] = [];
for (let i = 0; i < waitRequests; i++) {
  const t = performance.now();
  const { status, job } = await post(
    { user_id: `lat-${i % 5}`, conv_id: `lat-${i}`, messages: conversation(4, i) },
    true,
  );
  latencies.push(performance.now() - t);
  if (status !== 200 || job.status !== "succeeded")
    throw new Error(`wait=true answered ${status} ${job.status}`);
}

// sustained throughput
const ids: string[] = [];
let messages = 0;
const start = performance.now();
const stopAt = start + seconds * 1000;
await Promise.all(
  Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = 0; performance.now() < stopAt; i++) {
      const { status, job } = await post(
        { user_id: `tp-${c}-${i % 10}`, conv_id: `tp-${c}-${i}`, messages: conversation(10, c * 1000 + i) },
        false,
      );
      if (status !== 202) throw new Error(`ingest answered ${status}`);
      ids.push(job.id);
      messages += 10;
    }
  }),
);
const submitted = performance.now();
for (const id of ids) {
  for (;;) {
    const s = await jobStatus(id);
    if (s === "succeeded") break;
    if (s === "failed") throw new Error(`job ${id} failed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const finished = performance.now();

const { rows } = await rt.deps.db.query("SELECT count(*)::int AS n FROM memories");
console.log(`ingest benchmark (local provider, ${database.description}, ${os.cpus().length} cores)`);
console.log(
  `  wait=true, 4-turn conversation: ${waitRequests} requests, p50 ${pct(latencies, 50).toFixed(0)} ms, ` +
    `p95 ${pct(latencies, 95).toFixed(0)} ms`,
);
console.log(
  `  sustained, ${CLIENTS} clients, 10-turn conversations: ${ids.length} jobs, ${messages} messages in ` +
    `${((finished - start) / 1000).toFixed(1)} s (submission ${((submitted - start) / 1000).toFixed(1)} s) ` +
    `= ${(messages / ((finished - start) / 1000)).toFixed(1)} messages/s, ` +
    `${(ids.length / ((finished - start) / 1000)).toFixed(1)} jobs/s`,
);
console.log(`  memories stored: ${rows[0].n}`);
await rt.stop();
await database.drop();
rmSync(dir, { recursive: true, force: true });
