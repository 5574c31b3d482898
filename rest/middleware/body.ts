import { isUtf8 } from "node:buffer";
import type { MiddlewareHandler } from "hono";
import { CoreError } from "../../src/errors.js";
import type { AppEnv } from "../types.js";

/** The `charset` parameter of a Content-Type, lower-cased and unquoted; undefined when none. */
function charsetOf(type: string): string | undefined {
  const m = /;\s*charset\s*=\s*("[^"]*"|[^;\s]*)/i.exec(type);
  return m ? m[1]!.replace(/^"|"$/g, "").trim().toLowerCase() : undefined;
}

/**
 * Refuses a URL whose percent-escapes do not decode to UTF-8 (`?user_id=%C3`): read leniently, the
 * escape stayed as the literal text "%C3", so a list or a forget reached the user of that name. A
 * `%` that starts no escape (`?q=100%`) is read as itself, as before.
 */
export function refuseUrlNotUtf8(url: string) {
  if (!url.includes("%")) return;
  const bytes: Buffer[] = [];
  let last = 0;
  for (const m of url.matchAll(/%[0-9a-f]{2}/gi)) {
    bytes.push(Buffer.from(url.slice(last, m.index)), Buffer.from([Number.parseInt(m[0].slice(1), 16)]));
    last = m.index + 3;
  }
  bytes.push(Buffer.from(url.slice(last)));
  if (!isUtf8(Buffer.concat(bytes))) {
    throw new CoreError(
      "invalid_request",
      "The URL is not valid UTF-8 once its percent-escapes are decoded.",
    );
  }
}

/**
 * Input rules for /v1 and /mcp, checked before authentication work or parsing: bodies must be JSON
 * (UTF-8: another declared `charset` is 415, bytes that are not UTF-8 are 400 `invalid_json`; a
 * lenient decoder turned them into U+FFFD, so an identifier was silently rewritten), sent
 * without a content coding, and at most `maxBytes` (an oversized one is refused without being read whole), and the URL may not carry
 * NUL characters (query and path values are identifiers; PostgreSQL text cannot hold NUL) nor
 * percent-escapes that are not UTF-8 (refuseUrlNotUtf8). In
 * bodies, NUL is a per-field matter: identifiers refuse it, free text (tool output) drops it.
 */
export function bodyRules(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () =>
    new CoreError("payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
  return async (c, next) => {
    if (/%00/i.test(c.req.url)) {
      throw new CoreError("invalid_request", "NUL characters (%00) are not allowed in the URL.");
    }
    refuseUrlNotUtf8(c.req.url);
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && Number(length) > maxBytes) throw tooLarge();
    const hasBody =
      (length !== undefined && Number(length) > 0) || c.req.header("transfer-encoding") !== undefined;
    const type = c.req.header("content-type");
    if (hasBody && !(type && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type.trim()))) {
      throw new CoreError("unsupported_media_type", "Send the request body as application/json.");
    }
    // No content coding is decoded: a gzip body would otherwise read as "not valid JSON".
    const coding = c.req.header("content-encoding")?.trim().toLowerCase();
    if (hasBody && coding && coding !== "identity") {
      throw new CoreError(
        "unsupported_media_type",
        `Content-Encoding ${JSON.stringify(coding)} is not supported; send the body uncompressed.`,
      );
    }
    if (!c.req.raw.body) return next();
    // Read under the limit (a chunked body has no length to check up front), then hand the bytes on.
    const reader = c.req.raw.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        // The client went away or Node's request time-out closed the connection mid-body; the
        // time-out's 408 is already on the wire (rest/serve.ts), so this is a 4xx, not a 500.
        throw new CoreError("request_timeout", "The request body did not arrive in full.", { cause: err });
      }
      const { done, value } = chunk;
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
    const body = Buffer.concat(chunks);
    // Of a body actually sent (one read in-process may come with neither length nor coding header).
    const charset = body.byteLength > 0 && type ? charsetOf(type) : undefined;
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
      throw new CoreError(
        "unsupported_media_type",
        `charset ${JSON.stringify(charset.slice(0, 40))} is not supported: JSON bodies are UTF-8 (send charset=utf-8, or no charset).`,
      );
    }
    // Checked in place, not decoded: the JSON parser decodes it once, later.
    if (!isUtf8(body)) {
      throw new CoreError("invalid_json", "The request body is not valid UTF-8; JSON bodies are UTF-8.");
    }
    c.req.raw = new Request(c.req.raw.url, { method, headers: c.req.raw.headers, body });
    return next();
  };
}
