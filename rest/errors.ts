import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CoreError } from "../src/errors.js";
import type { AppEnv } from "./types.js";

/** The one place where core errors become HTTP responses. */
export function errorResponse(c: Context<AppEnv>, err: unknown): Response {
  if (err instanceof CoreError) {
    if (err.status >= 500) {
      c.get("log")?.error({ err: err.cause ?? err, code: err.code }, "request failed");
      return envelope(c, err.status, err.code, internalMessage(c), err.headers);
    }
    return envelope(c, err.status, err.code, err.message, err.headers);
  }
  if (err instanceof HTTPException) {
    // Hono raises these for bodies it cannot parse.
    if (err.status === 400) return envelope(c, 400, "invalid_json", "The request body is not valid JSON.");
    if (err.status === 413) return envelope(c, 413, "payload_too_large", "The request body is too large.");
    if (err.status === 415)
      return envelope(c, 415, "unsupported_media_type", "Send the body as application/json.");
    if (err.status < 500) return envelope(c, err.status, "invalid_request", err.message || "Bad request.");
  }
  c.get("log")?.error({ err }, "unhandled error");
  return envelope(c, 500, "server_error", internalMessage(c));
}

const internalMessage = (c: Context<AppEnv>) =>
  `Internal error. Quote request id ${c.get("requestId") ?? "(none)"} to the operator.`;

export function envelope(
  c: Context<AppEnv>,
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): Response {
  return c.json({ detail: { code, message } }, status as ContentfulStatusCode, headers);
}
