import type { MiddlewareHandler } from "hono";
import { authenticate } from "../../src/auth/authenticate.js";
import type { Deps } from "../../src/context.js";
import type { AppEnv } from "../types.js";

/** Resolves the credential to a principal and builds the core context for the request. */
export function requireAuth(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = await authenticate(deps.db, {
      apiKey: c.req.header("x-api-key"),
      authorization: c.req.header("authorization"),
      orgId: c.req.header("x-org-id"),
    });
    const log = c.get("log").child({ orgId: principal.orgId });
    c.set("principal", principal);
    c.set("log", log);
    c.set("ctx", { deps, principal, requestId: c.get("requestId"), log, db: deps.db });
    return next();
  };
}
