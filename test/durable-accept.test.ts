import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService, waitFor } from "./helpers/harness.js";
import { onMaintenance, onServer, testServerUrl } from "./helpers/test-db.js";

/**
 * An accepted ingest (202 and a job id) is committed durably whatever the server's
 * `synchronous_commit`. With it off, PostgreSQL acknowledges a commit before its WAL is written:
 * `bench:soak` stopping the server in immediate mode under load then left clients polling job ids
 * that no longer existed (404). The accepting transaction now raises the setting to `on` for
 * itself (insertJob); other transactions keep the server's setting.
 *
 * The setting each accepting transaction ran with is recorded by a trigger on the real database.
 */
let svc: TestService;
let key: string;
let dbName: string;

/** Makes `value` the setting of every session the service uses, on either database. */
async function defaultSynchronousCommit(value: "on" | "off" | "local") {
  if (onServer()) {
    await onMaintenance(testServerUrl()!, async (c) => {
      await c.query(`ALTER DATABASE ${dbName} SET synchronous_commit = ${value}`);
      // The pool's sessions started with the old default: end them, the pool opens new ones.
      await c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
        [dbName],
      );
    });
  } else {
    // The embedded database has one session, which every connection shares.
    await svc.deps.db.query(`SET synchronous_commit = ${value}`);
  }
}

/** The service pool's own setting, outside any accepting transaction (retried past lost sessions). */
const poolSetting = () =>
  waitFor(
    async () => {
      try {
        const { rows } = await svc.deps.db.query<{ s: string }>(
          "SELECT current_setting('synchronous_commit') AS s",
        );
        return rows[0]!.s;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 20_000 },
  );

beforeAll(async () => {
  svc = await startTestService({ workers: false });
  ({ key } = await svc.newOrg("durable"));
  dbName = (await svc.deps.db.query<{ d: string }>("SELECT current_database() AS d")).rows[0]!.d;
  await svc.deps.db.query(`
    CREATE TABLE commit_settings_seen (job_id text PRIMARY KEY, setting text NOT NULL);
    CREATE FUNCTION record_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO commit_settings_seen VALUES (NEW.id, current_setting('synchronous_commit'));
      RETURN NEW;
    END $$;
    CREATE TRIGGER record_commit_setting AFTER INSERT ON ingest_jobs
      FOR EACH ROW EXECUTE FUNCTION record_commit_setting();`);
});
afterAll(async () => {
  if (svc) await defaultSynchronousCommit("on").catch(() => {});
  await svc?.stop();
});

/**
 * Ingests one message and returns the setting its accepting transaction committed with. Right
 * after the sessions were ended a request may find the database away (503): it is sent again.
 */
async function acceptedWith(content: string): Promise<string> {
  const accepted = await waitFor(
    async () => {
      const r = await svc.request("POST", "/v1/memories", {
        key,
        body: { user_id: "u1", conv_id: "c1", messages: [{ role: "user", content }] },
      });
      if (r.status === 503) return undefined;
      expect(r.status, r.text).toBe(202);
      return r.body.id as string;
    },
    { timeoutMs: 20_000 },
  );
  const { rows } = await svc.deps.db.query<{ setting: string }>(
    "SELECT setting FROM commit_settings_seen WHERE job_id = $1",
    [accepted],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!.setting;
}

describe("accepting an ingest job", () => {
  it("commits durably when the server's synchronous_commit is off, and only that transaction", async () => {
    await defaultSynchronousCommit("off");
    expect(await poolSetting()).toBe("off");
    expect(await acceptedWith("I keep bees on the roof.")).toBe("on");
    // Raised for the accepting transaction only: the session's setting is the server's.
    expect(await poolSetting()).toBe("off");
  });

  it("keeps a setting that is not off", async () => {
    await defaultSynchronousCommit("local");
    expect(await poolSetting()).toBe("local");
    expect(await acceptedWith("I keep two hives.")).toBe("local");
  });
});
