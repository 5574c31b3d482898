import type { MiddlewareHandler } from "hono";
import { CoreError } from "../../src/errors.js";
import type { AppEnv } from "../types.js";

/**
 * Bodies on /v1 must be JSON and at most `maxBytes`. Checked before authentication work or
 * parsing, so an oversized body is refused without being read whole.
 */
export function bodyRules(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && Number(length) > maxBytes) {
      throw new CoreError("payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
    }
    const hasBody =
      (length !== undefined && Number(length) > 0) || c.req.header("transfer-encoding") !== undefined;
    const type = c.req.header("content-type");
    if (hasBody && !(type && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type.trim()))) {
      throw new CoreError("unsupported_media_type", "Send the request body as application/json.");
    }
    if (length === undefined && c.req.raw.body) {
      // Chunked body: read it under the limit, then hand the bytes on.
      const reader = c.req.raw.body.getReader();
      const chunks: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
          await reader.cancel().catch(() => {});
          throw new CoreError("payload_too_large", `The request body is larger than ${maxBytes} bytes.`);
        }
        chunks.push(value);
      }
      const buf = Buffer.concat(chunks);
      c.req.raw = new Request(c.req.raw.url, { method, headers: c.req.raw.headers, body: buf });
    }
    return next();
  };
}
