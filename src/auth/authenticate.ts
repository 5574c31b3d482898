import type { Config } from "../config.js";
import type { Principal } from "../context.js";
import { findActiveKeyByHash, touchApiKey } from "../db/api-keys.js";
import type { Queryable } from "../db/db.js";
import { getOrg, insertOrgIfMissing } from "../db/orgs.js";
import { findKeyAndHit } from "../db/rate-limits.js";
import { CoreError, isQueryTimeout } from "../errors.js";
import type { Logger } from "../logger.js";
import { checkRateLimit, failOpen, rateDecision, tierTable } from "../ratelimit/check.js";
import { resolveTier } from "../ratelimit/tiers.js";
import { type JwtVerifier, looksLikeJwt } from "./jwt.js";
import { hashApiKey } from "./keys.js";

export interface CredentialHeaders {
  apiKey?: string | undefined;
  authorization?: string | undefined;
  orgId?: string | undefined;
}

/** A principal plus its organisation's rate-limit tier name, read in the same lookup. */
export type Authenticated = Principal & { tier: string };

/** Reads the credential from `x-api-key`, `Authorization: Bearer KEY` or `Authorization: Token KEY`. */
export function readCredential(h: CredentialHeaders): string {
  if (h.apiKey !== undefined) {
    const key = h.apiKey.trim();
    if (!key) throw new CoreError("unauthorized", "The x-api-key header is empty.");
    return key;
  }
  if (h.authorization !== undefined) {
    const m = /^(Bearer|Token)\s+(\S+)\s*$/i.exec(h.authorization.trim());
    if (!m)
      throw new CoreError(
        "unauthorized",
        "Malformed Authorization header: expected 'Bearer <key>' or 'Token <key>'.",
      );
    return m[2]!;
  }
  throw new CoreError(
    "unauthorized",
    "Missing credential: send an API key in x-api-key or Authorization: Bearer.",
  );
}

/**
 * Resolves a request's credential to its organisation: an API key (looked up by hash on every
 * request, so revocation is immediate on every process) or, when configured, an identity-provider
 * JWT. The organisation always comes from the credential; `X-Org-Id`, when sent, must agree.
 */
export async function authenticate(
  db: Queryable,
  h: CredentialHeaders,
  options: { jwt?: JwtVerifier | undefined } = {},
): Promise<Authenticated> {
  const credential = readCredential(h);
  const found = looksLikeJwt(credential)
    ? await authenticateJwt(db, credential, options.jwt)
    : await authenticateKey(db, credential);
  checkOrg(h, found.orgId);
  return found;
}

async function authenticateKey(db: Queryable, credential: string): Promise<Authenticated> {
  const row = await findActiveKeyByHash(db, hashApiKey(credential));
  if (!row) throw new CoreError("unauthorized", "Invalid or revoked API key.");
  // last_used_at is kept to the minute; skip the write when it is fresh.
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000) {
    touchApiKey(db, row.id).catch(() => {});
  }
  return { orgId: row.org_id, keyId: row.id, userId: row.user_id, via: "api_key", tier: row.tier };
}

/**
 * A valid token of an organisation this service has not seen yet creates that organisation (tier
 * `default`, named after its id, marked as the identity provider's): the identity provider is the
 * source of truth for who its organisations are, which is what a dashboard signing users in
 * expects. Identity-provider and operator organisations share one id space, so a token enters an
 * existing organisation only when a token created it or the operator linked it
 * (`admin link-org`); naming an operator organisation's id (org_default, say) is 403.
 */
async function authenticateJwt(
  db: Queryable,
  token: string,
  verifier: JwtVerifier | undefined,
): Promise<Authenticated> {
  if (!verifier) throw new CoreError("unauthorized", "Invalid API key (JWT credentials are not configured).");
  const { orgId, userId } = await verifier.verify(token);
  let org = await getOrg(db, orgId);
  if (!org) {
    await insertOrgIfMissing(db, { id: orgId, name: orgId, origin: "identity_provider" });
    org = await getOrg(db, orgId);
    if (!org) throw new CoreError("server_error", "Could not create the organisation of this token.");
  }
  if (org.origin !== "identity_provider" && org.idp_linked_at === null) {
    throw new CoreError(
      "org_not_linked",
      `Organisation ${JSON.stringify(orgId)} was created by the operator and is not linked to the identity provider; ` +
        `tokens cannot enter it. An operator can allow it with 'npm run --silent admin -- link-org --org ${orgId}'.`,
    );
  }
  return { orgId, keyId: null, userId, via: "jwt", tier: org.tier };
}

/**
 * A request's authentication and its rate-limit count, in as few round trips as the credential
 * allows: for an API key ONE statement finds the active key, its tier, counts the request against
 * the key's limits (which is also its usage count) and refreshes last_used_at (findKeyAndHit); an
 * identity-provider token is verified, then counted. Throws a 401/403 as authenticate does.
 * Returns the principal and `verdict`, which gives the RateLimit headers for the response or
 * throws the 429 (so the caller can log who was refused). If the folded statement fails, the key
 * is looked up alone and the request admitted uncounted (the limiter fails open, as
 * checkRateLimit does), with a warning.
 */
export async function authenticateAndCount(
  db: Queryable,
  h: CredentialHeaders,
  options: {
    config: Pick<Config, "MNEMO_RATE_TIERS">;
    log: Logger;
    jwt?: JwtVerifier | undefined;
    at?: Date | undefined;
  },
): Promise<{ principal: Principal; verdict: () => Promise<Record<string, string>> }> {
  const credential = readCredential(h);
  if (looksLikeJwt(credential)) {
    const { tier, ...principal } = await authenticate(db, h, { jwt: options.jwt });
    const verdict = async () =>
      (
        await checkRateLimit({
          db,
          log: options.log,
          principal,
          tier: resolveTier(options.config, tier),
          at: options.at,
        })
      ).headers;
    return { principal, verdict };
  }
  const keyHash = hashApiKey(credential);
  let found: Awaited<ReturnType<typeof findKeyAndHit>>;
  try {
    found = await findKeyAndHit(db, {
      keyHash,
      tiers: tierTable(options.config),
      count: true,
      at: options.at,
    });
  } catch (err) {
    // A database that did not answer in time would not answer the key's lookup either: one
    // deadline, not two, before the 503.
    if (isQueryTimeout(err)) throw err;
    failOpen(options.log, { err });
    const { tier: _tier, ...principal } = await authenticateKey(db, credential);
    checkOrg(h, principal.orgId);
    return { principal, verdict: async () => ({}) };
  }
  if (!found) throw new CoreError("unauthorized", "Invalid or revoked API key.");
  const principal: Principal = {
    orgId: found.org_id,
    keyId: found.id,
    userId: found.user_id,
    via: "api_key",
  };
  checkOrg(h, principal.orgId);
  const { tier, hit } = found;
  const verdict = async () => (hit ? rateDecision(resolveTier(options.config, tier), hit).headers : {});
  return { principal, verdict };
}

function checkOrg(h: CredentialHeaders, orgId: string): void {
  if (h.orgId !== undefined && h.orgId !== orgId) {
    throw new CoreError("org_mismatch", "X-Org-Id does not match the organisation of this credential.");
  }
}
