import { existsSync } from "node:fs";
import path from "node:path";
import { bossDb, startBoss } from "../../jobs/boss.js";
import { QUEUES } from "../../jobs/queues.js";
import { type Config, PostgresUrl } from "../config.js";
import {
  copyTableRows,
  countRows,
  existingContents,
  fixSequences,
  foreignKeyEdges,
  pendingJobs,
  publicTables,
  setUserTriggers,
} from "../db/copy.js";
import { createDb, type Queryable, withSnapshot } from "../db/db.js";
import { findRunningServer, startEmbedded } from "../db/embedded.js";
import { migrate } from "../db/migrate.js";
import { requireVector } from "../db/open.js";
import { swapKeyFingerprint } from "../db/settings.js";
import { CoreError } from "../errors.js";
import type { Logger } from "../logger.js";
import { keyFingerprint, serverKeyOf } from "../secret.js";
import { decryptSecret, encryptSecret } from "../webhooks/secrets.js";
import { progress } from "./progress.js";

export interface MigrateReport {
  target: string;
  tables: Record<string, number>;
  jobsRequeued: number;
  webhookSecrets: { kept: number; reencrypted: number; unreadable: number };
  instructions: string;
}

/**
 * What is wrong with a --target, or undefined: a URL of another scheme (`mysql://x/y`, or
 * `127.0.0.1:54329/db`, which parses as one) is refused as DATABASE_URL is, before any connection.
 */
export function targetProblem(target: string): string | undefined {
  const parsed = PostgresUrl.safeParse(target);
  return parsed.success && parsed.data
    ? undefined
    : `--target ${parsed.error?.issues[0]?.message ?? "is required"}`;
}

/**
 * Copies every table of the embedded data directory (MNEMO_DATA_DIR) to an empty PostgreSQL with
 * pgvector. The source is read in one read-only snapshot: through the running server's socket when
 * one serves the directory (its own requests wait until the copy is done: the embedded database
 * has a single session), else by opening the directory. The target gets the schema by the normal
 * migrations and pg-boss's schema, then in one transaction every row (ids, keys, job history,
 * delivery records and the server key as they are), the webhook secrets re-encrypted when asked,
 * and the waiting jobs (below), checked by row counts before it commits. A run stopped before
 * that commit leaves the schemas with no data, and a new run carries on there; after it, the
 * target is complete, jobs included: no accepted job is left behind either way.
 *
 * pg-boss: its tables are not copied. The target's pg-boss starts with an empty schema, and the
 * jobs still waiting in the source (ingest jobs not yet run, webhook attempts scheduled for later)
 * are sent again to the target's queues with their ids, data and start times, in the copy's
 * transaction; finished pg-boss jobs are not copied (our own `ingest_jobs` and
 * `webhook_deliveries` tables are the history, and they are copied in full). Schedules are
 * recreated by the workers when they start.
 */
export async function migrateTo(
  config: Config,
  log: Logger,
  input: { target: string },
): Promise<MigrateReport> {
  if (config.DATABASE_URL)
    throw new CoreError(
      "invalid_request",
      "admin migrate-to copies the embedded data directory (MNEMO_DATA_DIR); unset DATABASE_URL to run it.",
    );
  const wrong = targetProblem(input.target);
  if (wrong) throw new CoreError("invalid_request", wrong);
  const dataDir = path.resolve(config.MNEMO_DATA_DIR);
  const running = await findRunningServer(dataDir);
  if (!running && !existsSync(path.join(dataDir, "pgdata")))
    throw new CoreError("not_found", `No embedded database in ${dataDir} (set MNEMO_DATA_DIR).`);
  const embedded = running ? undefined : await startEmbedded({ dataDir, maxConnections: 8 });
  const source = createDb(running ?? embedded!.connectionString, 2, async () => embedded?.stop(), true);
  const target = createDb(input.target, 2);
  try {
    await target.query("SELECT 1").catch((err: Error) => {
      throw new CoreError("invalid_request", `cannot connect to --target: ${err.message}`);
    });
    await requireVector(target, "--target");
    // Empty, or Mnemo's schema without data (what a run stopped before its commit leaves).
    const held = await existingContents(target);
    if (held.data || ((held.tables > 0 || held.boss) && !held.migrated))
      throw new CoreError(
        "invalid_request",
        `the target database is not empty (${held.tables} tables in schema public${held.boss ? ", a pgboss schema" : ""}` +
          `${held.data ? ", holding data" : ""}); migrate-to only writes into an empty database ` +
          "(CREATE DATABASE ... and point --target at it), or one where an earlier migrate-to stopped before copying.",
      );

    const dim = Number(
      (await source.query<{ value: string }>("SELECT value FROM settings WHERE key = 'embedding_dim'"))
        .rows[0]?.value,
    );
    await migrate(target, { embeddingDim: dim });
    // pg-boss's schema and queues on the target, so that the waiting jobs go in the copy's transaction.
    const boss = await startBoss(input.target, log, { max: 2, schedule: false });

    const result = await withSnapshot(source, async (snap) => {
      const tables = order(await publicTables(snap), await foreignKeyEdges(snap));
      const counts: Record<string, number> = {};
      return target.tx(async (tx) => {
        for (const t of tables) await setUserTriggers(tx, t.name, false);
        for (const t of tables) {
          if (t.name === "schema_migrations") continue; // the target's own migrations wrote it
          const total = await countRows(snap, t.name);
          const bar = progress(`copy ${t.name}`, total);
          await copyTableRows(snap, tx, t, (n) => bar.add(n));
          bar.done();
          counts[t.name] = total;
        }
        for (const t of tables) await setUserTriggers(tx, t.name, true);
        await fixSequences(tx);
        const wrong: string[] = [];
        for (const t of tables) {
          const [a, b] = [await countRows(snap, t.name), await countRows(tx, t.name)];
          if (a !== b) wrong.push(`${t.name}: source ${a}, target ${b}`);
        }
        if (wrong.length)
          throw new CoreError(
            "invalid_request",
            `row counts differ, nothing was kept:\n  ${wrong.join("\n  ")}`,
          );
        counts.schema_migrations = await countRows(tx, "schema_migrations");
        const secrets = await checkWebhookSecrets(snap, tx, config);
        // The waiting jobs, committed with the rows: a stop at any point strands none.
        const jobs = await pendingJobs(snap, Object.keys(QUEUES));
        for (const j of jobs) {
          await boss.send(j.name, j.data ?? {}, {
            db: bossDb(tx),
            id: j.id,
            startAfter: j.start_after,
            ...(j.singleton_key ? { singletonKey: j.singleton_key } : {}),
            ...(j.expire_seconds ? { expireInSeconds: j.expire_seconds } : {}),
            ...(j.heartbeat_seconds ? { heartbeatSeconds: j.heartbeat_seconds } : {}),
          });
        }
        return { counts, jobs, secrets };
      });
    }).finally(() => boss.stop({ graceful: false }));
    const { secrets } = result;
    // Planner statistics for what was copied: until autovacuum comes by (a minute or more after
    // the copy), the planner believed the tables empty and a search of 50,000 memories took
    // 350-400 ms instead of 40-70.
    await target.query("ANALYZE");

    // Secrets this process could not read were copied as they are: re-encrypted they were not.
    const keyLine = config.MNEMO_NEW_SECRET_KEY
      ? secrets.unreadable
        ? `  MNEMO_SECRET_KEY=<the value of MNEMO_NEW_SECRET_KEY>   (${secrets.reencrypted} webhook secret(s) were re-encrypted under it;\n` +
          `   the ${secrets.unreadable} unreadable one(s) were copied as they are and stay unreadable under either key)`
        : "  MNEMO_SECRET_KEY=<the value of MNEMO_NEW_SECRET_KEY>   (webhook secrets were re-encrypted under it)"
      : config.MNEMO_SECRET_KEY
        ? secrets.unreadable
          ? `  MNEMO_SECRET_KEY=<the same value as now>   (the webhook secrets it reads are encrypted under it;\n` +
            `   the ${secrets.unreadable} unreadable one(s) were copied as they are)`
          : "  MNEMO_SECRET_KEY=<the same value as now>   (webhook secrets are encrypted under it)"
        : "  (the server key moved with the data, in the settings table; to hold it in the environment instead,\n" +
          "   set MNEMO_SECRET_KEY to: SELECT value FROM settings WHERE key = 'server_secret')";
    const instructions = [
      `Copied to ${redact(input.target)}:`,
      ...Object.entries(result.counts).map(([t, n]) => `  ${t.padEnd(22)} ${n} rows`),
      `  pending jobs re-sent   ${result.jobs.length}`,
      ...(secrets.unreadable
        ? [
            `WARNING: ${secrets.unreadable} webhook secret(s) cannot be read with this MNEMO_SECRET_KEY; they were`,
            "copied as they are. Run migrate-to with the server's own MNEMO_SECRET_KEY, or after the move",
            "rotate them (PUT /v1/webhooks?rotate_secret=true) and give the receivers the new secret.",
          ]
        : []),
      "",
      "Row counts match. Now stop every process on the embedded directory and start Mnemo with:",
      `  DATABASE_URL=${redact(input.target)}`,
      `  MNEMO_EMBEDDING_DIM=${dim}`,
      keyLine,
      `The embedded directory ${dataDir} is left as it was.`,
    ].join("\n");
    return {
      target: redact(input.target),
      tables: result.counts,
      jobsRequeued: result.jobs.length,
      webhookSecrets: secrets,
      instructions,
    };
  } finally {
    await target.close();
    await source.close();
  }
}

/** Parents before children (foreign keys); otherwise by name, so runs are repeatable. */
function order<T extends { name: string }>(
  tables: T[],
  edges: Array<{ child: string; parent: string }>,
): T[] {
  const out: T[] = [];
  const done = new Set<string>();
  const visit = (t: T, seen: Set<string>) => {
    if (done.has(t.name) || seen.has(t.name)) return;
    seen.add(t.name);
    for (const e of edges)
      if (e.child === t.name && e.parent !== t.name) {
        const p = tables.find((x) => x.name === e.parent);
        if (p) visit(p, seen);
      }
    done.add(t.name);
    out.push(t);
  };
  for (const t of [...tables].sort((a, b) => a.name.localeCompare(b.name))) visit(t, new Set());
  return out;
}

/**
 * The webhook secrets are AES-GCM ciphertexts under the server key. They stay readable on the
 * target when it runs with the same key; with MNEMO_NEW_SECRET_KEY set they are re-encrypted
 * under that key; any that this process cannot read are counted for a clear warning.
 */
async function checkWebhookSecrets(source: Queryable, target: Queryable, config: Config) {
  const stored = (
    await source.query<{ value: string }>("SELECT value FROM settings WHERE key = 'server_secret'")
  ).rows[0]?.value;
  const current = config.MNEMO_SECRET_KEY ?? stored;
  const out = { kept: 0, reencrypted: 0, unreadable: 0 };
  const { rows } = await target.query<{ org_id: string; secret_enc: string }>(
    "SELECT org_id, secret_enc FROM webhooks",
  );
  const next = config.MNEMO_NEW_SECRET_KEY;
  for (const r of rows) {
    let plain: string;
    try {
      if (!current) throw new Error("no key");
      plain = decryptSecret(serverKeyOf(current), r.org_id, r.secret_enc);
    } catch {
      out.unreadable++;
      continue;
    }
    if (next && next !== current) {
      await target.query("UPDATE webhooks SET secret_enc = $2 WHERE org_id = $1", [
        r.org_id,
        encryptSecret(serverKeyOf(next), r.org_id, plain),
      ]);
      out.reencrypted++;
    } else out.kept++;
  }
  // The key the target will run with is the new one: the fingerprint copied with the settings is
  // the old key's, and the first start would warn of a key mismatch that is not there.
  if (next) await swapKeyFingerprint(target, keyFingerprint(serverKeyOf(next)));
  return out;
}

const redact = (url: string) => url.replace(/\/\/([^:@/]+):[^@/]+@/, "//$1:***@");
