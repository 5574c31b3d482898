import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createDb } from "../src/db/db.js";
import { JOB_FINISHED_CHANNEL } from "../src/db/jobs.js";
import { jobSignals } from "../src/ingest/signals.js";
import { silentLogger } from "../src/logger.js";
import { type Runtime, startRuntime } from "../src/runtime.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";
import { onServer } from "./helpers/test-db.js";

/**
 * Cross-process wake-up (LISTEN/NOTIFY), on either database: an API-only service and a separate
 * worker-only runtime (its own Deps, so no in-process signal can pass between them, as between
 * two processes). Figures (pickup latency) are in `npm run bench:pickup`; this checks the wiring.
 */
let svc: TestService;
let worker: Runtime | undefined;
let listener: pg.Client | undefined;
const env = { LOG_LEVEL: "silent", MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM) };

beforeAll(async () => {
  svc = await startTestService({ env, workers: false });
});
afterAll(async () => {
  await listener?.end().catch(() => {});
  await worker?.stop();
  await svc?.stop();
});

describe("wake-up across processes", () => {
  it("an ingest notifies the queue in its transaction, and the finish reaches the other process's wait=true", async () => {
    // A plain client LISTENing on pg-boss's channel and on ours sees what other processes would.
    listener = new pg.Client({ connectionString: svc.connectionString });
    await listener.connect();
    const { rows } = await listener.query<{ channel: string }>(
      "SELECT 'pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24) AS channel",
    );
    const notes: Array<{ channel: string; payload: string | undefined }> = [];
    listener.on("notification", (n) => notes.push({ channel: n.channel, payload: n.payload }));
    await listener.query(`LISTEN "${rows[0]!.channel}"`);
    await listener.query(`LISTEN ${JOB_FINISHED_CHANNEL}`);

    const { key } = await svc.newOrg();
    const first = await svc.request("POST", "/v1/memories", {
      key,
      body: { user_id: "u1", conv_id: "c1", messages: [{ role: "user", content: "I live in Porto." }] },
    });
    expect(first.status).toBe(202);
    // Sent with the job row: the queue's workers in every process are woken.
    await waitFor(async () => notes.some((n) => n.channel === rows[0]!.channel && n.payload === "ingest"));

    // Now a worker in "another process" runs it; the API's wait=true hold ends on the relayed
    // finish signal, which only LISTEN/NOTIFY can bring to this Deps.
    worker = await startRuntime(
      loadConfig({ ...env, MNEMO_DATA_DIR: "/nonexistent" }),
      silentLogger(),
      { api: false, worker: true },
      {
        opened: {
          db: createDb(svc.connectionString, 4),
          connectionString: svc.connectionString,
          kind: onServer() ? "external" : "attached",
        },
        listen: false,
      },
    );
    // Record the signals raised on the API's hub (no worker of its own raises any there).
    const raised: string[] = [];
    const hub = jobSignals(svc.deps);
    const emit = hub.emit.bind(hub);
    hub.emit = (event: string | symbol, ...args: unknown[]) => {
      raised.push(String(event));
      return emit(event, ...args);
    };
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "c2", messages: [{ role: "user", content: "I work as a nurse." }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    await waitFor(async () =>
      notes.some((n) => n.channel === JOB_FINISHED_CHANNEL && n.payload === res.body.id),
    );
    expect(raised).toContain(`finished:${res.body.id}`);
    // The first job too: picked up by the new worker and announced when it finished.
    await waitFor(async () => raised.includes(`finished:${first.body.id}`));
    expect(notes.some((n) => n.channel === JOB_FINISHED_CHANNEL && n.payload === first.body.id)).toBe(true);
  });
});
