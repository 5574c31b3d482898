import { readFileSync } from "node:fs";
import { OpenAPIHono } from "@hono/zod-openapi";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorResponse } from "../rest/errors.js";
import { requireAuth } from "../rest/middleware/auth.js";
import { requestContext } from "../rest/middleware/request.js";
import type { AppEnv } from "../rest/types.js";
import { createOrg } from "../src/admin/orgs.js";
import { hashApiKey } from "../src/auth/keys.js";
import { type Deps, systemCtx } from "../src/context.js";
import { analyzeIfStale, checkpointWhereNoneRuns } from "../src/db/analyze.js";
import { revokeApiKey } from "../src/db/api-keys.js";
import { createDb, inlineParams, type Queryable, queryInOneTrip } from "../src/db/db.js";
import {
  latestArtifactVersion,
  SIMILAR_FACTS_SQL,
  similarActiveFactsOf,
  touchFact,
  touchObserved,
} from "../src/db/ingest-lookups.js";
import { insertMemoryRows, listMemoryQuery, listMemoryRows } from "../src/db/memories.js";
import {
  hnswSettings,
  hybridSearch,
  memoriesInOrder,
  nearestMemories,
  rankCandidates,
  textMatches,
} from "../src/db/memory-search.js";
import { findKeyAndHit } from "../src/db/rate-limits.js";
import { newMemoryId } from "../src/ids.js";
import { tierTable } from "../src/ratelimit/check.js";
import { fuseScores } from "../src/search/fuse.js";
import { resolveScope } from "../src/search/scope.js";
import { startTestService, type TestService } from "./helpers/harness.js";

const TIERS = { three: { per_minute: 3, per_day: 1000 } };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { MNEMO_RATE_TIERS: JSON.stringify(TIERS) }, workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const FACTS = ["fact"] as const;

async function addFacts(orgId: string, texts: string[]): Promise<string[]> {
  const rows = texts.map((text) => ({
    id: newMemoryId(),
    org_id: orgId,
    type: "fact" as const,
    text,
    user_id: "u",
  }));
  await svc.deps.db.tx((tx) => insertMemoryRows(tx, rows));
  return rows.map((r) => r.id);
}

describe("BM25 as a sparse inner product", () => {
  it("scores a hand-computable case: IDF from the organisation's statistics, saturated term frequency", async () => {
    const { orgId } = await svc.newOrg();
    const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    // One statement: no average length is known yet, so each row is normalised by its own length
    // (1 - b + b * dl / dl = 1) and a term's weight is tf * 2.2 / (tf + 1.2): 1 once, 1.375 twice.
    const [d1, d2, d3] = await addFacts(orgId, ["apple banana", "apple cherry cherry", "durian"]);
    // N is the query's matchable rows (the sum of its terms' frequencies, 3 here), never below 20.
    const idf = (n: number, df: number) => Math.log(1 + (Math.max(20, n) - df + 0.5) / (df + 0.5));
    const hits = await textMatches(svc.deps.db, scope, FACTS, "apple cherry", 10);
    expect(hits.map((h) => h.id)).toEqual([d2, d1]);
    expect(hits[0]!.value).toBeCloseTo(idf(3, 2) * 1 + idf(3, 1) * 1.375, 5);
    expect(hits[1]!.value).toBeCloseTo(idf(3, 2) * 1, 5);
    expect(hits.some((h) => h.id === d3)).toBe(false);

    // A later row is normalised by the organisation's average length at write time: 5 / 3.
    const [d4] = await addFacts(orgId, ["apple"]);
    const w4 = 2.2 / (1 + 1.2 * (0.7 + (0.3 * 1) / (5 / 3)));
    const after = await textMatches(svc.deps.db, scope, FACTS, "apple", 10);
    expect(after.find((h) => h.id === d4)!.value).toBeCloseTo(idf(3, 3) * w4, 5);

    // Statistics follow deletes and text changes: cherry is gone, durian became apple.
    await svc.deps.db.query("DELETE FROM memories WHERE id = $1", [d2]);
    await svc.deps.db.query("UPDATE memories SET text = 'apple' WHERE id = $1", [d3]);
    const { rows } = await svc.deps.db.query<{ lexeme: string; df: number }>(
      "SELECT lexeme, sum(df)::int AS df FROM text_lexeme_stats WHERE org_id = $1 GROUP BY lexeme ORDER BY lexeme",
      [orgId],
    );
    expect(rows).toEqual([
      { lexeme: "appl", df: 3 },
      { lexeme: "banana", df: 1 },
      { lexeme: "cherri", df: 0 },
      { lexeme: "durian", df: 0 },
    ]);
    const docs = await svc.deps.db.query<{ docs: number; len: number }>(
      "SELECT sum(docs)::int AS docs, sum(total_len)::int AS len FROM text_doc_stats WHERE org_id = $1",
      [orgId],
    );
    expect(docs.rows[0]).toEqual({ docs: 3, len: 4 });
    expect(await textMatches(svc.deps.db, scope, FACTS, "cherry", 10)).toEqual([]);
  });

  it("fuses in SQL exactly as fuseScores does over the two candidate lists", async () => {
    const { orgId } = await svc.newOrg();
    const texts = Array.from(
      { length: 40 },
      (_, i) => `note ${i % 7} about ${["rivers", "mountains", "deserts", "forests"][i % 4]} and trip ${i}`,
    );
    await addFacts(orgId, texts);
    const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    const query = "trip to the mountains";
    const [vector] = await svc.deps.providers.embedder.embed([query]);
    const pool = 30;
    const input = { scope, types: FACTS, query, vector: vector!, pool, limit: 12, vectorWeight: 0.3 };
    const { hybrid, vectorHits, textHits } = await svc.deps.db.tx(
      async (tx) => ({
        hybrid: await hybridSearch(tx, input),
        vectorHits: await nearestMemories(tx, scope, FACTS, vector!, pool),
        textHits: await textMatches(tx, scope, FACTS, query, pool),
      }),
      { settings: hnswSettings(pool) },
    );
    const expected = fuseScores([
      { candidates: vectorHits, weight: 0.3 },
      { candidates: textHits, weight: 1 },
    ]).slice(0, 12);
    expect(hybrid.map((h) => h.row.id)).toEqual(expected.map((e) => e.id));
    for (const [i, h] of hybrid.entries()) expect(h.score).toBeCloseTo(expected[i]!.score, 5);
    expect(hybrid[0]!.row.text).toContain("mountains");

    // The same statement in one round trip (settings and inlined values as one simple query, as
    // search runs it) gives the same rows and scores.
    const once = await hybridSearch(svc.deps.db, { ...input, settings: { settings: hnswSettings(pool) } });
    expect(once.map((h) => [h.row.id, h.score])).toEqual(hybrid.map((h) => [h.row.id, h.score]));
  });
});

describe("fusion of a list whose rows all score alike", () => {
  it("gives its only row, or its tied rows, the list's full score, in SQL as in fuseScores", async () => {
    // Min-max scaling has no worst row to measure from when a list's values are all equal: each row
    // is the list's best. (It used to get the 0.05 floor: the one memory naming a rare word was
    // scored as full text's worst match.)
    const fused = fuseScores([
      { candidates: [{ id: "only", value: 0.2 }], weight: 1 },
      {
        candidates: [
          { id: "near", value: 0.9 },
          { id: "only", value: 0.1 },
        ],
        weight: 0.3,
      },
    ]);
    expect(fused.map((f) => f.id)).toEqual(["only", "near"]);
    expect(fused[0]!.score).toBeCloseTo((1 + (0.3 * 0.05) / 1.05) / 1.3, 6);
    const tied = fuseScores([{ candidates: ["a", "b"].map((id) => ({ id, value: 3 })), weight: 1 }]);
    expect(tied.map((f) => f.score)).toEqual([1, 1]);

    // In the search statement: one memory of four says "kitten" (no embeddings: full text alone).
    const { orgId } = await svc.newOrg();
    const [, , kitten] = await addFacts(orgId, [
      "the train was late again",
      "the laptop battery is failing",
      "adopted a kitten on friday",
      "repainted the hallway green",
    ]);
    const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    const [vector] = await svc.deps.providers.embedder.embed(["kitten"]);
    const hybrid = await hybridSearch(svc.deps.db, {
      scope,
      types: FACTS,
      query: "kitten",
      vector: vector!,
      pool: 20,
      limit: 5,
      vectorWeight: 0.3,
      settings: { settings: hnswSettings(20) },
    });
    expect(hybrid.map((h) => [h.row.id, h.score])).toEqual([[kitten, Math.round((1 / 1.3) * 1e6) / 1e6]]);
  });
});

describe("vectors with no direction (zero: no content words under the local embedder)", () => {
  it("neither score as NaN nor turn the other rows' scores into NaN", async () => {
    const { orgId } = await svc.newOrg();
    const dim = svc.deps.config.MNEMO_EMBEDDING_DIM;
    const texts = ["the cello on sundays", "a greyhound named rocket", "vegan cooking at home"];
    const vectors = await svc.deps.providers.embedder.embed(texts);
    const zero = new Array<number>(dim).fill(0);
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [
        ...texts.map((text, i) => ({
          id: newMemoryId(),
          org_id: orgId,
          type: "fact" as const,
          text,
          user_id: "u",
          embedding: vectors[i]!,
        })),
        {
          id: newMemoryId(),
          org_id: orgId,
          type: "fact" as const,
          text: "it is",
          user_id: "u",
          embedding: zero,
        },
      ]),
    );
    const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    const search = async (query: string, vector: number[]) =>
      (
        await hybridSearch(svc.deps.db, {
          scope,
          types: FACTS,
          query,
          vector,
          pool: 10,
          limit: 10,
          vectorWeight: 0.3,
          settings: { settings: hnswSettings(10) },
        })
      ).map((r) => [r.row.text, r.score] as const);
    const [greyhound] = await svc.deps.providers.embedder.embed(["greyhound"]);
    const hits = await search("greyhound", greyhound!);
    expect(hits[0]![0]).toBe("a greyhound named rocket");
    expect(hits.every(([, score]) => Number.isFinite(score))).toBe(true);
    expect(hits.map(([text]) => text)).not.toContain("it is");
    // A query vector of zeros: full text alone decides.
    const textOnly = await search("greyhound", zero);
    expect(textOnly.map(([text]) => text)).toEqual(["a greyhound named rocket"]);
    expect(textOnly[0]![1]).toBeGreaterThan(0);
    expect(await search("the", zero)).toEqual([]);
  });
});

/** A fact's neighbours as ingest stores them (details.episode_near): ids by offset, within two places. */
const nearOf = (ids: string[], i: number) =>
  Object.fromEntries([-2, -1, 1, 2].filter((d) => ids[i + d]).map((d) => [String(d), ids[i + d]]));

describe("episode neighbours of the ranked facts", () => {
  // Ingest stores each fact's neighbours (details.episode_near); facts stored before it existed
  // (or an import file's) have none and are placed by their episode's list; an older stored place
  // (details.episode_index) is ignored.
  it.each([
    ["found in the episode's list (none stored)", () => ({})],
    ["stored with each fact", (ids: string[], i: number) => ({ episode_near: nearOf(ids, i) })],
    [
      "found in the list, an old stored place ignored",
      (_: string[], i: number) => ({ episode_index: i === 37 ? 5 : i }),
    ],
    [
      "stored with some facts only",
      (ids: string[], i: number) => (i === 301 ? { episode_near: nearOf(ids, i) } : {}),
    ],
  ])(
    "are each hit's facts within the span in its own episode's order, its neighbours %s",
    async (_, stored) => {
      const { orgId } = await svc.newOrg();
      const episode = newMemoryId();
      const other = newMemoryId();
      const ids = Array.from({ length: 400 }, () => newMemoryId());
      const words = ["walrus", "zeppelin"];
      const rows = ids.map((id, i) => ({
        id,
        org_id: orgId,
        type: "fact" as const,
        text: i === 37 || i === 301 ? `the ${words[i === 37 ? 0 : 1]} turn` : `plain turn number ${i}`,
        user_id: "u",
        details: { episode_id: episode, ...stored(ids, i) },
      }));
      await svc.deps.db.tx((tx) =>
        insertMemoryRows(tx, [
          ...rows,
          {
            id: episode,
            org_id: orgId,
            type: "episode",
            text: "a long talk",
            user_id: "u",
            details: { fact_ids: ids },
          },
          // A later episode that also lists fact 37 (a restated fact): positions come from the fact's own episode.
          {
            id: other,
            org_id: orgId,
            type: "episode",
            text: "another talk",
            user_id: "u",
            details: { fact_ids: [ids[5], ids[37], ids[6]] },
          },
        ]),
      );
      const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
      const query = "walrus zeppelin";
      const [vector] = await svc.deps.providers.embedder.embed([query]);
      const search = (linkSpan: number) =>
        rankCandidates(svc.deps.db, {
          scope,
          types: FACTS,
          query,
          vector: vector!,
          pool: 10,
          limit: 2,
          vectorWeight: 0.3,
          settings: { settings: hnswSettings(10) },
          linkSpan,
        });
      const place = new Map<string, number>(ids.map((id, i) => [id, i]));
      const { ranked, links } = await search(2);
      expect(ranked.map((r) => place.get(r.row.id)).sort((a, b) => a! - b!)).toEqual([37, 301]);
      const seen = links.map((l) => [place.get(l.of), place.get(l.row.id), l.distance]);
      expect(seen.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!)).toEqual([
        [37, 35, 2],
        [37, 36, 1],
        [37, 38, 1],
        [37, 39, 2],
        [301, 299, 2],
        [301, 300, 1],
        [301, 302, 1],
        [301, 303, 2],
      ]);
      expect((await search(1)).links).toHaveLength(4);
    },
  );
});

describe("episode neighbours stored with each fact (details.episode_near)", () => {
  /** Three episodes' worth of facts: an episode row listing `ids`, facts pointing at it. */
  async function episodeOf(orgId: string, texts: string[], details: (ids: string[], i: number) => object) {
    const episode = newMemoryId();
    const ids = texts.map(() => newMemoryId());
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [
        ...ids.map((id, i) => ({
          id,
          org_id: orgId,
          type: "fact" as const,
          text: texts[i]!,
          user_id: "u",
          details: { episode_id: episode, ...details(ids, i) },
        })),
        {
          id: episode,
          org_id: orgId,
          type: "episode" as const,
          text: "a talk",
          user_id: "u",
          details: { fact_ids: ids },
        },
      ]),
    );
    return { episode, ids };
  }
  const texts = ["plain turn one", "plain turn two", "the walrus turn", "plain turn four", "plain turn five"];

  it("link a hit from its own row: the episode's list is not read", async () => {
    const { orgId } = await svc.newOrg();
    const { episode, ids } = await episodeOf(orgId, texts, (ids, i) => ({ episode_near: nearOf(ids, i) }));
    // Without the episode row, the neighbours the hit stores are still linked.
    await svc.deps.db.query("DELETE FROM memories WHERE id = $1", [episode]);
    const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    const [vector] = await svc.deps.providers.embedder.embed(["walrus"]);
    const { ranked, links } = await rankCandidates(svc.deps.db, {
      scope,
      types: FACTS,
      query: "walrus",
      vector: vector!,
      pool: 10,
      limit: 1,
      vectorWeight: 0.3,
      settings: { settings: hnswSettings(10) },
      linkSpan: 2,
    });
    expect(ranked.map((r) => r.row.id)).toEqual([ids[2]]);
    expect(links.map((l) => [l.row.id, l.offset]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      [ids[0], -2],
      [ids[1], -1],
      [ids[3], 1],
      [ids[4], 2],
    ]);
  });

  it("are backfilled from the episodes' lists for facts stored before them (sql/093)", async () => {
    const { orgId } = await svc.newOrg();
    const { ids } = await episodeOf(orgId, texts, (_, i) => ({ episode_index: i }));
    // A fact listed by another episode than its own keeps its own episode's neighbours.
    const { ids: later } = await episodeOf(orgId, ["a later turn", "another later turn"], () => ({}));
    const stray = newMemoryId();
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [
        {
          id: stray,
          org_id: orgId,
          type: "episode" as const,
          text: "x",
          user_id: "u",
          details: { fact_ids: [later[0], ids[2]] },
        },
      ]),
    );
    await svc.deps.db.query("SELECT mnemo_backfill_episode_near($1)", [orgId]);
    const { rows } = await svc.deps.db.query<{ id: string; details: Record<string, unknown> }>(
      "SELECT id, details FROM memories WHERE id = ANY($1::uuid[])",
      [[...ids, ...later]],
    );
    const byId = new Map(rows.map((r) => [r.id, r.details]));
    for (const [i, id] of ids.entries()) {
      expect(byId.get(id)!.episode_near).toEqual(nearOf(ids, i));
      expect(byId.get(id)).not.toHaveProperty("episode_index");
    }
    expect(byId.get(later[0]!)!.episode_near).toEqual({ "1": later[1] });
  });
});

describe("the rows a search serves (memoriesInOrder)", () => {
  it("are read again within the scope and servable, in the order asked", async () => {
    const { orgId } = await svc.newOrg();
    const row = (text: string, extra: Partial<Parameters<typeof insertMemoryRows>[1][number]> = {}) => ({
      id: newMemoryId(),
      org_id: orgId,
      type: "fact" as const,
      text,
      user_id: "u",
      group_ids: ["g1"],
      ...extra,
    });
    const active = row("still active");
    const later = row("also active");
    const superseded = row("superseded since it was ranked", { status: "superseded" });
    const otherUser = row("another user's", { user_id: "v" });
    const untagged = row("tag removed since", { group_ids: [] });
    const failed = row("a failed lesson", { type: "lesson", outcome: "failed" });
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [active, later, superseded, otherUser, untagged, failed]),
    );
    const gone = newMemoryId();
    const ids = [later.id, superseded.id, gone, otherUser.id, active.id, untagged.id, failed.id];
    const byUser = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    expect((await memoriesInOrder(svc.deps.db, byUser, ids)).map((r) => r.text)).toEqual([
      "also active",
      "still active",
      "tag removed since",
    ]);
    const byGroup = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u", group_ids: ["g1"] });
    expect((await memoriesInOrder(svc.deps.db, byGroup, ids)).map((r) => r.text)).toEqual([
      "also active",
      "still active",
    ]);
    // Another organisation's scope reads none of them.
    const { orgId: other } = await svc.newOrg();
    const elsewhere = resolveScope(systemCtx(svc.deps, other, "test"), { user_id: "u" });
    expect(await memoriesInOrder(svc.deps.db, elsewhere, ids)).toEqual([]);
  });
});

describe("statements kept prepared (queryPrepared)", () => {
  it("search runs from a prepared statement, prepares again when the session lost it, and gives the same rows", async () => {
    const { orgId } = await svc.newOrg();
    await addFacts(orgId, ["the walrus sang", "a walrus swam to the pier", "the zeppelin flew over the bay"]);
    const scope = resolveScope(systemCtx(svc.deps, orgId, "test"), { user_id: "u" });
    const [vector] = await svc.deps.providers.embedder.embed(["walrus"]);
    const one = createDb(svc.connectionString, 1);
    try {
      const search = (db: Queryable) =>
        hybridSearch(db, {
          scope,
          types: FACTS,
          query: "walrus",
          vector: vector!,
          pool: 10,
          limit: 5,
          vectorWeight: 0.3,
          settings: { settings: hnswSettings(10) },
        }).then((hits) => hits.map((h) => [h.row.text, h.score]));
      // Inside a transaction the same statement runs unprepared: the reference.
      const plain = await one.tx((tx) => search(tx), { settings: hnswSettings(10) });
      expect(plain.map(([text]) => text).sort()).toEqual(["a walrus swam to the pier", "the walrus sang"]);
      await one.query("DEALLOCATE ALL");
      expect(await search(one)).toEqual(plain);
      const prepared = await one.query<{ name: string; generic_plans: number }>(
        "SELECT name, generic_plans FROM pg_prepared_statements WHERE name LIKE 'mnemo_%'",
      );
      expect(prepared.rows.length).toBeGreaterThan(0);
      expect(await search(one)).toEqual(plain);
      // Lost (a restarted database, a DISCARD): prepared again, by several callers at once.
      await one.query("DEALLOCATE ALL");
      const many = createDb(svc.connectionString, 4);
      try {
        const all = await Promise.all(Array.from({ length: 8 }, () => search(many)));
        for (const r of all) expect(r).toEqual(plain);
      } finally {
        await many.close();
      }
      expect(await search(one)).toEqual(plain);
      const again = await one.query("SELECT 1 FROM pg_prepared_statements WHERE name LIKE 'mnemo_%'");
      expect(again.rows.length).toBeGreaterThan(0);
    } finally {
      await one.close();
    }
  });
});

describe("episode links over details written by hand (an import file)", () => {
  it("are skipped where an id or a place is not one, never failing the search", async () => {
    const { orgId, key } = await svc.newOrg();
    const [bad, listed, next, odd] = [newMemoryId(), newMemoryId(), newMemoryId(), newMemoryId()];
    const [episode, oddEpisode] = [newMemoryId(), newMemoryId()];
    const fact = (id: string, text: string, details: Record<string, unknown>) => ({
      id,
      org_id: orgId,
      type: "fact" as const,
      text,
      user_id: "u",
      details,
    });
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [
        fact(bad, "the walrus sang in the choir", { episode_id: "not-an-id", episode_index: "first" }),
        fact(listed, "the walrus swam to the pier", { episode_id: episode, episode_index: 2.5 }),
        fact(next, "then it slept", { episode_id: episode, episode_index: 2 }),
        fact(odd, "the walrus swam to the boat", { episode_id: oddEpisode }),
        {
          id: oddEpisode,
          org_id: orgId,
          type: "episode" as const,
          text: "another talk",
          user_id: "u",
          details: { fact_ids: { first: odd } },
        },
        {
          id: episode,
          org_id: orgId,
          type: "episode" as const,
          text: "a talk",
          user_id: "u",
          details: { fact_ids: ["junk", listed, next, 42] },
        },
      ]),
    );
    const res = await svc.request("POST", "/v1/memories/search", {
      key,
      body: { query: "Where did the walrus swim?", user_id: "u", mode: "retrieve", include: ["fact"] },
    });
    expect(res.status).toBe(200);
    const texts = (res.body.data as { text: string }[]).map((r) => r.text);
    expect(texts).toContain("the walrus swam to the pier");
    expect(texts).toContain("the walrus sang in the choir");
    expect(texts).toContain("the walrus swam to the boat");
  });
});

describe("counts in details written by hand (an import file)", () => {
  it("read as 1 when they are not whole numbers, so later ingests still work", async () => {
    const { orgId } = await svc.newOrg();
    const [artifact, lesson] = [newMemoryId(), newMemoryId()];
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(tx, [
        {
          id: artifact,
          org_id: orgId,
          type: "artifact",
          text: "a plan",
          user_id: "u",
          details: { title: "Plan", version: "v2" },
        },
        {
          id: lesson,
          org_id: orgId,
          type: "lesson",
          text: "run the linter",
          user_id: "u",
          details: { observation_count: 1e30 },
        },
      ]),
    );
    expect((await latestArtifactVersion(svc.deps.db, { orgId, userId: "u" }, "Plan"))?.version).toBe(1);
    await touchObserved(svc.deps.db, orgId, lesson, null);
    const { rows } = await svc.deps.db.query("SELECT details FROM memories WHERE id = $1", [lesson]);
    expect(rows[0].details.observation_count).toBe(2);
  });
});

describe("a list of superseded facts", () => {
  it("reads the superseded rows' own index, not the scope's whole slice (sql/097)", async () => {
    const { orgId } = await svc.newOrg();
    const ids = await addFacts(
      orgId,
      Array.from({ length: 400 }, (_, i) => `a listed row ${i}`),
    );
    const old = ids.slice(0, 3);
    await svc.deps.db.query(
      "UPDATE memories SET status = CASE WHEN id = ANY($1::uuid[]) THEN 'superseded' ELSE 'active' END WHERE org_id = $2",
      [old, orgId],
    );
    await svc.deps.db.query("ANALYZE memories");
    for (const userId of [undefined, "u"]) {
      const q = {
        orgId,
        types: FACTS,
        userId,
        status: "superseded" as const,
        order: "created_at_desc" as const,
        limit: 51,
      };
      const { text, values } = listMemoryQuery(q);
      const plan = await svc.deps.db.query(`EXPLAIN ${text}`, values);
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/memories_superseded_(org|user)_idx/);
      const rows = await listMemoryRows(svc.deps.db, q);
      expect(rows.map((r) => r.id).sort()).toEqual([...old].sort());
      const active = await listMemoryRows(svc.deps.db, { ...q, status: "active", limit: 500 });
      expect(active).toHaveLength(397);
    }
  });
});

describe("ingest's dedup lookup", () => {
  it("finds each fact's exact-hash match and nearest active facts, many facts per statement", async () => {
    const { orgId } = await svc.newOrg();
    const texts = ["plays the cello on sundays", "adopted a greyhound named rocket", "cooks vegan food"];
    const vectors = await svc.deps.providers.embedder.embed(texts);
    const ids = texts.map(() => newMemoryId());
    await svc.deps.db.tx((tx) =>
      insertMemoryRows(
        tx,
        texts.map((text, i) => ({
          id: ids[i]!,
          org_id: orgId,
          type: "fact" as const,
          text,
          user_id: "u",
          content_hash: `hash-${i}`,
          embedding: vectors[i]!,
        })),
      ),
    );
    const zero = new Array<number>(svc.deps.config.MNEMO_EMBEDDING_DIM).fill(0);
    // 450 lookups: three statements of at most 200; the interesting ones at both ends.
    const facts = Array.from({ length: 450 }, (_, i) => ({
      embedding: vectors[i % 3]!,
      hash: "no-such-hash",
    }));
    facts[0] = { embedding: zero, hash: "hash-2" }; // the hash alone
    facts[449] = { embedding: zero, hash: "nothing" }; // nothing at all
    const found = await similarActiveFactsOf(svc.deps.db, { orgId, userId: "u" }, facts, 2);
    expect(found).toHaveLength(450);
    expect(found[0]!.map((c) => [c.id, c.similarity])).toEqual([[ids[2], 1]]);
    expect(found[449]).toEqual([]);
    for (const i of [1, 200, 201, 448]) {
      expect(found[i]![0]!.id).toBe(ids[i % 3]);
      expect(found[i]![0]!.similarity).toBeCloseTo(1, 5);
      expect(found[i]).toHaveLength(2);
      expect(found[i]![1]!.similarity).toBeLessThan(found[i]![0]!.similarity);
    }
    // Another user's facts are never candidates.
    expect(await similarActiveFactsOf(svc.deps.db, { orgId, userId: "v" }, facts.slice(0, 3))).toEqual([
      [],
      [],
      [],
    ]);
  });
});

describe("ingest's dedup lookup through the vector index", () => {
  it("finds a user's nearest facts when the user is a small share of the rows the index holds", async () => {
    // At scale the planner walks the HNSW index for a user holding a few percent of the table; the
    // index yields its first ef_search rows of the whole table and the user filter keeps the few
    // that are the user's. Here the sort is disabled so the planner takes that walk on a small
    // table: 300 rows of another user, all nearer the fact than any of this user's 8.
    const { orgId } = await svc.newOrg();
    const crowd = Array.from({ length: 300 }, (_, i) => `plays the cello on sundays with friend ${i}`);
    const own = [
      "adopted a greyhound named rocket",
      "cooks vegan food at home",
      "works as a nurse in lisbon",
      "reads crime novels at night",
      "runs along the river",
      "grows tomatoes on the balcony",
      "collects old maps",
      "plays chess online",
    ];
    const vectors = await svc.deps.providers.embedder.embed([...crowd, ...own]);
    const rows = [...crowd, ...own].map((text, i) => ({
      id: newMemoryId(),
      org_id: orgId,
      type: "fact" as const,
      text,
      user_id: i < crowd.length ? "crowd" : "few",
      embedding: vectors[i]!,
    }));
    await svc.deps.db.tx((tx) => insertMemoryRows(tx, rows));
    const [fact] = await svc.deps.providers.embedder.embed(["plays the cello on sundays"]);
    const found = await svc.deps.db.tx(async (tx) => {
      await tx.query("SET LOCAL enable_sort = off");
      const plan = await tx.query(`EXPLAIN ${SIMILAR_FACTS_SQL}`, [
        orgId,
        "few",
        [`[${fact!.join(",")}]`],
        ["no-such-hash"],
        5,
        null,
      ]);
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("memories_embedding_idx");
      return similarActiveFactsOf(
        tx,
        { orgId, userId: "few" },
        [{ embedding: fact!, hash: "no-such-hash" }],
        5,
      );
    });
    expect(found[0]).toHaveLength(5);
    const ownIds = new Set<string>(rows.slice(crowd.length).map((r) => r.id));
    for (const c of found[0]!) expect(ownIds.has(c.id)).toBe(true);
  });
});

describe("ingest's dedup lookup, planned", () => {
  it("compares each row with a vector parsed once, not a text parsed again for every row", async () => {
    // The plan for a user the statistics do not know walks the user's rows for every fact; a cast
    // of the fact's vector inside that walk parsed a 2 KB literal per row (28 s for 200 facts
    // against 2,000 rows on the embedded database, the one session held throughout). The plan of a
    // user with no rows is that walk.
    const { orgId } = await svc.newOrg();
    const vectors = await svc.deps.providers.embedder.embed(["plays the cello", "adopted a greyhound"]);
    const { rows } = await svc.deps.db.query(`EXPLAIN (VERBOSE, FORMAT JSON) ${SIMILAR_FACTS_SQL}`, [
      orgId,
      "planned",
      vectors.map((v) => `[${v.join(",")}]`),
      ["hash-0", "hash-1"],
      5,
      null,
    ]);
    const expressions: string[] = [];
    const walk = (node: unknown): void => {
      if (typeof node === "string") expressions.push(node);
      else if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === "object") Object.values(node).forEach(walk);
    };
    walk(rows[0]["QUERY PLAN"]);
    const distances = expressions.filter((e) => e.includes("<=>"));
    expect(distances.length).toBeGreaterThan(0);
    for (const e of distances) expect(e).not.toMatch(/::vector/);
  });
});

describe("touching a restated memory", () => {
  it("writes no index entry (a HOT update): the row's indexed columns do not change and its page has room", async () => {
    const { orgId } = await svc.newOrg();
    const [id] = await addFacts(orgId, ["a fact restated later"]);
    const hot = async () => {
      await svc.deps.db.query("SELECT pg_stat_force_next_flush()");
      const { rows } = await svc.deps.db.query(
        "SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'memories'",
      );
      return rows[0] as { upd: number; hot: number };
    };
    const before = await hot();
    for (let i = 0; i < 3; i++) await touchFact(svc.deps.db, orgId, id!, [`turn-${i}`]);
    const after = await hot();
    expect(after.upd - before.upd).toBe(3);
    expect(after.hot - before.hot).toBe(3);
  });
});

describe("where no autovacuum runs (the embedded database), the service", () => {
  /** analyzeIfStale's tables, or null where the server's own autovacuum does the work. */
  async function maintain(): Promise<string[] | null> {
    const { rows } = await svc.deps.db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum launcher'",
    );
    await analyzeIfStale(svc.deps.db); // may join a run already under way
    const done = await analyzeIfStale(svc.deps.db);
    if (rows[0].n === 0) return done;
    expect(done).toEqual([]);
    return null;
  }
  const memoriesStats = async () =>
    (
      await svc.deps.db.query(
        `SELECT last_analyze, last_vacuum, n_mod_since_analyze::int AS changed, n_dead_tup::int AS dead
         FROM pg_stat_user_tables WHERE relname = 'memories'`,
      )
    ).rows[0];

  it("refreshes planner statistics once enough rows changed", async () => {
    const { orgId } = await svc.newOrg();
    await addFacts(
      orgId,
      Array.from({ length: 80 }, (_, i) => `statistics row ${i}`),
    );
    if ((await maintain()) === null) return; // a server's autovacuum does it
    const stats = await memoriesStats();
    expect(stats.last_analyze).not.toBeNull();
    expect(stats.changed).toBeLessThan(50);
  });

  it("vacuums a table once a fifth of it is dead rows, its nearest-neighbour index rebuilt first", async () => {
    const graphFile = async () =>
      (await svc.deps.db.query("SELECT pg_relation_filenode('memories_embedding_idx') AS f")).rows[0].f;
    const { orgId } = await svc.newOrg();
    await addFacts(
      orgId,
      Array.from({ length: 600 }, (_, i) => `short-lived row ${i}`),
    );
    await svc.deps.db.query("DELETE FROM memories WHERE org_id = $1", [orgId]);
    const before = await graphFile();
    if ((await maintain()) === null) return; // a server's autovacuum does it
    const stats = await memoriesStats();
    expect(stats.last_vacuum).not.toBeNull();
    expect(stats.dead).toBeLessThan(50);
    // A vacuum that cleans the HNSW index repairs its graph around every dead entry, far slower
    // than a rebuild (vacuumWithRebuiltGraphs): the index was rebuilt, so its file is a new one.
    expect(await graphFile()).not.toBe(before);
    const { rows } = await svc.deps.db.query(
      "SELECT count(*)::int AS n FROM pg_index WHERE indexrelid = 'memories_embedding_idx'::regclass AND indisvalid",
    );
    expect(rows[0].n).toBe(1);
  });
});

describe("where no checkpointer runs (the embedded database), the service", () => {
  it("checkpoints once something was written, so the write-ahead log is released and a crash replays little", async () => {
    const { rows } = await svc.deps.db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'checkpointer'",
    );
    const redo = async () =>
      (
        await svc.deps.db.query<{ redo: string }>(
          "SELECT redo_lsn::text AS redo FROM pg_control_checkpoint()",
        )
      ).rows[0]!.redo;
    const { orgId } = await svc.newOrg();
    await addFacts(
      orgId,
      Array.from({ length: 40 }, (_, i) => `a logged row ${i}`),
    );
    const before = await redo();
    const made = await checkpointWhereNoneRuns(svc.deps.db);
    if (rows[0].n > 0) {
      // A server's checkpointer does it.
      expect(made).toBe(false);
      return;
    }
    expect(made).toBe(true);
    expect(await redo()).not.toBe(before);
  });
});

describe("after an ingest job that stored many memories", () => {
  it("the planner's statistics count them at once, on a server too (its autovacuum looks once a minute)", async () => {
    const reltuples = async () =>
      (
        await svc.deps.db.query<{ n: number }>(
          "SELECT greatest(reltuples, 0)::int AS n FROM pg_class WHERE oid = 'memories'::regclass",
        )
      ).rows[0]!.n;
    await analyzeIfStale(svc.deps.db); // whatever earlier tests left to do
    const before = await reltuples();
    const stored = Math.max(200, Math.ceil(before * 0.25));
    const { orgId } = await svc.newOrg();
    await addFacts(
      orgId,
      Array.from({ length: stored }, (_, i) => `a stored row ${i}`),
    );
    expect(await analyzeIfStale(svc.deps.db, { stored })).toContain("memories");
    expect(await reltuples()).toBeGreaterThanOrEqual(before + stored);
    // A small job leaves it to autovacuum (or, where there is none, to the changed-row count).
    await addFacts(orgId, ["one more row"]);
    expect(await analyzeIfStale(svc.deps.db, { stored: 1 })).toEqual([]);
  });
});

describe("embeddings stored in the row", () => {
  /** Values the memories table keeps out of line (TOAST), counted. */
  async function outOfLine(db: Queryable): Promise<number> {
    const { rows } = await db.query<{ toast: string }>(
      "SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'memories'::regclass",
    );
    const { rows: n } = await db.query<{ n: number }>(
      `SELECT count(DISTINCT chunk_id)::int AS n FROM ${rows[0]!.toast}`,
    );
    return n[0]!.n;
  }
  /** Rows of about 4 KB: an embedding plus 1,500 characters that do not compress. */
  const wideRows = (orgId: string) =>
    Array.from({ length: 30 }, (_, i) => ({
      id: newMemoryId(),
      org_id: orgId,
      type: "fact" as const,
      text: Array.from({ length: 150 }, (_, j) =>
        ((i * 7919 + j * 104729) % 999983).toString(36).padStart(9, "q"),
      ).join(" "),
      user_id: "u",
      embedding: Array.from({ length: svc.deps.config.MNEMO_EMBEDDING_DIM }, (_, j) => Math.sin(i + j)),
    }));

  it("are not moved out of line, so ordering by distance reads no TOAST (sql/092)", async () => {
    const { orgId } = await svc.newOrg();
    await svc.deps.db.tx(async (tx) => {
      const before = await outOfLine(tx);
      await insertMemoryRows(tx, wideRows(orgId));
      expect(await outOfLine(tx)).toBe(before);
    });
  });

  it("stored out of line before the migration are brought into the row by it", async () => {
    const { orgId } = await svc.newOrg();
    const migration = readFileSync(new URL("../sql/092_inline_embeddings.sql", import.meta.url), "utf8");
    const rolledBack = new Error("rolled back");
    await expect(
      svc.deps.db.tx(async (tx) => {
        // The storage as it was, rows written under it, then the migration.
        await tx.query(
          "ALTER TABLE memories ALTER COLUMN embedding SET STORAGE EXTERNAL, RESET (toast_tuple_target)",
        );
        const before = await outOfLine(tx);
        await insertMemoryRows(tx, wideRows(orgId));
        const written = await outOfLine(tx);
        expect(written).toBeGreaterThanOrEqual(before + 30);
        await tx.query(migration);
        // The 30 embeddings come into their rows; the text search vectors may stay out of line.
        expect(await outOfLine(tx)).toBe(written - 30);
        throw rolledBack; // leaves the schema as migrated
      }),
    ).rejects.toBe(rolledBack);
  });
});

describe("one round trip with inlined values", () => {
  it("reads every kind of value exactly as the same parameter would be read", async () => {
    const values: unknown[] = [
      "it's a \\ back'slash'' and $1 and -- not a comment",
      ["a", 'b "quoted"', "c,d", "{braces}", "back\\slash", "", "NULL"],
      [1, 2, 3],
      42,
      -0.125,
      true,
      null,
      { k: "v'v", n: [1, 2], s: "\\" },
      new Date("2026-01-02T03:04:05.678Z"),
      "ünïcödé 日本 🙂",
    ];
    const text =
      "SELECT $1::text AS a, $2::text[] AS b, $3::int[] AS c, $4::int AS d, $5::float8 AS e, $6::boolean AS f," +
      " $7::text AS g, $8::jsonb AS h, $9::timestamptz AS i, $10::text AS j, '$1 -- kept' AS k -- $2 in a comment";
    const direct = await svc.deps.db.query(text, values);
    const inlined = await queryInOneTrip(svc.deps.db, text, values, { settings: hnswSettings(80) });
    expect(inlined.rows).toEqual(direct.rows);
    expect(inlineParams("SELECT $1::text", ["x"])).toBe("SELECT 'x'::text");
    expect(() => inlineParams("SELECT $$x$$", [])).toThrow();
    expect(() => inlineParams("SELECT $2::text", ["x"])).toThrow();
    // The settings held for the statement only.
    const after = await svc.deps.db.query("SELECT current_setting('hnsw.ef_search', true) AS ef");
    expect(after.rows[0].ef).not.toBe("160");
  });
});

describe("inlined values, property", () => {
  it("any text and text array reads back exactly as the parameter would", async () => {
    // Quotes, backslashes, `$n`, comment and statement separators: whatever a user's query holds.
    const piece = fc.constantFrom(
      "'",
      "''",
      "\\",
      "\\'",
      "$1",
      "$$",
      "--",
      "/*",
      "*/",
      ";",
      "E'",
      '"',
      "\n",
      " ",
    );
    const text = fc
      .array(fc.oneof(piece, fc.string({ unit: "grapheme", maxLength: 4 })), { maxLength: 12 })
      .map((parts) => parts.join("").replaceAll("\u0000", ""));
    await fc.assert(
      fc.asyncProperty(text, fc.array(text, { maxLength: 4 }), async (a, b) => {
        const sql = "SELECT $1::text AS a, $2::text[] AS b";
        const inlined = await queryInOneTrip(svc.deps.db, sql, [a, b], { settings: hnswSettings(80) });
        expect(inlined.rows).toEqual([{ a, b }]);
      }),
      { numRuns: 200 },
    );
  });
});

describe("authentication and rate limit in one statement", () => {
  function miniApp(deps: Deps, now: () => Date) {
    const app = new OpenAPIHono<AppEnv>();
    app.use("*", requestContext(deps));
    app.use("/v1/*", requireAuth(deps, { now }));
    app.get("/v1/ping", (c) => c.json({ ok: true }));
    app.onError((err, c) => errorResponse(c, err));
    return app;
  }

  it("refuses a revoked key on the very next request, and counts nothing for an unknown key", async () => {
    const org = await createOrg(svc.deps.db, { name: "revoke", tier: "three" });
    const app = miniApp(svc.deps, () => new Date("2030-01-01T10:00:00Z"));
    const ping = () => app.request("/v1/ping", { headers: { "x-api-key": org.api_key } });
    expect((await ping()).status).toBe(200);
    await revokeApiKey(svc.deps.db, org.key_id);
    const refused = await ping();
    expect(refused.status).toBe(401);
    expect((await refused.json()).detail.code).toBe("unauthorized");
    const none = await findKeyAndHit(svc.deps.db, {
      keyHash: hashApiKey("mnemo_no_such_key_at_all_000000000000000"),
      tiers: tierTable(svc.deps.config),
      count: true,
    });
    expect(none).toBeUndefined();
    const { rows } = await svc.deps.db.query("SELECT day_count FROM rate_limit_counters WHERE subject = $1", [
      org.key_id,
    ]);
    expect(rows).toEqual([{ day_count: 1 }]);
  });

  it("shares one key's limit between two API instances on separate connection pools", async () => {
    const org = await createOrg(svc.deps.db, { name: "shared", tier: "three" });
    const other = createDb(svc.connectionString, 4);
    try {
      const now = () => new Date("2030-01-01T11:00:30Z");
      const apps = [miniApp(svc.deps, now), miniApp({ ...svc.deps, db: other }, now)];
      const statuses = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (async () =>
            (await apps[i % 2]!.request("/v1/ping", { headers: { "x-api-key": org.api_key } })).status)(),
        ),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      expect(statuses.filter((s) => s === 429)).toHaveLength(5);
      const { rows } = await svc.deps.db.query(
        "SELECT day_count, minute_count FROM rate_limit_counters WHERE subject = $1",
        [org.key_id],
      );
      expect(rows).toEqual([{ day_count: 3, minute_count: 3 }]);
    } finally {
      await other.close();
    }
  });
});
