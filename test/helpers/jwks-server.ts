import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

export const JWT_ISSUER = "https://idp.test/";
export const JWT_AUDIENCE = "mnemo-test";
export const JWT_SECRET = "test-shared-secret-of-enough-length-0123456789";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function newSigningKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" } };
}

/** A JWKS endpoint on 127.0.0.1 whose key set a test can change, counting fetches. */
export interface JwksServer {
  url: string;
  keys: JWK[];
  fetches: number;
  close(): Promise<void>;
}

export async function startJwksServer(keys: JWK[]): Promise<JwksServer> {
  const state = { keys, fetches: 0 };
  const server: Server = createServer((_req, res) => {
    state.fetches++;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get keys() {
      return state.keys;
    },
    set keys(k) {
      state.keys = k;
    },
    get fetches() {
      return state.fetches;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface TokenOptions {
  org?: string;
  sub?: string;
  iss?: string;
  aud?: string;
  /** Seconds from now; negative for a token already expired. */
  expiresIn?: number;
  claims?: Record<string, unknown>;
}

export function signToken(key: SigningKey | "secret", o: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...(o.org === undefined ? {} : { org_id: o.org }), ...o.claims })
    .setSubject(o.sub ?? "user_1")
    .setIssuer(o.iss ?? JWT_ISSUER)
    .setAudience(o.aud ?? JWT_AUDIENCE)
    .setIssuedAt(now - 60)
    .setExpirationTime(now + (o.expiresIn ?? 600));
  if (key === "secret") {
    return jwt.setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(JWT_SECRET));
  }
  return jwt.setProtectedHeader({ alg: "RS256", kid: key.kid }).sign(key.privateKey);
}

/** An unsecured token (`alg: none`), which must never be accepted. */
export function unsecuredToken(o: { org: string; sub?: string }): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: "none", typ: "JWT" })}.${b64({
    org_id: o.org,
    sub: o.sub ?? "user_1",
    iss: JWT_ISSUER,
    aud: JWT_AUDIENCE,
    iat: now,
    exp: now + 600,
  })}.`;
}

export function jwtEnv(jwksUrl: string): Record<string, string> {
  return {
    MNEMO_JWT_JWKS_URL: jwksUrl,
    MNEMO_JWT_SECRET: JWT_SECRET,
    MNEMO_JWT_ISSUER: JWT_ISSUER,
    MNEMO_JWT_AUDIENCE: JWT_AUDIENCE,
    // Refetch on every unknown kid, so the rotation test needs no waiting.
    MNEMO_JWT_JWKS_COOLDOWN_MS: "0",
  };
}
