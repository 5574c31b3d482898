import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/keys.js";
import { revokeApiKey } from "../src/db/api-keys.js";
import { startTestService, type TestService } from "./helpers/harness.js";

/**
 * The auth cases, run against every operation the OpenAPI document lists under /v1, so a route
 * added later is covered without touching this file.
 */
let svc: TestService;
let key: string;
let revoked: string;
let otherOrgId: string;
let ops: Array<{ method: string; path: string; jwtOnly: boolean }>;

beforeAll(async () => {
  svc = await startTestService({ workers: false });
  const org = await svc.newOrg("matrix");
  key = org.key;
  const r = await createApiKey(svc.deps.db, { orgId: org.orgId });
  await revokeApiKey(svc.deps.db, r.row.id);
  revoked = r.key;
  otherOrgId = (await svc.newOrg("other")).orgId;
  const doc = (await svc.request("GET", "/openapi.json")).body;
  ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .filter(([p]) => p.startsWith("/v1/"))
    .flatMap(([p, methods]) =>
      Object.keys(methods).map((m) => ({
        method: m.toUpperCase(),
        path: p.replace(/\{[^}]+\}/g, "x"),
        jwtOnly: p === "/v1/auth/generate-service-key",
      })),
    );
});
afterAll(async () => {
  await svc?.stop();
});

const call = (op: { method: string; path: string }, headers: Record<string, string>) =>
  svc.request(op.method, op.path, {
    headers,
    ...(["POST", "PUT", "PATCH"].includes(op.method) ? { body: {} } : {}),
  });

describe("auth matrix over every /v1 operation", () => {
  it("covers the operations", () => {
    expect(ops.length).toBeGreaterThan(0);
  });

  const refused: Array<[string, () => Record<string, string>]> = [
    ["no credential", () => ({})],
    ["malformed Authorization", () => ({ authorization: "Basic dXNlcjpwYXNz" })],
    ["empty x-api-key", () => ({ "x-api-key": "" })],
    ["unknown key", () => ({ "x-api-key": "mnemo_doesnotexistdoesnotexistdoesnotexist" })],
    ["unknown bearer key", () => ({ authorization: "Bearer mnemo_doesnotexistdoesnotexistdoesno" })],
    ["revoked key", () => ({ "x-api-key": revoked })],
  ];
  for (const [name, headers] of refused) {
    it(`${name} is 401 unauthorized`, async () => {
      for (const op of ops) {
        const r = await call(op, headers());
        expect(r.status, `${op.method} ${op.path}`).toBe(401);
        expect(r.body.detail.code).toBe("unauthorized");
      }
    });
  }

  it("a mismatched X-Org-Id is 403 org_mismatch", async () => {
    for (const op of ops.filter((o) => !o.jwtOnly)) {
      const r = await call(op, { "x-api-key": key, "x-org-id": otherOrgId });
      expect(r.status, `${op.method} ${op.path}`).toBe(403);
      expect(r.body.detail.code).toBe("org_mismatch");
    }
  });

  it("x-api-key, Bearer and Token forms are all accepted", async () => {
    for (const op of ops.filter((o) => !o.jwtOnly)) {
      const forms: Array<Record<string, string>> = [
        { "x-api-key": key },
        { authorization: `Bearer ${key}` },
        { authorization: `Token ${key}` },
      ];
      for (const headers of forms) {
        const r = await call(op, headers);
        expect([401, 403], `${op.method} ${op.path} with ${Object.keys(headers)[0]}`).not.toContain(r.status);
      }
    }
  });
});
