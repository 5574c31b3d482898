import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { Deps } from "../../src/context.js";
import type { AppEnv } from "../types.js";
import { routeTemplate } from "./metrics.js";

const SAFE_ID = /^[\w.:@/+=-]{1,200}$/;

/** Request id (echoed when the caller sent a sane one, else minted) and one access-log line. */
export function requestContext(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const sent = c.req.header("x-request-id");
    const requestId = sent && SAFE_ID.test(sent) ? sent : randomUUID();
    const log = deps.log.child({ requestId });
    c.set("deps", deps);
    c.set("requestId", requestId);
    c.set("log", log);
    const started = performance.now();
    await next();
    c.res.headers.set("X-Request-Id", requestId);
    const principal = c.get("principal");
    log.info(
      {
        method: c.req.method,
        route: routeTemplate(c),
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...(principal ? { orgId: principal.orgId } : {}),
      },
      "request",
    );
  };
}
