import net from "node:net";
import { describe, expect, it } from "vitest";
import { CoreError, isDatabaseUnavailable } from "../src/errors.js";
import { ProviderError } from "../src/providers/openai.js";

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
