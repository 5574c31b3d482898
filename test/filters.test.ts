import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filterSql, METADATA_IN_PROBES } from "../src/db/filter-sql.js";
import { listMemoryRows } from "../src/db/memories.js";
import { MEMORY_TYPES, type MemoryRow } from "../src/db/memory-row.js";
import { isCoreError } from "../src/errors.js";
import { FILTER_MAX_DEPTH, parseFilters, pinsScope } from "../src/memories/filters.js";
import type { MemoryInput } from "../src/memories/write.js";
import { evalFilter } from "./helpers/filter-eval.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { seed } from "./memories-fixtures.js";

/**
 * The filter language: its SQL (src/db/filter-sql.ts) against an in-memory evaluator of the same
 * tree over random rows and random filters, and its 422s naming the path in the filter.
 */
let svc: TestService;
let orgId: string;
let rows: MemoryRow[];

const T0 = Date.parse("2025-01-01T00:00:00.000Z");
const DAY = 86_400_000;
const word = fc.constantFrom("a", "b", "ab", "ba", "B", "");
const metaValue = fc.oneof(
  word,
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant([1]),
  fc.constant({ x: 1 }),
);
const metadata = fc.dictionary(fc.constantFrom("k1", "k2", "k3"), metaValue, { maxKeys: 3 });
const rowArb = fc.record({
  type: fc.constantFrom("fact", "artifact", "episode", "lesson"),
  user_id: fc.constantFrom("u1", "u2", null),
  agent_id: fc.constantFrom("a1", null),
  conv_id: fc.constantFrom("c1", "c2", null),
  app_id: fc.constantFrom("p1", null),
  categories: fc.subarray(["x", "y", "z"]),
  group_ids: fc.subarray(["g1", "g2"]),
  day: fc.integer({ min: 0, max: 20 }),
  metadata,
});

beforeAll(async () => {
  svc = await startTestService({ workers: false });
  orgId = (await svc.newOrg("filters")).orgId;
  const samples = fc.sample(rowArb, { numRuns: 80, seed: 1414 });
  const inputs: MemoryInput[] = samples.map((s, i) => ({
    type: s.type as MemoryInput["type"],
    text: `row ${i}`,
    user_id: s.user_id,
    agent_id: s.agent_id,
    conv_id: s.conv_id,
    app_id: s.app_id,
    categories: s.categories,
    group_ids: s.group_ids,
    metadata: s.metadata,
    status: s.type === "fact" ? (i % 3 === 0 ? "superseded" : "active") : null,
    created_at: new Date(T0 + s.day * DAY + i),
    embedding: null,
  }));
  rows = await seed(svc, orgId, inputs);
  expect(rows).toHaveLength(80);
  // PostgreSQL keeps microseconds where the API shows milliseconds (…43.735702 is shown …43.735Z):
  // store the rows' times 0.7 ms into the millisecond each is shown as.
  await svc.deps.db.query(
    "UPDATE memories SET created_at = created_at + interval '700 microseconds', updated_at = updated_at + interval '700 microseconds' WHERE org_id = $1",
    [orgId],
  );
});
afterAll(async () => {
  await svc?.stop();
});

const iso = fc.integer({ min: -1, max: 22 }).map((d) => new Date(T0 + d * DAY).toISOString());
const textField = fc.constantFrom("user_id", "agent_id", "conv_id", "app_id", "type", "status");
const textValue = fc.constantFrom("u1", "u2", "a1", "c1", "c2", "p1", "fact", "episode", "active", "zz");
const metaKey = fc.constantFrom("metadata.k1", "metadata.k2", "k3", "metadata.k4");
const metaScalar = fc.oneof(word, fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.constant(null));
const ordered = <T>(a: fc.Arbitrary<T>) => a;
// type and status take only their own values in equalities and lists (another is a 422)
const enumValue = {
  type: fc.constantFrom("fact", "episode", "lesson"),
  status: fc.constantFrom("active", "superseded"),
};
const textLeaf = <T>(make: (f: string, v: fc.Arbitrary<string>, nullable: boolean) => fc.Arbitrary<T>) =>
  textField.chain((f) =>
    f === "type" || f === "status" ? make(f, enumValue[f], false) : make(f, textValue, true),
  );
const leaf: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  textLeaf((f, value, nullable) =>
    (nullable ? fc.oneof(value, fc.constant(null)) : value).map((v) => ({ [f]: v })),
  ),
  fc
    .record({
      f: textField,
      op: fc.constantFrom("$gt", "$gte", "$lt", "$lte"),
      v: textValue,
    })
    .map(({ f, op, v }) => ({ [f]: { [op]: v } })),
  textLeaf((f, value) =>
    fc.record({ op: fc.constantFrom("$eq", "$ne"), v: value }).map(({ op, v }) => ({ [f]: { [op]: v } })),
  ),
  textLeaf((f, value) =>
    fc
      .record({ op: fc.constantFrom("$in", "$nin"), v: fc.array(value, { maxLength: 3 }) })
      .map(({ op, v }) => ({ [f]: { [op]: v } })),
  ),
  fc.record({ f: textField, v: fc.boolean() }).map(({ f, v }) => ({ [f]: { $exists: v } })),
  fc
    .record({ f: textField, lo: textValue, hi: textValue })
    .map(({ f, lo, hi }) => ({ [f]: { $between: [lo, hi] } })),
  fc
    .record({
      f: fc.constantFrom("categories", "group_ids"),
      op: fc.constantFrom("$eq", "$ne", "$in", "$nin", "$exists", "="),
      v: fc.constantFrom("x", "y", "g1", "g2"),
      vs: fc.subarray(["x", "z", "g1", "g2"]),
      b: fc.boolean(),
    })
    .map(({ f, op, v, vs, b }) =>
      op === "=" ? { [f]: v } : { [f]: { [op]: op === "$exists" ? b : op.endsWith("in") ? vs : v } },
    ),
  fc
    .record({
      f: fc.constantFrom("created_at", "updated_at"),
      op: fc.constantFrom("$gt", "$gte", "$lt", "$lte", "$ne", "$between", "$in"),
      a: iso,
      b: iso,
    })
    .map(({ f, op, a, b }) => ({
      [f]: { [op]: op === "$between" ? [a < b ? a : b, a < b ? b : a] : op === "$in" ? [a, b] : a },
    })),
  fc
    .record({
      k: metaKey,
      op: fc.constantFrom("=", "$eq", "$ne", "$in", "$nin", "$exists"),
      v: metaScalar,
      vs: fc.array(metaScalar, { maxLength: 3 }),
      b: fc.boolean(),
    })
    .map(({ k, op, v, vs, b }) =>
      op === "=" ? { [k]: v } : { [k]: { [op]: op === "$exists" ? b : op.endsWith("in") ? vs : v } },
    ),
  fc
    .record({
      k: metaKey,
      op: fc.constantFrom("$gt", "$gte", "$lt", "$lte", "$between"),
      v: ordered(fc.oneof(word, fc.integer({ min: -3, max: 3 }))),
      w: fc.oneof(word, fc.integer({ min: -3, max: 3 })),
    })
    .map(({ k, op, v, w }) => ({
      [k]: { [op]: op === "$between" ? (typeof v === typeof w ? [v, w] : [v, v]) : v },
    })),
);
const tree = fc.letrec<{ node: Record<string, unknown> }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 4, depthIdentifier: "filter" },
    leaf,
    fc.tuple(leaf, leaf).map(([a, b]) => ({ ...a, ...b })),
    fc.array(tie("node"), { minLength: 1, maxLength: 2 }).map((nodes) => ({ AND: nodes })),
    fc.array(tie("node"), { minLength: 1, maxLength: 2 }).map((nodes) => ({ OR: nodes })),
    tie("node").map((node) => ({ NOT: node })),
  ),
})).node;

async function sqlIds(filter: ReturnType<typeof parseFilters>): Promise<string[]> {
  const found = await listMemoryRows(svc.deps.db, {
    orgId,
    types: MEMORY_TYPES,
    filter,
    order: "created_at_asc",
    limit: 1000,
  });
  return found.map((r) => r.id).sort();
}

describe("filter language: SQL agrees with the in-memory evaluator", () => {
  it("random filter trees over random rows", async () => {
    let nonTrivial = 0;
    await fc.assert(
      fc.asyncProperty(tree, async (raw) => {
        const filter = parseFilters(raw);
        const expected = rows
          .filter((r) => evalFilter(filter, r))
          .map((r) => r.id)
          .sort();
        if (expected.length > 0 && expected.length < rows.length) nonTrivial += 1;
        expect(await sqlIds(filter)).toEqual(expected);
      }),
      { numRuns: 300, seed: 14 },
    );
    // the generated filters actually split the rows, most of the time
    expect(nonTrivial).toBeGreaterThan(100);
  });

  it("a day of the calendar without a time is the whole day (UTC) for every comparison", async () => {
    const dayOf = (r: MemoryRow) => r.created_at.toISOString().slice(0, 10);
    const ids = (pred: (day: string) => boolean) =>
      rows
        .filter((r) => pred(dayOf(r)))
        .map((r) => r.id)
        .sort();
    // The day with the most rows.
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(dayOf(r), (counts.get(dayOf(r)) ?? 0) + 1);
    const d = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const d2 = dayOf(rows.find((r) => dayOf(r) > d)!);
    expect(ids((x) => x === d).length).toBeGreaterThan(0);
    const cases: Array<[unknown, (day: string) => boolean]> = [
      [d, (x) => x === d],
      [{ $eq: d }, (x) => x === d],
      [{ $ne: d }, (x) => x !== d],
      [{ $lte: d }, (x) => x <= d],
      [{ $lt: d }, (x) => x < d],
      [{ $gt: d }, (x) => x > d],
      [{ $gte: d }, (x) => x >= d],
      [{ $between: [d, d] }, (x) => x === d],
      [{ $between: [d, d2] }, (x) => x >= d && x <= d2],
      [{ $lte: "9999-12-31" }, () => true],
      [{ $gt: "9999-12-31" }, () => false],
      [{ $ne: "9999-12-31" }, () => true],
    ];
    for (const [condition, pred] of cases) {
      expect(await sqlIds(parseFilters({ created_at: condition })), JSON.stringify(condition)).toEqual(
        ids(pred),
      );
    }
    // A time is an instant: up to midnight exactly, not the rest of that day.
    const midnight = Date.parse(`${d}T00:00:00Z`);
    expect(await sqlIds(parseFilters({ created_at: { $lte: `${d}T00:00:00Z` } }))).toEqual(
      rows
        .filter((r) => r.created_at.getTime() <= midnight)
        .map((r) => r.id)
        .sort(),
    );
    expect(ids((x) => x === d).length).toBeGreaterThan(1);
  });

  it("metadata values that are strings never equal numbers, and composites never equal scalars", async () => {
    const ones = rows
      .filter((r) => r.metadata.k1 === 1)
      .map((r) => r.id)
      .sort();
    expect(await sqlIds(parseFilters({ "metadata.k1": 1 }))).toEqual(ones);
    const arrays = rows.filter((r) => Array.isArray(r.metadata.k2));
    expect(arrays.length).toBeGreaterThan(0);
    const notOne = await sqlIds(parseFilters({ k2: { $ne: 1 } }));
    for (const r of arrays) expect(notOne).toContain(r.id);
  });

  it("a time names the millisecond the API shows: a row's own created_at finds it, whatever the microseconds", async () => {
    const shown = await listMemoryRows(svc.deps.db, {
      orgId,
      types: MEMORY_TYPES,
      order: "created_at_asc",
      limit: 1000,
    });
    // read back as seeded, to the millisecond
    expect(new Map(shown.map((r) => [r.id, r.created_at.toISOString()]))).toEqual(
      new Map(rows.map((r) => [r.id, r.created_at.toISOString()])),
    );
    for (const row of [rows[0]!, rows[17]!, rows[79]!]) {
      for (const column of ["created_at", "updated_at"] as const) {
        const at = row[column].toISOString();
        const later = new Date(row[column].getTime() + 1).toISOString();
        for (const condition of [
          at,
          { $eq: at },
          { $ne: at },
          { $lte: at },
          { $lt: at },
          { $gt: at },
          { $gte: at },
          { $in: [at, later] },
          { $nin: [at] },
          { $between: [at, at] },
          { $between: ["2024-01-01", at] },
        ]) {
          const filter = parseFilters({ [column]: condition });
          const expected = rows
            .filter((r) => evalFilter(filter, r))
            .map((r) => r.id)
            .sort();
          expect(await sqlIds(filter), `${column} ${JSON.stringify(condition)}`).toEqual(expected);
        }
        // the incremental sync: what came after the last row seen, without that row
        expect(await sqlIds(parseFilters({ [column]: { $gt: at } }))).not.toContain(row.id);
        expect(await sqlIds(parseFilters({ [column]: at }))).toContain(row.id);
      }
    }
  });

  it("a long metadata $in is one lookup per row, and finds what its containments would", async () => {
    // 98 lists of 100 values (inside the bounds) were 9,800 containments evaluated on every row:
    // ~1.5 ms a row and 0.1-0.25 s of planning on the embedded database
    const wide = parseFilters({
      user_id: "u1",
      OR: Array.from({ length: 98 }, (_, i) => ({
        [`m${i}`]: { $in: Array.from({ length: 100 }, (_, j) => `v${i}_${j}`) },
      })),
    });
    const params: unknown[] = [];
    const sql = filterSql(wide, params);
    expect(sql.split("@>").length - 1).toBe(0);
    expect(params.length).toBeLessThanOrEqual(1 + 2 * 98);
    // a short list keeps containments (GIN probes), never more than METADATA_IN_PROBES of them
    const short = filterSql(parseFilters({ k1: { $in: ["a", "b", 1] } }), []);
    expect(short.split("@>").length - 1).toBe(3);
    expect(METADATA_IN_PROBES).toBeLessThan(9);

    // the same rows as the evaluator, with lists past the containment form's length too
    const scalars = [
      "a",
      "b",
      "ab",
      "ba",
      "B",
      "",
      -3,
      -2,
      -1,
      0,
      1,
      2,
      3,
      1.5,
      true,
      false,
      null,
      "1",
      "true",
      "null",
    ];
    for (const key of ["k1", "k2", "k3", "k4"]) {
      for (const op of ["$in", "$nin"]) {
        for (const [from, n] of [
          [0, 20],
          [0, 9],
          [6, 9],
          [10, 10],
          [3, 2],
          [14, 3],
        ] as const) {
          const filter = parseFilters({ [key]: { [op]: scalars.slice(from, from + n) } });
          const expected = rows
            .filter((r) => evalFilter(filter, r))
            .map((r) => r.id)
            .sort();
          expect(await sqlIds(filter), `${key} ${op} ${from}+${n}`).toEqual(expected);
        }
      }
    }
  });

  it("status reads a row without one (episodes, artifacts) as active, as ?status=active does", async () => {
    const idsOf = (pred: (r: MemoryRow) => boolean) =>
      rows
        .filter(pred)
        .map((r) => r.id)
        .sort();
    const active = idsOf((r) => r.status !== "superseded");
    const superseded = idsOf((r) => r.status === "superseded");
    expect(rows.some((r) => r.status === null && r.type === "episode")).toBe(true);
    expect(superseded.length).toBeGreaterThan(0);
    for (const condition of ["active", { $eq: "active" }, { $in: ["active"] }, { $ne: "superseded" }]) {
      expect(await sqlIds(parseFilters({ status: condition })), JSON.stringify(condition)).toEqual(active);
    }
    for (const condition of ["superseded", { $ne: "active" }, { $nin: ["active"] }]) {
      expect(await sqlIds(parseFilters({ status: condition })), JSON.stringify(condition)).toEqual(
        superseded,
      );
    }
    // the same rows as the list's own status parameter
    const listed = await listMemoryRows(svc.deps.db, {
      orgId,
      types: MEMORY_TYPES,
      status: "active",
      order: "created_at_asc",
      limit: 1000,
    });
    expect(listed.map((r) => r.id).sort()).toEqual(active);
  });
});

function refusal(raw: unknown): { code: string; message: string } {
  try {
    parseFilters(raw);
  } catch (err) {
    if (isCoreError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("accepted");
}

describe("filter language: refusals name the path", () => {
  it.each([
    [{ OR: [{ user_id: "u1" }, { created_at: { $gte: "yesterday" } }] }, "filters.OR[1].created_at.$gte"],
    // Days the calendar has not, and PostgreSQL's missing year 0 (they were a 500 at the database).
    [{ created_at: { $gte: "0000-01-01" } }, "filters.created_at.$gte"],
    [{ created_at: { $lt: "0001-01-01T00:30:00+01:00" } }, "filters.created_at.$lt"],
    [{ created_at: { $gt: "9999-12-31T23:59:59-05:00" } }, "filters.created_at.$gt"],
    [{ updated_at: { $gte: "2026-02-30" } }, "filters.updated_at.$gte"],
    [{ updated_at: { $lte: "2026-13-01" } }, "filters.updated_at.$lte"],
    [{ user_id: { $regex: "u" } }, "filters.user_id.$regex"],
    [{ $or: [] }, "filters.$or"],
    [{ AND: [] }, "filters.AND"],
    [{ AND: { user_id: "u1" } }, "filters.AND"],
    [{ NOT: "u1" }, "filters.NOT"],
    [{ user_id: ["u1", "u2"] }, "filters.user_id"],
    [{ user_id: { $in: "u1" } }, "filters.user_id.$in"],
    [{ user_id: { $in: ["u1", 2] } }, "filters.user_id.$in[1]"],
    [{ categories: { $gt: "x" } }, "filters.categories.$gt"],
    [{ "metadata.k": { $between: [1, "z"] } }, "filters.metadata.k.$between"],
    [{ "metadata.k": { $eq: { nested: true } } }, "filters.metadata.k.$eq"],
    [{ "metadata.k": { $gt: Number.NaN } }, "filters.metadata.k.$gt"],
    [{ metadata: "x" }, "filters.metadata"],
    [{ user_id: { $exists: "yes" } }, "filters.user_id.$exists"],
    [{ user_id: {} }, "filters.user_id"],
    // filters that could never match (or would match everything) are mistakes, not empty answers
    [{ user_id: "u1", type: "facts" }, "filters.type"],
    [{ type: { $in: ["fact", "Episode"] } }, "filters.type.$in[1]"],
    [{ type: null }, "filters.type"],
    [{ user_id: "u1", status: "Active" }, "filters.status"],
    [{ status: { $ne: "archived" } }, "filters.status.$ne"],
    [{ status: { $nin: [null] } }, "filters.status.$nin[0]"],
    [{ user_id: "u1", NOT: {} }, "filters.NOT"],
    [{ user_id: "u1", OR: [{}, { "metadata.k": "x" }] }, "filters.OR[0]"],
    [{ AND: [{ user_id: "u1" }, { NOT: { OR: [{ app_id: "p" }, {}] } }] }, "filters.AND[1].NOT.OR[1]"],
    [{ user_id: "a\u0000b" }, "filters.user_id"],
    [{ user_id: "\ud800" }, "filters.user_id"],
    [[{ user_id: "u1" }], "filters"],
    [null, "filters"],
  ])("%j is refused at %s", (raw, path) => {
    const r = refusal(raw);
    expect(r.code).toBe("invalid_filters");
    expect(r.message.startsWith(`${path}: `), r.message).toBe(true);
  });

  it("depth and size are bounded", () => {
    let deep: Record<string, unknown> = { user_id: "u1" };
    for (let i = 0; i < FILTER_MAX_DEPTH + 1; i++) deep = { NOT: deep };
    expect(refusal(deep).message).toMatch(/nesting deeper than/);
    const wide = { AND: Array.from({ length: 60 }, (_, i) => ({ user_id: `u${i}`, app_id: "p" })) };
    expect(refusal(wide).message).toMatch(/more than 100 conditions/);
    // The limit counts conditions (field comparisons): an OR of 100 of them is taken, a 101st is not.
    const branches = (n: number) => Array.from({ length: n }, (_, i) => ({ user_id: `u${i}` }));
    expect(() => parseFilters({ OR: branches(100) })).not.toThrow();
    expect(() => parseFilters({ AND: [{ OR: branches(99) }, { NOT: { type: "episode" } }] })).not.toThrow();
    const over = refusal({ AND: [{ OR: branches(100) }, { type: "fact" }] });
    expect(over.message).toBe("filters.AND[1].type: the filter has more than 100 conditions");
    // AND, OR and NOT are held to 100 of their own: each can hold 100 objects, even empty ones.
    const nots = () => ({ AND: Array.from({ length: 60 }, () => ({ NOT: { user_id: "u1" } })) });
    expect(refusal({ OR: [nots(), nots()] }).message).toMatch(/more than 100 AND, OR and NOT groups/);
    expect(refusal({ user_id: { $in: Array.from({ length: 101 }, (_, i) => `u${i}`) } }).message).toMatch(
      /at most 100 values/,
    );
  });

  it("a filter pins the scope only through an equality or $in on a scope axis", () => {
    expect(pinsScope(parseFilters({ user_id: "u1", type: "fact" }))).toBe(true);
    expect(pinsScope(parseFilters({ group_ids: { $in: ["g1"] } }))).toBe(true);
    expect(pinsScope(parseFilters({ OR: [{ user_id: "u1" }, { agent_id: "a1" }] }))).toBe(true);
    expect(pinsScope(parseFilters({ OR: [{ user_id: "u1" }, { type: "fact" }] }))).toBe(false);
    expect(pinsScope(parseFilters({ NOT: { user_id: "u1" } }))).toBe(false);
    expect(pinsScope(parseFilters({ user_id: { $ne: "u1" } }))).toBe(false);
    expect(pinsScope(parseFilters({ user_id: null }))).toBe(false);
    expect(pinsScope(parseFilters({ conv_id: "c1", "metadata.topic": "x" }))).toBe(false);
  });
});
