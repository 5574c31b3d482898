import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportOrg } from "../src/admin/export.js";
import { type ImportReport, importOrg } from "../src/admin/import.js";
import { linkOrg } from "../src/admin/orgs.js";
import { progress } from "../src/admin/progress.js";
import { reindexOrgText } from "../src/admin/reindex.js";
import { createDb, type Db } from "../src/db/db.js";
import { insertMemoryRows } from "../src/db/memories.js";
import { migrate } from "../src/db/migrate.js";
import { getOrg } from "../src/db/orgs.js";
import { newMemoryId } from "../src/ids.js";
import type { Embedder } from "../src/providers/types.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { createNativeDatabase } from "./helpers/native-pg.js";
import { childEnv, MAIN, migratedDataDir, ROOT, runMnemo } from "./helpers/process.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";

let src: TestService;
let dst: TestService;
let orgId: string;
let file: string[];
beforeAll(async () => {
  src = await startTestService({ env: { MNEMO_WEBHOOK_ALLOW_PRIVATE: "true" } });
  dst = await startTestService({ workers: false });
  const org = await src.newOrg("exported");
  orgId = org.orgId;
  const key = org.key;
  const g1 = await src.request("POST", "/v1/groups", { key, body: { name: "team" } });
  const g2 = await src.request("POST", "/v1/groups", {
    key,
    body: { name: "ops", prompt: "Operations runbooks" },
  });
  expect([g1.status, g2.status]).toEqual([201, 201]);
  const ingest = (user: string, content: string, extra: object = {}) =>
    src.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: user, conv_id: `c-${user}`, messages: [{ role: "user", content }], ...extra },
    });
  const code = (body: string) => `Here is utils.py for the adder:\n\`\`\`python\n${body}\n\`\`\``;
  for (const r of [
    await ingest("alice", "I drink green tea every morning. My sister lives in Lisbon.", {
      group_ids: [g1.body.id],
    }),
    // A `__proto__` key is a key like any other (JSON.parse: an object literal would set the prototype).
    await ingest("bob", "I prefer dark mode in every editor.", {
      metadata: JSON.parse('{"topic":"editors","rank":2,"__proto__":"p"}'),
    }),
    await ingest("alice", code("def add(a, b):\n    return a + b"), { extract_artifacts: true }),
    await ingest("alice", code("def add(a, b, c=0):\n    return a + b + c"), { extract_artifacts: true }),
  ]) {
    expect(r.status).toBe(200);
    expect(r.body.status).toBe("succeeded");
  }
  const hook = await src.request("PUT", "/v1/webhooks", { key, body: { url: "http://127.0.0.1:9/hook" } });
  expect(hook.status).toBe(200);
  file = await exportLines(src.deps.db, src.deps.providers.embedder, orgId);
});
afterAll(async () => {
  await src?.stop();
  await dst?.stop();
});

async function exportLines(db: Db, embedder: Embedder, org: string, userId?: string) {
  const lines: string[] = [];
  await exportOrg(db, embedder, { orgId: org, userId }, async (l) => {
    lines.push(l);
  });
  return lines;
}

/** The first service's export of an organisation, `each` awaited after every line is written. */
async function exportFromSrc(
  input: { orgId: string; paged?: boolean },
  each: (line: string) => Promise<void>,
) {
  const lines: string[] = [];
  await exportOrg(src.deps.db, src.deps.providers.embedder, input, async (l) => {
    lines.push(l);
    await each(l);
  });
  return lines;
}

async function* iterate(lines: string[]) {
  yield* lines;
}

/** importInto the second service's database (the usual target). */
const importIntoDst = (lines: string[], org = orgId, format: "mnemo" | "mem0" = "mnemo") =>
  importInto({ db: dst.deps.db, embedder: dst.deps.providers.embedder }, lines, org, format);

/**
 * An export line of a new active fact: the file's first memory with a new id and `text`, and no
 * links, job or hash of its own (each line a distinct memory).
 */
const freshMemoryLine = (text: string) =>
  JSON.stringify({
    ...JSON.parse(file.find((l) => l.includes('"kind":"memory"'))!),
    type: "fact",
    status: "active",
    details: {},
    id: randomUUID(),
    text,
    supersedes: null,
    context: null,
    concepts: null,
    job_id: null,
    write_key: null,
    content_hash: null,
  });

const importInto = (
  svc: { db: Db; embedder: Embedder },
  lines: string[],
  org = orgId,
  format: "mnemo" | "mem0" = "mnemo",
  // As the exporting service (its webhook is on a loopback address): PUT's rules apply to the line.
  allowPrivate = true,
) =>
  importOrg(
    {
      db: svc.db,
      embedder: svc.embedder,
      secret: Buffer.alloc(32, 7),
      config: { ...dst.deps.config, MNEMO_WEBHOOK_ALLOW_PRIVATE: allowPrivate },
    },
    { orgId: org, format },
    iterate(lines),
  );

describe("admin export", () => {
  it("writes a header, groups, every memory with its embedding and revision links, and the webhook without its secret", () => {
    const rows = file.map((l) => JSON.parse(l));
    expect(rows[0]).toMatchObject({
      kind: "header",
      format: "mnemo-export",
      org: { id: orgId, name: "exported" },
      embedding: { dim: TEST_EMBEDDING_DIM, embedder: src.deps.providers.embedder.name },
    });
    expect(rows.filter((r) => r.kind === "group").map((r) => r.name)).toEqual(["team", "ops"]);
    const memories = rows.filter((r) => r.kind === "memory");
    expect(memories.length).toBeGreaterThanOrEqual(6);
    for (const m of memories) expect(m.embedding).toHaveLength(TEST_EMBEDDING_DIM);
    const v2 = memories.find((m) => m.type === "artifact" && m.details.version === 2);
    const v1 = memories.find((m) => m.type === "artifact" && m.details.version === 1);
    expect(v2.details.root_id).toBe(v1.id);
    const bobs = memories.filter((m) => m.user_id === "bob");
    expect(bobs.length).toBeGreaterThan(0);
    for (const m of bobs) {
      expect(Object.entries(m.metadata).sort()).toEqual([
        ["__proto__", "p"],
        ["rank", 2],
        ["topic", "editors"],
      ]);
    }
    const hook = rows.at(-1);
    expect(hook).toMatchObject({ kind: "webhook", url: "http://127.0.0.1:9/hook", enabled: true });
    expect(JSON.stringify(rows)).not.toMatch(/secret|whsec_/);
  });

  it("is one snapshot: what commits while it runs is not in the file, not even in part", async () => {
    const own = await src.newOrg("snapshot");
    await src.request("POST", "/v1/memories?wait=true", {
      key: own.key,
      body: { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "I keep bees on my roof." }] },
    });
    const before = (await exportLines(src.deps.db, src.deps.providers.embedder, own.orgId)).filter((l) =>
      l.includes('"kind":"memory"'),
    );
    expect(before.length).toBeGreaterThan(0);
    // Once the header is out, another connection deletes every memory of the organisation. On
    // PostgreSQL it commits at once; on the embedded database it waits for the export's
    // transaction (its one session), so it is not awaited past a moment.
    let removal: Promise<unknown> | undefined;
    const lines = await exportFromSrc({ orgId: own.orgId }, async () => {
      if (!removal) {
        removal = src.deps.db.query("DELETE FROM memories WHERE org_id = $1", [own.orgId]);
        await Promise.race([removal, new Promise((r) => setTimeout(r, 1500))]);
      }
    });
    await removal;
    expect(lines.filter((l) => l.includes('"kind":"memory"'))).toEqual(before);
    const { rows } = await src.deps.db.query("SELECT count(*)::int AS n FROM memories WHERE org_id = $1", [
      own.orgId,
    ]);
    expect(rows[0].n).toBe(0);
  });

  it("paged (beside a server that owns the embedded database), lets requests run while it reads", async () => {
    const own = await src.newOrg("paged");
    const r = await src.request("POST", "/v1/memories?wait=true", {
      key: own.key,
      body: {
        user_id: "u",
        conv_id: "c",
        messages: [{ role: "user", content: "I live in Porto. I keep bees on my roof." }],
      },
    });
    expect(r.body.status).toBe("succeeded");
    const facts = (await src.request("GET", "/v1/memories?type=fact", { key: own.key })).body.data;
    expect(facts.length).toBeGreaterThan(0);
    // A supersede awaited in the middle of the export: with the embedded database's one session
    // held by a snapshot, it would wait for the export, which waits for it.
    let moved: { status: number } | undefined;
    const lines = await exportFromSrc({ orgId: own.orgId, paged: true }, async () => {
      if (moved) return;
      moved = { status: 0 };
      const patch = src.request("PATCH", `/v1/memories/${facts[0].id}/`, {
        key: own.key,
        body: { text: "I live in Lisbon now." },
      });
      moved = await Promise.race([
        patch,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error("the request waited for the export")), 20_000),
        ),
      ]);
    });
    expect(moved?.status).toBe(200);
    // The organisation was read after the supersede: the file holds the new fact and the old one
    // as superseded.
    const memories = lines.map((l) => JSON.parse(l)).filter((m) => m.kind === "memory");
    const old = memories.find((m) => m.id === facts[0].id);
    const successor = memories.find((m) => m.supersedes === facts[0].id);
    expect(old.status).toBe("superseded");
    expect(successor.status).toBe("active");
  });

  it("paged, writes the groups created while it read after the memories, so a later page's tags exist", async () => {
    const own = await src.newOrg("paged-groups");
    // Two pages: the tag goes on a memory of the second, read after the groups were written.
    const rows = Array.from({ length: 520 }, (_, i) => ({
      id: newMemoryId(),
      org_id: own.orgId,
      type: "fact" as const,
      text: `Paged fact ${i}`,
      user_id: "u",
      status: "active" as const,
      created_at: new Date(Date.parse("2026-01-01T00:00:00Z") + i * 1000),
    }));
    await src.deps.db.tx((tx) => insertMemoryRows(tx, rows));
    let group: string | undefined;
    const lines = await exportFromSrc({ orgId: own.orgId, paged: true }, async (l) => {
      if (group || !l.includes('"kind":"memory"')) return;
      const g = await src.request("POST", "/v1/groups", { key: own.key, body: { name: "late" } });
      group = g.body.id as string;
      const tagged = await src.request("PATCH", `/v1/memories/${rows.at(-1)!.id}`, {
        key: own.key,
        body: { add_group_ids: [group] },
      });
      expect(tagged.status).toBe(200);
    });
    const parsed = lines.map((l) => JSON.parse(l));
    const last = parsed.find((m) => m.id === rows.at(-1)!.id);
    expect(last.group_ids).toEqual([group]);
    const at = parsed.findIndex((m) => m.kind === "group" && m.id === group);
    expect(at).toBeGreaterThan(parsed.indexOf(last));
    // Imported elsewhere, the tag names a group that exists there.
    const target = await dst.newOrg("paged-groups-target");
    const report = await importIntoDst(lines, target.orgId);
    expect(report.bad).toEqual([]);
    const got = await dst.request("GET", `/v1/groups/${group}`, { key: target.key });
    expect(got.status).toBe(200);
  });

  it("a file holding a fact as active beside the fact that supersedes it imports it as superseded", async () => {
    // What a paged export can catch when the supersede commits between its pages.
    const own = await src.newOrg("half-caught");
    await src.request("POST", "/v1/memories?wait=true", {
      key: own.key,
      body: { user_id: "u", conv_id: "c", messages: [{ role: "user", content: "I live in Porto." }] },
    });
    const [fact] = (await src.request("GET", "/v1/memories?type=fact", { key: own.key })).body.data;
    const before = await exportLines(src.deps.db, src.deps.providers.embedder, own.orgId);
    expect(
      (
        await src.request("PATCH", `/v1/memories/${fact.id}/`, {
          key: own.key,
          body: { text: "I live in Lisbon." },
        })
      ).status,
    ).toBe(200);
    const after = await exportLines(src.deps.db, src.deps.providers.embedder, own.orgId);
    const successor = after.find((l) => l.includes(`"supersedes":"${fact.id}"`));
    expect(successor).toBeDefined();
    const mixed = [...before, successor!];
    const target = await dst.newOrg("half-caught-target");
    const report = await importIntoDst(mixed, target.orgId);
    expect(report.bad).toEqual([]);
    expect(report.memories.superseded).toBe(1);
    const { rows } = await dst.deps.db.query(
      "SELECT id, status FROM memories WHERE org_id = $1 AND type = 'fact'",
      [target.orgId],
    );
    expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({
      [fact.id]: "superseded",
      [JSON.parse(successor!).id]: "active",
    });
    // As a run stopped after writing its rows and before the steps after the last line (killed,
    // the database gone) leaves them: the fact still active. Run again, the import finds both rows
    // there and still does those steps.
    await dst.deps.db.query("UPDATE memories SET status = 'active' WHERE org_id = $1 AND id = $2", [
      target.orgId,
      fact.id,
    ]);
    const rerun = await importIntoDst(mixed, target.orgId);
    expect(rerun.bad).toEqual([]);
    expect(rerun.memories).toMatchObject({ imported: 0, superseded: 1 });
    const again = await dst.deps.db.query("SELECT status FROM memories WHERE org_id = $1 AND id = $2", [
      target.orgId,
      fact.id,
    ]);
    expect(again.rows[0].status).toBe("superseded");
  });

  it("limits memories to one user with --user, and leaves the organisation's webhook out", async () => {
    const lines = await exportLines(src.deps.db, src.deps.providers.embedder, orgId, "bob");
    const rows = lines.map((l) => JSON.parse(l));
    const memories = rows.filter((r) => r.kind === "memory");
    expect(memories.length).toBeGreaterThan(0);
    expect(memories.every((m) => m.user_id === "bob")).toBe(true);
    // Imported into another organisation, it would send every event of that one to this receiver.
    expect(file.some((l) => l.includes('"kind":"webhook"'))).toBe(true);
    expect(rows.filter((r) => r.kind === "webhook")).toEqual([]);
    // (Into a new organisation of the same database: the memories are another's, the rest is taken.)
    const report = await importInto(
      { db: src.deps.db, embedder: src.deps.providers.embedder },
      lines,
      "org_one_user",
    );
    expect(report.webhook).toBe("none");
    const { rows: hooks } = await src.deps.db.query("SELECT url FROM webhooks WHERE org_id = 'org_one_user'");
    expect(hooks).toEqual([]);
  });
});

describe("admin import (embedded database)", () => {
  let first: ImportReport;
  it("round-trips: export, import into a fresh database, export again gives the same file", async () => {
    const target = { db: dst.deps.db, embedder: dst.deps.providers.embedder };
    first = await importInto(target, file);
    expect(first.bad).toEqual([]);
    expect(first.organisationCreated).toBe(true);
    expect(first.memories.reembedded).toBe(0);
    expect(first.webhook).toBe("created");
    expect(first.webhookSecret).toMatch(/^whsec_/);
    const again = await exportLines(dst.deps.db, dst.deps.providers.embedder, orgId);
    expect(again).toEqual(file);
    // Every imported row is weighed for full text against all of them, not against the rows
    // inserted before it (the first against none): its BM25 vector is what the organisation's
    // statistics give now.
    const { rows } = await dst.deps.db.query<{ stale: number; n: number }>(
      `SELECT count(*) FILTER (WHERE m.bm25 IS DISTINCT FROM mnemo_bm25_doc(m.tsv, s.avgdl))::int AS stale,
              count(*)::int AS n
       FROM memories m,
            (SELECT sum(total_len)::float8 / greatest(sum(docs), 1) AS avgdl FROM text_doc_stats WHERE org_id = $1) s
       WHERE m.org_id = $1`,
      [orgId],
    );
    expect(rows[0]).toEqual({ stale: 0, n: file.filter((l) => l.includes('"kind":"memory"')).length });
  });

  it("is idempotent by id: a second import changes nothing", async () => {
    const target = { db: dst.deps.db, embedder: dst.deps.providers.embedder };
    const second = await importInto(target, file);
    expect(second.memories.imported).toBe(0);
    expect(second.memories.existing).toBe(first.memories.imported);
    expect(second.groups.imported).toBe(0);
    expect(second.webhook).toBe("kept existing");
    expect(await exportLines(dst.deps.db, dst.deps.providers.embedder, orgId)).toEqual(file);
  });

  it("reads a fact without a status as active, leaves a fact naming itself in supersedes active, and calls empty input a failure", async () => {
    const target = await dst.newOrg("odd-lines");
    const plain = JSON.parse(freshMemoryLine("A fact without a status"));
    const selfish = JSON.parse(freshMemoryLine("A fact that supersedes itself"));
    const report = await importIntoDst(
      [
        file[0]!,
        JSON.stringify({ ...plain, status: null }),
        JSON.stringify({ ...selfish, supersedes: selfish.id }),
      ],
      target.orgId,
    );
    expect(report.bad).toEqual([]);
    expect(report.memories.superseded).toBe(0);
    const { rows } = await dst.deps.db.query("SELECT id, status FROM memories WHERE org_id = $1", [
      target.orgId,
    ]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({
      [plain.id]: "active",
      [selfish.id]: "active",
    });
    const usage = await dst.request("GET", "/v1/usage", { key: target.key });
    expect(usage.body.storage.memories_active).toBe(2);
    const empty = await importIntoDst([], target.orgId);
    expect(empty.bad).toEqual([{ line: 0, error: "the input holds no line" }]);
  });

  it("reports bad lines by number and imports the rest; a line the database refuses fails only itself", async () => {
    const other = await dst.newOrg("other");
    const memory = (id: string, text: string) => ({
      ...JSON.parse(file.find((l) => l.includes('"kind":"memory"'))!),
      id,
      text,
      job_id: null,
      write_key: null,
    });
    const ids = ["7d1c0000-0000-4000-8000-000000000001", "7d1c0000-0000-4000-8000-000000000002"];
    const lines = [
      file[0]!,
      JSON.stringify(memory(ids[0]!, "first good one")),
      "{not json",
      JSON.stringify({ ...memory("x", "bad id"), id: "not-a-uuid" }),
      JSON.stringify({ kind: "memory" }),
      JSON.stringify(memory(ids[1]!, "second good one")),
      JSON.stringify({ kind: "mystery" }),
      // Not dates, though Date.parse reads them as 2 March 2025 and 1 January 2001 (and the
      // database then refused the whole batch).
      JSON.stringify({ ...memory(randomUUID(), "on 30 February"), created_at: "2025-02-30T00:00:00Z" }),
      JSON.stringify({ ...memory(randomUUID(), "at 1"), updated_at: "1" }),
    ];
    const report = await importIntoDst(lines, other.orgId);
    expect(report.bad.map((b) => b.line)).toEqual([3, 4, 5, 7, 8, 9]);
    expect(report.bad[1]!.error).toContain("id");
    expect(report.bad.slice(4).map((b) => b.error)).toEqual([
      "created_at: not an ISO 8601 date and time",
      "updated_at: not an ISO 8601 date and time",
    ]);
    expect(report.memories.imported).toBe(2);
    const { rows } = await dst.deps.db.query("SELECT text FROM memories WHERE org_id = $1 ORDER BY text", [
      other.orgId,
    ]);
    expect(rows.map((r) => r.text)).toEqual(["first good one", "second good one"]);

    // What PostgreSQL cannot store: in a memory's text (a NUL byte, a lone surrogate) it is cleaned
    // as the REST API cleans message content; in an identifier the line is a bad one. Either way
    // the batch's other lines land (one such line used to fail its whole batch).
    const unstorable = [
      file[0]!,
      JSON.stringify(memory("7d1c0000-0000-4000-8000-000000000005", "nul \u0000 byte, cut emoji \ud83d")),
      JSON.stringify({ ...memory("7d1c0000-0000-4000-8000-000000000006", "bad user"), user_id: "u\u0000" }),
      JSON.stringify(memory("7d1c0000-0000-4000-8000-000000000007", "third good one")),
    ];
    const cleaned = await importIntoDst(unstorable, other.orgId);
    expect(cleaned.bad.map((b) => [b.line, b.error])).toEqual([
      [3, "user_id: holds a NUL character or a lone surrogate, which cannot be stored"],
    ]);
    expect(cleaned.memories.imported).toBe(2);
    const landed = await dst.deps.db.query(
      "SELECT text FROM memories WHERE org_id = $1 AND text NOT LIKE '%good one' ORDER BY text",
      [other.orgId],
    );
    expect(landed.rows.map((r) => r.text)).toEqual(["nul  byte, cut emoji \uFFFD"]);

    // Lines the database refuses (a user id too long for its index, random so it does not
    // compress; a new id with the job_id and write_key of another memory) fail their batch, which
    // then goes in line by line: each is reported with its own number, and the others land.
    const keyed = JSON.parse(
      file.find((l) => l.includes('"kind":"memory"') && !l.includes('"job_id":null'))!,
    );
    const failing = [
      file[0]!,
      JSON.stringify(memory("7d1c0000-0000-4000-8000-000000000003", "written beside them")),
      JSON.stringify({
        ...memory("7d1c0000-0000-4000-8000-000000000004", "long user"),
        user_id: randomBytes(6000).toString("hex"),
      }),
      JSON.stringify({
        ...memory("7d1c0000-0000-4000-8000-000000000008", "same write key"),
        job_id: keyed.job_id,
        write_key: keyed.write_key,
      }),
    ];
    const failed = await importIntoDst(failing, other.orgId);
    expect(failed.bad.map((b) => [b.line, b.error])).toEqual([
      [3, expect.stringMatching(/^not written \(.+\)$/)],
      [4, expect.stringMatching(/^not written \(.*memories_write_key_idx.*\)$/)],
    ]);
    expect(failed.memories).toMatchObject({ imported: 1, existing: 0 });
    const after = await dst.deps.db.query("SELECT text FROM memories WHERE org_id = $1 ORDER BY text", [
      other.orgId,
    ]);
    expect(after.rows.map((r) => r.text)).toContain("written beside them");
    expect(after.rows).toHaveLength(5);
  });

  it("keeps whether identity-provider tokens may enter the organisation (linked, or created from a token)", async () => {
    const linked = await src.newOrg("linked");
    await linkOrg(src.deps.db, { orgId: linked.orgId, linked: true });
    await src.deps.db.query(
      "INSERT INTO organisations (id, name, origin) VALUES ('org_idp_export', 'org_idp_export', 'identity_provider')",
    );
    for (const [id, origin, isLinked] of [
      [linked.orgId, "operator", true],
      ["org_idp_export", "identity_provider", false],
    ] as const) {
      const lines = await exportLines(src.deps.db, src.deps.providers.embedder, id);
      const report = await importIntoDst(lines, id);
      expect(report.organisationCreated).toBe(true);
      const read = async (db: Db) =>
        (
          await db.query(
            "SELECT name, tier, origin, idp_linked_at IS NOT NULL AS linked FROM organisations WHERE id = $1",
            [id],
          )
        ).rows;
      expect(await read(src.deps.db)).toMatchObject([{ origin, linked: isLinked }]);
      expect(await read(dst.deps.db)).toEqual(await read(src.deps.db));
    }
  });

  it("reads the header after a byte-order mark or a blank first line", async () => {
    for (const [org, lines] of [
      ["org_bom", [`\uFEFF${file[0]}`]],
      ["org_blank", ["", file[0]!]],
    ] as const) {
      const report = await importIntoDst([...lines], org);
      // Taken as the header: no bad line, and the organisation made from it.
      expect([org, report.bad, report.organisationCreated]).toEqual([org, [], true]);
    }
  });

  it("refuses a file whose first line is not a version 1 header before writing anything, and leaves no organisation when nothing is written", async () => {
    const header = JSON.parse(file[0]!);
    for (const lines of [
      [JSON.stringify({ ...header, version: 2 }), ...file.slice(1)],
      [JSON.stringify({ ...header, format: "other" }), ...file.slice(1)],
      file.slice(1),
      ["{oops", ...file.slice(1)],
    ]) {
      await expect(importIntoDst(lines, "org_refused")).rejects.toThrow(
        /^line 1: not the header of a mnemo-export version 1 file \(.+\); nothing was imported$/,
      );
      expect(await getOrg(dst.deps.db, "org_refused")).toBeUndefined();
    }
    // A header, then only lines not imported: bad ones, and a memory whose id is another organisation's.
    for (const lines of [
      [file[0]!, "{oops", JSON.stringify({ kind: "memory" })],
      [file[0]!, file.find((l) => l.includes('"kind":"memory"'))!],
    ]) {
      const report = await importIntoDst(lines, "org_nothing");
      expect(report.bad.length).toBeGreaterThan(0);
      expect([report.organisationCreated, await getOrg(dst.deps.db, "org_nothing")]).toEqual([
        false,
        undefined,
      ]);
    }
  });

  it("does not take over ids that belong to another organisation", async () => {
    const other = await dst.newOrg("thief");
    const report = await importIntoDst(file, other.orgId);
    expect(report.memories.imported).toBe(0);
    expect(report.bad.length).toBeGreaterThan(0);
    expect(report.bad[0]!.error).toContain("belongs to another organisation");
  });

  it("recomputes embeddings when the file's embedder differs", async () => {
    const header = { ...JSON.parse(file[0]!), embedding: { dim: 1536, embedder: "text-embedding-3-small" } };
    const foreign = [
      JSON.stringify(header),
      ...file.slice(1).filter((l) => l.includes('"kind":"memory"')),
    ].map((l, i) =>
      i === 0 ? l : l.replace(/"embedding":\[[^\]]*\]/, `"embedding":[${Array(1536).fill(0.01).join(",")}]`),
    );
    const other = await dst.newOrg("reembed");
    // Fresh ids (and no write keys, which are unique), so that these rows are new here.
    const renamed = foreign.map((l, i) =>
      i === 0
        ? l
        : JSON.stringify({
            ...JSON.parse(l.replace(/"id":"[0-9a-f]{8}/, '"id":"abcdef01')),
            job_id: null,
            write_key: null,
          }),
    );
    const report = await importIntoDst(renamed, other.orgId);
    expect(report.bad).toEqual([]);
    expect(report.memories).toMatchObject({ imported: renamed.length - 1, reembedded: renamed.length - 1 });
    const { rows } = await dst.deps.db.query(
      "SELECT vector_dims(embedding) AS d FROM memories WHERE org_id = $1",
      [other.orgId],
    );
    expect(rows.every((r) => r.d === TEST_EMBEDDING_DIM)).toBe(true);
    // Again: every row is there, none is embedded (their 1536-number vectors are not sent either).
    const again = await importIntoDst(renamed, other.orgId);
    expect(again.bad).toEqual([]);
    expect(again.memories).toMatchObject({ imported: 0, existing: renamed.length - 1, reembedded: 0 });
  });

  it("imports a mem0 export, each item a fact, idempotently", async () => {
    const other = await dst.newOrg("mem0");
    const doc = JSON.stringify({
      results: [
        {
          id: "0b0c6f2e-3c39-4a8e-9b8e-111111111111",
          memory: "Likes hiking in the Alps",
          user_id: "carol",
          agent_id: "travel-bot",
          metadata: { source: "chat" },
          created_at: "2024-05-01T10:00:00-07:00",
        },
        { id: "m-2", memory: "Is vegetarian", user_id: "carol", created_at: "2024-05-02T10:00:00Z" },
        { memory: "" },
      ],
    });
    const lines = doc.split("\n");
    const report = await importIntoDst(lines, other.orgId, "mem0");
    expect(report.memories.imported).toBe(2);
    expect(report.bad.map((b) => b.line)).toEqual([3]);
    const { rows } = await dst.deps.db.query(
      "SELECT id, type, text, user_id, agent_id, status, details, created_at FROM memories WHERE org_id = $1 ORDER BY created_at",
      [other.orgId],
    );
    expect(rows.map((r) => [r.type, r.text, r.user_id, r.status])).toEqual([
      ["fact", "Likes hiking in the Alps", "carol", "active"],
      ["fact", "Is vegetarian", "carol", "active"],
    ]);
    expect(rows[0].id).toBe("0b0c6f2e-3c39-4a8e-9b8e-111111111111");
    expect(rows[0].agent_id).toBe("travel-bot");
    expect(rows[0].details).toMatchObject({ source: "mem0", metadata: { source: "chat" } });
    expect(rows[0].created_at.toISOString()).toBe("2024-05-01T17:00:00.000Z");
    // JSON lines work too, and a second import adds nothing.
    const jsonl = (JSON.parse(doc).results as object[]).slice(0, 2).map((r) => JSON.stringify(r));
    const again = await importIntoDst(jsonl, other.orgId, "mem0");
    // Rows already stored are sent to no model: nothing is embedded again.
    expect(again.memories).toMatchObject({ imported: 0, existing: 2, reembedded: 0 });
  });

  it("mem0: the same words without an id for two agents are two memories; dates are read, not invented", async () => {
    const other = await dst.newOrg("mem0-scopes");
    const lines = [
      { memory: "Prefers window seats", user_id: "alex", agent_id: "a1", run_id: "r1" },
      { memory: "Prefers window seats", user_id: "alex", agent_id: "a2", run_id: "r1" },
      { memory: "Drinks oat milk", user_id: "alex", created_at: "2024-07-20 04:49:03" },
      { memory: "Walks to work", user_id: "alex", created_at: "yesterday" },
      { memory: "Reads on Sundays", user_id: "alex", created_at: "2024-13-45T00:00:00Z" },
      // Date.parse reads these as 1 March 2024 and 1 January 2001.
      { memory: "Swims on Mondays", user_id: "alex", created_at: "2024-02-30T00:00:00" },
      { memory: "Bakes bread", user_id: "alex", created_at: "1" },
    ].map((l) => JSON.stringify(l));
    const deps = { db: dst.deps.db, embedder: dst.deps.providers.embedder };
    // An admin process in another time zone than UTC (Node reads TZ again when it is set).
    const tz = process.env.TZ;
    process.env.TZ = "America/Los_Angeles";
    const report = await importInto(deps, lines, other.orgId, "mem0").finally(() => {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    });
    expect(report.memories).toMatchObject({ imported: 3, existing: 0 });
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [4, expect.stringMatching(/created_at.*not a date/)],
      [5, expect.stringMatching(/created_at.*not a date/)],
      [6, expect.stringMatching(/created_at.*not a date/)],
      [7, expect.stringMatching(/created_at.*not a date/)],
    ]);
    const { rows } = await dst.deps.db.query(
      "SELECT text, agent_id, created_at FROM memories WHERE org_id = $1 ORDER BY text, agent_id",
      [other.orgId],
    );
    expect(rows.map((r) => [r.text, r.agent_id])).toEqual([
      ["Drinks oat milk", null],
      ["Prefers window seats", "a1"],
      ["Prefers window seats", "a2"],
    ]);
    // A date and time without a zone is UTC, whatever the admin process's time zone.
    expect(rows[0].created_at.toISOString()).toBe("2024-07-20T04:49:03.000Z");
    // Microseconds are kept, as in a mnemo-format file (they were cut to milliseconds), with a
    // zone or without; a blank user id is no user the API would take.
    const precise = [
      { memory: "Cycles to the market", user_id: "alex", created_at: "2024-07-20T04:49:03.123456-07:00" },
      { memory: "Grows basil", user_id: "alex", created_at: "2024-07-20 04:49:03.654321" },
      { memory: "Owns a kayak", user_id: "", created_at: "2024-07-20T04:49:03Z" },
      { memory: "Plays chess", user_id: "  " },
    ].map((l) => JSON.stringify(l));
    const more = await importInto(deps, precise, other.orgId, "mem0");
    expect(more.bad.map((b) => [b.line, b.error])).toEqual([
      [3, "user_id: must not be empty or blank"],
      [4, "user_id: must not be empty or blank"],
    ]);
    const stamps = await dst.deps.db.query(
      `SELECT text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS at,
              to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS up
       FROM memories WHERE org_id = $1 AND text IN ('Cycles to the market', 'Grows basil') ORDER BY text`,
      [other.orgId],
    );
    expect(stamps.rows).toEqual([
      { text: "Cycles to the market", at: "2024-07-20 11:49:03.123456", up: "2024-07-20 11:49:03.123456" },
      { text: "Grows basil", at: "2024-07-20 04:49:03.654321", up: "2024-07-20 04:49:03.654321" },
    ]);
    expect((await importInto(deps, lines, other.orgId, "mem0")).memories).toMatchObject({
      imported: 0,
      existing: 3,
    });
  });
});

describe("admin import keeps to the API's rules", () => {
  const newGroupLine = (fields: object = {}) =>
    JSON.stringify({
      ...JSON.parse(file.find((l) => l.includes('"kind":"group"'))!),
      id: `grp_${randomBytes(16).toString("hex")}`,
      name: "imported",
      prompt: null,
      status: "active",
      ...fields,
    });

  it("reports a group line the API would refuse (its id, name or prompt) and skips it", async () => {
    const target = await dst.newOrg("group-rules");
    const good = JSON.parse(newGroupLine({ name: "  padded  ", prompt: "Release notes" }));
    const lines = [
      file[0]!,
      JSON.stringify(good),
      newGroupLine({ id: "team" }),
      newGroupLine({ id: `GRP_${"A".repeat(32)}` }),
      newGroupLine({ name: "n".repeat(500) }),
      newGroupLine({ name: "   " }),
      newGroupLine({ prompt: "   " }),
      newGroupLine({ prompt: "p".repeat(5000) }),
    ];
    const report = await importIntoDst(lines, target.orgId);
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [3, expect.stringMatching(/^id: not a group id/)],
      [4, expect.stringMatching(/^id: not a group id/)],
      [5, "name: must be 1 to 120 characters (not blank)"],
      [6, "name: must be 1 to 120 characters (not blank)"],
      [7, "prompt: must be 1 to 2000 characters (not blank)"],
      [8, "prompt: must be 1 to 2000 characters (not blank)"],
    ]);
    expect(report.groups).toEqual({ imported: 1, existing: 0 });
    // Every group the list shows answers GET; the name is trimmed as POST /v1/groups trims it.
    const list = await dst.request("GET", "/v1/groups?include_archived=true", { key: target.key });
    expect(list.body.data.map((g: { id: string; name: string }) => [g.id, g.name])).toEqual([
      [good.id, "padded"],
    ]);
    expect((await dst.request("GET", `/v1/groups/${good.id}`, { key: target.key })).status).toBe(200);
  });

  it("reports the active groups past MAX_GROUPS_PER_ORG and skips them; archived ones still go in", async () => {
    const target = await dst.newOrg("group-quota");
    const max = dst.deps.config.MAX_GROUPS_PER_ORG;
    const made = await dst.request("POST", "/v1/groups", { key: target.key, body: { name: "made here" } });
    expect(made.status).toBe(201);
    const active = Array.from({ length: max + 1 }, (_, i) => newGroupLine({ name: `g${i}` }));
    const archived = [newGroupLine({ name: "old", status: "archived" })];
    const lines = [file[0]!, ...active, ...archived];
    const report = await importIntoDst(lines, target.orgId);
    // One active group was there: room for max - 1 of the file's, the last two are refused.
    expect(report.bad.map((b) => [b.line, b.error])).toEqual(
      [max + 1, max + 2].map((line) => [
        line,
        `group ${JSON.parse(lines[line - 1]!).id}: the organisation would have more than ${max} active groups (MAX_GROUPS_PER_ORG); not imported`,
      ]),
    );
    expect(report.groups).toEqual({ imported: max, existing: 0 });
    const { rows } = await dst.deps.db.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM groups WHERE org_id = $1 GROUP BY status ORDER BY status",
      [target.orgId],
    );
    expect(rows).toEqual([
      { status: "active", n: max },
      { status: "archived", n: 1 },
    ]);
    const more = await dst.request("POST", "/v1/groups", { key: target.key, body: { name: "one more" } });
    expect([more.status, more.body.detail?.code]).toEqual([422, "groups_quota_exceeded"]);
    // Again: nothing new, and the same two refused.
    const again = await importIntoDst(lines, target.orgId);
    expect(again.groups).toEqual({ imported: 0, existing: max });
    expect(again.bad.map((b) => b.line)).toEqual([max + 1, max + 2]);
  });
});

describe("admin import keeps a memory's fields and its webhook to the API's rules", () => {
  /** A memory line of `type` with these details (and other fields), each a new memory. */
  const memoryLine = (type: string, details: object, fields: object = {}) =>
    JSON.stringify({ ...JSON.parse(freshMemoryLine(`A ${type} line`)), type, details, ...fields });

  it("reports a memory whose details break its type's wire schema, or whose user_id is blank, and skips it", async () => {
    const target = await dst.newOrg("details-rules");
    const cases: Array<[string, RegExp | null]> = [
      [memoryLine("fact", { fact_type: 5 }), /^details\.fact_type: /],
      [memoryLine("fact", { fact_type: "gossip" }), /^details\.fact_type: /],
      [memoryLine("fact", { artifact_ids: "notarray" }), /^details\.artifact_ids: /],
      [memoryLine("fact", { source_event_ids: [1, 2] }), /^details\.source_event_ids\.0: /],
      [memoryLine("fact", { episode_id: 7 }), /^details\.episode_id: /],
      [memoryLine("episode", { fact_ids: "x" }), /^details\.fact_ids: /],
      [memoryLine("episode", { title: 3 }), /^details\.title: /],
      [memoryLine("episode", { started_at: { a: 1 } }), /^details\.started_at: /],
      [memoryLine("artifact", { version: "abc" }), /^details\.version: /],
      [memoryLine("artifact", { root_id: 5 }), /^details\.root_id: /],
      [memoryLine("artifact", { episode_ids: null }), /^details\.episode_ids: /],
      [memoryLine("lesson", { steps: "x" }), /^details\.steps: /],
      [memoryLine("procedure", { observation_count: "many" }), /^details\.observation_count: /],
      [memoryLine("fact", {}, { details: "none" }), /^details: /],
      [memoryLine("fact", {}, { user_id: "" }), /^user_id: must not be empty or blank/],
      [memoryLine("fact", {}, { user_id: "   " }), /^user_id: must not be empty or blank/],
      // What the API writes and serves passes, other fields too (a mem0 import's `source`).
      [memoryLine("fact", { fact_type: "preference", artifact_ids: [], source: "notes" }), null],
      [memoryLine("fact", { fact_type: null, status: "active", supersedes: null }), null],
      [
        memoryLine("artifact", { title: "utils.py", version: 2, root_id: randomUUID(), episode_ids: [] }),
        null,
      ],
      [
        memoryLine("episode", {
          title: "Trip",
          started_at: "8 May, 2023",
          fact_ids: [],
          gist: { goal: null },
        }),
        null,
      ],
      [
        memoryLine("procedure", { steps: ["Pull", "Build"], observation_count: 3, last_confirmed_at: null }),
        null,
      ],
      [memoryLine("lesson", {}, { user_id: null }), null],
    ];
    const lines = [file[0]!, ...cases.map(([line]) => line)];
    const report = await importIntoDst(lines, target.orgId);
    const expected = cases.flatMap(([, error], i) => (error ? [[i + 2, expect.stringMatching(error)]] : []));
    expect(report.bad.map((b) => [b.line, b.error])).toEqual(expected);
    const good = cases.filter(([, error]) => !error).map(([line]) => JSON.parse(line).id as string);
    expect(report.memories.imported).toBe(good.length);
    // The API serves each as its schema says (test/openapi.test.ts checks responses against it).
    for (const id of good) {
      const r = await dst.request("GET", `/v1/memories/${id}`, { key: target.key });
      expect([id, r.status]).toEqual([id, 200]);
    }
    const { rows } = await dst.deps.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memories WHERE org_id = $1",
      [target.orgId],
    );
    expect(rows[0]!.n).toBe(good.length);
  });

  it("says a required field left out is required; a field a memory may have none of can be left out", async () => {
    const target = await dst.newOrg("missing-fields");
    const full = JSON.parse(memoryLine("fact", {}));
    const without = (...keys: string[]) => {
      const line = { ...full, id: randomUUID() };
      for (const k of keys) delete line[k];
      return JSON.stringify(line);
    };
    const lines = [
      file[0]!,
      without("text"),
      without("user_id"),
      without("created_at", "type"),
      without("kind"),
      JSON.stringify({ ...JSON.parse(without()), outcome: "lost" }),
      // A field every option of the line's union checks: said once.
      without("details"),
      // Each field an export writes as null or [] when the memory has none, left out.
      without(
        "agent_id",
        "conv_id",
        "app_id",
        "group_ids",
        "categories",
        "metadata",
        "status",
        "supersedes",
        "namespace",
        "trigger_entities",
        "outcome",
        "full_content",
        "content_hash",
        "job_id",
        "write_key",
        "embedding",
        "context",
        "concepts",
      ),
    ];
    const report = await importIntoDst(lines, target.orgId);
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [2, "text: required"],
      [3, "user_id: required"],
      [4, "type: required; created_at: required"],
      [5, "kind: required"],
      // A value given and wrong still says what is allowed.
      [6, 'outcome: Invalid option: expected one of "resolved"|"failed"'],
      [7, "details: required"],
    ]);
    expect(report.memories).toMatchObject({ imported: 1, reembedded: 1 });
    const { rows } = await dst.deps.db.query(
      `SELECT text, user_id, agent_id, group_ids, categories, status, outcome, trigger_entities, namespace,
              job_id, embedding IS NOT NULL AS embedded
       FROM memories WHERE org_id = $1`,
      [target.orgId],
    );
    expect(rows).toEqual([
      {
        text: full.text,
        user_id: full.user_id,
        agent_id: null,
        group_ids: [],
        categories: [],
        // A fact without a status is read as active (as one whose status is null).
        status: "active",
        outcome: null,
        trigger_entities: [],
        namespace: null,
        job_id: null,
        embedded: true,
      },
    ]);
    // A header's missing field reads the same way, and nothing is imported.
    const { version: _, ...header } = JSON.parse(file[0]!);
    await expect(importIntoDst([JSON.stringify(header), without()], target.orgId)).rejects.toThrow(
      /\(version: required\); nothing was imported$/,
    );
  });

  it("reports a webhook line PUT /v1/webhooks would refuse (its URL, its events) and skips it", async () => {
    const hook = (fields: object) =>
      JSON.stringify({
        ...JSON.parse(file.find((l) => l.includes('"kind":"webhook"'))!),
        events: ["memory.learning.completed"],
        ...fields,
      });
    const target = await dst.newOrg("webhook-rules");
    const lines = [
      file[0]!,
      hook({ url: "ftp://user:pw@example.com/x", events: ["bogus.event"] }),
      hook({ url: "ftp://example.com/x" }),
      hook({ url: "https://user:secretpw2@93.184.215.14/hook" }),
      hook({ url: "http://93.184.215.14/hook" }),
      hook({ url: "https://127.0.0.1/hook" }),
      hook({ url: "https://169.254.169.254/latest" }),
      hook({ url: "https://93.184.215.14/hook", events: [] }),
      // PUT's rules: null is every event, a repeated one is kept once, the URL trimmed.
      hook({ url: " https://93.184.215.14/hook ", events: null }),
    ];
    const report = await importInto(
      { db: dst.deps.db, embedder: dst.deps.providers.embedder },
      lines,
      target.orgId,
      "mnemo",
      false,
    );
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [2, expect.stringMatching(/^events\.0: /)],
      [3, "webhook: url must use https."],
      [4, "webhook: url must not carry credentials."],
      [5, "webhook: url must use https."],
      [6, "webhook: url must point to a public address."],
      [7, "webhook: url must point to a public address."],
      [8, "webhook: events must not be empty; omit it or send null for all events."],
    ]);
    expect(report.webhook).toBe("created");
    const got = await dst.request("GET", "/v1/webhooks", { key: target.key });
    expect(got.body).toMatchObject({
      url: "https://93.184.215.14/hook",
      events: ["memory.learning.completed", "memory.learning.failed"],
    });

    // Where private addresses are allowed (MNEMO_WEBHOOK_ALLOW_PRIVATE), credentials still are not:
    // they were stored, delivered to, and shown by GET /v1/webhooks and its deliveries.
    const local = await dst.newOrg("webhook-private");
    const secret = await importInto(
      { db: dst.deps.db, embedder: dst.deps.providers.embedder },
      [file[0]!, hook({ url: "http://user:secretpw2@127.0.0.1:18349/hook" })],
      local.orgId,
    );
    expect(secret.bad.map((b) => [b.line, b.error])).toEqual([
      [2, "webhook: url must not carry credentials."],
    ]);
    expect(secret.webhook).toBe("none");
    expect((await dst.request("GET", "/v1/webhooks", { key: local.key })).status).toBe(404);
  });
});

describe("admin import keeps a memory's group tags to the API's rules", () => {
  it("reports tags that are no group ids and more tags than MAX_GROUP_IDS_PER_INGEST; drops a repeated one", async () => {
    const target = await dst.newOrg("tag-rules");
    const cap = dst.deps.config.MAX_GROUP_IDS_PER_INGEST;
    const groupLines = Array.from({ length: cap + 14 }, (_, i) =>
      JSON.stringify({
        ...JSON.parse(file.find((l) => l.includes('"kind":"group"'))!),
        id: `grp_${randomBytes(16).toString("hex")}`,
        name: `g${i}`,
        status: "active",
      }),
    );
    const ids = groupLines.map((l) => JSON.parse(l).id as string);
    const tagged = (text: string, group_ids: string[]) => ({
      ...JSON.parse(freshMemoryLine(text)),
      group_ids,
    });
    const full = tagged("Tagged up to the cap", ids.slice(0, cap));
    const twice = tagged("Tagged twice with one group", [ids[0]!, ids[0]!, ids[1]!]);
    const lines = [
      file[0]!,
      ...groupLines,
      JSON.stringify(tagged("Tagged past the cap", ids)),
      JSON.stringify(full),
      JSON.stringify(tagged("A blank tag", ["", ids[0]!])),
      JSON.stringify(tagged("A tag with spaces", [` ${ids[0]} `])),
      JSON.stringify(twice),
    ];
    const report = await importIntoDst(lines, target.orgId);
    const at = groupLines.length + 2;
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [
        at,
        `group_ids: a memory carries at most ${cap} group ids (MAX_GROUP_IDS_PER_INGEST), not ${ids.length}`,
      ],
      [at + 2, expect.stringMatching(/^group_ids\.0: not a group id/)],
      [at + 3, expect.stringMatching(/^group_ids\.0: not a group id/)],
    ]);
    expect(report.memories.imported).toBe(2);
    const get = (id: string) => dst.request("GET", `/v1/memories/${id}`, { key: target.key });
    expect((await get(twice.id)).body.group_ids).toEqual([ids[0], ids[1]]);
    // The owner can take tags off one at a time.
    const removed = await dst.request("PATCH", `/v1/memories/${full.id}`, {
      key: target.key,
      body: { remove_group_ids: [ids[0]] },
    });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.group_ids).toEqual(ids.slice(1, cap));
  });
});

describe("admin import of tags naming no group", () => {
  it("drops a tag naming no group of the file or the organisation (another organisation's, or none) and reports it", async () => {
    const target = await dst.newOrg("dangling-tags");
    const here = await dst.request("POST", "/v1/groups", { key: target.key, body: { name: "here" } });
    const foreignOrg = await dst.newOrg("dangling-tags-other");
    const foreign = await dst.request("POST", "/v1/groups", {
      key: foreignOrg.key,
      body: { name: "theirs" },
    });
    expect([here.status, foreign.status]).toEqual([201, 201]);
    const inFile = {
      ...JSON.parse(file.find((l) => l.includes('"kind":"group"'))!),
      id: `grp_${randomBytes(16).toString("hex")}`,
      name: "in the file",
    };
    const none = `grp_${randomBytes(16).toString("hex")}`;
    const tagged = (text: string, group_ids: string[]) => ({
      ...JSON.parse(freshMemoryLine(text)),
      group_ids,
    });
    const mixed = tagged("Tagged with four groups", [here.body.id, foreign.body.id, inFile.id, none]);
    const lone = tagged("Tagged with a group that is nowhere", [none]);
    const clean = tagged("Tagged with groups that exist", [inFile.id, here.body.id]);
    // The file's group after the memories it tags, as a paged export can write it.
    const lines = [file[0]!, ...[mixed, lone, clean].map((m) => JSON.stringify(m)), JSON.stringify(inFile)];
    const report = await importIntoDst(lines, target.orgId);
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [
        2,
        `group_ids: ${foreign.body.id}, ${none} name no group of the file or the organisation; the memory was imported without them`,
      ],
      [
        3,
        `group_ids: ${none} names no group of the file or the organisation; the memory was imported without it`,
      ],
    ]);
    expect(report.memories.imported).toBe(3);
    const tags = async (id: string) =>
      (await dst.request("GET", `/v1/memories/${id}`, { key: target.key })).body.group_ids;
    expect(await tags(mixed.id)).toEqual([here.body.id, inFile.id]);
    expect(await tags(lone.id)).toEqual([]);
    expect(await tags(clean.id)).toEqual([inFile.id, here.body.id]);
    // Again: nothing new, nothing to report.
    const again = await importIntoDst(lines, target.orgId);
    expect([again.bad, again.memories.imported]).toEqual([[], 0]);
  });
});

describe("admin import of supersedes links", () => {
  it("does not follow a link to another user's fact (it stays active) and reports it; one user's link is followed", async () => {
    const target = await dst.newOrg("cross-user-supersedes");
    const fact = (user: string, text: string, supersedes: string | null = null) => ({
      ...JSON.parse(freshMemoryLine(text)),
      user_id: user,
      supersedes,
    });
    const alices = fact("alice", "Alice's bank is in Lisbon");
    const first = await importIntoDst([file[0]!, JSON.stringify(alices)], target.orgId);
    expect(first.bad).toEqual([]);
    const carols = fact("carol", "Carol's door code is 1234");
    const mallorys = fact("mallory", "Mallory's first note");
    const erins = fact("erin", "Erin walks to work");
    const lines = [
      file[0]!,
      // Another user's fact already there, and one later in the file.
      JSON.stringify(fact("mallory", "Alice's bank is in Oslo", alices.id)),
      JSON.stringify(fact("mallory", "Carol's door code is 0000", carols.id)),
      JSON.stringify(carols),
      // The user's own fact: followed.
      JSON.stringify(mallorys),
      JSON.stringify(fact("mallory", "Mallory's second note", mallorys.id)),
      // A link to a fact not there yet (imported below, from another file).
      JSON.stringify(fact("dave", "Erin drives to work", erins.id)),
    ];
    const report = await importIntoDst(lines, target.orgId);
    const why = "not followed (a fact supersedes only its own user's facts)";
    expect(report.bad.map((b) => [b.line, b.error])).toEqual([
      [2, `supersedes: ${alices.id} is another user's fact: ${why}`],
      [3, `supersedes: ${carols.id} is another user's fact: ${why}`],
    ]);
    expect(report.memories.superseded).toBe(1);
    const later = await importIntoDst([file[0]!, JSON.stringify(erins)], target.orgId);
    expect(later.bad).toEqual([
      {
        line: 2,
        error: `fact ${JSON.parse(lines[6]!).id}, another user's, names this fact in supersedes: ${why}`,
      },
    ]);
    expect(later.memories.superseded).toBe(0);
    const { rows } = await dst.deps.db.query("SELECT id, status FROM memories WHERE org_id = $1", [
      target.orgId,
    ]);
    const status = Object.fromEntries(rows.map((r) => [r.id, r.status]));
    expect([status[alices.id], status[carols.id], status[erins.id], status[mallorys.id]]).toEqual([
      "active",
      "active",
      "active",
      "superseded",
    ]);
    // Alice's fact is still found.
    const found = await dst.request("POST", "/v1/memories/search", {
      key: target.key,
      body: { query: "Alice bank Lisbon", user_id: "alice", mode: "retrieve", include: ["fact"] },
    });
    expect(found.body.data.map((m: { id: string }) => m.id)).toContain(alices.id);
    // Again: a no-op.
    const again = await importIntoDst(lines, target.orgId);
    expect([again.bad, again.memories.imported, again.memories.superseded]).toEqual([[], 0, 0]);
  });
});

describe("admin import of many rows", () => {
  it("weighs again for full text only the rows written while the organisation held few documents", async () => {
    const target = await dst.newOrg("reweigh");
    const words = ["orchard", "river", "lantern", "harbour", "meadow", "violin", "glacier"];
    const rows = Array.from({ length: 400 }, (_, i) =>
      freshMemoryLine(`Note ${i}: ${words.slice(0, 1 + (i % words.length)).join(" ")}.`),
    );
    // Transactions of 200 (PostgreSQL), or of 50 (the embedded database, with a budget no
    // transaction reaches): the first is written while the organisation holds fewer than 50 documents.
    const report = await importOrg(
      {
        db: dst.deps.db,
        embedder: dst.deps.providers.embedder,
        secret: Buffer.alloc(32, 7),
        config: { ...dst.deps.config, MNEMO_TEST_TX_MS: 600_000 },
      },
      { orgId: target.orgId, format: "mnemo", reweighBelow: 50 },
      iterate([file[0]!, ...rows]),
    );
    expect(report.bad).toEqual([]);
    expect(report.memories.imported).toBe(400);
    const { rows: stats } = await dst.deps.db.query<{ txs: number; exact: number; worst: number }>(
      `WITH s AS (SELECT sum(total_len)::float8 / sum(docs) AS avgdl FROM text_doc_stats WHERE org_id = $1)
       SELECT count(DISTINCT m.xmin::text)::int AS txs,
              count(*) FILTER (WHERE m.bm25 = mnemo_bm25_doc(m.tsv, s.avgdl))::int AS exact,
              max(abs(l2_norm(m.bm25) - l2_norm(mnemo_bm25_doc(m.tsv, s.avgdl))) / l2_norm(mnemo_bm25_doc(m.tsv, s.avgdl)))
                AS worst
       FROM memories m, s WHERE m.org_id = $1`,
      [target.orgId],
    );
    // The first transaction's rows written again (one transaction), the others written once (each
    // in its own).
    const embedded = dst.deps.db.oneSession;
    expect(stats[0]!.txs).toBe(embedded ? 8 : 2);
    expect(stats[0]!.exact).toBeGreaterThanOrEqual(embedded ? 50 : 200);
    // The rest weighed against an average close to the final one.
    expect(stats[0]!.worst).toBeLessThan(0.02);
  });
});

describe("admin import transactions", () => {
  const importTimed = (org: string, lines: string[]) =>
    importOrg(
      {
        db: dst.deps.db,
        embedder: dst.deps.providers.embedder,
        secret: Buffer.alloc(32, 7),
        // A budget of 0 ms: on the embedded database each transaction after the first has the
        // fewest rows (15), as when every transaction takes far longer than its 100 ms.
        config: { ...dst.deps.config, MNEMO_TEST_TX_MS: 0 },
      },
      // No row weighed again for full text: each keeps the transaction that wrote it.
      { orgId: org, format: "mnemo", reweighBelow: 0 },
      iterate(lines),
    );
  /** Transactions that wrote the organisation's memories (rows of one transaction share an xmin). */
  const transactions = async (org: string) =>
    (
      await dst.deps.db.query<{ n: number }>(
        "SELECT count(DISTINCT xmin::text)::int AS n FROM memories WHERE org_id = $1",
        [org],
      )
    ).rows[0]!.n;

  it("on the embedded database sizes them by time (the one session runs requests between them); 200 lines each on PostgreSQL", async () => {
    const target = await dst.newOrg("timed");
    const rows = Array.from({ length: 110 }, (_, i) => freshMemoryLine(`Timed note ${i} about the harbour.`));
    const report = await importTimed(target.orgId, [file[0]!, ...rows]);
    expect(report.bad).toEqual([]);
    expect(report.memories).toMatchObject({ imported: 110, reembedded: 0 });
    // Embedded: 50 first (as an ingest job's store), then 15 at a time: 50 + 4 x 15.
    expect(await transactions(target.orgId)).toBe(dst.deps.db.oneSession ? 5 : 1);
  });

  it("an import stopped midway keeps what it committed; run again, it writes the rest", async () => {
    const target = await dst.newOrg("resumed");
    const rows = Array.from({ length: 80 }, (_, i) => freshMemoryLine(`Resumed note ${i}.`));
    // What a first run had committed when it stopped: its first 65 lines.
    const first = await importTimed(target.orgId, [file[0]!, ...rows.slice(0, 65)]);
    expect(first.memories).toMatchObject({ imported: 65, existing: 0 });
    const again = await importTimed(target.orgId, [file[0]!, ...rows]);
    expect(again.bad).toEqual([]);
    expect(again.memories).toMatchObject({ imported: 15, existing: 65 });
    expect(await transactions(target.orgId)).toBe(dst.deps.db.oneSession ? 3 : 2);
  });
});

describe("admin reindex-text", () => {
  it("derives every memory's full-text columns again, page by page, as after replacing mnemo_memory_tsv", async () => {
    const target = await dst.newOrg("reindex");
    const rows = Array.from({ length: 250 }, (_, i) =>
      freshMemoryLine(`Reindexed note ${i} about the lighthouse.`),
    );
    const imported = await importIntoDst([file[0]!, ...rows], target.orgId);
    expect(imported.memories.imported).toBe(250);
    // Columns left by an older text function: what replacing mnemo_memory_tsv leaves behind.
    await dst.deps.db.tx(async (tx) => {
      await tx.query("ALTER TABLE memories DISABLE TRIGGER memories_text");
      await tx.query(
        "UPDATE memories SET tsv = to_tsvector('simple', 'stale'), bm25 = NULL WHERE org_id = $1",
        [target.orgId],
      );
      await tx.query("ALTER TABLE memories ENABLE TRIGGER memories_text");
    });
    const stale = async () =>
      (
        await dst.deps.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM memories
           WHERE org_id = $1 AND (tsv IS DISTINCT FROM mnemo_memory_tsv(text, details, context, concepts) OR bm25 IS NULL)`,
          [target.orgId],
        )
      ).rows[0]!.n;
    expect(await stale()).toBe(250);
    const seen: number[] = [];
    expect(await reindexOrgText(dst.deps.db, target.orgId, (n) => seen.push(n), 100)).toEqual({
      memories: 250,
    });
    expect(seen).toEqual([100, 100, 50]);
    expect(await stale()).toBe(0);
    const found = await dst.request("POST", "/v1/memories/search", {
      key: target.key,
      body: {
        query: "lighthouse note",
        user_id: JSON.parse(rows[0]!).user_id,
        mode: "retrieve",
        include: ["fact"],
      },
    });
    expect(found.body.data.length).toBeGreaterThan(0);
  });
});

describe("admin import (native PostgreSQL)", () => {
  it("round-trips onto native PostgreSQL and back out identically", async () => {
    const native = await createNativeDatabase("roundtrip");
    const db = createDb(native.url, 4);
    try {
      await migrate(db, { embeddingDim: TEST_EMBEDDING_DIM });
      const embedder = src.deps.providers.embedder;
      const report = await importInto({ db, embedder }, file);
      expect(report.bad).toEqual([]);
      expect(await exportLines(db, embedder, orgId)).toEqual(file);
      const second = await importInto({ db, embedder }, file);
      expect(second.memories.imported).toBe(0);
      expect(await exportLines(db, embedder, orgId)).toEqual(file);
    } finally {
      await db.close();
      await native.drop();
    }
  });
});

describe("admin export and import commands", () => {
  it("import from stdin and export to stdout through the real entry point give back the same file", async () => {
    const dir = migratedDataDir("mn-cli-");
    // In the PostgreSQL pass the commands run on a copy of the template there (without one, on the
    // embedded database in an empty directory: PGlite's initdb and every migration first).
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    const env = {
      MNEMO_DATA_DIR: dir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
      MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
      // As the exporting service: the file's webhook is on a loopback address.
      MNEMO_WEBHOOK_ALLOW_PRIVATE: "true",
    };
    try {
      // A file of another version: one line on stderr, and nothing written.
      const v2 = [JSON.stringify({ ...JSON.parse(file[0]!), version: 2 }), ...file.slice(1)].join("\n");
      const refused = await runMnemo(["admin", "import", "--org", orgId], env, { stdin: `${v2}\n` });
      expect([
        refused.code,
        refused.stderr.split("\n").filter((l) => l && !/^import: lines/.test(l)),
      ]).toEqual([
        1,
        [
          "mnemo: invalid_request: line 1: not the header of a mnemo-export version 1 file (version: Invalid input: expected 1); nothing was imported",
        ],
      ]);
      const bad = [...file.slice(0, 2), "{oops", ...file.slice(2)].join("\n");
      const imported = await runMnemo(["admin", "import", "--org", orgId, "--json"], env, {
        stdin: `${bad}\n`,
      });
      expect(imported.stderr).toContain("line 3: not valid JSON");
      expect(imported.stderr).toMatch(/import: lines: \d+/);
      expect(imported.code).toBe(1); // a line was refused
      const summary = JSON.parse(imported.stdout.trim().split("\n").at(-1)!);
      expect(summary.organisationCreated).toBe(true);
      expect(summary.memories.imported).toBe(file.filter((l) => l.includes('"kind":"memory"')).length);
      // What it does after the last line is said, not done in silence.
      expect(imported.stderr).toMatch(
        /import: every line read; checking group tags, marking superseded facts, weighing \d+ rows again/,
      );
      // Deriving the full-text columns again changes nothing the export shows.
      const reindexed = await runMnemo(["admin", "reindex-text", "--org", orgId, "--json"], env);
      expect(reindexed.code).toBe(0);
      expect(JSON.parse(reindexed.stdout)).toEqual({ memories: summary.memories.imported });
      const unknown = await runMnemo(["admin", "reindex-text", "--org", "org_nobody"], env);
      expect([unknown.code, unknown.stderr.trim()]).toEqual([
        1,
        expect.stringContaining("org_nobody does not exist"),
      ]);
      const exported = await runMnemo(["admin", "export", "--org", orgId], env);
      expect(exported.code).toBe(0);
      expect(exported.stdout.trimEnd().split("\n")).toEqual(file);
      // A webhook line PUT /v1/webhooks would refuse is reported and skipped (it was stored and
      // delivered to, its password shown by GET /v1/webhooks).
      const hook = JSON.parse(file.find((l) => l.includes('"kind":"webhook"'))!);
      const withPassword = JSON.stringify({ ...hook, url: "http://user:secretpw2@127.0.0.1:18349/hook" });
      const refusedHook = await runMnemo(["admin", "import", "--org", "org_hooks", "--json"], env, {
        stdin: `${file[0]}\n${withPassword}\n`,
      });
      expect([refusedHook.code, JSON.parse(refusedHook.stdout).webhook]).toEqual([1, "none"]);
      expect(refusedHook.stderr).toContain("line 2: webhook: url must not carry credentials.\n");
      // A reader that stops after the first line (`| head -1`): one line on stderr, exit 1. More
      // memories first, so the export is more than a pipe holds and cannot be written whole first.
      const one = JSON.parse(file.find((l) => l.includes('"kind":"memory"'))!);
      const more = Array.from({ length: 300 }, (_, i) =>
        JSON.stringify({
          ...one,
          id: randomUUID(),
          text: `Filler memory ${i}.`,
          supersedes: null,
          job_id: null,
          write_key: null,
        }),
      );
      const filled = await runMnemo(["admin", "import", "--org", orgId, "--json"], env, {
        stdin: `${[file[0], ...more].join("\n")}\n`,
      });
      expect(filled.code).toBe(0);
      expect(JSON.parse(filled.stdout.trim().split("\n").at(-1)!).memories.imported).toBe(more.length);
      const cut = spawn(process.execPath, [MAIN, "admin", "export", "--org", orgId], {
        cwd: ROOT,
        env: childEnv(env),
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      cut.stderr.on("data", (d) => {
        err += d;
      });
      cut.stdout.once("data", () => cut.stdout.destroy());
      const code = await new Promise((r) => cut.once("close", r));
      expect([
        code,
        err
          .trim()
          .split("\n")
          .filter((l) => !/export: memories/.test(l)),
      ]).toEqual([
        1,
        ["mnemo: admin export: the output was closed before the end; the export is incomplete"],
      ]);
    } finally {
      await serverDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000); // seven runs of the CLI, each opening the database
});

describe("admin progress on stderr that is not a terminal (a log, a pipe)", () => {
  it("writes a line while it runs, not only at the end", async () => {
    const written: string[] = [];
    const write = process.stderr.write;
    const tty = Object.getOwnPropertyDescriptor(process.stderr, "isTTY");
    Object.defineProperty(process.stderr, "isTTY", { value: false, configurable: true });
    process.stderr.write = ((chunk: string) => {
      written.push(chunk);
      return true;
    }) as typeof process.stderr.write;
    try {
      const bar = progress("import: lines", undefined, { everyMs: 20 });
      bar.add(5);
      expect(written).toEqual([]); // not yet: at most one line per interval
      await new Promise((r) => setTimeout(r, 30));
      bar.add(2);
      bar.done("(done)");
    } finally {
      process.stderr.write = write;
      if (tty) Object.defineProperty(process.stderr, "isTTY", tty);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
    expect(written).toEqual(["import: lines: 7\n", "import: lines: 7 (done)\n"]);
  });
});
