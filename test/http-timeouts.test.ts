import type { Server } from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpServerOptions } from "../rest/serve.js";
import { loadConfig } from "../src/config.js";
import { startHttpServer } from "../src/http-server.js";
import { silentLogger } from "../src/logger.js";
import { startTestService, type TestService } from "./helpers/harness.js";

/**
 * Over real HTTP: a client that stops sending (a body shorter than its Content-Length, headers
 * that never end) gets 408 in the error envelope after the configured time, while a handler that
 * is merely slow to answer (ingest with wait=true) is not cut off.
 */
let svc: TestService;
let server: Server;
let port: number;
let key: string;

beforeAll(async () => {
  svc = await startTestService({
    env: {
      MNEMO_HTTP_HEADERS_TIMEOUT_MS: "400",
      MNEMO_HTTP_REQUEST_TIMEOUT_MS: "800",
      MNEMO_TEST_EXTRACT_DELAY_MS: "2000",
    },
  });
  key = (await svc.newOrg("timeouts")).key;
  const config = { ...svc.deps.config, PORT: 0, HOST: "127.0.0.1" };
  ({ server } = await startHttpServer(svc.app, config, silentLogger()));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await svc?.stop();
});

/** Writes raw bytes and collects everything until the server closes the connection. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => s.write(bytes));
    let buf = "";
    s.on("data", (d) => {
      buf += d;
    });
    s.on("error", reject);
    s.on("close", () => resolve(buf));
  });
}

function parse(response: string) {
  const [head = "", body = ""] = response.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), head, body: body ? JSON.parse(body) : undefined };
}

describe("request time-outs", () => {
  it("keeps an idle connection open past Node's 5 s, as its Keep-Alive header says, and closes it after the setting", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.headers.get("keep-alive")).toBe("timeout=65");
    await res.text();
    // A short setting on a server of its own: the idle connection is closed once it passes.
    const config = { ...svc.deps.config, PORT: 0, HOST: "127.0.0.1", MNEMO_HTTP_KEEP_ALIVE_TIMEOUT_MS: 1000 };
    const short = (await startHttpServer(svc.app, config, silentLogger())).server;
    try {
      const p = (short.address() as net.AddressInfo).port;
      const started = Date.now();
      const s = net.connect(p, "127.0.0.1", () => s.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
      let head = "";
      s.on("data", (d) => {
        head += d;
      });
      await new Promise((r) => s.on("close", r));
      expect(head).toMatch(/^HTTP\/1\.1 200[\s\S]*Keep-Alive: timeout=1\r\n/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      short.closeAllConnections();
      await new Promise((r) => short.close(r));
    }
  });

  it("defaults answer a stalled client within 30 s, and can be configured", () => {
    const defaults = httpServerOptions(loadConfig({}));
    expect(defaults.requestTimeout + defaults.connectionsCheckingInterval).toBeLessThanOrEqual(30_000);
    expect(defaults.headersTimeout).toBeLessThanOrEqual(defaults.requestTimeout);
    const set = httpServerOptions(
      loadConfig({ MNEMO_HTTP_HEADERS_TIMEOUT_MS: "5000", MNEMO_HTTP_REQUEST_TIMEOUT_MS: "7000" }),
    );
    expect(set).toMatchObject({ headersTimeout: 5000, requestTimeout: 7000 });
  });

  it("a body shorter than its Content-Length is 408 request_timeout in the envelope", async () => {
    const body = '{"user_id":"u","conv_id":"c","messages":[';
    const res = parse(
      await raw(
        `POST /v1/memories HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length + 500}\r\n\r\n${body}`,
      ),
    );
    expect(res.status).toBe(408);
    expect(res.head).toMatch(/connection: close/i);
    expect(res.body.detail).toEqual({ code: "request_timeout", message: expect.any(String) });
    expect(res.body).toEqual({
      detail: { code: "request_timeout", message: expect.any(String) },
      error: {
        type: "invalid_request_error",
        code: "request_timeout",
        message: res.body.detail.message,
        request_id: expect.any(String),
      },
    });
    // Nothing was accepted.
    const { rows } = await svc.deps.db.query("SELECT count(*)::int AS n FROM ingest_jobs");
    expect(rows[0].n).toBe(0);
  });

  it("headers that never end are 408 as well, on every kind of route", async () => {
    for (const path of ["/v1/memories/search", "/v1/groups", "/healthz"]) {
      const res = parse(await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n`));
      expect(res.status, path).toBe(408);
      expect(res.body.detail.code).toBe("request_timeout");
    }
  });

  it("a slow answer is not a time-out: wait=true outlasts the request time-out", async () => {
    const r = await fetch(`http://127.0.0.1:${port}/v1/memories?wait=true`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        user_id: "u",
        conv_id: "c",
        messages: [{ role: "user", content: "I like tea." }],
      }),
    });
    expect(r.status).toBe(200);
    expect((await r.json()).status).toBe("succeeded");
  });

  it("unparsable HTTP is 400 in the envelope", async () => {
    const res = parse(await raw("GARBAGE\r\n\r\n"));
    expect(res.status).toBe(400);
    expect(res.body.detail.code).toBe("invalid_request");
  });

  it("requests the HTTP adapter cannot serve are 400 in the envelope too, and a stray Expect is 417", async () => {
    // Each of these got an empty 400 (or 417) from the adapter or from Node, before the app ran.
    for (const request of [
      "GET /v1/memories HTTP/1.1\r\nHost: x:abc\r\n\r\n", // a host name the adapter refuses
      "GET /v1/memories\\x HTTP/1.1\r\nHost: x\r\n\r\n", // a backslash in the path
      "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", // a request target that is not a path
      "GET /healthz HTTP/1.1\r\n\r\n", // HTTP/1.1 without Host
    ]) {
      const res = parse(await raw(request));
      expect(res.status, request).toBe(400);
      expect(res.body, request).toEqual({
        detail: {
          code: "invalid_request",
          message: expect.stringMatching(/^The request cannot be served: /),
        },
        error: {
          type: "invalid_request_error",
          code: "invalid_request",
          message: expect.any(String),
          request_id: expect.any(String),
        },
      });
      expect(res.head.toLowerCase(), request).toContain(`x-request-id: ${res.body.error.request_id}`);
    }
    // HTTP/1.0 has no Host header: served as before.
    expect(parse(await raw("GET /healthz HTTP/1.0\r\n\r\n")).status).toBe(200);
    const expectation = parse(
      await raw(
        `POST /v1/memories HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nExpect: fancy\r\ncontent-length: 2\r\n\r\n{}`,
      ),
    );
    expect(expectation.status).toBe(417);
    expect(expectation.body.detail).toEqual({ code: "expectation_failed", message: expect.any(String) });
    expect(expectation.body.error.type).toBe("invalid_request_error");
  });
});
