import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../rest/app.js";
import { systemCtx } from "../src/context.js";
import { createDb } from "../src/db/db.js";
import { writeMemories } from "../src/memories/write.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";
import {
  type JwksServer,
  jwtEnv,
  newSigningKey,
  type SigningKey,
  signToken,
  startJwksServer,
} from "./helpers/jwks-server.js";
import { callErr, callOk, httpClient } from "./helpers/mcp-client.js";

let svc: TestService;
let jwks: JwksServer;
let k1: SigningKey;

beforeAll(async () => {
  k1 = await newSigningKey("k1");
  jwks = await startJwksServer([k1.jwk]);
  svc = await startTestService({ env: jwtEnv(jwks.url), workers: false });
});
afterAll(async () => {
  await svc?.stop();
  await jwks?.close();
});

const newIdpOrg = () => `idp_org_${randomBytes(6).toString("hex")}`;
const asJwt = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe("service keys", () => {
  it("generates a key from a JWT, once, usable as a bearer key of that user", async () => {
    const org = newIdpOrg();
    const token = await signToken(k1, { org, sub: "user_ann" });
    const r = await svc.request("POST", "/v1/auth/generate-service-key", {
      ...asJwt(token),
      body: { name: "ci" },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      object: "service_key",
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^mnemo_/),
      prefix: "mnemo_",
      last_four: r.body.key.slice(-4),
      org_id: org,
      user_id: "user_ann",
      name: "ci",
      created_at: expect.any(String),
    });
    const used = await svc.request("GET", "/v1/auth/service-keys", {
      headers: { authorization: `Bearer ${r.body.key}` },
    });
    expect(used.status).toBe(200);
    const listed = used.body.data.find((k: { id: string }) => k.id === r.body.id);
    expect(listed).toMatchObject({ kind: "service", user_id: "user_ann", org_id: org, name: "ci" });
    // Masked: never the key itself.
    expect(used.text).not.toContain(r.body.key);
    expect(listed.display).toBe(`mnemo_...${r.body.key.slice(-4)}`);
    // Without a body: a key with no name.
    const bare = await svc.request("POST", "/v1/auth/generate-service-key", asJwt(token));
    expect(bare.status).toBe(201);
    expect(bare.body.name).toBeNull();
    expect(bare.body.key).not.toBe(r.body.key);
  });

  it("refuses key generation with an API key (401)", async () => {
    const { key } = await svc.newOrg();
    const r = await svc.request("POST", "/v1/auth/generate-service-key", { key });
    expect(r.status).toBe(401);
    expect(r.body.detail.code).toBe("unauthorized");
    const bearer = await svc.request("POST", "/v1/auth/generate-service-key", {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(bearer.status).toBe(401);
  });

  it("lists keys with created and last-used times, only the caller's organisation's", async () => {
    const { orgId, key } = await svc.newOrg();
    const other = await svc.newOrg();
    const r = await svc.request("GET", "/v1/auth/service-keys", { key });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    const [k] = r.body.data;
    expect(k.org_id).toBe(orgId);
    expect(k.last_four).toBe(key.slice(-4));
    expect(Date.parse(k.created_at)).not.toBeNaN();
    // The key was used by this very request (recorded in the background).
    const used = await waitFor(async () => {
      const again = await svc.request("GET", "/v1/auth/service-keys", { key: other.key });
      expect(again.body.data.every((x: { org_id: string }) => x.org_id === other.orgId)).toBe(true);
      const mine = await svc.request("GET", "/v1/auth/service-keys", { key });
      return mine.body.data[0].last_used_at as string | null;
    });
    expect(Date.parse(used)).not.toBeNaN();
  });

  it("revokes: 204, then the key is 401 on the very next request, on another process too", async () => {
    const org = newIdpOrg();
    const token = await signToken(k1, { org });
    const made = await svc.request("POST", "/v1/auth/generate-service-key", asJwt(token));
    const key = made.body.key as string;
    expect((await svc.request("GET", "/v1/auth/service-keys", { key })).status).toBe(200);

    // A second app on its own connection pool stands in for another API process.
    const otherDb = createDb(svc.connectionString, 2);
    const otherApp = createApp({ ...svc.deps, db: otherDb });
    try {
      const before = await otherApp.request("/v1/auth/service-keys", { headers: { "x-api-key": key } });
      expect(before.status).toBe(200);

      const del = await svc.request("DELETE", `/v1/auth/service-keys/${made.body.id}`, asJwt(token));
      expect(del.status).toBe(204);
      expect(del.text).toBe("");

      const here = await svc.request("GET", "/v1/auth/service-keys", { key });
      expect(here.status).toBe(401);
      expect(here.body.detail.code).toBe("unauthorized");
      const there = await otherApp.request("/v1/auth/service-keys", { headers: { "x-api-key": key } });
      expect(there.status).toBe(401);
    } finally {
      await otherDb.pool.end();
    }
    // Gone from the listing; revoking again is still 204.
    const list = await svc.request("GET", "/v1/auth/service-keys", asJwt(token));
    expect(list.body.data.map((k: { id: string }) => k.id)).not.toContain(made.body.id);
    expect((await svc.request("DELETE", `/v1/auth/service-keys/${made.body.id}`, asJwt(token))).status).toBe(
      204,
    );
  });

  it("cannot revoke another organisation's key (404 key_not_found)", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const listed = await svc.request("GET", "/v1/auth/service-keys", { key: b.key });
    const bKeyId = listed.body.data[0].id;
    const r = await svc.request("DELETE", `/v1/auth/service-keys/${bKeyId}`, { key: a.key });
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe("key_not_found");
    expect((await svc.request("GET", "/v1/auth/service-keys", { key: b.key })).status).toBe(200);
  });

  it("a key minted from user_1's token acts only for user_1 (REST and MCP)", async () => {
    const org = newIdpOrg();
    const mint = async (sub: string) =>
      (await svc.request("POST", "/v1/auth/generate-service-key", asJwt(await signToken(k1, { org, sub }))))
        .body;
    const one = await mint("user_1");
    const two = await mint("user_2");
    const ingest = (key: string, user: string) =>
      svc.request("POST", "/v1/memories", {
        key,
        body: {
          user_id: user,
          conv_id: "c",
          messages: [{ role: "user", content: `I am ${user} and I like tea.` }],
        },
      });
    expect((await ingest(two.key, "user_2")).status).toBe(202);
    expect((await ingest(one.key, "user_1")).status).toBe(202);
    await writeMemories(systemCtx(svc.deps, org, "seed"), [
      { type: "fact", text: "user_2 likes tea", user_id: "user_2" },
      { type: "fact", text: "user_1 likes tea", user_id: "user_1" },
    ]);

    // The four probes of the report: list, search, ingest as user_2, revoke user_2's key.
    const list = await svc.request("GET", "/v1/memories?user_id=user_2", { key: one.key });
    expect(list.status).toBe(403);
    expect(list.body.detail.code).toBe("user_mismatch");
    const own = await svc.request("GET", "/v1/memories", { key: one.key });
    expect(own.body.data.length).toBeGreaterThan(0);
    expect(own.body.data.every((m: { user_id: string }) => m.user_id === "user_1")).toBe(true);
    const search = await svc.request("POST", "/v1/memories/search", {
      key: one.key,
      body: { query: "tea", user_id: "user_2" },
    });
    expect(search.status).toBe(403);
    const asTwo = await ingest(one.key, "user_2");
    expect(asTwo.status).toBe(403);
    expect(asTwo.body.detail.code).toBe("user_mismatch");
    const revoke = await svc.request("DELETE", `/v1/auth/service-keys/${two.id}`, { key: one.key });
    expect(revoke.status).toBe(404);
    expect(revoke.body.detail.code).toBe("key_not_found");
    expect((await svc.request("GET", "/v1/auth/service-keys", { key: two.key })).status).toBe(200);
    const listed = await svc.request("GET", "/v1/auth/service-keys", { key: one.key });
    expect(listed.body.data.map((k: { id: string }) => k.id)).toEqual([one.id]);

    // The same over MCP: the key's user is the default, another one is refused.
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": one.key },
    });
    try {
      const { tools } = await client.listTools();
      const mine = await callOk(client, tools, "list_memories", {});
      expect(mine.structured.data.length).toBeGreaterThan(0);
      expect(mine.structured.data.every((m: { user_id: string }) => m.user_id === "user_1")).toBe(true);
      expect(await callErr(client, "search_memory", { query: "tea", user_id: "user_2" })).toMatch(
        /user_mismatch/,
      );
      expect(await callErr(client, "list_memories", { user_id: "user_2" })).toMatch(/user_mismatch/);
      expect(await callErr(client, "add_memory", { user_id: "user_2", text: "x", wait: false })).toMatch(
        /user_mismatch/,
      );
      const added = await callOk(client, tools, "add_memory", { text: "I like green tea.", wait: false });
      const { rows } = await svc.deps.db.query("SELECT request FROM ingest_jobs WHERE id = $1", [
        added.structured.id,
      ]);
      expect(rows[0].request.user_id).toBe("user_1");
    } finally {
      await client.close();
    }
  });
});
