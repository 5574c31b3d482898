import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateTo } from "../src/admin/migrate-to.js";
import { createOrg } from "../src/admin/orgs.js";
import { loadConfig } from "../src/config.js";
import { createDb, type Queryable } from "../src/db/db.js";
import { silentLogger } from "../src/logger.js";
import { type Runtime, startRuntime } from "../src/runtime.js";
import { keyFingerprint, serverKeyOf } from "../src/secret.js";
import { decryptSecret } from "../src/webhooks/secrets.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { waitFor } from "./helpers/harness.js";
import { createNativeDatabase } from "./helpers/native-pg.js";
import { migratedDataDir, spawnMnemo } from "./helpers/process.js";

// A copy of the run's migrated database, populated below: the copy is what is tested, not the
// directory's creation (PGlite's initdb and every migration, seconds of CPU in this process).
const dir = migratedDataDir("mn-mig-");
const env = {
  LOG_LEVEL: "silent",
  MNEMO_DATA_DIR: dir,
  MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
  MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
};
const config = loadConfig(env);
const targets: Array<Awaited<ReturnType<typeof createNativeDatabase>>> = [];
let key: string;
let orgId: string;
let webhookSecret: string;
let pendingJob: string;

async function call(rt: Runtime, method: string, p: string, body?: unknown) {
  const res = await rt.app!.request(p, {
    method,
    headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const TABLES = [
  "organisations",
  "api_keys",
  "groups",
  "memories",
  "ingest_jobs",
  "webhooks",
  "settings",
  "usage_counters",
];
async function counts(source: string | Queryable) {
  const db = typeof source === "string" ? createDb(source, 1) : undefined;
  const q = db ?? (source as Queryable);
  try {
    const out: Record<string, number> = {};
    for (const t of TABLES) out[t] = (await q.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n;
    return out;
  } finally {
    await db?.close();
  }
}

let sourceCounts: Record<string, number>;
beforeAll(async () => {
  // A populated embedded directory: memories, a group, a webhook, finished jobs.
  const rt = await startRuntime(config, silentLogger(), { api: true, worker: true }, { listen: false });
  try {
    const org = await createOrg(rt.deps.db, { name: "moving" });
    key = org.api_key;
    orgId = org.org_id;
    expect((await call(rt, "POST", "/v1/groups", { name: "team" })).status).toBe(201);
    const hook = await call(rt, "PUT", "/v1/webhooks", { url: "http://127.0.0.1:9/hook" });
    webhookSecret = hook.body.secret;
    for (const content of ["I drink green tea every morning.", "My favourite editor is Helix."]) {
      const r = await call(rt, "POST", "/v1/memories?wait=true", {
        user_id: "alice",
        conv_id: "c1",
        messages: [{ role: "user", content }],
      });
      expect(r.body.status).toBe("succeeded");
    }
  } finally {
    await rt.stop();
  }
}, 120_000);

afterAll(async () => {
  for (const t of targets) await t.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("admin migrate-to", () => {
  it("copies from a running embedded server onto native PostgreSQL, and the target serves the same keys, data and pending jobs", async () => {
    // An API-only process owns the directory and accepts a job no worker has run yet.
    const running = await startRuntime(
      config,
      silentLogger(),
      { api: true, worker: false },
      { listen: false },
    );
    let target: Awaited<ReturnType<typeof createNativeDatabase>>;
    try {
      const submitted = await call(running, "POST", "/v1/memories", {
        user_id: "alice",
        conv_id: "c2",
        messages: [{ role: "user", content: "I moved to Porto last spring." }],
      });
      expect(submitted.status).toBe(202);
      pendingJob = submitted.body.id;
      target = await createNativeDatabase("migrate_running");
      targets.push(target);
      const report = await migrateTo(config, silentLogger(), { target: target.url });
      expect(report.jobsRequeued).toBeGreaterThanOrEqual(1);
      expect(report.webhookSecrets).toEqual({ kept: 1, reencrypted: 0, unreadable: 0 });
      expect(report.instructions).toContain(`DATABASE_URL=${target.url}`);
      expect(report.instructions).toContain(`MNEMO_EMBEDDING_DIM=${TEST_EMBEDDING_DIM}`);
      expect(report.tables.memories).toBeGreaterThan(0);
      sourceCounts = await counts(running.deps.db);
    } finally {
      await running.stop();
    }
    expect(await counts(target.url)).toEqual(sourceCounts);
    // The waiting job keeps its expiry and its heartbeat (a dead worker's attempt retried in 30 s).
    const onTarget = createDb(target.url, 1);
    try {
      const { rows } = await onTarget.query(
        "SELECT expire_seconds, heartbeat_seconds FROM pgboss.job WHERE data->>'jobId' = $1",
        [pendingJob],
      );
      expect(rows).toEqual([{ expire_seconds: 600, heartbeat_seconds: 30 }]);
      // The copy is analyzed: the planner knows the tables are not empty before autovacuum comes.
      const { rows: stats } = await onTarget.query(
        "SELECT last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables WHERE relname = 'memories'",
      );
      expect(stats).toEqual([{ analyzed: true }]);
    } finally {
      await onTarget.close();
    }

    // The target, as production would run it: same key, the pending job runs, the webhook secret reads.
    const onPg = await startRuntime(
      loadConfig({ ...env, DATABASE_URL: target.url }),
      silentLogger(),
      { api: true, worker: true },
      { listen: false },
    );
    try {
      const job = await waitFor(async () => {
        const r = await call(onPg, "GET", `/v1/memories/jobs/${pendingJob}`);
        return r.body.status === "succeeded" ? r : undefined;
      });
      expect(job.status).toBe(200);
      const search = await call(onPg, "POST", "/v1/memories/search", {
        query: "green tea",
        user_id: "alice",
      });
      expect(search.status).toBe(200);
      expect(search.body.data.map((m: any) => m.text).join(" ")).toContain("green tea");
      const { rows } = await onPg.deps.db.query("SELECT secret_enc FROM webhooks WHERE org_id = $1", [orgId]);
      expect(decryptSecret(onPg.deps.secret, orgId, rows[0].secret_enc)).toBe(webhookSecret);
    } finally {
      await onPg.stop();
    }
  }, 240_000);

  it("copies a stopped directory, and refuses a target that is not empty", async () => {
    const target = await createNativeDatabase("migrate_stopped");
    targets.push(target);
    const report = await migrateTo(config, silentLogger(), { target: target.url });
    expect(report.tables.memories).toBe(sourceCounts.memories);
    const copied = await counts(target.url);
    expect(copied.memories).toBe(sourceCounts.memories);
    expect(copied.api_keys).toBe(sourceCounts.api_keys);
    await expect(migrateTo(config, silentLogger(), { target: target.url })).rejects.toThrow(/not empty/);
  }, 240_000);

  /** Rows in `sql` on `url`, or undefined while the table does not exist yet. */
  async function scalar(url: string, sql: string, params: unknown[] = []): Promise<number | undefined> {
    const db = createDb(url, 1);
    try {
      return (await db.query(sql, params)).rows[0].n;
    } catch {
      return undefined;
    } finally {
      await db.close();
    }
  }

  it("killed as soon as its copy commits, it leaves the waiting jobs queued on the target, and they run there", async () => {
    const target = await createNativeDatabase("migrate_killed_after");
    targets.push(target);
    const run = spawnMnemo(["admin", "migrate-to", "--target", target.url], env);
    // The copy holds `organisations` locked until it commits: this count answers right after.
    for (;;) {
      const n = await scalar(target.url, "SELECT count(*)::int AS n FROM organisations");
      if (n) break;
      if (run.child.exitCode !== null) throw new Error(`migrate-to exited: ${run.stderr()}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await run.kill("SIGKILL");
    expect(
      await scalar(target.url, "SELECT count(*)::int AS n FROM pgboss.job WHERE data->>'jobId' = $1", [
        pendingJob,
      ]),
    ).toBe(1);
    await expect(migrateTo(config, silentLogger(), { target: target.url })).rejects.toThrow(/holding data/);
    const onPg = await startRuntime(
      loadConfig({ ...env, DATABASE_URL: target.url }),
      silentLogger(),
      { api: true, worker: true },
      { listen: false },
    );
    try {
      await waitFor(async () => {
        const r = await call(onPg, "GET", `/v1/memories/jobs/${pendingJob}`);
        return r.body.status === "succeeded" ? r : undefined;
      });
    } finally {
      await onPg.stop();
    }
  }, 240_000);

  it("killed during its copy, it leaves no data, and a new run carries on there", async () => {
    const target = await createNativeDatabase("migrate_killed_during");
    targets.push(target);
    const run = spawnMnemo(["admin", "migrate-to", "--target", target.url], env);
    await run.waitFor(/copy \w+/);
    await run.kill("SIGKILL");
    expect(await scalar(target.url, "SELECT count(*)::int AS n FROM organisations")).toBe(0);
    const report = await migrateTo(config, silentLogger(), { target: target.url });
    expect(report.jobsRequeued).toBeGreaterThanOrEqual(1);
    expect(await counts(target.url)).toEqual(sourceCounts);
    expect(
      await scalar(target.url, "SELECT count(*)::int AS n FROM pgboss.job WHERE data->>'jobId' = $1", [
        pendingJob,
      ]),
    ).toBe(1);
  }, 240_000);

  it("with MNEMO_NEW_SECRET_KEY and the key kept in the database, says to run the target with the new key", async () => {
    const target = await createNativeDatabase("migrate_newkey");
    targets.push(target);
    const newKey = "NEWKEY-0123456789-0123456789-abcdefgh";
    const report = await migrateTo(loadConfig({ ...env, MNEMO_NEW_SECRET_KEY: newKey }), silentLogger(), {
      target: target.url,
    });
    expect(report.webhookSecrets).toEqual({ kept: 0, reencrypted: 1, unreadable: 0 });
    expect(report.instructions).toContain("MNEMO_SECRET_KEY=<the value of MNEMO_NEW_SECRET_KEY>");
    expect(report.instructions).not.toContain("the server key moved with the data");
    // The target records the new key's fingerprint: its first start with the new key warns of no mismatch.
    expect(
      await scalar(target.url, "SELECT value AS n FROM settings WHERE key = 'server_key_fingerprint'"),
    ).toBe(keyFingerprint(serverKeyOf(newKey)));
    // Following them, the webhook secret reads on the target.
    const onPg = await startRuntime(
      loadConfig({ ...env, DATABASE_URL: target.url, MNEMO_SECRET_KEY: newKey }),
      silentLogger(),
      { api: false, worker: false },
      { listen: false },
    );
    try {
      const { rows } = await onPg.deps.db.query("SELECT secret_enc FROM webhooks WHERE org_id = $1", [orgId]);
      expect(decryptSecret(onPg.deps.secret, orgId, rows[0].secret_enc)).toBe(webhookSecret);
    } finally {
      await onPg.stop();
    }
  }, 240_000);

  it("with MNEMO_NEW_SECRET_KEY and a MNEMO_SECRET_KEY that reads no secret, does not say they were re-encrypted", async () => {
    const target = await createNativeDatabase("migrate_wrongkey");
    targets.push(target);
    const report = await migrateTo(
      loadConfig({
        ...env,
        MNEMO_SECRET_KEY: "WRONGKEY-0123456789-0123456789-abcdefgh",
        MNEMO_NEW_SECRET_KEY: "NEWKEY-0123456789-0123456789-abcdefgh",
      }),
      silentLogger(),
      { target: target.url },
    );
    expect(report.webhookSecrets).toEqual({ kept: 0, reencrypted: 0, unreadable: 1 });
    expect(report.instructions).toContain("WARNING: 1 webhook secret(s) cannot be read");
    expect(report.instructions).not.toContain("(webhook secrets were re-encrypted under it)");
    expect(report.instructions).toContain(
      "the 1 unreadable one(s) were copied as they are and stay unreadable under either key",
    );
  }, 240_000);
});
