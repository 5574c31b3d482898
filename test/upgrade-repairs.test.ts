import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { writeMemories } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { ROOT } from "./helpers/process.js";

/**
 * sql/096: data that earlier versions left behind, repaired when the new version starts. The rows
 * are written as those versions left them (a fact deleted without leaving its episode, a
 * credential tagged to a catch-all group), then the migration's SQL runs again, as on upgrade.
 */
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const MIGRATION = readFileSync(path.join(ROOT, "sql/096_upgrade_privacy_repairs.sql"), "utf8");

describe("upgrade repairs (sql/096)", () => {
  it("an episode quoting a fact deleted before the upgrade keeps only its remaining facts' sentences; tags an old classifier gave to a credential go", async () => {
    const { orgId } = await svc.newOrg("upgrade");
    const ctx = systemCtx(svc.deps, orgId, "seed");
    const db = svc.deps.db;
    const scope = { user_id: "u1", conv_id: "c1" };
    const [kept, gone, other] = await writeMemories(ctx, [
      { type: "fact", text: "The user lives in Paris.", ...scope },
      { type: "fact", text: "The user's bank PIN is 4821, please remember it for the user.", ...scope },
      { type: "fact", text: "The user plays the cello on Sundays.", ...scope },
    ]);
    const episode = (text: string, factIds: string[], title: string) => ({
      type: "episode" as const,
      text,
      ...scope,
      details: { title, fact_ids: factIds },
    });
    const [local, model, whole] = await writeMemories(ctx, [
      episode(
        "The user lives in Paris. The user's bank PIN is 4821, please remember it for the user.",
        [kept!.id, gone!.id],
        "Conversation about Paris",
      ),
      episode("Alice shared her banking details and her city.", [gone!.id], "Conversation about banking"),
      episode("The user plays the cello on Sundays.", [other!.id], "Conversation about music"),
    ]);
    // As an earlier version deleted it: the row alone.
    await db.query("DELETE FROM memories WHERE id = $1::uuid", [gone!.id]);

    // Stored by ingest jobs and tagged by the old classifier's verdicts.
    const [code, deploy, manual] = await writeMemories(ctx, [
      { type: "fact", text: "The office door code is 4821.", ...scope },
      { type: "fact", text: "The deploy script lives in ci/deploy.sh.", ...scope },
      { type: "fact", text: "The team's Wi-Fi password is on the fridge.", ...scope },
    ]);
    await db.query(
      "UPDATE memories SET group_ids = '{team}', job_id = CASE WHEN id = $1::uuid THEN NULL ELSE 'job-old' END WHERE id = ANY($2::uuid[])",
      [manual!.id, [code!.id, deploy!.id, manual!.id]],
    );

    await db.query(MIGRATION);

    const row = async (id: string) =>
      (
        await db.query<{ text: string; details: any; group_ids: string[] }>(
          "SELECT text, details, group_ids FROM memories WHERE id = $1::uuid",
          [id],
        )
      ).rows[0]!;
    expect(await row(local!.id)).toMatchObject({
      text: "The user lives in Paris.",
      details: { fact_ids: [kept!.id], title: "Conversation about Paris" },
    });
    // A summary in other words than its facts cannot be cut by sentence: its title is left.
    expect(await row(model!.id)).toMatchObject({
      text: "Conversation about banking",
      details: { fact_ids: [] },
    });
    expect(await row(whole!.id)).toMatchObject({
      text: "The user plays the cello on Sundays.",
      details: { fact_ids: [other!.id] },
    });
    // No episode quotes the PIN any more.
    const { rows: quoting } = await db.query(
      "SELECT id FROM memories WHERE org_id = $1 AND type = 'episode' AND text LIKE '%4821%'",
      [orgId],
    );
    expect(quoting).toEqual([]);

    expect((await row(code!.id)).group_ids).toEqual([]);
    expect((await row(deploy!.id)).group_ids).toEqual(["team"]);
    // Not stored by an ingest (written or imported directly): left as it is.
    expect((await row(manual!.id)).group_ids).toEqual(["team"]);

    // Running again changes nothing.
    const { rows: again } = await db.query<{ episodes: number; tags: number }>(
      "SELECT mnemo_repair_deleted_fact_episodes($1) AS episodes, mnemo_repair_personal_tags($1) AS tags",
      [orgId],
    );
    expect(again[0]).toEqual({ episodes: 0, tags: 0 });
  });
});

describe("repairs of migrations changed after release (sql/102)", () => {
  const repair = readFileSync(path.join(ROOT, "sql/102_edited_migrations_repair.sql"), "utf8");

  it("a database migrated by the first sql/100 (no mnemo_cjk_tsv) searches again, and one with the first sql/050's rate-limit table counts and limits again", async () => {
    const { key, orgId } = await svc.newOrg("edited");
    const db = svc.deps.db;
    // As b9a2e5c left it: mnemo_memory_tsv calling mnemo_cjk_bigrams itself, no mnemo_cjk_tsv.
    await db.query(`CREATE OR REPLACE FUNCTION mnemo_memory_tsv(body text, details jsonb, context text, concepts text)
      RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN setweight(to_tsvector('english', coalesce(body, '')), 'A')
        || setweight(to_tsvector('simple', coalesce(mnemo_cjk_bigrams(body), '')), 'A')
        || setweight(to_tsvector('english', coalesce(details ->> 'title', '')), 'A')
        || setweight(to_tsvector('english', coalesce(context, '')), 'B')
        || setweight(to_tsvector('simple', coalesce(mnemo_cjk_bigrams(context), '')), 'B')
        || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C')
        || to_tsvector('english', coalesce(concepts, ''))`);
    // No query function of sql/105 either: it calls mnemo_cjk_tsv (made again below, as that
    // database then runs sql/105).
    await db.query("DROP FUNCTION mnemo_query_tsv(text)");
    await db.query('DROP FUNCTION mnemo_cjk_tsv(text, "char")');
    // As f78fa8d left it: one row per subject, no organisation or key.
    await db.query(`DROP TABLE rate_limit_counters;
      CREATE TABLE rate_limit_counters (subject text PRIMARY KEY, minute_start timestamptz NOT NULL,
        minute_count integer NOT NULL, day date NOT NULL, day_count integer NOT NULL,
        seen_at timestamptz NOT NULL, admitted boolean NOT NULL)`);
    const search = () =>
      svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id: "u1", query: "寿司", mode: "retrieve" },
      });
    expect((await search()).status).toBe(500);

    await db.query(repair);
    const later = readFileSync(path.join(ROOT, "sql/105_index_normalised.sql"), "utf8");
    await db.query(/CREATE FUNCTION mnemo_query_tsv[\s\S]*?END;\n/.exec(later)![0]);
    await writeMemories(systemCtx(svc.deps, orgId, "seed"), [
      { type: "fact", text: "我住在东京，我喜欢寿司。", user_id: "u1" },
    ]);
    const found = await search();
    expect(found.status).toBe(200);
    expect(found.body.data.map((m: { text: string }) => m.text)).toEqual(["我住在东京，我喜欢寿司。"]);
    const usage = await svc.request("GET", "/v1/usage", { key });
    expect(usage.status).toBe(200);
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM rate_limit_counters WHERE org_id = $1",
      [orgId],
    );
    expect(rows[0]!.n).toBeGreaterThan(0);
    // Running again changes nothing.
    await db.query(repair);
    expect((await svc.request("GET", "/v1/usage", { key })).status).toBe(200);
  });
});
