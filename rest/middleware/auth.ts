import type { MiddlewareHandler } from "hono";
import { authenticate } from "../../src/auth/authenticate.js";
import { createJwtVerifier } from "../../src/auth/jwt.js";
import type { Deps, Principal } from "../../src/context.js";
import { checkRateLimit } from "../../src/ratelimit/check.js";
import { resolveTier } from "../../src/ratelimit/tiers.js";
import type { AppEnv } from "../types.js";

/**
 * Marks an in-process call made on behalf of an already counted request (an MCP tool's REST call
 * through `app.request(path, init, { [INNER_CALL]: true })`). Only in-process code can set the
 * environment, never a client. Such a call is authenticated as usual but not counted again.
 */
export const INNER_CALL = Symbol("mnemo.inner-call");

export interface AuthOptions {
  /** Replaces the database clock in the limiter (tests of window and day boundaries). */
  now?: () => Date;
}

/**
 * Resolves the credential to a principal, counts the request against its tier's rate limit and
 * daily cap (429 when over), builds the core context, and puts the rate-limit headers on whatever
 * response follows. Used for /v1 and, the same way, for /mcp.
 */
export function requireAuth(deps: Deps, options: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  // Built once per app: the JWKS cache lives as long as the app, not the request.
  const jwt = createJwtVerifier(deps.config);
  return async (c, next) => {
    const { tier: tierName, ...principal }: Principal & { tier: string } = await authenticate(
      deps.db,
      {
        apiKey: c.req.header("x-api-key"),
        authorization: c.req.header("authorization"),
        orgId: c.req.header("x-org-id"),
      },
      { jwt },
    );
    const log = c.get("log").child({ orgId: principal.orgId });
    c.set("principal", principal);
    c.set("log", log);
    const inner = (c.env as Record<symbol, unknown> | undefined)?.[INNER_CALL] === true;
    const { headers } = inner
      ? { headers: {} }
      : await checkRateLimit({
          db: deps.db,
          log,
          principal,
          tier: resolveTier(deps.config, tierName),
          at: options.now?.(),
        });
    c.set("ctx", { deps, principal, requestId: c.get("requestId"), log, db: deps.db });
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
