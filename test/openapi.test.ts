import { Validator } from "@seriousme/openapi-schema-validator";
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
      for (const status of ["401", "422", "429", "500"]) {
        expect(op.responses[status], `${method} ${path} declares ${status}`).toBeDefined();
      }
      expect(JSON.stringify(op.responses["401"])).toContain("#/components/schemas/Error");
    }
  });

  it("serves a browsable reference at /docs", async () => {
    const r = await svc.request("GET", "/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/text\/html/);
    expect(r.text).toContain("/openapi.json");
  });
});
