import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Config } from "../src/config.js";
import type { Logger } from "../src/logger.js";
import { errorBody } from "./errors.js";

/**
 * Node's own limits on how long a client may take to send a request. A body shorter than its
 * Content-Length (or headers that never end) would otherwise hold a connection and a handler for
 * Node's default of 300 s, checked every 30 s. Both only count until the request has arrived: a
 * handler that takes long to answer (ingest with `wait=true`) is not cut off.
 */
export function httpServerOptions(config: Config) {
  const headersTimeout = Math.min(config.MNEMO_HTTP_HEADERS_TIMEOUT_MS, config.MNEMO_HTTP_REQUEST_TIMEOUT_MS);
  const requestTimeout = config.MNEMO_HTTP_REQUEST_TIMEOUT_MS;
  return {
    headersTimeout,
    requestTimeout,
    // Idle kept-alive connections; a request's own limits above count only once it starts.
    keepAliveTimeout: config.MNEMO_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    // How often Node looks for expired requests: a fraction of the shortest limit, at most 1 s.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 4))),
  };
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  413: "Payload Too Large",
  431: "Request Header Fields Too Large",
};

/**
 * Answers what Node refuses before the app sees a request (a time-out, unparsable HTTP) in the
 * spec's error envelope instead of Node's bare status line, then closes the connection. Nothing is
 * written when a response has already started on the socket.
 */
export function clientErrorHandler(log: Logger) {
  return (err: Error & { code?: string }, socket: Socket) => {
    const inflight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === "ECONNRESET" || !socket.writable || inflight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, code, message] =
      err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "request_timeout", "The request (headers and body) did not arrive in time."]
        : err.code === "HPE_HEADER_OVERFLOW"
          ? [431, "invalid_request", "The request headers are too large."]
          : [400, "invalid_request", "The request is not valid HTTP."];
    const requestId = randomUUID();
    log.info({ requestId, status, code: err.code }, "client error");
    const body = JSON.stringify(errorBody(status, code, message, requestId));
    socket.end(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
        `X-Request-Id: ${requestId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  };
}

/**
 * A request the HTTP adapter cannot turn into a web Request (`@hono/node-server`'s RequestError: a
 * host name it refuses, a backslash in the path, a request target that is not a path such as
 * "OPTIONS *", no Host header) is 400 `invalid_request` in the envelope, not an empty 400.
 */
export function requestErrorResponse(log: Logger) {
  return (err: unknown): Response => {
    const requestId = randomUUID();
    const reason = err instanceof Error ? err.message : "unreadable request";
    log.info({ requestId, status: 400, reason }, "client error");
    const message = `The request cannot be served: ${reason.replace(/\.$/, "")}.`;
    return Response.json(errorBody(400, "invalid_request", message, requestId), {
      status: 400,
      headers: { "x-request-id": requestId, connection: "close" },
    });
  };
}

/**
 * An `Expect` header other than "100-continue": 417 in the envelope (Node's own answer is an empty
 * 417). Node calls this only for expectations it does not handle itself.
 */
export function expectationHandler(log: Logger) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const requestId = randomUUID();
    log.info({ requestId, status: 417, expect: req.headers.expect }, "client error");
    const body = JSON.stringify(
      errorBody(417, "expectation_failed", "Only the expectation '100-continue' is supported.", requestId),
    );
    res.writeHead(417, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "x-request-id": requestId,
      connection: "close",
    });
    res.end(body);
  };
}
