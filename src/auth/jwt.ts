import { createRemoteJWKSet, errors, type JWTVerifyGetKey, jwtVerify } from "jose";
import { type Config, ConfigError } from "../config.js";
import { CoreError } from "../errors.js";

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
  const algorithms = [...(jwks ? ASYMMETRIC : []), ...(secretKey ? SYMMETRIC : [])];
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg && SYMMETRIC.includes(header.alg)) {
      if (!secretKey) throw new errors.JOSEAlgNotAllowed("symmetric tokens are not accepted");
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
      const orgId = claim(payload, orgClaim);
      const userId = claim(payload, userClaim);
      if (!orgId) throw new CoreError("unauthorized", `Invalid token: no '${orgClaim}' claim.`);
      if (!userId) throw new CoreError("unauthorized", `Invalid token: no '${userClaim}' claim.`);
      return { orgId, userId };
    },
  };
}

/** A claim by name; dotted names reach into nested objects (`app_metadata.org_id`). */
function claim(payload: Record<string, unknown>, name: string): string | undefined {
  let v: unknown = payload;
  for (const part of name.split(".")) {
    v = v && typeof v === "object" ? (v as Record<string, unknown>)[part] : undefined;
  }
  if (typeof v === "number") v = String(v);
  return typeof v === "string" && v.length > 0 && v.length <= 200 ? v : undefined;
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
