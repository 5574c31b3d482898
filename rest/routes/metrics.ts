import { timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import type { Metrics } from "../../src/metrics.js";

/**
 * GET /metrics in the Prometheus text format. With MNEMO_METRICS_TOKEN set, only a request with
 * `Authorization: Bearer <token>` gets it. Not part of the published /v1 API.
 */
/** Works on any Hono app: the API's or the metrics-only one. */
export function registerMetricsRoute(app: Hono<any>, metrics: Metrics, token: string | undefined) {
  app.get("/metrics", async (c) => {
    if (token && !bearerMatches(c.req.header("authorization"), token)) {
      return c.json(
        { detail: { code: "unauthorized", message: "Send Authorization: Bearer <MNEMO_METRICS_TOKEN>." } },
        401,
        {
          "WWW-Authenticate": 'Bearer realm="metrics"',
        },
      );
    }
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { "Content-Type": metrics.registry.contentType });
  });
}

function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!m) return false;
  const a = Buffer.from(m[1]!.trim());
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
