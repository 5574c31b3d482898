/**
 * Our own retrieval set (test/fixtures/recall-set.json, issue 17): hand-written conversations and
 * questions for the gaps LoCoMo measures only in passing (category words, names, replies, requests
 * and quotes, dates, two facts through one person). Prints recall@5 overall and per gap:
 *   npm run bench:recall
 * test/recall-set.test.ts asserts the same figure.
 */
import { readFileSync } from "node:fs";
import { createKey, createOrg } from "../src/admin/orgs.js";
import { call, startBenchService } from "./lib.js";

export interface RecallCase {
  gap: string;
  q: string;
  /** "request:message" indexes of the messages the answer is in. */
  evidence: string[];
}
export interface RecallConversation {
  id: string;
  requests: Array<Array<{ role: string; content: string; date?: string; name?: string }>>;
  questions: RecallCase[];
}

export interface RecallSet {
  /** User turns ingested for every conversation first: distractors, no question is about them. */
  filler: string[];
  conversations: RecallConversation[];
}

export function loadRecallSet(
  path = new URL("../test/fixtures/recall-set.json", import.meta.url),
): RecallSet {
  return JSON.parse(readFileSync(path, "utf8")) as RecallSet;
}

/** The requests and searches of the set through an API caller; recall@k per question. */
export async function measureRecallSet(
  api: (method: string, path: string, body?: unknown) => Promise<any>,
  set: RecallSet,
  k = 5,
): Promise<{ overall: number; byGap: Record<string, number>; misses: string[] }> {
  const scores: { gap: string; r: number; q: string }[] = [];
  const filler = set.filler.map((content) => ({ role: "user", content }));
  for (const conv of set.conversations) {
    const userId = `recall-${conv.id}`;
    for (const [n, messages] of [filler, ...conv.requests].entries()) {
      let job = await api("POST", "/v1/memories?wait=true", {
        user_id: userId,
        conv_id: `${conv.id}-${n}`,
        // "request:message" is the event id (the filler is request -1, the conversation's from 0).
        messages: messages.map((m, i) => ({ ...m, dia_id: `${n - 1}:${i}` })),
      });
      while (job.status === "pending" || job.status === "running") {
        await new Promise((r) => setTimeout(r, 100));
        job = await api("GET", `/v1/memories/jobs/${job.id}`);
      }
      if (job.status !== "succeeded") throw new Error(`ingest ${conv.id}/${n}: ${JSON.stringify(job)}`);
    }
    for (const c of conv.questions) {
      const res = await api("POST", "/v1/memories/search", {
        query: c.q,
        user_id: userId,
        mode: "retrieve",
        limit: k,
      });
      const seen = new Set(
        (res.data as any[])
          .slice(0, k)
          .flatMap((m) => (Array.isArray(m.details?.source_event_ids) ? m.details.source_event_ids : [])),
      );
      const r = c.evidence.filter((e) => seen.has(e)).length / c.evidence.length;
      scores.push({ gap: c.gap, r, q: c.q });
    }
  }
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const byGap: Record<string, number> = {};
  for (const gap of [...new Set(scores.map((s) => s.gap))].sort())
    byGap[gap] = mean(scores.filter((s) => s.gap === gap).map((s) => s.r));
  return {
    overall: mean(scores.map((s) => s.r)),
    byGap,
    misses: scores.filter((s) => s.r < 1).map((s) => `${s.gap}: ${s.q}`),
  };
}

async function main() {
  const svc = await startBenchService({});
  try {
    const org = await createOrg(svc.runtime.deps.db, { name: "recall", tier: "unlimited" });
    const key = (await createKey(svc.runtime.deps.db, { orgId: org.org_id, name: "recall" })).api_key;
    const set = loadRecallSet();
    const out = await measureRecallSet((m, p, b) => call(svc.url, key, m, p, b), set);
    const n = set.conversations.reduce((s, c) => s + c.questions.length, 0);
    console.log(`\nrecall set: ${n} questions, recall@5 ${out.overall.toFixed(3)}`);
    for (const [gap, r] of Object.entries(out.byGap)) console.log(`  ${gap.padEnd(9)} ${r.toFixed(3)}`);
    if (process.argv.includes("--misses")) for (const m of out.misses) console.log(`  miss ${m}`);
  } finally {
    await svc.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
