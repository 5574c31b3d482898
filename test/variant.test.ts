import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../src/admin/orgs.js";
import { findMemory } from "../src/db/memories.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { createGroup, fact, seed } from "./memories-fixtures.js";

/** The variant shapes of spec 4.12 on trailing-slash paths, and metadata end to end. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const turn = (content: string) => ({ role: "user", content });

describe("POST /v1/memories/add/ and metadata on ingest", () => {
  it("answers inline, stores metadata on every memory the job writes, drops reserved keys", async () => {
    const { key } = await svc.newOrg();
    const r = await svc.request("POST", "/v1/memories/add/", {
      key,
      body: {
        user_id: "u1",
        conv_id: "c1",
        messages: [turn("I moved to Lisbon last month."), turn("I love green tea and hiking.")],
        metadata: { topic: "life", priority: 2, tag1: "x", kb_type: "k", org_id: "evil" },
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: "succeeded", mode: "chat", flush_result: null });
    expect(r.body.job_id).toMatch(/^job_/);
    expect(r.body.results.length).toBeGreaterThan(0);
    expect(r.body.stored_facts).toBe(r.body.results.filter((i: any) => i.type === "fact").length);
    for (const item of r.body.results) {
      expect(typeof item.memory).toBe("string");
      expect(item.text).toBeUndefined();
      const m = await svc.request("GET", `/v1/memories/${item.id}/`, { key });
      expect(m.status).toBe(200);
      expect(m.body.metadata).toEqual({ topic: "life", priority: 2 });
      expect(m.body.memory).toBe(item.memory);
      // the main shape shows it too
      const main = await svc.request("GET", `/v1/memories/${item.id}`, { key });
      expect(main.body.metadata).toEqual({ topic: "life", priority: 2 });
    }
  });

  it("keeps a __proto__ key as any other: in metadata on ingest and PATCH, and as a filter condition", async () => {
    const { key } = await svc.newOrg();
    // Sent as JSON text: in a JavaScript object literal `__proto__` would set the prototype.
    const add = await svc.request("POST", "/v1/memories/add/", {
      key,
      body: `{"user_id":"pu","conv_id":"c1","messages":[{"role":"user","content":"I collect old maps."}],"metadata":{"__proto__":"x","kept":1}}`,
    });
    expect(add.status, add.text).toBe(200);
    const id = add.body.results.find((i: any) => i.type === "fact").id;
    const stored = await svc.request("GET", `/v1/memories/${id}/`, { key });
    expect(Object.entries(stored.body.metadata).sort()).toEqual([
      ["__proto__", "x"],
      ["kept", 1],
    ]);
    const list = async (filters: string) => {
      const r = await svc.request("POST", "/v1/memories/", { key, body: `{"filters":${filters}}` });
      expect(r.status, r.text).toBe(200);
      return r.body.results.length;
    };
    // At the top level as inside AND: a condition on metadata.__proto__, never dropped.
    expect(await list(`{"user_id":"pu","__proto__":"nope"}`)).toBe(0);
    expect(await list(`{"user_id":"pu","AND":[{"__proto__":"nope"}]}`)).toBe(0);
    const all = await list(`{"user_id":"pu"}`);
    expect(all).toBeGreaterThan(0);
    expect(await list(`{"user_id":"pu","__proto__":"x"}`)).toBe(all);
    expect(await list(`{"user_id":"pu","metadata.__proto__":{"$exists":true}}`)).toBe(all);
    const patched = await svc.request("PATCH", `/v1/memories/${id}/`, {
      key,
      body: `{"metadata":{"__proto__":1,"other":2}}`,
    });
    expect(patched.status, patched.text).toBe(200);
    expect(Object.entries(patched.body.metadata).sort()).toEqual([
      ["__proto__", 1],
      ["kept", 1],
      ["other", 2],
    ]);
    // An object under it is merged as any value (an object literal would set the prototype).
    const nested = await svc.request("PATCH", `/v1/memories/${id}/`, {
      key,
      body: `{"metadata":{"__proto__":{"a":1}}}`,
    });
    expect(nested.status, nested.text).toBe(200);
    expect(JSON.stringify(nested.body.metadata)).toBe(`{"kept":1,"other":2,"__proto__":{"a":1}}`);
  });

  it("refuses a top-level __proto__ in a PATCH as any unknown field, never dropping it", async () => {
    const { key } = await svc.newOrg();
    const add = await svc.request("POST", "/v1/memories/add/", {
      key,
      body: { user_id: "pu", conv_id: "c1", messages: [turn("I collect old maps.")], metadata: { kept: 1 } },
    });
    const id = add.body.results.find((i: any) => i.type === "fact").id;
    for (const body of [
      `{"__proto__":{"a":1},"metadata":{"other":2}}`,
      `{"__proto__":{"a":1}}`,
      `{"__proto__":1}`,
    ]) {
      const r = await svc.request("PATCH", `/v1/memories/${id}/`, { key, body });
      expect([body, r.status, r.body.detail]).toEqual([
        body,
        422,
        {
          code: "invalid_request",
          field: "__proto__",
          message:
            "__proto__: Unknown field; a PATCH takes text, metadata, add_group_ids and remove_group_ids.",
        },
      ]);
    }
    // As another unknown field is.
    const other = await svc.request("PATCH", `/v1/memories/${id}/`, {
      key,
      body: { colour: 1, metadata: { a: 1 } },
    });
    expect([other.status, other.body.detail.code]).toEqual([422, "invalid_request"]);
    // Nothing was merged.
    const stored = await svc.request("GET", `/v1/memories/${id}/`, { key });
    expect(stored.body.metadata).toEqual({ kept: 1 });
  });

  it("refuses oversized or unstorable metadata with a clear 422 and stores nothing", async () => {
    const { key } = await svc.newOrg();
    const send = (metadata: unknown) =>
      svc.request("POST", "/v1/memories?wait=false", {
        key,
        body: { user_id: "u1", conv_id: "c1", messages: [turn("hello there")], metadata },
      });
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
    const r1 = await send(many);
    expect(r1.status).toBe(422);
    expect(r1.body.detail.code).toBe("invalid_metadata");
    expect(r1.body.detail.message).toMatch(/at most 64 keys/);
    const r2 = await send({ big: "x".repeat(17 * 1024) });
    expect(r2.status).toBe(422);
    expect(r2.body.detail.message).toMatch(/at most 16384 bytes/);
    const r3 = await send({ bad: "a\u0000b" });
    expect(r3.status).toBe(422);
    expect(r3.body.detail.message).toMatch(/^metadata\.bad: /);
    const r4 = await send(["not", "an", "object"]);
    expect(r4.status).toBe(422);
    // A key holding a dot is one segment of the failure's location, never split at the dot.
    for (const [metadata, loc] of [
      [{ "a.b": "x\u0000" }, ["body", "metadata", "a.b"]],
      [{ "a.b": { "c.d": [1, "\ud800"] } }, ["body", "metadata", "a.b", "c.d", "1"]],
    ] as const) {
      const r = await send(metadata);
      expect([r.status, r.body.detail.code, r.body.error.details.issues.map((i: any) => i.loc)]).toEqual([
        422,
        "invalid_metadata",
        [loc],
      ]);
    }
    // 64 keys once the reserved ones are dropped is fine
    const ok = await send({
      ...Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i])),
      tag2: 1,
    });
    expect(ok.status).toBe(202);
  });
});

describe("POST /v1/memories/search/ with filters", () => {
  it("narrows by metadata and dates, splits results by type, refuses an unpinned filter", async () => {
    const { key, orgId } = await svc.newOrg();
    await seed(svc, orgId, [
      fact("I like green tea in the morning", { metadata: { topic: "drinks" } }),
      fact("I like black tea in the evening", { metadata: { topic: "evening" } }),
      fact("Green tea for u2", { user_id: "u2", metadata: { topic: "drinks" } }),
      {
        type: "episode",
        text: "We talked about tea",
        user_id: "u1",
        conv_id: "c1",
        metadata: { topic: "drinks" },
      },
    ]);
    const r = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { user_id: "u1", "metadata.topic": "drinks" } },
    });
    expect(r.status).toBe(200);
    expect(r.body.mode).toBe("flat");
    expect(r.body.results.map((m: any) => m.memory).sort()).toEqual([
      "I like green tea in the morning",
      "We talked about tea",
    ]);
    expect(r.body.facts).toHaveLength(1);
    expect(r.body.episodes).toHaveLength(1);
    expect(r.body.artifacts).toHaveLength(0);
    expect(r.body.context).toBeNull();

    const future = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { AND: [{ user_id: "u1" }, { created_at: { $gte: "2999-01-01" } }] } },
    });
    expect(future.body.results).toEqual([]);

    const unpinned = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { "metadata.topic": "drinks" } },
    });
    expect(unpinned.status).toBe(422);
    expect(unpinned.body.detail.code).toBe("missing_scope");

    const bad = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { OR: [{ user_id: "u1" }, { created_at: { $gte: "soon" } }] } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.code).toBe("invalid_filters");
    expect(bad.body.detail.message).toMatch(/^filters\.OR\[1\]\.created_at\.\$gte: /);

    // a filter that could never match is refused, as ?type=facts is, not answered with no rows
    for (const [filters, field] of [
      [{ user_id: "u1", type: "facts" }, "filters.type"],
      [{ user_id: "u1", status: "Active" }, "filters.status"],
      [{ user_id: "u1", NOT: {} }, "filters.NOT"],
      [{ user_id: "u1", OR: [{}, { "metadata.k": "x" }] }, "filters.OR[0]"],
    ] as const) {
      for (const path of ["/v1/memories/", "/v1/memories/search/"]) {
        const body = path.endsWith("search/") ? { query: "tea", filters } : { filters };
        const r = await svc.request("POST", path, { key, body });
        expect(r.status, `${path} ${JSON.stringify(filters)}`).toBe(422);
        expect(r.body.detail.code).toBe("invalid_filters");
        expect(r.body.detail.field).toBe(field);
      }
    }
    // Listed under error.details.issues too, as validation failures are.
    expect(bad.body.error.details).toEqual({
      field: "filters.OR[1].created_at.$gte",
      issues: [
        {
          loc: ["body", "filters", "OR", "1", "created_at", "$gte"],
          msg: bad.body.detail.message.slice("filters.OR[1].created_at.$gte: ".length),
          type: "invalid_filters",
        },
      ],
    });
    // A condition's key is one segment, dots and all: `metadata.topic` is one key of the body.
    const dottedKey = await svc.request("POST", "/v1/memories/", {
      key,
      body: { filters: { user_id: "u1", "metadata.topic": { $in: ["a", "b", { x: 1 }] } } },
    });
    expect(dottedKey.body.detail.field).toBe("filters.metadata.topic.$in[2]");
    expect(dottedKey.body.error.details.issues[0].loc).toEqual([
      "body",
      "filters",
      "metadata.topic",
      "$in",
      "2",
    ]);
    // `filters` that is no object at all is invalid_filters naming it, not the list form.
    for (const filters of [[{ user_id: "u1" }], "user_id=u1", 5]) {
      for (const path of ["/v1/memories/search/", "/v1/memories/"]) {
        const body = path.endsWith("search/") ? { query: "tea", filters } : { filters };
        const r = await svc.request("POST", path, { key, body });
        expect(r.status, `${path} ${JSON.stringify(filters)}`).toBe(422);
        expect(r.body.detail).toMatchObject({ code: "invalid_filters", field: "filters" });
        expect(r.body.detail.message).toBe("filters: expected an object of conditions");
        expect(r.body.error.details.issues[0]).toMatchObject({ loc: ["body", "filters"] });
      }
    }
    // The 100 conditions are conditions: an OR of 100 is read, the OR itself does not count.
    const hundred = await svc.request("POST", "/v1/memories/", {
      key,
      body: { filters: { OR: Array.from({ length: 100 }, (_, i) => ({ user_id: `u${i}` })) } },
    });
    expect(hundred.status, hundred.text).toBe(200);
  });

  it("context_prompt composes under extras and needs user_id and conv_id in the filters", async () => {
    const { key, orgId } = await svc.newOrg();
    await seed(svc, orgId, [fact("I like green tea")]);
    const noConv = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { user_id: "u1" }, include: ["context_prompt"] },
    });
    expect(noConv.status).toBe(422);
    expect(noConv.body.detail.code).toBe("missing_conv_id");
    const noUser = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { conv_id: "c1" }, include: ["context_prompt"] },
    });
    expect(noUser.body.detail.code).toBe("missing_user_id");
    const r = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query: "tea", filters: { user_id: "u1", conv_id: "c1" }, include: ["context_prompt"] },
    });
    expect(r.status).toBe(200);
    expect(r.body.mode).toBe("context");
    expect(r.body.extras.context_prompt).toContain("green tea");
    expect(typeof r.body.extras.stage_timings.total).toBe("number");
  });

  it("cursor pages down the same ranking without repeats; a cursor of another query is 422", async () => {
    const { key, orgId } = await svc.newOrg();
    const teas = Array.from({ length: 7 }, (_, i) => fact(`I drink tea number ${i + 1} with friends`));
    await seed(svc, orgId, teas);
    const body = { query: "tea", filters: { user_id: "u1" }, limit: 3 };
    const all = await svc.request("POST", "/v1/memories/search/", { key, body: { ...body, limit: 100 } });
    expect(all.body.results).toHaveLength(7);
    expect(all.body.next).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await svc.request("POST", "/v1/memories/search/", {
        key,
        body: { ...body, ...(cursor ? { cursor } : {}) },
      });
      expect(r.status).toBe(200);
      expect(r.body.results.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.results.map((m: any) => m.id));
      cursor = r.body.next;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(all.body.results.map((m: any) => m.id));

    const first = await svc.request("POST", "/v1/memories/search/", { key, body });
    const other = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { ...body, query: "friends", cursor: first.body.next },
    });
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatchObject({ code: "cursor_mismatch", field: "cursor" });
    expect(other.body.error.details).toEqual({
      field: "cursor",
      issues: [{ loc: ["body", "cursor"], msg: other.body.detail.message, type: "cursor_mismatch" }],
    });
    const query = await svc.request("GET", "/v1/memories/?cursor=abc", { key });
    expect(query.body.error.details.issues).toEqual([
      { loc: ["query", "cursor"], msg: query.body.detail.message, type: "cursor_mismatch" },
    ]);
    const forged = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { ...body, cursor: "abc" },
    });
    expect(forged.body.detail.code).toBe("cursor_mismatch");
    const stranger = await svc.newOrg();
    const foreign = await svc.request("POST", "/v1/memories/search/", {
      key: stranger.key,
      body: { ...body, cursor: first.body.next },
    });
    expect(foreign.body.detail.code).toBe("cursor_mismatch");
  });

  it("pages of any size over ingested memories serve each row once, and all of them", async () => {
    const { key } = await svc.newOrg();
    const say = (content: string) => ({ role: "user", content });
    const conversations = [
      [
        "I live in Lisbon and work as a dentist.",
        "My favourite food is sushi.",
        "I have a dog named Rex.",
        "I play the cello on Sundays.",
      ],
      ["My sister Ana lives in Porto.", "I am learning Japanese.", "I drive a blue Tesla."],
      [
        "I run a marathon every spring.",
        "My favourite book is Dune.",
        "I work remotely on Fridays.",
        "I am allergic to peanuts.",
      ],
    ];
    for (const [i, messages] of conversations.entries()) {
      const r = await svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "vs1", conv_id: `c${i}`, messages: messages.map(say) },
      });
      expect(r.status).toBe(200);
    }
    const query = "what does the user like";
    const all = await svc.request("POST", "/v1/memories/search/", {
      key,
      body: { query, filters: { user_id: "vs1" }, limit: 100 },
    });
    const everything = all.body.results.map((m: any) => m.id).sort();
    expect(everything.length).toBeGreaterThan(10);
    for (const limit of [1, 2, 3, 5]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 40; pages++) {
        const r: any = await svc.request("POST", "/v1/memories/search/", {
          key,
          body: { query, filters: { user_id: "vs1" }, limit, ...(cursor ? { cursor } : {}) },
        });
        expect(r.status).toBe(200);
        seen.push(...r.body.results.map((m: any) => m.id));
        cursor = r.body.next;
        if (!cursor) break;
      }
      expect(new Set(seen).size, `limit ${limit}`).toBe(seen.length);
      expect([...seen].sort(), `limit ${limit}`).toEqual(everything);
    }
  });
});

describe("list forms", () => {
  it("GET /v1/memories/ and POST /v1/memories/ page with next and previous; the slashless routes keep their shape", async () => {
    const { key, orgId } = await svc.newOrg();
    const base = Date.parse("2026-01-01T00:00:00Z");
    await seed(
      svc,
      orgId,
      Array.from({ length: 7 }, (_, i) =>
        fact(`fact ${i}`, { created_at: new Date(base + i * 1000), metadata: { n: i } }),
      ),
    );
    const p1 = await svc.request("GET", "/v1/memories/?limit=3&user_id=u1", { key });
    expect(p1.status).toBe(200);
    expect(p1.body.count).toBe(7);
    expect(p1.body.previous).toBeNull();
    expect(p1.body.results.map((m: any) => m.memory)).toEqual(["fact 6", "fact 5", "fact 4"]);
    const p2 = await svc.request("GET", `/v1/memories/?limit=3&user_id=u1&cursor=${p1.body.next}`, { key });
    expect(p2.body.results.map((m: any) => m.memory)).toEqual(["fact 3", "fact 2", "fact 1"]);
    const p3 = await svc.request("GET", `/v1/memories/?limit=3&user_id=u1&cursor=${p2.body.next}`, { key });
    expect(p3.body.results.map((m: any) => m.memory)).toEqual(["fact 0"]);
    expect(p3.body.next).toBeNull();
    const back = await svc.request("GET", `/v1/memories/?limit=3&user_id=u1&cursor=${p3.body.previous}`, {
      key,
    });
    expect(back.body.results.map((m: any) => m.memory)).toEqual(["fact 3", "fact 2", "fact 1"]);
    const back2 = await svc.request("GET", `/v1/memories/?limit=3&user_id=u1&cursor=${back.body.previous}`, {
      key,
    });
    expect(back2.body.results.map((m: any) => m.memory)).toEqual(["fact 6", "fact 5", "fact 4"]);
    expect(back2.body.previous).toBeNull();

    const post = await svc.request("POST", "/v1/memories/", {
      key,
      body: { filters: { user_id: "u1", "metadata.n": { $between: [2, 4] } }, limit: 2 },
    });
    expect(post.status).toBe(200);
    expect(post.body.count).toBe(3);
    expect(post.body.results.map((m: any) => m.metadata.n)).toEqual([4, 3]);

    const tooBig = await svc.request("GET", "/v1/memories/?limit=101", { key });
    expect(tooBig.status).toBe(422);
    const foreign = await svc.request("GET", "/v1/memories/?cursor=abc", { key });
    expect(foreign.body.detail.code).toBe("cursor_mismatch");
    const unpinned = await svc.request("POST", "/v1/memories/", { key, body: { filters: { type: "fact" } } });
    expect(unpinned.body.detail.code).toBe("missing_scope");

    const main = await svc.request("GET", "/v1/memories?limit=3", { key });
    expect(main.body.object).toBe("list");
    expect(main.body.data[0].text).toBe("fact 6");

    // The count is the first page's, carried by its cursors; other filters, or a new first page,
    // count afresh.
    await seed(svc, orgId, [fact("fact early", { created_at: new Date(base - 1000), metadata: { n: -1 } })]);
    const later = await svc.request("GET", `/v1/memories/?limit=3&user_id=u1&cursor=${p1.body.next}`, {
      key,
    });
    expect(later.body.count).toBe(7);
    expect(later.body.results.map((m: any) => m.memory)).toEqual(["fact 3", "fact 2", "fact 1"]);
    const onward = await svc.request("GET", `/v1/memories/?limit=3&user_id=u1&cursor=${later.body.next}`, {
      key,
    });
    expect(onward.body.count).toBe(7);
    expect(onward.body.results.map((m: any) => m.memory)).toEqual(["fact 0", "fact early"]);
    const typed = await svc.request(
      "GET",
      `/v1/memories/?limit=3&user_id=u1&type=fact&cursor=${p1.body.next}`,
      {
        key,
      },
    );
    expect(typed.body.count).toBe(8);
    const fresh = await svc.request("GET", "/v1/memories/?limit=3&user_id=u1", { key });
    expect(fresh.body.count).toBe(8);
  });
});

describe("list form bodies and group reads", () => {
  it("refuses a field the list does not know (a scope outside filters, a misspelt filters, an ingest body)", async () => {
    const { key, orgId } = await svc.newOrg();
    await seed(svc, orgId, [fact("tea", { user_id: "a" }), fact("coffee", { user_id: "b" })]);
    for (const body of [
      { user_id: "a" },
      { filter: { user_id: "a" } },
      { messages: [{ role: "user", content: "I own a kayak." }], user_id: "k", conv_id: "c1" },
    ]) {
      const res = await svc.request("POST", "/v1/memories/", { key, body });
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 422]);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.message).toMatch(/Unrecognized key.*"(user_id|filter|messages)"/);
    }
    // The right form lists the one user; GET takes group_id as the slashless list does.
    const right = await svc.request("POST", "/v1/memories/", { key, body: { filters: { user_id: "a" } } });
    expect(right.body.results.map((m: any) => m.memory)).toEqual(["tea"]);
  });

  it("GET lists refuse a query parameter they do not know instead of listing the whole organisation", async () => {
    const { key, orgId } = await svc.newOrg();
    await seed(svc, orgId, [fact("tea", { user_id: "a" }), fact("coffee", { user_id: "b" })]);
    for (const path of ["/v1/memories", "/v1/memories/"]) {
      for (const query of ["?userId=a", "?group_ids=grp_x", "?user_ld=a", "?filters=%7B%7D"]) {
        const res = await svc.request("GET", `${path}${query}`, { key });
        expect([path + query, res.status]).toEqual([path + query, 422]);
        expect(res.body.error.code).toBe("invalid_request");
        expect(res.body.error.message).toMatch(/Unrecognized key.*"(userId|group_ids|user_ld|filters)"/);
      }
    }
    const right = await svc.request("GET", "/v1/memories?user_id=a", { key });
    expect(right.body.data.map((m: any) => m.text)).toEqual(["tea"]);
    const variant = await svc.request("GET", "/v1/memories/?user_id=a", { key });
    expect(variant.body.results.map((m: any) => m.memory)).toEqual(["tea"]);
  });

  it("reads named groups across users, also for a key confined to a user: group_id, group_ids filters", async () => {
    const { key, orgId } = await svc.newOrg();
    const group = await createGroup(svc, key, "team");
    await seed(svc, orgId, [
      fact("shared by a", { user_id: "a", group_ids: [group] }),
      fact("shared by b", { user_id: "b", group_ids: [group] }),
      fact("private of b", { user_id: "b" }),
    ]);
    const confined = (await createKey(svc.deps.db, { orgId, name: "a's", userId: "a" })).api_key;
    const shared = ["shared by a", "shared by b"];
    for (const k of [key, confined]) {
      const got = await svc.request("GET", `/v1/memories/?group_id=${group}`, { key: k });
      expect(got.status).toBe(200);
      expect(got.body.results.map((m: any) => m.memory).sort()).toEqual(shared);
      const listed = await svc.request("POST", "/v1/memories/", {
        key: k,
        body: { filters: { group_ids: group } },
      });
      expect(listed.body.results.map((m: any) => m.memory).sort()).toEqual(shared);
      const searched = await svc.request("POST", "/v1/memories/search/", {
        key: k,
        body: { query: "shared", filters: { group_ids: { $in: [group] } } },
      });
      expect(searched.body.results.map((m: any) => m.memory).sort()).toEqual(shared);
    }
    // The confined key's own rows outside the group stay its own; another user is still 403.
    const other = await svc.request("POST", "/v1/memories/", {
      key: confined,
      body: { filters: { user_id: "b" } },
    });
    expect(other.status).toBe(403);
  });
});

describe("listing agent directives", () => {
  it("GET /v1/memories/?type=lesson lists them, failed ones too; the spec's list keeps its three types", async () => {
    const { key, orgId } = await svc.newOrg();
    const [failed, resolved] = await seed(svc, orgId, [
      {
        type: "lesson",
        text: "Never edit pool.ts by hand",
        user_id: "u1",
        trigger_entities: ["pool.ts"],
        outcome: "failed",
      },
      {
        type: "lesson",
        text: "Raise the pool size first",
        user_id: "u1",
        trigger_entities: ["pool.ts"],
        outcome: "resolved",
      },
      fact("a fact"),
    ]);
    const lessons = await svc.request("GET", "/v1/memories/?user_id=u1&type=lesson", { key });
    expect(lessons.status).toBe(200);
    expect(lessons.body.results.map((m: any) => m.id).sort()).toEqual([failed!.id, resolved!.id].sort());
    const spec = await svc.request("GET", "/v1/memories?user_id=u1&type=lesson", { key });
    expect(spec.status).toBe(422);
    expect(spec.body.detail.code).toBe("invalid_memory_type");
  });
});

describe("variant search of agent directives", () => {
  it("a type filter naming lesson or procedure finds them, leading results; without one, only the content types", async () => {
    const { key, orgId } = await svc.newOrg();
    const [lesson, procedure, docker] = await seed(svc, orgId, [
      {
        type: "lesson",
        text: "Never run docker system prune on the build host",
        user_id: "carol",
        trigger_entities: ["docker"],
        outcome: "resolved",
      },
      {
        type: "procedure",
        text: "Free docker disk space on the build host",
        user_id: "carol",
        trigger_entities: ["docker"],
      },
      fact("I run docker on the build host", { user_id: "carol" }),
    ]);
    const search = (filters: unknown) =>
      svc.request("POST", "/v1/memories/search/", {
        key,
        body: { query: "Never run docker system prune on the build host", filters },
      });
    const lessons = await search({ user_id: "carol", type: "lesson" });
    expect(lessons.status, lessons.text).toBe(200);
    expect(lessons.body.results.map((m: any) => m.id)).toEqual([lesson!.id]);
    expect(lessons.body.results[0]).toMatchObject({ type: "lesson", score: null });
    expect(lessons.body.facts).toEqual([]);

    const both = await search({ user_id: "carol", type: { $in: ["lesson", "procedure", "fact"] } });
    expect(both.status, both.text).toBe(200);
    const ids = both.body.results.map((m: any) => m.id);
    expect(ids.slice(0, 2).sort()).toEqual([lesson!.id, procedure!.id].sort());
    expect(ids.slice(2)).toEqual([docker!.id]);
    expect(both.body.facts.map((m: any) => m.id)).toEqual([docker!.id]);

    const plain = await search({ user_id: "carol" });
    expect(plain.body.results.map((m: any) => m.id)).toEqual([docker!.id]);
  });
});

describe("GET/PATCH/DELETE /v1/memories/{id}/", () => {
  it("a new text of a whole turn's fact supersedes the clauses of that turn it states again, not the others", async () => {
    const { key } = await svc.newOrg();
    const added = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: {
        user_id: "u1",
        conv_id: "c1",
        messages: [turn("I moved to Berlin last month and I work as a nurse.")],
      },
    });
    expect(added.body.status).toBe("succeeded");
    const facts = added.body.result.memories_created.filter((m: any) => m.type === "fact");
    const whole = facts.find((m: any) => m.text.includes("Berlin") && m.text.includes("nurse"));
    const moved = facts.find((m: any) => m.text.includes("Berlin") && !m.text.includes("nurse"));
    const nurse = facts.find((m: any) => m.text.includes("nurse") && !m.text.includes("Berlin"));
    expect([whole, moved, nurse].every(Boolean)).toBe(true);
    const res = await svc.request("PATCH", `/v1/memories/${whole.id}/`, {
      key,
      body: { text: "I moved to Munich last month." },
    });
    expect(res.status).toBe(200);
    const status = async (id: string) =>
      (await svc.request("GET", `/v1/memories/${id}`, { key })).body.details.status;
    expect(await status(whole.id)).toBe("superseded");
    expect(await status(moved.id)).toBe("superseded");
    expect(await status(nurse.id)).toBe("active");
    const search = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { user_id: "u1", query: "Where did the user move?", mode: "retrieve" },
    });
    const facts2 = search.body.data.filter((m: any) => m.type === "fact").map((m: any) => m.text);
    expect(facts2).toContain("I moved to Munich last month.");
    expect(facts2.join("\n")).not.toContain("Berlin");
  });

  it.each([
    // The whole's rest is said by the turn's other clause: no rest written, its episode says it.
    [
      "I am 34 years old and I live in Denver.",
      "The user is 34 years old.",
      "The user is 35 years old.",
      "The user lives in Denver.",
      "34",
    ],
    // The whole's rest has no clause of its own: written, as an ingest writes it.
    [
      "I work as a nurse at Mercy Hospital in Ottawa. I have two kids.",
      "The user works as a nurse at Mercy Hospital in Ottawa.",
      "The user works as a product manager at Stripe.",
      "The user has two kids.",
      "nurse",
    ],
  ])(
    "a new text of a clause supersedes the whole turn that said it, its rest kept, as an ingest would: %s",
    async (said, clauseText, newText, rest, old) => {
      const { key, orgId } = await svc.newOrg();
      const added = await svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "u1", conv_id: "c1", messages: [turn(said)] },
      });
      expect(added.body.status).toBe("succeeded");
      const created = added.body.result.memories_created;
      const facts = created.filter((m: any) => m.type === "fact");
      const clause = facts.find((m: any) => m.text === clauseText);
      const whole = facts.find((m: any) => m.text.includes(old) && m.text !== clauseText);
      expect(clause, JSON.stringify(facts)).toBeDefined();
      expect(whole, JSON.stringify(facts)).toBeDefined();
      const res = await svc.request("PATCH", `/v1/memories/${clause.id}/`, { key, body: { text: newText } });
      expect(res.status, res.text).toBe(200);
      const active = (
        await svc.request("GET", "/v1/memories?user_id=u1&status=active&type=fact", { key })
      ).body.data.map((m: { text: string }) => m.text);
      expect(active.filter((t: string) => t.includes(old))).toEqual([]);
      expect(active).toContain(newText);
      expect(active).toContain(rest);
      const status = async (id: string) =>
        (await svc.request("GET", `/v1/memories/${id}`, { key })).body.details.status;
      expect(await status(whole.id)).toBe("superseded");
      // Its episode says the rest, not the old value.
      const episode = created.find((m: any) => m.type === "episode");
      const ep = await findMemory(svc.deps.db, orgId, episode.id);
      expect(ep!.text).toContain(rest);
      expect(ep!.text).not.toContain(old);
      const search = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id: "u1", query: `${clauseText} ${rest}` },
      });
      expect(search.body.context).not.toContain(old);
    },
  );

  it("a new text of a clause leaves its episode the rest of the sentence, with its day, even when an active fact says it", async () => {
    const { key, orgId } = await svc.newOrg();
    const added = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: {
        user_id: "u1",
        conv_id: "c1",
        messages: [
          {
            ...turn("I live in Denver and work at Acme as an engineer. My dog Rex is 4."),
            date: "2026-03-10T09:00:00Z",
          },
        ],
      },
    });
    expect(added.body.status).toBe("succeeded");
    const created = added.body.result.memories_created;
    const facts = created.filter((m: any) => m.type === "fact");
    const clause = facts.find((m: any) => /works at Acme/.test(m.text) && !/Denver/.test(m.text));
    expect(clause, JSON.stringify(facts)).toBeDefined();
    const res = await svc.request("PATCH", `/v1/memories/${clause.id}/`, {
      key,
      body: { text: "The user works at Initech as an engineer." },
    });
    expect(res.status, res.text).toBe(200);
    const active = (
      await svc.request("GET", "/v1/memories?user_id=u1&status=active&type=fact", { key })
    ).body.data.map((m: { text: string }) => m.text);
    expect(active.filter((t: string) => t.includes("Acme"))).toEqual([]);
    expect(
      active.some((t: string) => t.includes("lives in Denver")),
      JSON.stringify(active),
    ).toBe(true);
    const episode = created.find((m: any) => m.type === "episode");
    const ep = (await findMemory(svc.deps.db, orgId, episode.id))!;
    expect(ep.text).not.toContain("Acme");
    expect(ep.text).toContain("On 10 March 2026, the user lives in Denver.");
    expect(ep.text).toContain("Rex is 4");
  });

  it("a long text is indexed, in linear time, and stays searchable: 300,000 CJK characters, 10,000 random ones, 120 KB of distinct English words", {
    timeout: 300_000,
  }, async () => {
    const { key, orgId } = await svc.newOrg();
    // Deterministic pseudo-random picks, so a failure can be replayed.
    let state = 42;
    const next = (n: number) => {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      return (state >>> 8) % n;
    };
    const han = (n: number) =>
      Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + next(20000))).join("");
    const sixty = han(60);
    const repeated = Array.from({ length: 300_000 }, () => sixty[next(60)]).join("");
    const random = han(10_000);
    const words = new Set<string>();
    while (words.size < 18_000)
      words.add(Array.from({ length: 6 }, () => "bcdfghjklmnprstvz"[next(17)]).join(""));
    const english = [...words].join(" ");
    expect(english.length).toBeGreaterThan(120_000);
    const [row, other] = await seed(svc, orgId, [fact("I live in Porto"), fact("I like green tea")]);
    const patch = (id: string, body: unknown) => svc.request("PATCH", `/v1/memories/${id}/`, { key, body });
    const finds = async (query: string, id: string) => {
      const res = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query, user_id: "u1", mode: "retrieve" },
      });
      expect(res.status).toBe(200);
      return res.body.data.map((m: { id: string }) => m.id).includes(id);
    };
    let id = row!.id;
    for (const [text, word] of [
      [repeated, repeated.slice(1000, 1002)],
      [random, random.slice(5000, 5002)],
      [english, [...words][10]!],
    ] as const) {
      const res = await patch(id, { text });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      id = res.body.id;
      expect(await finds(word, id), word).toBe(true);
    }
    // The ingest path writes through the same index: a long random CJK text is stored.
    const [stored] = await seed(svc, orgId, [fact(han(12_000))]);
    expect(await finds(stored!.text.slice(100, 102), stored!.id)).toBe(true);
    expect(await finds("green tea", other!.id)).toBe(true);
  });

  it("text supersedes a fact; metadata merges; immutable, reserved and blank are 422", async () => {
    const { key, orgId } = await svc.newOrg();
    const [row, episode] = await seed(svc, orgId, [
      fact("I live in Porto", { metadata: { a: 1 } }),
      { type: "episode", text: "A chat", user_id: "u1", conv_id: "c1" },
    ]);
    const patch = (id: string, body: unknown) => svc.request("PATCH", `/v1/memories/${id}/`, { key, body });

    const merged = await patch(row!.id, { metadata: { b: "two" } });
    expect(merged.status).toBe(200);
    expect(merged.body.metadata).toEqual({ a: 1, b: "two" });
    // A merge is no supersede or consolidation: updated_at stays (spec 2.1), and a merge that
    // changes nothing writes nothing.
    expect(merged.body.updated_at).toBe(row!.updated_at.toISOString());
    const xminOf = async () =>
      (await svc.deps.db.query("SELECT xmin::text AS x FROM memories WHERE id = $1", [row!.id])).rows[0].x;
    const before = await xminOf();
    const same = await patch(row!.id, { metadata: { b: "two" } });
    expect(same.body.metadata).toEqual({ a: 1, b: "two" });
    expect(await xminOf()).toBe(before);

    const moved = await patch(row!.id, { text: "I live in Lisbon" });
    expect(moved.status).toBe(200);
    expect(moved.body.id).not.toBe(row!.id);
    expect(moved.body.memory).toBe("I live in Lisbon");
    expect(moved.body.details).toMatchObject({ status: "active", supersedes: row!.id });
    expect(moved.body.metadata).toEqual({ a: 1, b: "two" });
    const old = await svc.request("GET", `/v1/memories/${row!.id}/`, { key });
    expect(old.body.details.status).toBe("superseded");
    expect(old.body.memory).toBe("I live in Porto");
    const chain = await svc.request("GET", `/v1/memories/${moved.body.id}/revisions`, { key });
    expect(chain.body.data.map((m: any) => m.text)).toEqual(["I live in Porto", "I live in Lisbon"]);

    expect((await patch(row!.id, { text: "again" })).status).toBe(422);
    const blank = await patch(moved.body.id, { text: "   " });
    expect(blank.body.detail.code).toBe("empty_text_field");
    const nul = await patch(moved.body.id, { text: "\u0000 " });
    expect(nul.body.detail.code).toBe("empty_text_field");
    // Invisible characters only (zero-width spaces, a BOM) would store an invisible fact.
    const invisible = await patch(moved.body.id, { text: "\u200b\u200b\ufeff" });
    expect(invisible.status).toBe(422);
    expect(invisible.body.detail.code).toBe("empty_text_field");
    // Free text, as message content: a lone surrogate (half an emoji) becomes U+FFFD, never a 500.
    const torn = await patch(moved.body.id, { text: "I live in Lisbon \ud83c" });
    expect(torn.status, torn.text).toBe(200);
    expect(torn.body.memory).toBe("I live in Lisbon \ufffd");
    const back = await patch(torn.body.id, { text: "I live in Lisbon" });
    expect(back.status).toBe(200);
    moved.body.id = back.body.id;
    const nonFact = await patch(episode!.id, { text: "new" });
    expect(nonFact.status).toBe(422);
    expect(nonFact.body.detail.code).toBe("immutable_field");
    expect(nonFact.body.detail.message).toBe(
      "The text of an episode cannot change; only facts are superseded by a new text.",
    );
    const immutable = await patch(moved.body.id, { user_id: "u2" });
    expect(immutable.body.detail.code).toBe("immutable_field");
    const dotted = await patch(moved.body.id, { metadata: { "a.b": { "c.d": "\u0000" } } });
    expect([dotted.body.detail.code, dotted.body.error.details.issues[0].loc]).toEqual([
      "invalid_metadata",
      ["body", "metadata", "a.b", "c.d"],
    ]);
    const reserved = await patch(moved.body.id, { metadata: { tag3: "x" } });
    expect(reserved.body.detail.code).toBe("reserved_field");
    expect(reserved.body.error.details.issues).toEqual([
      {
        loc: ["body", "metadata", "tag3"],
        msg: expect.stringContaining("reserved keys"),
        type: "reserved_field",
      },
    ]);
    const empty = await patch(moved.body.id, {});
    expect(empty.body.detail.code).toBe("empty_patch");

    const del = await svc.request("DELETE", `/v1/memories/${moved.body.id}/`, { key });
    expect(del.status).toBe(204);
    const again = await svc.request("DELETE", `/v1/memories/${moved.body.id}/`, { key });
    expect(again.body.detail.code).toBe("memory_not_found");
    expect((await svc.request("GET", `/v1/memories/${moved.body.id}/`, { key })).status).toBe(404);
  });
});
