import net from "node:net";
import pg from "pg";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { CoreError, isDatabaseUnavailable } from "../src/errors.js";
import { ProviderError } from "../src/providers/openai.js";
import { startTestService, waitFor } from "./helpers/harness.js";

/**
 * Which failures read as the database being away (503 service_unavailable with Retry-After over
 * REST, the same code over MCP, an interrupted rather than failed ingest attempt) and which stay
 * errors of the request. The socket errors are Node's own, of the shape the server logged: a
 * `bench:soak` run that stopped PostgreSQL in immediate mode answered a search and a usage request
 * 500 on `connect ECONNRESET 127.0.0.1:54329` (errno -104, syscall connect), which only a refused
 * connect counted as the database being away.
 */
const socketError = (syscall: string, code: string) =>
  Object.assign(new Error(`${syscall} ${code} 127.0.0.1:54329`), {
    code,
    syscall,
    address: "127.0.0.1",
    port: 54329,
  });

describe("isDatabaseUnavailable", () => {
  it("counts every way a connection to the database fails as it is made", () => {
    for (const code of ["ECONNREFUSED", "ENOENT", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"])
      expect(isDatabaseUnavailable(socketError("connect", code)), code).toBe(true);
  });

  it("counts a connection broken under a query", () => {
    for (const [syscall, code] of [
      ["read", "ECONNRESET"],
      ["write", "EPIPE"],
      ["read", "ETIMEDOUT"],
    ] as const)
      expect(isDatabaseUnavailable(socketError(syscall, code)), `${syscall} ${code}`).toBe(true);
  });

  it("sees it through the core's wrapping (search_failed, delete_failed)", () => {
    const wrapped = new CoreError("search_failed", "Search failed.", {
      cause: socketError("connect", "ECONNRESET"),
    });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
  });

  it("leaves a language model's endpoint, a refused request and a statement's own error alone", () => {
    const model = new ProviderError("embedding failed", { cause: socketError("connect", "ECONNRESET") });
    expect(isDatabaseUnavailable(model)).toBe(false);
    const refused = new CoreError("memory_not_found", "No memory.", {
      cause: socketError("connect", "ECONNREFUSED"),
    });
    expect(isDatabaseUnavailable(refused)).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error("division by zero"), { code: "22012" }))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(socketError("getaddrinfo", "EAI_AGAIN"))).toBe(false);
  });

  it("reads a real refused connection the same way", async () => {
    // A port nothing listens on: Node's own error, not a hand-made one.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const err = await new Promise<Error>((resolve) => net.connect(port, "127.0.0.1").on("error", resolve));
    expect(err).toMatchObject({ code: "ECONNREFUSED", syscall: "connect" });
    expect(isDatabaseUnavailable(err)).toBe(true);
  });
});

describe("a stop that closes the database under a running ingest job", () => {
  it("reads a pool ended by the stop as the database away", async () => {
    const pool = new pg.Pool({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
    await pool.end();
    const err = await pool.query("SELECT 1").catch((e: unknown) => e);
    expect(String(err)).toContain("Cannot use a pool after calling end on the pool");
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it("ends the job's attempt as interrupted, logged at info: not a failure", async () => {
    // Three seconds between the store stage's committed chunks; the stop's 1 s time-out closes the
    // database while the job waits to write its next chunk. It logged "ingest job failed" at error
    // level ("Cannot use a pool after calling end on the pool") and counted a failure.
    const logged: string[] = [];
    const svc = await startTestService({
      env: { MNEMO_TEST_STORE_CHUNK_DELAY_MS: "3000", MNEMO_SHUTDOWN_TIMEOUT_MS: "1000" },
      log: pino({ level: "info" }, { write: (l: string) => logged.push(l) }),
    });
    let stopped = false;
    try {
      const { key } = await svc.newOrg();
      const messages = Array.from({ length: 200 }, (_, i) => ({
        role: "user",
        content: `I planted tree number ${i} in the orchard.`,
      }));
      const res = await svc.request("POST", "/v1/memories", {
        key,
        body: { user_id: "u1", conv_id: "c1", messages },
      });
      expect(res.status).toBe(202);
      // The first chunk is committed: the job is in the pause after it.
      await waitFor(async () => {
        const list = await svc.request("GET", "/v1/memories?user_id=u1&limit=1", { key });
        return (list.body as { data: unknown[] }).data.length > 0;
      });
      await svc.stop();
      stopped = true;
      const outcome = async (name: string) =>
        (await svc.deps.metrics.ingestJobs.get()).values.find((v) => v.labels.outcome === name)?.value ?? 0;
      await waitFor(async () => (await outcome("interrupted")) === 1, { timeoutMs: 30_000 });
      expect(await outcome("failed")).toBe(0);
      const lines = logged.map((l) => JSON.parse(l) as { level: number; msg: string });
      expect(lines.some((l) => l.level === 30 && l.msg.includes("ended by the shutdown"))).toBe(true);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      if (!stopped) await svc.stop();
    }
  }, 120_000);
});
