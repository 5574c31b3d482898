import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "../examples/webhook-receiver.js";
import type { Queryable } from "../src/db/db.js";
import { rewriteQueuedEvents } from "../src/db/webhooks.js";
import { newJobId } from "../src/ids.js";
import { enqueueJobWebhook, type JobTerminalEvent } from "../src/webhooks/enqueue.js";
import { encryptSecret } from "../src/webhooks/secrets.js";
import { sweepQueuedEventIndex } from "../src/webhooks/sweep.js";
import { startTestService, type TestService, waitFor as waitForBase } from "./helpers/harness.js";
import { onServer } from "./helpers/test-db.js";
import { startReceiver } from "./helpers/webhook-receiver.js";

// Polls gently: every poll is an authenticated request (and rate-limit write) on a shared machine.
const waitFor = <T>(check: () => Promise<T | undefined | null | false>) =>
  waitForBase(check, { intervalMs: 100 });

let svc: TestService;
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  rx = await startReceiver();
  svc = await startTestService({
    env: {
      MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
      MNEMO_WEBHOOK_TIMEOUT_MS: "1500",
      MNEMO_WEBHOOK_RETRY_SCHEDULE: "0,0.2,0.2",
    },
  });
});
afterAll(async () => {
  await svc?.stop();
  await rx?.close();
});

let n = 0;
/** A wait=true ingest of one user message that succeeded (its job's answer). */
async function ingested(key: string, user: string, conv: string, content: string) {
  const res = await svc.request("POST", "/v1/memories?wait=true", {
    key,
    body: { user_id: user, conv_id: conv, messages: [{ role: "user", content }] },
  });
  expect(res.body.status).toBe("succeeded");
  return res;
}

/** An organisation whose webhook points at a fresh path of the receiver. */
async function orgWithHook(body: Record<string, unknown> = {}) {
  const org = await svc.newOrg();
  const path = `/hook-${++n}`;
  const put = await svc.request("PUT", "/v1/webhooks", {
    key: org.key,
    body: { url: rx.base + path, ...body },
  });
  expect(put.status).toBe(200);
  return { ...org, path, secret: put.body.secret as string };
}

/** Stands in for the ingest job: the terminal event, enqueued in a transaction. */
async function fire(orgId: string, over: Partial<JobTerminalEvent> = {}) {
  const event: JobTerminalEvent = {
    orgId,
    jobId: newJobId(),
    status: "succeeded",
    convId: "conv-1",
    userId: "user-1",
    memories: [{ id: "3f1c2a9e-0000-4000-8000-000000000001", type: "fact" }],
    memoriesUpdated: [],
    error: null,
    finishedAt: new Date("2026-01-02T03:04:05.678Z"),
    ...over,
  };
  await svc.deps.db.tx((tx) => enqueueJobWebhook(tx, svc.deps, event));
  return event;
}

async function deliveries(key: string) {
  const r = await svc.request("GET", "/v1/webhooks/deliveries?limit=100", { key });
  expect(r.status).toBe(200);
  return (r.body.data as any[]).slice().reverse(); // oldest first
}

/** Delivery jobs for an event still waiting or running in pg-boss. */
async function pendingJobs(jobId: string) {
  const { rows } = await svc.deps.db.query(
    `SELECT count(*)::int AS n FROM pgboss.job
      WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state IN ('created', 'retry', 'active')`,
    [jobId],
  );
  return rows[0].n as number;
}

describe("webhook delivery", () => {
  it("delivers a signed completed event to a real receiver", async () => {
    const org = await orgWithHook();
    const ev = await fire(org.orgId);
    const [got] = await waitFor(async () => (rx.at(org.path).length ? rx.at(org.path) : null));
    expect(got!.headers["x-webhook-event"]).toBe("memory.learning.completed");
    expect(got!.headers["user-agent"]).toMatch(/^Mnemo-Webhooks\//);
    expect(got!.headers["x-webhook-id"]).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(got!.headers["x-webhook-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(org.secret, got!.raw, got!.headers["x-webhook-signature"] as string)).toBe(
      true,
    );
    expect(
      verifyWebhookSignature(
        org.secret,
        Buffer.concat([got!.raw, Buffer.from(" ")]),
        got!.headers["x-webhook-signature"] as string,
      ),
    ).toBe(false);
    const body = JSON.parse(got!.raw.toString());
    expect(body).toEqual({
      event: "memory.learning.completed",
      job_id: ev.jobId,
      conv_id: "conv-1",
      user_id: "user-1",
      memories: [{ id: "3f1c2a9e-0000-4000-8000-000000000001", type: "fact" }],
      memories_updated: [],
      timestamp: "2026-01-02T03:04:05.678Z",
    });
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.length ? d : null;
    });
    expect(list[0]).toMatchObject({
      object: "webhook_delivery",
      attempt: 1,
      outcome: "delivered",
      status_code: 200,
      error: null,
      job_id: ev.jobId,
      event_id: got!.headers["x-webhook-id"],
    });
    expect(list[0].duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("completed fires even with nothing extracted", async () => {
    const org = await orgWithHook();
    await fire(org.orgId, { memories: [] });
    const [got] = await waitFor(async () => (rx.at(org.path).length ? rx.at(org.path) : null));
    expect(JSON.parse(got!.raw.toString()).memories).toEqual([]);
  });

  it("rotation makes the old secret fail verification", async () => {
    const org = await orgWithHook();
    const rotated = await svc.request("PUT", "/v1/webhooks?rotate_secret=true", {
      key: org.key,
      body: { url: rx.base + org.path },
    });
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(org.secret);
    await fire(org.orgId);
    const [got] = await waitFor(async () => (rx.at(org.path).length ? rx.at(org.path) : null));
    const sig = got!.headers["x-webhook-signature"] as string;
    expect(verifyWebhookSignature(fresh, got!.raw, sig)).toBe(true);
    expect(verifyWebhookSignature(org.secret, got!.raw, sig)).toBe(false);
  });

  it("retries a 500 and then succeeds, with the same body and event id", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 500 }, { status: 200 }]);
    const ev = await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.outcome === "delivered") ? d : null;
    });
    expect(list.map((d) => [d.attempt, d.status_code, d.outcome])).toEqual([
      [1, 500, "retrying"],
      [2, 200, "delivered"],
    ]);
    const hits = rx.at(org.path);
    expect(hits).toHaveLength(2);
    expect(hits[0]!.raw.equals(hits[1]!.raw)).toBe(true);
    expect(hits[0]!.headers["x-webhook-id"]).toBe(hits[1]!.headers["x-webhook-id"]);
    // The attempt is recorded before pg-boss completes its job: wait for that, then nothing is left.
    await waitFor(async () => (await pendingJobs(ev.jobId)) === 0);
    expect(await pendingJobs(ev.jobId)).toBe(0);
  });

  /** One attempt recorded delivered (200), the job's queue drained, and the receiver posted to once. */
  const expectDeliveredOnce = async (org: { key: string; path: string }, jobId: string) => {
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.outcome === "delivered") ? d : null;
    });
    expect(list.map((d) => [d.attempt, d.status_code, d.outcome])).toEqual([[1, 200, "delivered"]]);
    await waitFor(async () => (await pendingJobs(jobId)) === 0);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.at(org.path)).toHaveLength(1);
  };
  /**
   * The real database refuses the first record of an organisation's attempts with `errcode` (a
   * sequence counts, since a raised error rolls back any table write); the attempt posted once
   * (200) is recorded at a later try, and the receiver saw the event once (before, the whole
   * attempt ran again and posted it twice).
   */
  const recordRefusedOnce = async (errcode: string, message: string) => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 200 }]);
    await svc.deps.db.query(`
      CREATE SEQUENCE test_refuse_once;
      CREATE FUNCTION test_refuse_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.org_id = '${org.orgId}' AND nextval('test_refuse_once') = 1 THEN
          RAISE EXCEPTION '${message}' USING ERRCODE = '${errcode}';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER test_refuse_once BEFORE INSERT ON webhook_deliveries
        FOR EACH ROW EXECUTE FUNCTION test_refuse_once();`);
    try {
      const ev = await fire(org.orgId);
      await expectDeliveredOnce(org, ev.jobId);
      const { rows } = await svc.deps.db.query("SELECT last_value::int AS n FROM test_refuse_once");
      expect(rows[0].n).toBe(2); // refused once, recorded at the second try
    } finally {
      await svc.deps.db.query(
        "DROP TRIGGER test_refuse_once ON webhook_deliveries; DROP FUNCTION test_refuse_once(); DROP SEQUENCE test_refuse_once",
      );
    }
  };
  it("an attempt whose record the database refused (out of a resource) is recorded later, not posted again", async () => {
    // As a full disk would (class 53).
    await recordRefusedOnce("53100", "could not extend file: No space left on device");
  });

  it("an attempt whose record the database rolled back as a deadlock is recorded at once, not posted again", async () => {
    // As when the retry's lock on the memories it names meets a forget deleting them: PostgreSQL
    // picks one transaction and rolls it back with 40P01.
    await recordRefusedOnce("40P01", "deadlock detected");
  });

  it("an attempt whose record finds the pool out of connections is recorded once one frees, not posted again", async () => {
    const org = await orgWithHook();
    let answer!: () => void;
    rx.script(org.path, [{ status: 200, wait: new Promise<void>((r) => (answer = r)) }]);
    const ev = await fire(org.orgId);
    await waitFor(async () => rx.at(org.path).length === 1);
    // While the receiver answers, every connection of the pool is taken (as a busy process's
    // requests and jobs would), for longer than a checkout waits (5 s): the record cannot have one.
    const pool = svc.deps.db.pool;
    const held = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
    answer();
    await new Promise((r) => setTimeout(r, 5_500));
    for (const c of held) c.release();
    // Before, the attempt ran again once the database answered and posted the event a second time.
    await expectDeliveredOnce(org, ev.jobId);
  }, 30_000);

  it("does not retry a 400", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 400 }, { status: 200 }]);
    const ev = await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.length ? d : null;
    });
    expect(list.map((d) => [d.attempt, d.status_code, d.outcome, d.next_attempt_at])).toEqual([
      [1, 400, "failed", null],
    ]);
    // The record and any next attempt commit together: nothing is left to run.
    expect(await pendingJobs(ev.jobId)).toBe(0);
    expect(rx.at(org.path)).toHaveLength(1);
  });

  it("gives up after the last attempt of the schedule", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503 }]);
    const ev = await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.outcome === "failed") ? d : null;
    });
    expect(list.map((d) => d.outcome)).toEqual(["retrying", "retrying", "failed"]);
    expect(await pendingJobs(ev.jobId)).toBe(0);
  });

  it("honours Retry-After on 429", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 429, headers: { "Retry-After": "1" } }, { status: 204 }]);
    await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.outcome === "delivered") ? d : null;
    });
    expect(list.map((d) => [d.status_code, d.outcome])).toEqual([
      [429, "retrying"],
      [204, "delivered"],
    ]);
    // The schedule says 0.2 s; the receiver asked for 1 s, and the next attempt was held back.
    const gap = Date.parse(list[1].created_at) - Date.parse(list[0].created_at);
    expect(gap).toBeGreaterThanOrEqual(1000);
    expect(Date.parse(list[0].next_attempt_at) - Date.parse(list[0].created_at)).toBeGreaterThanOrEqual(999);
  });

  it("times out a receiver that does not answer, and retries", async () => {
    const org = await orgWithHook();
    rx.script(org.path, ["hang", { status: 200 }]);
    await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.outcome === "delivered") ? d : null;
    });
    expect(list[0]).toMatchObject({ attempt: 1, status_code: null, error: "timeout", outcome: "retrying" });
    expect(list[1]).toMatchObject({ attempt: 2, status_code: 200, outcome: "delivered" });
  });

  it("never follows a redirect, and retries it as the spec retries any answer but a 2xx or a 4xx", async () => {
    const org = await orgWithHook();
    const internal = `/internal-${n}`;
    rx.script(org.path, [
      { status: 302, headers: { Location: `${rx.base}${internal}` } },
      { status: 307, headers: { Location: `${rx.base}${internal}` } },
      { status: 200 },
    ]);
    const ev = await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.outcome === "delivered") ? d : null;
    });
    expect(list.map((d) => [d.attempt, d.status_code, d.outcome, d.error])).toEqual([
      [1, 302, "retrying", "redirect not followed"],
      [2, 307, "retrying", "redirect not followed"],
      [3, 200, "delivered", null],
    ]);
    expect(await pendingJobs(ev.jobId)).toBe(0);
    expect(rx.at(internal)).toHaveLength(0);
    expect(rx.at(org.path)).toHaveLength(3);
  });

  it("sends the failed event with its error", async () => {
    const org = await orgWithHook({ events: ["memory.learning.failed"] });
    const error = { type: "server_error", code: "ingest_failed", message: "Extraction failed." };
    const done = await fire(org.orgId); // completed: not subscribed
    expect(await pendingJobs(done.jobId)).toBe(0);
    const ev = await fire(org.orgId, { status: "failed", memories: [], error });
    const [got] = await waitFor(async () => (rx.at(org.path).length ? rx.at(org.path) : null));
    expect(got!.headers["x-webhook-event"]).toBe("memory.learning.failed");
    expect(JSON.parse(got!.raw.toString())).toEqual({
      event: "memory.learning.failed",
      job_id: ev.jobId,
      conv_id: "conv-1",
      user_id: "user-1",
      error,
      timestamp: "2026-01-02T03:04:05.678Z",
    });
    expect(rx.at(org.path)).toHaveLength(1);
  });

  it("enabled=false and events filtering enqueue nothing", async () => {
    const off = await orgWithHook({ enabled: false });
    const a = await fire(off.orgId);
    const b = await fire(off.orgId, {
      status: "failed",
      error: { type: "server_error", code: "ingest_failed", message: "x" },
    });
    const only = await orgWithHook({ events: ["memory.learning.completed"] });
    const c = await fire(only.orgId, {
      status: "failed",
      error: { type: "server_error", code: "ingest_failed", message: "x" },
    });
    for (const e of [a, b, c]) expect(await pendingJobs(e.jobId)).toBe(0);
    // The subscribed event of the same organisation does go out (so the filter is not just broken).
    const d = await fire(only.orgId);
    await waitFor(async () => rx.at(only.path).length === 1);
    expect(JSON.parse(rx.at(only.path)[0]!.raw.toString()).job_id).toBe(d.jobId);
    expect(rx.at(off.path)).toHaveLength(0);
    expect(await deliveries(off.key)).toEqual([]);
  });

  it("a secret the server key does not decrypt: each attempt is recorded with the reason, retried, then failed; nothing is posted", async () => {
    const org = await orgWithHook();
    // As after a change of MNEMO_SECRET_KEY: the stored secret was encrypted under another key.
    await svc.deps.db.query("UPDATE webhooks SET secret_enc = $2 WHERE org_id = $1", [
      org.orgId,
      encryptSecret(Buffer.alloc(32, 7), org.orgId, "whsec_fromanotherkey"),
    ]);
    const ev = await fire(org.orgId);
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.length === 3 ? d : null;
    });
    expect(list.map((d) => d.outcome)).toEqual(["retrying", "retrying", "failed"]);
    for (const d of list) {
      expect(d).toMatchObject({ job_id: ev.jobId, status_code: null });
      expect(d.error).toMatch(/cannot be decrypted with the server key.*PUT \/v1\/webhooks/);
    }
    await waitFor(async () => (await pendingJobs(ev.jobId)) === 0);
    expect(rx.at(org.path)).toEqual([]);
  });

  // Each case: the first attempt fails and asks for 2 s, the config changes meanwhile; the queued
  // retry is dropped, and the drop is on record (the event's last record no longer reads retrying).
  it.each([
    ["disabled", [{ enabled: false }]],
    ["disabled, then enabled again", [{ enabled: false }, { enabled: true }]],
    ["deleted, then created again", ["DELETE", {}]],
  ] as const)(
    "a delivery queued before the webhook was %s is dropped, and the drop recorded",
    async (_, changes) => {
      const org = await orgWithHook();
      rx.script(org.path, [{ status: 503, headers: { "Retry-After": "2" } }, { status: 200 }]);
      const ev = await fire(org.orgId);
      await waitFor(async () => (await deliveries(org.key)).length === 1);
      for (const change of changes) {
        const r =
          change === "DELETE"
            ? await svc.request("DELETE", "/v1/webhooks", { key: org.key })
            : await svc.request("PUT", "/v1/webhooks", {
                key: org.key,
                body: { url: rx.base + org.path, ...change },
              });
        expect(r.status).toBeLessThan(300);
      }
      await waitFor(async () => (await pendingJobs(ev.jobId)) === 0);
      expect(rx.at(org.path)).toHaveLength(1);
      const list = await deliveries(org.key);
      expect(list.map((d) => [d.attempt, d.outcome])).toEqual([
        [1, "retrying"],
        [2, "failed"],
      ]);
      expect(list[1].status_code).toBeNull();
      expect(list[1].error).toMatch(/^not sent: .*dropped$/);
    },
  );

  it("a URL change keeps the queued retry: it goes to the new URL", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "Retry-After": "1" } }]);
    const moved = `${org.path}-moved`;
    rx.script(moved, [{ status: 200 }]);
    const ev = await fire(org.orgId);
    await waitFor(async () => (await deliveries(org.key)).length === 1);
    const put = await svc.request("PUT", "/v1/webhooks", { key: org.key, body: { url: rx.base + moved } });
    expect(put.status).toBe(200);
    await waitFor(async () => (await pendingJobs(ev.jobId)) === 0);
    expect(rx.at(moved)).toHaveLength(1);
  });

  it("a delivery job run again after its event was delivered does not post twice", async () => {
    const org = await orgWithHook();
    const ev = await fire(org.orgId);
    await waitFor(async () => (await deliveries(org.key)).length === 1);
    await waitFor(async () => (await pendingJobs(ev.jobId)) === 0);
    // What pg-boss does when a worker dies after recording the attempt but before completing the job.
    const { rows } = await svc.deps.db.query(
      "SELECT data FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1",
      [ev.jobId],
    );
    expect(rows).toHaveLength(1);
    await svc.deps.queue.send("webhook-delivery", rows[0].data);
    await waitFor(async () => {
      const { rows: done } = await svc.deps.db.query(
        `SELECT count(*)::int AS n FROM pgboss.job
          WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state = 'completed'`,
        [ev.jobId],
      );
      return done[0].n === 2;
    });
    expect(rx.at(org.path)).toHaveLength(1);
    expect((await deliveries(org.key)).map((d) => d.outcome)).toEqual(["delivered"]);
  });

  it("a real ingest through POST /v1/memories fires memory.learning.completed", async () => {
    const org = await orgWithHook();
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key: org.key,
      body: {
        user_id: "u-ingest",
        conv_id: "c-ingest",
        messages: [{ role: "user", content: "I moved to Lisbon last year and I prefer green tea." }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    const [got] = await waitFor(async () => (rx.at(org.path).length ? rx.at(org.path) : null));
    expect(verifyWebhookSignature(org.secret, got!.raw, got!.headers["x-webhook-signature"] as string)).toBe(
      true,
    );
    const body = JSON.parse(got!.raw.toString());
    expect(body).toMatchObject({
      event: "memory.learning.completed",
      job_id: res.body.id,
      conv_id: "c-ingest",
      user_id: "u-ingest",
    });
    const created = (res.body.result.memories_created as Array<{ id: string; type: string }>).map((m) => ({
      id: m.id,
      type: m.type,
    }));
    expect(body.memories).toEqual(created);
    expect(Object.keys(body).sort()).toEqual(
      ["conv_id", "event", "job_id", "memories", "memories_updated", "timestamp", "user_id"].sort(),
    );
  });

  it("a forget of the user drops its jobs' waiting retries and the bodies the queue kept", async () => {
    const org = await orgWithHook();
    // The receiver is away for an hour: the next attempt waits in the queue, its body with it.
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const said = "My therapist prescribed sertraline for my anxiety.";
    const jobs: string[] = [];
    for (const conv of ["w1", "w2"]) {
      const res = await ingested(org.key, "wh", conv, said);
      jobs.push(res.body.id);
    }
    await waitFor(async () => (await pendingJobs(jobs[1]!)) === 1 && (await deliveries(org.key)).length >= 2);
    const kept = async () =>
      (
        await svc.deps.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = ANY($1::text[])",
          [jobs],
        )
      ).rows[0]!.n;
    expect(await kept()).toBeGreaterThanOrEqual(3);
    const forget = await svc.request("DELETE", "/v1/memories?user_id=wh", { key: org.key });
    expect(forget.body.jobs_deleted).toBe(2);
    expect(await pendingJobs(jobs[0]!)).toBe(0);
    expect(await pendingJobs(jobs[1]!)).toBe(0);
    expect(await kept()).toBe(0);
    // Each event's last record says it was dropped, not "retrying" for ever.
    const last = new Map<string, { outcome: string; error: string | null }>();
    for (const d of await deliveries(org.key)) last.set(d.event_id, d);
    expect(last.size).toBe(2);
    for (const d of last.values()) {
      expect(d.outcome).toBe("failed");
      expect(d.error).toBe("not sent: its memories were forgotten; the delivery was dropped");
    }
  });

  it("a forget of the user drops its queued events also after job retention removed the jobs' records", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const res = await ingested(org.key, "whs", "s1", "I take lithium for my bipolar disorder.");
    const other = await ingested(org.key, "whs-other", "s1", "I collect vinyl records.");
    await waitFor(
      async () => (await pendingJobs(res.body.id)) === 1 && (await pendingJobs(other.body.id)) === 1,
    );
    await svc.deps.db.query("DELETE FROM ingest_jobs WHERE id = ANY($1::text[])", [
      [res.body.id, other.body.id],
    ]);
    const forget = await svc.request("DELETE", "/v1/memories?user_id=whs", { key: org.key });
    expect(forget.status).toBe(200);
    expect(forget.body.jobs_deleted).toBe(0);
    expect(await pendingJobs(res.body.id)).toBe(0);
    // Another user's event stays queued.
    expect(await pendingJobs(other.body.id)).toBe(1);
  });

  // A forget of the first conversation deletes the fact with it; the second conversation's event is
  // outside the scope, so it is rewritten, not dropped.
  it.each([
    ["a deleted memory", (fact: string) => `/v1/memories/${fact}`, 204],
    ["a forget of the conversation that stored it", () => "/v1/memories?user_id=whd&conv_id=d1", 200],
  ] as const)(
    "%s leaves the event of a retry still queued and the bodies the queue kept: its text is not sent",
    async (_, route, status) => {
      const org = await orgWithHook();
      // The receiver is away: each event's next attempt waits in the queue, its body with it.
      rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
      const said = "My bank PIN hint is the name of my first cat Whiskers.";
      // The second conversation restates the fact: its event reports it in memories_updated, with text.
      let job = "";
      for (const conv of ["d1", "d2"]) {
        const res = await ingested(org.key, "whd", conv, said);
        job = res.body.id;
      }
      const report = await svc.request("GET", `/v1/memories/jobs/${job}`, { key: org.key });
      const fact = (report.body.result.memories_updated as Array<{ id: string; text: string }>).find((m) =>
        /Whiskers/.test(m.text),
      );
      expect(fact).toBeDefined();
      await waitFor(async () => (await deliveries(org.key)).length >= 2);
      // The job's own record may be gone already (job retention): the event is found by what it names.
      await svc.deps.db.query("DELETE FROM ingest_jobs WHERE id = $1", [job]);
      const queued = async () =>
        (
          await svc.deps.db.query<{ body: string }>(
            `SELECT data->>'body' AS body FROM pgboss.job
            WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state IN ('created', 'retry')`,
            [job],
          )
        ).rows.map((r) => r.body);
      // Every body the queue holds of the organisation, the attempts already made included.
      const kept = async () =>
        (
          await svc.deps.db.query<{ body: string }>(
            "SELECT data->>'body' AS body FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'orgId' = $1",
            [org.orgId],
          )
        ).rows.map((r) => r.body);
      expect((await queued()).some((b) => b.includes("Whiskers"))).toBe(true);
      expect((await kept()).filter((b) => b.includes(fact!.id)).length).toBeGreaterThanOrEqual(2);
      expect((await svc.request("DELETE", route(fact!.id), { key: org.key })).status).toBe(status);
      const [body] = await queued();
      expect(body).toBeDefined();
      expect(body).not.toContain("Whiskers");
      expect((await kept()).filter((b) => b.includes("Whiskers") || b.includes(fact!.id))).toEqual([]);
      // The receiver is back and the retry's turn comes: what it is sent is the rewritten event, signed.
      rx.script(org.path, [{ status: 200 }]);
      await svc.deps.db.query(
        "UPDATE pgboss.job SET start_after = now() WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state IN ('created', 'retry')",
        [job],
      );
      await waitFor(async () => (await pendingJobs(job)) === 0);
      const got = rx.at(org.path).at(-1)!;
      const sent = JSON.parse(got.raw.toString());
      expect(sent).toMatchObject({ event: "memory.learning.completed", job_id: job, user_id: "whd" });
      expect(sent.memories_updated.map((m: { id: string }) => m.id)).not.toContain(fact!.id);
      expect(got.raw.toString()).not.toContain("Whiskers");
      expect(verifyWebhookSignature(org.secret, got.raw, got.headers["x-webhook-signature"] as string)).toBe(
        true,
      );
    },
  );

  it("a delete reads only the queued events that name its memories, never the organisation's others", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const res = await ingested(org.key, "whr", "r1", "My locker code is 4711.");
    const fact = (res.body.result.memories_created as Array<{ id: string; type: string }>).find(
      (m) => m.type === "fact",
    )!;
    await waitFor(
      async () => (await deliveries(org.key)).length === 1 && (await pendingJobs(res.body.id)) === 1,
    );
    const named = async () =>
      (
        await svc.deps.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook_event_memories WHERE org_id = $1 AND memory_id = $2",
          [org.orgId, fact.id],
        )
      ).rows[0]!.n;
    // The first attempt, kept by the queue, and the retry waiting its turn.
    expect(await named()).toBe(2);
    // Another event of the organisation, naming none of them, whose body no parser reads: a delete
    // that read every kept event's body (as it did, 25-40 µs each, about 1 s a delete at 21,000 kept
    // events) fails on it.
    const other = await svc.deps.queue.send(
      "webhook-delivery",
      {
        orgId: org.orgId,
        eventId: "evt_unrelated",
        event: "memory.learning.completed",
        jobId: newJobId(),
        body: "{not json",
        attempt: 2,
      },
      { startAfterSeconds: 3600 },
    );
    expect(other).toBeTruthy();
    expect((await svc.request("DELETE", `/v1/memories/${fact.id}`, { key: org.key })).status).toBe(204);
    const bodies = await svc.deps.db.query<{ id: string; body: string }>(
      "SELECT id::text, data->>'body' AS body FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'orgId' = $1",
      [org.orgId],
    );
    expect(bodies.rows.find((r) => r.id === other)?.body).toBe("{not json");
    expect(bodies.rows.filter((r) => r.body.includes(fact.id))).toEqual([]);
    expect(await named()).toBe(0);
    // The service never queues such a body; other tests' forgets and sql/107 read every one.
    await svc.deps.db.query("DELETE FROM pgboss.job WHERE name = 'webhook-delivery' AND id = $1::uuid", [
      other,
    ]);
  });

  /**
   * An organisation whose event's first attempt is in the receiver's hands (held until `answer`)
   * and then fails with 503, as every later one does; the job that made the event, with `content`.
   */
  const heldFirstAttempt = async (user: string, content: string) => {
    const org = await orgWithHook();
    let answer!: () => void;
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    rx.script(org.path, [
      { status: 503, headers: { "retry-after": "3600" }, wait: held },
      { status: 503, headers: { "retry-after": "3600" } },
    ]);
    const res = await ingested(org.key, user, "c1", content);
    await waitFor(async () => rx.at(org.path).length === 1);
    return { org, res, answer };
  };

  it("a retry of the attempt that ran while a memory was deleted carries the event without it", async () => {
    // The first attempt is in the receiver's hands when the memory goes, and then fails.
    const { org, res, answer } = await heldFirstAttempt("whx", "My alarm code is 8812.");
    const fact = (res.body.result.memories_created as Array<{ id: string; type: string }>).find(
      (m) => m.type === "fact",
    )!;
    expect(rx.at(org.path)[0]!.raw.toString()).toContain(fact.id);
    expect((await svc.request("DELETE", `/v1/memories/${fact.id}`, { key: org.key })).status).toBe(204);
    answer();
    const retries = async () =>
      (
        await svc.deps.db.query<{ body: string }>(
          `SELECT data->>'body' AS body FROM pgboss.job
            WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state IN ('created', 'retry')`,
          [res.body.id],
        )
      ).rows;
    await waitFor(async () => (await retries()).length === 1);
    const rows = await retries();
    const body = JSON.parse(rows[0]!.body);
    expect(body).toMatchObject({ event: "memory.learning.completed", job_id: res.body.id });
    expect(rows[0]!.body).not.toContain(fact.id);
    expect(rows[0]!.body).not.toContain("8812");
    // The episode the job wrote is still named, as it reads now.
    expect(JSON.stringify(body.memories)).toContain('"episode"');
    // The attempt that was under way, as the queue keeps it once it ended, no longer holds it either
    // (nor would the queue's rerun of it, had its worker died).
    await waitFor(async () => (await pendingJobs(res.body.id)) === 1);
    const kept = await svc.deps.db.query<{ state: string; body: string }>(
      "SELECT state::text, data->>'body' AS body FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1",
      [res.body.id],
    );
    expect(kept.rows.map((r) => r.state).sort()).toEqual(["completed", "created"]);
    expect(kept.rows.filter((r) => r.body.includes("8812") || r.body.includes(fact.id))).toEqual([]);
  });

  /** Until `n` sessions of the test's database wait for a lock (the interleavings below, on a server). */
  const lockWaiters = (n: number) =>
    waitFor(async () => {
      const { rows } = await svc.deps.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return rows[0]!.n >= n;
    });
  /**
   * A transaction of another session that runs `first` and then stays open (its locks held, its
   * writes uncommitted) until `release`, which commits it.
   */
  const heldOpen = async (first: (tx: Queryable) => Promise<unknown>) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const hasStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const done = svc.deps.db.tx(async (tx) => {
      await first(tx);
      started();
      await held;
    });
    await Promise.race([hasStarted, done]);
    return {
      release: async () => {
        release();
        await done;
      },
    };
  };

  // Only a fact's delete takes its user's ingest lock: an episode's or an artifact's of the same
  // event may rewrite it at once. At once needs two sessions, a PostgreSQL server; the embedded
  // database (one session) runs them one after the other.
  it("two deletes rewriting the same queued event at once each leave it", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const ids = ["3f1c2a9e-0000-4000-8000-0000000000c1", "3f1c2a9e-0000-4000-8000-0000000000c2"];
    const ev = await fire(org.orgId, {
      memories: [
        { id: ids[0]!, type: "fact" },
        { id: ids[1]!, type: "episode" },
      ],
    });
    await waitFor(
      async () => (await pendingJobs(ev.jobId)) === 1 && (await deliveries(org.key)).length === 1,
    );
    const bodies = async () =>
      (
        await svc.deps.db.query<{ body: string }>(
          "SELECT data->>'body' AS body FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1",
          [ev.jobId],
        )
      ).rows;
    if (!onServer()) {
      await svc.deps.db.tx((tx) => rewriteQueuedEvents(tx, org.orgId, [ids[0]!], []));
      await svc.deps.db.tx((tx) => rewriteQueuedEvents(tx, org.orgId, [ids[1]!], []));
      const rows = await bodies();
      expect(rows).toHaveLength(2);
      expect(rows.filter((r) => ids.some((id) => r.body.includes(id)))).toEqual([]);
      return;
    }
    const first = await heldOpen((tx) => rewriteQueuedEvents(tx, org.orgId, [ids[0]!], []));
    // The second reads the events before the first commits, then waits for its row locks.
    const second = svc.deps.db.tx((tx) => rewriteQueuedEvents(tx, org.orgId, [ids[1]!], []));
    await lockWaiters(1);
    await first.release();
    await second;
    const rows = await bodies();
    expect(rows).toHaveLength(2);
    expect(rows.filter((r) => ids.some((id) => r.body.includes(id)))).toEqual([]);
  });

  it("a forget of the scope while an attempt of its event runs leaves no retry of it", async () => {
    const { org, res, answer } = await heldFirstAttempt("whf", "My gym locker is 77.");
    const forgot = await svc.request("DELETE", "/v1/memories?user_id=whf", { key: org.key });
    expect(forgot.status).toBe(200);
    answer();
    // The attempt is recorded as failed, naming why, and nothing waits to be sent.
    const list = await waitFor(async () => {
      const d = await deliveries(org.key);
      return d.some((x) => x.attempt === 1) ? d : null;
    });
    const first = list.find((d) => d.attempt === 1)!;
    expect(first).toMatchObject({ status_code: 503, outcome: "failed", next_attempt_at: null });
    expect(first.error).toContain("not retried: its memories were forgotten");
    await waitFor(async () => (await pendingJobs(res.body.id)) === 0);
    const { rows } = await svc.deps.db.query<{ body: string }>(
      "SELECT data->>'body' AS body FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state IN ('created', 'retry', 'active')",
      [res.body.id],
    );
    expect(rows).toEqual([]);
    expect(rx.at(org.path)).toHaveLength(1);
    // The attempt's row, which the queue keeps an hour after it ended, no longer names the erased
    // user and conversation (its body did), nor its memories.
    const kept = await svc.deps.db.query<{ state: string; data: { body: string; forgotten?: boolean } }>(
      "SELECT state::text, data FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1",
      [res.body.id],
    );
    expect(kept.rows.map((r) => [r.state, r.data.forgotten])).toEqual([["completed", true]]);
    expect(JSON.stringify(kept.rows)).not.toContain("whf");
    expect(JSON.parse(kept.rows[0]!.data.body)).toEqual({});
  });

  // The attempt's record locks the memories its retry names, the forget deletes them and then
  // drops or marks the scope's delivery jobs. The record read (FOR SHARE) its own job row first:
  // with the forget holding the memories and waiting for that row, the two deadlocked, and the
  // forget, rolled back, answered 500 with nothing forgotten. Here the forget is held (another
  // session locks its scope's ingest job record) until the record waits for the memories, and
  // released once PostgreSQL's deadlock check of that wait (deadlock_timeout) has passed, so that
  // a cycle is found by the forget's own wait.
  it("a forget of the scope while an attempt of its event records its retry is not refused", async () => {
    const { org, res, answer } = await heldFirstAttempt("whd", "My bike lock code is 4471.");
    let forgot: Awaited<ReturnType<typeof svc.request>>;
    if (!onServer()) {
      answer();
      forgot = await svc.request("DELETE", "/v1/memories?user_id=whd", { key: org.key });
    } else {
      const holder = await heldOpen((tx) =>
        tx.query("SELECT 1 FROM ingest_jobs WHERE id = $1 FOR UPDATE", [res.body.id]),
      );
      const forgetting = svc.request("DELETE", "/v1/memories?user_id=whd", { key: org.key });
      await lockWaiters(1); // the forget, its memories deleted, waits for the job record
      answer();
      await lockWaiters(2); // the attempt's record waits for the memories
      const { rows } = await svc.deps.db.query<{ ms: number }>(
        "SELECT extract(epoch FROM current_setting('deadlock_timeout')::interval)::float8 * 1000 AS ms",
      );
      await new Promise((r) => setTimeout(r, rows[0]!.ms + 500));
      await holder.release();
      forgot = await forgetting;
    }
    expect(forgot.status).toBe(200);
    expect(forgot.body.deleted).toBeGreaterThan(0);
    await waitFor(async () => (await pendingJobs(res.body.id)) === 0);
    // The event's last record says why nothing follows: not retried (the record came second, as on
    // a server here), or its retry dropped (the embedded database may record first).
    const list = await deliveries(org.key);
    expect(list.at(-1)).toMatchObject({ outcome: "failed", next_attempt_at: null });
    expect(list.at(-1).error).toMatch(
      onServer()
        ? /^HTTP 503; not retried: its memories were forgotten$/
        : /not retried: its memories were forgotten|not sent: its memories were forgotten; the delivery was dropped/,
    );
    expect(rx.at(org.path)).toHaveLength(1);
  }, 30_000);

  // The queue's fetch of a waiting retry (its state made active) committing while the forget's
  // statement ran: the retry was neither dropped (it read active by then) nor marked (it read
  // waiting in the statement's snapshot), and it was sent after the forget naming the erased user.
  // Here another session plays the fetch, held open until the forget waits for it.
  it("a forget of the scope while the queue fetches a waiting retry of its event marks that attempt", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const res = await ingested(org.key, "whq", "q1", "My landlord Mr. Kovac lives upstairs.");
    const retry = await waitFor(async () => {
      const { rows } = await svc.deps.db.query<{ id: string }>(
        `SELECT id::text FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1
            AND state = 'created' AND data->>'attempt' = '2'`,
        [res.body.id],
      );
      return rows[0]?.id;
    });
    const fetch =
      "UPDATE pgboss.job SET state = 'active', started_on = now() WHERE name = 'webhook-delivery' AND id = $1";
    let forgot: Awaited<ReturnType<typeof svc.request>>;
    if (!onServer()) {
      await svc.deps.db.query(fetch, [retry]);
      forgot = await svc.request("DELETE", "/v1/memories?user_id=whq", { key: org.key });
    } else {
      const fetching = await heldOpen((tx) => tx.query(fetch, [retry]));
      const forgetting = svc.request("DELETE", "/v1/memories?user_id=whq", { key: org.key });
      await lockWaiters(1);
      await fetching.release();
      forgot = await forgetting;
    }
    expect(forgot.status).toBe(200);
    const { rows } = await svc.deps.db.query<{ state: string; forgotten: string | null }>(
      "SELECT state::text, data->>'forgotten' AS forgotten FROM pgboss.job WHERE name = 'webhook-delivery' AND id = $1",
      [retry],
    );
    // The attempt under way is marked: it queues no retry, and the queue's rerun of it posts nothing.
    expect(rows).toEqual([{ state: "active", forgotten: "true" }]);
    await svc.deps.db.query(
      "UPDATE pgboss.job SET state = 'completed' WHERE name = 'webhook-delivery' AND id = $1",
      [retry],
    );
  });

  it("forgets which memories a delivery job named once pg-boss has deleted the job", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const ev = await fire(org.orgId, {
      memories: [{ id: "3f1c2a9e-0000-4000-8000-00000000beef", type: "fact" }],
    });
    await waitFor(
      async () => (await pendingJobs(ev.jobId)) === 1 && (await deliveries(org.key)).length === 1,
    );
    const rows = async () =>
      (
        await svc.deps.db.query<{ state: string }>(
          `SELECT q.state FROM webhook_event_memories s
             LEFT JOIN pgboss.job q ON q.name = 'webhook-delivery' AND q.id = s.delivery_job_id
            WHERE s.org_id = $1 ORDER BY q.state::text`,
          [org.orgId],
        )
      ).rows.map((r) => r.state);
    expect(await rows()).toEqual(["completed", "created"]);
    // pg-boss deletes a finished attempt's job an hour after it ended.
    await svc.deps.db.query(
      "DELETE FROM pgboss.job WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND state = 'completed'",
      [ev.jobId],
    );
    expect((await sweepQueuedEventIndex({ deps: svc.deps })).deleted).toBeGreaterThanOrEqual(1);
    expect(await rows()).toEqual(["created"]);
  });

  it("the events queued before the upgrade are found by the memories they name (sql/107)", async () => {
    const org = await orgWithHook();
    rx.script(org.path, [{ status: 503, headers: { "retry-after": "3600" } }]);
    const ids = ["3f1c2a9e-0000-4000-8000-0000000000a1", "3f1c2a9e-0000-4000-8000-0000000000a2"];
    const ev = await fire(org.orgId, {
      memories: [{ id: ids[0]!, type: "fact" }],
      memoriesUpdated: [{ id: ids[1]!, type: "episode", text: "The user likes tea." }],
    });
    await waitFor(
      async () => (await pendingJobs(ev.jobId)) === 1 && (await deliveries(org.key)).length === 1,
    );
    const named = async () =>
      (
        await svc.deps.db.query<{ memory_id: string; n: number }>(
          `SELECT memory_id, count(*)::int AS n FROM webhook_event_memories WHERE org_id = $1
            GROUP BY memory_id ORDER BY memory_id`,
          [org.orgId],
        )
      ).rows;
    // The first attempt, kept, and the retry waiting its turn each name both.
    const indexed = [
      { memory_id: ids[0], n: 2 },
      { memory_id: ids[1], n: 2 },
    ];
    expect(await named()).toEqual(indexed);
    // As a version before sql/107 left them: queued, with nothing naming them; beside them a body
    // that is not JSON (none is written, but an upgrade must not stop at start on one).
    await svc.deps.db.query("DELETE FROM webhook_event_memories WHERE org_id = $1", [org.orgId]);
    const broken = await svc.deps.queue.send(
      "webhook-delivery",
      {
        orgId: org.orgId,
        eventId: "evt_broken",
        event: "memory.learning.completed",
        jobId: newJobId(),
        body: "{not json",
        attempt: 2,
      },
      { startAfterSeconds: 3600 },
    );
    try {
      await svc.deps.db.query("SELECT mnemo_index_queued_events()");
      expect(await named()).toEqual(indexed);
    } finally {
      await svc.deps.db.query("DELETE FROM pgboss.job WHERE name = 'webhook-delivery' AND id = $1::uuid", [
        broken,
      ]);
    }
  });
});

/** A job's terminal event on a service of a test's own (no memories). */
const fireAt = (s: TestService, orgId: string) =>
  s.deps.db.tx((tx) =>
    enqueueJobWebhook(tx, s.deps, {
      orgId,
      jobId: newJobId(),
      status: "succeeded",
      convId: "conv-1",
      userId: "user-1",
      memories: [],
      memoriesUpdated: [],
      error: null,
      finishedAt: new Date(),
    }),
  );

describe("a receiver that does not answer", () => {
  it("holds only its own attempts: the organisation's other events arrive meanwhile", async () => {
    // Attempts may wait a minute for an answer here; the first two are held until the end.
    const slow = await startTestService({
      env: { MNEMO_WEBHOOK_ALLOW_PRIVATE: "true", MNEMO_WEBHOOK_TIMEOUT_MS: "60000" },
    });
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    try {
      const org = await slow.newOrg();
      const path = `/hook-held-${++n}`;
      rx.script(path, [{ status: 200, wait: held }, { status: 200, wait: held }, { status: 200 }]);
      const put = await slow.request("PUT", "/v1/webhooks", { key: org.key, body: { url: rx.base + path } });
      expect(put.status).toBe(200);
      const fireOn = () => fireAt(slow, org.orgId);
      const delivered = async () => {
        const r = await slow.request("GET", "/v1/webhooks/deliveries?limit=100", { key: org.key });
        return (r.body.data as { outcome: string }[]).filter((d) => d.outcome === "delivered").length;
      };
      // Two attempts in flight, each waiting on the receiver.
      await fireOn();
      await waitFor(async () => rx.at(path).length === 1);
      await fireOn();
      await waitFor(async () => rx.at(path).length === 2);
      // Ten more events: posted and recorded while those two still wait (before, in batches run
      // by two slots, they waited behind them for the whole time-out).
      for (let i = 0; i < 10; i++) await fireOn();
      await waitFor(async () => (await delivered()) === 10);
      expect(rx.at(path)).toHaveLength(12);
      release();
      await waitFor(async () => (await delivered()) === 12);
    } finally {
      release();
      await slow.stop();
    }
  });

  it("holds a share of the slots: another organisation's event arrives while one's receiver hangs", async () => {
    // Three slots, two of them at most for one organisation's attempts (all but one, by default).
    const slow = await startTestService({
      env: {
        MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
        MNEMO_WEBHOOK_TIMEOUT_MS: "60000",
        MNEMO_WEBHOOK_CONCURRENCY: "3",
      },
    });
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    try {
      const hooked = async (script: Parameters<typeof rx.script>[1]) => {
        const org = await slow.newOrg();
        const path = `/hook-share-${++n}`;
        rx.script(path, script);
        const put = await slow.request("PUT", "/v1/webhooks", {
          key: org.key,
          body: { url: rx.base + path },
        });
        expect(put.status).toBe(200);
        return { ...org, path };
      };
      const stuck = await hooked([
        { status: 200, wait: held },
        { status: 200, wait: held },
        { status: 200, wait: held },
      ]);
      const other = await hooked([{ status: 200 }]);
      const fireOn = (orgId: string) => fireAt(slow, orgId);
      // One at a time: slots fetching at the same instant may each take one past the cap (the count
      // is read by each fetch), as three did at once on PostgreSQL.
      for (let i = 1; i <= 2; i++) {
        await fireOn(stuck.orgId);
        await waitFor(async () => rx.at(stuck.path).length === i);
      }
      await fireOn(stuck.orgId);
      // Before, the third took the last slot, and this event waited for the minute-long time-out.
      await fireOn(other.orgId);
      await waitFor(async () => rx.at(other.path).length === 1);
      expect(rx.at(stuck.path)).toHaveLength(2);
      release();
      await waitFor(async () => rx.at(stuck.path).length === 3);
    } finally {
      release();
      await slow.stop();
    }
  });
});
