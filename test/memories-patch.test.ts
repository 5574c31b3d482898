import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers/harness.js";
import { createGroup, fact, seed } from "./memories-fixtures.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false, env: { MAX_GROUP_IDS_PER_INGEST: "4" } });
});
afterAll(async () => {
  await svc?.stop();
});

const patch = (key: string, id: string, body: unknown) =>
  svc.request("PATCH", `/v1/memories/${id}`, { key, body });
const read = async (key: string, id: string) =>
  (await svc.request("GET", `/v1/memories/${id}`, { key })).body;

describe("PATCH /v1/memories/{id} (group tags)", () => {
  it("adds and removes as a set, removal before addition, blanks trimmed, text and ids untouched", async () => {
    const { orgId, key } = await svc.newOrg();
    const [g1, g2, g3] = [
      await createGroup(svc, key, "1"),
      await createGroup(svc, key, "2"),
      await createGroup(svc, key, "3"),
    ];
    const [m] = await seed(svc, orgId, [fact("tea", { group_ids: [g1!], agent_id: "ag" })]);
    const r = await patch(key, m!.id, {
      add_group_ids: [g2, ` ${g3} `, "", "  ", g2],
      remove_group_ids: [g1, "grp_never_there"],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: m!.id,
      text: "tea",
      user_id: "u1",
      agent_id: "ag",
      conv_id: "c1",
      score: null,
    });
    expect(r.body.group_ids).toEqual([g2, g3]);
    expect(await read(key, m!.id)).toEqual(r.body);
    // already present ids are ignored
    const again = await patch(key, m!.id, { add_group_ids: [g3, g1] });
    expect(again.body.group_ids).toEqual([g2, g3, g1]);
  });

  it("a no-op patch writes nothing; a tag change leaves updated_at too (spec 2.1: supersede or consolidation)", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    const [m] = await seed(svc, orgId, [fact("x", { created_at: new Date("2026-01-01T00:00:00Z") })]);
    const before = await read(key, m!.id);
    const first = await patch(key, m!.id, { add_group_ids: [g] });
    expect(first.status).toBe(200);
    expect(first.body.group_ids).toEqual([g]);
    expect(first.body.updated_at).toBe(before.updated_at);
    const repeat = await patch(key, m!.id, { add_group_ids: [g] });
    expect(repeat.body).toEqual(first.body);
    const removeAbsent = await patch(key, m!.id, { remove_group_ids: ["grp_not_on_row"] });
    expect(removeAbsent.status).toBe(200);
    expect(removeAbsent.body.updated_at).toBe(first.body.updated_at);
    // a tag of a group archived since then is ignored when re-added, and can be removed
    await svc.request("DELETE", `/v1/groups/${g}`, { key });
    expect((await patch(key, m!.id, { add_group_ids: [g] })).body.updated_at).toBe(first.body.updated_at);
    const removed = await patch(key, m!.id, { remove_group_ids: [g] });
    expect(removed.body.group_ids).toEqual([]);
  });

  it("rejects empty, contradictory and invalid patches with their codes", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    const archived = await createGroup(svc, key, "old");
    await svc.request("DELETE", `/v1/groups/${archived}`, { key });
    const [m] = await seed(svc, orgId, [fact("x")]);
    const cases: [unknown, number, string][] = [
      [{}, 422, "empty_patch"],
      [{ add_group_ids: [], remove_group_ids: [] }, 422, "empty_patch"],
      [{ add_group_ids: null, remove_group_ids: null }, 422, "empty_patch"],
      [{ add_group_ids: ["", "  "] }, 422, "empty_patch"],
      [{ add_group_ids: [g], remove_group_ids: [` ${g}`] }, 422, "contradictory_group_ids"],
      [{ add_group_ids: [`grp_${"9".repeat(32)}`] }, 422, "invalid_group_ids"],
      [{ add_group_ids: ["not-a-group"] }, 422, "invalid_group_ids"],
      [{ add_group_ids: [g, archived] }, 422, "invalid_group_ids"],
    ];
    for (const [body, status, code] of cases) {
      const r = await patch(key, m!.id, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.detail.code, JSON.stringify(body)).toBe(code);
    }
    // nothing was written by any of them
    expect((await read(key, m!.id)).group_ids).toEqual([]);
    const shape = await patch(key, m!.id, { add_group_ids: "grp_x" });
    expect(shape.status).toBe(422);
    expect(shape.body.detail[0].loc).toEqual(["body", "add_group_ids"]);
    expect(shape.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
  });

  it("refuses a PATCH naming a field that never changes with 422 immutable_field", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key, "team");
    const [m] = await seed(svc, orgId, [fact("x")]);
    for (const field of ["text", "user_id", "conv_id", "agent_id", "app_id", "type", "created_at"]) {
      const r = await patch(key, m!.id, { add_group_ids: [g], [field]: "changed" });
      expect(r.status, field).toBe(422);
      expect(r.body.detail, field).toEqual({ code: "immutable_field", message: expect.any(String), field });
      expect(r.body.error, field).toMatchObject({ type: "invalid_request_error", code: "immutable_field" });
    }
    // A null counts too: the field is named.
    const nulled = await patch(key, m!.id, { user_id: null });
    expect(nulled.body.detail.code).toBe("immutable_field");
    // Nothing was written, and a field that is not a memory field is still ignored.
    expect((await read(key, m!.id)).group_ids).toEqual([]);
    const ok = await patch(key, m!.id, { add_group_ids: [g], note: "ignored" });
    expect(ok.status).toBe(200);
    expect(ok.body.group_ids).toEqual([g]);
  });

  it("caps the resulting tag count at MAX_GROUP_IDS_PER_INGEST with invalid_request", async () => {
    const { orgId, key } = await svc.newOrg();
    const gs: string[] = [];
    for (let i = 0; i < 5; i++) gs.push(await createGroup(svc, key, `g${i}`));
    const [m] = await seed(svc, orgId, [fact("x", { group_ids: gs.slice(0, 3) })]);
    const over = await patch(key, m!.id, { add_group_ids: gs.slice(3) });
    expect(over.status).toBe(422);
    expect(over.body.detail.code).toBe("invalid_request");
    expect((await read(key, m!.id)).group_ids).toEqual(gs.slice(0, 3));
    // removal first makes room
    const swap = await patch(key, m!.id, { add_group_ids: gs.slice(3), remove_group_ids: [gs[0]] });
    expect(swap.status).toBe(200);
    expect(swap.body.group_ids).toEqual([gs[1], gs[2], gs[3], gs[4]]);
  });

  it("concurrent patches of one row keep every tag", async () => {
    const { orgId, key } = await svc.newOrg();
    const gs: string[] = [];
    for (let i = 0; i < 4; i++) gs.push(await createGroup(svc, key, `g${i}`));
    const [m] = await seed(svc, orgId, [fact("shared")]);
    const results = await Promise.all(gs.map((g) => patch(key, m!.id, { add_group_ids: [g] })));
    for (const r of results) expect(r.status).toBe(200);
    expect(new Set((await read(key, m!.id)).group_ids)).toEqual(new Set(gs));
    const removals = await Promise.all(
      gs.slice(0, 2).map((g) => patch(key, m!.id, { remove_group_ids: [g] })),
    );
    for (const r of removals) expect(r.status).toBe(200);
    expect(new Set((await read(key, m!.id)).group_ids)).toEqual(new Set(gs.slice(2)));
  });

  it("a tag added to a superseded fact is refused (the active fact is the one to share); removal stays allowed", async () => {
    const { orgId, key } = await svc.newOrg();
    const [g1, g2] = [await createGroup(svc, key, "a"), await createGroup(svc, key, "b")];
    const [m] = await seed(svc, orgId, [
      fact("The office wifi network is called Falcon.", { group_ids: [g1!] }),
    ]);
    const edit = await svc.request("PATCH", `/v1/memories/${m!.id}/`, {
      key,
      body: { text: "The office wifi network is called Eagle." },
    });
    expect(edit.status).toBe(200);
    const share = await patch(key, m!.id, { add_group_ids: [g2] });
    expect(share.status).toBe(422);
    expect(share.body.detail).toMatchObject({ code: "invalid_request", field: "add_group_ids" });
    expect(share.body.detail.message).toContain("superseded");
    expect((await read(key, m!.id)).group_ids).toEqual([g1]);
    // an id already on the row is no addition; taking the old row out of a group still works
    expect((await patch(key, m!.id, { add_group_ids: [g1] })).status).toBe(200);
    const unshare = await patch(key, m!.id, { remove_group_ids: [g1] });
    expect(unshare.status).toBe(200);
    expect(unshare.body.group_ids).toEqual([]);
    // ...and the later version the edit made, which had the tag copied to it, leaves that group too.
    expect((await read(key, edit.body.id)).group_ids).toEqual([]);
    // Only tags the old row carried: the new version shared on its own stays shared when a patch
    // that changes nothing on the old row names that group.
    expect((await patch(key, edit.body.id, { add_group_ids: [g2] })).status).toBe(200);
    const noop = await patch(key, m!.id, { remove_group_ids: [g2] });
    expect(noop.status).toBe(200);
    expect((await read(key, edit.body.id)).group_ids).toEqual([g2]);
    // A row of a type with no status (an artifact, an episode) is no superseded fact: tagged as before.
    const [artifact] = await seed(svc, orgId, [
      fact("Trip budget sheet", { type: "artifact", details: { title: "budget.md", version: 1 } }),
    ]);
    expect(artifact!.status).toBeNull();
    const tagged = await patch(key, artifact!.id, { add_group_ids: [g2] });
    expect(tagged.status).toBe(200);
    expect(tagged.body.group_ids).toEqual([g2]);
  });

  it("a share racing a text edit is never a 200 that leaves the active fact without the tag", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    for (let i = 0; i < 6; i++) {
      const [m] = await seed(svc, orgId, [fact(`Locker ${i} code is 1234.`)]);
      const [edit, share] = await Promise.all([
        svc.request("PATCH", `/v1/memories/${m!.id}/`, { key, body: { text: `Locker ${i} code is 9876.` } }),
        patch(key, m!.id, { add_group_ids: [g] }),
      ]);
      expect(edit.status).toBe(200);
      const active = (
        await svc.request("GET", `/v1/memories?user_id=u1&status=active&limit=500`, { key })
      ).body.data.find((r: { text: string }) => r.text === `Locker ${i} code is 9876.`);
      expect(active).toBeDefined();
      if (share.status === 200) expect(active.group_ids).toEqual([g]);
      else expect(share.body.detail.code).toBe("invalid_request");
    }
  });

  it("an un-share racing a text edit is never a 200 that leaves the active fact in the group", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    // The un-share sent 0 to 80 ms after the edit: it meets the edit before, during and after.
    for (const [i, lag] of [0, 5, 10, 20, 40, 80].entries()) {
      const [m] = await seed(svc, orgId, [fact(`Gate ${i} code is 1234.`, { group_ids: [g] })]);
      const [edit, unshare] = await Promise.all([
        svc.request("PATCH", `/v1/memories/${m!.id}/`, { key, body: { text: `Gate ${i} code is 9876.` } }),
        sleep(lag).then(() => patch(key, m!.id, { remove_group_ids: [g] })),
      ]);
      expect(edit.status).toBe(200);
      expect(unshare.status).toBe(200);
      // Whichever came first, the current claim is out of the group, and so is the old row.
      expect((await read(key, edit.body.id)).group_ids).toEqual([]);
      expect((await read(key, m!.id)).group_ids).toEqual([]);
    }
  });

  it("a storage error is 500 patch_failed without internals", async () => {
    const { orgId, key } = await svc.newOrg();
    const g = await createGroup(svc, key);
    const [m] = await seed(svc, orgId, [fact("explode on write")]);
    // Fault injection in the real database: refuse updates of this one row.
    await svc.deps.db.query(`CREATE OR REPLACE FUNCTION test_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'disk on fire (internal detail)'; END $$`);
    await svc.deps.db.query(
      `CREATE TRIGGER test_refuse_update BEFORE UPDATE ON memories FOR EACH ROW
       WHEN (OLD.id = '${m!.id}'::uuid) EXECUTE FUNCTION test_refuse_update()`,
    );
    try {
      const r = await patch(key, m!.id, { add_group_ids: [g] });
      expect(r.status).toBe(500);
      expect(r.body.detail.code).toBe("patch_failed");
      expect(r.text).not.toContain("disk on fire");
      expect(r.body.detail.message).toContain(r.headers.get("x-request-id"));
    } finally {
      await svc.deps.db.query("DROP TRIGGER test_refuse_update ON memories");
    }
    expect((await read(key, m!.id)).group_ids).toEqual([]);
  });
});
