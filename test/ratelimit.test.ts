import { OpenAPIHono } from "@hono/zod-openapi";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorResponse } from "../rest/errors.js";
import { requireAuth } from "../rest/middleware/auth.js";
import { requestContext } from "../rest/middleware/request.js";
import type { AppEnv } from "../rest/types.js";
import { createKey, createOrg } from "../src/admin/orgs.js";
import type { Deps } from "../src/context.js";
import { failOpen } from "../src/ratelimit/check.js";
import { startTestService, type TestService } from "./helpers/harness.js";

const TIERS = {
  tiny: { per_minute: 3, per_day: 1000 },
  capped: { per_minute: 1000, per_day: 4 },
  daily_only: { per_minute: null, per_day: 2 },
};

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { MNEMO_RATE_TIERS: JSON.stringify(TIERS) }, workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const orgWithTier = async (tier: string) => {
  const o = await createOrg(svc.deps.db, { name: `rl-${tier}`, tier });
  return { orgId: o.org_id, key: o.api_key };
};

/** The real auth middleware on a one-route app, with a test clock and an optional logger. */
function miniApp(deps: Deps, now: () => Date) {
  const app = new OpenAPIHono<AppEnv>();
  app.use("*", requestContext(deps));
  app.use("/v1/*", requireAuth(deps, { now }));
  app.get("/v1/ping", (c) => c.json({ ok: true }));
  app.onError((err, c) => errorResponse(c, err));
  return app;
}

describe("rate limits", () => {
  it("puts the rate-limit headers on every authenticated response, errors included", async () => {
    const { key } = await svc.newOrg();
    const ok = await svc.request("GET", "/v1/auth/service-keys", { key });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-limit")).toBe("600");
    expect(ok.headers.get("ratelimit-limit")).toBe("600");
    expect(ok.headers.get("x-ratelimit-remaining")).toBe("599");
    expect(ok.headers.get("ratelimit-remaining")).toBe("599");
    const reset = Number(ok.headers.get("ratelimit-reset"));
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(60);
    const missing = await svc.request("GET", "/v1/no-such-route", { key });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-ratelimit-remaining")).toBe("598");
    // No credential: no principal, so no rate-limit headers.
    const anon = await svc.request("GET", "/v1/auth/service-keys");
    expect(anon.status).toBe(401);
    expect(anon.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("refuses past the per-minute limit with 429 rate_limited and Retry-After, per key", async () => {
    const { orgId, key } = await orgWithTier("tiny");
    const responses = [];
    for (let i = 0; i < 7; i++) responses.push(await svc.request("GET", "/v1/auth/service-keys", { key }));
    // Limit 3: even if the minute rolls over once during the loop, at most 6 of 7 get through.
    expect(responses.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    const refused = responses.find((r) => r.status === 429);
    expect(refused).toBeDefined();
    expect(refused!.body.detail).toEqual({ code: "rate_limited", message: expect.any(String) });
    expect(refused!.body).toEqual({
      detail: { code: "rate_limited", message: expect.any(String) },
      error: {
        type: "rate_limit_error",
        code: "rate_limited",
        message: refused!.body.detail.message,
        request_id: refused!.headers.get("x-request-id"),
      },
    });
    const retry = Number(refused!.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused!.headers.get("ratelimit-reset")).toBe(String(retry));
    expect(refused!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused!.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused!.headers.get("x-ratelimit-limit")).toBe("3");
    // Another key of the same organisation has its own budget.
    const { api_key } = await createKey(svc.deps.db, { orgId });
    const fresh = await svc.request("GET", "/v1/auth/service-keys", { key: api_key });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("x-ratelimit-remaining")).toBe("2");
  });

  it("counts only admitted requests, and resets the minute window on the clock", async () => {
    const { key } = await orgWithTier("tiny");
    let t = new Date("2030-01-01T10:00:10Z");
    const app = miniApp(svc.deps, () => t);
    const call = () => app.request("/v1/ping", { headers: { "x-api-key": key } });
    const codes = [];
    for (let i = 0; i < 6; i++) codes.push((await call()).status);
    expect(codes).toEqual([200, 200, 200, 429, 429, 429]);
    t = new Date("2030-01-01T10:00:59Z");
    const late = await call();
    expect(late.status).toBe(429);
    expect(late.headers.get("retry-after")).toBe("1");
    t = new Date("2030-01-01T10:01:00Z");
    const next = await call();
    expect(next.status).toBe(200);
    expect(next.headers.get("x-ratelimit-remaining")).toBe("2");
  });

  it("applies the daily cap at the UTC day boundary", async () => {
    const { key } = await orgWithTier("capped");
    let t = new Date("2030-03-04T23:58:30Z");
    const app = miniApp(svc.deps, () => t);
    const call = () => app.request("/v1/ping", { headers: { "x-api-key": key } });
    for (let i = 0; i < 4; i++) expect((await call()).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as any;
    expect(body.detail).toEqual({ code: "daily_cap_exceeded", message: expect.any(String) });
    expect(body).toEqual({
      detail: { code: "daily_cap_exceeded", message: expect.any(String) },
      error: {
        type: "rate_limit_error",
        code: "daily_cap_exceeded",
        message: body.detail.message,
        request_id: refused.headers.get("x-request-id"),
      },
    });
    expect(refused.headers.get("retry-after")).toBe(String(90)); // 23:58:30 -> 00:00:00
    // The RateLimit headers speak of the window that binds: the day's (4), not the minute's (1000).
    expect(refused.headers.get("ratelimit-limit")).toBe("4");
    expect(refused.headers.get("x-ratelimit-limit")).toBe("4");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("ratelimit-reset")).toBe("90");
    expect(refused.headers.get("x-ratelimit-daily-remaining")).toBe("0");
    // A new minute does not lift a daily cap.
    t = new Date("2030-03-04T23:59:59Z");
    expect((await call()).status).toBe(429);
    // The UTC day turns over: the cap is lifted.
    t = new Date("2030-03-05T00:00:00Z");
    const after = await call();
    expect(after.status).toBe(200);
    expect(after.headers.get("x-ratelimit-daily-remaining")).toBe("3");
  });

  it("limits a tier with only a daily cap, and lets an unlimited tier through with no limit and no headers", async () => {
    const daily = await orgWithTier("daily_only");
    const t = new Date("2030-05-05T12:00:00Z");
    const app = miniApp(svc.deps, () => t);
    const call = (key: string) => app.request("/v1/ping", { headers: { "x-api-key": key } });
    const first = await call(daily.key);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("ratelimit-reset")).toBe(String(12 * 3600));
    expect((await call(daily.key)).status).toBe(200);
    expect((await call(daily.key)).status).toBe(429);

    const free = await orgWithTier("unlimited");
    for (let i = 0; i < 10; i++) {
      const r = await call(free.key);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });

  it("fails open with a logged warning when the limiter query fails", async () => {
    const { key } = await orgWithTier("tiny");
    const lines: string[] = [];
    const log = pino({ level: "warn" }, { write: (s: string) => lines.push(s) });
    const app = miniApp({ ...svc.deps, log }, () => new Date());
    // The throttle is the process's: a fail-open an earlier test of this file logged (a slow
    // database on a loaded machine) must not keep this one's first line quiet.
    failOpen.reset();
    await svc.deps.db.query("ALTER TABLE rate_limit_counters RENAME TO rate_limit_counters_away");
    try {
      for (let i = 0; i < 5; i++) {
        const r = await app.request("/v1/ping", { headers: { "x-api-key": key } });
        expect(r.status).toBe(200);
      }
    } finally {
      await svc.deps.db.query("ALTER TABLE rate_limit_counters_away RENAME TO rate_limit_counters");
    }
    const warnings = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
    // Once per 10 s at most (the next line counts those left out), not once per request.
    expect(warnings.length).toBe(1);
    expect(warnings[0].msg).toMatch(/fail open/);
    // Back to limiting once the table is back.
    const r = await app.request("/v1/ping", { headers: { "x-api-key": key } });
    expect(r.headers.get("x-ratelimit-limit")).toBe("3");
  });
});
