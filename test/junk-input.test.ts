import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { writeMemories } from "../src/memories/write.js";
import { seedGroup } from "./helpers/groups.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { callErr, callOk, httpClient } from "./helpers/mcp-client.js";

/**
 * Bad input always gets a 4xx in the spec's envelope, never a 500: every operation of the
 * published document is fed junk bodies, queries and path ids.
 */
let svc: TestService;
let key: string;
let orgId: string;
let ops: Array<{ method: string; path: string }>;

beforeAll(async () => {
  // No workers: an add that holds for its job (4.12 `add/`) answers `pending` at once.
  svc = await startTestService({ workers: false, env: { MNEMO_WAIT_SECONDS: "0" } });
  const org = await svc.newOrg("junk");
  key = org.key;
  orgId = org.orgId;
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
    // The hosted error object rides along on every error: same code, a type, the request id.
    const types: Record<number, string> = {
      401: "authentication_error",
      403: "permission_error",
      404: "not_found_error",
      409: "conflict_error",
      429: "rate_limit_error",
    };
    const type = types[status] ?? "invalid_request_error";
    expect(body.error, `${where} -> ${status} ${JSON.stringify(body)}`).toMatchObject({
      type,
      code: Array.isArray(body.detail) ? "invalid_request" : body.detail.code,
      message: expect.any(String),
      request_id: expect.any(String),
    });
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
      "POST /v1/memories/search/": { query: "hi", filters: { user_id: "u" } },
      "POST /v1/memories/": { filters: { user_id: "u" }, limit: 5 },
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

  it("random filter trees and metadata", async () => {
    const filterish = fc.letrec((tie) => ({
      node: fc.oneof(
        { maxDepth: 4 },
        fc.jsonValue({ maxDepth: 2 }),
        fc.dictionary(
          fc.constantFrom("user_id", "AND", "OR", "NOT", "created_at", "metadata.k", "k", "$or", "group_ids"),
          tie("node"),
          { maxKeys: 3 },
        ),
        fc.dictionary(
          fc.constantFrom("$eq", "$ne", "$in", "$nin", "$exists", "$gt", "$between", "$regex"),
          fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.constant("2026-01-01"), fc.constant(["a", "b"])),
          { maxKeys: 2 },
        ),
        fc.array(tie("node"), { maxLength: 3 }),
      ),
    })).node;
    await fc.assert(
      fc.asyncProperty(filterish, async (filters) => {
        for (const [path, body] of [
          ["/v1/memories/search/", { query: "hi", filters }],
          ["/v1/memories/", { filters: { AND: [{ user_id: "u" }, filters] } }],
          [
            "/v1/memories?wait=false",
            { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "hi" }], metadata: filters },
          ],
        ] as const) {
          const r = await svc.request("POST", path, { key, body });
          checkEnvelope(r.status, r.body, `POST ${path} ${JSON.stringify(body).slice(0, 300)}`);
        }
      }),
      { numRuns: 150 },
    );
  });
});

/**
 * A valid body for every operation that takes one, with the fields that are free text (a lone
 * surrogate there becomes U+FFFD) marked; every other string in it is an identifier or a name.
 * `{memory}` and `{group}` in a path are filled with a real memory and group of the organisation.
 */
const BODIES: Record<string, { body: Record<string, unknown>; freeText?: string[] }> = {
  "POST /v1/memories": {
    body: {
      user_id: "u",
      conv_id: "c",
      agent_id: "a",
      app_id: "app",
      namespace: "ns",
      timestamp_format: "%Y-%m-%d",
      group_ids: ["{group}"],
      messages: [{ role: "user", content: "I like tea.", date: "2024-01-02", dia_id: "D1:1", name: "Ann" }],
    },
    freeText: ["messages.0.content"],
  },
  "POST /v1/memories/search": {
    body: { query: "tea", user_id: "u", agent_id: "a", app_id: "app", group_ids: ["{group}"] },
  },
  "POST /v1/memories/trigger": {
    body: {
      action: { tool: "Bash", args: { command: "npm test" }, output: "ok" },
      entities: ["npm"],
      namespace: "ns",
      task: "run the tests",
      user_id: "u",
      group_ids: ["{group}"],
    },
    freeText: ["action.tool", "action.args.command", "action.output", "task"],
  },
  "PATCH /v1/memories/{memory_id}": { body: { add_group_ids: ["{group}"], remove_group_ids: ["grp_x"] } },
  "POST /v1/groups": { body: { name: "g", prompt: "work notes" } },
  "PATCH /v1/groups/{group_id}": { body: { name: "g2", prompt: "other notes" } },
  "PUT /v1/webhooks": { body: { url: "https://example.com/hook" } },
  "POST /v1/auth/generate-service-key": { body: { name: "ci" } },
  // Spec 4.12's variant shapes.
  "POST /v1/memories/add/": {
    body: {
      user_id: "u",
      conv_id: "c",
      agent_id: "a",
      app_id: "app",
      group_ids: ["{group}"],
      messages: [{ role: "user", content: "I like coffee.", name: "Ann" }],
    },
    freeText: ["messages.0.content"],
  },
  "POST /v1/memories/search/": {
    body: { query: "tea", filters: { user_id: "u", agent_id: "a", app_id: "app" }, limit: 5 },
  },
  "POST /v1/memories/": { body: { filters: { user_id: "u", app_id: "app" }, limit: 5 } },
  "PATCH /v1/memories/{memory_id}/": { body: { add_group_ids: ["{group}"], remove_group_ids: ["grp_x"] } },
};

/** Every string leaf of a value, as a dotted path. */
function stringLeaves(v: unknown, at: string[] = []): string[][] {
  if (typeof v === "string") return [at];
  if (Array.isArray(v)) return v.flatMap((x, i) => stringLeaves(x, [...at, String(i)]));
  if (v && typeof v === "object") return Object.entries(v).flatMap(([k, x]) => stringLeaves(x, [...at, k]));
  return [];
}

function withLeaf(v: unknown, at: string[], value: string): unknown {
  if (at.length === 0) return value;
  const [head, ...rest] = at as [string, ...string[]];
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) };
  copy[head] = withLeaf(copy[head], rest, value);
  return copy;
}

/** Values a mutation puts anywhere in a valid body: any JSON, and the ones that broke services before. */
const weird = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(
    null,
    -1,
    1.5,
    1e308,
    2 ** 53,
    "",
    "\u0000",
    "a\ud800b",
    "x".repeat(70_000),
    [[]],
    { "": 1 },
    "9999-12-31T99:99:99Z",
    "1e999",
    "00000000-0000-0000-0000-000000000000",
    Array.from({ length: 2000 }, (_, i) => `v${i}`),
    { $regex: "(" },
  ),
);

/** Every node of a value (objects, arrays and leaves), as key paths; the root is []. */
function nodePaths(v: unknown, at: string[] = []): string[][] {
  if (!v || typeof v !== "object") return [at];
  return [at, ...Object.entries(v).flatMap(([k, x]) => nodePaths(x, [...at, k]))];
}

/** `v` with the node at `at` replaced by `value`, removed, or (an object) given an unknown key. */
function mutated(v: unknown, at: string[], value: unknown, how: "set" | "drop" | "add"): unknown {
  if (at.length === 0) {
    if (how === "add" && v && typeof v === "object" && !Array.isArray(v)) return { ...v, zz_unknown: value };
    return how === "drop" ? undefined : value;
  }
  const [head, ...rest] = at as [string, ...string[]];
  const copy: any = Array.isArray(v) ? [...v] : { ...(v as object) };
  const next = mutated(copy[head], rest, value, how);
  if (next === undefined && !Array.isArray(copy)) delete copy[head];
  else copy[head] = next;
  return copy;
}

describe("lone surrogates, over-long identifiers and short bodies", () => {
  let memoryId: string;
  let groupId: string;
  const fill = (s: string) => s.replace("{memory_id}", memoryId).replace("{group_id}", groupId);
  const fillBody = (b: unknown) => JSON.parse(JSON.stringify(b).replaceAll("{group}", groupId));

  beforeAll(async () => {
    groupId = await seedGroup(svc.deps, orgId, { name: "junk" });
    const [m] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "seed", user_id: "u" },
    ]);
    memoryId = m!.id;
  });

  it("every operation with a body is covered", () => {
    const bodied = ops.filter((o) => ["POST", "PUT", "PATCH"].includes(o.method));
    for (const op of bodied)
      expect(Object.keys(BODIES), `${op.method} ${op.path}`).toContain(`${op.method} ${op.path}`);
  });

  it("a lone surrogate in an identifier is a 422 naming the field; in free text it becomes U+FFFD", async () => {
    for (const [op, { body, freeText = [] }] of Object.entries(BODIES)) {
      if (op.endsWith("generate-service-key")) continue; // JWT only: see service-keys.test.ts
      const [method, path] = op.split(" ") as [string, string];
      for (const at of stringLeaves(body)) {
        for (const bad of ["a\ud800b", "\udc00", "x\ud83d"]) {
          const r = await svc.request(method, fill(path), { key, body: withLeaf(fillBody(body), at, bad) });
          const where = `${op} ${at.join(".")}=${JSON.stringify(bad)}`;
          checkEnvelope(r.status, r.body, where);
          if (freeText.includes(at.join("."))) {
            expect(r.status, `${where} ${r.text}`).toBeLessThan(300);
          } else {
            expect(r.status, `${where} ${r.text}`).toBe(422);
            if (at[0] === "filters") {
              // The filter language answers 422 invalid_filters naming the filter path.
              expect(r.body.detail, where).toMatchObject({ code: "invalid_filters", field: at.join(".") });
              expect(r.body.detail.message, where).toMatch(/surrogate/i);
              continue;
            }
            // Listed in error.details.issues whether or not a field code applies (then detail is {code, field}).
            const issue = r.body.error.details.issues[0];
            expect(issue.loc, where).toEqual(["body", ...at]);
            expect(issue.msg, where).toMatch(/surrogate/i);
            if (Array.isArray(r.body.detail)) expect(r.body.detail[0], where).toEqual(issue);
          }
        }
      }
    }
    // The replaced content is what the job keeps (and so what extraction reads).
    const r = await svc.request("POST", "/v1/memories", {
      key,
      body: {
        user_id: "u",
        conv_id: "c",
        messages: [{ role: "user", content: "tea \ud83d and \udc00 cake" }],
      },
    });
    expect(r.status).toBe(202);
    const { rows } = await svc.deps.db.query("SELECT request FROM ingest_jobs WHERE id = $1", [r.body.id]);
    expect(rows[0].request.messages[0].content).toBe("tea \ufffd and \ufffd cake");
    // A well-formed pair (an emoji) is untouched everywhere.
    const ok = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u\ud83d\ude00", conv_id: "c", messages: [{ role: "user", content: "\ud83d\ude00" }] },
    });
    expect(ok.status).toBe(202);
  });

  it("valid bodies mutated in up to three places (a value replaced, a key dropped, an unknown key) are never a 500", async () => {
    for (const [op, { body }] of Object.entries(BODIES)) {
      const [method, path] = op.split(" ") as [string, string];
      const nodes = nodePaths(body);
      const mutation = fc.tuple(fc.nat(nodes.length - 1), weird, fc.constantFrom("set", "drop", "add"));
      await fc.assert(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
          let b: unknown = fillBody(body);
          for (const [i, value, how] of mutations)
            b = mutated(b, nodes[i]!, value, how as "set" | "drop" | "add");
          const sent = b === undefined ? "" : JSON.stringify(b);
          const r = await svc.request(method, fill(path), { key, body: sent });
          checkEnvelope(r.status, r.body, `${op} ${sent.slice(0, 300)}`);
        }),
        { numRuns: 40 },
      );
    }
  });

  it("identifiers are limited to 256 characters (a 900 KB user_id is a 422, not a failed job)", async () => {
    for (const [op, { body, freeText = [] }] of Object.entries(BODIES)) {
      if (op.endsWith("generate-service-key")) continue;
      const [method, path] = op.split(" ") as [string, string];
      for (const at of stringLeaves(body)) {
        const name = at.join(".");
        if (freeText.includes(name) || ["query", "name", "prompt", "url"].includes(name)) continue;
        const atLimit = await svc.request(method, fill(path), {
          key,
          body: withLeaf(fillBody(body), at, "u".repeat(256)),
        });
        checkEnvelope(atLimit.status, atLimit.body, `${op} ${name} 256`);
        expect(
          atLimit.status === 422 && atLimit.body.error.details?.issues?.[0]?.type === "too_big",
          `${op} ${name} 256`,
        ).toBe(false);
        const r = await svc.request(method, fill(path), {
          key,
          body: withLeaf(fillBody(body), at, "u".repeat(257)),
        });
        expect(r.status, `${op} ${name} 257: ${r.text.slice(0, 200)}`).toBe(422);
        if (at[0] === "filters") {
          expect(r.body.detail, `${op} ${name}`).toMatchObject({ code: "invalid_filters", field: name });
          expect(r.body.detail.message, `${op} ${name}`).toMatch(/at most 256 characters/);
          continue;
        }
        expect(r.body.error.details.issues[0], `${op} ${name}`).toMatchObject({
          loc: ["body", ...at],
          type: "too_big",
        });
        if (Array.isArray(r.body.detail)) expect(r.body.detail[0]).toEqual(r.body.error.details.issues[0]);
        else expect(r.body.detail.field, `${op} ${name}`).toBe(name.replace(/\.(\d+)(?=\.|$)/g, "[$1]"));
      }
    }
    const huge = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u".repeat(900 * 1024), conv_id: "c", messages: [{ role: "user", content: "hi" }] },
    });
    expect(huge.status).toBe(422);
    expect(huge.body.detail[0].loc).toEqual(["body", "user_id"]);
  });

  it("query parameters: over-long identifiers are 422, invalid UTF-8 never a 500", async () => {
    // The list in both forms: `/v1/memories` and the variant's `/v1/memories/`.
    const lists: [string, string][] = ["user_id", "agent_id", "conv_id", "app_id"].map((f) => [
      "/v1/memories/",
      f,
    ]);
    for (const [list, field] of lists) {
      const r = await svc.request("GET", `${list}?${field}=${"u".repeat(257)}`, { key });
      expect([list, field, r.status]).toEqual([list, field, 422]);
      expect(r.body.detail[0].loc).toEqual(["query", field]);
    }
    for (const field of ["user_id", "agent_id", "conv_id", "app_id", "group_id"]) {
      const r = await svc.request("GET", `/v1/memories?${field}=${"u".repeat(257)}`, { key });
      expect(r.status, field).toBe(422);
      expect(r.body.detail[0].loc).toEqual(["query", field]);
      for (const junk of ["%ED%A0%80", "%ED%B0%80x", "%C3", "%FF%FE"]) {
        const j = await svc.request("GET", `/v1/memories?${field}=a${junk}b`, { key });
        checkEnvelope(j.status, j.body, `${field}=${junk}`);
      }
    }
    for (const op of ops) {
      const path = op.path.replace(/\{[^}]+\}/g, "%ED%A0%80");
      const body = ["POST", "PUT", "PATCH"].includes(op.method) ? {} : undefined;
      const r = await svc.request(op.method, path, { key, ...(body ? { body } : {}) });
      checkEnvelope(r.status, r.body, `${op.method} ${path}`);
    }
  });

  it("a body with lone-surrogate escapes in unknown fields and keys is never a 500", async () => {
    for (const [op, { body }] of Object.entries(BODIES)) {
      if (op.endsWith("generate-service-key")) continue;
      const [method, path] = op.split(" ") as [string, string];
      const raw = JSON.stringify(fillBody(body)).replace(/}$/, ',"x\\ud800":"\\udfff","extra":["\\ud800"]}');
      const r = await svc.request(method, fill(path), { key, body: raw });
      checkEnvelope(r.status, r.body, `${op} unknown fields`);
    }
  });

  it("MCP add_memory: a lone surrogate in user_id is a tool error, in the text it is replaced", async () => {
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    const { tools } = await client.listTools();
    try {
      const err = await callErr(client, "add_memory", { user_id: "a\ud800b", text: "hello", wait: false });
      expect(err).toMatch(/invalid_request/);
      expect(err).toMatch(/user_id/);
      expect(err).toMatch(/surrogate/i);
      const long = await callErr(client, "add_memory", { user_id: "u".repeat(300), text: "hi", wait: false });
      expect(long).toMatch(/user_id/);
      const ok = await callOk(client, tools, "add_memory", {
        user_id: "u",
        text: "tea \ud800 time",
        wait: false,
      });
      const { rows } = await svc.deps.db.query("SELECT request FROM ingest_jobs WHERE id = $1", [
        ok.structured.id,
      ]);
      expect(rows[0].request.messages[0].content).toBe("tea \ufffd time");
    } finally {
      await client.close();
    }
  });

  it("MCP: every tool called with junk arguments answers a tool error or an invalid-params error, never an internal one", async () => {
    const groupId = await seedGroup(svc.deps, orgId, { name: "mcp-junk" });
    const [m] = await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "seed", user_id: "u" },
    ]);
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(10);
      // Real ids and plausible values beside the junk, so calls also get past validation.
      const value = fc.oneof(
        weird,
        fc.constantFrom<unknown>(m!.id, groupId, "u", "tea", ["npm"], { user_id: "u" }),
      );
      const answered = new Map<string, number>();
      for (const tool of tools) {
        const props = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});
        const args = fc.dictionary(fc.constantFrom(...props, "zz_unknown"), value, {
          maxKeys: props.length + 1,
        });
        await fc.assert(
          fc.asyncProperty(args, async (a) => {
            const where = `${tool.name} ${JSON.stringify(a).slice(0, 300)}`;
            let res: CallToolResult;
            try {
              res = (await client.callTool({ name: tool.name, arguments: a })) as CallToolResult;
            } catch (err) {
              expect(String(err), where).toMatch(/-32602/);
              return;
            }
            const text = res.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
            expect(text, where).not.toMatch(/server_error|Internal error/);
            if (!res.isError) answered.set(tool.name, (answered.get(tool.name) ?? 0) + 1);
          }),
          { numRuns: 40 },
        );
      }
      // The junk reached the handlers, not only the schema check: some calls succeeded.
      expect(answered.size, JSON.stringify([...answered])).toBeGreaterThan(3);
    } finally {
      await client.close();
    }
  });
});
