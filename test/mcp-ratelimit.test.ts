import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg } from "../src/admin/orgs.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { httpClient, text } from "./helpers/mcp-client.js";

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    env: { MNEMO_RATE_TIERS: JSON.stringify({ tiny: { per_minute: 8, per_day: null } }) },
  });
});
afterAll(async () => {
  await svc?.stop();
});

describe("MCP and the REST rate limit", () => {
  it("counts /mcp and the tools' calls against the key's limit, shared with REST", async () => {
    const { api_key: key } = await createOrg(svc.deps.db, { name: "tiny", tier: "tiny" });
    const probe = await svc.app.request("/mcp", {
      method: "POST",
      headers: {
        "x-api-key": key,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(probe.status).toBe(200);
    expect(probe.headers.get("x-ratelimit-limit")).toBe("8");
    const before = Number(probe.headers.get("x-ratelimit-remaining"));

    // One tool call is one request against the limit (its inner REST call is not counted again).
    const call = await svc.app.request("/mcp", {
      method: "POST",
      headers: {
        "x-api-key": key,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_groups", arguments: {} },
      }),
    });
    expect(call.status).toBe(200);
    expect(JSON.stringify(await call.json())).toContain("groups");
    const next = await svc.request("GET", "/v1/groups", { key });
    expect(Number(next.headers.get("x-ratelimit-remaining"))).toBe(before - 2);

    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    let refusal = "";
    for (let i = 0; i < 10 && !refusal; i++) {
      try {
        const res = await client.callTool({ name: "list_groups", arguments: {} });
        if (res.isError) refusal = text(res as never);
      } catch (err) {
        refusal = String(err);
      }
    }
    expect(refusal).toMatch(/rate_limited/);
    const rest = await svc.request("GET", "/v1/groups", { key });
    expect(rest.status).toBe(429);
    await client.close().catch(() => {});
  });
});
