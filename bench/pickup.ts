/**
 * Cross-process job pickup: an API process (this one, no workers) accepts ingests, a separate
 * `mnemo worker` process runs them. Prints, over sequential single-turn ingests:
 *   - pickup: from the job's commit to the worker starting it (`stage_timings.queue_wait`),
 *   - wait=true: the whole request, which ends on the worker's job-finished signal.
 *
 *   npm run bench:pickup [-- --samples 50]
 *   DATABASE_URL=postgres://... npm run bench:pickup      # a scratch database on that server
 *   MNEMO_LISTEN_NOTIFY=false npm run bench:pickup        # polling only, for comparison
 *
 * On a server the bench creates and drops its own database (`mnemo_bench_pickup_<pid>`); without
 * DATABASE_URL it serves a throw-away embedded database that the worker process attaches to.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { createOrg } from "../src/admin/orgs.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { call, percentile } from "./lib.js";

const { values } = parseArgs({ options: { samples: { type: "string", default: "50" } } });
const SAMPLES = Number(values.samples);
const listen = process.env.MNEMO_LISTEN_NOTIFY !== "false";
const ROOT = path.resolve(import.meta.dirname, "..");

const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-pickup-"));
const server = process.env.DATABASE_URL;
let databaseUrl: string | undefined;
let dbName = "";
const admin = async (sql: string) => {
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
};
if (server) {
  dbName = `mnemo_bench_pickup_${process.pid}`;
  await admin(`CREATE DATABASE "${dbName}"`);
  const u = new URL(server);
  u.pathname = `/${dbName}`;
  databaseUrl = u.toString();
}

const env: Record<string, string> = {
  LOG_LEVEL: "warn",
  MNEMO_DATA_DIR: dir,
  MNEMO_LISTEN_NOTIFY: String(listen),
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
};
let worker: ChildProcess | undefined;
const api = await startRuntime(
  loadConfig({ ...env, PORT: "0" }),
  createLogger({ level: "warn", stream: "stderr" }),
  { api: true, worker: false },
);
try {
  const where = databaseUrl
    ? `PostgreSQL ${(await api.deps.db.query("SHOW server_version")).rows[0].server_version} at ${new URL(databaseUrl).host}`
    : "embedded PGlite (worker process attached over its wire server)";
  console.log(`database: ${where}; LISTEN/NOTIFY ${listen ? "on" : "off (polling only)"}`);

  // The worker: a process of its own, as `npm run worker` starts it.
  worker = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "worker"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? os.tmpdir(), ...env, LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    let out = "";
    worker!.stdout!.on("data", (d) => {
      out += d;
      if (out.includes('"msg":"ready"')) resolve();
    });
    worker!.once("exit", (code) => reject(new Error(`worker exited (${code})`)));
  });

  const { api_key: key } = await createOrg(api.deps.db, { name: "bench-pickup", tier: "unlimited" });
  const ingest = (i: number) =>
    call(api.url!, key, "POST", "/v1/memories?wait=true", {
      user_id: "u1",
      conv_id: `c${i}`,
      messages: [{ role: "user", content: `I planted ${i} tulips in the garden this morning.` }],
    });
  for (let i = 0; i < 3; i++) await ingest(-i); // warm-up
  const pickup: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    // An idle gap, so every job finds the worker waiting (no back-to-back fetch).
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 200));
    const t = performance.now();
    const job = await ingest(i);
    total.push(performance.now() - t);
    if (job.status !== "succeeded") throw new Error(`job ${job.id} ended ${job.status}`);
    pickup.push(job.result.stage_timings.queue_wait * 1000);
  }
  const fmt = (xs: number[]) =>
    `p50 ${percentile(xs, 50).toFixed(1)} ms / p95 ${percentile(xs, 95).toFixed(1)} ms`;
  console.log(`cross-process pickup (commit -> worker starts), ${SAMPLES} jobs: ${fmt(pickup)}`);
  console.log(`wait=true request (API process, job run by the worker process): ${fmt(total)}`);
} finally {
  if (worker && worker.exitCode === null) {
    worker.kill("SIGTERM");
    await new Promise((r) => worker!.once("exit", r));
  }
  await api.stop();
  if (dbName) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
}
