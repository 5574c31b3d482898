import type { MiddlewareHandler } from "hono";
import { admitRequest } from "../../src/auth/admit.js";
import { createJwtVerifier } from "../../src/auth/jwt.js";
import type { Deps } from "../../src/context.js";
import type { AppEnv } from "../types.js";

export interface AuthOptions {
  /** Replaces the database clock in the limiter (tests of window and day boundaries). */
  now?: () => Date;
}

/**
 * Resolves the credential to a principal, counts the request against its tier's rate limit and
 * daily cap (429 when over), builds the core context, and puts the rate-limit headers on whatever
 * response follows. Used for /v1 and, the same way, for every mounted path such as /mcp.
 */
export function requireAuth(deps: Deps, options: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  // Built once per app: the JWKS cache lives as long as the app, not the request.
  const jwt = createJwtVerifier(deps.config);
  return async (c, next) => {
    const { ctx, headers } = await admitRequest(
      deps,
      {
        apiKey: c.req.header("x-api-key"),
        authorization: c.req.header("authorization"),
        orgId: c.req.header("x-org-id"),
      },
      {
        requestId: c.get("requestId"),
        log: c.get("log"),
        jwt,
        now: options.now?.(),
        onPrincipal: (principal, log) => {
          c.set("principal", principal);
          c.set("log", log);
        },
      },
    );
    c.set("ctx", ctx);
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
