import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { insertJob } from "../src/db/jobs.js";
import { findMemory } from "../src/db/memories.js";
import { archiveGroup } from "../src/groups/archive.js";
import { newJobId } from "../src/ids.js";
import { runIngestJob } from "../src/ingest/run-job.js";
import { sweepIngestJobs } from "../src/ingest/sweep.js";
import { IngestJobSchema } from "../src/wire/ingest.js";
import { seedGroup } from "./helpers/groups.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const base = { user_id: "u1", conv_id: "c1" };
const turn = (content: string, role = "user") => ({ role, content });

async function ingest(key: string, body: object, wait = true) {
  return svc.request("POST", `/v1/memories${wait ? "?wait=true" : ""}`, { key, body });
}

async function countMemories(orgId: string, type?: string) {
  const { rows } = await svc.deps.db.query(
    "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND ($2::text IS NULL OR type = $2)",
    [orgId, type ?? null],
  );
  return rows[0].n as number;
}

describe("ingest validation", () => {
  it("rejects empty or blank messages with 400 invalid_messages", async () => {
    const { key } = await svc.newOrg();
    const empty = await ingest(key, { ...base, messages: [] }, false);
    expect(empty.status).toBe(400);
    expect(empty.body.detail.code).toBe("invalid_messages");
    const blank = await ingest(
      key,
      { ...base, messages: [turn("  "), turn("\n"), turn("\u200b\u200b")] },
      false,
    );
    expect(blank.status).toBe(400);
    expect(blank.body.detail.code).toBe("invalid_messages");
  });

  it("requires user_id and conv_id (min length 1) and caps namespace at 256", async () => {
    const { key } = await svc.newOrg();
    const msgs = [turn("I like green tea.")];
    const missing = await ingest(key, { conv_id: "c", messages: msgs }, false);
    expect(missing.status).toBe(422);
    // The spec's field codes; every failure stays listed with its loc under error.details.issues.
    expect(missing.body.detail).toEqual({
      code: "missing_user_id",
      message: expect.any(String),
      field: "user_id",
    });
    expect(missing.body.error.details.issues[0]).toMatchObject({ loc: ["body", "user_id"], type: "missing" });
    const nullUser = await ingest(key, { user_id: null, conv_id: "c", messages: msgs }, false);
    expect(nullUser.body.detail.code).toBe("missing_user_id");
    const emptyUser = await ingest(key, { user_id: "", conv_id: "c", messages: msgs }, false);
    expect(emptyUser.status).toBe(422);
    expect(emptyUser.body.detail).toMatchObject({ code: "missing_user_id", field: "user_id" });
    expect(emptyUser.body.error.details.issues[0].loc).toEqual(["body", "user_id"]);
    const emptyConv = await ingest(key, { user_id: "u", conv_id: "", messages: msgs }, false);
    expect(emptyConv.status).toBe(422);
    expect(emptyConv.body.detail).toMatchObject({ code: "missing_conv_id", field: "conv_id" });
    expect(emptyConv.body.error.details.issues[0].loc).toEqual(["body", "conv_id"]);
    // A blank id is no id: it would file memories under an invisible user or conversation. An
    // invisible character (a zero-width space, a BOM, a joiner) is as blank as a space.
    for (const [field, body] of [
      ["user_id", { user_id: "   ", conv_id: "c" }],
      ["conv_id", { user_id: "u", conv_id: "\t " }],
      ["user_id", { user_id: "\u200b", conv_id: "c" }],
      ["user_id", { user_id: "\u00a0\u200d\ufeff", conv_id: "c" }],
      ["conv_id", { user_id: "u", conv_id: "\u2060\u00ad" }],
    ] as const) {
      const blank = await ingest(key, { ...body, messages: msgs }, false);
      expect(blank.status, field).toBe(422);
      expect(blank.body.detail, field).toMatchObject({ code: `missing_${field}`, field });
    }
    const noConv = await ingest(key, { user_id: "u", messages: msgs }, false);
    expect(noConv.body.detail).toMatchObject({ code: "missing_conv_id", field: "conv_id" });
    const ns = await ingest(key, { ...base, messages: msgs, namespace: "x".repeat(257) }, false);
    expect(ns.status).toBe(422);
    expect(ns.body.detail).toMatchObject({ code: "namespace_too_long", field: "namespace" });
    expect(ns.body.error.details.issues[0].loc).toEqual(["body", "namespace"]);
    const ok = await ingest(key, { ...base, messages: msgs, namespace: "x".repeat(256) }, false);
    expect(ok.status).toBe(202);
  });

  it("rejects more than MAX_GROUP_IDS_PER_INGEST group ids with 422 invalid_request", async () => {
    const { key } = await svc.newOrg();
    const max = svc.deps.config.MAX_GROUP_IDS_PER_INGEST;
    const ids = Array.from({ length: max + 1 }, (_, i) => `grp_${String(i).padStart(32, "0")}`);
    const res = await ingest(key, { ...base, messages: [turn("hello there friend")], group_ids: ids }, false);
    expect(res.status).toBe(422);
    expect(res.body.detail.code).toBe("invalid_request");
    expect(res.body.detail.field).toBe("group_ids");
    expect(res.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    // The cap counts distinct ids: the cap's ids with one of them twice is accepted.
    const twice = await ingest(
      key,
      { ...base, messages: [turn("hello there friend")], group_ids: [...ids.slice(0, max), ids[0]!] },
      false,
    );
    expect(twice.status, twice.text).toBe(202);
  });

  it("rejects a bad outcome and a non-array messages", async () => {
    const { key } = await svc.newOrg();
    const bad = await ingest(key, { ...base, messages: [turn("x y z w")], outcome: "maybe" }, false);
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(["body", "outcome"]);
    // No code applies to an outcome: the array form stays, with error.code invalid_request.
    expect(bad.body.error).toMatchObject({ type: "invalid_request_error", code: "invalid_request" });
    const notArray = await ingest(key, { ...base, messages: "hi" }, false);
    expect(notArray.status).toBe(422);
    const noAuth = await svc.request("POST", "/v1/memories", {
      body: { ...base, messages: [turn("a b c d")] },
    });
    expect(noAuth.status).toBe(401);
  });
});

describe("ingest jobs", () => {
  it("answers 202 pending, then the job succeeds when polled", async () => {
    const { key, orgId } = await svc.newOrg();
    const res = await ingest(
      key,
      { ...base, messages: [turn("I moved to Lisbon in March and I work as a nurse.")] },
      false,
    );
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: "ingest_job", status: "pending", result: null, error: null });
    expect(res.body.id).toMatch(/^job_[0-9a-f]{32}$/);
    const job = await waitFor(async () => {
      const r = await svc.request("GET", `/v1/memories/jobs/${res.body.id}`, { key });
      return r.body.status === "succeeded" ? r.body : undefined;
    });
    expect(Object.keys(job).sort()).toEqual(Object.keys(res.body).sort());
    expect(IngestJobSchema.safeParse(res.body).success).toBe(true);
    expect(IngestJobSchema.safeParse(job).success).toBe(true);
    expect(job.result.object).toBe("ingest_result");
    const created = job.result.memories_created as Array<{ id: string; type: string; text: string }>;
    expect(created.filter((m) => m.type === "episode")).toHaveLength(1);
    const facts = created.filter((m) => m.type === "fact");
    expect(facts.length).toBeGreaterThan(0);
    expect(facts.some((f) => f.text.includes("Lisbon"))).toBe(true);
    for (const k of ["queue_wait", "extract", "embed", "dedup", "store", "total"]) {
      expect(typeof job.result.stage_timings[k]).toBe("number");
    }
    const fact = await findMemory(svc.deps.db, orgId, facts[0]!.id);
    expect(fact).toMatchObject({ user_id: "u1", conv_id: "c1", status: "active" });
    expect(fact!.details).toMatchObject({ source_role: "user", source_event_ids: ["0"] });
    // accepted messages are counted for usage
    const usage = await svc.request("GET", "/v1/usage", { key });
    expect(usage.body.operations.messages_ingested).toBe(1);
  });

  it("returns 404 job_not_found for unknown, malformed and other organisations' jobs", async () => {
    const a = await svc.newOrg();
    const b = await svc.newOrg();
    const res = await ingest(a.key, { ...base, messages: [turn("I enjoy long walks on the beach.")] }, false);
    const other = await svc.request("GET", `/v1/memories/jobs/${res.body.id}`, { key: b.key });
    expect(other.status).toBe(404);
    expect(other.body.detail.code).toBe("job_not_found");
    const unknown = await svc.request("GET", `/v1/memories/jobs/job_${"0".repeat(32)}`, { key: a.key });
    expect(unknown.status).toBe(404);
    const bad = await svc.request("GET", "/v1/memories/jobs/nope", { key: a.key });
    expect(bad.status).toBe(404);
    expect(bad.body.detail.code).toBe("job_not_found");
  });

  it("wait=true returns 200 with the succeeded job inline", async () => {
    const { key } = await svc.newOrg();
    const res = await ingest(key, { ...base, messages: [turn("My favourite colour is teal.")] });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    expect(res.body.result.memories_created.length).toBeGreaterThan(0);
  });

  // A cut the extractor makes (the episode's first-turn fallback at 300, an artifact's title at
  // 60, a session title's goal at 100) through an emoji's surrogate pair left a lone surrogate,
  // which PostgreSQL's json refused: the whole job failed.
  const EMOJI = "\u{1F600}";
  const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  it.each([
    [
      "the episode's first-turn fallback",
      `Can you tell me ${"which ".repeat(47)}x${EMOJI.repeat(4)} is best for me?`,
      {},
      `Can you tell me ${"which ".repeat(47)}x`,
    ],
    [
      "an artifact's title",
      `Here is my little backup script for the photos folder ${EMOJI.repeat(2)} that I run nightly:\n\`\`\`bash\nrsync -av ~/Photos /mnt/backup/photos\n\`\`\``,
      { extract_artifacts: true },
      `bash snippet: Here is my little backup script for the photos folder ${EMOJI}...`,
    ],
    [
      "a session title",
      `Please fix ${"the build ".repeat(8)}and aaaa${EMOJI.repeat(3)} in the repo today.`,
      { agentic: true },
      `Session: Please fix ${"the build ".repeat(8)}and aaaa`,
    ],
  ])("stores a job whose text has an emoji where %s is cut", async (_where, content, options, cut) => {
    const { key, orgId } = await svc.newOrg();
    const res = await ingest(key, { ...base, ...options, messages: [turn(content)] });
    expect(res.body.status).toBe("succeeded");
    const rows = await Promise.all(
      res.body.result.memories_created.map(
        async (m: { id: string }) => (await findMemory(svc.deps.db, orgId, m.id))!,
      ),
    );
    expect(rows.map((r) => `${r.text}\n${JSON.stringify(r.details)}`).join("\n")).not.toMatch(LONE);
    expect(rows.flatMap((r) => [r.text, r.details.title])).toContain(cut);
  });

  it("sweeps terminal jobs after the retention period, then reads are 404", async () => {
    const { key } = await svc.newOrg();
    const res = await ingest(key, { ...base, messages: [turn("I play the cello every weekend.")] });
    expect(res.status).toBe(200);
    const pending = await ingest(
      key,
      { ...base, messages: [turn("Another note to keep for later.")] },
      false,
    );
    // Sweeping "now" keeps everything: nothing is past retention yet.
    await sweepIngestJobs({ deps: svc.deps });
    expect((await svc.request("GET", `/v1/memories/jobs/${res.body.id}`, { key })).status).toBe(200);
    await waitFor(async () => {
      const r = await svc.request("GET", `/v1/memories/jobs/${pending.body.id}`, { key });
      return r.body.status === "succeeded";
    });
    const later = new Date(Date.now() + (svc.deps.config.MNEMO_JOB_RETENTION_HOURS + 1) * 3_600_000);
    const { deleted } = await sweepIngestJobs({ deps: svc.deps, input: { now: later } });
    expect(deleted).toBeGreaterThanOrEqual(2);
    const gone = await svc.request("GET", `/v1/memories/jobs/${res.body.id}`, { key });
    expect(gone.status).toBe(404);
    expect(gone.body.detail.code).toBe("job_not_found");
  });

  it("counts nothing twice when the same job runs again", async () => {
    const { key, orgId } = await svc.newOrg();
    const res = await ingest(key, { ...base, messages: [turn("I adopted a beagle named Max.")] });
    expect(res.status).toBe(200);
    const before = await countMemories(orgId);
    expect(before).toBeGreaterThan(0);
    // A redelivery of a finished job changes nothing.
    await svc.deps.queue.send("ingest", { jobId: res.body.id, orgId });
    await new Promise((r) => setTimeout(r, 0));
    await waitFor(async () => {
      const { rows } = await svc.deps.db.query(
        "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'ingest' AND data->>'jobId' = $1 AND state = 'completed'",
        [res.body.id],
      );
      return rows[0].n === 2;
    });
    expect(await countMemories(orgId)).toBe(before);
  });

  it("reports a group archived after the job was accepted in ignored_group_ids, and tags nothing with it", async () => {
    const { key, orgId } = await svc.newOrg();
    const kept = await seedGroup(svc.deps, orgId, { prompt: null, name: "kept" });
    const gone = await seedGroup(svc.deps, orgId, { prompt: null, name: "gone" });
    const id = newJobId();
    const request = {
      ...base,
      messages: [turn("The billing service deploys with terraform every Friday afternoon.")],
      group_ids: [kept, gone],
      ignored_group_ids: [],
    };
    await insertJob(svc.deps.db, { id, orgId, apiKeyId: null, request });
    await archiveGroup({ ctx: systemCtx(svc.deps, orgId, "t"), input: { id: gone } });
    await runIngestJob({ ctx: systemCtx(svc.deps, orgId, "t"), input: { jobId: id } });
    const job = await svc.request("GET", `/v1/memories/jobs/${id}`, { key });
    expect(job.body.status).toBe("succeeded");
    expect(job.body.result.ignored_group_ids).toEqual([gone]);
    const rows = await Promise.all(
      job.body.result.memories_created.map(
        async (m: { id: string }) => (await findMemory(svc.deps.db, orgId, m.id))!,
      ),
    );
    const deploy = rows.find((r) => r.type === "fact")!;
    expect(deploy.group_ids).toEqual([kept]);
    expect(rows.every((r) => !r.group_ids.includes(gone))).toBe(true);
  });

  it("fails a job with ingest_failed once it has used its 3 attempts", async () => {
    const { key, orgId } = await svc.newOrg();
    const id = newJobId();
    const request = {
      ...base,
      messages: [turn("I keep bees on the roof.")],
      group_ids: [],
      ignored_group_ids: [],
    };
    await insertJob(svc.deps.db, { id, orgId, apiKeyId: null, request });
    // three attempts were claimed by workers that died
    await svc.deps.db.query("UPDATE ingest_jobs SET status = 'running', attempts = 3 WHERE id = $1", [id]);
    await runIngestJob({ ctx: systemCtx(svc.deps, orgId, "t"), input: { jobId: id } });
    const job = await svc.request("GET", `/v1/memories/jobs/${id}`, { key });
    expect(job.body.status).toBe("failed");
    expect(job.body.error).toMatchObject({ type: "server_error", code: "ingest_failed" });
    expect(await countMemories(orgId)).toBe(0);
  });
});
