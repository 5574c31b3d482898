import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe("foundation", () => {
  it("serves health and readiness without a key", async () => {
    expect((await svc.request("GET", "/healthz")).body).toEqual({ status: "ok" });
    expect((await svc.request("GET", "/readyz")).body).toEqual({ status: "ready" });
  });

  it("refuses /v1 without a key", async () => {
    const r = await svc.request("GET", "/v1/groups");
    expect(r.status).toBe(401);
    expect(r.body.detail.code).toBe("unauthorized");
  });

  it("knows an organisation's key", async () => {
    const { key } = await svc.newOrg();
    const r = await svc.request("GET", "/v1/nope", { key });
    expect(r.status).toBe(404);
    expect(r.body.detail).toEqual({ code: "not_found", message: "No route for GET /v1/nope." });
    expect(r.body).toEqual({
      detail: { code: "not_found", message: "No route for GET /v1/nope." },
      error: {
        type: "not_found_error",
        code: "not_found",
        message: "No route for GET /v1/nope.",
        request_id: r.headers.get("x-request-id"),
      },
    });
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });
});
