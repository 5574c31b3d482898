import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import type { MemoryRow } from "../src/db/memory-row.js";
import { foldLatin } from "../src/fold.js";
import { type MemoryInput, writeMemories } from "../src/memories/write.js";
import { BLOCK_CHARS, composeDeterministic, cutAtWord, LINE_CHARS } from "../src/search/compose.js";
import { startTestService, type TestService, withConfig } from "./helpers/harness.js";
import { type StubLlm, startStubLlm } from "./helpers/stub-llm.js";

let svc: TestService;
let stub: StubLlm;
beforeAll(async () => {
  svc = await startTestService({ workers: false, env: { MNEMO_LLM_MAX_RETRIES: "0" } });
  stub = await startStubLlm();
});
afterAll(async () => {
  await stub?.close();
  await svc?.stop();
});

async function seed(orgId: string, rows: MemoryInput[]) {
  return writeMemories(systemCtx(svc.deps, orgId, "seed"), rows);
}
const search = (key: string, body: unknown) => svc.request("POST", "/v1/memories/search", { key, body });
const texts = (res: { body: any }) => (res.body.data as { text: string }[]).map((r) => r.text).sort();

describe("search scope", () => {
  it("ANDs every axis, reads groups any-of across users, and never crosses organisations", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "fact", text: "A tea note", user_id: "u1" },
      { type: "fact", text: "B tea note", user_id: "u1", group_ids: ["g1"], agent_id: "a1", app_id: "x1" },
      { type: "fact", text: "C tea note", user_id: "u2", group_ids: ["g1"] },
      { type: "fact", text: "D tea note", user_id: "u2", group_ids: ["g2"], agent_id: "a1" },
      { type: "fact", text: "E tea note", user_id: "u3", app_id: "x1" },
    ]);
    const cases: [Record<string, unknown>, string[]][] = [
      [{ user_id: "u1" }, ["A", "B"]],
      [{ group_ids: ["g1"] }, ["B", "C"]],
      [{ group_ids: ["g1", "g2"] }, ["B", "C", "D"]],
      [{ user_id: "u1", group_ids: ["g1"] }, ["B"]],
      [{ user_id: "u2", group_ids: ["g1"] }, ["C"]],
      [{ agent_id: "a1" }, ["B", "D"]],
      [{ app_id: "x1" }, ["B", "E"]],
      [{ user_id: "u2", agent_id: "a1" }, ["D"]],
      [{ agent_id: "a1", app_id: "x1", group_ids: ["g1"] }, ["B"]],
      [{ user_id: "nobody" }, []],
    ];
    for (const [scope, want] of cases) {
      const res = await search(key, { query: "tea note", mode: "retrieve", ...scope });
      expect(res.status, JSON.stringify(scope)).toBe(200);
      expect(texts(res), JSON.stringify(scope)).toEqual(want.map((w) => `${w} tea note`));
    }
    const other = await svc.newOrg();
    const foreign = await search(other.key, { query: "tea note", user_id: "u1", mode: "retrieve" });
    expect(foreign.status).toBe(200);
    expect(foreign.body.data).toEqual([]);
  });

  it("keeps rows tagged with an archived group reachable", async () => {
    const { orgId, key } = await svc.newOrg();
    await svc.deps.db.query(
      "INSERT INTO groups (id, org_id, name, status) VALUES ($1, $2, 'old team', 'archived')",
      ["grp_00000000000000000000000000000001", orgId],
    );
    await seed(orgId, [
      {
        type: "fact",
        text: "The old team used Jira",
        user_id: "u9",
        group_ids: ["grp_00000000000000000000000000000001"],
      },
    ]);
    const res = await search(key, {
      query: "Jira",
      group_ids: ["grp_00000000000000000000000000000001"],
      mode: "retrieve",
    });
    expect(texts(res)).toEqual(["The old team used Jira"]);
  });

  it("answers concurrent searches each with its own rows (embedded server keeps statements whole)", async () => {
    const { orgId, key } = await svc.newOrg();
    const users = Array.from({ length: 16 }, (_, i) => `cu${i}`);
    await seed(
      orgId,
      users.map((u) => ({ type: "fact" as const, text: `${u} keeps bees`, user_id: u })),
    );
    const results = await Promise.all(
      users.map((u) => search(key, { query: "bees", user_id: u, mode: "retrieve" })),
    );
    results.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(texts(res)).toEqual([`${users[i]} keeps bees`]);
    });
  });

  it("rejects a search without any scope axis", async () => {
    const { key } = await svc.newOrg();
    for (const body of [
      { query: "tea" },
      { query: "tea", group_ids: [] },
      { query: "tea", user_id: null },
      // An empty id names no one, as on ingest.
      { query: "tea", user_id: "" },
      { query: "tea", user_id: "", agent_id: "", app_id: "" },
      { query: "tea", group_ids: [""] },
      { query: "tea", group_ids: ["", ""], user_id: "" },
    ]) {
      const res = await search(key, body);
      expect(res.status).toBe(422);
      expect(res.body.detail.code).toBe("missing_scope");
    }
  });

  it("validates query, limit and mode as fields", async () => {
    const { key } = await svc.newOrg();
    for (const [body, code] of [
      [{ user_id: "u" }, "empty_query"],
      [{ query: "", user_id: "u" }, "empty_query"],
      [{ query: "x".repeat(4001), user_id: "u" }, "query_too_long"],
      [{ query: "q", user_id: "u", limit: 0 }, "invalid_limit"],
      [{ query: "q", user_id: "u", limit: 101 }, "invalid_limit"],
      [{ query: "q", user_id: "u", mode: "sideways" }, "invalid_mode"],
      [{ query: "q", user_id: "u", include: ["fact", "everything"] }, "unsupported_include_option"],
      [{ query: "nul\u0000byte", user_id: "u" }, null],
      [{ query: "q", user_id: "u\u0000" }, null],
    ] as const) {
      const res = await search(key, body);
      const what = JSON.stringify(body).slice(0, 80);
      expect(res.status, what).toBe(422);
      expect(res.body.error.type, what).toBe("invalid_request_error");
      if (code) {
        expect(res.body.detail.code, what).toBe(code);
        expect(res.body.error.code, what).toBe(code);
        expect(res.body.detail.field, what).toMatch(/^(query|limit|mode|include\[1\])$/);
      } else {
        // No spec code for a NUL byte: the field list stays, error.code is invalid_request.
        expect(Array.isArray(res.body.detail), what).toBe(true);
        expect(res.body.error.code, what).toBe("invalid_request");
      }
    }
  });
});

describe("search ranking and corpora", () => {
  it("fuses vector and text matches, orders by score, honours limit, hides superseded and deleted rows", async () => {
    const { orgId, key } = await svc.newOrg();
    const [old, fresh, , gone] = await seed(orgId, [
      { type: "fact", text: "Bob lives in Paris", user_id: "u", status: "superseded" },
      { type: "fact", text: "Bob lives in Berlin now", user_id: "u" },
      { type: "fact", text: "Bob plays the cello on weekends", user_id: "u" },
      { type: "fact", text: "Bob lives near the river", user_id: "u" },
      { type: "episode", text: "Session about moving house", user_id: "u" },
    ]);
    await svc.deps.db.query("DELETE FROM memories WHERE id = $1", [gone!.id]);
    const res = await search(key, { query: "Where does Bob live?", user_id: "u", mode: "retrieve" });
    expect(res.status).toBe(200);
    const ids = res.body.data.map((r: { id: string }) => r.id);
    expect(ids).not.toContain(old!.id);
    expect(ids).not.toContain(gone!.id);
    expect(res.body.data[0].id).toBe(fresh!.id);
    const scores = res.body.data.map((r: { score: number }) => r.score);
    expect(scores.every((s: number) => s > 0 && s <= 1)).toBe(true);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(res.body).toMatchObject({ object: "search", mode: "retrieve", context: null });
    expect(res.body.context_selection_applied).toBe(false);
    expect(Object.keys(res.body.stage_timings)).toEqual(
      expect.arrayContaining(["embed", "retrieve", "rerank", "total"]),
    );
    expect(res.body.stage_timings.compose).toBeUndefined();
    // An episode every sentence of which was superseded is its title alone: never served.
    const [emptied] = await seed(orgId, [
      { type: "episode", text: "Conversation", user_id: "u", details: { title: "Conversation" } },
    ]);
    const after = await search(key, { query: "Bob conversation", user_id: "u", mode: "retrieve" });
    expect(after.body.data.length).toBeGreaterThan(0);
    expect(after.body.data.map((r: { id: string }) => r.id)).not.toContain(emptied!.id);
    const one = await search(key, { query: "Bob", user_id: "u", mode: "retrieve", limit: 1 });
    expect(one.body.data).toHaveLength(1);
    const episodes = await search(key, {
      query: "Bob moving",
      user_id: "u",
      include: ["episode"],
      mode: "retrieve",
    });
    expect(episodes.body.data.map((r: { type: string }) => r.type)).toEqual(["episode"]);
  });

  it("finds the one memory that names a young animal by the animal's own name", async () => {
    // "kitten" indexes "cat" as a concept term (WordNet: "young domestic cat"), and the only full-text
    // match of a query takes full text's whole score, not its worst (see fuseScores).
    const { orgId, key } = await svc.newOrg();
    const [, kitten] = await seed(orgId, [
      { type: "fact", text: "The user repainted the hallway a pale green colour", user_id: "u" },
      { type: "fact", text: "We adopted a kitten this morning, she is called Miso", user_id: "u" },
      { type: "fact", text: "The user's manager asked them to lead the onboarding project", user_id: "u" },
      { type: "fact", text: "The car insurance renewal came in much higher than last year", user_id: "u" },
    ]);
    const res = await search(key, { query: "cat", user_id: "u", mode: "retrieve" });
    expect(res.body.data[0].id).toBe(kitten!.id);
    // Full text's whole weight (1 of 1.2 beside the hashed vectors' 0.2), far ahead of the rest.
    expect(res.body.data[0].score).toBeGreaterThanOrEqual(1 / 1.2 - 1e-6);
    expect(res.body.data[1].score).toBeLessThan(0.5);
  });

  it("serves an episode with its whole details, which the search statement itself does not read", async () => {
    const { orgId, key } = await svc.newOrg();
    const facts = await seed(
      orgId,
      Array.from({ length: 30 }, (_, i) => ({
        type: "fact" as const,
        text: `Harbour note ${i}`,
        user_id: "u",
      })),
    );
    const factIds = facts.map((f) => f.id);
    const [episode] = await seed(orgId, [
      {
        type: "episode",
        text: "Session about the harbour lighthouse",
        user_id: "u",
        details: { title: "Harbour", fact_ids: factIds, artifact_ids: [] },
      },
    ]);
    const got = await svc.request("GET", `/v1/memories/${episode!.id}`, { key });
    expect(got.body.details.fact_ids).toEqual(factIds);
    // Episodes only, every corpus, and with a directive corpus (the search runs in a transaction).
    for (const include of [["episode"], undefined, ["episode", "lesson"]]) {
      const res = await search(key, { query: "harbour lighthouse", user_id: "u", mode: "retrieve", include });
      expect(res.status).toBe(200);
      const served = res.body.data.find((r: { id: string }) => r.id === episode!.id);
      expect(served, JSON.stringify(include)).toBeDefined();
      expect(served.details).toEqual(got.body.details);
    }
    // The ranking statement reads none of an episode's details: they are read when it is served.
    const { rankCandidates, hnswSettings } = await import("../src/db/memory-search.js");
    const [vector] = await svc.deps.providers.embedder.embed(["harbour lighthouse"]);
    const { ranked } = await rankCandidates(svc.deps.db, {
      scope: { orgId, userId: "u", agentId: null, appId: null, groupIds: null },
      types: ["episode"],
      query: "harbour lighthouse",
      vector: vector!,
      pool: 50,
      limit: 5,
      vectorWeight: 0.2,
      settings: { settings: hnswSettings(50) },
    });
    expect(ranked.map((r) => r.row.id)).toEqual([episode!.id]);
    expect(ranked[0]!.row.details).toEqual({});
  });

  it("puts matched directives first with a null score when lesson or procedure is included", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "fact", text: "The pool.ts module sizes the database pool", user_id: "u" },
      {
        type: "lesson",
        text: "Raise the pool size before load tests",
        user_id: "u",
        trigger_entities: ["pool.ts"],
      },
      {
        type: "lesson",
        text: "Never edit pool.ts by hand",
        user_id: "u",
        trigger_entities: ["pool.ts"],
        outcome: "failed",
      },
      { type: "procedure", text: "Deploy the cache", user_id: "u", trigger_entities: ["deploy.sh"] },
    ]);
    const res = await search(key, {
      query: "how is pool.ts sized",
      user_id: "u",
      include: ["fact", "lesson"],
      mode: "retrieve",
    });
    expect(res.status).toBe(200);
    const [first, ...rest] = res.body.data;
    expect(first).toMatchObject({
      type: "lesson",
      score: null,
      text: "Raise the pool size before load tests",
    });
    expect(first.details.matched_on).toEqual(["pool.ts"]);
    expect(rest.map((r: { type: string }) => r.type)).toEqual(["fact"]);
    expect(res.body.data.some((r: { text: string }) => r.text.startsWith("Never"))).toBe(false);
    const plain = await search(key, { query: "how is pool.ts sized", user_id: "u", mode: "retrieve" });
    expect(plain.body.data.every((r: { type: string }) => r.type === "fact")).toBe(true);
  });

  it("says what a directive found by its text hit: the trigger entities the query names as words", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      {
        type: "lesson",
        text: 'When "npm ERR! code ERESOLVE" occurs: run npm install with --legacy-peer-deps',
        user_id: "u",
        trigger_entities: ["ERESOLVE", "npm", "--legacy-peer-deps"],
        outcome: "resolved",
      },
    ]);
    const res = await search(key, {
      query: "Fix this failing npm install",
      user_id: "u",
      include: ["lesson"],
      mode: "compose",
    });
    const [lesson] = res.body.data;
    expect(lesson.details.matched_on).toEqual(["npm"]);
    expect(lesson.details.because).not.toMatch(/action/);
  });

  it("leads with a directive found by its text only on a content word, and composes without those the gate drops", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "fact", text: "Port 3000 is already in use by the old dev server", user_id: "u" },
      { type: "lesson", text: "Always use pnpm in this repo", user_id: "u", trigger_entities: ["pnpm"] },
      {
        type: "lesson",
        text: "Never use the staging database for load tests",
        user_id: "u",
        trigger_entities: ["staging"],
      },
      {
        type: "lesson",
        text: "Always run database migrations with the release lock held on staging servers",
        user_id: "u",
        trigger_entities: ["migrations"],
      },
      { type: "fact", text: "The release script bumps the version and tags the changelog", user_id: "u" },
    ]);
    const data = async (query: string, mode: string) => {
      const res = await search(key, { query, user_id: "u", include: ["fact", "lesson"], mode, limit: 5 });
      expect(res.status, res.text).toBe(200);
      return res.body as { data: { type: string; text: string; details: any }[]; context: string | null };
    };
    // "use" is in every one of them: the fact the query is about comes first, no lesson leads.
    const port = await data("Port 3000 already in use", "retrieve");
    expect(port.data[0]!.text).toBe("Port 3000 is already in use by the old dev server");
    expect(port.data.filter((r) => r.details.matched_on !== undefined)).toEqual([]);
    // "release" is a content word: the migrations lesson leads, but it shares one word of seven
    // with the query, the gate drops it (as trigger would), and the block leaves it out.
    const release = await data(
      "How should the release script bump the version and tag the changelog entry?",
      "compose",
    );
    expect(release.data[0]!.text).toMatch(/^Always run database migrations/);
    expect(release.data[0]!.details.because).toBe("It shares too little with the task.");
    expect(release.context).toContain("The release script bumps the version");
    expect(release.context).not.toContain("migrations");
  });

  it("counts the leading directives within limit", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "fact", text: "The build host runs npm and docker", user_id: "u" },
      { type: "lesson", text: "Pin the npm version on CI", user_id: "u", trigger_entities: ["npm"] },
      {
        type: "procedure",
        text: "Restart docker with systemctl",
        user_id: "u",
        trigger_entities: ["systemctl"],
      },
    ]);
    const types = async (limit: number) => {
      const res = await search(key, {
        query: "npm docker systemctl",
        user_id: "u",
        include: ["fact", "lesson", "procedure"],
        mode: "retrieve",
        limit,
      });
      expect(res.status, res.text).toBe(200);
      return (res.body.data as { type: string }[]).map((r) => r.type);
    };
    // Before, the directives came on top of `limit`: 3 rows for limit 1.
    expect(await types(1)).toHaveLength(1);
    expect((await types(2)).sort()).toEqual(["lesson", "procedure"]);
    expect((await types(3)).slice(2)).toEqual(["fact"]);
  });

  it("composes directives without an outcome hedged, as trigger does, and resolved ones plainly", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "lesson", text: "Set ZED_POOL to at least 4", user_id: "u", trigger_entities: ["ZED_POOL"] },
      {
        type: "lesson",
        text: "Restart ZED_POOL workers after a config change",
        user_id: "u",
        trigger_entities: ["ZED_POOL"],
        outcome: "resolved",
      },
    ]);
    const res = await search(key, { query: "ZED_POOL", user_id: "u", include: ["lesson"], mode: "compose" });
    expect(res.status).toBe(200);
    // Spec 4.1 `outcome`: resolved is served confidently, unset hedged (it read like a resolved one).
    expect(res.body.context).toMatch(/^- \d{4}-\d\d-\d\d: \(unverified\) Set ZED_POOL to at least 4$/m);
    expect(res.body.context).toMatch(/^- \d{4}-\d\d-\d\d: Restart ZED_POOL workers after a config change$/m);
    // Spec 2.1: under compose a directive's `because` and `confidence` are filled (the trigger's
    // gate, the query as its task), the unverified one held less confidently; under retrieve, null.
    const lessons = res.body.data.filter((r: { type: string }) => r.type === "lesson");
    expect(lessons).toHaveLength(2);
    for (const l of lessons) {
      expect(l.details.because).toMatch(/^It matched on ZED_POOL/);
      expect(l.details.confidence).toBeGreaterThan(0);
      expect(l.details.confidence).toBeLessThanOrEqual(1);
    }
    const confidence = (text: string) =>
      lessons.find((l: { text: string }) => l.text.startsWith(text)).details.confidence;
    expect(confidence("Set")).toBeLessThan(confidence("Restart"));
    const retrieved = await search(key, {
      query: "ZED_POOL",
      user_id: "u",
      include: ["lesson"],
      mode: "retrieve",
    });
    for (const l of retrieved.body.data)
      expect([l.details.because, l.details.confidence]).toEqual([null, null]);
  });

  it("returns artifact bodies only when full_content is asked for", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      {
        type: "artifact",
        text: "Backup script",
        user_id: "u",
        full_content: "rsync -a",
        details: { title: "backup.sh" },
      },
    ]);
    const base = { query: "backup script", user_id: "u", mode: "retrieve" };
    const without = await search(key, base);
    expect(without.body.data[0].details.full_content).toBeUndefined();
    const withBody = await search(key, { ...base, include: ["artifact", "full_content"] });
    expect(withBody.body.data[0].details.full_content).toBe("rsync -a");
  });
});

describe("text written without spaces (Chinese, Japanese, Korean)", () => {
  it("finds a word inside a run of characters, by full text and by the local embedder", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "fact", text: "我住在东京，我喜欢寿司。", user_id: "u1" },
      { type: "fact", text: "毎日ラーメンを食べます。", user_id: "u1" },
      { type: "fact", text: "The user likes green tea.", user_id: "u1" },
      { type: "fact", text: "The user went to Tokyo last spring.", user_id: "u1" },
    ]);
    for (const [query, expected] of [
      ["寿司", "我住在东京，我喜欢寿司。"],
      ["东京", "我住在东京，我喜欢寿司。"],
      ["ラーメン", "毎日ラーメンを食べます。"],
    ] as const) {
      const res = await search(key, { query, user_id: "u1", mode: "retrieve" });
      expect(res.status).toBe(200);
      expect(res.body.data[0]?.text, query).toBe(expected);
      // Matched by full text, not merely the nearest neighbour of a query with nothing else.
      expect(res.body.data[0].score, query).toBeGreaterThan(res.body.data[1]?.score ?? 0);
    }
    // A word of one character (猫 "cat", 茶 "tea", 책 "book") inside a run, before and after
    // the upgrade that indexes single characters (sql/104), which indexes older memories again.
    await seed(orgId, [
      { type: "fact", text: "我的猫很可爱。", user_id: "u1" },
      { type: "fact", text: "오늘 책을 읽었어요.", user_id: "u1" },
    ]);
    const first = async (query: string) =>
      (await search(key, { query, user_id: "u1", mode: "retrieve" })).body.data[0]?.text;
    expect(await first("猫")).toBe("我的猫很可爱。");
    expect(await first("책")).toBe("오늘 책을 읽었어요.");
    // A memory indexed by an earlier version is indexed again by the upgrade that changed the
    // index: before sql/104 (no single characters) and before sql/100 (no pieces at all). Its text
    // index is what is checked: its nearest-neighbour match, by the embedder's pieces, is another
    // matter.
    const matches = async (id: string, lexeme: string) =>
      (
        await svc.deps.db.query<{ m: boolean }>(
          "SELECT tsv @@ to_tsquery('simple', $2) AS m FROM memories WHERE id = $1",
          [id, lexeme],
        )
      ).rows[0]!.m;
    const indexedAs = async (id: string, tsv: string) => {
      await svc.deps.db.query("ALTER TABLE memories DISABLE TRIGGER memories_text");
      try {
        await svc.deps.db.query(`UPDATE memories SET tsv = ${tsv} WHERE id = $1`, [id]);
      } finally {
        await svc.deps.db.query("ALTER TABLE memories ENABLE TRIGGER memories_text");
      }
    };
    const upgrade = async (file: string) => {
      const sql = readFileSync(new URL(`../sql/${file}`, import.meta.url), "utf8");
      await svc.deps.db.query(sql.slice(sql.indexOf("UPDATE memories SET tsv = NULL")));
    };
    const [cat] = await svc.deps.db
      .query<{ id: string }>("SELECT id::text FROM memories WHERE org_id = $1 AND text = '我的猫很可爱。'", [
        orgId,
      ])
      .then((r) => r.rows);
    expect(await matches(cat!.id, "猫")).toBe(true);
    await indexedAs(cat!.id, "ts_delete(tsv, ARRAY['猫', '我', '的', '很', '可', '爱'])");
    expect(await matches(cat!.id, "猫")).toBe(false);
    await upgrade("104_cjk_unigrams.sql");
    expect(await matches(cat!.id, "猫")).toBe(true);
    expect(await first("猫")).toBe("我的猫很可爱。");
    const [old] = await seed(orgId, [{ type: "fact", text: "私は猫が大好きです。", user_id: "u1" }]);
    expect(await matches(old!.id, "大好")).toBe(true);
    await indexedAs(old!.id, "to_tsvector('english', text)");
    expect(await matches(old!.id, "大好")).toBe(false);
    await upgrade("100_cjk_bigrams.sql");
    expect(await matches(old!.id, "大好")).toBe(true);
  });
});

/**
 * The text of u1's first hit for a query, checked to be matched by full text: ahead of the next
 * row, not merely the nearest neighbour.
 */
const firstByText = (key: string) => async (query: string) => {
  const res = await search(key, { query, user_id: "u1", mode: "retrieve" });
  expect(res.status).toBe(200);
  expect(res.body.data[0].score, query).toBeGreaterThan(res.body.data[1]?.score ?? 0);
  return res.body.data[0]?.text as string | undefined;
};

describe("text in other Unicode forms, and emoji", () => {
  it("finds a word however its characters are composed (NFC, NFD, full-width, ligatures, zero-width spaces), and emoji", async () => {
    const { orgId, key } = await svc.newOrg();
    const filler = [
      "The user likes green tea.",
      "The user went to Tokyo last spring.",
      "The user plays the cello on Fridays.",
      "The user has a dog named Rex.",
    ];
    await seed(orgId, [
      ...filler.map((text) => ({ type: "fact" as const, text, user_id: "u1" })),
      { type: "fact", text: "I meet Paul at the little cafe\u0301 on Rue Cler every Sunday.", user_id: "u1" },
      { type: "fact", text: "Ana ordered a crème brûlée for dessert.", user_id: "u1" },
      { type: "fact", text: "The locker code is ７８９.", user_id: "u1" },
      { type: "fact", text: "We watched a ﬁlm about the ofﬁce.", user_id: "u1" },
      { type: "fact", text: "Ren\u200bata called about the invoice.", user_id: "u1" },
      { type: "fact", text: "She said yes 💍 last night!", user_id: "u1" },
      { type: "fact", text: "Back from the trip 🇯🇵 with photos.", user_id: "u1" },
      { type: "fact", text: "Great work on the launch 👍🏽", user_id: "u1" },
    ]);
    const first = firstByText(key);
    for (const [query, expected] of [
      ["café", "I meet Paul at the little cafe\u0301 on Rue Cler every Sunday."],
      ["cre\u0300me bru\u0302le\u0301e", "Ana ordered a crème brûlée for dessert."],
      ["789", "The locker code is ７８９."],
      ["film office", "We watched a ﬁlm about the ofﬁce."],
      ["Renata", "Ren\u200bata called about the invoice."],
      ["Ren\u2060ata", "Ren\u200bata called about the invoice."],
      ["💍", "She said yes 💍 last night!"],
      ["🇯🇵", "Back from the trip 🇯🇵 with photos."],
      ["👍", "Great work on the launch 👍🏽"],
    ] as const) {
      expect(await first(query), query).toBe(expected);
    }
    // The local embedder reads the same plain words.
    const embed = (text: string) => svc.deps.providers.embedder.embed([text]).then((v) => v[0]);
    expect(await embed("café ofﬁce")).toEqual(await embed("cafe\u0301 office"));
    expect(await embed("Ren\u200bata")).toEqual(await embed("Renata"));
    // The stored text stays as sent.
    const all = await svc.request("GET", "/v1/memories?user_id=u1&limit=100", { key });
    expect(all.body.data.map((m: { text: string }) => m.text)).toContain(
      "I meet Paul at the little cafe\u0301 on Rue Cler every Sunday.",
    );
    // A memory indexed by an earlier version (NFD as written, no emoji) is indexed again by the
    // upgrade (sql/105).
    const [old] = await seed(orgId, [
      { type: "fact", text: "Dinner at the cre\u0300perie 🍕 downtown.", user_id: "u1" },
    ]);
    // The word as a query is read (in NFKC, accents folded since sql/106); the emoji as a lexeme
    // (the parser skips emoji).
    const matches = async () =>
      (
        await svc.deps.db.query<{ word: boolean; emoji: boolean }>(
          `SELECT tsv @@ plainto_tsquery('english', mnemo_index_text('crèperie', 100)) AS word, tsv @@ quote_literal('🍕')::tsquery AS emoji
           FROM memories WHERE id = $1`,
          [old!.id],
        )
      ).rows[0];
    expect(await matches()).toEqual({ word: true, emoji: true });
    await svc.deps.db.query("ALTER TABLE memories DISABLE TRIGGER memories_text");
    try {
      await svc.deps.db.query("UPDATE memories SET tsv = to_tsvector('english', text) WHERE id = $1", [
        old!.id,
      ]);
    } finally {
      await svc.deps.db.query("ALTER TABLE memories ENABLE TRIGGER memories_text");
    }
    expect(await matches()).toEqual({ word: false, emoji: false });
    const sql = readFileSync(new URL("../sql/105_index_normalised.sql", import.meta.url), "utf8");
    // The upgrade's own pass (the test database is far below its 50,000-row bound).
    await svc.deps.db.query(sql.slice(sql.indexOf("DO $$")));
    expect(await matches()).toEqual({ word: true, emoji: true });
  });
});

describe("Latin letters with and without accents", () => {
  it("finds a name or word typed without its accents, and the other way round; other scripts as written (sql/106)", async () => {
    const { orgId, key } = await svc.newOrg();
    const filler = [
      "The user drinks green tea.",
      "The user went to Tokyo last spring.",
      "The user plays the cello on Fridays.",
      "The user has a dog named Rex.",
    ];
    const [zoe] = await seed(orgId, [
      { type: "fact", text: "Zoë loves sushi.", user_id: "u1" },
      ...filler.map((text) => ({ type: "fact" as const, text, user_id: "u1" })),
      { type: "fact", text: "My daughter Chloé started piano lessons.", user_id: "u1" },
      { type: "fact", text: "I live in São Paulo.", user_id: "u1" },
      { type: "fact", text: "We had cake at Café Müller yesterday.", user_id: "u1" },
      { type: "fact", text: "Jose plays the guitar in a band.", user_id: "u1" },
      { type: "fact", text: "Lukasz fixed the old bicycle.", user_id: "u1" },
      { type: "fact", text: "Søren moved to Straße 12 in Berlin.", user_id: "u1" },
      { type: "fact", text: "Я люблю йогурт.", user_id: "u1" },
      { type: "fact", text: "Η Αθήνα είναι όμορφη.", user_id: "u1" },
      { type: "fact", text: "我的猫很可爱。", user_id: "u1" },
    ]);
    const first = firstByText(key);
    for (const [query, expected] of [
      ["What does Zoe like?", "Zoë loves sushi."],
      ["zoe sushi", "Zoë loves sushi."],
      ["When did Chloe start piano?", "My daughter Chloé started piano lessons."],
      ["Sao Paulo", "I live in São Paulo."],
      ["cafe muller", "We had cake at Café Müller yesterday."],
      ["CAFE MULLER", "We had cake at Café Müller yesterday."],
      ["cafe\u0301 mu\u0308ller", "We had cake at Café Müller yesterday."],
      ["What does José play?", "Jose plays the guitar in a band."],
      ["Who fixed Łukasz's bike?", "Lukasz fixed the old bicycle."],
      ["Soren strasse", "Søren moved to Straße 12 in Berlin."],
      ["йогурт", "Я люблю йогурт."],
      ["Αθήνα", "Η Αθήνα είναι όμορφη."],
      ["猫", "我的猫很可爱。"],
    ] as const) {
      expect(await first(query), query).toBe(expected);
    }
    // Typed either way, a query is read as the same words, and leads with the same memory at the
    // same score (the rows after it come from the local embedder, which reads words as written).
    const read = async (query: string) => {
      const { rows } = await svc.deps.db.query<{ t: string }>("SELECT mnemo_query_tsv($1)::text AS t", [
        query,
      ]);
      const res = await search(key, { query, user_id: "u1", mode: "retrieve" });
      return [rows[0]!.t, res.body.data[0].text, res.body.data[0].score];
    };
    for (const [typed, accented] of [
      ["What does Zoe like?", "What does Zoë like?"],
      ["Sao Paulo", "São Paulo"],
      ["cafe muller", "Café Müller"],
    ] as const)
      expect(await read(typed), typed).toEqual(await read(accented));
    // Only Latin letters lose their marks: и is not й, nor α ά (as the reader of either writes).
    // (Every word of the query, as the search reads it.)
    const matches = async (query: string, id: string) =>
      (
        await svc.deps.db.query<{ m: boolean }>(
          `SELECT tsv @@ (SELECT string_agg(quote_literal(l), ' & ')::tsquery
             FROM unnest(tsvector_to_array(mnemo_query_tsv($1))) l) AS m FROM memories WHERE id = $2`,
          [query, id],
        )
      ).rows[0]!.m;
    const idOf = async (text: string) =>
      (
        await svc.deps.db.query<{ id: string }>(
          "SELECT id::text FROM memories WHERE org_id = $1 AND text = $2",
          [orgId, text],
        )
      ).rows[0]!.id;
    const russian = await idOf("Я люблю йогурт.");
    const greek = await idOf("Η Αθήνα είναι όμορφη.");
    expect([await matches("йогурт", russian), await matches("иогурт", russian)]).toEqual([true, false]);
    expect([await matches("Αθήνα", greek), await matches("Αθηνα", greek)]).toEqual([true, false]);
    const { rows } = await svc.deps.db.query<{ t: string }>("SELECT mnemo_index_text($1, 1000) AS t", [
      "Я люблю йогурт, ёлка. Η Αθήνα είναι όμορφη. 我的猫很可爱。한국어 👍🏽",
    ]);
    expect(rows[0]!.t).toBe("Я люблю йогурт, ёлка. Η Αθήνα είναι όμορφη. 我的猫很可爱。한국어 👍🏽");
    // Names compared in TypeScript (speakers, trigger entities) are folded as the index folds them.
    const names: string[] = [
      "Zoë",
      "São Paulo",
      "Łukasz",
      "Straße",
      "Søren",
      "Nguyễn",
      "İstanbul",
      "Œuvre",
      "Zoe\u0308",
      "Ǿ",
      "йогурт",
      "Αθήνα",
    ];
    const folded = await svc.deps.db.query<{ t: string }>(
      "SELECT mnemo_index_text(n, 1000) AS t FROM unnest($1::text[]) WITH ORDINALITY u(n, i) ORDER BY i",
      [names],
    );
    expect(folded.rows.map((r) => r.t)).toEqual(names.map(foldLatin));
    expect(names.map(foldLatin)).toEqual([
      "Zoe",
      "Sao Paulo",
      "Lukasz",
      "Strasse",
      "Soren",
      "Nguyen",
      "Istanbul",
      "OEuvre",
      "Zoe",
      "O",
      "йогурт",
      "Αθήνα",
    ]);
    // The stored text stays as sent.
    const all = await svc.request("GET", "/v1/memories?user_id=u1&limit=100", { key });
    expect(all.body.data.map((m: { text: string }) => m.text)).toContain("Zoë loves sushi.");
    // A memory indexed by an earlier version (sql/105: accents kept) is indexed again by the
    // upgrade (sql/106), and so is a speaker's name.
    await svc.deps.db.query("ALTER TABLE memories DISABLE TRIGGER memories_text");
    try {
      await svc.deps.db.query(
        "UPDATE memories SET tsv = to_tsvector('english', text), details = details || '{\"source_role\": \"Zoë\"}' WHERE id = $1",
        [zoe!.id],
      );
    } finally {
      await svc.deps.db.query("ALTER TABLE memories ENABLE TRIGGER memories_text");
    }
    expect([await matches("Zoe sushi", zoe!.id), await matches("Zoë sushi", zoe!.id)]).toEqual([
      false,
      false,
    ]);
    const sql = readFileSync(new URL("../sql/106_accent_folding.sql", import.meta.url), "utf8");
    // The upgrade's own pass (the test database is far below its 50,000-row bound).
    await svc.deps.db.query(sql.slice(sql.indexOf("DO $$")));
    expect([await matches("Zoe sushi", zoe!.id), await matches("Zoë sushi", zoe!.id)]).toEqual([true, true]);
    const role = await svc.deps.db.query<{ m: boolean }>(
      "SELECT tsv @@ to_tsquery('simple', 'zoe:C') AS m FROM memories WHERE id = $1",
      [zoe!.id],
    );
    expect(role.rows[0]!.m).toBe(true);
  });
});

describe("search compose", () => {
  it("without a model renders a deterministic block grouped by type with dates", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      {
        type: "fact",
        text: "Carol adopted a dog named Rex",
        user_id: "u",
        created_at: new Date("2023-05-08T10:00:00Z"),
      },
      { type: "episode", text: "Carol talked about her dog Rex", user_id: "u" },
    ]);
    const res = await search(key, { query: "Carol dog", user_id: "u" });
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe("compose");
    expect(res.body.context_selection_applied).toBe(false);
    expect(res.body.context).toContain("### Facts\n- 2023-05-08: Carol adopted a dog named Rex");
    expect(res.body.context).toContain("### Episodes");
    expect(res.body.data).toHaveLength(2);
    expect(typeof res.body.stage_timings.compose).toBe("number");
  });

  it("shows a clause and the sentence holding it once, the sentence at the clause's place", () => {
    const row = (id: string, type: string, text: string) =>
      ({ id, type, text, details: {}, created_at: new Date("2025-03-20T10:00:00Z") }) as unknown as MemoryRow;
    const moved = "On 20 March 2025, the user and others moved to Toronto last weekend!";
    const block = composeDeterministic([
      row("clause", "fact", moved),
      row("other", "fact", "The user bought a sofa."),
      row("sentence", "fact", `${moved} The boxes are everywhere.`),
      row("ep", "episode", `${moved} The boxes are everywhere. The user bought a sofa.`),
    ]);
    expect(block).toBe(
      "## Relevant memories\n\n### Facts\n" +
        "- 2025-03-20: The user and others moved to Toronto last weekend! The boxes are everywhere.\n" +
        "- 2025-03-20: The user bought a sofa.\n\n" +
        "### Episodes\n- 2025-03-20: The user and others moved to Toronto last weekend! The boxes are everywhere. The user bought a sofa.\n",
    );
  });

  it("shows one episode for a fact several conversations repeat, and another only for more of the query's words", () => {
    const row = (id: string, type: string, text: string) =>
      ({ id, type, text, details: {}, created_at: new Date("2025-08-01T10:00:00Z") }) as unknown as MemoryRow;
    const shoes = "The user needs to buy new school shoes for Lily.";
    const block = composeDeterministic(
      [
        row("fact", "fact", `On 1 August 2025, ${shoes}`),
        row("e1", "episode", `${shoes} The user cleaned out the garage.`),
        row("e2", "episode", `${shoes} The user repotted the basil.`),
        row("e3", "episode", `${shoes} Lily's school starts in September.`),
        row("e4", "episode", `${shoes} The weather was lovely.`),
      ],
      "Where does Lily go to school?",
    );
    expect(block).toContain("garage");
    expect(block).toContain("school starts in September");
    expect(block).not.toContain("basil");
    expect(block).not.toContain("lovely");
    expect(block.match(/buy new school shoes/g)).toHaveLength(3);
  });

  it("bounds each line's text, cut at a word, and the whole block", () => {
    const words = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");
    const rows = Array.from(
      { length: 12 },
      (_, i) =>
        ({
          id: `r${i}`,
          type: "fact",
          text: `Step ${i}: ${words(400, "word")}`,
          details: {},
          created_at: new Date("2025-03-01T10:00:00Z"),
        }) as unknown as MemoryRow,
    );
    const block = composeDeterministic(rows);
    const lines = block.split("\n").filter((l) => l.startsWith("- "));
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.length).toBeLessThan(12);
    for (const l of lines) {
      const text = l.slice("- 2025-03-01: ".length);
      expect(text.length).toBeLessThanOrEqual(LINE_CHARS);
      expect(text).toMatch(/ word\d+…$/);
    }
    expect(lines.join("\n").length).toBeLessThanOrEqual(BLOCK_CHARS);
    expect(lines[0]).toMatch(/^- 2025-03-01: Step 0: /);
  });

  const FAMILY = "\u{1F468}\u200D\u{1F469}\u200D\u{1F467}\u200D\u{1F466}";
  it.each([
    // A run without a space is cut at the bound, between two graphemes: a ZWJ sequence, a flag
    // and a letter with its combining accent stay whole or go whole.
    ["a ZWJ sequence", FAMILY.repeat(5), 20, FAMILY.repeat(1)],
    ["a flag", "\u{1F1EF}\u{1F1F5}".repeat(10), 7, "\u{1F1EF}\u{1F1F5}"],
    ["a combining accent", "cafe\u0301".repeat(10), 10, "cafe\u0301caf"],
    ["a surrogate pair", "\u{1F600}".repeat(10), 8, "\u{1F600}".repeat(3)],
    ["a word", "the quick brown fox jumps", 17, "the quick brown"],
  ])(
    "cuts a long line between graphemes, never inside %s, in at most the bound",
    (_what, text, max, kept) => {
      const cut = cutAtWord(text, max);
      expect(cut).toBe(`${kept}…`);
      expect(cut.length).toBeLessThanOrEqual(max);
    },
  );

  // The probe's bodies (regression R4): a 714-character message and an 8-step procedure.
  const MOVE =
    "Some background about me so you can help with the move. I grew up in Leeds and studied chemistry at Manchester, then worked for eight years at a paint company in Bradford. " +
    "My partner Jamie is a nurse and works night shifts at the Royal Infirmary, which is why we need somewhere close to the hospital. " +
    "We have a rescue greyhound called Biscuit who hates stairs, so a ground floor flat or a house would be ideal. " +
    "Our budget is around 1,400 pounds a month including bills, and we would like at least two bedrooms because Jamie's mum visits often. " +
    "I cycle to work most days so secure bike storage matters a lot to me. " +
    "My new office is on Whitworth Street in Manchester city centre and I start there on the 3rd of June.";
  const DEPLOY = [
    "To deploy the web app to production:",
    "1. Make sure you are on main and run `git pull --rebase` so you have the latest changes.",
    "2. Run `pnpm install --frozen-lockfile` and then `pnpm test` and wait for every suite to pass.",
    "3. Bump the version with `pnpm version patch` and push the tag with `git push --follow-tags`.",
    "4. Build the image with `docker build -t registry.example.com/web:latest .` from the repo root.",
    "5. Push it with `docker push registry.example.com/web:latest` and wait for the registry to confirm.",
    "6. Run `kubectl rollout restart deployment/web -n prod` to pick up the new image.",
    "7. Watch `kubectl rollout status deployment/web -n prod` until it reports success.",
    "8. Finally, post the version number in #deploys on Slack so support knows what shipped.",
  ].join("\n");
  const at = (id: string, type: string, text: string) =>
    ({ id, type, text, details: {}, created_at: new Date("2025-05-01T10:00:00Z") }) as unknown as MemoryRow;

  it.each([
    ["Where is my new office?", "on Whitworth Street in Manchester city centre"],
    ["When do I start my new job?", "I start there on the 3rd of June"],
    ["What's our rent budget?", "Our budget is around 1,400 pounds a month"],
  ])("keeps a 714-character fact whole for %s", (query, answer) => {
    const block = composeDeterministic([at("f", "fact", `On 1 May 2025, the user said: ${MOVE}`)], query);
    expect(block).toContain(answer);
    expect(block).not.toContain("…");
  });

  it("shows an 8-step procedure with all its steps", () => {
    const block = composeDeterministic(
      [at("p", "procedure", DEPLOY)],
      "How do I deploy the web app to production?",
    );
    for (let i = 1; i <= 8; i++) expect(block).toContain(DEPLOY.split("\n")[i]);
  });

  it("cuts a fact past the line's bound between sentences, keeping those the query's words are in", async () => {
    const { orgId, key } = await svc.newOrg();
    const padding = Array.from(
      { length: 50 },
      (_, i) => `Note ${i} about the garden shed and its paint colour.`,
    );
    // The answer last, behind 2,700 characters of other sentences and MOVE itself.
    const text = `${padding.join(" ")} ${MOVE}`;
    expect(text.length).toBeGreaterThan(LINE_CHARS);
    await seed(orgId, [{ type: "fact", text, user_id: "u" }]);
    const res = await search(key, { query: "Where is my new office?", user_id: "u", mode: "compose" });
    const fact = (res.body.context as string).split("\n").find((l) => l.startsWith("- "))!;
    expect(fact).toContain(
      "My new office is on Whitworth Street in Manchester city centre and I start there on the 3rd of June.",
    );
    expect(fact.slice(fact.indexOf(": ") + 2).length).toBeLessThanOrEqual(LINE_CHARS);
    // Sentences, whole, in their order, "…" where some were left out.
    expect(fact).toContain("Note 0 about the garden shed and its paint colour. Note 1 about");
    expect(fact).toMatch(
      /colour\. … .*Whitworth Street in Manchester city centre and I start there on the 3rd of June\.$/,
    );
    expect(fact).not.toMatch(/\b(?:Not|Note \d+ about the)…/);
  });

  it("cuts a long procedure only between steps and says how many were left out", () => {
    const steps = Array.from(
      { length: 40 },
      (_, i) =>
        `${i + 1}. Run \`./scripts/stage-${i + 1}.sh --region eu-west-1\` and wait until it prints that stage ${i + 1} is done.`,
    );
    const block = composeDeterministic(
      [at("p", "procedure", `To migrate the cluster:\n${steps.join("\n")}`)],
      "migrate the cluster",
    );
    const text = block
      .split("\n")
      .find((l) => l.startsWith("- "))!
      .slice("- 2025-05-01: ".length);
    expect(text.length).toBeLessThanOrEqual(LINE_CHARS);
    const shown = text.match(/\d+\. Run .*? is done\./g)!;
    expect(shown.length).toBeGreaterThan(10);
    expect(text).toMatch(
      new RegExp(`stage ${shown.length} is done\\. … \\(${40 - shown.length} more steps left out\\)$`),
    );
  });

  it("with a model makes one selection call and returns its markdown; falls back when it fails", async () => {
    const { orgId, key } = await svc.newOrg();
    const [rex] = await seed(orgId, [
      { type: "fact", text: "Dana adopted a dog named Rex", user_id: "u" },
      { type: "fact", text: "Dana dislikes rainy weather", user_id: "u" },
    ]);
    const saved = svc.deps.providers.llm;
    svc.deps.providers.llm = stub.model;
    try {
      stub.requests.length = 0;
      stub.reply = () => ({ selected_ids: [rex!.id], context: "## Memory\n- Dana has a dog, Rex." });
      const res = await search(key, { query: "Dana dog", user_id: "u" });
      expect(res.status).toBe(200);
      expect(res.body.context_selection_applied).toBe(true);
      expect(res.body.context).toBe("## Memory\n- Dana has a dog, Rex.");
      expect(res.body.data).toHaveLength(2);
      expect(stub.requests).toHaveLength(1);
      expect(JSON.stringify(stub.requests[0].messages)).toContain(rex!.id);

      // A secret the model writes into its block is masked as the turns' are.
      stub.reply = () => ({
        selected_ids: [rex!.id],
        context: "## Memory\n- Dana's vet portal password is Rex2024!vet.",
      });
      const masked = await search(key, { query: "Dana dog", user_id: "u" });
      expect(masked.body.context).toBe("## Memory\n- Dana's vet portal password is [redacted password].");

      // A block written from none of the candidates (ids it made up) is not served.
      stub.reply = () => ({ selected_ids: ["made-up"], context: "The user is an astronaut on Mars." });
      const invented = await search(key, { query: "Dana dog", user_id: "u", mode: "compose" });
      expect(invented.body.context_selection_applied).toBe(false);
      expect(invented.body.context).toContain("Dana adopted a dog named Rex");
      expect(invented.body.context).not.toContain("astronaut");
      // Nor one far longer than every candidate together.
      stub.reply = () => ({ selected_ids: [rex!.id], context: `Rex. ${"x".repeat(100_000)}` });
      const runaway = await search(key, { query: "Dana dog", user_id: "u", mode: "compose" });
      expect(runaway.body.context_selection_applied).toBe(false);
      expect(runaway.body.context.length).toBeLessThan(10_000);

      stub.reply = () => 500;
      const failed = await search(key, { query: "Dana dog", user_id: "u", mode: "compose" });
      expect(failed.status).toBe(200);
      expect(failed.body.context_selection_applied).toBe(false);
      expect(failed.body.context).toContain("Dana adopted a dog named Rex");

      // A stuck model: the deterministic block after MNEMO_LLM_REQUEST_TIMEOUT_MS, not after
      // MNEMO_LLM_TIMEOUT_MS (a minute).
      stub.reply = () => new Promise((r) => setTimeout(() => r(500), 20_000));
      await withConfig(svc.deps, { MNEMO_LLM_REQUEST_TIMEOUT_MS: 300 }, async () => {
        const t = performance.now();
        const slow = await search(key, { query: "Dana dog", user_id: "u", mode: "compose" });
        expect(performance.now() - t).toBeLessThan(10_000);
        expect(slow.status).toBe(200);
        expect(slow.body.context_selection_applied).toBe(false);
        expect(slow.body.context).toContain("Dana adopted a dog named Rex");
      });

      stub.requests.length = 0;
      const retrieve = await search(key, { query: "Dana dog", user_id: "u", mode: "retrieve" });
      expect(retrieve.body.context).toBeNull();
      expect(stub.requests).toHaveLength(0);
    } finally {
      svc.deps.providers.llm = saved;
    }
  });
});

describe("search failures", () => {
  it("is 500 search_failed naming only the request id when a stage breaks", async () => {
    const { key } = await svc.newOrg();
    const saved = svc.deps.providers.embedder;
    svc.deps.providers.embedder = { ...saved, embed: async () => Promise.reject(new Error("secret detail")) };
    try {
      const res = await search(key, { query: "anything", user_id: "u" });
      expect(res.status).toBe(500);
      expect(res.body.detail.code).toBe("search_failed");
      expect(res.text).not.toContain("secret detail");
      expect(res.body.detail.message).toContain(res.headers.get("x-request-id"));
    } finally {
      svc.deps.providers.embedder = saved;
    }
  });
});

describe("legacy search shapes", () => {
  it("lifts filters.user_id, reads rows/context modes and drops context_prompt", async () => {
    const { orgId, key } = await svc.newOrg();
    await seed(orgId, [
      { type: "fact", text: "Erin likes chess", user_id: "u" },
      { type: "fact", text: "Erin's colleague likes chess", user_id: "other" },
    ]);
    const rows = await search(key, { query: "chess", filters: { user_id: "u", kb_type: "x" }, mode: "rows" });
    expect(rows.status).toBe(200);
    expect(rows.body.mode).toBe("retrieve");
    expect(texts(rows)).toEqual(["Erin likes chess"]);
    const rootWins = await search(key, {
      query: "chess",
      user_id: "other",
      filters: { user_id: "u" },
      mode: "rows",
    });
    expect(texts(rootWins)).toEqual(["Erin's colleague likes chess"]);
    const ctx = await search(key, { query: "chess", filters: { user_id: "u" }, mode: "context" });
    expect(ctx.body.mode).toBe("compose");
    expect(ctx.body.context).toContain("Erin likes chess");
    const prompt = await search(key, {
      query: "chess",
      user_id: "u",
      mode: "rows",
      include: ["context_prompt", "full_content"],
    });
    expect(prompt.status).toBe(200);
    expect(prompt.body.mode).toBe("compose");
    expect(texts(prompt)).toEqual(["Erin likes chess"]);
    const noScope = await search(key, { query: "chess", filters: { conv_id: "c" } });
    expect(noScope.body.detail.code).toBe("missing_scope");
    // The filter language's equality, as clients of the hosted service write it, is lifted too.
    const eq = await search(key, { query: "chess", filters: { user_id: { $eq: "u" } }, mode: "rows" });
    expect(texts(eq)).toEqual(["Erin likes chess"]);
    // Any other value is an error of filters.user_id, the field the client sent (it blamed a root
    // user_id the client never sent); null is none.
    for (const userId of [5, { $in: ["u"] }, { $eq: 5 }, ["u"]]) {
      const wrong = await search(key, { query: "chess", filters: { user_id: userId } });
      expect(wrong.status, JSON.stringify(userId)).toBe(422);
      expect(wrong.body.error.code).toBe("invalid_filters");
      expect(wrong.body.detail.field).toBe("filters.user_id");
      expect(wrong.body.error.details.issues[0].loc).toEqual(["body", "filters", "user_id"]);
      expect(wrong.body.error.message).toBe('filters.user_id: must be a string (or {"$eq": "<id>"})');
    }
    const none = await search(key, { query: "chess", filters: { user_id: null } });
    expect(none.body.detail.code).toBe("missing_scope");
  });
});
