import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { WRITE_CHUNK_ROWS } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";

/** The cap on messages per ingest, and a store stage that writes in bounded chunks. */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { MNEMO_MAX_MESSAGES_PER_INGEST: "600" } });
});
afterAll(async () => {
  await svc?.stop();
});

const turns = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    role: "user",
    content: `My locker number ${i} is at station S${i}x.`,
  }));

describe("messages per ingest", () => {
  it("defaults to 5000", () => {
    expect(loadConfig({}).MNEMO_MAX_MESSAGES_PER_INGEST).toBe(5000);
  });

  it("above the cap is 422 too_many_messages in the error envelope, and nothing is queued", async () => {
    const { key, orgId } = await svc.newOrg();
    const r = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages: turns(601) },
    });
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatchObject({ code: "too_many_messages", message: expect.stringMatching(/600/) });
    expect(r.body).toEqual({
      detail: { code: "too_many_messages", message: expect.stringMatching(/600/), field: "messages" },
      error: expect.objectContaining({ type: "invalid_request_error", code: "too_many_messages" }),
    });
    const { rows } = await svc.deps.db.query("SELECT count(*)::int AS n FROM ingest_jobs WHERE org_id = $1", [
      orgId,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it("at the cap is accepted, and a result larger than one store chunk is stored whole", async () => {
    const { key, orgId } = await svc.newOrg();
    const r = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages: turns(600) },
    });
    expect([200, 202]).toContain(r.status);
    let job = r.body;
    while (job.status === "pending" || job.status === "running") {
      await new Promise((res) => setTimeout(res, 500));
      job = (await svc.request("GET", `/v1/memories/jobs/${job.id}`, { key })).body;
    }
    expect(job.status).toBe("succeeded");
    const created = job.result.memories_created.length;
    expect(created).toBeGreaterThan(WRITE_CHUNK_ROWS);
    const { rows } = await svc.deps.db.query("SELECT count(*)::int AS n FROM memories WHERE org_id = $1", [
      orgId,
    ]);
    expect(rows[0].n).toBe(created);
  }, 180_000);
});
