import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticate } from "../src/auth/authenticate.js";
import { createJwtVerifier } from "../src/auth/jwt.js";
import { loadConfig } from "../src/config.js";
import { getOrg } from "../src/db/orgs.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import {
  JWT_AUDIENCE,
  JWT_ISSUER,
  type JwksServer,
  jwtEnv,
  newSigningKey,
  type SigningKey,
  signToken,
  startJwksServer,
  unsecuredToken,
} from "./helpers/jwks-server.js";

let svc: TestService;
let jwks: JwksServer;
let k1: SigningKey;

beforeAll(async () => {
  k1 = await newSigningKey("k1");
  jwks = await startJwksServer([k1.jwk]);
  svc = await startTestService({
    env: {
      ...jwtEnv(jwks.url),
      MNEMO_RATE_TIERS: JSON.stringify({ tiny: { per_minute: 2, per_day: 1000 } }),
    },
    workers: false,
  });
});
afterAll(async () => {
  await svc?.stop();
  await jwks?.close();
});

const newOrgId = () => `idp_org_${randomBytes(6).toString("hex")}`;
const verifierOf = () => createJwtVerifier(svc.deps.config)!;
const call = (token: string, extra: Record<string, string> = {}) =>
  svc.request("GET", "/v1/auth/service-keys", { headers: { authorization: `Bearer ${token}`, ...extra } });

const expect401 = async (token: string, reason: RegExp) => {
  const r = await call(token);
  expect(r.status).toBe(401);
  expect(r.body.detail.code).toBe("unauthorized");
  expect(r.body.detail.message).toMatch(reason);
};

describe("identity-provider JWTs", () => {
  it("accepts a valid token like a key of its user, creating the organisation on first sight", async () => {
    const org = newOrgId();
    expect(await getOrg(svc.deps.db, org)).toBeUndefined();
    const r = await call(await signToken(k1, { org }));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ object: "list", data: [], has_more: false, next_cursor: null });
    expect(r.headers.get("x-ratelimit-limit")).toBe("600");
    const created = await getOrg(svc.deps.db, org);
    expect(created?.tier).toBe("default");
    // Second sight: the same organisation, no error.
    expect((await call(await signToken(k1, { org }))).status).toBe(200);
    // X-Org-Id must agree with the token's organisation.
    const mismatch = await call(await signToken(k1, { org }), { "x-org-id": "org_other" });
    expect(mismatch.status).toBe(403);
    expect(mismatch.body.detail.code).toBe("org_mismatch");
  });

  it("limits each user of a token separately and counts their requests under no key", async () => {
    const org = newOrgId();
    const ann = await signToken(k1, { org, sub: "ann" });
    expect((await call(ann)).status).toBe(200);
    await svc.deps.db.query("UPDATE organisations SET tier = 'tiny' WHERE id = $1", [org]);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(ann)).status);
    expect(statuses).toContain(429); // limit 2 a minute: even across a minute turn, 5 calls hit it
    const bob = await call(await signToken(k1, { org, sub: "bob" }));
    expect(bob.status).toBe(200);
    expect(bob.headers.get("x-ratelimit-remaining")).toBe("1");
    const usage = await svc.request("GET", "/v1/usage?by_api_key=true", {
      headers: { authorization: `Bearer ${await signToken(k1, { org, sub: "carol" })}` },
    });
    const admitted = 1 + statuses.filter((s) => s === 200).length + 1 + 1;
    const { rows } = await svc.deps.db.query(
      "SELECT sum(day_count)::int AS n FROM rate_limit_counters WHERE org_id = $1 AND key_id = ''",
      [org],
    );
    expect(rows[0].n).toBe(admitted);
    // The organisation's counts hold every user's token requests under no key; a user's
    // credential sees its own user's keys' counts only (none here), not that line of every user's.
    expect(usage.body.operations).toEqual({ messages_ingested: 0, searches: 0, requests: 0 });
    expect(usage.body.by_api_key).toEqual([]);
  });

  it("accepts a token signed with the shared secret (HS256)", async () => {
    const r = await call(await signToken("secret", { org: newOrgId() }));
    expect(r.status).toBe(200);
  });

  it("refuses an expired token, but tolerates small clock skew", async () => {
    await expect401(await signToken(k1, { org: newOrgId(), expiresIn: -120 }), /expired/);
    expect((await call(await signToken(k1, { org: newOrgId(), expiresIn: -5 }))).status).toBe(200);
  });

  it("refuses a wrong issuer and a wrong audience", async () => {
    await expect401(await signToken(k1, { org: newOrgId(), iss: "https://evil.test/" }), /iss/);
    await expect401(await signToken(k1, { org: newOrgId(), aud: "another-service" }), /aud/);
    await expect401(await signToken("secret", { org: newOrgId(), aud: "another-service" }), /aud/);
  });

  it("refuses a token signed by the wrong key", async () => {
    const impostor = await newSigningKey("k1"); // same kid, different key
    await expect401(await signToken(impostor, { org: newOrgId() }), /signature/);
    const { SignJWT } = await import("jose");
    const wrongSecret = await new SignJWT({ org_id: newOrgId() })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("u")
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode("not-the-configured-secret-at-all-000000"));
    await expect401(wrongSecret, /signature/);
  });

  it("refetches the JWKS for an unknown kid (key rotation)", async () => {
    const k2 = await newSigningKey("k2");
    const token = await signToken(k2, { org: newOrgId() });
    const before = jwks.fetches;
    await expect401(token, /no matching signing key/);
    expect(jwks.fetches).toBeGreaterThan(before);
    // The identity provider publishes the new key: the very next request refetches and passes.
    jwks.keys = [k1.jwk, k2.jwk];
    const fetched = jwks.fetches;
    expect((await call(token)).status).toBe(200);
    expect(jwks.fetches).toBe(fetched + 1);
    // Known kids are served from the cache.
    expect((await call(await signToken(k1, { org: newOrgId() }))).status).toBe(200);
    expect(jwks.fetches).toBe(fetched + 1);
  });

  it("refuses alg none, malformed tokens and tokens without the organisation claim", async () => {
    await expect401(unsecuredToken({ org: newOrgId() }), /algorithm not allowed|malformed/);
    await expect401("abc.def.ghi", /malformed/);
    await expect401(await signToken(k1, {}), /org_id/);
  });

  it("refuses a signed token whose identity claims the database cannot store (401, not 500)", async () => {
    // A NUL or an unpaired surrogate in org_id failed the organisation lookup; in sub, every
    // statement naming the user (and the rate limiter, which then failed open).
    for (const org of ["o\u0000", "a\ud800b", "x".repeat(201)])
      await expect401(await signToken(k1, { org }), /'org_id' claim is not a usable identifier/);
    for (const sub of ["a\u0000b", "\udc00"])
      await expect401(
        await signToken(k1, { org: newOrgId(), sub }),
        /'sub' claim is not a usable identifier/,
      );
    // Nothing was created for them.
    expect(await getOrg(svc.deps.db, "a\ud800b")).toBeUndefined();
  });

  it("reads the organisation and user from configured claims, nested ones included", async () => {
    const verifier = createJwtVerifier(
      loadConfig({
        MNEMO_JWT_SECRET: "another-secret-for-claims-0123456789",
        MNEMO_JWT_ISSUER: JWT_ISSUER,
        MNEMO_JWT_AUDIENCE: JWT_AUDIENCE,
        MNEMO_JWT_ORG_CLAIM: "app_metadata.tenant",
        MNEMO_JWT_USER_CLAIM: "email",
      }),
    )!;
    const { SignJWT } = await import("jose");
    const token = await new SignJWT({ app_metadata: { tenant: "acme" }, email: "ann@acme.test" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(JWT_ISSUER)
      .setAudience(JWT_AUDIENCE)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("another-secret-for-claims-0123456789"));
    expect(await verifier.verify(token)).toEqual({ orgId: "acme", userId: "ann@acme.test" });
  });

  it("refuses a shared secret shorter than 32 bytes, and HS384/HS512 tokens a secret too short for them", async () => {
    expect(() => loadConfig({ MNEMO_JWT_SECRET: "short" })).toThrow(
      /MNEMO_JWT_SECRET: must be at least 32 bytes/,
    );
    // 31 bytes in 11 characters: bytes count, not characters.
    expect(() => loadConfig({ MNEMO_JWT_SECRET: "ü".repeat(15) + "x" })).toThrow(/at least 32 bytes/);
    // Taken as given: the identity provider signs with the spaces too.
    const spaced = ` ${"s".repeat(34)} `;
    expect(loadConfig({ MNEMO_JWT_SECRET: spaced }).MNEMO_JWT_SECRET).toBe(spaced);
    const secret = "k".repeat(40);
    const verifier = createJwtVerifier(
      loadConfig({
        MNEMO_JWT_SECRET: secret,
        MNEMO_JWT_ISSUER: JWT_ISSUER,
        MNEMO_JWT_AUDIENCE: JWT_AUDIENCE,
      }),
    )!;
    const { SignJWT } = await import("jose");
    const sign = (alg: string) =>
      new SignJWT({ org_id: "acme" })
        .setProtectedHeader({ alg })
        .setSubject("ann")
        .setIssuer(JWT_ISSUER)
        .setAudience(JWT_AUDIENCE)
        .setExpirationTime("5m")
        .sign(new TextEncoder().encode(secret));
    expect(await verifier.verify(await sign("HS256"))).toEqual({ orgId: "acme", userId: "ann" });
    for (const alg of ["HS384", "HS512"])
      await expect(verifier.verify(await sign(alg))).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("refuses to start JWT auth without an issuer and an audience", () => {
    expect(() => createJwtVerifier(loadConfig({ MNEMO_JWT_SECRET: "x".repeat(40) }))).toThrow(
      /MNEMO_JWT_ISSUER and MNEMO_JWT_AUDIENCE/,
    );
    expect(createJwtVerifier(loadConfig({}))).toBeUndefined();
  });

  it("refuses a token when JWTs are not configured", async () => {
    const token = await signToken(k1, { org: newOrgId() });
    await expect(authenticate(svc.deps.db, { authorization: `Bearer ${token}` })).rejects.toMatchObject({
      code: "unauthorized",
    });
    const ok = await authenticate(svc.deps.db, { authorization: `Bearer ${token}` }, { jwt: verifierOf() });
    expect(ok.via).toBe("jwt");
    expect(ok.userId).toBe("user_1");
    expect(ok.keyId).toBeNull();
  });
});
