/**
 * Webhook delivery on the embedded database with one worker: (1) latency from the commit of the
 * terminal-event transaction to the signed POST arriving at a local receiver, one event at a
 * time; (2) throughput draining a backlog of queued deliveries. Also the cost of signing and of
 * the URL check alone.
 *
 *   npm run bench:webhooks [-- --events 200 --latency 30 --slow 0.1]
 *
 * `--slow S`: that share of requests (every 1/S-th) gets no answer before the delivery time-out
 * (1 s then), as from a receiver that is sometimes stuck; the drain then says whether one stuck
 * attempt holds up the others.
 * The backlog is enqueued while no worker runs, then the worker starts, so the drain rate is the
 * worker's alone. Single-event latency is bounded below by pg-boss polling (0.5 s when idle), unless
 * the job finished in the same process, which wakes the worker.
 */
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startWorkers } from "../jobs/workers.js";
import { createOrg } from "../src/admin/orgs.js";
import { loadConfig } from "../src/config.js";
import { type Deps, systemCtx } from "../src/context.js";
import { newJobId } from "../src/ids.js";
import { jobSignals } from "../src/ingest/signals.js";
import { silentLogger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { enqueueJobWebhook } from "../src/webhooks/enqueue.js";
import { putWebhook } from "../src/webhooks/put.js";
import { signBody } from "../src/webhooks/secrets.js";
import { checkWebhookUrl } from "../src/webhooks/url-safety.js";
import { benchDatabase } from "./lib.js";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "200" },
    latency: { type: "string", default: "30" },
    slow: { type: "string", default: "0" },
  },
});
const SLOW_EVERY = Number(values.slow) > 0 ? Math.round(1 / Number(values.slow)) : 0;
const EVENTS = Number(values.events);
const LATENCY_SAMPLES = Number(values.latency);

const arrivals = new Map<string, number>();
let requests = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    arrivals.set(String(req.headers["x-webhook-id"]), performance.now());
    if (SLOW_EVERY && ++requests % SLOW_EVERY === 0) setTimeout(() => res.writeHead(204).end(), 2000);
    else res.writeHead(204).end();
  });
});
server.listen(0, "127.0.0.1");
await once(server, "listening");
const port = (server.address() as AddressInfo).port;

const until = async (cond: () => boolean, ms = 120_000) => {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return cond();
};

const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-wh-"));
const database = await benchDatabase("webhooks");
const config = loadConfig({
  ...database.env,
  LOG_LEVEL: "silent",
  MNEMO_DATA_DIR: dir,
  MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
  ...(SLOW_EVERY ? { MNEMO_WEBHOOK_TIMEOUT_MS: "1000" } : {}),
});
const rt = await startRuntime(config, silentLogger(), { api: false, worker: false }, { listen: false });
try {
  const org = await createOrg(rt.deps.db, { name: "bench-webhooks" });
  await putWebhook({
    ctx: systemCtx(rt.deps, org.org_id, "bench"),
    input: { url: `http://127.0.0.1:${port}/h` },
  });
  const fire = async (deps: Deps) => {
    const jobId = newJobId();
    await deps.db.tx((tx) =>
      enqueueJobWebhook(tx, deps, {
        orgId: org.org_id,
        jobId,
        status: "succeeded",
        convId: "c",
        userId: "u",
        memories: [{ id: "00000000-0000-4000-8000-000000000000", type: "fact" }],
        memoriesUpdated: [],
        error: null,
        finishedAt: new Date(),
      }),
    );
  };

  for (let i = 0; i < EVENTS; i++) await fire(rt.deps);
  const t0 = performance.now();
  await startWorkers(rt.deps, rt.boss);
  // Stops at the last arrival, or after 3 s without progress (lost deliveries are reported).
  let last = 0;
  let lastAt = performance.now();
  const drained = await until(() => {
    if (arrivals.size !== last) [last, lastAt] = [arrivals.size, performance.now()];
    return arrivals.size >= EVENTS || performance.now() - lastAt > 3000;
  });
  const drainS = (lastAt - t0) / 1000;
  console.log(
    `backlog${SLOW_EVERY ? ` (every ${SLOW_EVERY}th request stuck past the 1 s time-out)` : ""}: ${arrivals.size}/${EVENTS} delivered in ${drainS.toFixed(2)} s = ${(arrivals.size / drainS).toFixed(1)} deliveries/s${drained && arrivals.size >= EVENTS ? "" : " (incomplete)"}`,
  );

  // (a) an event committed by another process: the worker finds it on its next poll;
  // (b) an ingest job that finished in this process: it wakes the local worker at once.
  for (const [label, wake] of [
    ["committed elsewhere (polling)", false],
    ["job finished in this process (worker woken)", true],
  ] as const) {
    const lat: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const before = arrivals.size;
      const t = performance.now();
      await fire(rt.deps);
      if (wake) jobSignals(rt.deps).emit("finished");
      if (!(await until(() => arrivals.size > before, 10_000))) break;
      lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]?.toFixed(0) ?? "n/a";
    console.log(
      `commit -> arrival, one at a time, ${label} (${lat.length} samples), ms: p50 ${q(0.5)}, p95 ${q(0.95)}, max ${q(1)}`,
    );
  }

  const body = "x".repeat(2000);
  let t = performance.now();
  for (let i = 0; i < 10_000; i++) signBody("whsec_bench", body);
  console.log(`sign a 2 KB body: ${(((performance.now() - t) / 10_000) * 1000).toFixed(1)} µs`);
  t = performance.now();
  for (let i = 0; i < 10_000; i++) await checkWebhookUrl("https://8.8.8.8/hook", { allowPrivate: false });
  console.log(`URL check (IP literal): ${(((performance.now() - t) / 10_000) * 1000).toFixed(1)} µs`);
} finally {
  await rt.stop();
  await database.drop();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
