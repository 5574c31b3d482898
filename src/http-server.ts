import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import {
  clientErrorHandler,
  expectationHandler,
  httpServerOptions,
  requestErrorResponse,
} from "../rest/serve.js";
import type { App } from "../rest/types.js";
import type { Config } from "./config.js";
import { StartupError } from "./db/open.js";
import type { Logger } from "./logger.js";

export interface HttpServer {
  url: string;
  server: Server;
  /**
   * Stops serving: the listening socket closes and idle kept-alive connections are closed at once
   * (as `server.close()` does; keeping them open to answer 503 would hold the stop open for
   * clients that send nothing). A request that still arrives (as the stop begins, or on a busy
   * connection) is answered 503 with `Connection: close`; requests in flight finish (their
   * responses also close the connection) until `deadline` (epoch ms), after which the remaining
   * connections are cut. Resolves when no connection is left. Idempotent.
   */
  drain(deadline: number): Promise<void>;
}

/**
 * Binds `server` to `host`:`port`. A port another process holds, one below 1024 without the
 * privilege, or a HOST that is not this machine's is a StartupError naming the address and the
 * setting that chose the port (`setting`), not an unhandled 'error' event.
 */
export function listenOn(server: Server, port: number, host: string, setting: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const why =
        err.code === "EADDRINUSE"
          ? `the address is already in use: stop what listens there or set ${setting} to a free port`
          : err.code === "EACCES"
            ? `permission denied (ports below 1024 need privileges): set ${setting} to 1024 or above`
            : err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND"
              ? "HOST is not an address of this machine"
              : err.message;
      reject(new StartupError(`cannot listen on ${where} (${setting}): ${why}`));
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

const SHUTTING_DOWN = JSON.stringify({
  detail: { code: "service_unavailable", message: "The server is shutting down; retry shortly." },
});

/**
 * Serves the app over HTTP with the request time-outs and client-error answers of rest/serve.ts
 * and a graceful drain (see HttpServer.drain).
 */
export async function startHttpServer(app: App, config: Config, log: Logger): Promise<HttpServer> {
  let draining = false;
  const fetch = async (req: Request, env: unknown): Promise<Response> => {
    if (draining) {
      return new Response(SHUTTING_DOWN, {
        status: 503,
        headers: { "content-type": "application/json", connection: "close", "retry-after": "1" },
      });
    }
    const res = await app.fetch(req, env as never);
    if (!draining) return res;
    // Finished while stopping: the client must not reuse this connection.
    const headers = new Headers(res.headers);
    headers.set("connection", "close");
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  };
  // The adapter's listener with an answer of ours for a request it cannot turn into a Request (a
  // host name it refuses, a backslash in the path, "OPTIONS *"): it answered an empty 400 before
  // the app ran. An HTTP/1.1 request without a Host header is refused here too, in the envelope
  // (Node's own check answers an empty 400); HTTP/1.0, which has no Host, is served as before.
  const refuse = requestErrorResponse(log);
  const listener = getRequestListener(
    (req: Request, env: { incoming: { httpVersion: string; headers: { host?: string | undefined } } }) =>
      env.incoming.httpVersion === "1.1" && !env.incoming.headers.host
        ? refuse(new Error("no Host header (HTTP/1.1)"))
        : fetch(req, env),
    { hostname: config.HOST, errorHandler: refuse },
  );
  const server = createServer({ ...httpServerOptions(config), requireHostHeader: false }, listener);
  await listenOn(server, config.PORT, config.HOST, "PORT");
  server.on("clientError", clientErrorHandler(log));
  server.on("checkExpectation", expectationHandler(log));
  let active = 0;
  let onIdle: (() => void) | undefined;
  server.on("request", (_req, res) => {
    active++;
    res.once("close", () => {
      active--;
      if (active === 0) onIdle?.();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;

  let drained: Promise<void> | undefined;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    drain(deadline) {
      drained ??= (async () => {
        draining = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        if (active > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
            onIdle = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        // Keep-alive connections between requests, and whatever is still running past the
        // deadline.
        server.closeAllConnections();
        await closed;
      })();
      return drained;
    },
  };
}
