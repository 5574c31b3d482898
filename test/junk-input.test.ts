import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers/harness.js";

/**
 * Bad input always gets a 4xx in the spec's envelope, never a 500: every operation of the
 * published document is fed junk bodies, queries and path ids.
 */
let svc: TestService;
let key: string;
let ops: Array<{ method: string; path: string }>;

beforeAll(async () => {
  svc = await startTestService({ workers: false });
  const org = await svc.newOrg("junk");
  key = org.key;
  await svc.deps.db.query("UPDATE organisations SET tier = 'unlimited' WHERE id = $1", [org.orgId]);
  const doc = (await svc.request("GET", "/openapi.json")).body;
  ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .filter(([p]) => p.startsWith("/v1/") && p !== "/v1/auth/generate-service-key")
    .flatMap(([p, methods]) => Object.keys(methods).map((m) => ({ method: m.toUpperCase(), path: p })));
});
afterAll(async () => {
  await svc?.stop();
});

const ids = [
  "x",
  "%00",
  "00000000-0000-0000-0000-000000000000",
  "job_zz",
  "grp_" + "0".repeat(32),
  "a".repeat(300),
];
const queries = [
  "",
  "?limit=-1",
  "?limit=abc&order=sideways",
  "?cursor=%25%25%25",
  "?include=zzz,full_content",
  "?wait=maybe",
  "?type=lesson&user_id=",
  "?user_id=%00&conv_id=a%00b",
];

function checkEnvelope(status: number, body: any, where: string) {
  expect(status, where).toBeGreaterThanOrEqual(200);
  expect(status, where).toBeLessThan(500);
  if (status >= 400) {
    const ok =
      (body?.detail && typeof body.detail.code === "string" && typeof body.detail.message === "string") ||
      (Array.isArray(body?.detail) &&
        body.detail.every((d: any) => Array.isArray(d.loc) && typeof d.msg === "string"));
    expect(ok, `${where} -> ${status} ${JSON.stringify(body)}`).toBe(true);
  }
}

describe("junk input never makes a 500", () => {
  it("odd path ids and queries", async () => {
    for (const op of ops) {
      for (const id of ids) {
        for (const q of queries) {
          const path = op.path.replace(/\{[^}]+\}/g, encodeURIComponent(id)) + q;
          const body = ["POST", "PUT", "PATCH"].includes(op.method) ? {} : undefined;
          const r = await svc.request(op.method, path, { key, ...(body ? { body } : {}) });
          checkEnvelope(r.status, r.body, `${op.method} ${path}`);
        }
      }
    }
  });

  it("random JSON bodies", async () => {
    const bodied = ops.filter((o) => ["POST", "PUT", "PATCH"].includes(o.method));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...bodied), fc.jsonValue({ maxDepth: 4 }), async (op, value) => {
        const path = op.path.replace(/\{[^}]+\}/g, "x");
        const r = await svc.request(op.method, path, { key, body: JSON.stringify(value) });
        checkEnvelope(r.status, r.body, `${op.method} ${path} ${JSON.stringify(value).slice(0, 200)}`);
      }),
      { numRuns: 150 },
    );
  });

  it("near-valid bodies with wrong types in each field", async () => {
    const junk: unknown[] = [null, 0, -1, 1e308, "", " ", "\u0000", "x".repeat(5000), [], [null], {}, true];
    const shapes: Record<string, Record<string, unknown>> = {
      "POST /v1/memories": { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "hi" }] },
      "POST /v1/memories/search": { query: "hi", user_id: "u" },
      "POST /v1/memories/trigger": { entities: ["x"], user_id: "u" },
      "POST /v1/groups": { name: "g" },
      "PUT /v1/webhooks": { url: "https://example.com/hook" },
    };
    for (const [op, base] of Object.entries(shapes)) {
      const [method, path] = op.split(" ") as [string, string];
      for (const field of Object.keys(base)) {
        for (const v of junk) {
          const r = await svc.request(method, path, { key, body: { ...base, [field]: v } });
          checkEnvelope(r.status, r.body, `${op} ${field}=${JSON.stringify(v)?.slice(0, 40)}`);
        }
      }
    }
  });
});
