import { type Ctx, type Deps, type Principal, requestDb } from "../context.js";
import type { Logger } from "../logger.js";
import { checkRateLimit } from "../ratelimit/check.js";
import { resolveTier } from "../ratelimit/tiers.js";
import { authenticateAndCount, type CredentialHeaders } from "./authenticate.js";
import type { JwtVerifier } from "./jwt.js";

interface AdmitOptions {
  requestId: string;
  log: Logger;
  now?: Date | undefined;
  /** Told who is calling before the limit is checked (so a 429 is logged with its organisation). */
  onPrincipal?: (principal: Principal, log: Logger) => void;
}

/**
 * Admits one request: resolves the credential to a principal, counts the request once against its
 * tier's rate limit and daily cap (429 when over), and builds the core context the verbs run with.
 * The REST/MCP HTTP middleware calls it once per HTTP request; MCP over stdio once per tool call.
 */
export async function admitRequest(
  deps: Deps,
  credentials: CredentialHeaders,
  options: AdmitOptions & { jwt?: JwtVerifier | undefined },
): Promise<{ ctx: Ctx; headers: Record<string, string> }> {
  // For an API key, one statement: key, tier, the rate-limit count and last-used (findKeyAndHit).
  const { principal, verdict } = await authenticateAndCount(requestDb(deps), credentials, {
    config: deps.config,
    log: options.log,
    jwt: options.jwt,
    at: options.now,
  });
  const log = options.log.child({ orgId: principal.orgId });
  options.onPrincipal?.(principal, log);
  const headers = await verdict();
  return { ctx: { deps, principal, requestId: options.requestId, log, db: requestDb(deps) }, headers };
}

/**
 * The counting half of `admitRequest`, for a principal already established another way (a console
 * session, re-checked against its key on every request).
 */
export async function admitPrincipal(
  deps: Deps,
  principal: Principal,
  tier: string,
  options: AdmitOptions,
): Promise<{ ctx: Ctx; headers: Record<string, string> }> {
  const log = options.log.child({ orgId: principal.orgId });
  options.onPrincipal?.(principal, log);
  const { headers } = await checkRateLimit({
    db: requestDb(deps),
    log,
    principal,
    tier: resolveTier(deps.config, tier),
    at: options.now,
  });
  return { ctx: { deps, principal, requestId: options.requestId, log, db: requestDb(deps) }, headers };
}
