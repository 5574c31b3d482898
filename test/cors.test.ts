import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { startTestService, type TestService } from "./helpers/harness.js";

const ORIGIN = "https://app.example.com";
let svc: TestService;
let closed: TestService;
beforeAll(async () => {
  svc = await startTestService({
    workers: false,
    env: { MNEMO_CORS_ORIGINS: `${ORIGIN}, http://localhost:6274` },
  });
  closed = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
  await closed?.stop();
});

const preflight = (s: TestService, path: string, origin: string) =>
  s.request("OPTIONS", path, {
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type, x-api-key, mcp-protocol-version",
    },
  });

describe("MNEMO_CORS_ORIGINS", () => {
  it("answers a browser's preflight for /v1 and /mcp without a key, for the origins configured", async () => {
    for (const path of ["/v1/memories/search", "/mcp"]) {
      const res = await preflight(svc, path, ORIGIN);
      expect(res.status, path).toBe(204);
      expect(res.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
      const allowed = res.headers.get("access-control-allow-headers")?.toLowerCase() ?? "";
      for (const h of ["x-api-key", "content-type", "mcp-protocol-version", "x-mnemo-user-id"])
        expect(allowed, `${path} ${h}`).toContain(h);
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    }
    expect(
      (await preflight(svc, "/mcp", "http://localhost:6274")).headers.get("access-control-allow-origin"),
    ).toBe("http://localhost:6274");
  });

  it("marks answers to an allowed origin and exposes the headers a client reads; others get no grant", async () => {
    const { key } = await svc.newOrg();
    const ok = await svc.request("GET", "/v1/groups", { key, headers: { origin: ORIGIN } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const exposed = ok.headers.get("access-control-expose-headers")?.toLowerCase() ?? "";
    for (const h of ["x-request-id", "ratelimit-remaining", "retry-after"]) expect(exposed).toContain(h);
    // Still authenticated: a grant to the origin is no credential.
    expect((await svc.request("GET", "/v1/groups", { headers: { origin: ORIGIN } })).status).toBe(401);
    const other = await preflight(svc, "/v1/memories/search", "https://evil.example.net");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("refuses /mcp from a browser page elsewhere (DNS rebinding), not from this machine or an allowed origin", async () => {
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    };
    for (const s of [svc, closed]) {
      const { key } = await s.newOrg();
      const post = (headers: Record<string, string>) =>
        s.request("POST", "/mcp", {
          key,
          body: initialize,
          headers: { accept: "application/json, text/event-stream", ...headers },
        });
      const evil = await post({ origin: "http://evil.example" });
      expect(evil.status).toBe(403);
      // A JSON-RPC error, as every refusal on /mcp, with the spec's detail.
      expect(evil.body).toMatchObject({
        jsonrpc: "2.0",
        error: { code: -32000 },
        detail: { code: "forbidden" },
      });
      // Rebinding: the page's own name points at the server, Host and Origin alike.
      expect((await post({ origin: "http://evil.example:8080", host: "evil.example:8080" })).status).toBe(
        403,
      );
      expect((await post({})).status).toBe(200);
      // A page on this machine (an inspector) is no rebinding.
      expect((await post({ origin: "http://localhost:6274" })).status).toBe(200);
      expect((await post({ origin: "http://127.0.0.1:8080", host: "127.0.0.1:8080" })).status).toBe(200);
    }
    // An origin MNEMO_CORS_ORIGINS allows is allowed.
    const { key } = await svc.newOrg();
    const allowed = await svc.request("POST", "/mcp", {
      key,
      body: initialize,
      headers: { accept: "application/json, text/event-stream", origin: ORIGIN },
    });
    expect(allowed.status).toBe(200);
  });

  it("sends no CORS headers by default", async () => {
    const res = await preflight(closed, "/v1/memories/search", ORIGIN);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.status).toBe(401);
  });

  it("takes origins or *, and refuses anything else at start-up", () => {
    expect(loadConfig({ MNEMO_CORS_ORIGINS: "*" }).MNEMO_CORS_ORIGINS).toEqual(["*"]);
    expect(loadConfig({}).MNEMO_CORS_ORIGINS).toEqual([]);
    for (const bad of [
      "https://app.example.com/",
      "app.example.com",
      "ftp://x.org",
      "*, https://a.org",
      // An empty entry is refused, not dropped.
      "https://a.org,,https://b.org",
      "https://a.org,",
      ",https://a.org",
    ]) {
      expect(() => loadConfig({ MNEMO_CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ MNEMO_CORS_ORIGINS: bad }), bad).toThrow(/MNEMO_CORS_ORIGINS/);
    }
  });
});
