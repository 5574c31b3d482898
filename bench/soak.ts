/**
 * Soak: a real `mnemo serve` (on a fresh embedded data directory, or a fresh database on the
 * server DATABASE_URL names) under a mixed workload of every REST operation for a while, with a
 * webhook receiver that is sometimes slow or failing. Prints every answer's status and error code
 * by operation (a 5xx other than 503 is a defect), latency by operation, the server's RSS and V8
 * heap every 10 s (growth that does not come back is a leak), and whether every accepted ingest job
 * reached a terminal state (the ids of those that did not; `--log FILE` keeps the server's whole log).
 *   npm run bench:soak -- [--seconds 300] [--clients 6] [--seed 7] [--log FILE]
 *   npm run bench:soak -- --outage-at 30 --outage-cmd "pg_ctlcluster 15 main stop -m fast" \
 *     --restore-after 5 --restore-cmd "pg_ctlcluster 15 main start"
 * With --outage-at, the outage command runs that many seconds in, and the restore command
 * --restore-after seconds after it ends: a PostgreSQL restart or failover under load, during
 * which 503 is the right answer (issue 13; what it found is in the README under Running in
 * production). With --crash-at 20[,40...], the server itself is killed (SIGKILL) then and started
 * again --restart-after seconds (2) later on the same data directory or database: every job
 * accepted before the crash must still finish (one that was running, once its heartbeat lapses).
 *   npm run bench:soak -- --seconds 90 --crash-at 20,50
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import {
  arg,
  benchDatabase,
  freePort,
  jsonClient,
  percentile,
  spawnMnemo,
  unlimitedOrgKey,
  untilReady,
} from "./lib.js";

const SECONDS = Number(arg("seconds", "300"));
const CLIENTS = Number(arg("clients", "6"));

let seed = Number(arg("seed", "7"));
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const rss = (pid: number) => {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

const names = ["Priya", "Tomas", "Ana", "Kenji", "Lena"];
const lines = [
  (n: string) => `Hi, I'm ${n}. I moved to Lisbon last spring and I play the cello on Sundays.`,
  () => "I'm vegan and I adopted a greyhound called Max yesterday.",
  () => "Lesson: never run `rm -rf build/` before `npm ci` in deploy.sh, it broke the release.",
  () => "Here is utils.py:\n```python\ndef add(a, b):\n    return a + b\n```",
  () => "My sister works at the hospital in Porto and we went camping at the lake in May 2023.",
  () => "Procedure for releases: 1. run npm test 2. tag the commit 3. push the tag",
  () => "Actually I no longer live in Lisbon, I moved to Oslo.",
  () => `Remember the meeting ${Math.floor(rand() * 1000)} is about figs and rye bread.`,
];
const queries = [
  "what instruments?",
  "where does she live?",
  "any pets?",
  "diet",
  "release steps",
  "sister job",
];

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-soak-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const database = await benchDatabase("soak");
  // A webhook receiver that is slow, fails or answers.
  let hooks = 0;
  /** Jobs whose terminal event reached the receiver (whatever it answered). */
  const heard = new Set<string>();
  const receiver = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      hooks++;
      try {
        heard.add((JSON.parse(body) as { job_id: string }).job_id);
      } catch {
        // not an event
      }
      const r = rand();
      if (r < 0.2) res.writeHead(500).end("no");
      else if (r < 0.3) setTimeout(() => res.writeHead(200).end("ok"), 3000);
      else res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const hookPort = (receiver.address() as net.AddressInfo).port;
  const env = {
    ...process.env,
    ...database.env,
    MNEMO_DATA_DIR: dir,
    PORT: String(port),
    LOG_LEVEL: "error",
    MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
    MNEMO_WEBHOOK_TIMEOUT_MS: "1000",
    MNEMO_BOOTSTRAP_API_KEY: "mnemo_soak_bootstrap_key_0123456789",
  };
  // The server's error lines (JSON logs on stdout) by message; anything on stderr is passed on.
  let stderr = "";
  const logged = new Map<string, number>();
  // The first few requests that failed with a 5xx, whole: the cause is in the server's log line.
  const failures: string[] = [];
  const logFile = arg("log", "");
  let exitedAt: number | null = null;
  /** Set while this benchmark kills the server itself (--crash-at): that exit is not a death. */
  let crashing = false;
  const startServer = () => {
    const child = spawnMnemo(["serve"], env, ["ignore", "pipe", "pipe"]);
    child.stderr!.on("data", (d) => {
      stderr += d;
      process.stderr.write(d);
    });
    let partial = "";
    child.stdout!.on("data", (d) => {
      if (logFile) appendFileSync(logFile, d);
      const lines = (partial + d).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        const msg = /"msg":"([^"]*)"/.exec(line)?.[1];
        if (msg) logged.set(msg, (logged.get(msg) ?? 0) + 1);
        // Error level and above (pino's 50, 60): "request failed", "unhandled error", a crash.
        const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
        if (level >= 50 && failures.length < 5) failures.push(line.slice(0, 3000));
      }
    });
    child.once("exit", () => {
      if (!crashing) exitedAt = performance.now();
    });
    return child;
  };
  let server = startServer();
  await untilReady(url, server);
  // An unlimited organisation (the admin CLI attaches to the server's database).
  const key = await unlimitedOrgKey(env, "soak");
  const c = jsonClient(url, key);

  const counts = new Map<string, number>();
  const lat = new Map<string, number[]>();
  const fives: string[] = [];
  const samples: string[] = [];
  const jobs = new Set<string>();
  const memIds: string[] = [];
  const groups: string[] = [];
  const keys: string[] = [];
  const note = (op: string, res: { status: number; body: any }, ms: number) => {
    const code = res.status >= 400 ? ` ${res.body?.error?.code ?? "?"}` : "";
    const k = `${op} ${res.status}${code}`;
    if (!counts.has(k) && res.status >= 400) samples.push(`${k}: ${JSON.stringify(res.body).slice(0, 300)}`);
    counts.set(k, (counts.get(k) ?? 0) + 1);
    if (!lat.has(op)) lat.set(op, []);
    lat.get(op)!.push(ms);
    if (res.status >= 500 && fives.length < 50)
      fives.push(`${op} ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  };
  const user = () => `user-${Math.floor(rand() * 6)}`;
  await c.request("PUT", "/v1/webhooks", {
    url: `http://127.0.0.1:${hookPort}/hook`,
    events: null,
    enabled: true,
  });

  const ops: [number, string, () => Promise<{ status: number; body: any }>][] = [
    [
      14,
      "ingest",
      async () => {
        const u = user();
        const wait = rand() < 0.5;
        const res = await c.request("POST", `/v1/memories${wait ? "?wait=true" : ""}`, {
          user_id: u,
          conv_id: `conv-${u}-${Math.floor(rand() * 3)}`,
          agent_id: rand() < 0.3 ? "agent-a" : undefined,
          group_ids: groups.length && rand() < 0.3 ? [pick(groups)] : undefined,
          messages: Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, i) => ({
            role: i % 2 ? "assistant" : "user",
            content: pick(lines)(pick(names)),
          })),
        });
        if (res.body?.id) jobs.add(res.body.id);
        if (res.body?.object === "ingest_job" && res.body?.id) jobs.add(res.body.id);
        return res;
      },
    ],
    [
      20,
      "search",
      () =>
        c.request("POST", "/v1/memories/search", {
          query: pick(queries),
          user_id: user(),
          mode: rand() < 0.5 ? "retrieve" : "compose",
          include: rand() < 0.3 ? ["fact", "lesson", "procedure"] : undefined,
          group_ids: groups.length && rand() < 0.2 ? [pick(groups)] : undefined,
        }),
    ],
    [
      10,
      "list",
      async () => {
        const res = await c.request(
          "GET",
          `/v1/memories?user_id=${user()}&limit=${1 + Math.floor(rand() * 50)}`,
        );
        for (const m of res.body?.data ?? []) if (memIds.length < 2000) memIds.push(m.id);
        if (res.body?.next_cursor)
          await c.request("GET", `/v1/memories?cursor=${encodeURIComponent(res.body.next_cursor)}`);
        return res;
      },
    ],
    [8, "get", () => c.request("GET", `/v1/memories/${memIds.length ? pick(memIds) : "mem_x"}`)],
    [
      4,
      "revisions",
      () => c.request("GET", `/v1/memories/${memIds.length ? pick(memIds) : "mem_x"}/revisions`),
    ],
    [
      4,
      "patch-groups",
      () =>
        c.request("PATCH", `/v1/memories/${memIds.length ? pick(memIds) : "mem_x"}`, {
          add_group_ids: groups.length ? [pick(groups)] : [],
          remove_group_ids: groups.length && rand() < 0.5 ? [pick(groups)] : [],
        }),
    ],
    [
      3,
      "patch-text",
      () =>
        c.request("PATCH", `/v1/memories/${memIds.length ? pick(memIds) : "mem_x"}/`, {
          text: `Corrected: ${pick(names)} lives in ${pick(["Oslo", "Lima", "Kyoto"])}.`,
          metadata: { k: rand() },
        }),
    ],
    [
      2,
      "delete",
      () =>
        c.request(
          "DELETE",
          `/v1/memories/${memIds.length ? memIds.splice(Math.floor(rand() * memIds.length), 1)[0] : "mem_x"}`,
        ),
    ],
    [
      6,
      "trigger",
      () =>
        c.request("POST", "/v1/memories/trigger", {
          user_id: user(),
          action: { tool: "bash", args: { command: "rm -rf build/ && npm ci" } },
        }),
    ],
    [
      2,
      "group-create",
      async () => {
        const res = await c.request("POST", "/v1/groups", {
          name: `g${Math.floor(rand() * 1e6)}`,
          prompt: rand() < 0.5 ? "Team notes" : undefined,
        });
        if (res.body?.id) groups.push(res.body.id);
        return res;
      },
    ],
    [
      1,
      "group-archive",
      () =>
        c.request(
          groups.length && rand() < 0.5 ? "DELETE" : "PATCH",
          `/v1/groups/${groups.length ? pick(groups) : "grp_x"}`,
          { status: "active" },
        ),
    ],
    [3, "jobs", () => c.request("GET", `/v1/memories/jobs/${jobs.size ? pick([...jobs]) : "job_x"}`)],
    [
      3,
      "variant-search",
      () =>
        c.request("POST", "/v1/memories/search/", {
          query: pick(queries),
          filters: { AND: [{ user_id: user() }, { created_at: { $gte: "2020-01-01T00:00:00Z" } }] },
          limit: 10,
        }),
    ],
    [
      2,
      "variant-list",
      () => c.request("POST", "/v1/memories/", { filters: { user_id: user() }, limit: 20 }),
    ],
    [1, "deliveries", () => c.request("GET", "/v1/webhooks/deliveries?limit=20")],
    [1, "usage", () => c.request("GET", "/v1/usage")],
    [
      1,
      "keys",
      async () => {
        const res = await c.request("GET", "/v1/auth/service-keys");
        for (const k of res.body?.data ?? []) keys.push(k.id);
        return res;
      },
    ],
  ];
  const total = ops.reduce((a, [w]) => a + w, 0);
  const choose = () => {
    let r = rand() * total;
    for (const op of ops) {
      r -= op[0];
      if (r <= 0) return op;
    }
    return ops[0]!;
  };
  const rssSamples: [number, number][] = [];
  const t0 = performance.now();
  const heap: string[] = [];
  const sampler = setInterval(() => {
    rssSamples.push([Math.round((performance.now() - t0) / 1000), Math.round(rss(server.pid!))]);
    void fetch(`${url}/metrics`).then(
      async (r) => {
        const t = await r.text();
        const v = (n: string) =>
          Math.round(Number(new RegExp(`^${n}(?:\\{[^}]*\\})? (\\S+)`, "m").exec(t)?.[1]) / 1048576);
        heap.push(
          `${v("nodejs_heap_size_used_bytes")}/${v("nodejs_heap_size_total_bytes")}/${v("nodejs_external_memory_bytes")}`,
        );
      },
      () => heap.push("(no answer)"), // the server down (--crash-at)
    );
  }, 10_000);
  let errors = 0;
  const outageAt = Number(arg("outage-at", "0"));
  const outages: string[] = [];
  const shell = (command: string) =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      spawn("sh", ["-c", command], { stdio: "inherit" }).once("exit", (code) => {
        outages.push(
          `\`${command}\` exit ${code} at ${((performance.now() - t0) / 1000).toFixed(1)} s (took ${(performance.now() - t).toFixed(0)} ms)`,
        );
        resolve();
      });
    });
  if (outageAt) {
    const down = arg("outage-cmd", "");
    const up = arg("restore-cmd", "");
    if (!down) throw new Error("--outage-at needs --outage-cmd");
    setTimeout(() => {
      void shell(down)
        .then(() => new Promise((r) => setTimeout(r, Number(arg("restore-after", "0")) * 1000)))
        .then(() => (up ? shell(up) : undefined));
    }, outageAt * 1000);
  }
  // --crash-at S[,S...]: the server killed with SIGKILL (a crash, an OOM kill) that many seconds
  // in, and started again on the same data directory or database --restart-after seconds later.
  const at = (ms: number) => `${((ms - t0) / 1000).toFixed(1)} s`;
  for (const crashAt of arg("crash-at", "").split(",").filter(Boolean).map(Number)) {
    setTimeout(async () => {
      crashing = true;
      const gone = new Promise((r) => server.once("exit", r));
      server.kill("SIGKILL");
      await gone;
      const killed = performance.now();
      await new Promise((r) => setTimeout(r, Number(arg("restart-after", "2")) * 1000));
      server = startServer();
      crashing = false;
      await untilReady(url, server).then(
        () =>
          outages.push(
            `server killed (SIGKILL) at ${at(killed)}, started again, ready at ${at(performance.now())}`,
          ),
        (err: Error) => outages.push(`server killed at ${at(killed)}; the new one: ${err.message}`),
      );
    }, crashAt * 1000);
  }
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() - t0 < SECONDS * 1000) {
        const [, name, fn] = choose();
        const t = performance.now();
        try {
          note(name, await fn(), performance.now() - t);
        } catch (err) {
          errors++;
          if (fives.length < 50) fives.push(`${name} threw ${(err as Error).message}`);
          await new Promise((r) => setTimeout(r, 50)); // the server down: no busy loop
        }
      }
    }),
  );
  clearInterval(sampler);
  // Every accepted job terminal within a minute (the server still up).
  const deadline = Date.now() + 60_000;
  const states = new Map<string, number>();
  const unfinished: string[] = [];
  let deliveries: { status: number; body: any } = { status: 0, body: undefined };
  if (exitedAt === null) {
    for (const id of jobs) {
      for (;;) {
        const res = await c.request("GET", `/v1/memories/jobs/${id}`);
        const s = res.body?.status;
        if (s === "succeeded" || s === "failed" || Date.now() > deadline) {
          const k = `${s}${s === "failed" ? ` ${JSON.stringify(res.body.error)}` : ""}`;
          states.set(k, (states.get(k) ?? 0) + 1);
          if (s !== "succeeded" && s !== "failed") unfinished.push(id);
          break;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    // Each terminal job's event reaches the receiver (its first attempt is due at once; a crash
    // must not lose it: it is enqueued in the job's terminal transaction).
    const until = Date.now() + 30_000;
    while (Date.now() < until && [...jobs].some((id) => !heard.has(id)))
      await new Promise((r) => setTimeout(r, 500));
    deliveries = await c.request("GET", "/v1/webhooks/deliveries?limit=100");
  }
  c.close();
  server.kill("SIGTERM");
  const died = exitedAt !== null;
  const code = died ? server.exitCode : await new Promise((r) => server.once("exit", (c) => r(c)));
  receiver.close();
  rmSync(dir, { recursive: true, force: true });
  await database.drop();

  console.log(`\ndatabase: ${database.description}; ${SECONDS} s, ${CLIENTS} clients; server exit ${code}`);
  for (const [k, n] of [...counts].sort()) console.log(`  ${k}: ${n}`);
  for (const [op, ms] of lat)
    console.log(
      `  ${op}: p50 ${percentile(ms, 50).toFixed(0)} p99 ${percentile(ms, 99).toFixed(0)} max ${Math.max(...ms).toFixed(0)} ms`,
    );
  console.log(`jobs: ${[...states].map(([k, n]) => `${k}: ${n}`).join(", ")}`);
  if (unfinished.length) console.log(`jobs not finished: ${unfinished.slice(0, 10).join(", ")}`);
  const unheard = [...jobs].filter((id) => !heard.has(id));
  console.log(
    `webhook receiver: ${hooks} requests; deliveries page ${deliveries.status} (${deliveries.body?.data?.length} rows); ` +
      `terminal jobs whose event never arrived: ${unheard.length}${unheard.length ? ` (${unheard.slice(0, 5).join(", ")})` : ""}`,
  );
  for (const o of outages) console.log(`outage: ${o}`);
  console.log(`rss (s, MB): ${rssSamples.map(([s, m]) => `${s}:${m}`).join(" ")}`);
  console.log(`heap used/total/external MB: ${heap.join(" ")}`);
  console.log(`requests that got no answer (connection refused or reset): ${errors}`);
  if (died) console.log("THE SERVER DIED during the run (see its stderr above)");
  console.log(
    `server error log lines by message: ${[...logged].map(([m, n]) => `${m}: ${n}`).join("; ") || "none"}`,
  );
  for (const f of samples) console.log(`  ? ${f}`);
  for (const f of fives) console.log(`  ! ${f}`);
  for (const f of failures) console.log(`  error line: ${f}`);
  console.log(`server stderr lines: ${stderr.split("\n").filter(Boolean).length}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
