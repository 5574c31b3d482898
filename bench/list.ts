/**
 * List / get benchmark: fills one organisation with BENCH_ROWS memories (default 100,000), then
 * times first pages, deep pages and get-by-id through the whole HTTP stack (in process), and prints
 * the query plans. Embedded database (in memory) unless DATABASE_URL is set (then a fresh database
 * on that server; see bench/lib.ts).
 *
 *   npm run bench:list                 # BENCH_ROWS=100000 BENCH_ITER=200
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createOrg } from "../src/admin/orgs.js";
import { loadConfig } from "../src/config.js";
import { createDb, type Db } from "../src/db/db.js";
import { startEmbedded } from "../src/db/embedded.js";
import { FIND_BY_ID_SQL, listMemoryQuery } from "../src/db/memories.js";
import { silentLogger } from "../src/logger.js";
import { startRuntime } from "../src/runtime.js";
import { benchDatabase } from "./lib.js";

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ITER = Number(process.env.BENCH_ITER ?? 200);
const DIM = 384;

function unitVector(): string {
  const v = Array.from({ length: DIM }, () => Math.random() * 2 - 1);
  const n = Math.hypot(...v);
  return `[${v.map((x) => (x / n).toFixed(6)).join(",")}]`;
}

async function fill(db: Db, orgId: string, groupId: string) {
  // A pool of precomputed random unit vectors, reused round-robin: embeddings take real space in
  // the rows without computing 100,000 of them.
  await db.query("CREATE TEMP TABLE IF NOT EXISTS bench_vectors (n int PRIMARY KEY, v vector)");
  const vecs = Array.from({ length: 256 }, (_, n) => ({ n, v: unitVector() }));
  await db.query(
    "INSERT INTO bench_vectors SELECT x.n, x.v::vector FROM jsonb_to_recordset($1::jsonb) AS x(n int, v text)",
    [JSON.stringify(vecs)],
  );
  const batch = 20_000;
  for (let start = 0; start < ROWS; start += batch) {
    const end = Math.min(ROWS, start + batch) - 1;
    // types: 60% fact, 15% artifact, 20% episode, 5% lesson (excluded from the default list);
    // 200 users, 5 agents, 5000 conversations; every 10th row tagged; pairs of rows share a
    // created_at, so ties are common.
    await db.query(
      `INSERT INTO memories (id, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, details,
         status, full_content, embedding, created_at, updated_at)
       SELECT gen_random_uuid(), $1,
         CASE WHEN g % 20 < 12 THEN 'fact' WHEN g % 20 < 15 THEN 'artifact' WHEN g % 20 < 19 THEN 'episode'
              ELSE 'lesson' END,
         'memory number ' || g || ' about something the user said in a conversation, kept short',
         'u' || (g % 200), 'agent' || (g % 5), 'c' || (g % 5000), 'app',
         CASE WHEN g % 10 = 0 THEN ARRAY[$2::text] ELSE '{}'::text[] END,
         jsonb_build_object('fact_type', 'preference'),
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

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]!;
};

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-"));
  const database = await benchDatabase("list");
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
    const call = async (p: string) => {
      const res = await app.request(p, { headers: { "x-api-key": key } });
      if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    const group = await app.request("/v1/groups", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench" }),
    });
    const groupId = ((await group.json()) as { id: string }).id;

    console.log(`filling one organisation with ${ROWS} memories (${database.description})`);
    let t = performance.now();
    await fill(db, orgId, groupId);
    console.log(`  fill took ${((performance.now() - t) / 1000).toFixed(1)} s`);

    // A deep cursor: half-way down, reached by walking 500-row pages.
    const deep: Record<string, string> = {};
    for (const order of ["created_at_desc", "created_at_asc"]) {
      let cursor = "";
      let rows = 0;
      while (rows < ROWS / 2) {
        const page = await call(`/v1/memories?limit=500&order=${order}${cursor ? `&cursor=${cursor}` : ""}`);
        rows += page.data.length;
        cursor = page.next_cursor;
      }
      deep[order] = cursor;
    }
    const sample = (await call("/v1/memories?limit=500")).data.map((m: any) => m.id as string);

    const cases: [string, () => string][] = [
      ["first page (limit 50, desc)", () => "/v1/memories?limit=50"],
      ["first page (limit 50, asc)", () => "/v1/memories?limit=50&order=created_at_asc"],
      ["deep page ~50% (limit 50, desc)", () => `/v1/memories?limit=50&cursor=${deep.created_at_desc}`],
      [
        "deep page ~50% (limit 50, asc)",
        () => `/v1/memories?limit=50&order=created_at_asc&cursor=${deep.created_at_asc}`,
      ],
      ["first page, user_id filter", () => "/v1/memories?limit=50&user_id=u7"],
      ["first page, group_id filter", () => `/v1/memories?limit=50&group_id=${groupId}`],
      ["first page (limit 500)", () => "/v1/memories?limit=500"],
      ["get by id", () => `/v1/memories/${sample[Math.floor(Math.random() * sample.length)]}`],
    ];
    console.log(`\nlatency over ${ITER} calls each, through the HTTP stack in process (ms):`);
    for (const [name, path] of cases) {
      for (let i = 0; i < 10; i++) await call(path()); // warm-up
      const xs: number[] = [];
      for (let i = 0; i < ITER; i++) {
        t = performance.now();
        await call(path());
        xs.push(performance.now() - t);
      }
      console.log(
        `  ${name.padEnd(36)} p50 ${pct(xs, 0.5).toFixed(2).padStart(7)}  p95 ${pct(xs, 0.95).toFixed(2).padStart(7)}`,
      );
    }

    const { rows: pos } = await db.query(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS t, id::text AS id
       FROM memories WHERE org_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
      [orgId, Math.floor(ROWS / 2)],
    );
    const types = ["fact", "artifact", "episode"] as const;
    const base = { orgId, types, order: "created_at_desc" as const, limit: 51 };
    const plans: [string, { text: string; values: unknown[] }][] = [
      ["first page", listMemoryQuery(base)],
      ["deep page", listMemoryQuery({ ...base, after: { createdAt: pos[0].t, id: pos[0].id } })],
      ["user_id filter", listMemoryQuery({ ...base, userId: "u7" })],
      ["group_id filter", listMemoryQuery({ ...base, groupId })],
      ["get by id", { text: FIND_BY_ID_SQL, values: [orgId, sample[0]] }],
    ];
    for (const [name, q] of plans) {
      const { rows } = await db.query(`EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF) ${q.text}`, q.values);
      console.log(`\nplan: ${name}`);
      for (const r of rows) console.log(`  ${r["QUERY PLAN"]}`);
    }
  } finally {
    await runtime.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
