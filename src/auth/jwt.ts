import { createRemoteJWKSet, decodeJwt, errors, type JWTVerifyGetKey, jwtVerify } from "jose";
import { type Config, ConfigError } from "../config.js";
import { CoreError } from "../errors.js";
import { isStorable } from "../wire/common.js";

/** Who an identity-provider token names: an organisation and a user of it. */
export interface JwtIdentity {
  orgId: string;
  userId: string;
}

export interface JwtVerifier {
  verify(token: string): Promise<JwtIdentity>;
}

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
const SYMMETRIC = ["HS256", "HS384", "HS512"];

/** Three base64url segments: a JWS compact serialisation, never one of our keys (no dots). */
export const looksLikeJwt = (s: string) => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(s);

/**
 * Builds the verifier from configuration, or undefined when JWTs are not configured. Keys come
 * from the JWKS URL (cached by jose, refetched when a token names an unknown `kid`, at most once
 * per cooldown) for asymmetric algorithms, and from the shared secret for HS*. Issuer and audience
 * are required whenever JWTs are on: a token minted for another service must not work here.
 */
export function createJwtVerifier(config: Config): JwtVerifier | undefined {
  const jwksUrl = config.MNEMO_JWT_JWKS_URL;
  const secret = config.MNEMO_JWT_SECRET;
  if (!jwksUrl && !secret) return undefined;
  const issuer = config.MNEMO_JWT_ISSUER;
  const audience = config.MNEMO_JWT_AUDIENCE;
  if (!issuer || !audience) {
    throw new ConfigError(
      "MNEMO_JWT_ISSUER and MNEMO_JWT_AUDIENCE are required when MNEMO_JWT_JWKS_URL or MNEMO_JWT_SECRET is set",
    );
  }
  const jwks = jwksUrl
    ? createRemoteJWKSet(new URL(jwksUrl), { cooldownDuration: config.MNEMO_JWT_JWKS_COOLDOWN_MS })
    : undefined;
  const secretKey = secret ? new TextEncoder().encode(secret) : undefined;
  // RFC 7518 §3.2: an HMAC key at least as long as its hash, so HS384 needs 48 bytes and HS512 64.
  const symmetric = secretKey ? SYMMETRIC.filter((alg) => secretKey.length * 8 >= Number(alg.slice(2))) : [];
  const algorithms = [...(jwks ? ASYMMETRIC : []), ...symmetric];
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg && SYMMETRIC.includes(header.alg)) {
      if (!secretKey || !symmetric.includes(header.alg)) {
        throw new errors.JOSEAlgNotAllowed(
          secretKey ? `${header.alg} needs a longer MNEMO_JWT_SECRET` : "symmetric tokens are not accepted",
        );
      }
      return secretKey;
    }
    if (!jwks) throw new errors.JOSEAlgNotAllowed("asymmetric tokens are not accepted");
    return jwks(header, token);
  };
  const orgClaim = config.MNEMO_JWT_ORG_CLAIM;
  const userClaim = config.MNEMO_JWT_USER_CLAIM;

  return {
    async verify(token) {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, getKey, {
          issuer,
          audience,
          algorithms,
          clockTolerance: config.MNEMO_JWT_CLOCK_TOLERANCE_S,
          requiredClaims: ["exp"],
        }));
      } catch (err) {
        throw new CoreError("unauthorized", `Invalid token: ${reason(err)}.`, { cause: err });
      }
      return { orgId: identity(payload, orgClaim), userId: identity(payload, userClaim) };
    },
  };
}

/**
 * The user a token names by `claim` (MNEMO_JWT_USER_CLAIM), read without verifying it: for a
 * client that sends the token on to the server (stdio with MNEMO_URL), which verifies it on every
 * call. Null for a credential that is no JWT, or a token naming no user the server would take.
 */
export function unverifiedUser(token: string, claim: string): string | null {
  if (!looksLikeJwt(token)) return null;
  try {
    return identity(decodeJwt(token), claim);
  } catch {
    return null;
  }
}

/**
 * An identity claim by name (dotted names reach into nested objects: `app_metadata.org_id`): a
 * string or number of 1 to 200 characters that the database can store (no NUL, no unpaired
 * surrogate: a signed token is still input, and such a value failed every statement it reached).
 */
function identity(payload: Record<string, unknown>, name: string): string {
  let v: unknown = payload;
  for (const part of name.split(".")) {
    v = v && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined;
  }
  if (typeof v === "number") v = String(v);
  if (typeof v !== "string" || v.length === 0)
    throw new CoreError("unauthorized", `Invalid token: no '${name}' claim.`);
  if (v.length > 200 || !isStorable(v))
    throw new CoreError(
      "unauthorized",
      `Invalid token: the '${name}' claim is not a usable identifier (1 to 200 characters, no NUL or unpaired surrogate).`,
    );
  return v;
}

/** A short reason a caller can act on; never key material. */
function reason(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) return `claim '${err.claim}' check failed`;
  if (err instanceof errors.JWKSNoMatchingKey) return "no matching signing key";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "signature verification failed";
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
    return "algorithm not allowed";
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid)
    return "signing keys unavailable";
  return "malformed or unverifiable";
}
