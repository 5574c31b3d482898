/**
 * Search and trigger latency at 10,000 and 100,000 memories in one organisation on the embedded
 * database, over real HTTP, beside the raw SQL time of the same nearest-neighbour query.
 *   npm run bench:search [-- --sizes 10000,100000 --queries 200]
 */
import { createKey, createOrg } from "../src/admin/orgs.js";
import { insertMemoryRows, type NewMemoryRow } from "../src/db/memories.js";
import { nearestMemories } from "../src/db/memory-search.js";
import { newMemoryId } from "../src/ids.js";
import { resolveScope } from "../src/search/scope.js";
import { call, percentile, progress, startBenchService } from "./lib.js";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? def) : def;
};
const SIZES = arg("sizes", "10000,100000").split(",").map(Number);
const QUERIES = Number(arg("queries", "200"));
const USERS = 10;

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

async function main() {
  const svc = await startBenchService({ MNEMO_DB_POOL_SIZE: "10" }, false);
  const { db, providers } = svc.runtime.deps;
  // The unlimited tier: requests are still counted and checked, never refused.
  const org = await createOrg(db, { name: "bench", tier: "unlimited" });
  const scope = resolveScope(org.org_id, { user_id: "user-0" });
  const rows: string[][] = [];
  let loaded = 0;
  for (const size of SIZES) {
    const bar = progress(`loading ${size.toLocaleString()} memories`, size - loaded);
    const start = loaded;
    while (loaded < size) {
      const batch: NewMemoryRow[] = [];
      for (let i = 0; i < 500 && loaded < size; i++, loaded++) {
        const directive = loaded % 100 === 0;
        const text = sentence(8 + Math.floor(rand() * 10));
        batch.push({
          id: newMemoryId(),
          org_id: org.org_id,
          type: directive ? "lesson" : "fact",
          text,
          user_id: `user-${loaded % USERS}`,
          conv_id: `conv-${loaded % 300}`,
          trigger_entities: directive ? [symbols[Math.floor(rand() * symbols.length)]!] : [],
          outcome: directive ? "resolved" : null,
        });
      }
      const vectors = await providers.embedder.embed(batch.map((b) => b.text));
      batch.forEach((b, i) => {
        b.embedding = vectors[i]!;
      });
      await db.tx((tx) => insertMemoryRows(tx, batch));
      bar(loaded - start);
    }
    await db.query("ANALYZE memories");
    const key = (await createKey(db, { orgId: org.org_id, name: `bench-${size}` })).api_key;
    const queries = Array.from({ length: QUERIES }, () => sentence(6));

    const timeIt = async (label: string, n: number, fn: (i: number) => Promise<unknown>) => {
      const bar = progress(label, n);
      for (let i = 0; i < 5; i++) await fn(i); // warm-up
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await fn(i);
        ms.push(performance.now() - t);
        bar(i + 1);
      }
      return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
    };
    const search = await timeIt(`search  @${size}`, QUERIES, (i) =>
      call(svc.url, key, "POST", "/v1/memories/search", {
        query: queries[i % queries.length],
        user_id: "user-0",
        mode: "retrieve",
      }),
    );
    const vectors = await providers.embedder.embed(queries);
    const raw = await timeIt(`raw knn @${size}`, QUERIES, (i) =>
      db.tx((tx) =>
        nearestMemories(tx, scope, ["fact", "artifact", "episode"], vectors[i % vectors.length]!, 80),
      ),
    );
    const trigger = await timeIt(`trigger @${size}`, QUERIES, (i) =>
      call(svc.url, key, "POST", "/v1/memories/trigger", {
        user_id: `user-${i % USERS}`,
        mode: "retrieve",
        action: {
          tool: "edit_file",
          args: { path: `src/lib/${symbols[i % symbols.length]}`, note: "refactor parseConfig" },
        },
      }),
    );
    rows.push([
      size.toLocaleString("en-US"),
      search.p50.toFixed(1),
      search.p95.toFixed(1),
      raw.p50.toFixed(1),
      raw.p95.toFixed(1),
      (search.p50 / raw.p50).toFixed(1),
      trigger.p50.toFixed(1),
      trigger.p95.toFixed(1),
    ]);
  }
  console.log(
    `\nsearch: mode=retrieve over HTTP, scope user_id (1 of ${USERS} users), limit 20; raw knn: the same` +
      " filtered HNSW query (iterative scan, 80 candidates) straight through pg; times in ms\n",
  );
  console.log(
    "| memories | search p50 | search p95 | raw knn p50 | raw knn p95 | search/raw (p50) | trigger p50 | trigger p95 |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  await svc.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
