/**
 * Does the service stay responsive under a big job? A real `mnemo serve` process on a fresh
 * embedded data directory (or DATABASE_URL when set), spoken to over HTTP from this process:
 *   1. /healthz latency, polled back to back, while one 5,000-message ingest job runs;
 *   2. search latency at 20 concurrent clients over the memories that job stored, at steady state
 *      (after one search of each query, which prepares the statements, and one unmeasured round at
 *      full concurrency, which warms the JIT and the caches), with the CPU time each search cost
 *      the service's threads, the PostgreSQL backends (when on this machine) and this client, read
 *      from /proc (Linux), and the latency that CPU alone allows;
 *   3. search latency at the same 20 clients while a second 5,000-message job (another user) is
 *      stored, and how many searches were refused: on the embedded database the job's store
 *      transactions and the searches share the one session.
 *   npm run bench:responsive [-- --messages 5000 --clients 20 --queries 1000]
 * The clients are node:http with keep-alive (jsonClient), not fetch, which costs this process three
 * times the CPU a request on a machine it shares with the service.
 * Targets (issue 13): /healthz p99 <= 50 ms during the job; search p95 <= 60 ms.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { findRunningServer } from "../src/db/embedded.js";
import {
  arg,
  benchDatabase,
  call,
  freePort,
  jsonClient,
  percentile,
  spawnMnemo,
  unlimitedOrgKey,
  untilReady,
} from "./lib.js";

const MESSAGES = Number(arg("messages", "5000"));
const CLIENTS = Number(arg("clients", "20"));
const QUERIES = Number(arg("queries", "1000"));

const cities = ["Lisbon", "Porto", "Oslo", "Kyoto", "Lima", "Quito", "Dakar", "Hanoi", "Tunis", "Perth"];
const foods = [
  "green tea",
  "ramen",
  "olives",
  "figs",
  "mango",
  "rye bread",
  "kimchi",
  "tofu",
  "dates",
  "okra",
];
const hobbies = ["climbing", "chess", "rowing", "pottery", "birding", "sailing", "judo", "origami", "tango"];
function message(i: number) {
  const c = cities[i % cities.length];
  const f = foods[(i * 7) % foods.length];
  const h = hobbies[(i * 3) % hobbies.length];
  const forms = [
    `I moved to ${c} in ${1990 + (i % 30)} and I still live there.`,
    `My favourite food is ${f}, especially on day ${i}.`,
    `I have been doing ${h} every week since ${2000 + (i % 20)}.`,
    `My colleague number ${i} works in ${c} on the ${h} project.`,
    `Remind me that the meeting ${i} is about ${f} supplies.`,
  ];
  return { role: i % 2 ? "assistant" : "user", content: forms[i % forms.length]! };
}

/** Milliseconds of CPU per clock tick of /proc/<pid>/stat (USER_HZ). */
const TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim());
  } catch {
    return 10;
  }
})();
/** CPU time (ms, user + system) of one process or thread from its stat line, or null if unreadable. */
function cpuMs(statPath: string): number | null {
  try {
    const stat = readFileSync(statPath, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}
/** CPU time (ms) of a process's threads by thread name ("MainThread", "WorkerThread", V8's GC helpers). */
function threadCpu(pid: number): Map<string, { ms: number; threads: number }> {
  const out = new Map<string, { ms: number; threads: number }>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    const ms = cpuMs(`/proc/${pid}/task/${task}/stat`);
    if (ms === null) continue;
    const name = readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8").trim();
    const seen = out.get(name);
    out.set(name, { ms: (seen?.ms ?? 0) + ms, threads: (seen?.threads ?? 0) + 1 });
  }
  return out;
}
/** The backends of the bench database, when PostgreSQL runs on this machine: pid -> CPU ms. */
async function backendCpu(url: string | undefined): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!url) return out;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    for (const { pid } of rows) {
      const ms = cpuMs(`/proc/${pid}/stat`);
      if (ms !== null) out.set(pid, ms);
    }
  } finally {
    await client.end();
  }
  return out;
}

/** The jobs' attempt counts, in order ("?" without a connection). */
async function jobAttempts(url: string | undefined, ids: string[]): Promise<string> {
  if (!url) return "?";
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; attempts: number }>(
      "SELECT id, attempts FROM ingest_jobs WHERE id = ANY($1::text[])",
      [ids],
    );
    return ids.map((id) => rows.find((r) => r.id === id)?.attempts ?? "?").join(", ");
  } finally {
    await client.end();
  }
}

const stats = (ms: number[]) =>
  `n=${ms.length} p50 ${percentile(ms, 50).toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms, ` +
  `p99 ${percentile(ms, 99).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`;

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-resp-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // On PostgreSQL, a fresh database of its own, dropped at the end (see benchDatabase).
  const database = await benchDatabase("responsive");
  const env = {
    ...process.env,
    ...database.env,
    MNEMO_DATA_DIR: dir,
    PORT: String(port),
    LOG_LEVEL: "warn",
    MNEMO_BOOTSTRAP_API_KEY: "mnemo_bench_responsive_bootstrap_key",
  };
  const server = spawnMnemo(["serve"], env, ["ignore", "inherit", "inherit"]);
  const stop = async () => {
    if (server.exitCode === null) {
      server.kill("SIGTERM");
      await new Promise((r) => server.once("exit", r));
    }
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  };
  try {
    await untilReady(url, server);
    // An unlimited organisation (the admin CLI attaches to the server's database).
    const key = await unlimitedOrgKey(env, "bench");

    // 1. /healthz while a big job runs.
    const body = {
      user_id: "user-0",
      conv_id: "conv-big",
      messages: Array.from({ length: MESSAGES }, (_, i) => message(i)),
    };
    process.stderr.write(`ingesting ${MESSAGES} messages (${JSON.stringify(body).length} bytes)...\n`);
    const health: number[] = [];
    let running = true;
    const poller = (async () => {
      while (running) {
        const t = performance.now();
        await fetch(`${url}/healthz`).then((r) => r.text());
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const t0 = performance.now();
    const accepted = await call(url, key, "POST", "/v1/memories", body);
    const acceptMs = performance.now() - t0;
    let job = accepted;
    while (job.status === "pending" || job.status === "running") {
      await new Promise((r) => setTimeout(r, 250));
      job = await call(url, key, "GET", `/v1/memories/jobs/${accepted.id}`);
    }
    const jobMs = performance.now() - t0;
    running = false;
    await poller;
    if (job.status !== "succeeded") throw new Error(`job ${job.status}: ${JSON.stringify(job.error)}`);

    // 2. Search at CLIENTS concurrent clients, at steady state: one search of each query first
    // (the first search of a statement shape prepares it, see queryPrepared), then one unmeasured
    // round at full concurrency (the JIT and the caches), then the measured round.
    const queries = [...cities, ...foods, ...hobbies].map((w) => `what about ${w}?`);
    const client = jsonClient(url, key);
    const ask = async (query: string) => {
      const res = await client.request("POST", "/v1/memories/search", {
        query,
        user_id: "user-0",
        mode: "retrieve",
      });
      if (res.status !== 200)
        throw new Error(`search: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    };
    for (const q of queries) await ask(q);
    const round = async (latencies?: number[]) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (next < QUERIES) {
            const i = next++;
            const t = performance.now();
            await ask(queries[i % queries.length]!);
            latencies?.push(performance.now() - t);
          }
        }),
      );
    };
    await round();
    const search: number[] = [];
    const threadsBefore = threadCpu(server.pid!);
    const backendsBefore = await backendCpu(database.env.DATABASE_URL);
    const clientBefore = process.cpuUsage();
    const searchStarted = performance.now();
    await round(search);
    const searchWall = performance.now() - searchStarted;
    const clientCpu = process.cpuUsage(clientBefore);
    const threadsAfter = threadCpu(server.pid!);
    const backendsAfter = await backendCpu(database.env.DATABASE_URL);
    // CPU per search, by where it was spent.
    const perSearch: [string, number][] = [];
    // The busiest thread that is one thread alone (a name several share is not one thread).
    let busiest = 0;
    for (const [name, { ms, threads }] of threadsAfter) {
      const d = (ms - (threadsBefore.get(name)?.ms ?? 0)) / QUERIES;
      if (d >= 0.05) perSearch.push([`service ${name}`, d]);
      if (threads === 1) busiest = Math.max(busiest, d);
    }
    let backends = 0;
    for (const [pid, ms] of backendsAfter) backends += ms - (backendsBefore.get(pid) ?? 0);
    if (backendsAfter.size) perSearch.push(["PostgreSQL backends", backends / QUERIES]);
    perSearch.push(["this client", (clientCpu.user + clientCpu.system) / 1000 / QUERIES]);
    const total = perSearch.reduce((a, [, ms]) => a + ms, 0);
    const cores = os.availableParallelism();
    // The most searches a second that CPU allows: every core busy, and no single thread (the
    // embedded database's is one) doing more than one thread can.
    const bound = Math.min(cores / total, busiest > 0 ? 1 / busiest : Infinity) * 1000;
    const cpuLine = threadsAfter.size
      ? `CPU per search (ms): ${perSearch.map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(", ")}; ` +
        `total ${total.toFixed(2)} on ${cores} cores. That allows at most ${bound.toFixed(0)} searches/s ` +
        `(measured ${((QUERIES / searchWall) * 1000).toFixed(0)}/s), so ${CLIENTS} clients wait at least ` +
        `${((CLIENTS / bound) * 1000).toFixed(0)} ms per search on average (Little's law)` +
        (database.native && !backendsAfter.size ? "; the PostgreSQL server is not on this machine" : "")
      : "CPU per search: not available (needs Linux /proc)";
    // 3. Search at CLIENTS concurrent clients while a second job of MESSAGES messages (another
    // user, new words) is stored: on the embedded database its store transactions share the one
    // session with the searches. Every answer counts, refusals (503) too.
    const during: number[] = [];
    const statuses = new Map<number, number>();
    const second = await call(url, key, "POST", "/v1/memories", {
      user_id: "user-1",
      conv_id: "conv-second",
      messages: Array.from({ length: MESSAGES }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: `Second list, item ${i}: ${cities[i % cities.length]} with ${hobbies[(i * 5) % hobbies.length]} friend ${i * 7919}.`,
      })),
    });
    let jobRunning = true;
    const searching = Array.from({ length: CLIENTS }, async (_, c) => {
      while (jobRunning) {
        const t = performance.now();
        const res = await client.request("POST", "/v1/memories/search", {
          query: queries[c % queries.length],
          user_id: "user-0",
          mode: "retrieve",
        });
        during.push(performance.now() - t);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    });
    let secondJob = second;
    while (secondJob.status === "pending" || secondJob.status === "running") {
      await new Promise((r) => setTimeout(r, 250));
      const res = await fetch(`${url}/v1/memories/jobs/${second.id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      if (res.ok) secondJob = await res.json();
      else await res.arrayBuffer();
    }
    jobRunning = false;
    await Promise.all(searching);
    client.close();
    const secondStore = (secondJob.result?.stage_timings as Record<string, number> | undefined)?.store;
    // How many attempts each job took: more than one means an attempt was taken as dead under the
    // load (its heartbeat, MNEMO_JOB_HEARTBEAT_SECONDS, not refreshed in time) and run again.
    const attempts = await jobAttempts(database.env.DATABASE_URL ?? (await findRunningServer(dir)), [
      job.id,
      second.id,
    ]);

    const timings = job.result.stage_timings as Record<string, number>;
    process.stdout.write(
      `\ndatabase: ${database.description}\n` +
        `ingest of ${MESSAGES} messages: accepted in ${acceptMs.toFixed(0)} ms, terminal after ${(jobMs / 1000).toFixed(1)} s, ` +
        `${job.result.memories_created.length} memories created; stages (s): ` +
        `${Object.entries(timings)
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(", ")}\n` +
        `/healthz during the job: ${stats(health)}   (target p99 <= 50 ms)\n` +
        `search (mode=retrieve, ${CLIENTS} concurrent clients, steady state: after ${queries.length} + ${QUERIES} unmeasured searches): ` +
        `${stats(search)}   (target p95 <= 60 ms)\n${cpuLine}\n` +
        `search at ${CLIENTS} clients while a second ${MESSAGES}-message job is stored (store ${secondStore?.toFixed(2) ?? "?"} s, job ${secondJob.status}; attempts of the two jobs: ${attempts}): ` +
        `${stats(during)}; answers ${[...statuses].map(([k, n]) => `${k}: ${n}`).join(", ")}\n`,
    );
  } finally {
    await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
