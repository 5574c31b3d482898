import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createDb } from "../src/db/db.js";
import { newJobId } from "../src/ids.js";
import { silentLogger } from "../src/logger.js";
import { type Runtime, startRuntime } from "../src/runtime.js";
import { enqueueJobWebhook } from "../src/webhooks/enqueue.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService, waitFor as waitForBase } from "./helpers/harness.js";
import { onServer } from "./helpers/test-db.js";
import { startReceiver } from "./helpers/webhook-receiver.js";

// Polls gently: every poll is an authenticated request (and rate-limit write) on a shared machine.
const waitFor = <T>(check: () => Promise<T | undefined | null | false>) =>
  waitForBase(check, { intervalMs: 100 });

const env = {
  LOG_LEVEL: "silent",
  MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
  MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
  MNEMO_WEBHOOK_TIMEOUT_MS: "2000",
  // The second attempt is due 2 s after the first: long enough to stop the first worker.
  MNEMO_WEBHOOK_RETRY_SCHEDULE: "0,2",
};

let svc: TestService;
let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  rx = await startReceiver();
  // The API and the database, with no workers of its own.
  svc = await startTestService({ env, workers: false });
});
afterAll(async () => {
  await svc?.stop();
  await rx?.close();
});

/** A worker-only runtime on the test database, as a separate `mnemo worker` process would be. */
async function startWorker(): Promise<Runtime> {
  const db = createDb(svc.connectionString, 4);
  return startRuntime(
    loadConfig({ ...env, MNEMO_DATA_DIR: "/nonexistent" }),
    silentLogger(),
    { api: false, worker: true },
    {
      opened: { db, connectionString: svc.connectionString, kind: onServer() ? "external" : "attached" },
      listen: false,
    },
  );
}

describe("webhook delivery across a worker restart", () => {
  it("the scheduled retry survives stopping the worker and runs on a new one", async () => {
    const org = await svc.newOrg();
    const put = await svc.request("PUT", "/v1/webhooks", { key: org.key, body: { url: `${rx.base}/r` } });
    expect(put.status).toBe(200);
    rx.script("/r", [{ status: 500 }, { status: 200 }]);

    const first = await startWorker();
    const jobId = newJobId();
    await svc.deps.db.tx((tx) =>
      enqueueJobWebhook(tx, svc.deps, {
        orgId: org.orgId,
        jobId,
        status: "succeeded",
        convId: "c",
        userId: "u",
        memories: [],
        memoriesUpdated: [],
        error: null,
        finishedAt: new Date(),
      }),
    );
    await waitFor(async () => rx.at("/r").length === 1);
    await first.stop();

    // Between the two: the next attempt waits in pg-boss, persisted, with nobody working.
    const { rows } = await svc.deps.db.query(
      `SELECT count(*)::int AS n FROM pgboss.job
        WHERE name = 'webhook-delivery' AND data->>'jobId' = $1 AND (data->>'attempt')::int = 2
          AND state = 'created'`,
      [jobId],
    );
    expect(rows[0].n).toBe(1);

    const second = await startWorker();
    try {
      const list = await waitFor(async () => {
        const r = await svc.request("GET", "/v1/webhooks/deliveries", { key: org.key });
        return r.body.data.some((d: { outcome: string }) => d.outcome === "delivered") ? r.body.data : null;
      });
      expect(list.map((d: { attempt: number; outcome: string }) => [d.attempt, d.outcome])).toEqual([
        [2, "delivered"],
        [1, "retrying"],
      ]);
      expect(rx.at("/r")).toHaveLength(2);
    } finally {
      await second.stop();
    }
  });
});
