import type { Principal } from "../context.js";
import { findActiveKeyByHash, touchApiKey } from "../db/api-keys.js";
import type { Queryable } from "../db/db.js";
import { getOrg, insertOrgIfMissing } from "../db/orgs.js";
import { CoreError } from "../errors.js";
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
  if (h.orgId !== undefined && h.orgId !== found.orgId) {
    throw new CoreError("org_mismatch", "X-Org-Id does not match the organisation of this credential.");
  }
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
 * `default`, named after its id): the identity provider is the source of truth for who the
 * organisations are, which is what a dashboard signing users in expects.
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
    await insertOrgIfMissing(db, { id: orgId, name: orgId });
    org = await getOrg(db, orgId);
    if (!org) throw new CoreError("server_error", "Could not create the organisation of this token.");
  }
  return { orgId, keyId: null, userId, via: "jwt", tier: org.tier };
}
