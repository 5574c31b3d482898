import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
let doc: any;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
  doc = (await svc.request("GET", "/openapi.json")).body;
});
afterAll(async () => {
  await svc?.stop();
});

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

describe("OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document, version 1.0.0", async () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0.0");
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("declares the error envelopes on every /v1 operation", () => {
    const v1 = operations().filter((o) => o.path.startsWith("/v1/"));
    expect(v1.length).toBeGreaterThan(0);
    for (const { path, method, op } of v1) {
      for (const status of ["401", "422", "429", "500", "503"]) {
        expect(op.responses[status], `${method} ${path} declares ${status}`).toBeDefined();
      }
      expect(JSON.stringify(op.responses["401"])).toContain("#/components/schemas/Error");
    }
  });

  it("documents the hosted error object once and references it from both error envelopes", () => {
    const schemas = doc.components.schemas;
    expect(schemas.ErrorObject.properties.type.enum).toEqual([
      "invalid_request_error",
      "authentication_error",
      "permission_error",
      "not_found_error",
      "conflict_error",
      "rate_limit_error",
      "api_error",
    ]);
    expect(schemas.ErrorObject.required).toEqual(
      expect.arrayContaining(["type", "code", "message", "request_id"]),
    );
    expect(schemas.Error.properties.error.$ref).toBe("#/components/schemas/ErrorObject");
    expect(schemas.Error.properties.detail.properties.field).toBeDefined();
    expect(JSON.stringify(schemas.ValidationError.properties.error)).toContain(
      "#/components/schemas/ErrorObject",
    );
    // Every /v1 operation's 422 allows both forms and names its field codes.
    for (const { path, method, op } of operations().filter((o) => o.path.startsWith("/v1/"))) {
      const r422 = JSON.stringify(op.responses["422"]);
      expect(r422, `${method} ${path}`).toContain("#/components/schemas/Error");
      expect(r422, `${method} ${path}`).toContain("#/components/schemas/ValidationError");
    }
    const list = doc.paths["/v1/memories"].get.responses["422"].description;
    for (const code of ["invalid_limit", "invalid_order", "unsupported_include_option", "cursor_mismatch"]) {
      expect(list).toContain(code);
    }
    expect(doc.paths["/v1/memories/{memory_id}"].patch.responses["422"].description).toContain(
      "immutable_field",
    );
    expect(doc.paths["/v1/memories"].post.responses["422"].description).toContain("missing_user_id");
    expect(doc.paths["/v1/memories/search"].post.responses["422"].description).toContain("empty_query");
  });

  it("declares, on each route, the 400 and 422 codes that route answers", async () => {
    const { key } = await svc.newOrg("declared-codes");
    const scope = { user_id: "u1" };
    const turn = [{ role: "user", content: "I went hiking on Saturday." }];
    // [method, path, body, the code the server answers]: each answer's code must be named in the
    // description of its status on that operation.
    const cases: [string, string, unknown, string][] = [
      ["POST", "/v1/memories", "{bad", "invalid_json"],
      ["POST", "/v1/memories", { user_id: "u1", conv_id: "c1", messages: [] }, "invalid_messages"],
      ["GET", "/v1/memories/jobs?limit=0", undefined, "invalid_limit"],
      ["GET", "/v1/memories/jobs?cursor=abc", undefined, "cursor_mismatch"],
      ["POST", "/v1/memories/add/", "{bad", "invalid_json"],
      ["POST", "/v1/memories/add/", { user_id: "u1", messages: turn }, "missing_conv_id"],
      ["POST", "/v1/memories/add/", { conv_id: "c1", messages: turn }, "missing_user_id"],
      ["POST", "/v1/memories/search/", { query: "x", filters: scope, cursor: "abc" }, "cursor_mismatch"],
      [
        "POST",
        "/v1/memories/search/",
        { query: "x", filters: scope, include: ["bogus"] },
        "unsupported_include_option",
      ],
      ["POST", "/v1/memories/search/", { query: "", filters: scope }, "empty_query"],
      ["POST", "/v1/memories/search/", { query: "x", filters: scope, limit: 0 }, "invalid_limit"],
      ["POST", "/v1/memories/", { limit: 0 }, "invalid_limit"],
      ["POST", "/v1/memories/", { include: ["bogus"] }, "unsupported_include_option"],
      ["GET", "/v1/memories/?limit=0", undefined, "invalid_limit"],
      ["GET", "/v1/memories/?type=bogus", undefined, "invalid_memory_type"],
      ["GET", "/v1/memories/?cursor=abc", undefined, "cursor_mismatch"],
    ];
    for (const [method, url, body, code] of cases) {
      const r = await svc.request(method, url, { key, ...(body === undefined ? {} : { body }) });
      expect(r.body?.error?.code, `${method} ${url}`).toBe(code);
      const path = url.split("?")[0]!;
      const declared = doc.paths[path][method.toLowerCase()].responses[String(r.status)]?.description;
      expect(declared, `${method} ${path} declares ${r.status} ${code}`).toContain(`\`${code}\``);
    }
  });

  it("says a 503 may come from a model the request waits on (a patched fact's new text to embed)", () => {
    expect(doc.paths["/v1/memories/{memory_id}/"].patch.responses["503"].description).toMatch(
      /a model the request waits on failed/,
    );
  });

  it("publishes boolean query parameters as booleans", () => {
    const bools: string[] = [];
    for (const { path, method, op } of operations()) {
      for (const p of op.parameters ?? []) {
        if (["wait", "include_archived", "rotate_secret", "daily", "by_api_key"].includes(p.name)) {
          expect(p.schema.type, `${method} ${path} ${p.name}`).toBe("boolean");
          bools.push(p.name);
        }
        // No query parameter is a string enum of spelled booleans any more.
        expect(p.schema.enum ?? [], `${method} ${path} ${p.name}`).not.toContain("true");
      }
    }
    expect(new Set(bools)).toEqual(
      new Set(["wait", "include_archived", "rotate_secret", "daily", "by_api_key"]),
    );
  });

  it("types MemoryRef with every memory type, directives included, and documents the webhook events", () => {
    const types = ["fact", "artifact", "episode", "lesson", "procedure"];
    const schemas = doc.components.schemas;
    expect(schemas.MemoryRef.properties.type.$ref).toBe("#/components/schemas/MemoryType");
    expect(schemas.MemoryType.enum).toEqual(types);
    expect(schemas.MemoryType.description).toMatch(/lesson.*procedure/);
    const completed = schemas.MemoryLearningCompletedEvent;
    expect(completed.properties.memories.items.properties.type.$ref).toBe("#/components/schemas/MemoryType");
    expect(completed.properties.memories_updated.items.$ref).toBe("#/components/schemas/MemoryRef");
    expect(Object.keys(doc.webhooks)).toEqual(["memory.learning.completed", "memory.learning.failed"]);
  });

  it("declares a memory's details by type (the interface's 2.2), the schemas `admin import` checks a file's against", () => {
    const schemas = doc.components.schemas;
    expect(schemas.Memory.properties.details.anyOf.map((s: { $ref: string }) => s.$ref)).toEqual(
      ["FactDetails", "ArtifactDetails", "EpisodeDetails", "DirectiveDetails"].map(
        (name) => `#/components/schemas/${name}`,
      ),
    );
    expect(schemas.FactDetails.properties.fact_type.enum).toEqual([
      "preference",
      "attribute",
      "relationship",
      "event",
      "plan",
      "opinion",
      "skill",
      "other",
      null,
    ]);
    expect(schemas.FactDetails.properties.artifact_ids).toEqual({ type: "array", items: { type: "string" } });
    // Every field ingest writes is declared (a client generated from the document saw no date,
    // gist or source turns).
    for (const [schema, fields] of [
      ["FactDetails", ["date", "occurred_at", "source_event_ids", "episode_id"]],
      ["ArtifactDetails", ["source_event_ids", "episode_ids"]],
      ["EpisodeDetails", ["gist", "fact_ids"]],
      ["DirectiveDetails", ["episode_id", "source_event_ids"]],
    ] as const)
      for (const f of fields) expect(Object.keys(schemas[schema].properties), `${schema}.${f}`).toContain(f);
    expect(schemas.ArtifactDetails.properties.version).toEqual({ type: ["integer", "null"] });
    expect(schemas.EpisodeDetails.properties.fact_ids.type).toBe("array");
    expect(schemas.DirectiveDetails.properties.steps.type).toEqual(["array", "null"]);
    expect(schemas.DirectiveDetails.properties.observation_count.type).toEqual(["integer", "null"]);
  });

  it("describes what the server answers: live responses validate against their operation's schema", async () => {
    const { key } = await svc.newOrg("live-shapes");
    // The document's schemas, under its own root, so its `#/components/...` references resolve.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    let compiled = 0;
    const check = async (method: string, url: string, template: string, body?: unknown) => {
      const r = await svc.request(method, url, { key, ...(body === undefined ? {} : { body }) });
      const response = doc.paths[template]?.[method.toLowerCase()]?.responses?.[String(r.status)];
      expect(response, `${method} ${template} declares ${r.status}`).toBeDefined();
      const schema = response.content?.["application/json"]?.schema;
      expect(schema, `${method} ${template} ${r.status} has a JSON schema`).toBeDefined();
      const validate = ajv.compile({
        $id: `mnemo-${method}-${template}-${r.status}-${compiled++}`,
        ...schema,
        components: doc.components,
      });
      expect(validate(r.body) ? [] : validate.errors, `${method} ${url} ${r.status}`).toEqual([]);
      // The headers it carries are declared, and their references resolve.
      for (const name of [
        "X-Request-Id",
        "RateLimit-Limit",
        "RateLimit-Reset",
        "X-RateLimit-Remaining",
        "Retry-After",
        "WWW-Authenticate",
      ]) {
        if (r.headers.get(name) === null) continue;
        const declared = response.headers?.[name]?.$ref?.replace("#/components/headers/", "");
        expect(
          doc.components.headers?.[declared],
          `${method} ${template} ${r.status} declares ${name}`,
        ).toBeDefined();
      }
      return r;
    };
    // No workers here: the job stays pending, with neither result nor error (both null).
    const job = await check("POST", "/v1/memories", "/v1/memories", {
      user_id: "u1",
      conv_id: "c1",
      messages: [{ role: "user", content: "I moved to Lisbon last spring and I love it." }],
    });
    expect(job.status).toBe(202);
    expect(job.body.error).toBeNull();
    expect(job.body.result).toBeNull();
    await check("GET", `/v1/memories/jobs/${job.body.id}`, "/v1/memories/jobs/{job_id}");
    await check("GET", "/v1/memories/jobs", "/v1/memories/jobs");
    await check(
      "GET",
      "/v1/memories/jobs/job_0123456789abcdef0123456789abcdef",
      "/v1/memories/jobs/{job_id}",
    );
    await check("GET", "/v1/memories?user_id=u1", "/v1/memories");
    await check("GET", "/v1/memories?limit=0", "/v1/memories");
    await check("POST", "/v1/memories/search", "/v1/memories/search", { query: "Lisbon", user_id: "u1" });
    await check("POST", "/v1/groups", "/v1/groups", { name: "team" });
    await check("GET", "/v1/groups", "/v1/groups");
    await check("GET", "/v1/usage", "/v1/usage");
    // Counted operations declare their RateLimit headers (checked above when sent) and 429 its Retry-After.
    const searched = await check("POST", "/v1/memories/search", "/v1/memories/search", {
      query: "x",
      user_id: "u1",
    });
    expect(searched.headers.get("RateLimit-Limit")).not.toBeNull();
    expect(doc.paths["/v1/memories"].post.responses["429"].headers["Retry-After"]).toBeDefined();
    // A 401 names the scheme to authenticate with (RFC 9110), and the document says so.
    const refused = await svc.request("GET", "/v1/memories?user_id=u1", { key: "mnemo_not_a_key" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("WWW-Authenticate")).toBe('Bearer realm="mnemo"');
    expect(doc.paths["/v1/memories"].get.responses["401"].headers["WWW-Authenticate"]).toEqual({
      $ref: "#/components/headers/WWW-Authenticate",
    });
    // The spec's list envelope (2.6), next_cursor included.
    const keys = await check("GET", "/v1/auth/service-keys", "/v1/auth/service-keys");
    expect(keys.body).toMatchObject({ object: "list", has_more: false, next_cursor: null });
  });

  it("serves a browsable reference at /docs", async () => {
    const r = await svc.request("GET", "/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/text\/html/);
    expect(r.text).toContain("/openapi.json");
  });
});
