/**
 * Search and trigger latency in one organisation, over real HTTP, beside the same hybrid SQL run
 * straight through pg (vector + BM25 full text + fusion + rows: the statement the API runs), so
 * the ratio is the service's own overhead (HTTP, auth and rate limit, embedding the query, JSON).
 * Runs on the embedded database, or with DATABASE_URL on a fresh database of that server (see
 * bench/lib.ts); there, rows are loaded with COPY and sizes up to 1,000,000 are accepted.
 *   npm run bench:search [-- --sizes 10000,100000 --queries 200]
 *   DATABASE_URL=postgres://... npm run bench:search -- --sizes 100000,1000000
 */
import { pipeline } from "node:stream/promises";
import pgCopy from "pg-copy-streams";
import { createKey, createOrg } from "../src/admin/orgs.js";
import { systemCtx } from "../src/context.js";
import type { Db } from "../src/db/db.js";
import { insertMemoryRows, type NewMemoryRow } from "../src/db/memories.js";
import { hnswSettings, nearestMemories, rankCandidates, textMatches } from "../src/db/memory-search.js";
import { newMemoryId } from "../src/ids.js";
import type { Embedder } from "../src/providers/types.js";
import { vectorWeight } from "../src/search/fuse.js";
import { LINK_CANDIDATES, LINK_SPAN } from "../src/search/linked.js";
import { resolveScope } from "../src/search/scope.js";
import { arg, call, percentile, progress, startBenchService } from "./lib.js";

const SIZES = arg("sizes", "10000,100000").split(",").map(Number);
const QUERIES = Number(arg("queries", "200"));
const USERS = 10;
const LIMIT = 20;
const CONTENT = ["fact", "artifact", "episode"] as const;
const EMBEDDED_MAX = 100_000;

// Deterministic pseudo-random text: a Zipf-ish vocabulary of pronounceable words.
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const syll = [
  "ka",
  "lo",
  "mi",
  "ten",
  "ra",
  "vo",
  "shi",
  "an",
  "del",
  "po",
  "ru",
  "ex",
  "qua",
  "nor",
  "bi",
  "zet",
];
const vocab = Array.from({ length: 3000 }, (_, i) => {
  let w = "";
  let n = i + 1;
  while (n > 0) {
    w += syll[n % syll.length];
    n = Math.floor(n / syll.length);
  }
  return w;
});
const word = () => vocab[Math.floor(vocab.length * rand() ** 2.5)]!;
const sentence = (n: number) => Array.from({ length: n }, word).join(" ");
const symbols = Array.from({ length: 500 }, (_, i) => `module_${i}.ts`);

/** The next `n` rows of the corpus (every 100th a directive), with their embeddings. */
async function nextRows(orgId: string, from: number, n: number, embedder: Embedder): Promise<NewMemoryRow[]> {
  const batch: NewMemoryRow[] = [];
  for (let i = from; i < from + n; i++) {
    const directive = i % 100 === 0;
    batch.push({
      id: newMemoryId(),
      org_id: orgId,
      type: directive ? "lesson" : "fact",
      text: sentence(8 + Math.floor(rand() * 10)),
      user_id: `user-${i % USERS}`,
      conv_id: `conv-${i % 300}`,
      trigger_entities: directive ? [symbols[Math.floor(rand() * symbols.length)]!] : [],
      outcome: directive ? "resolved" : null,
    });
  }
  const vectors = await embedder.embed(batch.map((b) => b.text));
  batch.forEach((b, i) => {
    b.embedding = vectors[i]!;
  });
  return batch;
}

/**
 * COPY FROM STDIN, one statement per chunk (so the BM25 average length is known after the first),
 * with the HNSW index dropped during the load and built once at the end: inserting a million
 * rows into the graph one by one takes far longer than building it.
 */
async function copyLoad(
  db: Db,
  orgId: string,
  from: number,
  to: number,
  embedder: Embedder,
  bar: (n: number) => void,
) {
  const CHUNK = 20_000;
  await db.query("DROP INDEX IF EXISTS memories_embedding_idx");
  const client = await db.pool.connect();
  try {
    for (let start = from; start < to; start += CHUNK) {
      const n = Math.min(CHUNK, to - start);
      const rows = await nextRows(orgId, start, n, embedder);
      const copy = client.query(
        pgCopy.from(
          "COPY memories (id, org_id, type, text, user_id, conv_id, trigger_entities, outcome, status, embedding) FROM STDIN",
        ),
      );
      const lines = rows.map(
        (r) =>
          `${r.id}\t${r.org_id}\t${r.type}\t${r.text}\t${r.user_id}\t${r.conv_id}\t{${r.trigger_entities!.join(",")}}\t` +
          `${r.outcome ?? "\\N"}\t${r.type === "fact" ? "active" : "\\N"}\t[${r.embedding!.join(",")}]\n`,
      );
      await pipeline(async function* () {
        for (let i = 0; i < lines.length; i += 1000) yield lines.slice(i, i + 1000).join("");
      }, copy);
      bar(start + n - from);
    }
  } finally {
    client.release();
  }
  process.stderr.write("building the HNSW index...\n");
  const t = performance.now();
  const c = await db.pool.connect();
  try {
    // The graph of 1,000,000 vectors needs about 2 GB; past maintenance_work_mem the build slows down many times.
    await c.query("SET maintenance_work_mem = '4GB'");
    await c.query("CREATE INDEX memories_embedding_idx ON memories USING hnsw (embedding vector_cosine_ops)");
  } finally {
    c.release();
  }
  process.stderr.write(`HNSW index built in ${((performance.now() - t) / 1000).toFixed(0)} s\n`);
}

async function main() {
  const svc = await startBenchService({ MNEMO_DB_POOL_SIZE: "10" }, false, "search");
  const native = svc.database.native;
  const tooBig = SIZES.find((s) => s > EMBEDDED_MAX);
  if (!native && tooBig) {
    await svc.stop();
    throw new Error(`--sizes ${tooBig}: above ${EMBEDDED_MAX} needs native PostgreSQL (set DATABASE_URL)`);
  }
  const { db, providers } = svc.runtime.deps;
  // The unlimited tier: requests are still counted and checked, never refused.
  const org = await createOrg(db, { name: "bench", tier: "unlimited" });
  const scope = resolveScope(systemCtx(svc.runtime.deps, org.org_id, "bench"), { user_id: "user-0" });
  const weight = vectorWeight(providers.embedder.name);
  const pool = Math.min(400, Math.max(50, LIMIT * 4));
  const table: string[][] = [];
  const stages: string[] = [];
  let loaded = 0;
  for (const size of SIZES) {
    const bar = progress(`loading ${size.toLocaleString("en-US")} memories`, size - loaded);
    const t = performance.now();
    if (native) await copyLoad(db, org.org_id, loaded, size, providers.embedder, bar);
    else {
      for (let start = loaded; start < size; start += 500) {
        const rows = await nextRows(org.org_id, start, Math.min(500, size - start), providers.embedder);
        await db.tx((tx) => insertMemoryRows(tx, rows));
        bar(start + rows.length - loaded);
      }
    }
    loaded = size;
    await db.query("ANALYZE memories");
    await db.query("ANALYZE text_lexeme_stats");
    process.stderr.write(`loaded in ${((performance.now() - t) / 1000).toFixed(0)} s\n`);
    const key = (await createKey(db, { orgId: org.org_id, name: `bench-${size}` })).api_key;
    const queries = Array.from({ length: QUERIES }, () => sentence(6));
    const vectors = await providers.embedder.embed(queries);

    const timeIt = async (label: string, fn: (i: number) => Promise<unknown>) => {
      const bar = progress(label, QUERIES);
      for (let i = 0; i < 5; i++) await fn(i); // warm-up
      const ms: number[] = [];
      for (let i = 0; i < QUERIES; i++) {
        const t = performance.now();
        await fn(i);
        ms.push(performance.now() - t);
        bar(i + 1);
      }
      return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
    };
    const serverStages: Record<string, number[]> = {};
    const search = await timeIt(`search  @${size}`, async (i) => {
      const res = await call(svc.url, key, "POST", "/v1/memories/search", {
        query: queries[i % queries.length],
        user_id: "user-0",
        mode: "retrieve",
        limit: LIMIT,
      });
      for (const [k, v] of Object.entries(res.stage_timings as Record<string, number>)) {
        serverStages[k] = [...(serverStages[k] ?? []), v * 1000];
      }
    });
    // The API's ranking round trip: the nearest neighbours with their settings and the prepared
    // ranking statement (full text, fusion, episode links) in one simple query; the re-ranking,
    // the read of the rows served and the usage count are left to the API.
    const direct = await timeIt(`direct  @${size}`, (i) =>
      rankCandidates(db, {
        scope,
        types: CONTENT,
        query: queries[i % queries.length]!,
        vector: vectors[i % vectors.length]!,
        pool,
        limit: LIMIT,
        vectorWeight: weight,
        settings: { settings: hnswSettings(pool) },
        linkSpan: LINK_SPAN,
        linkFrom: LINK_CANDIDATES,
      }),
    );
    const knn = await timeIt(`knn     @${size}`, (i) =>
      db.tx((tx) => nearestMemories(tx, scope, CONTENT, vectors[i % vectors.length]!, pool), {
        settings: hnswSettings(pool),
      }),
    );
    const text = await timeIt(`text    @${size}`, (i) =>
      textMatches(db, scope, CONTENT, queries[i % queries.length]!, pool),
    );
    const trigger = await timeIt(`trigger @${size}`, (i) =>
      call(svc.url, key, "POST", "/v1/memories/trigger", {
        user_id: `user-${i % USERS}`,
        mode: "retrieve",
        action: {
          tool: "edit_file",
          args: { path: `src/lib/${symbols[i % symbols.length]}`, note: "refactor parseConfig" },
        },
      }),
    );
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND type IN ('lesson', 'procedure')",
      [org.org_id],
    );
    table.push([
      size.toLocaleString("en-US"),
      search.p50.toFixed(1),
      search.p95.toFixed(1),
      direct.p50.toFixed(1),
      direct.p95.toFixed(1),
      (search.p50 / direct.p50).toFixed(2),
      knn.p50.toFixed(1),
      text.p50.toFixed(1),
      `${trigger.p50.toFixed(1)} / ${trigger.p95.toFixed(1)} (${rows[0]!.n.toLocaleString("en-US")} directives)`,
    ]);
    stages.push(
      `${size.toLocaleString("en-US")}: ` +
        Object.entries(serverStages)
          .map(([k, v]) => `${k} ${percentile(v, 50).toFixed(2)}`)
          .join(", "),
    );
  }
  console.log(
    `\nsearch: mode=retrieve over HTTP, scope user_id (1 of ${USERS} users), limit ${LIMIT}; direct: the same` +
      ` ranking round trip (${pool} vector + ${pool} BM25 candidates, fusion, episode links) straight through pg, as the API sends it (the nearest neighbours and the prepared ranking statement in one query; not the rows served);` +
      " knn / text: each retriever alone (p50); times in ms\n",
  );
  console.log(
    "| memories | search p50 | search p95 | direct p50 | direct p95 | search/direct (p50) | knn p50 | text p50 | trigger p50 / p95 |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const r of table) console.log(`| ${r.join(" | ")} |`);
  console.log("\nsearch stage_timings reported by the server (p50, ms):");
  for (const s of stages) console.log(`  ${s}`);
  await svc.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
