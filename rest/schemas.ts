import { z } from "@hono/zod-openapi";
import type { ErrorCode } from "../src/errors.js";
import { ERROR_TYPES } from "./errors.js";

/** A JSON body or response with this schema: `{ description, ...json(S) }`, `{ required: true, ...json(S) }`. */
export const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

/** The hosted service's error object, carried by every error answer beside `detail`. */
export const ErrorObject = z
  .object({
    type: z.enum(ERROR_TYPES).openapi({
      description:
        "Error class implied by the status (400, 405, 408, 413, 415, 417 and 422 read `invalid_request_error`).",
    }),
    code: z.string().openapi({ example: "memory_not_found", description: "The same code as `detail.code`." }),
    message: z.string(),
    request_id: z.string().nullable().openapi({ description: "Also in the `X-Request-Id` header." }),
    details: z
      .object({
        field: z.string().optional().openapi({ description: "The field a field error is about." }),
        issues: z
          .array(z.object({ loc: z.array(z.string()), msg: z.string(), type: z.string() }))
          .optional()
          .openapi({ description: "Every field failure of a 422 validation answer." }),
      })
      .optional(),
  })
  .openapi("ErrorObject");

/** The standard error envelope, declared once and spread into every route's responses. */
export const ErrorEnvelope = z
  .object({
    detail: z.object({
      code: z.string().openapi({ example: "memory_not_found" }),
      message: z.string(),
      field: z
        .string()
        .optional()
        .openapi({ description: "Field errors (422 with a code) name the field, e.g. `limit`." }),
    }),
    error: ErrorObject,
  })
  .openapi("Error");

export const ValidationErrorEnvelope = z
  .object({
    detail: z.array(
      z.object({
        loc: z.array(z.string()).openapi({ example: ["body", "name"] }),
        msg: z.string().openapi({ example: "Field required" }),
        type: z.string().openapi({ example: "missing" }),
      }),
    ),
    error: ErrorObject.openapi({
      description: "`code` is `invalid_request`; `details.issues` repeats `detail`.",
    }),
  })
  .openapi("ValidationError");

const describe: Record<number, string> = {
  400: "Bad request",
  401: "Missing or invalid credential (`unauthorized`)",
  403: "Not allowed for this credential: X-Org-Id or `org_id` names another organisation (`org_mismatch`), a key confined to one user names another (`user_mismatch`), a token names an organisation it may not enter (`org_not_linked`), or a user's key asks for organisation settings (`forbidden`)",
  404: "Not found",
  413: "Request body too large (`payload_too_large`)",
  415: "Content type is not application/json, declares a charset other than utf-8, or the body has a Content-Encoding (`unsupported_media_type`)",
  429: "Rate limit (`rate_limited`), daily cap (`daily_cap_exceeded`) or the tier's monthly cap (`monthly_quota_exceeded`, ingest, search and trigger) exceeded; see `Retry-After`",
  500: "Internal error (`server_error` or an operation-specific code); the message names only the request id",
  503: "The database is out of reach or out of a resource such as disk space (`service_unavailable`), the server is shutting down, or a model the request waits on failed (a patched fact's new text to embed; the message says how); retry after `Retry-After`, which a model failure that will not pass by retrying (a wrong dimension, a refused key) does not send",
};

const envelope = (description: string) => ({ description, ...json(ErrorEnvelope) });

/** The codes an ingest answers besides the common ones, in either form (REST and the variant's add). */
export const INGEST_ERRORS: Partial<Record<400 | 422, ErrorCode[]>> = {
  400: ["invalid_json", "invalid_messages"],
  422: [
    "missing_user_id",
    "missing_conv_id",
    "namespace_too_long",
    "invalid_request",
    "too_many_messages",
    "invalid_metadata",
  ],
};

/**
 * Error responses for an authenticated operation. `codes` lists the operation's own codes so the
 * document names them; the common ones (401, 403, 413, 429, 500) are always declared.
 */
export function errorResponses(
  codes: Partial<Record<400 | 404 | 415 | 422 | 500, ErrorCode[]>> = {},
  options: { auth?: boolean; body?: boolean } = {},
) {
  const auth = options.auth ?? true;
  const out: Record<number, { description: string; content: Record<string, { schema: unknown }> }> = {};
  const withCodes = (status: number, list?: ErrorCode[]) =>
    list?.length
      ? `${describe[status] ?? "Error"}: ${list.map((c) => `\`${c}\``).join(", ")}`
      : (describe[status] ?? "Error");
  if (options.body || codes[400]) out[400] = envelope(withCodes(400, codes[400] ?? ["invalid_json"]));
  if (auth) {
    out[401] = envelope(describe[401]!);
    out[403] = envelope(describe[403]!);
  }
  if (codes[404]) out[404] = envelope(withCodes(404, codes[404]));
  if (options.body) {
    out[413] = envelope(describe[413]!);
    out[415] = envelope(describe[415]!);
  }
  const codes422 = codes[422] ?? [];
  out[422] = {
    description:
      "Validation failed. A failure with a code: `{detail: {code, message, field?}, error}`" +
      (codes422.length ? ` (${codes422.map((c) => `\`${c}\``).join(", ")})` : "") +
      "; any other field failure: `{detail: [{loc, msg, type}], error}` with `error.code` `invalid_request`.",
    content: { "application/json": { schema: z.union([ErrorEnvelope, ValidationErrorEnvelope]) } },
  };
  if (auth) out[429] = envelope(describe[429]!);
  out[500] = envelope(withCodes(500, codes[500]));
  out[503] = envelope(describe[503]!);
  return out;
}

/** Response headers the document declares (components.headers), by name. */
const RESPONSE_HEADERS: Record<string, { description: string; schema: { type: "string" | "integer" } }> = {
  "X-Request-Id": {
    description: "The request's id (the caller's X-Request-Id when it sent one), also in `error.request_id`.",
    schema: { type: "string" },
  },
  "RateLimit-Limit": {
    description:
      "Requests allowed in the binding window (the minute's or the day's, whichever has fewer left).",
    schema: { type: "integer" },
  },
  "RateLimit-Remaining": { description: "Requests left in the binding window.", schema: { type: "integer" } },
  "RateLimit-Reset": { description: "Seconds until the binding window resets.", schema: { type: "integer" } },
  "X-RateLimit-Limit": { description: "The same as `RateLimit-Limit`.", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "The same as `RateLimit-Remaining`.", schema: { type: "integer" } },
  "X-RateLimit-Daily-Limit": {
    description: "The key's daily cap, when its tier has one.",
    schema: { type: "integer" },
  },
  "X-RateLimit-Daily-Remaining": { description: "Requests left today (UTC).", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
  "WWW-Authenticate": {
    description: 'The scheme to authenticate with (RFC 9110): `Bearer realm="mnemo"`.',
    schema: { type: "string" },
  },
};
const RATE_HEADERS = Object.keys(RESPONSE_HEADERS).filter((h) => /RateLimit/.test(h));

type Doc = { paths?: Record<string, Record<string, unknown>>; components?: Record<string, unknown> };
type Responses = Record<string, { headers?: Record<string, unknown> }>;

/**
 * The generated document with the headers every answer carries: `X-Request-Id` on all, the
 * RateLimit headers on counted (authenticated) operations' answers (none under the unlimited
 * tier), `Retry-After` on 429 and 503, `WWW-Authenticate` on 401.
 */
export function withResponseHeaders<D extends object>(generated: D): D {
  const doc = generated as Doc;
  const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
  doc.components = { ...doc.components, headers: RESPONSE_HEADERS };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      const responses = (op as { responses?: Responses } | undefined)?.responses;
      if (!responses) continue;
      const counted = "401" in responses;
      for (const [status, response] of Object.entries(responses)) {
        const names = [
          "X-Request-Id",
          ...(counted ? RATE_HEADERS : []),
          ...(status === "429" || status === "503" ? ["Retry-After"] : []),
          ...(status === "401" ? ["WWW-Authenticate"] : []),
        ];
        response.headers = { ...Object.fromEntries(names.map((n) => [n, ref(n)])), ...response.headers };
      }
    }
  }
  return generated;
}
