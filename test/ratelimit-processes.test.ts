import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg } from "../src/admin/orgs.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { type MnemoProcess, spawnMnemo } from "./helpers/process.js";

// Limit 5 a minute, and a daily cap of 6 as a guard: even if the minute turns over mid-burst, no
// more than limit + 1 can get through, which is exactly what the shared counter must guarantee.
const TIERS = JSON.stringify({ shared: { per_minute: 5, per_day: 6 } });

let svc: TestService;
const children: MnemoProcess[] = [];

/** A real `mnemo api` process on the test database (over the Postgres wire); resolves to its URL. */
async function startApiProcess(connectionString: string): Promise<string> {
  const p = spawnMnemo(["api"], {
    DATABASE_URL: connectionString,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    MNEMO_DB_POOL_SIZE: "4",
    MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
    MNEMO_RATE_TIERS: TIERS,
  });
  children.push(p);
  const m = await p.waitFor(/"url":"(http:\/\/[^"]+)"[^\n]*"msg":"listening"/);
  return m[1]!;
}

beforeAll(async () => {
  svc = await startTestService({ env: { MNEMO_RATE_TIERS: TIERS }, workers: false });
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill()));
  await svc?.stop();
});

describe("rate limit across processes", () => {
  it("two API processes share one key's limit through the database", async () => {
    const [a, b] = await Promise.all([
      startApiProcess(svc.connectionString),
      startApiProcess(svc.connectionString),
    ]);
    expect(a).not.toBe(b);
    const { api_key: key } = await createOrg(svc.deps.db, { name: "two-procs", tier: "shared" });
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
    // Both processes refuse now: neither kept a private count.
    expect((await fire(a)).status).toBe(429);
    expect((await fire(b)).status).toBe(429);
  });
});
