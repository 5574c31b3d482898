import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/keys.js";
import { systemCtx } from "../src/context.js";
import { revokeApiKey } from "../src/db/api-keys.js";
import { insertJob } from "../src/db/jobs.js";
import { newJobId } from "../src/ids.js";
import { writeMemories } from "../src/memories/write.js";
import { seedGroup } from "./helpers/groups.js";
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
        expect(r.body.error).toMatchObject({ type: "authentication_error", code: "unauthorized" });
      }
    });
  }

  it("a mismatched X-Org-Id is 403 org_mismatch", async () => {
    for (const op of ops.filter((o) => !o.jwtOnly)) {
      const r = await call(op, { "x-api-key": key, "x-org-id": otherOrgId });
      expect(r.status, `${op.method} ${op.path}`).toBe(403);
      expect(r.body.detail.code).toBe("org_mismatch");
      expect(r.body.error).toMatchObject({ type: "permission_error", code: "org_mismatch" });
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

/**
 * The cross-user axis: within one organisation, a key confined to user_1 (a service key, or an
 * operator key made with a user) meets every operation with user_2's ids. It may read rows shared
 * through a group, never user_2's personal rows, jobs or keys, and never act as user_2; the
 * organisation-wide key still sees everything.
 */
describe("cross-user matrix: a key confined to one user", () => {
  const SECRET = "user2-personal-secret-text";
  let orgKey: string;
  let u1: string;
  let u2: string;
  let u2KeyId: string;
  let groupId: string;
  let u2Personal: string;
  let u2Shared: string;
  let u1Own: string;
  let u2Job: string;

  beforeAll(async () => {
    const org = await svc.newOrg("cross-user");
    orgKey = org.key;
    await svc.deps.db.query("UPDATE organisations SET tier = 'unlimited' WHERE id = $1", [org.orgId]);
    const k1 = await createApiKey(svc.deps.db, { orgId: org.orgId, userId: "user_1", kind: "service" });
    const k2 = await createApiKey(svc.deps.db, { orgId: org.orgId, userId: "user_2", kind: "service" });
    u1 = k1.key;
    u2 = k2.key;
    u2KeyId = k2.row.id;
    groupId = await seedGroup(svc.deps, org.orgId, { name: "team" });
    const ctx = systemCtx(svc.deps, org.orgId, "seed");
    const rows = await writeMemories(ctx, [
      { type: "fact", text: `${SECRET} about tea`, user_id: "user_2", agent_id: "bot" },
      {
        type: "fact",
        text: "shared note about tea",
        user_id: "user_2",
        agent_id: "bot",
        group_ids: [groupId],
      },
      { type: "fact", text: "own note about tea", user_id: "user_1", agent_id: "bot" },
    ]);
    [u2Personal, u2Shared, u1Own] = rows.map((r) => r.id) as [string, string, string];
    // user_2's key has usage of its own this month (the usage breakdown must not show it to user_1).
    expect((await svc.request("GET", "/v1/groups", { key: u2 })).status).toBe(200);
    u2Job = newJobId();
    await insertJob(svc.deps.db, {
      id: u2Job,
      orgId: org.orgId,
      apiKeyId: u2KeyId,
      request: { user_id: "user_2", conv_id: "c", messages: [{ role: "user", content: SECRET }] },
    });
  });

  const ingest = (user: string) => ({
    user_id: user,
    conv_id: "c",
    messages: [{ role: "user", content: "I like green tea." }],
  });

  /**
   * Every operation, with user_2's ids where it takes ids, and what user_1's key must get.
   * `allowed` operations are organisation-level (the group registry, usage) or user_1's own.
   */
  const CASES: Record<string, Array<{ path?: string; body?: unknown; expect: number; code?: string }>> = {
    "GET /v1/memories": [
      { path: "/v1/memories?user_id=user_2", expect: 403, code: "user_mismatch" },
      { path: "/v1/memories?agent_id=bot", expect: 200 },
      // A blank user_id names no user: the key's own, as when omitted (it was 403 user_mismatch).
      { path: "/v1/memories?user_id=%20", expect: 200 },
    ],
    "POST /v1/memories": [
      { body: ingest("user_2"), expect: 403, code: "user_mismatch" },
      { body: ingest("user_1"), expect: 202 },
    ],
    "DELETE /v1/memories": [
      { path: "/v1/memories?user_id=user_2", expect: 403, code: "user_mismatch" },
      // Without user_id: user_1's own only (none in this conversation); user_2's stay (checked below).
      { path: "/v1/memories?conv_id=c1", expect: 200 },
    ],
    "GET /v1/memories/jobs": [{ expect: 200 }],
    "GET /v1/memories/": [{ expect: 200 }],
    "POST /v1/memories/": [
      // Another user named in the filters is refused like `user_id` (it was 200 with no rows).
      { body: { filters: { user_id: "user_2" } }, expect: 403, code: "user_mismatch" },
      {
        body: { filters: { OR: [{ user_id: "user_1" }, { user_id: { $in: ["user_2"] } }] } },
        expect: 403,
        code: "user_mismatch",
      },
      { body: { filters: { user_id: "user_1" } }, expect: 200 },
      { body: { filters: { NOT: { user_id: "user_2" }, agent_id: "bot" } }, expect: 200 },
      // Filters that pin no axis read within the key's user, as on search (they were 422).
      { body: { filters: { NOT: { user_id: "user_2" } } }, expect: 200 },
      { body: {}, expect: 200 },
    ],
    "POST /v1/memories/add/": [{ body: ingest("user_2"), expect: 403, code: "user_mismatch" }],
    "POST /v1/memories/search/": [
      { body: { query: "tea", filters: { user_id: "user_2" } }, expect: 403, code: "user_mismatch" },
      { body: { query: "tea", filters: { user_id: "user_1" } }, expect: 200 },
      { body: { query: "tea", filters: { NOT: { user_id: "user_2" } } }, expect: 200 },
    ],
    "GET /v1/memories/{memory_id}/": [{ expect: 404, code: "memory_not_found" }],
    "PATCH /v1/memories/{memory_id}/": [
      { body: { metadata: { a: 1 } }, expect: 404, code: "memory_not_found" },
    ],
    "DELETE /v1/memories/{memory_id}/": [{ expect: 404, code: "memory_not_found" }],
    "GET /v1/memories/jobs/{job_id}": [{ expect: 404, code: "job_not_found" }],
    "GET /v1/memories/{memory_id}": [{ expect: 404, code: "memory_not_found" }],
    "PATCH /v1/memories/{memory_id}": [
      { body: { remove_group_ids: ["grp_x"] }, expect: 404, code: "memory_not_found" },
    ],
    "DELETE /v1/memories/{memory_id}": [{ expect: 404, code: "memory_not_found" }],
    "GET /v1/memories/{memory_id}/revisions": [{ expect: 404, code: "memory_not_found" }],
    "POST /v1/memories/search": [
      { body: { query: "tea", user_id: "user_2", mode: "retrieve" }, expect: 403, code: "user_mismatch" },
      { body: { query: "tea", agent_id: "bot", mode: "retrieve" }, expect: 200 },
    ],
    "POST /v1/memories/trigger": [
      {
        body: { entities: ["tea"], user_id: "user_2", mode: "retrieve" },
        expect: 403,
        code: "user_mismatch",
      },
    ],
    "GET /v1/groups": [{ expect: 200 }],
    "POST /v1/groups": [{ body: { name: "mine" }, expect: 201 }],
    "GET /v1/groups/{group_id}": [{ expect: 200 }],
    "PATCH /v1/groups/{group_id}": [{ body: { name: "team" }, expect: 200 }],
    "DELETE /v1/groups/{group_id}": [
      { path: "/v1/groups/grp_00000000000000000000000000000000", expect: 404 },
    ],
    "PUT /v1/webhooks": [{ body: { url: "https://example.com/h" }, expect: 403, code: "forbidden" }],
    "GET /v1/webhooks": [{ expect: 403, code: "forbidden" }],
    "DELETE /v1/webhooks": [{ expect: 403, code: "forbidden" }],
    "GET /v1/webhooks/deliveries": [{ expect: 403, code: "forbidden" }],
    "GET /v1/usage": [{ expect: 200 }, { path: "/v1/usage?by_api_key=true", expect: 200 }],
    "POST /v1/auth/generate-service-key": [{ expect: 401, code: "unauthorized" }],
    "GET /v1/auth/service-keys": [{ expect: 200 }],
    "DELETE /v1/auth/service-keys/{id}": [{ expect: 404, code: "key_not_found" }],
  };

  const fill = (p: string) =>
    p
      .replace("{job_id}", u2Job)
      .replace("{memory_id}", u2Personal)
      .replace("{group_id}", groupId)
      .replace("{id}", u2KeyId);

  it("covers every operation", async () => {
    const doc = (await svc.request("GET", "/openapi.json")).body;
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([p]) => p.startsWith("/v1/"))
      .flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
    expect(listed.sort()).toEqual(Object.keys(CASES).sort());
  });

  it("user_1's key never reads, writes or revokes user_2's things", async () => {
    for (const [op, cases] of Object.entries(CASES)) {
      const [method, template] = op.split(" ") as [string, string];
      for (const c of cases) {
        const path = c.path ?? fill(template);
        const r = await svc.request(method, path, {
          key: u1,
          ...(c.body !== undefined
            ? { body: c.body }
            : ["POST", "PUT", "PATCH"].includes(method)
              ? { body: {} }
              : {}),
        });
        const where = `${method} ${path} ${JSON.stringify(c.body ?? "")}`;
        expect(r.status, `${where}: ${r.text.slice(0, 300)}`).toBe(c.expect);
        if (c.code) expect(r.body.detail.code, where).toBe(c.code);
        expect(r.text, where).not.toContain(SECRET);
        // A 404 may echo the id asked for; an answer that succeeded never names user_2's key.
        if (r.status < 300) expect(r.text, where).not.toContain(u2KeyId);
      }
    }
    // user_2's things are intact and still work.
    expect((await svc.request("GET", `/v1/memories/${u2Personal}`, { key: u2 })).status).toBe(200);
    expect((await svc.request("GET", `/v1/memories/jobs/${u2Job}`, { key: u2 })).status).toBe(200);
    const u1Jobs = (await svc.request("GET", "/v1/memories/jobs?limit=100", { key: u1 })).body;
    expect(u1Jobs.data.map((j: { id: string }) => j.id)).not.toContain(u2Job);
    const u2Jobs = (await svc.request("GET", "/v1/memories/jobs?limit=100", { key: u2 })).body;
    expect(u2Jobs.data.map((j: { id: string }) => j.id)).toContain(u2Job);
  });

  it("reads default to the key's user; a named group shows its shared rows, never personal ones", async () => {
    const ids = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((m) => m.id).sort();
    expect(ids(await svc.request("GET", "/v1/memories", { key: u1 }))).toEqual([u1Own]);
    expect(ids(await svc.request("GET", "/v1/memories?user_id=user_1", { key: u1 }))).toEqual([u1Own]);
    const unpinned = await svc.request("POST", "/v1/memories/", {
      key: u1,
      body: { filters: { type: "fact" } },
    });
    expect(unpinned.body.results.map((m: { id: string }) => m.id)).toEqual([u1Own]);
    expect(ids(await svc.request("GET", `/v1/memories?group_id=${groupId}`, { key: u1 }))).toEqual([
      u2Shared,
    ]);
    const search = await svc.request("POST", "/v1/memories/search", {
      key: u1,
      body: { query: "tea", agent_id: "bot", mode: "retrieve" },
    });
    expect(ids(search)).toEqual([u1Own]);
    const group = await svc.request("POST", "/v1/memories/search", {
      key: u1,
      body: { query: "tea", group_ids: [groupId], mode: "retrieve" },
    });
    expect(ids(group)).toEqual([u2Shared]);
    // By id: a shared row reads, but only its owner may change or delete it.
    expect((await svc.request("GET", `/v1/memories/${u2Shared}`, { key: u1 })).status).toBe(200);
    const patch = await svc.request("PATCH", `/v1/memories/${u2Shared}`, {
      key: u1,
      body: { remove_group_ids: [groupId] },
    });
    expect(patch.status).toBe(404);
    expect((await svc.request("DELETE", `/v1/memories/${u2Shared}`, { key: u1 })).status).toBe(404);
    expect((await svc.request("GET", `/v1/memories/${u2Shared}`, { key: u2 })).body.group_ids).toEqual([
      groupId,
    ]);
    // Keys: only its own.
    const keys = await svc.request("GET", "/v1/auth/service-keys", { key: u1 });
    expect(keys.body.data.map((k: { user_id: string }) => k.user_id)).toEqual(["user_1"]);
    expect((await svc.request("GET", "/v1/auth/service-keys", { key: u2 })).status).toBe(200);
  });

  it("the organisation-wide key still sees and manages every user", async () => {
    const all = await svc.request("GET", "/v1/memories", { key: orgKey });
    expect(all.body.data.map((m: { id: string }) => m.id)).toEqual(
      expect.arrayContaining([u2Personal, u1Own]),
    );
    expect((await svc.request("GET", "/v1/memories?user_id=user_2", { key: orgKey })).body.data).toHaveLength(
      2,
    );
    expect((await svc.request("GET", `/v1/memories/jobs/${u2Job}`, { key: orgKey })).status).toBe(200);
    const keys = await svc.request("GET", "/v1/auth/service-keys", { key: orgKey });
    expect(keys.body.data.map((k: { id: string }) => k.id)).toContain(u2KeyId);
    expect((await svc.request("GET", "/v1/webhooks", { key: orgKey })).status).toBe(404);
  });
});
