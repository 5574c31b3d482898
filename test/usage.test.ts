import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, createOrg } from "../src/admin/orgs.js";
import { systemCtx } from "../src/context.js";
import { hitRateLimit } from "../src/db/rate-limits.js";
import { storageCounts } from "../src/db/usage.js";
import { writeMemories } from "../src/memories/write.js";
import { recordUsage } from "../src/usage/record.js";
import { UsageSchema } from "../src/wire/usage.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { ROOT } from "./helpers/process.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    workers: false,
    env: {
      MNEMO_RATE_TIERS: JSON.stringify({
        capped: { per_minute: 100, per_day: null, messages_per_month: 1000, searches_per_month: 50 },
      }),
    },
  });
});
afterAll(async () => {
  await svc?.stop();
});

const keyIdOf = async (key: string) => {
  const r = await svc.request("GET", "/v1/auth/service-keys", { key });
  return r.body.data.find((k: { last_four: string }) => k.last_four === key.slice(-4)).id as string;
};

describe("usage", () => {
  it("reports what was done this month: operations, per day, per key, storage, tier", async () => {
    const { orgId, key } = await svc.newOrg();
    const second = await createKey(svc.deps.db, { orgId, name: "second" });
    const key1Id = await keyIdOf(key); // request 1 of key 1
    const db = svc.deps.db;
    await recordUsage(db, { orgId, keyId: key1Id, messages: 5 });
    await recordUsage(db, { orgId, keyId: key1Id, searches: 3 });
    await recordUsage(db, { orgId, keyId: second.key_id, messages: 2 });
    await recordUsage(db, { orgId, keyId: null, searches: 1 });
    for (let i = 0; i < 3; i++) await svc.request("GET", "/v1/auth/service-keys", { key }); // 2..4
    for (let i = 0; i < 2; i++) await svc.request("GET", "/v1/nope", { key: second.api_key }); // 404s count too

    const ctx = systemCtx(svc.deps, orgId, "usage-test");
    await writeMemories(ctx, [
      { type: "fact", text: "Ann likes tea", status: "active", user_id: "ann" },
      { type: "fact", text: "Ann lives in Oslo", status: "active", user_id: "ann" },
      { type: "fact", text: "Ann lived in Bergen", status: "superseded", user_id: "ann" },
      { type: "fact", text: "Bob plays chess", status: "active", user_id: "bob" },
      { type: "episode", text: "Talked about tea", user_id: "ann" },
      { type: "episode", text: "Talked about chess", user_id: "bob" },
      { type: "artifact", text: "A poem", user_id: "ann", details: { title: "Poem" } },
      { type: "lesson", text: "Run tests first", trigger_entities: ["npm"] },
    ]);

    const r = await svc.request("GET", "/v1/usage?daily=true&by_api_key=true", { key }); // request 5
    expect(r.status).toBe(200);
    const u = r.body;
    const { rows } = await db.query("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS today");
    const today: string = rows[0].today;
    expect(u.object).toBe("usage");
    expect(UsageSchema.strict().safeParse(u).error).toBeUndefined();
    expect(u.org_id).toBe(orgId);
    expect(u.period).toMatchObject({
      month: today.slice(0, 7),
      start: `${today.slice(0, 7)}-01`,
      end: expect.stringMatching(new RegExp(`^${today.slice(0, 7)}-(28|29|30|31)$`)),
    });
    // The hosted shape beside ours.
    expect(u.period).toEqual({
      key: today.slice(0, 7),
      type: "calendar_month",
      month: today.slice(0, 7),
      start: `${today.slice(0, 7)}-01`,
      end: expect.stringMatching(new RegExp(`^${today.slice(0, 7)}-(28|29|30|31)$`)),
    });
    expect(u.as_of.slice(0, 10)).toBe(today);
    expect(new Date(u.as_of).toISOString()).toBe(u.as_of);
    const nextMonth = new Date(`${today.slice(0, 7)}-01T00:00:00.000Z`);
    nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1);
    expect(u.quota).toEqual({
      rate_limit_req_per_min: 600,
      monthly: {
        period_key: today.slice(0, 7),
        resets_at: nextMonth.toISOString(),
        messages_ingested: { used: 7, limit: null },
        searches: { used: 4, limit: null },
      },
    });
    expect(u.tier).toBe("default");
    expect(u.limits).toEqual({ requests_per_minute: 600, requests_per_day: 50_000 });
    expect(u.operations).toEqual({ messages_ingested: 7, searches: 4, requests: 7 });
    expect(u.storage).toMatchObject({
      memories_active: 3,
      episodes_active: 2,
      artifacts_active: 1,
      directives_active: 1,
    });
    expect(u.storage).toEqual({
      memories_active: 3,
      episodes_active: 2,
      artifacts_active: 1,
      directives_active: 1,
      as_of: u.as_of,
    });
    expect(u.daily).toEqual([{ date: today, messages_ingested: 7, searches: 4, requests: 7 }]);
    const byKey = Object.fromEntries(
      u.by_api_key.map((k: { api_key_id: string | null }) => [k.api_key_id, k]),
    );
    expect(byKey[key1Id]).toMatchObject({ messages_ingested: 5, searches: 3, requests: 5, kind: "api" });
    expect(byKey[key1Id].display).toBe(`mnemo_...${key.slice(-4)}`);
    expect(byKey[second.key_id]).toMatchObject({
      messages_ingested: 2,
      searches: 0,
      requests: 2,
      name: "second",
    });
    expect(byKey.null).toMatchObject({ searches: 1, requests: 0 });
    // Hosted fields: the stored SHA-256 hex of the key, its display prefix, when it was last used.
    const { rows: stored } = await db.query(
      "SELECT id, key_hash, prefix, last_used_at FROM api_keys WHERE org_id = $1",
      [orgId],
    );
    const hashOf = Object.fromEntries(stored.map((k: any) => [k.id, k]));
    expect(byKey[key1Id].api_key_hash).toBe(hashOf[key1Id].key_hash);
    expect(byKey[key1Id].api_key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(byKey[key1Id].first_n).toBe(hashOf[key1Id].prefix);
    expect(key.startsWith(byKey[key1Id].first_n)).toBe(true);
    expect(byKey[key1Id].last_used_at).toBe(hashOf[key1Id].last_used_at?.toISOString() ?? null);
    expect(Object.keys(byKey[key1Id]).sort()).toEqual(
      [
        "api_key_hash",
        "first_n",
        "name",
        "messages_ingested",
        "searches",
        "requests",
        "last_used_at",
        "api_key_id",
        "kind",
        "display",
      ].sort(),
    );
    expect(byKey.null).toMatchObject({ api_key_hash: null, first_n: null, last_used_at: null });

    // Without the flags: no breakdowns. Another organisation sees none of this.
    const plain = await svc.request("GET", "/v1/usage", { key });
    // Absent breakdowns are null (hosted shape), never omitted.
    expect(plain.body.daily).toBeNull();
    expect(plain.body.by_api_key).toBeNull();
    expect(plain.body).toHaveProperty("daily", null);
    const other = await svc.newOrg();
    const theirs = await svc.request("GET", "/v1/usage", { key: other.key });
    expect(theirs.body.operations).toEqual({ messages_ingested: 0, searches: 0, requests: 1 });
    expect(theirs.body.storage.memories_active).toBe(0);
  });

  it("keeps months apart and answers for a chosen month", async () => {
    const { orgId, key } = await svc.newOrg();
    const keyId = await keyIdOf(key);
    // Requests counted by the limiter on a clock in another month.
    for (const at of ["2030-01-31T23:59:59Z", "2030-02-01T00:00:00Z", "2030-02-01T00:00:01Z"]) {
      const hit = await hitRateLimit(svc.deps.db, {
        subject: keyId,
        perMinute: 600,
        perDay: 50_000,
        orgId,
        keyId,
        at: new Date(at),
      });
      expect(hit.admitted).toBe(true);
    }
    const jan = await svc.request("GET", "/v1/usage?month=2030-01&daily=true", { key });
    expect(jan.body.period).toMatchObject({ month: "2030-01", start: "2030-01-01", end: "2030-01-31" });
    expect(jan.body.period).toEqual({
      key: "2030-01",
      type: "calendar_month",
      month: "2030-01",
      start: "2030-01-01",
      end: "2030-01-31",
    });
    expect(jan.body.quota.monthly).toMatchObject({
      period_key: "2030-01",
      resets_at: "2030-02-01T00:00:00.000Z",
    });
    expect(jan.body.operations.requests).toBe(1);
    expect(jan.body.daily).toEqual([{ date: "2030-01-31", messages_ingested: 0, searches: 0, requests: 1 }]);
    const feb = await svc.request("GET", "/v1/usage?month=2030-02&daily=1", { key });
    expect(feb.body.period.end).toBe("2030-02-28");
    expect(feb.body.daily).toEqual([{ date: "2030-02-01", messages_ingested: 0, searches: 0, requests: 2 }]);
    const bad = await svc.request("GET", "/v1/usage?month=2030-13", { key });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual({ code: "invalid_month", message: expect.any(String), field: "month" });
    expect(bad.body.error.details.issues[0].loc).toEqual(["query", "month"]);
  });

  it("refuses year 0000 (no such month: it was read as 1 BC, echoed as 0001 with BC dates)", async () => {
    const { key } = await svc.newOrg();
    for (const month of ["0000-01", "0000-12"]) {
      const r = await svc.request("GET", `/v1/usage?month=${month}`, { key });
      expect(r.status, month).toBe(422);
      expect(r.body.detail).toEqual({ code: "invalid_month", message: expect.any(String), field: "month" });
    }
    const first = await svc.request("GET", "/v1/usage?month=0001-01", { key });
    expect(first.body.period).toMatchObject({ month: "0001-01", start: "0001-01-01", end: "0001-01-31" });
  });

  it("counts concurrent updates exactly (no lost increments)", async () => {
    const { orgId, key } = await svc.newOrg();
    const keyId = await keyIdOf(key);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        recordUsage(svc.deps.db, { orgId, keyId: i % 2 ? keyId : null, messages: 2, searches: 1 }),
      ),
    );
    const r = await svc.request("GET", "/v1/usage", { key });
    expect(r.body.operations).toEqual({ messages_ingested: 80, searches: 40, requests: 2 });
  });

  it("counts requests of an unlimited tier too, and shows no limits", async () => {
    const o = await createOrg(svc.deps.db, { name: "free", tier: "unlimited" });
    await svc.request("GET", "/v1/auth/service-keys", { key: o.api_key });
    const r = await svc.request("GET", "/v1/usage", { key: o.api_key });
    expect(r.body.tier).toBe("unlimited");
    expect(r.body.limits).toEqual({ requests_per_minute: null, requests_per_day: null });
    expect(r.body.operations.requests).toBe(2);
    expect(r.body.quota.rate_limit_req_per_min).toBeNull();
    expect(r.body.quota.monthly.messages_ingested).toEqual({ used: 0, limit: null });
  });

  it("reports a tier's monthly caps in quota.monthly", async () => {
    const o = await createOrg(svc.deps.db, { name: "capped", tier: "capped" });
    const keyId = await keyIdOf(o.api_key);
    await recordUsage(svc.deps.db, { orgId: o.org_id, keyId, messages: 12, searches: 3 });
    const r = await svc.request("GET", "/v1/usage", { key: o.api_key });
    expect(r.body.tier).toBe("capped");
    expect(r.body.quota.rate_limit_req_per_min).toBe(100);
    expect(r.body.quota.monthly.messages_ingested).toEqual({ used: 12, limit: 1000 });
    expect(r.body.quota.monthly.searches).toEqual({ used: 3, limit: 50 });
  });

  it("enforces the monthly caps: 429 monthly_quota_exceeded until the month resets", async () => {
    const o = await createOrg(svc.deps.db, { name: "capped2", tier: "capped" });
    const keyId = await keyIdOf(o.api_key);
    const monthlyRefusals = async () =>
      (await svc.deps.metrics.rateLimited.get()).values.find(
        (v) => v.labels.code === "monthly_quota_exceeded",
      )?.value ?? 0;
    const refusalsBefore = await monthlyRefusals();
    await recordUsage(svc.deps.db, { orgId: o.org_id, keyId, messages: 998, searches: 49 });
    const turn = (content: string) => ({ role: "user", content });
    const body = (n: number) => ({
      user_id: "u",
      conv_id: "c",
      messages: Array.from({ length: n }, () => turn("hi")),
    });
    // 998 + 3 > 1000: refused, and nothing was counted; 998 + 2 fits exactly.
    const over = await svc.request("POST", "/v1/memories", { key: o.api_key, body: body(3) });
    expect(over.status).toBe(429);
    expect(over.body.detail.code).toBe("monthly_quota_exceeded");
    expect(over.body.error).toMatchObject({ type: "rate_limit_error", code: "monthly_quota_exceeded" });
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await svc.request("POST", "/v1/memories", { key: o.api_key, body: body(2) })).status).toBe(202);
    expect((await svc.request("POST", "/v1/memories", { key: o.api_key, body: body(1) })).status).toBe(429);
    // One search left of 50, then refused; trigger counts as a search too.
    const search = () =>
      svc.request("POST", "/v1/memories/search", {
        key: o.api_key,
        body: { query: "tea", user_id: "u", mode: "retrieve" },
      });
    expect((await search()).status).toBe(200);
    const refused = await search();
    expect(refused.status).toBe(429);
    expect(refused.body.detail.code).toBe("monthly_quota_exceeded");
    const trig = await svc.request("POST", "/v1/memories/trigger", {
      key: o.api_key,
      body: { entities: ["npm"], user_id: "u", mode: "retrieve" },
    });
    expect(trig.body.detail.code).toBe("monthly_quota_exceeded");
    // Each of the four refusals is counted in mnemo_rate_limited_total, as the per-minute ones are.
    expect((await monthlyRefusals()) - refusalsBefore).toBe(4);
    const usage = await svc.request("GET", "/v1/usage", { key: o.api_key });
    expect(usage.body.quota.monthly.messages_ingested).toEqual({ used: 1000, limit: 1000 });
    expect(usage.body.quota.monthly.searches).toEqual({ used: 50, limit: 50 });
    // Another tier without caps is never refused.
    const free = await svc.newOrg();
    await recordUsage(svc.deps.db, { orgId: free.orgId, keyId: null, messages: 10_000_000 });
    expect((await svc.request("POST", "/v1/memories", { key: free.key, body: body(1) })).status).toBe(202);
  });
});

describe("monthly caps under a burst", () => {
  it("admit exactly what fits: concurrent ingests and searches at the cap never pass it", async () => {
    const o = await createOrg(svc.deps.db, { name: "capped3", tier: "capped" });
    const keyId = await keyIdOf(o.api_key);
    await recordUsage(svc.deps.db, { orgId: o.org_id, keyId, messages: 990, searches: 40 });
    const ingests = await Promise.all(
      Array.from({ length: 12 }, () =>
        svc.request("POST", "/v1/memories", {
          key: o.api_key,
          body: {
            user_id: "u",
            conv_id: "c",
            messages: [
              { role: "user", content: "hi" },
              { role: "user", content: "yo" },
            ],
          },
        }),
      ),
    );
    // 10 messages left: five ingests of two.
    expect(ingests.filter((r) => r.status === 202)).toHaveLength(5);
    expect(ingests.filter((r) => r.status === 429)).toHaveLength(7);
    const searches = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        svc.request("POST", i % 4 ? "/v1/memories/search" : "/v1/memories/trigger", {
          key: o.api_key,
          body:
            i % 4 ? { query: "tea", user_id: "u", mode: "retrieve" } : { entities: ["npm"], user_id: "u" },
        }),
      ),
    );
    // 10 searches left (a trigger counts as one).
    expect(searches.filter((r) => r.status === 200)).toHaveLength(10);
    expect(searches.filter((r) => r.status === 429)).toHaveLength(6);
    const usage = await svc.request("GET", "/v1/usage", { key: o.api_key });
    expect(usage.body.quota.monthly.messages_ingested).toEqual({ used: 1000, limit: 1000 });
    expect(usage.body.quota.monthly.searches).toEqual({ used: 50, limit: 50 });
  });
});

describe("usage by key for a credential confined to a user", () => {
  it("lists its own user's keys only, not the no-key line of every user's tokens, chosen in the statement", async () => {
    const { orgId, key } = await svc.newOrg();
    const mine = await createKey(svc.deps.db, { orgId, name: "mine", userId: "ann" });
    const also = await createKey(svc.deps.db, { orgId, name: "also mine", userId: "ann" });
    const theirs = await createKey(svc.deps.db, { orgId, name: "theirs", userId: "bob" });
    for (const k of [mine.api_key, also.api_key, theirs.api_key, key])
      expect((await svc.request("GET", "/v1/groups", { key: k })).status).toBe(200);
    await recordUsage(svc.deps.db, { orgId, keyId: null, searches: 1 });
    const r = await svc.request("GET", "/v1/usage?by_api_key=true", { key: mine.api_key });
    expect(r.status).toBe(200);
    const ids = r.body.by_api_key.map((k: { api_key_id: string | null }) => k.api_key_id).sort();
    expect(ids).toEqual([mine.key_id, also.key_id].sort());
    // The organisation's key sees every line.
    const all = await svc.request("GET", "/v1/usage?by_api_key=true", { key });
    expect(all.body.by_api_key).toHaveLength(5);
  });
});

describe("usage for a credential confined to a user", () => {
  it("shows its own user's operations, days, quota use and stored memories, not the organisation's", async () => {
    const { orgId, key } = await svc.newOrg();
    const ann = await createKey(svc.deps.db, { orgId, name: "ann", userId: "ann" });
    const bob = await createKey(svc.deps.db, { orgId, name: "bob", userId: "bob" });
    await recordUsage(svc.deps.db, { orgId, keyId: ann.key_id, messages: 2, searches: 1 });
    await recordUsage(svc.deps.db, { orgId, keyId: bob.key_id, messages: 40, searches: 9 });
    // Every user's identity-provider tokens count on the line of no key.
    await recordUsage(svc.deps.db, { orgId, keyId: null, messages: 100 });
    const ctx = systemCtx(svc.deps, orgId, "usage-confined");
    for (const [user, n] of [
      ["ann", 2],
      ["bob", 11],
    ] as const)
      await writeMemories(
        ctx,
        Array.from({ length: n }, (_, i) => ({
          type: "fact" as const,
          text: `fact ${i} of ${user}`,
          user_id: user,
          status: "active" as const,
        })),
      );
    await writeMemories(ctx, [{ type: "episode", text: "bob's session", user_id: "bob" }]);
    // One request each (counted by the rate limiter), the organisation's key twice.
    for (const k of [ann.api_key, bob.api_key, key, key])
      expect((await svc.request("GET", "/v1/groups", { key: k })).status).toBe(200);

    const mine = await svc.request("GET", "/v1/usage?daily=true", { key: ann.api_key });
    expect(mine.status).toBe(200);
    expect(UsageSchema.safeParse(mine.body).success).toBe(true);
    // Its own request to /v1/usage is counted before the figures are read.
    expect(mine.body.operations).toEqual({ messages_ingested: 2, searches: 1, requests: 2 });
    expect(mine.body.daily.map((d: any) => d.messages_ingested)).toEqual([2]);
    expect(mine.body.quota.monthly.messages_ingested.used).toBe(2);
    expect(mine.body.storage).toMatchObject({ memories_active: 2, episodes_active: 0 });

    const all = await svc.request("GET", "/v1/usage?daily=true", { key });
    expect(all.body.operations).toEqual({ messages_ingested: 142, searches: 10, requests: 6 });
    expect(all.body.storage).toMatchObject({ memories_active: 13, episodes_active: 1 });
  });
});

describe("storage counts", () => {
  /** The counts as a scan of the organisation's memories finds them. */
  const recount = async (orgId: string) =>
    (
      await svc.deps.db.query(
        `SELECT
           count(*) FILTER (WHERE type = 'fact' AND status = 'active')::int AS memories_active,
           count(*) FILTER (WHERE type = 'episode' AND coalesce(status, 'active') = 'active')::int AS episodes_active,
           count(*) FILTER (WHERE type = 'artifact' AND coalesce(status, 'active') = 'active')::int AS artifacts_active,
           count(*) FILTER (WHERE type IN ('lesson', 'procedure') AND coalesce(status, 'active') = 'active')::int
             AS directives_active
         FROM memories WHERE org_id = $1`,
        [orgId],
      )
    ).rows[0];

  it("follow every kind of write, concurrent ones included, without reading the memories", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const write = (orgId: string, n: number, type: "fact" | "episode" | "lesson" = "fact") =>
      writeMemories(
        systemCtx(svc.deps, orgId, "usage-test"),
        Array.from({ length: n }, (_, i) => ({
          type,
          text: `${type} number ${i} of ${n}`,
          user_id: "ann",
          ...(type === "fact" ? { status: "active" as const } : {}),
          ...(type === "lesson" ? { trigger_entities: ["npm"] } : {}),
        })),
      );
    // Concurrent writers (separate connections on a server: separate shards).
    await Promise.all([
      write(a.orgId, 30),
      write(a.orgId, 20),
      write(b.orgId, 7),
      write(a.orgId, 4, "episode"),
    ]);
    await write(a.orgId, 3, "lesson");
    expect(await storageCounts(svc.deps.db, a.orgId)).toEqual(await recount(a.orgId));
    expect(await recount(a.orgId)).toEqual({
      memories_active: 50,
      episodes_active: 4,
      artifacts_active: 0,
      directives_active: 3,
    });
    expect(await storageCounts(svc.deps.db, b.orgId)).toEqual(await recount(b.orgId));

    // A text PATCH supersedes a fact (one more row, the old one superseded); a delete; a status
    // written by hand; an update that changes nothing counted.
    const list = await svc.request("GET", "/v1/memories?type=fact&limit=3", { key: a.key });
    const [f1, f2, f3] = list.body.data.map((m: { id: string }) => m.id);
    expect(
      (await svc.request("PATCH", `/v1/memories/${f1}/`, { key: a.key, body: { text: "Ann moved" } })).status,
    ).toBe(200);
    expect((await svc.request("DELETE", `/v1/memories/${f2}`, { key: a.key })).status).toBe(204);
    await svc.deps.db.query("UPDATE memories SET status = 'superseded' WHERE id = $1", [f3]);
    await svc.deps.db.query("UPDATE memories SET metadata = '{\"x\": 1}' WHERE org_id = $1", [a.orgId]);
    await svc.deps.db.query(
      "UPDATE memories SET status = 'superseded' WHERE org_id = $1 AND type = 'episode'",
      [a.orgId],
    );
    expect(await recount(a.orgId)).toEqual({
      memories_active: 48,
      episodes_active: 0,
      artifacts_active: 0,
      directives_active: 3,
    });
    expect(await storageCounts(svc.deps.db, a.orgId)).toEqual(await recount(a.orgId));
    expect(await storageCounts(svc.deps.db, b.orgId)).toEqual(await recount(b.orgId));
    const usage = await svc.request("GET", "/v1/usage", { key: a.key });
    expect(usage.body.storage).toMatchObject(await recount(a.orgId));

    // A rolled-back write counts nothing.
    await expect(
      svc.deps.db.tx(async (tx) => {
        await tx.query("DELETE FROM memories WHERE org_id = $1", [a.orgId]);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await storageCounts(svc.deps.db, a.orgId)).toEqual(await recount(a.orgId));
    await svc.deps.db.query("DELETE FROM memories WHERE org_id = $1", [a.orgId]);
    expect(await storageCounts(svc.deps.db, a.orgId)).toEqual({
      memories_active: 0,
      episodes_active: 0,
      artifacts_active: 0,
      directives_active: 0,
    });
    // The read does not touch memories.
    const plan = await svc.deps.db.query("EXPLAIN SELECT sum(facts) FROM storage_counts WHERE org_id = $1", [
      a.orgId,
    ]);
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).not.toContain("memories");
  });

  it("count a fact an older import stored without a status once the upgrade gives it one (sql/099)", async () => {
    const { orgId } = await svc.newOrg();
    const [row] = await writeMemories(systemCtx(svc.deps, orgId, "usage-test"), [
      { type: "fact", text: "Ann likes tea", status: "active", user_id: "ann" },
    ]);
    await svc.deps.db.query("UPDATE memories SET status = NULL WHERE id = $1", [row!.id]);
    expect((await storageCounts(svc.deps.db, orgId)).memories_active).toBe(0);
    await svc.deps.db.query(readFileSync(path.join(ROOT, "sql/099_fact_status.sql"), "utf8"));
    const { rows } = await svc.deps.db.query("SELECT status FROM memories WHERE id = $1", [row!.id]);
    expect(rows[0].status).toBe("active");
    expect((await storageCounts(svc.deps.db, orgId)).memories_active).toBe(1);
  });

  it("are built from the rows already stored when the migration runs on upgrade (sql/098)", async () => {
    const { orgId } = await svc.newOrg();
    const ctx = systemCtx(svc.deps, orgId, "usage-test");
    await writeMemories(ctx, [
      { type: "fact", text: "Ann likes tea", status: "active", user_id: "ann" },
      { type: "fact", text: "Ann lived in Bergen", status: "superseded", user_id: "ann" },
      { type: "episode", text: "Talked about tea", user_id: "ann" },
      { type: "procedure", text: "Deploy with care", trigger_entities: ["deploy.sh"] },
    ]);
    // The database as it stood before the migration, then the migration, as on upgrade.
    const migration = readFileSync(path.join(ROOT, "sql/098_storage_counts.sql"), "utf8");
    await svc.deps.db.tx(async (tx) => {
      await tx.query("DROP TABLE storage_counts");
      await tx.query("DROP FUNCTION mnemo_storage_counts() CASCADE");
      await tx.query("DROP FUNCTION mnemo_storage_kind(text, text)");
      await tx.query(migration);
    });
    const expected = { memories_active: 1, episodes_active: 1, artifacts_active: 0, directives_active: 1 };
    expect(await recount(orgId)).toEqual(expected);
    expect(await storageCounts(svc.deps.db, orgId)).toEqual(expected);
    await writeMemories(ctx, [{ type: "fact", text: "Ann likes coffee", status: "active", user_id: "ann" }]);
    expect(await storageCounts(svc.deps.db, orgId)).toEqual({ ...expected, memories_active: 2 });
  });
});
