import { gzipSync } from "node:zlib";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { writeMemories } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
let key: string;
beforeAll(async () => {
  svc = await startTestService({ workers: false, env: { MNEMO_MAX_BODY_BYTES: "2048" } });
  ({ key } = await svc.newOrg());
});
afterAll(async () => {
  await svc?.stop();
});

const TYPE_OF: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  405: "invalid_request_error",
  413: "invalid_request_error",
  415: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
};

const expectEnvelope = (r: { status: number; body: any; headers: Headers }, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.body.detail).toEqual({ code, message: expect.any(String) });
  // The hosted envelope beside it: same code and message, the request id of the answer.
  expect(r.body).toEqual({
    detail: { code, message: expect.any(String) },
    error: {
      type: TYPE_OF[status],
      code,
      message: r.body.detail.message,
      request_id: r.headers.get("x-request-id"),
    },
  });
};

describe("HTTP error envelopes", () => {
  it("unknown route is 404 not_found", async () => {
    expectEnvelope(await svc.request("GET", "/v1/nowhere", { key }), 404, "not_found");
    expectEnvelope(await svc.request("GET", "/nowhere"), 404, "not_found");
  });

  it("wrong method is 405 method_not_allowed with Allow", async () => {
    const r = await svc.request("PUT", "/healthz");
    expectEnvelope(r, 405, "method_not_allowed");
    expect(r.headers.get("allow")).toContain("GET");
    const g = await svc.request("PUT", "/v1/groups", { key, body: {} });
    expectEnvelope(g, 405, "method_not_allowed");
  });

  it("a trailing slash outside the memories variant family is 404 not_found, not 405", async () => {
    const paths: Array<[string, string]> = [
      ["GET", "/v1/groups/"],
      ["DELETE", "/v1/groups/grp_x/"],
      ["GET", "/v1/memories/jobs/job_x/"],
      ["GET", "/v1/memories/x/revisions/"],
      ["GET", "/v1/usage/"],
      ["PUT", "/v1/webhooks/"],
      ["POST", "/v1/memories/trigger/"],
      ["GET", "/v1/memories/jobs/"],
      ["GET", "/healthz/"],
    ];
    for (const [method, path] of paths) {
      const r = await svc.request(method, path, { key, ...(method === "GET" ? {} : { body: {} }) });
      expectEnvelope(r, 404, "not_found");
      expect(r.headers.get("allow"), `${method} ${path}`).toBeNull();
    }
    // The variant family keeps its slash routes.
    expect((await svc.request("GET", "/v1/memories/", { key })).status).toBe(200);
  });

  it("reserved path words are routes, never memory ids: a wrong method is 405 with the route's Allow", async () => {
    const cases: Array<[string, string, string]> = [
      ["GET", "/v1/memories/search", "POST"],
      ["GET", "/v1/memories/trigger", "POST"],
      ["DELETE", "/v1/memories/jobs", "GET"],
      ["POST", "/v1/memories/jobs", "GET"],
      ["GET", "/v1/memories/search/", "POST"],
      ["DELETE", "/v1/memories/add/", "POST"],
      ["PUT", "/v1/memories/00000000-0000-0000-0000-000000000000", "GET, PATCH, DELETE"],
    ];
    for (const [method, path, allow] of cases) {
      const r = await svc.request(method, path, { key, ...(method === "POST" ? { body: {} } : {}) });
      expectEnvelope(r, 405, "method_not_allowed");
      expect(r.headers.get("allow"), `${method} ${path}`).toBe(allow);
    }
    expectEnvelope(await svc.request("GET", "/v1/memories/add", { key }), 404, "not_found");
    // A memory id is still a memory id, and HEAD reads like GET.
    const missing = await svc.request("GET", "/v1/memories/00000000-0000-0000-0000-000000000000", { key });
    expectEnvelope(missing, 404, "memory_not_found");
    expect((await svc.request("HEAD", "/v1/groups", { key })).status).toBe(200);
  });

  it("malformed JSON is 400 invalid_json", async () => {
    expectEnvelope(await svc.request("POST", "/v1/groups", { key, body: '{"name": ' }), 400, "invalid_json");
  });

  it("a body that is not JSON is 415", async () => {
    const r = await svc.request("POST", "/v1/groups", {
      key,
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectEnvelope(r, 415, "unsupported_media_type");
    const plain = await svc.request("POST", "/v1/groups", {
      key,
      body: "hello",
      headers: { "content-type": "text/plain" },
    });
    expectEnvelope(plain, 415, "unsupported_media_type");
    // A content coding is not decoded: 415 naming it, not 400 "not valid JSON".
    const gz = gzipSync(JSON.stringify({ name: "gz" }));
    const res = await svc.app.request("/v1/groups", {
      method: "POST",
      headers: {
        "x-api-key": key,
        "content-type": "application/json",
        "content-encoding": "gzip",
        "content-length": String(gz.byteLength),
      },
      body: gz,
    });
    const gzipped = { status: res.status, headers: res.headers, body: (await res.json()) as any };
    expectEnvelope(gzipped, 415, "unsupported_media_type");
    expect(gzipped.body.detail.message).toContain("Content-Encoding");
  });

  it("JSON bodies are UTF-8: another charset is 415, bytes that are not UTF-8 are 400 invalid_json", async () => {
    const send = async (path: string, body: Buffer, type = "application/json") => {
      const res = await svc.app.request(path, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": type, "content-length": String(body.byteLength) },
        body: new Uint8Array(body),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    };
    // "rené" as Latin-1 bytes: decoded leniently, it was stored as "ren\uFFFD".
    const latin1 = Buffer.from('{"name":"ren\xe9_latin1"}', "latin1");
    const declared = await send("/v1/groups", latin1, "application/json; charset=iso-8859-1");
    expectEnvelope(declared, 415, "unsupported_media_type");
    expect(declared.body.detail.message).toContain("utf-8");
    expectEnvelope(await send("/v1/groups", latin1), 400, "invalid_json");
    expectEnvelope(await send("/v1/groups", latin1, "application/json; charset=utf-8"), 400, "invalid_json");
    // Inside filters, and on the ingest and variant routes alike.
    const filters = Buffer.from('{"filters":{"user_id":"ren\xe9"}}', "latin1");
    expectEnvelope(await send("/v1/memories/", filters), 400, "invalid_json");
    const ingest = Buffer.from(
      '{"messages":[{"role":"user","content":"I like caf\xe9."}],"user_id":"ren\xe9","conv_id":"c1"}',
      "latin1",
    );
    expectEnvelope(await send("/v1/memories", ingest), 400, "invalid_json");
    expectEnvelope(await send("/v1/memories/add/", ingest), 400, "invalid_json");
    // UTF-8, declared in any spelling or not at all, is read as before.
    const types = ["application/json", 'application/json; charset="UTF-8"', "application/json;charset=utf8"];
    for (const [i, type] of types.entries()) {
      const r = await send(
        "/v1/groups",
        Buffer.from(JSON.stringify({ name: `ren\u00e9 ${i}` }), "utf8"),
        type,
      );
      expect(r.status, type).toBe(201);
      expect(r.body.name).toBe(`ren\u00e9 ${i}`);
    }
  });

  it("an oversized body is 413 payload_too_large", async () => {
    const r = await svc.request("POST", "/v1/groups", { key, body: { name: "x".repeat(5000) } });
    expectEnvelope(r, 413, "payload_too_large");
  });

  it("NUL characters in the URL are 422 invalid_request", async () => {
    expectEnvelope(await svc.request("GET", "/v1/memories?user_id=a%00b", { key }), 422, "invalid_request");
    expectEnvelope(await svc.request("GET", "/v1/groups/grp_%00", { key }), 422, "invalid_request");
  });

  it("a query parameter a route does not know is 422 invalid_request naming it, never dropped", async () => {
    for (const [method, path, name] of [
      ["GET", "/v1/groups?limit=5", "limit"],
      ["GET", "/v1/groups?include_archived=true&cursor=x", "cursor"],
      ["GET", "/v1/memories/jobs?userId=a", "userId"],
      ["GET", "/v1/webhooks/deliveries?foo=1", "foo"],
      ["GET", "/v1/webhooks?orgId=x", "orgId"],
      ["DELETE", "/v1/webhooks?org=x", "org"],
      ["GET", "/v1/usage?by_key=true", "by_key"],
    ] as const) {
      const r = await svc.request(method, path, { key });
      expect(r.status, path).toBe(422);
      expect(r.body.error.code, path).toBe("invalid_request");
      expect(r.body.error.message, path).toContain(`"${name}"`);
      expect(r.body.detail[0].loc, path).toEqual(["query"]);
    }
    // Ingest reads `wait`: misspelt, the client took a pending job for the answer of a wait.
    const body = { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "I like rye bread." }] };
    for (const name of ["wiat", "Wait"]) {
      const r = await svc.request("POST", `/v1/memories?${name}=true`, { key, body });
      expect(r.status, name).toBe(422);
      expect(r.body.error.code, name).toBe("invalid_request");
      expect(r.body.error.message, name).toContain(`"${name}"`);
    }
    expect((await svc.request("POST", "/v1/memories?wait=false", { key, body })).status).toBe(202);
    expect((await svc.request("GET", "/v1/groups?include_archived=true", { key })).status).toBe(200);
    expect((await svc.request("GET", "/v1/memories/jobs?limit=5", { key })).status).toBe(200);
    expect((await svc.request("GET", "/v1/usage?daily=true", { key })).status).toBe(200);
  });

  it("percent-escapes that do not decode to UTF-8 are 422 invalid_request, never read as a literal id", async () => {
    const { orgId, key: own } = await svc.newOrg();
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [{ type: "fact", text: "tea", user_id: "%C3" }]);
    for (const [method, url] of [
      ["GET", "/v1/memories?user_id=%C3"],
      ["DELETE", "/v1/memories?user_id=%C3"],
      ["GET", "/v1/memories/?user_id=%C3%28"],
      ["GET", "/v1/memories/%FF"],
    ] as const) {
      expectEnvelope(await svc.request(method, url, { key: own }), 422, "invalid_request");
    }
    // The literal "%C3" user (sent as %25C3) keeps its memory; valid escapes and a bare % read as before.
    const listed = await svc.request("GET", "/v1/memories?user_id=%25C3", { key: own });
    expect(listed.body.data.map((m: { text: string }) => m.text)).toEqual(["tea"]);
    expect((await svc.request("GET", "/v1/memories?user_id=caf%C3%A9", { key: own })).status).toBe(200);
    expect((await svc.request("GET", "/v1/memories?user_id=100%", { key: own })).status).toBe(200);
  });

  it("field validation is 422 with loc, msg and type", async () => {
    const r = await svc.request("POST", "/v1/groups", { key, body: {} });
    expect(r.status).toBe(422);
    expect(r.body.detail).toContainEqual({ loc: ["body", "name"], msg: "Field required", type: "missing" });
    expect(r.body.error).toMatchObject({
      type: "invalid_request_error",
      code: "invalid_request",
      request_id: r.headers.get("x-request-id"),
      details: { issues: r.body.detail },
    });
    expect(r.body.error.message).toContain("body.name");
  });

  it("401, 403 and 429 carry their hosted error types", async () => {
    expectEnvelope(await svc.request("GET", "/v1/groups"), 401, "unauthorized");
    expectEnvelope(await svc.request("GET", "/v1/groups", { key: "mk_nope" }), 401, "unauthorized");
    expectEnvelope(
      await svc.request("GET", "/v1/groups", { key, headers: { "x-org-id": "org_someone_else" } }),
      403,
      "org_mismatch",
    );
  });

  it("echoes a sent X-Request-Id and mints one otherwise", async () => {
    const sent = await svc.request("GET", "/healthz", { headers: { "x-request-id": "req-abc.123" } });
    expect(sent.headers.get("x-request-id")).toBe("req-abc.123");
    const minted = await svc.request("GET", "/healthz");
    expect(minted.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const error = await svc.request("GET", "/v1/nowhere");
    expect(error.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("internal errors", () => {
  it("are 500 server_error naming only the request id", async () => {
    const broken = await startTestService({ workers: false });
    const org = await broken.newOrg();
    // Break the schema under the running app: the table of groups is gone. (A pool ended under it
    // reads as the database away: 503.)
    await broken.deps.db.query("ALTER TABLE groups RENAME TO groups_gone");
    const r = await broken.app.request("/v1/groups", {
      headers: { "x-api-key": org.key, "x-request-id": "boom-1" },
    });
    const body = (await r.json()) as any;
    expect(r.status).toBe(500);
    expect(body.detail.code).toBe("server_error");
    expect(body.detail.message).toContain("boom-1");
    expect(body.detail.message).not.toMatch(/pool|sql|pg|Cannot/i);
    expect(body.error).toEqual({
      type: "api_error",
      code: "server_error",
      message: body.detail.message,
      request_id: "boom-1",
    });
    await broken.runtime.boss.stop({ graceful: false }).catch(() => {});
    await broken.deps.db.pool.end();
    // Stopping still lets go of the database the service owned, though its pool was ended: the
    // embedded server stops (or the server's test database is dropped), so nothing answers there.
    await broken.stop();
    const client = new pg.Client({
      connectionString: broken.connectionString,
      connectionTimeoutMillis: 5000,
    });
    client.on("error", () => {});
    await expect(client.connect()).rejects.toThrow();
  });
});
