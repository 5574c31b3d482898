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
 * refusal's own (rest/app.ts, routeRefusal) first.
 */
export function routeTemplate(c: Context): string {
  const refused = (c as Context<AppEnv>).get("route");
  if (refused) return refused;
  const handlers = matchedRoutes(c).filter((r) => !r.path.endsWith("*"));
  return handlers.at(-1)?.path ?? "unmatched";
}
