import { type ChildProcess, type StdioOptions, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { type Runtime, startRuntime } from "../src/runtime.js";

export interface BenchDatabase {
  /** `{ DATABASE_URL }` of the fresh database, or nothing for the embedded one. */
  env: Record<string, string>;
  native: boolean;
  /** One line naming the database, printed by every benchmark. */
  description: string;
  drop(): Promise<void>;
}

/**
 * The database a benchmark runs on. With DATABASE_URL set: a fresh database created on that
 * server (named MNEMO_BENCH_DB_PREFIX, default `mnemo_bench`, plus the benchmark and a time
 * stamp), dropped at the end unless MNEMO_BENCH_KEEP_DB is set, so a benchmark never writes into
 * the database the URL names. Without it: the embedded database in a throw-away directory.
 * Prints `database: ...` on stdout either way.
 */
export async function benchDatabase(name: string): Promise<BenchDatabase> {
  const url = process.env.DATABASE_URL?.trim();
  if (!url) {
    const description = "embedded PGlite (PostgreSQL in WebAssembly, in this process)";
    console.log(`database: ${description}`);
    return { env: {}, native: false, description, drop: async () => {} };
  }
  const dbName = `${process.env.MNEMO_BENCH_DB_PREFIX ?? "mnemo_bench"}_${name}_${Date.now()}`.toLowerCase();
  if (!/^[a-z_][a-z0-9_]*$/.test(dbName)) throw new Error(`invalid benchmark database name ${dbName}`);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const { rows } = await admin.query<{ version: string; fsync: string; sync: string }>(
    "SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync, " +
      "current_setting('synchronous_commit') AS sync",
  );
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const target = new URL(url);
  target.pathname = `/${dbName}`;
  const v = rows[0]!;
  const description =
    `native PostgreSQL ${v.version} at ${target.host}, database ${dbName} ` +
    `(fsync ${v.fsync}, synchronous_commit ${v.sync})`;
  console.log(`database: ${description}`);
  return {
    env: { DATABASE_URL: target.toString() },
    native: true,
    description,
    async drop() {
      if (process.env.MNEMO_BENCH_KEEP_DB) return;
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A whole service on a throw-away database (see benchDatabase), serving real HTTP on a free port. */
export async function startBenchService(
  env: Record<string, string> = {},
  worker = true,
  name = "bench",
): Promise<{
  runtime: Runtime;
  url: string;
  database: BenchDatabase;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-"));
  const database = await benchDatabase(name);
  const config = loadConfig({ LOG_LEVEL: "warn", MNEMO_DATA_DIR: dir, PORT: "0", ...database.env, ...env });
  const runtime = await startRuntime(config, createLogger({ level: "warn", stream: "stderr" }), {
    api: true,
    worker,
  });
  return {
    runtime,
    url: runtime.url!,
    database,
    async stop() {
      await runtime.stop();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** JSON over HTTP with a key; a 429 waits for Retry-After and tries again. */
export async function call(
  url: string,
  key: string,
  method: string,
  p: string,
  body?: unknown,
): Promise<any> {
  for (;;) {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status === 429) {
      const wait = Number(res.headers.get("retry-after") ?? "1");
      await new Promise((r) => setTimeout(r, Math.max(0.2, wait) * 1000));
      continue;
    }
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  }
}

/**
 * A JSON client for load from this machine: node:http over keep-alive connections. `fetch` costs
 * this process about 1 ms of CPU a request (its web streams), which on a small machine shared with
 * the service is CPU taken from the service being measured; this costs about a third of it. Answers
 * with their status (no retry on 429: a load test counts refusals).
 */
export function jsonClient(url: string, key: string, maxSockets = 64) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const target = new URL(url);
  const request = (method: string, p: string, body?: unknown) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          agent,
          host: target.hostname,
          port: target.port,
          path: p,
          method,
          headers: {
            "x-api-key": key,
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            try {
              resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
            } catch (err) {
              reject(err);
            }
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  return { request, close: () => agent.destroy() };
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
}

/** A one-line progress bar on stderr. */
export function progress(label: string, total: number) {
  let last = 0;
  return (done: number) => {
    const now = Date.now();
    if (done < total && now - last < 200) return;
    last = now;
    const width = 30;
    const filled = Math.round((done / Math.max(total, 1)) * width);
    process.stderr.write(
      `\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}${done >= total ? "\n" : ""}`,
    );
  };
}

/** The value after `--name` on the command line, or `def`. */
export function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? def) : def;
}

/** A free loopback port (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once a spawned server answers /readyz 200; rejects if it exits first. */
export async function untilReady(url: string, server: ChildProcess): Promise<void> {
  for (;;) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (server.exitCode !== null) throw new Error("server exited");
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `mnemo ARGS` from this checkout's sources (tsx), in the repository's directory. */
export function spawnMnemo(args: string[], env: NodeJS.ProcessEnv, stdio: StdioOptions): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: path.resolve(import.meta.dirname, ".."),
    env,
    stdio,
  });
}

/**
 * A new organisation of the `unlimited` tier, made by the admin CLI (which attaches to the running
 * server's database, embedded or not) with the server's environment; returns its API key.
 */
export async function unlimitedOrgKey(env: NodeJS.ProcessEnv, name: string): Promise<string> {
  const admin = spawnMnemo(["admin", "create-org", "--name", name, "--tier", "unlimited", "--json"], env, [
    "ignore",
    "pipe",
    "inherit",
  ]);
  let out = "";
  admin.stdout!.on("data", (d) => {
    out += d;
  });
  await new Promise((r) => admin.once("exit", r));
  return (JSON.parse(out) as { api_key: string }).api_key;
}
