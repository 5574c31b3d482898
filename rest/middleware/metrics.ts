import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import { CoreError } from "../../src/errors.js";
import type { Metrics } from "../../src/metrics.js";
import type { AppEnv } from "../types.js";

const REFUSALS = new Set(["rate_limited", "daily_cap_exceeded", "monthly_quota_exceeded"]);

/**
 * Counts and times every request by route template (`/v1/memories/:id`, never the path itself, so
 * label values stay bounded), method and status, and counts rate-limit refusals by code.
 */
export function httpMetrics(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    const end = metrics.httpDuration.startTimer();
    await next();
    const labels = { route: routeTemplate(c), method: c.req.method, status: String(c.res.status) };
    end(labels);
    metrics.httpRequests.inc(labels);
    const err = c.error;
    if (err instanceof CoreError && REFUSALS.has(err.code)) metrics.rateLimited.inc({ code: err.code });
  };
}

/**
 * The template of the handler that answered (middleware patterns end in `*`), else "unmatched"; a
 * refusal's own (rest/app.ts, routeRefusal) first. Hono runs the matched routes in order, so the
 * first handler is the one that answered (or the one the request was for, when middleware answered
 * a 401 or 429); a later match never ran (`/v1/memories/:memory_id` for `/v1/memories/jobs`).
 */
export function routeTemplate(c: Context): string {
  const refused = (c as Context<AppEnv>).get("route");
  if (refused) return refused;
  return matchedRoutes(c).find((r) => !r.path.endsWith("*"))?.path ?? "unmatched";
}
