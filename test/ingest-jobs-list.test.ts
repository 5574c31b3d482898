import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimJob, finishJob, recordStoredFacts } from "../src/db/jobs.js";
import { IngestJobListSchema } from "../src/wire/ingest.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { fact, seed } from "./memories-fixtures.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

async function submit(key: string, content: string): Promise<string> {
  const r = await svc.request("POST", "/v1/memories", {
    key,
    body: { user_id: "u1", conv_id: "c1", messages: [{ role: "user", content }] },
  });
  expect(r.status).toBe(202);
  return r.body.id;
}

describe("GET /v1/memories/jobs", () => {
  it("lists the organisation's jobs newest first, in keyset pages, filtered by status", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const ids = [await submit(a.key, "one"), await submit(a.key, "two"), await submit(a.key, "three")];
    await submit(b.key, "other org");
    await claimJob(svc.deps.db, ids[0]!);
    await finishJob(svc.deps.db, ids[0]!, {
      status: "failed",
      error: { type: "x", code: "boom", message: "m" },
    });
    await claimJob(svc.deps.db, ids[1]!);
    await finishJob(svc.deps.db, ids[1]!, {
      status: "succeeded",
      result: {
        object: "ingest_result",
        memories_created: [],
        memories_updated: [],
        memories_superseded_by: {},
        stage_timings: { total: 0.01 },
        ignored_group_ids: [],
      },
    });

    const first = await svc.request("GET", "/v1/memories/jobs?limit=2", { key: a.key });
    expect(first.status).toBe(200);
    IngestJobListSchema.parse(first.body);
    expect(first.body.data.map((j: { id: string }) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.data.map((j: { status: string }) => j.status)).toEqual(["pending", "succeeded"]);
    expect(first.body.has_more).toBe(true);
    const cursor = encodeURIComponent(first.body.next_cursor);
    const second = await svc.request("GET", `/v1/memories/jobs?limit=2&cursor=${cursor}`, { key: a.key });
    expect(second.body.data.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data[0].error).toEqual({ type: "x", code: "boom", message: "m" });

    const failed = await svc.request("GET", "/v1/memories/jobs?status=failed", { key: a.key });
    expect(failed.body.data.map((j: { id: string }) => j.id)).toEqual([ids[0]]);

    // Another organisation neither sees these jobs nor can use their cursor.
    const theirs = await svc.request("GET", "/v1/memories/jobs", { key: b.key });
    expect(theirs.body.data).toHaveLength(1);
    expect(ids).not.toContain(theirs.body.data[0].id);
    const foreign = await svc.request("GET", `/v1/memories/jobs?cursor=${cursor}`, { key: b.key });
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail.code).toBe("cursor_mismatch");
  });

  it("moves a job's updated_at only on a state transition (spec 2.3), not on progress or a re-claim", async () => {
    const { key } = await svc.newOrg();
    const id = await submit(key, "progress");
    const at = async () => (await svc.request("GET", `/v1/memories/jobs/${id}`, { key })).body.updated_at;
    const pending = await at();
    const settle = () => new Promise((r) => setTimeout(r, 20));
    await settle();
    await claimJob(svc.deps.db, id);
    const running = await at();
    expect(Date.parse(running)).toBeGreaterThan(Date.parse(pending));
    await settle();
    expect(await recordStoredFacts(svc.deps.db, id, 50)).toBe(true);
    await claimJob(svc.deps.db, id, { rerun: true });
    await claimJob(svc.deps.db, id);
    expect(await at()).toBe(running);
    await settle();
    await finishJob(svc.deps.db, id, { status: "failed", error: { type: "x", code: "boom", message: "m" } });
    expect(Date.parse(await at())).toBeGreaterThan(Date.parse(running));
  });

  it("refuses bad parameters with 422 and needs a key", async () => {
    const { key } = await svc.newOrg();
    for (const q of ["limit=0", "limit=101", "status=done"]) {
      expect((await svc.request("GET", `/v1/memories/jobs?${q}`, { key })).status, q).toBe(422);
    }
    expect((await svc.request("GET", "/v1/memories/jobs?cursor=forged", { key })).body.detail.code).toBe(
      "cursor_mismatch",
    );
    expect((await svc.request("GET", "/v1/memories/jobs")).status).toBe(401);
  });

  it("is published in OpenAPI and leaves GET /v1/memories/{id} alone", async () => {
    const doc = (await svc.request("GET", "/openapi.json")).body;
    expect(doc.paths["/v1/memories/jobs"].get.responses["200"]).toBeDefined();
    const org = await svc.newOrg();
    const [m] = await seed(svc, org.orgId, [fact("still reachable")]);
    const one = await svc.request("GET", `/v1/memories/${m!.id}`, { key: org.key });
    expect(one.body.text).toBe("still reachable");
  });
});

describe("GET /v1/memories?status=", () => {
  it("narrows facts to active or superseded; other types count as active", async () => {
    const org = await svc.newOrg();
    await seed(svc, org.orgId, [
      fact("current"),
      fact("old", { status: "superseded" }),
      { type: "episode", text: "an episode", user_id: "u1", conv_id: "c1" },
    ]);
    const texts = async (q: string) =>
      (await svc.request("GET", `/v1/memories?${q}`, { key: org.key })).body.data
        .map((m: { text: string }) => m.text)
        .sort();
    expect(await texts("status=active")).toEqual(["an episode", "current"]);
    expect(await texts("status=superseded")).toEqual(["old"]);
    expect(await texts("")).toEqual(["an episode", "current", "old"]);
    expect((await svc.request("GET", "/v1/memories?status=gone", { key: org.key })).status).toBe(422);
  });
});
