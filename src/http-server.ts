import { createServer, type Server } from "node:http";
import { type AddressInfo, Server as NetServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
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
   * Stops serving: the listening socket closes at once (new connections are refused). Kept-alive
   * connections stay open for a short grace period (DRAIN_GRACE_MS, within `deadline`): a request
   * that arrives on one (the client's next request may already be on the wire when the stop
   * begins) is answered 503 with `Connection: close`, which closes that connection. Requests in
   * flight finish, their responses closing their connection too. After the grace period a
   * connection is closed only once it is idle (no request under way, no byte of a next one
   * received); at `deadline` (epoch ms) the remaining connections are cut. Resolves when no
   * connection is left. Idempotent.
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

/** How long a stopping server keeps answering 503 on kept-alive connections before it closes idle ones. */
const DRAIN_GRACE_MS = 1000;
const DRAIN_POLL_MS = 50;

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
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;

  let drained: Promise<void> | undefined;
  return {
    url: `http://${host}:${addr.port}`,
    server,
    drain(deadline) {
      drained ??= (async () => {
        draining = true;
        // net.Server's close, not http.Server's: that one also closes the idle connections at
        // once, cutting off a next request already on its way (it reaches a closed socket and is
        // reset, unanswered). Those requests are answered 503 during the grace period instead.
        let done = false;
        const closed = new Promise<void>((resolve) =>
          NetServer.prototype.close.call(server, () => {
            done = true;
            resolve();
          }),
        );
        const graceEnd = Math.min(deadline, Date.now() + DRAIN_GRACE_MS);
        while (!done && Date.now() < deadline) {
          // Idle per the parser: no request under way and no byte of a next one read. Busy
          // clients have sent their next request by now, so what is still idle is truly quiet.
          if (Date.now() >= graceEnd) server.closeIdleConnections();
          await Promise.race([closed, sleep(Math.min(DRAIN_POLL_MS, Math.max(0, deadline - Date.now())))]);
        }
        // Whatever is still running past the deadline.
        server.closeAllConnections();
        await closed;
      })();
      return drained;
    },
  };
}
