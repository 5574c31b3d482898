/**
 * Filter benchmark: one organisation with BENCH_ROWS memories (default 100,000), each with
 * metadata `{project: p0..p99, priority: 0..4, source}`, then the variant list and search with
 * metadata filters through the whole HTTP stack (in process), with p50/p95 and the query plans.
 * Embedded database (in memory) unless DATABASE_URL is set.
 *
 *   npm run bench:filters              # BENCH_ROWS=100000 BENCH_ITER=100
 */
import { listMemoryQuery } from "../src/db/memories.js";
import { parseFilters } from "../src/memories/filters.js";
import { pct, startRowsBench } from "./rows.js";

const ITER = Number(process.env.BENCH_ITER ?? 100);

async function main() {
  const { db, app, orgId, key, groupId, stop } = await startRowsBench("filters", { metadata: true });
  try {
    const post = async (p: string, body: unknown) => {
      const res = await app.request(p, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    let t: number;
    const cases: [string, string, unknown][] = [
      [
        "list: user_id + metadata.project",
        "/v1/memories/",
        { filters: { user_id: "u7", "metadata.project": "p7" } },
      ],
      [
        "list: app_id + metadata.project (1%)",
        "/v1/memories/",
        { filters: { app_id: "app", "metadata.project": "p42" } },
      ],
      [
        "list: app_id + project $in + priority $gte",
        "/v1/memories/",
        {
          filters: {
            app_id: "app",
            AND: [{ "metadata.project": { $in: ["p1", "p2"] } }, { "metadata.priority": { $gte: 3 } }],
          },
        },
      ],
      [
        "list: group + metadata.source",
        "/v1/memories/",
        { filters: { group_ids: groupId, "metadata.source": "chat" } },
      ],
      [
        "search: app_id + metadata.project (1%)",
        "/v1/memories/search/",
        {
          query: "what did the user say in the conversation",
          filters: { app_id: "app", "metadata.project": "p42" },
        },
      ],
      [
        "search: user_id + metadata.source",
        "/v1/memories/search/",
        {
          query: "what did the user say in the conversation",
          filters: { user_id: "u7", "metadata.source": "import" },
        },
      ],
    ];
    console.log(`\nlatency over ${ITER} calls each, through the HTTP stack in process (ms):`);
    for (const [name, p, body] of cases) {
      for (let i = 0; i < 5; i++) await post(p, body); // warm-up
      const xs: number[] = [];
      for (let i = 0; i < ITER; i++) {
        t = performance.now();
        await post(p, body);
        xs.push(performance.now() - t);
      }
      console.log(
        `  ${name.padEnd(44)} p50 ${pct(xs, 0.5).toFixed(2).padStart(8)}  p95 ${pct(xs, 0.95).toFixed(2).padStart(8)}`,
      );
    }

    const types = ["fact", "artifact", "episode", "lesson", "procedure"] as const;
    const base = { orgId, types, order: "created_at_desc" as const, limit: 51 };
    const plans: [string, { text: string; values: unknown[] }][] = [
      [
        "list page, app_id + metadata.project",
        listMemoryQuery({ ...base, filter: parseFilters({ app_id: "app", "metadata.project": "p42" }) }),
      ],
      [
        "list page, user_id + metadata.project",
        listMemoryQuery({ ...base, filter: parseFilters({ user_id: "u7", "metadata.project": "p7" }) }),
      ],
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
