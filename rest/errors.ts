import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CoreError, isDatabaseUnavailable, isTooManyClients, TOO_MANY_CLIENTS } from "../src/errors.js";
import { throttledWarning } from "../src/logger.js";
import { providerAdvice, providerFailure } from "../src/providers/openai.js";
import type { FieldIssue } from "../src/wire/common.js";
import type { AppEnv } from "./types.js";

/**
 * The one HTTP error mapper. Every error answer carries two envelopes: the spec's
 * `{detail: {code, message, field?}}` and the hosted service's `{error: {type, code, message,
 * request_id, details?}}`, so clients written for either read the same code.
 */

export const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "conflict_error",
  "rate_limit_error",
  "api_error",
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

/**
 * The hosted error type a status implies (400, 405, 408, 413, 415, 417 and 422 are all bad
 * requests). `conflict_error` is in the hosted list for its clients; nothing here answers 409.
 */
export function errorType(status: number): ErrorType {
  if (status >= 500) return "api_error";
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 409:
      return "conflict_error";
    case 429:
      return "rate_limit_error";
    default:
      return "invalid_request_error";
  }
}

/** The server is there but has no connection to spare: the cause named, once per 10 s at most. */
const tooManyClients = throttledWarning(
  `${TOO_MANY_CLIENTS}: raise it, or run fewer processes or smaller pools (README, Running in production)`,
);

/** Every request of an outage fails so: once per 10 s at most. */
const databaseUnavailable = throttledWarning("database unavailable");

export function errorResponse(c: Context<AppEnv>, err: unknown): Response {
  if (isDatabaseUnavailable(err)) {
    const log = c.get("log");
    const cause = err instanceof CoreError ? (err.cause ?? err) : err;
    if (isTooManyClients(err)) {
      if (log) tooManyClients(log, { err: cause });
    } else if (log) databaseUnavailable(log, { err: cause });
    return envelope(c, 503, "service_unavailable", "The database is unavailable; retry shortly.", {
      headers: { "Retry-After": "1" },
    });
  }
  // A model the request waited on out of reach, or answering what does not do (a patched fact's
  // new text to embed): the service is not broken, that dependency is. Only a failure that may
  // pass invites a retry (Retry-After); a permanent one says it will not clear.
  const model = providerFailure(err);
  if (model) {
    c.get("log")?.warn({ err: model }, "model unavailable");
    return envelope(c, 503, "service_unavailable", `${model.message} ${providerAdvice(model)}`, {
      ...(model.transient ? { headers: { "Retry-After": "5" } } : {}),
    });
  }
  if (err instanceof CoreError) {
    if (err.status >= 500) {
      c.get("log")?.error({ err: err.cause ?? err, code: err.code }, "request failed");
      return envelope(c, err.status, err.code, internalMessage(c), { headers: err.headers });
    }
    return envelope(c, err.status, err.code, err.message, {
      headers: err.headers,
      ...(err.field ? { field: err.field, issues: [fieldIssue(c, err, err.field)] } : {}),
    });
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

/**
 * A field error raised past validation (`invalid_filters`, `cursor_mismatch`, `reserved_field`...)
 * as the one entry of `error.details.issues`, shaped as validation lists its failures: `loc` is
 * where the field was sent (`query` for a read, else `body`) and the field's path, its segments
 * whole when the error has them (a metadata key `a.b` is one), else the field split at its dots
 * and indices; `msg` the message without the leading path, `type` the code.
 */
function fieldIssue(c: Context<AppEnv>, err: CoreError, field: string): FieldIssue {
  const target = c.req.method === "GET" || c.req.method === "HEAD" ? "query" : "body";
  const path = err.path
    ? err.path.map(String)
    : field.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== "");
  const msg = err.message.startsWith(`${field}: `) ? err.message.slice(field.length + 2) : err.message;
  return { loc: [target, ...path], msg, type: err.code };
}

const internalMessage = (c: Context<AppEnv>) =>
  `Internal error. Quote request id ${c.get("requestId") ?? "(none)"} to the operator.`;

/** Both envelopes of an error answer made outside Hono (Node's own client errors, rest/serve.ts). */
export const errorBody = (status: number, code: string, message: string, requestId: string | null) => ({
  detail: { code, message },
  error: { type: errorType(status), code, message, request_id: requestId },
});

/** The hosted `error` object of an answer. */
const errorObject = (
  c: Context<AppEnv>,
  status: number,
  code: string,
  message: string,
  details?: Record<string, unknown>,
) => ({
  type: errorType(status),
  code,
  message,
  request_id: c.get("requestId") ?? null,
  ...(details ? { details } : {}),
});

export function envelope(
  c: Context<AppEnv>,
  status: number,
  code: string,
  message: string,
  options: { headers?: Record<string, string> | undefined; field?: string; issues?: FieldIssue[] } = {},
): Response {
  const details: Record<string, unknown> | undefined =
    options.field || options.issues
      ? {
          ...(options.field ? { field: options.field } : {}),
          ...(options.issues ? { issues: options.issues } : {}),
        }
      : undefined;
  // RFC 9110 (15.5.2): a 401 carries a challenge. Keys go in x-api-key or as a bearer token.
  const headers =
    status === 401 ? { "WWW-Authenticate": 'Bearer realm="mnemo"', ...options.headers } : options.headers;
  return c.json(
    {
      detail: { code, message, ...(options.field ? { field: options.field } : {}) },
      error: errorObject(c, status, code, message, details),
    },
    status as ContentfulStatusCode,
    headers,
  );
}

/**
 * A field-validation failure (422). When a spec code applies to the first failing field the answer
 * is `{detail: {code, message, field}}`; otherwise the `{detail: [{loc, msg, type}]}` array stays,
 * and `error.code` reads `invalid_request`. Either way `error.details.issues` lists every failure.
 */
export function validationResponse(
  c: Context<AppEnv>,
  issues: FieldIssue[],
  coded: { code: string; message: string; field: string } | undefined,
): Response {
  if (coded) return envelope(c, 422, coded.code, coded.message, { field: coded.field, issues });
  const message = issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; ") || "Validation failed.";
  return c.json({ detail: issues, error: errorObject(c, 422, "invalid_request", message, { issues }) }, 422);
}
