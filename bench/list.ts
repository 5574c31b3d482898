/**
 * List / get benchmark: fills one organisation with BENCH_ROWS memories (default 100,000), then
 * times first pages, deep pages and get-by-id through the whole HTTP stack (in process), and prints
 * the query plans. Embedded database (in memory) unless DATABASE_URL is set (then a fresh database
 * on that server; see bench/lib.ts).
 *
 *   npm run bench:list                 # BENCH_ROWS=100000 BENCH_ITER=200
 */
import { FIND_BY_ID_SQL, listMemoryQuery } from "../src/db/memories.js";
import { pct, ROWS, startRowsBench } from "./rows.js";

const ITER = Number(process.env.BENCH_ITER ?? 200);

async function main() {
  const { db, app, orgId, key, groupId, stop } = await startRowsBench("list", { metadata: false });
  try {
    const call = async (p: string) => {
      const res = await app.request(p, { headers: { "x-api-key": key } });
      if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    let t: number;
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
    await stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
