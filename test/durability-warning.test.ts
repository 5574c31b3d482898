import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createDb } from "../src/db/db.js";
import { startRuntime } from "../src/runtime.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { createTestDatabase, onMaintenance, type TestDatabase, testServerUrl } from "./helpers/test-db.js";

/**
 * Start-up on PostgreSQL says what the server's durability settings can cost: `fsync = off` (a
 * power loss can corrupt the database) and `synchronous_commit = off` (a crash loses commits it
 * acknowledged; `bench:soak` saw results of finished jobs lost that way). Nothing is said when the
 * server keeps what it acknowledged.
 *
 * SERVER-ONLY (vitest.config.ts): the settings of a PostgreSQL server at DATABASE_URL.
 */
const made: TestDatabase[] = [];
afterEach(async () => {
  for (const d of made.splice(0)) await d.drop();
});

/** The warnings a start-up of the API role logs on a database whose synchronous_commit is `sync`. */
async function startUpWarnings(sync: "on" | "off"): Promise<string[]> {
  const copy = await createTestDatabase();
  made.push(copy);
  await onMaintenance(testServerUrl()!, (c) =>
    c.query(`ALTER DATABASE ${copy.name} SET synchronous_commit = ${sync}`),
  );
  const lines: string[] = [];
  const log = pino({ level: "warn" }, { write: (line: string) => lines.push(JSON.parse(line).msg) });
  const config = loadConfig({
    LOG_LEVEL: "warn",
    MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
    DATABASE_URL: copy.url,
    MNEMO_SECRET_KEY: "a-test-secret-key-of-some-length-0123456789",
  });
  const runtime = await startRuntime(
    config,
    log,
    { api: true, worker: false },
    { opened: { db: createDb(copy.url, 2), connectionString: copy.url, kind: "external" }, listen: false },
  );
  await runtime.stop();
  return lines;
}

const serverFsync = () =>
  onMaintenance(testServerUrl()!, async (c) => (await c.query("SHOW fsync")).rows[0].fsync as string);

describe("start-up on PostgreSQL", () => {
  it("warns when the server acknowledges commits before they are written", async () => {
    const warnings = (await startUpWarnings("off")).filter((m) => m.startsWith("PostgreSQL "));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("synchronous_commit is off: a crash of the server loses the last commits");
    expect(warnings[0]).toContain("accepted ingest jobs are committed durably all the same");
    expect(warnings[0]!.includes("fsync is off")).toBe((await serverFsync()) === "off");
  });

  it("says nothing of synchronous_commit when it is on", async () => {
    const warnings = (await startUpWarnings("on")).filter((m) => m.startsWith("PostgreSQL "));
    expect(warnings.some((m) => m.includes("synchronous_commit"))).toBe(false);
    expect(warnings.length).toBe((await serverFsync()) === "off" ? 1 : 0);
  });
});
