import { z } from "@hono/zod-openapi";
import type { ErrorCode } from "../src/errors.js";

/** The standard error envelope, declared once and spread into every route's responses. */
export const ErrorEnvelope = z
  .object({
    detail: z.object({
      code: z.string().openapi({ example: "memory_not_found" }),
      message: z.string(),
    }),
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
  })
  .openapi("ValidationError");

const describe: Record<number, string> = {
  400: "Bad request",
  401: "Missing or invalid credential (`unauthorized`)",
  403: "X-Org-Id does not match the credential (`org_mismatch`)",
  404: "Not found",
  413: "Request body too large (`payload_too_large`)",
  415: "Content type is not application/json",
  429: "Rate limit (`rate_limited`) or daily cap (`daily_cap_exceeded`) exceeded; see `Retry-After`",
  500: "Internal error (`server_error` or an operation-specific code); the message names only the request id",
};

const envelope = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorEnvelope } },
});

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
  out[422] = {
    description: `Validation failed (\`{detail: [{loc, msg, type}]}\`)${codes[422]?.length ? ` or a rule was broken (standard envelope): ${codes[422].map((c) => `\`${c}\``).join(", ")}` : ""}`,
    content: {
      "application/json": {
        schema: codes[422]?.length
          ? z.union([ValidationErrorEnvelope, ErrorEnvelope])
          : ValidationErrorEnvelope,
      },
    },
  };
  if (auth) out[429] = envelope(describe[429]!);
  out[500] = envelope(withCodes(500, codes[500]));
  return out;
}

export const NullableString = z.string().nullable();
export const DateTime = z.string().openapi({ format: "date-time", example: "2026-01-01T12:00:00.000Z" });

const NUL_FREE = /^[^\u0000]*$/;

/** A string PostgreSQL can store: a NUL character is a field error (identifiers, names). */
export const Str = () => z.string().regex(NUL_FREE, "NUL characters (\\u0000) are not allowed");

/** Free text where a NUL byte is noise (tool output in a transcript): dropped, never refused. */
export const LooseText = () => z.string().transform((s) => s.replaceAll("\u0000", ""));
