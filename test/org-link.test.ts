import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrg, linkOrg } from "../src/admin/orgs.js";
import { DEFAULT_ORG_ID } from "../src/auth/bootstrap.js";
import { createApiKey } from "../src/auth/keys.js";
import { getOrg, insertOrgIfMissing } from "../src/db/orgs.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET, signToken } from "./helpers/jwks-server.js";
import {
  freePort,
  type MnemoProcess,
  migratedDataDir,
  ROOT,
  runMnemo,
  spawnMnemo,
} from "./helpers/process.js";
import { createTestDatabase, onServer, type TestDatabase } from "./helpers/test-db.js";

/**
 * Identity-provider organisations and operator organisations share one id space: a token may only
 * enter an organisation a token created, or one the operator linked (`admin link-org`).
 */
const JWT_ENV = {
  MNEMO_JWT_SECRET: JWT_SECRET,
  MNEMO_JWT_ISSUER: JWT_ISSUER,
  MNEMO_JWT_AUDIENCE: JWT_AUDIENCE,
};

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: JWT_ENV, workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const asToken = async (org: string, sub = "mallory") =>
  svc.request("GET", "/v1/memories", {
    headers: { authorization: `Bearer ${await signToken("secret", { org, sub })}` },
  });

describe("organisation origin", () => {
  it("a token naming the bootstrap organisation (org_default) is refused, 403 org_not_linked", async () => {
    const r = await asToken(DEFAULT_ORG_ID);
    expect(r.status).toBe(403);
    expect(r.body.detail.code).toBe("org_not_linked");
    expect(r.body.detail.message).toContain("npm run --silent admin -- link-org --org org_default");
    expect((await getOrg(svc.deps.db, DEFAULT_ORG_ID))?.origin).toBe("operator");
  });

  it("a token naming an operator-made organisation is refused until the operator links it", async () => {
    const { org_id } = await createOrg(svc.deps.db, { name: "acme" });
    expect((await asToken(org_id)).status).toBe(403);
    const linked = await linkOrg(svc.deps.db, { orgId: org_id, linked: true });
    expect(linked).toMatchObject({ org_id, origin: "operator", tokens_may_enter: true });
    expect((await asToken(org_id)).status).toBe(200);
    // Linking twice keeps the first time; unlinking closes the door again.
    expect((await linkOrg(svc.deps.db, { orgId: org_id, linked: true })).idp_linked_at).toBe(
      linked.idp_linked_at,
    );
    expect((await linkOrg(svc.deps.db, { orgId: org_id, linked: false })).tokens_may_enter).toBe(false);
    expect((await asToken(org_id)).status).toBe(403);
    await expect(linkOrg(svc.deps.db, { orgId: "org_nope", linked: true })).rejects.toMatchObject({
      code: "not_found",
    });
  });

  it("an organisation created from a token is marked as the identity provider's and stays open to tokens", async () => {
    const org = `idp_${Date.now()}`;
    expect((await asToken(org)).status).toBe(200);
    expect(await getOrg(svc.deps.db, org)).toMatchObject({
      origin: "identity_provider",
      idp_linked_at: null,
    });
    expect((await asToken(org, "someone_else")).status).toBe(200);
  });

  it("the migration marks existing token-made organisations, never operator ones", async () => {
    const stamp = Date.now();
    const fromToken = `idp_old_${stamp}`;
    const operatorNamedLikeId = `org_old_${stamp}`;
    await insertOrgIfMissing(svc.deps.db, { id: fromToken, name: fromToken });
    await createApiKey(svc.deps.db, { orgId: fromToken, userId: "u", kind: "service" });
    await insertOrgIfMissing(svc.deps.db, { id: operatorNamedLikeId, name: operatorNamedLikeId });
    await createApiKey(svc.deps.db, { orgId: operatorNamedLikeId, name: "admin" });
    const sql = readFileSync(path.join(ROOT, "sql/073_org_origin.sql"), "utf8");
    await svc.deps.db.query(sql.slice(sql.indexOf("UPDATE organisations")));
    expect((await getOrg(svc.deps.db, fromToken))?.origin).toBe("identity_provider");
    expect((await getOrg(svc.deps.db, operatorNamedLikeId))?.origin).toBe("operator");
    expect((await getOrg(svc.deps.db, DEFAULT_ORG_ID))?.origin).toBe("operator");
  });
});

describe("admin link-org, against a running server process", () => {
  const dataDir = migratedDataDir("mn-link-");
  let server: MnemoProcess | undefined;
  // In the PostgreSQL pass a copy of the template there, for the server and the commands alike
  // (without one, the embedded database in an empty directory: PGlite's initdb and every migration).
  let serverDb: TestDatabase | undefined;
  afterAll(async () => {
    await server?.kill("SIGTERM");
    await serverDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("links org_default so tokens naming it enter, and unlinks it", async () => {
    const port = await freePort();
    if (onServer()) serverDb = await createTestDatabase();
    const env = { MNEMO_DATA_DIR: dataDir, ...(serverDb ? { DATABASE_URL: serverDb.url } : {}), ...JWT_ENV };
    server = spawnMnemo(["serve"], { ...env, PORT: String(port) });
    await server.waitFor(/"msg":"listening"/, 180_000);
    const call = async () =>
      (
        await fetch(`http://127.0.0.1:${port}/v1/memories`, {
          headers: { authorization: `Bearer ${await signToken("secret", { org: DEFAULT_ORG_ID })}` },
        })
      ).status;
    expect(await call()).toBe(403);
    const link = await runMnemo(["admin", "link-org", "--org", DEFAULT_ORG_ID, "--json"], {
      ...env,
      LOG_LEVEL: "warn",
    });
    expect(link.code, link.stderr).toBe(0);
    expect(JSON.parse(link.stdout)).toMatchObject({ org_id: DEFAULT_ORG_ID, tokens_may_enter: true });
    expect(await call()).toBe(200);
    const unlink = await runMnemo(["admin", "link-org", "--org", DEFAULT_ORG_ID, "--unlink", "--json"], {
      ...env,
      LOG_LEVEL: "warn",
    });
    expect(JSON.parse(unlink.stdout)).toMatchObject({ tokens_may_enter: false });
    expect(await call()).toBe(403);
  }, 420_000);
});
