import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockIngestUser } from "../src/db/locks.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { fact, seed } from "./memories-fixtures.js";

// The request path's statement deadline (MNEMO_DB_QUERY_TIMEOUT_MS) at its smallest, 1 s.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false, env: { MNEMO_DB_QUERY_TIMEOUT_MS: "1000" } });
});
afterAll(async () => {
  await svc?.stop();
});

/** Holds a user's ingest lock (as a job storing its facts does) for `ms`. */
const holdIngestLock = (orgId: string, userId: string, ms: number) =>
  svc.deps.db.tx(async (tx) => {
    await lockIngestUser(tx, orgId, userId);
    await new Promise((r) => setTimeout(r, ms));
  });

describe("the request path's statement deadline", () => {
  it("answers a request whose statement waits past it 503, but lets a forget of a whole scope finish", async () => {
    const { orgId, key } = await svc.newOrg();
    const [m] = await seed(svc, orgId, [fact("The user lives in Porto."), fact("The user has a cat.")]);

    // A text edit waits for the user's ingest lock like any statement: cut at the deadline.
    const held = holdIngestLock(orgId, "u1", 2500);
    await new Promise((r) => setTimeout(r, 200));
    const edit = await svc.request("PATCH", `/v1/memories/${m!.id}/`, {
      key,
      body: { text: "The user lives in Lisbon." },
    });
    expect(edit.status).toBe(503);
    expect(edit.body.detail.code).toBe("service_unavailable");
    await held;

    // Deleting a big scope may outlast it: it runs without it, and finishes. (On PostgreSQL its
    // statement waits for the lock past the deadline; on the embedded database its transaction
    // waits for the one session before sending any.)
    const heldAgain = holdIngestLock(orgId, "u1", 2500);
    await new Promise((r) => setTimeout(r, 200));
    const forget = await svc.request("DELETE", "/v1/memories?user_id=u1", { key });
    expect(forget.status).toBe(200);
    expect(forget.body.deleted).toBe(2);
    await heldAgain;
    expect((await svc.request("GET", "/v1/memories?user_id=u1", { key })).body.data).toEqual([]);
  });
});
