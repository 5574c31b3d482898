import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MemoryInput } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { fact, seed } from "./memories-fixtures.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

const BASE = Date.UTC(2026, 0, 1);
// Few distinct instants, so many rows tie on created_at and the id must break the tie.
const rowArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 6 }).map((s) => new Date(BASE + s * 1000)) },
  { weight: 1, arbitrary: fc.constant(null) }, // now(): shared by the whole batch
);
const stepArb = fc.record({
  inserts: fc.array(rowArb, { maxLength: 4 }),
  deletes: fc.array(fc.nat(), { maxLength: 3 }),
});

interface Known {
  id: string;
  at: number;
}

const precedes = (a: Known, b: Known) => a.at < b.at || (a.at === b.at && a.id < b.id);

describe("list pagination property", () => {
  it("returns every row present throughout exactly once, in order, despite inserts and deletes between pages", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { minLength: 1, maxLength: 25 }),
        fc.constantFrom("created_at_desc", "created_at_asc"),
        fc.constantFrom(1, 2, 3, 7),
        fc.array(stepArb, { maxLength: 25 }),
        async (initial, order, limit, steps) => {
          const { orgId, key } = await svc.newOrg();
          const write = async (times: (Date | null)[]) => {
            const inputs: MemoryInput[] = times.map((t, i) => fact(`m${i}`, t ? { created_at: t } : {}));
            const rows = await seed(svc, orgId, inputs);
            return rows.map((r) => ({ id: r.id, at: r.created_at.getTime() }));
          };
          const alive = new Map<string, Known>();
          for (const k of await write(initial)) alive.set(k.id, k);
          const throughout = new Set(alive.keys());
          const seen: string[] = [];
          let cursor: string | null = null;
          let step = 0;
          for (;;) {
            const qs: string = `order=${order}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
            const r = await svc.request("GET", `/v1/memories?${qs}`, { key });
            expect(r.status).toBe(200);
            expect(r.body.data.length).toBeLessThanOrEqual(limit);
            seen.push(...r.body.data.map((m: any) => m.id));
            if (!r.body.has_more) {
              expect(r.body.next_cursor).toBeNull();
              break;
            }
            cursor = r.body.next_cursor;
            const s = steps[step++];
            if (!s) continue;
            for (const k of await write(s.inserts)) alive.set(k.id, k);
            const ids = [...alive.keys()];
            for (const n of s.deletes) {
              const victim = ids[n % ids.length];
              if (!victim || !alive.has(victim)) continue;
              const d = await svc.request("DELETE", `/v1/memories/${victim}`, { key });
              expect(d.status).toBe(204);
              alive.delete(victim);
              throughout.delete(victim);
            }
          }
          // no row twice, every row present throughout exactly once
          expect(new Set(seen).size).toBe(seen.length);
          for (const id of throughout) expect(seen).toContain(id);
          // strictly ordered on (created_at, id) in the asked direction (ms is exact here)
          const all = new Map([...alive.values()].map((k) => [k.id, k]));
          const known = seen.map((id) => all.get(id)).filter((k): k is Known => k !== undefined);
          for (let i = 1; i < known.length; i++) {
            const [a, b] = [known[i - 1]!, known[i]!];
            expect(order === "created_at_asc" ? precedes(a, b) : precedes(b, a)).toBe(true);
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
