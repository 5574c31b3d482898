/**
 * Added latency of the rate limiter per request, at 200 requests in flight.
 *
 * One service on the embedded database; the same authenticated request (GET /v1/bench-ping, a route
 * that does nothing, so only authentication and the limiter cost anything; in-process) is fired by 200 concurrent callers: through the real app for a limited tier (the
 * limiter's one upsert per request, limits high enough to admit everything) and for the unlimited
 * tier (the same upsert, which also counts requests for usage, without limits or headers), and,
 * as the baseline, through the same route behind authentication alone (no limiter, no counting).
 * Scenarios alternate over several rounds to even out drift.
 *
 *   npm run bench:ratelimit [-- --requests 2000 --concurrency 200 --rounds 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { OpenAPIHono } from "@hono/zod-openapi";
import { requestContext } from "../rest/middleware/request.js";
import type { AppEnv } from "../rest/types.js";
import { createKey, createOrg } from "../src/admin/orgs.js";
import { authenticate } from "../src/auth/authenticate.js";
import { loadConfig } from "../src/config.js";
import { silentLogger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { benchDatabase } from "./lib.js";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "200" },
    rounds: { type: "string", default: "3" },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);

const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-rl-"));
const database = await benchDatabase("ratelimit");
const config = loadConfig({
  ...database.env,
  LOG_LEVEL: "silent",
  MNEMO_DATA_DIR: dir,
  MNEMO_DB_POOL_SIZE: "20",
  MNEMO_RATE_TIERS: JSON.stringify({ bench: { per_minute: 1_000_000_000, per_day: 1_000_000_000 } }),
});
const rt = await startRuntime(config, silentLogger(), { api: true, worker: false }, { listen: false });
const app = rt.app!;
const db = rt.deps.db;

const limited = await createOrg(db, { name: "bench-limited", tier: "bench" });
const unlimited = await createOrg(db, { name: "bench-unlimited", tier: "unlimited" });
// Many keys: each caller its own key, so no two requests share a counter row.
const manyKeys: string[] = [];
for (let i = 0; i < CONCURRENCY; i++) manyKeys.push((await createKey(db, { orgId: limited.org_id })).api_key);

// Baseline: the same route behind authentication only.
const bare = new OpenAPIHono<AppEnv>();
bare.use("*", requestContext(rt.deps));
bare.use("/v1/*", async (c, next) => {
  const { tier: _tier, ...principal } = await authenticate(db, { apiKey: c.req.header("x-api-key") });
  c.set("principal", principal);
  c.set("ctx", { deps: rt.deps, principal, requestId: c.get("requestId"), log: c.get("log"), db });
  return next();
});
const ping = (c: { json: (v: unknown) => Response }) => c.json({ ok: true });
bare.get("/v1/bench-ping", ping);
app.get("/v1/bench-ping", ping);

type Scenario = { name: string; app?: typeof bare; keyFor: (i: number) => string; expectHeaders: boolean };
const scenarios: Scenario[] = [
  {
    name: "auth only (no limiter, no counting)",
    app: bare,
    keyFor: () => limited.api_key,
    expectHeaders: false,
  },
  { name: "unlimited tier (counting, no limits)", keyFor: () => unlimited.api_key, expectHeaders: false },
  { name: "limiter on, one key (one hot row)", keyFor: () => limited.api_key, expectHeaders: true },
  {
    name: "limiter on, a key per caller",
    keyFor: (i) => manyKeys[i % manyKeys.length]!,
    expectHeaders: true,
  },
];

async function run(s: Scenario, total: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (w: number) => {
    for (;;) {
      const n = next++;
      if (n >= total) return;
      const t0 = performance.now();
      const res = await (s.app ?? app).request("/v1/bench-ping", {
        headers: { "x-api-key": s.keyFor(w) },
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`${s.name}: status ${res.status}`);
      if (s.expectHeaders !== res.headers.has("x-ratelimit-limit")) throw new Error(`${s.name}: headers`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  return latencies;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

for (const s of scenarios) await run(s, CONCURRENCY); // warm-up
const all = new Map<string, number[]>(scenarios.map((s) => [s.name, []]));
const walls = new Map<string, number>(scenarios.map((s) => [s.name, 0]));
for (let r = 0; r < ROUNDS; r++) {
  for (const s of scenarios) {
    const t0 = performance.now();
    all.get(s.name)!.push(...(await run(s, REQUESTS)));
    walls.set(s.name, walls.get(s.name)! + performance.now() - t0);
  }
}

const base = all.get(scenarios[0]!.name)!;
const row = (name: string, xs: number[]) => {
  const rps = (xs.length / walls.get(name)!) * 1000;
  return `${name.padEnd(36)} p50 ${pct(xs, 50).toFixed(1).padStart(7)} ms   p95 ${pct(xs, 95).toFixed(1).padStart(7)} ms   ${rps.toFixed(0).padStart(6)} req/s`;
};
console.log(
  `rate limiter: ${REQUESTS} requests x ${ROUNDS} rounds per scenario, ${CONCURRENCY} in flight, in-process, embedded Postgres (PGlite)`,
);
for (const s of scenarios) console.log(row(s.name, all.get(s.name)!));
for (const s of scenarios.slice(1)) {
  const xs = all.get(s.name)!;
  console.log(
    `added over auth only (${s.name}): p50 ${(pct(xs, 50) - pct(base, 50)).toFixed(1)} ms, p95 ${(pct(xs, 95) - pct(base, 95)).toFixed(1)} ms`,
  );
}

await rt.stop();
await database.drop();
rmSync(dir, { recursive: true, force: true });
