import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRecallSet, measureRecallSet } from "../bench/recall-set.js";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe("our own retrieval set (test/fixtures/recall-set.json)", () => {
  it("finds the evidence of hand-written questions in the top 5, with no model configured", async () => {
    const { key } = await svc.newOrg();
    const set = loadRecallSet();
    expect(set.conversations.reduce((s, c) => s + c.questions.length, 0)).toBeGreaterThanOrEqual(40);
    const out = await measureRecallSet(async (method, path, body) => {
      const res = await svc.request(method, path, { key, body });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    }, set);
    // Before issue 17 (no concept expansion, no user names) this set scored 0.818: concept 0.625,
    // name 0.800. The thresholds leave room for one or two misses, not for a lost feature.
    expect(out.overall, out.misses.join("\n")).toBeGreaterThanOrEqual(0.93);
    expect(out.byGap.concept, out.misses.join("\n")).toBeGreaterThanOrEqual(0.9);
    expect(out.byGap.name, out.misses.join("\n")).toBeGreaterThanOrEqual(0.9);
    expect(out.byGap.context, out.misses.join("\n")).toBe(1);
    // The everyday kinds WordNet does not give (a pet, a breed as a pet, a kid, where one lives after
    // a move, a job one was hired for, one's occupation, what one does for a living, a diet, an
    // employer one accepted an offer from), and an allergy one is allergic to.
    expect(
      out.misses.filter((m) => /Alice|job|pets|occupation|for a living|diet|allergies|employer/.test(m)),
      out.misses.join("\n"),
    ).toEqual([]);
  }, 120_000);
});
