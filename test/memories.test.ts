import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryListSchema, MemorySchema } from "../src/wire/memories.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { createGroup, fact, seed } from "./memories-fixtures.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const ids = (r: { body: any }) => r.body.data.map((m: any) => m.id);
const MISSING = "00000000-0000-4000-8000-000000000000";

describe("GET /v1/memories (list)", () => {
  it("lists fact, artifact and episode rows newest first, never directives by default", async () => {
    const { orgId, key } = await svc.newOrg();
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const rows = await seed(svc, orgId, [
      fact("f1", { created_at: t(1) }),
      {
        type: "artifact",
        text: "art",
        full_content: "BODY",
        details: { title: "a.py", version: 1 },
        created_at: t(2),
      },
      { type: "episode", text: "ep", created_at: t(3) },
      { type: "lesson", text: "lesson", trigger_entities: ["x"], created_at: t(4) },
      { type: "procedure", text: "proc", trigger_entities: ["y"], created_at: t(5) },
    ]);
    const r = await svc.request("GET", "/v1/memories", { key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    expect(ids(r)).toEqual([rows[2]!.id, rows[1]!.id, rows[0]!.id]);
    for (const m of r.body.data) {
      expect(m.score).toBeNull();
      expect(m.object).toBe("memory");
      expect(typeof m.details).toBe("object");
      expect(m.details).not.toBeNull();
    }
    const art = r.body.data.find((m: any) => m.type === "artifact");
    expect(art.details).not.toHaveProperty("full_content");
    const asc = await svc.request("GET", "/v1/memories?order=created_at_asc", { key });
    expect(ids(asc)).toEqual([rows[0]!.id, rows[1]!.id, rows[2]!.id]);
  });

  it("filters by entity ids (ANDed), group and type; include=full_content fills artifacts only", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    const rows = await seed(svc, orgId, [
      fact("a", { user_id: "u1", agent_id: "ag1", app_id: "app1", conv_id: "c1", group_ids: [g] }),
      fact("b", { user_id: "u1", agent_id: "ag2", app_id: "app1", conv_id: "c2" }),
      fact("c", { user_id: "u2", agent_id: "ag1", app_id: "app2", conv_id: "c1", group_ids: [g] }),
      { type: "artifact", text: "art", user_id: "u1", full_content: "BODY", group_ids: [g] },
      { type: "episode", text: "ep", user_id: "u2" },
    ]);
    const [a, b, c, art, ep] = rows.map((r) => r.id);
    const get = async (qs: string) => new Set(ids(await svc.request("GET", `/v1/memories?${qs}`, { key })));
    expect(await get("user_id=u1")).toEqual(new Set([a, b, art]));
    expect(await get("user_id=u1&agent_id=ag1")).toEqual(new Set([a]));
    expect(await get("conv_id=c1")).toEqual(new Set([a, c]));
    expect(await get("app_id=app1&conv_id=c2")).toEqual(new Set([b]));
    expect(await get(`group_id=${g}`)).toEqual(new Set([a, c, art]));
    expect(await get(`group_id=${g}&user_id=u2`)).toEqual(new Set([c]));
    expect(await get("type=episode")).toEqual(new Set([ep]));
    expect(await get("type=fact&user_id=u2")).toEqual(new Set([c]));
    expect(await get("user_id=nobody")).toEqual(new Set());
    const full = await svc.request("GET", "/v1/memories?include=full_content", { key });
    // the wire matches the published schema
    expect(MemoryListSchema.safeParse(full.body).success).toBe(true);
    for (const m of full.body.data) {
      if (m.type === "artifact") expect(m.details.full_content).toBe("BODY");
      else expect(m.details).not.toHaveProperty("full_content");
    }
    const row = full.body.data.find((m: any) => m.id === a);
    expect(row).toMatchObject({
      user_id: "u1",
      agent_id: "ag1",
      app_id: "app1",
      conv_id: "c1",
      group_ids: [g],
    });
  });

  it("validates limit, order, type and include with 422 details", async () => {
    const { key } = await svc.newOrg();
    for (const [qs, code, field] of [
      ["limit=0", "invalid_limit", "limit"],
      ["limit=501", "invalid_limit", "limit"],
      ["limit=abc", "invalid_limit", "limit"],
      ["order=newest", "invalid_order", "order"],
      ["type=lesson", "invalid_memory_type", "type"],
      ["include=full_content,context", "unsupported_include_option", "include"],
    ]) {
      const r = await svc.request("GET", `/v1/memories?${qs}`, { key });
      expect(r.status, qs).toBe(422);
      expect(r.body.detail, qs).toEqual({ code, message: expect.any(String), field });
      expect(r.body.error, qs).toMatchObject({ type: "invalid_request_error", code, details: { field } });
      expect(r.body.error.details.issues[0].loc[0]).toBe("query");
    }
    expect((await svc.request("GET", "/v1/memories?limit=500", { key })).status).toBe(200);
    expect((await svc.request("GET", "/v1/memories?limit=1&include=full_content", { key })).status).toBe(200);
  });

  it("a bad limit names the real range; hex, exponent and other non-decimal forms are refused", async () => {
    const { key } = await svc.newOrg();
    const message = (max: number) => `limit: must be an integer from 1 to ${max}`;
    const lists: Array<[string, number]> = [
      ["/v1/memories", 500],
      ["/v1/memories/", 100],
      ["/v1/memories/jobs", 100],
      ["/v1/webhooks/deliveries", 100],
    ];
    const bad = [
      "99999999999999999999999",
      "",
      "1&limit=2",
      "0",
      "0x10",
      "0b11",
      "0o7",
      "1e1",
      "%2B4",
      "3.0",
      "abc",
    ];
    for (const [path, max] of lists) {
      for (const value of bad) {
        const r = await svc.request("GET", `${path}?limit=${value}`, { key });
        const where = `${path}?limit=${value}`;
        expect(r.status, where).toBe(422);
        expect(r.body.detail, where).toEqual({
          code: "invalid_limit",
          message: message(max),
          field: "limit",
        });
      }
      if (!path.includes("webhooks"))
        expect((await svc.request("GET", `${path}?limit=${max}`, { key })).status).toBe(200);
    }
    const bodies: Array<[string, unknown]> = [
      ["/v1/memories/search", { query: "x", user_id: "u1", limit: 1e308 }],
      ["/v1/memories/search/", { query: "x", filters: { user_id: "u1" }, limit: 1e308 }],
      ["/v1/memories/", { filters: { user_id: "u1" }, limit: "0x10" }],
    ];
    for (const [path, body] of bodies) {
      const r = await svc.request("POST", path, { key, body });
      expect(r.body.detail, path).toEqual({ code: "invalid_limit", message: message(100), field: "limit" });
    }
    expect((await svc.request("POST", "/v1/memories/", { key, body: { limit: "10" } })).status).toBe(200);
  });

  it("paginates with limit and next_cursor across tied created_at", async () => {
    const { orgId, key } = await svc.newOrg();
    // one batch: identical created_at, so order falls back to id
    const rows = await seed(
      svc,
      orgId,
      Array.from({ length: 7 }, (_, i) => fact(`f${i}`)),
    );
    const expected = rows
      .map((r) => r.id)
      .sort()
      .reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = `limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const r = await svc.request("GET", `/v1/memories?${qs}`, { key });
      expect(r.status).toBe(200);
      seen.push(...ids(r));
      expect(r.body.has_more).toBe(r.body.next_cursor !== null);
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual(expected);
    expect(pages).toBe(3);
  });

  it("keeps microsecond created_at exact in cursors (rows within one millisecond)", async () => {
    const { orgId, key } = await svc.newOrg();
    const rows = await seed(
      svc,
      orgId,
      Array.from({ length: 5 }, (_, i) => fact(`f${i}`)),
    );
    // PGlite's clock ticks in milliseconds; real Postgres stamps microseconds. Move the rows to
    // distinct (and tied) microsecond instants inside one millisecond to cover that case here.
    const micros = [456, 457, 456, 458, 459];
    for (const [i, r] of rows.entries()) {
      await svc.deps.db.query("UPDATE memories SET created_at = $2::timestamptz WHERE id = $1::uuid", [
        r.id,
        `2026-01-01T00:00:00.123${micros[i]}Z`,
      ]);
    }
    const expected = rows
      .map((r, i) => ({ id: r.id, us: micros[i]! }))
      .sort((a, b) => a.us - b.us || (a.id < b.id ? -1 : 1))
      .map((r) => r.id);
    for (const order of ["created_at_asc", "created_at_desc"]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const qs: string = `limit=1&order=${order}${cursor ? `&cursor=${cursor}` : ""}`;
        const r = await svc.request("GET", `/v1/memories?${qs}`, { key });
        seen.push(...ids(r));
        cursor = r.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(order === "created_at_asc" ? expected : [...expected].reverse());
    }
  });

  it("refuses forged, foreign and other-order cursors with 422 cursor_mismatch", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    await seed(svc, a.orgId, [fact("1"), fact("2"), fact("3")]);
    await seed(svc, b.orgId, [fact("1"), fact("2"), fact("3")]);
    const first = await svc.request("GET", "/v1/memories?limit=1", { key: a.key });
    const cursor: string = first.body.next_cursor;
    expect(typeof cursor).toBe("string");
    expect(Buffer.from(cursor, "base64url").toString("latin1")).not.toContain(a.orgId);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const bad = [
      ["another organisation", b.key, `limit=1&cursor=${cursor}`],
      ["the other order", a.key, `limit=1&order=created_at_asc&cursor=${cursor}`],
      ["a flipped byte", a.key, `limit=1&cursor=${flip(cursor, 20)}`],
      ["a flipped tag byte", a.key, `limit=1&cursor=${flip(cursor, 3)}`],
      ["garbage", a.key, "limit=1&cursor=not-a-cursor"],
      ["a truncated cursor", a.key, `limit=1&cursor=${cursor.slice(0, -4)}`],
    ] as const;
    for (const [what, key, qs] of bad) {
      const r = await svc.request("GET", `/v1/memories?${qs}`, { key });
      expect(r.status, what).toBe(422);
      expect(r.body.detail.code, what).toBe("cursor_mismatch");
    }
    const ok = await svc.request("GET", `/v1/memories?limit=1&cursor=${cursor}`, { key: a.key });
    expect(ok.status).toBe(200);
    expect(ids(ok)).toHaveLength(1);
    expect(ids(ok)[0]).not.toBe(ids(first)[0]);
  });
});

describe("GET /v1/memories/{id}", () => {
  it("returns the full row, artifacts with full_content; unknown and malformed ids are 404", async () => {
    const { orgId, key } = await svc.newOrg();
    const [f, art] = await seed(svc, orgId, [
      fact("tea", { details: { fact_type: "preference" }, categories: ["food"] }),
      { type: "artifact", text: "script", full_content: "print(1)", details: { title: "s.py", version: 1 } },
    ]);
    const r = await svc.request("GET", `/v1/memories/${f!.id}`, { key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: f!.id, type: "fact", text: "tea", categories: ["food"], score: null });
    expect(r.body.details).toMatchObject({ fact_type: "preference", status: "active", supersedes: null });
    const upper = await svc.request("GET", `/v1/memories/${f!.id.toUpperCase()}`, { key });
    expect(upper.body.id).toBe(f!.id);
    const a = await svc.request("GET", `/v1/memories/${art!.id}`, { key });
    expect(MemorySchema.safeParse(a.body).success).toBe(true);
    expect(a.body.details).toMatchObject({
      full_content: "print(1)",
      title: "s.py",
      version: 1,
      root_id: art!.id,
    });
    for (const id of [MISSING, "not-a-uuid", "1234"]) {
      const m = await svc.request("GET", `/v1/memories/${id}`, { key });
      expect(m.status).toBe(404);
      expect(m.body.detail.code).toBe("memory_not_found");
    }
  });
});

describe("GET /v1/memories/{id}/revisions", () => {
  it("walks a fact supersede chain both ways, oldest first, and stops quietly at a deleted link", async () => {
    const { orgId, key } = await svc.newOrg();
    const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const [v1] = await seed(svc, orgId, [fact("lives in Paris", { status: "superseded", created_at: t(1) })]);
    const [v2] = await seed(svc, orgId, [
      fact("lives in Lyon", { status: "superseded", supersedes: v1!.id, created_at: t(2) }),
    ]);
    const [v3] = await seed(svc, orgId, [fact("lives in Nice", { supersedes: v2!.id, created_at: t(3) })]);
    const [other] = await seed(svc, orgId, [fact("unrelated")]);
    const chain = [v1!.id, v2!.id, v3!.id];
    for (const id of chain) {
      const r = await svc.request("GET", `/v1/memories/${id}/revisions`, { key });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ object: "list", has_more: false, next_cursor: null });
      expect(ids(r)).toEqual(chain);
    }
    expect(ids(await svc.request("GET", `/v1/memories/${other!.id}/revisions`, { key }))).toEqual([
      other!.id,
    ]);
    expect((await svc.request("DELETE", `/v1/memories/${v2!.id}`, { key })).status).toBe(204);
    expect(ids(await svc.request("GET", `/v1/memories/${v3!.id}/revisions`, { key }))).toEqual([v3!.id]);
    expect(ids(await svc.request("GET", `/v1/memories/${v1!.id}/revisions`, { key }))).toEqual([v1!.id]);
    const gone = await svc.request("GET", `/v1/memories/${v2!.id}/revisions`, { key });
    expect(gone.status).toBe(404);
    expect(gone.body.detail.code).toBe("memory_not_found");
  });

  it("lists an artifact's version chain v1 first, and an episode alone", async () => {
    const { orgId, key } = await svc.newOrg();
    const [v1] = await seed(svc, orgId, [
      { type: "artifact", text: "doc v1", full_content: "one", details: { title: "doc", version: 1 } },
    ]);
    const [v3, v2] = await seed(svc, orgId, [
      {
        type: "artifact",
        text: "doc v3",
        full_content: "three",
        details: { title: "doc", version: 3, root_id: v1!.id },
      },
      {
        type: "artifact",
        text: "doc v2",
        full_content: "two",
        details: { title: "doc", version: 2, root_id: v1!.id },
      },
    ]);
    const [otherArt, ep] = await seed(svc, orgId, [
      { type: "artifact", text: "other", details: { title: "other", version: 1 } },
      { type: "episode", text: "a session" },
    ]);
    for (const id of [v1!.id, v2!.id, v3!.id]) {
      const r = await svc.request("GET", `/v1/memories/${id}/revisions`, { key });
      expect(ids(r)).toEqual([v1!.id, v2!.id, v3!.id]);
      expect(r.body.data.map((m: any) => m.details.version)).toEqual([1, 2, 3]);
      expect(r.body.data.map((m: any) => m.details.full_content)).toEqual(["one", "two", "three"]);
    }
    expect(ids(await svc.request("GET", `/v1/memories/${otherArt!.id}/revisions`, { key }))).toEqual([
      otherArt!.id,
    ]);
    expect(ids(await svc.request("GET", `/v1/memories/${ep!.id}/revisions`, { key }))).toEqual([ep!.id]);
    const m = await svc.request("GET", "/v1/memories/nope/revisions", { key });
    expect(m.status).toBe(404);
    expect(m.body.detail.code).toBe("memory_not_found");
  });
});

describe("DELETE /v1/memories/{id}", () => {
  it("hard-deletes: 204, then 404 on get, delete and patch, and gone from list", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    const [x, y] = await seed(svc, orgId, [fact("x", { group_ids: [g] }), fact("y")]);
    const del = await svc.request("DELETE", `/v1/memories/${x!.id}`, { key });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    for (const [method, body] of [["GET"], ["DELETE"], ["PATCH", { remove_group_ids: [g] }]] as const) {
      const r = await svc.request(method, `/v1/memories/${x!.id}`, { key, body });
      expect(r.status, method).toBe(404);
      expect(r.body.detail.code).toBe("memory_not_found");
    }
    expect(ids(await svc.request("GET", "/v1/memories", { key }))).toEqual([y!.id]);
    expect(ids(await svc.request("GET", `/v1/memories?group_id=${g}`, { key }))).toEqual([]);
    for (const id of [MISSING, "garbage"]) {
      const r = await svc.request("DELETE", `/v1/memories/${id}`, { key });
      expect(r.status).toBe(404);
      expect(r.body.detail.code).toBe("memory_not_found");
    }
  });
});

describe("a memory with no word of its own (only stop words)", () => {
  it("is stored beside others and alone, and deleted with 204", async () => {
    const { orgId, key } = await svc.newOrg();
    // A model may write an episode titled "It", summarised "It is."; an import may bring one.
    const [alone] = await seed(svc, orgId, [fact("It is.")]);
    const [words, none] = await seed(svc, orgId, [fact("The user plays the cello."), fact("It was.")]);
    for (const m of [alone!, none!, words!]) {
      const del = await svc.request("DELETE", `/v1/memories/${m.id}`, { key });
      expect(del.status, m.text).toBe(204);
    }
    const stats = await svc.deps.db.query<{ docs: string }>(
      "SELECT coalesce(sum(docs), 0)::text AS docs FROM text_doc_stats WHERE org_id = $1",
      [orgId],
    );
    expect(stats.rows[0]!.docs).toBe("0");
  });
});

describe("DELETE storage errors", () => {
  it("a storage error is 500 delete_failed without internals, and the row stays", async () => {
    const { orgId, key } = await svc.newOrg();
    const [m] = await seed(svc, orgId, [fact("stuck")]);
    // Fault injection in the real database: refuse deleting this one row.
    await svc.deps.db.query(`CREATE OR REPLACE FUNCTION test_refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'volume detached (internal detail)'; END $$`);
    await svc.deps.db.query(
      `CREATE TRIGGER test_refuse_delete BEFORE DELETE ON memories FOR EACH ROW
       WHEN (OLD.id = '${m!.id}'::uuid) EXECUTE FUNCTION test_refuse_delete()`,
    );
    try {
      const r = await svc.request("DELETE", `/v1/memories/${m!.id}`, { key });
      expect(r.status).toBe(500);
      expect(r.body.detail.code).toBe("delete_failed");
      expect(r.text).not.toContain("volume detached");
    } finally {
      await svc.deps.db.query("DROP TRIGGER test_refuse_delete ON memories");
    }
    expect((await svc.request("GET", `/v1/memories/${m!.id}`, { key })).status).toBe(200);
  });
});

describe("tenant isolation", () => {
  it("another organisation's memory ids read, change and delete nothing, and answer like unknown ids", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const ga = await createGroup(svc, a.key, "a-group");
    const gb = await createGroup(svc, b.key, "b-group");
    const [secret] = await seed(svc, a.orgId, [fact("a's secret", { group_ids: [ga] })]);
    const before = (await svc.request("GET", `/v1/memories/${secret!.id}`, { key: a.key })).body;
    const probes: [string, string, unknown?][] = [
      ["GET", ""],
      ["GET", "/revisions"],
      ["PATCH", "", { add_group_ids: [gb] }],
      ["PATCH", "", { remove_group_ids: [ga] }],
      ["DELETE", ""],
    ];
    for (const [method, suffix, body] of probes) {
      const foreign = await svc.request(method, `/v1/memories/${secret!.id}${suffix}`, { key: b.key, body });
      const unknown = await svc.request(method, `/v1/memories/${MISSING}${suffix}`, { key: b.key, body });
      expect(foreign.status, `${method}${suffix}`).toBe(404);
      expect(foreign.body.detail.code).toBe("memory_not_found");
      expect(foreign.status).toBe(unknown.status);
      expect(foreign.body.detail.message.replace(secret!.id, "ID")).toBe(
        unknown.body.detail.message.replace(MISSING, "ID"),
      );
    }
    // a's group id is unknown to b, both as a list filter and as a tag to add
    expect(ids(await svc.request("GET", `/v1/memories?group_id=${ga}`, { key: b.key }))).toEqual([]);
    expect(ids(await svc.request("GET", "/v1/memories?user_id=u1", { key: b.key }))).toEqual([]);
    const [own] = await seed(svc, b.orgId, [fact("b's own")]);
    const steal = await svc.request("PATCH", `/v1/memories/${own!.id}`, {
      key: b.key,
      body: { add_group_ids: [ga] },
    });
    expect(steal.status).toBe(422);
    expect(steal.body.detail.code).toBe("invalid_group_ids");
    const after = await svc.request("GET", `/v1/memories/${secret!.id}`, { key: a.key });
    expect(after.body).toEqual(before);
  });
});
