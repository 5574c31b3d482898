import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupListSchema, GroupSchema } from "../src/wire/groups.js";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false, env: { MAX_GROUPS_PER_ORG: "3" } });
});
afterAll(async () => {
  await svc?.stop();
});

const create = (key: string, body: unknown) => svc.request("POST", "/v1/groups", { key, body });

describe("groups registry", () => {
  it("creates prompted and catch-all groups with grp_ ids", async () => {
    const { key } = await svc.newOrg();
    const a = await create(key, { name: "Team", prompt: "work on the billing service" });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({
      object: "group",
      name: "Team",
      prompt: "work on the billing service",
      status: "active",
    });
    expect(a.body.id).toMatch(/^grp_[0-9a-f]{32}$/);
    expect(Date.parse(a.body.created_at)).not.toBeNaN();
    expect(GroupSchema.safeParse(a.body).success).toBe(true);
    const b = await create(key, { name: "All" });
    expect(b.status).toBe(201);
    expect(b.body.prompt).toBeNull();
    const c = await create(key, { name: "All2", prompt: null });
    expect(c.body.prompt).toBeNull();
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
  });

  it("counts name and prompt lengths in characters (code points), not UTF-16 units", async () => {
    const { key } = await svc.newOrg();
    const emojis = (n: number) => "😀".repeat(n);
    for (const body of [
      { name: emojis(61) },
      { name: `${"n".repeat(119)}😀` },
      { name: "pe", prompt: emojis(1001) },
    ]) {
      const r = await create(key, body);
      expect(r.status, r.text.slice(0, 200)).toBe(201);
    }
    const last = (await svc.request("GET", "/v1/groups", { key })).body.data[2];
    const patched = await svc.request("PATCH", `/v1/groups/${last.id}`, {
      key,
      body: { name: emojis(120), prompt: emojis(2000) },
    });
    expect(patched.status, patched.text.slice(0, 200)).toBe(200);
    expect(patched.body.name).toBe(emojis(120));
    const long = await svc.request("PATCH", `/v1/groups/${last.id}`, { key, body: { name: emojis(121) } });
    expect(long.body.detail).toEqual({
      code: "name_too_long",
      message: "name: must be 1 to 120 characters (not blank)",
      field: "name",
    });
    const prompt = await svc.request("PATCH", `/v1/groups/${last.id}`, {
      key,
      body: { prompt: emojis(2001) },
    });
    expect(prompt.body.detail.code).toBe("prompt_too_long");
  });

  it("a blank name or prompt is refused with the rule, not zod's '>=1 characters'", async () => {
    const { key } = await svc.newOrg();
    const blank = await create(key, { name: "   " });
    expect(blank.body.detail).toEqual({
      code: "empty_name",
      message: "name: must be 1 to 120 characters (not blank)",
      field: "name",
    });
    const prompt = await create(key, { name: "x", prompt: " " });
    expect(prompt.body.detail).toEqual({
      code: "empty_prompt",
      message: "prompt: must be 1 to 2000 characters (not blank)",
      field: "prompt",
    });
    // A zero-width space shows nothing either.
    const invisible = await create(key, { name: "\u200b" });
    expect(invisible.body.detail).toEqual({
      code: "empty_name",
      message: "name: must be 1 to 120 characters (not blank)",
      field: "name",
    });
  });

  it("rejects an empty prompt, a bad name and a missing body field with validation 422", async () => {
    const { key } = await svc.newOrg();
    for (const [body, code, field] of [
      [{ name: "x", prompt: "" }, "empty_prompt", "prompt"],
      [{ name: "" }, "empty_name", "name"],
      [{ name: "   " }, "empty_name", "name"],
      [{ name: "x".repeat(121) }, "name_too_long", "name"],
      [{}, null, "name"],
      [{ name: "x", prompt: "p".repeat(2001) }, "prompt_too_long", "prompt"],
    ] as const) {
      const r = await create(key, body);
      expect(r.status).toBe(422);
      // Every field failure is listed with its loc; a coded one answers {code, message, field}.
      expect(r.body.error.details.issues[0].loc).toEqual(["body", field]);
      if (code) {
        expect(r.body.detail).toEqual({ code, message: expect.any(String), field });
        expect(r.body.error).toMatchObject({ type: "invalid_request_error", code, details: { field } });
      } else {
        expect(Array.isArray(r.body.detail)).toBe(true);
        expect(r.body.error.code).toBe("invalid_request");
      }
    }
    const r = await create(key, {});
    expect(r.body.detail[0]).toMatchObject({ loc: ["body", "name"], type: "missing" });
    expect((await svc.request("GET", "/v1/groups", { key })).body.data).toEqual([]);
  });

  it("enforces MAX_GROUPS_PER_ORG on active groups, also on un-archive", async () => {
    const { key } = await svc.newOrg();
    // Sequential on purpose: see the report on concurrent transactions over embedded PGlite.
    const results = [];
    for (const i of [1, 2, 3, 4]) results.push(await create(key, { name: `g${i}` }));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 422]);
    expect(results[3]!.body.detail.code).toBe("groups_quota_exceeded");
    const ids = results.filter((r) => r.status === 201).map((r) => r.body.id as string);
    // archiving frees a slot; un-archiving then counts again
    expect((await svc.request("DELETE", `/v1/groups/${ids[0]}`, { key })).status).toBe(200);
    expect((await create(key, { name: "g6" })).status).toBe(201);
    const un = await svc.request("PATCH", `/v1/groups/${ids[0]}`, { key, body: { status: "active" } });
    expect(un.status).toBe(422);
    expect(un.body.detail.code).toBe("groups_quota_exceeded");
  });

  it("lists active groups, archived ones only with include_archived=true", async () => {
    const { key } = await svc.newOrg();
    const a = (await create(key, { name: "a" })).body;
    const b = (await create(key, { name: "b" })).body;
    await svc.request("DELETE", `/v1/groups/${a.id}`, { key });
    const active = await svc.request("GET", "/v1/groups", { key });
    expect(active.status).toBe(200);
    expect(active.body).toMatchObject({ object: "list", has_more: false, next_cursor: null });
    expect(active.body.data.map((g: any) => g.id)).toEqual([b.id]);
    const all = await svc.request("GET", "/v1/groups?include_archived=true", { key });
    expect(GroupListSchema.safeParse(all.body).success).toBe(true);
    expect(all.body.data.map((g: any) => g.id).sort()).toEqual([a.id, b.id].sort());
    expect(all.body.data.find((g: any) => g.id === a.id).status).toBe("archived");
    const off = await svc.request("GET", "/v1/groups?include_archived=false", { key });
    expect(off.body.data).toHaveLength(1);
    expect((await svc.request("GET", "/v1/groups?include_archived=maybe", { key })).status).toBe(422);
    // Spelled as Python's requests spells a True (and the other forms pydantic reads), any case.
    for (const [spelling, archived] of [
      ["True", true],
      ["YES", true],
      ["on", true],
      ["False", false],
      ["no", false],
    ] as const) {
      const r = await svc.request("GET", `/v1/groups?include_archived=${spelling}`, { key });
      expect(r.status, spelling).toBe(200);
      expect(r.body.data.length, spelling).toBe(archived ? all.body.data.length : off.body.data.length);
    }
  });

  it("gets a group; unknown and malformed ids are 404 group_not_found", async () => {
    const { key } = await svc.newOrg();
    const a = (await create(key, { name: "a", prompt: "p" })).body;
    const got = await svc.request("GET", `/v1/groups/${a.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a);
    for (const id of [`grp_${"0".repeat(32)}`, "nope", "grp_XYZ"]) {
      const r = await svc.request("GET", `/v1/groups/${id}`, { key });
      expect(r.status).toBe(404);
      expect(r.body.detail.code).toBe("group_not_found");
    }
  });

  it("patches: nulls unchanged, prompt set on a catch-all, never removed, status un-archives", async () => {
    const { key } = await svc.newOrg();
    const g = (await create(key, { name: "all" })).body;
    const same = await svc.request("PATCH", `/v1/groups/${g.id}`, {
      key,
      body: { name: null, prompt: null },
    });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(g); // nothing changed, nothing written: updated_at too
    const named = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { name: "renamed" } });
    expect(named.body).toMatchObject({ name: "renamed", prompt: null, status: "active" });
    const prompted = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { prompt: "cooking" } });
    expect(prompted.body).toMatchObject({ name: "renamed", prompt: "cooking" });
    const empty = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { prompt: "" } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toMatchObject({ code: "empty_prompt", field: "prompt" });
    const stillPrompted = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { prompt: null } });
    expect(stillPrompted.body.prompt).toBe("cooking");
    const badStatus = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { status: "deleted" } });
    expect(badStatus.status).toBe(422);
    expect(badStatus.body.detail.code).toBe("invalid_request");
    expect(badStatus.body.detail.field).toBe("status");
    expect(badStatus.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    const archived = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { status: "archived" } });
    expect(archived.body.status).toBe("archived");
    const back = await svc.request("PATCH", `/v1/groups/${g.id}`, { key, body: { status: "active" } });
    expect(back.body.status).toBe("active");
    const unknown = await svc.request("PATCH", `/v1/groups/grp_${"1".repeat(32)}`, {
      key,
      body: { name: "x" },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail.code).toBe("group_not_found");
  });

  it("DELETE archives and is idempotent", async () => {
    const { key } = await svc.newOrg();
    const g = (await create(key, { name: "a" })).body;
    const first = await svc.request("DELETE", `/v1/groups/${g.id}`, { key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: g.id, status: "archived" });
    const again = await svc.request("DELETE", `/v1/groups/${g.id}`, { key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const r = await svc.request("DELETE", "/v1/groups/nope", { key });
    expect(r.status).toBe(404);
    expect(r.body.detail.code).toBe("group_not_found");
  });

  it("tenant isolation: another organisation's group reads exactly like an unknown one", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const g = (await create(a.key, { name: "secret", prompt: "p" })).body;
    const unknown = `grp_${"2".repeat(32)}`;
    const calls: [string, string, unknown?][] = [
      ["GET", "", undefined],
      ["PATCH", "", { name: "pwned", status: "archived" }],
      ["DELETE", "", undefined],
    ];
    for (const [method, , body] of calls) {
      const foreign = await svc.request(method, `/v1/groups/${g.id}`, { key: b.key, body });
      const missing = await svc.request(method, `/v1/groups/${unknown}`, { key: b.key, body });
      expect(foreign.status).toBe(404);
      expect(foreign.body.detail.code).toBe("group_not_found");
      expect(foreign.body.detail.message.replace(g.id, "ID")).toBe(
        missing.body.detail.message.replace(unknown, "ID"),
      );
    }
    expect((await svc.request("GET", "/v1/groups?include_archived=true", { key: b.key })).body.data).toEqual(
      [],
    );
    const still = await svc.request("GET", `/v1/groups/${g.id}`, { key: a.key });
    expect(still.body).toEqual(g);
  });
});
