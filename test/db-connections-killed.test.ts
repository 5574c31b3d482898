import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "./helpers/harness.js";
import { onMaintenance, testServerUrl } from "./helpers/test-db.js";

/**
 * PostgreSQL drops the service's connections (a restart, a failover, an operator's
 * pg_terminate_backend) while requests and ingest jobs run. Before, an attempt that lost its
 * connection failed its job for good (accepted messages never read), and a request whose
 * connection was reset answered 500. Now the attempt is retried and the request is 503: every
 * accepted job succeeds, once, with its memories stored once.
 *
 * SERVER-ONLY (vitest.config.ts): the embedded database's connections are the owner's own sockets
 * (a lost owner is test/owner-away.test.ts).
 */
let svc: TestService;
let key: string;
let orgId: string;
let dbName: string;

beforeAll(async () => {
  // An attempt whose own pg-boss record was cut off with its connection expires and is retried.
  svc = await startTestService({ env: { MNEMO_JOB_EXPIRE_SECONDS: "15" } });
  ({ key, orgId } = await svc.newOrg("killed"));
  await svc.deps.db.query("UPDATE organisations SET tier = 'unlimited' WHERE id = $1", [orgId]);
  dbName = new URL(svc.connectionString).pathname.slice(1);
});
afterAll(async () => {
  await svc?.stop();
});

/** Ends every connection to the service's database but this one. */
const dropConnections = () =>
  onMaintenance(testServerUrl()!, async (c) => {
    const { rows } = await c.query(
      "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [dbName],
    );
    return rows[0].n as number;
  });

describe("the database drops every connection during ingest", () => {
  it("fails no accepted job and stores each job's memories once", async () => {
    const accepted: string[] = [];
    let sending = true;
    const senders = Array.from({ length: 3 }, async (_, k) => {
      for (let i = 0; sending; i++) {
        const r = await svc.request("POST", "/v1/memories", {
          key,
          body: {
            user_id: "u1",
            conv_id: `c${k}-${i}`,
            messages: [{ role: "user", content: `I moved to city ${k}-${i} last year.` }],
          },
        });
        // While the connections are gone a request may be refused (503); it was not accepted.
        if (r.status === 202) accepted.push(r.body.id);
        else expect(r.status, r.text).toBe(503);
        await new Promise((res) => setTimeout(res, 30));
      }
    });
    let dropped = 0;
    for (let round = 0; round < 8; round++) {
      await new Promise((res) => setTimeout(res, 300));
      dropped += await dropConnections();
    }
    await new Promise((res) => setTimeout(res, 500));
    sending = false;
    await Promise.all(senders);
    expect(dropped).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(10);

    const deadline = Date.now() + 90_000;
    let statuses: Record<string, number> = {};
    for (;;) {
      const { rows } = await svc.deps.db.query<{ status: string; n: number }>(
        "SELECT status, count(*)::int AS n FROM ingest_jobs WHERE id = ANY($1) GROUP BY status",
        [accepted],
      );
      statuses = Object.fromEntries(rows.map((r) => [r.status, r.n]));
      if ((statuses.succeeded ?? 0) + (statuses.failed ?? 0) === accepted.length || Date.now() > deadline)
        break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(statuses).toEqual({ succeeded: accepted.length });
    // One fact per conversation: no attempt's writes were stored twice.
    const { rows } = await svc.deps.db.query<{ conv_id: string; n: number }>(
      "SELECT conv_id, count(*)::int AS n FROM memories WHERE org_id = $1 AND type = 'fact' GROUP BY conv_id HAVING count(*) <> 1",
      [orgId],
    );
    expect(rows).toEqual([]);
  }, 180_000);
});
