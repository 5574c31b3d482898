import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
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
  /**
   * The minute window is the clock's: a test counting within one starts clear of its end, or its
   * counts would meet a fresh window halfway (on a slow machine a test takes seconds).
   */
  const clearOfMinuteEnd = async () => {
    const second = new Date().getSeconds();
    if (second >= 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  };

  it("counts /mcp and the tools' calls against the key's limit, shared with REST", async () => {
    const { api_key: key } = await createOrg(svc.deps.db, { name: "tiny", tier: "tiny" });
    await clearOfMinuteEnd();
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

  it("counts each tool call of a JSON-RPC batch, so a batch cannot pass the limit", async () => {
    const { api_key: key } = await createOrg(svc.deps.db, { name: "tiny-batch", tier: "tiny" });
    const batch = (n: number, from: number) =>
      svc.app.request("/mcp", {
        method: "POST",
        headers: {
          "x-api-key": key,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(
          Array.from({ length: n }, (_, i) => ({
            jsonrpc: "2.0",
            id: from + i,
            method: "tools/call",
            params: { name: "list_groups", arguments: {} },
          })),
        ),
      });
    await clearOfMinuteEnd();
    const first = await batch(3, 1);
    expect(first.status).toBe(200);
    const answers = (await first.json()) as { result: { isError?: boolean } }[];
    expect(answers.map((a) => a.result.isError ?? false)).toEqual([false, false, false]);
    // Three calls in one POST are three requests (8 a minute: 5 left, then this one).
    const rest = await svc.request("GET", "/v1/groups", { key });
    expect(rest.headers.get("x-ratelimit-remaining")).toBe("4");

    // Ten more: the four left run, the other six are refused as over the limit.
    const second = await batch(10, 10);
    expect(second.status).toBe(200);
    const texts = ((await second.json()) as { result: CallToolResult }[]).map((a) => text(a.result));
    expect(texts.filter((t) => /^Error rate_limited/.test(t))).toHaveLength(6);
    expect((await svc.request("GET", "/v1/groups", { key })).status).toBe(429);
  });
});
