/**
 * The synthetic organisation of bench:list and bench:filters: BENCH_ROWS memories (default
 * 100,000) written straight into one organisation, behind a service started in process (API
 * only) on the embedded database (in memory) or a fresh database on DATABASE_URL's server.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createOrg } from "../src/admin/orgs.js";
import { loadConfig } from "../src/config.js";
import { createDb, type Db } from "../src/db/db.js";
import { startEmbedded } from "../src/db/embedded.js";
import { silentLogger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { benchDatabase } from "./lib.js";

export const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const DIM = 384;

function unitVector(): string {
  const v = Array.from({ length: DIM }, () => Math.random() * 2 - 1);
  const n = Math.hypot(...v);
  return `[${v.map((x) => (x / n).toFixed(6)).join(",")}]`;
}

/**
 * types: 60% fact, 15% artifact, 20% episode, 5% lesson (excluded from the default list); 200
 * users, 5 agents, 5000 conversations; every 10th row in the group; pairs of rows share a
 * created_at, so ties are common. With `metadata`, each row has `{project: p0..p99,
 * priority: 0..4, source: chat|import}`.
 */
async function fill(db: Db, orgId: string, groupId: string, metadata: boolean) {
  // A pool of precomputed random unit vectors, reused round-robin: embeddings take real space in
  // the rows without computing 100,000 of them.
  await db.query("CREATE TEMP TABLE IF NOT EXISTS bench_vectors (n int PRIMARY KEY, v vector)");
  const vecs = Array.from({ length: 256 }, (_, n) => ({ n, v: unitVector() }));
  await db.query(
    "INSERT INTO bench_vectors SELECT x.n, x.v::vector FROM jsonb_to_recordset($1::jsonb) AS x(n int, v text)",
    [JSON.stringify(vecs)],
  );
  const meta = metadata
    ? `jsonb_build_object('project', 'p' || (g % 100), 'priority', g % 5,
         'source', CASE WHEN g % 2 = 0 THEN 'chat' ELSE 'import' END)`
    : "'{}'::jsonb";
  const batch = 20_000;
  for (let start = 0; start < ROWS; start += batch) {
    const end = Math.min(ROWS, start + batch) - 1;
    await db.query(
      `INSERT INTO memories (id, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, details, metadata,
         status, full_content, embedding, created_at, updated_at)
       SELECT gen_random_uuid(), $1,
         CASE WHEN g % 20 < 12 THEN 'fact' WHEN g % 20 < 15 THEN 'artifact' WHEN g % 20 < 19 THEN 'episode'
              ELSE 'lesson' END,
         'memory number ' || g || ' about something the user said in a conversation, kept short',
         'u' || (g % 200), 'agent' || (g % 5), 'c' || (g % 5000), 'app',
         CASE WHEN g % 10 = 0 THEN ARRAY[$2::text] ELSE '{}'::text[] END,
         jsonb_build_object('fact_type', 'preference'),
         ${meta},
         CASE WHEN g % 20 < 12 THEN 'active' END,
         CASE WHEN g % 20 BETWEEN 12 AND 14 THEN repeat('body ', 200) END,
         v.v,
         timestamptz '2025-01-01' + (g / 2) * interval '1 second' + ((g / 2) % 7) * interval '1 microsecond',
         timestamptz '2025-01-01' + (g / 2) * interval '1 second'
       FROM generate_series($3::int, $4::int) AS g JOIN bench_vectors v ON v.n = g % 256`,
      [orgId, groupId, start, end],
    );
    process.stdout.write(`  inserted ${end + 1}\n`);
  }
  await db.query("ANALYZE memories");
}

/** The service, an unlimited-tier organisation with a group, filled with ROWS memories. */
export async function startRowsBench(name: string, options: { metadata: boolean }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-"));
  const database = await benchDatabase(name);
  const config = loadConfig({
    ...process.env,
    ...database.env,
    LOG_LEVEL: "silent",
    MNEMO_DATA_DIR: dir,
    MNEMO_EMBEDDING_DIM: String(DIM),
  });
  const embedded = config.DATABASE_URL
    ? undefined
    : await startEmbedded({ dataDir: dir, maxConnections: 60, inMemory: true });
  const connectionString = config.DATABASE_URL ?? embedded!.connectionString;
  const db = createDb(connectionString, config.MNEMO_DB_POOL_SIZE, async () => {
    await embedded?.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  const runtime = await startRuntime(
    config,
    silentLogger(),
    { api: true, worker: false },
    { opened: { db, connectionString, kind: embedded ? "embedded" : "external" }, listen: false },
  );
  try {
    const app = runtime.app!;
    // The unlimited tier: the limiter still counts each request, but never refuses the benchmark.
    const { org_id: orgId, api_key: key } = await createOrg(db, { name: "bench", tier: "unlimited" });
    const group = await app.request("/v1/groups", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench" }),
    });
    const groupId = ((await group.json()) as { id: string }).id;
    console.log(`filling one organisation with ${ROWS} memories (${database.description})`);
    const t = performance.now();
    await fill(db, orgId, groupId, options.metadata);
    console.log(`  fill took ${((performance.now() - t) / 1000).toFixed(1)} s`);
    return { db, app, orgId, key, groupId, stop: () => runtime.stop() };
  } catch (err) {
    await runtime.stop();
    throw err;
  }
}

/** The p-quantile (0..1) of `xs`, nearest rank below. */
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]!;
};
