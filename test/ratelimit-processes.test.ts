import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg } from "../src/admin/orgs.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";

// Limit 5 a minute, and a daily cap of 6 as a guard: even if the minute turns over mid-burst, no
// more than limit + 1 can get through, which is exactly what the shared counter must guarantee.
const TIERS = JSON.stringify({ shared: { per_minute: 5, per_day: 6 } });

let svc: TestService;
const children: ChildProcess[] = [];

/**
 * The harness serves over a Unix socket (`postgresql://postgres@/postgres?host=DIR`), a form the
 * DATABASE_URL check (WHATWG URL) refuses; the same target spelled with `user` as a parameter passes.
 */
function wireUrl(connectionString: string): string {
  const m = /^postgresql:\/\/(\w+)@\/(\w+)\?host=(.+)$/.exec(connectionString);
  return m ? `postgresql:///${m[2]}?host=${m[3]}&user=${m[1]}` : connectionString;
}

/** A real `mnemo api` process on the test database (over the Postgres wire); resolves to its URL. */
function startApiProcess(connectionString: string): Promise<string> {
  const tsx = path.resolve("node_modules/tsx/dist/cli.mjs");
  const child = spawn(process.execPath, [tsx, "src/cli/main.ts", "api"], {
    env: {
      ...process.env,
      DATABASE_URL: wireUrl(connectionString),
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      MNEMO_DB_POOL_SIZE: "4",
      MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
      MNEMO_RATE_TIERS: TIERS,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const stderr: string[] = [];
  child.stderr!.on("data", (d) => stderr.push(String(d)));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      try {
        const entry = JSON.parse(line);
        if (entry.msg === "listening") resolve(entry.url);
      } catch {
        // not a log line
      }
    });
    child.once("exit", (code) => reject(new Error(`api process exited ${code}: ${stderr.join("")}`)));
  });
}

beforeAll(async () => {
  svc = await startTestService({ env: { MNEMO_RATE_TIERS: TIERS }, workers: false });
});
afterAll(async () => {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          c.once("exit", () => resolve());
          c.kill("SIGTERM");
        }),
    ),
  );
  await svc?.stop();
});

describe("rate limit across processes", () => {
  it("two API processes share one key's limit through the database", async () => {
    const [a, b] = await Promise.all([
      startApiProcess(svc.connectionString),
      startApiProcess(svc.connectionString),
    ]);
    expect(a).not.toBe(b);
    const { key } = await createOrg(svc.deps.db, { name: "two-procs", tier: "shared" }).then((o) => ({
      key: o.api_key,
    }));
    const fire = (base: string) =>
      fetch(`${base}/v1/auth/service-keys`, { headers: { "x-api-key": key } }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { detail?: { code: string } },
      }));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => fire(i % 2 ? a : b)));
    const admitted = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 429);
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(admitted).toBeLessThanOrEqual(5 + 1);
    expect(refused.length).toBe(20 - admitted);
    for (const r of refused) expect(["rate_limited", "daily_cap_exceeded"]).toContain(r.body.detail?.code);
    // Both processes refused some: neither kept a private count.
    const fromA = await fire(a);
    const fromB = await fire(b);
    expect(fromA.status).toBe(429);
    expect(fromB.status).toBe(429);
  });
});
