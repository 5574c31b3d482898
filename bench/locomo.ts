/**
 * Evidence recall on a LoCoMo-shaped file, through the real HTTP API:
 *   npm run bench:locomo -- --data PATH [--limit-conversations N] [--turns]
 *
 * Each session of each conversation is ingested as chat turns (role = the speaker, `dia_id` and
 * the session date on every message); every question with evidence then runs as a retrieve-mode
 * search scoped to that conversation's user, and the returned memories are mapped back to turns
 * through `details.source_event_ids`. `--turns` skips extraction and stores every turn as its own
 * fact ("date speaker: text", like the README's BM25 baseline) to compare retrievers alone.
 */
import { writeFileSync } from "node:fs";
import { createKey, createOrg } from "../src/admin/orgs.js";
import { systemCtx } from "../src/context.js";
import { writeMemories } from "../src/memories/write.js";
import { call, progress, startBenchService } from "./lib.js";
import { type Conversation, loadLocomo, RecallTable } from "./locomo-data.js";

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const DATA = arg("data");
const TURNS = process.argv.includes("--turns");
const MAX_CONVS = Number(arg("limit-conversations") ?? "0");
/** `--dump FILE`: one JSON line per question (its evidence and the top 10 texts), for diagnosis. */
const DUMP = arg("dump");
/** `--limit N`: rows asked of each search (default 20; recall is measured on the first 20). */
const LIMIT = Number(arg("limit") ?? "20");
const dumped: string[] = [];
/** Rows of each question in the dump: its turns, text, score, type, speaker and episode. */
const DUMP_ROWS = Number(arg("dump-rows") ?? "10");

const CONCURRENCY = 4;

type Service = Awaited<ReturnType<typeof startBenchService>>;

async function ingestConversation(
  svc: Service,
  key: string,
  orgId: string,
  conv: Conversation,
  tick: () => void,
) {
  const userId = `locomo-${conv.id}`;
  for (const session of conv.sessions) {
    if (session.turns.length === 0) continue;
    if (TURNS) {
      await svc.runtime.deps.db.tx((tx) =>
        writeMemories(
          { ...systemCtx(svc.runtime.deps, orgId, "locomo"), db: tx },
          session.turns.map((t) => ({
            type: "fact" as const,
            text: `${session.date} ${t.speaker}: ${t.text}`,
            user_id: userId,
            conv_id: `${conv.id}-s${session.n}`,
            details: { source_event_ids: [t.dia_id] },
          })),
        ),
      );
    } else {
      let job = await call(svc.url, key, "POST", "/v1/memories?wait=true", {
        user_id: userId,
        conv_id: `${conv.id}-s${session.n}`,
        timestamp_format: "%I:%M %p on %d %B, %Y",
        messages: session.turns.map((t) => ({
          role: t.speaker,
          content: t.text,
          dia_id: t.dia_id,
          date: session.date,
        })),
      });
      while (job.status === "pending" || job.status === "running") {
        await new Promise((r) => setTimeout(r, 250));
        job = await call(svc.url, key, "GET", `/v1/memories/jobs/${job.id}`);
      }
      if (job.status !== "succeeded")
        throw new Error(`ingest of ${conv.id} session ${session.n}: ${JSON.stringify(job.error)}`);
    }
    tick();
  }
}

async function main() {
  if (!DATA)
    throw new Error("usage: npm run bench:locomo -- --data PATH [--turns] [--limit-conversations N]");
  let convs = loadLocomo(DATA);
  if (MAX_CONVS > 0) convs = convs.slice(0, MAX_CONVS);
  const svc = await startBenchService({ MNEMO_DB_POOL_SIZE: "10" });
  const { db } = svc.runtime.deps;
  const org = await createOrg(db, { name: "locomo", tier: "unlimited" });
  const table = new RecallTable();
  const started = Date.now();
  let memories = 0;
  const unstored: Record<number, { missing: number; all: number }> = {};
  try {
    const sessions = convs.reduce((s, c) => s + c.sessions.filter((x) => x.turns.length).length, 0);
    const questions = convs.reduce((s, c) => s + c.questions.length, 0);
    let ingested = 0;
    const ingestBar = progress("ingest   ", sessions);
    let asked = 0;
    const askBar = progress("questions", questions);
    for (const conv of convs) {
      // A key per conversation keeps each under the per-key rate limit.
      const key = (await createKey(db, { orgId: org.org_id, name: conv.id })).api_key;
      await ingestConversation(svc, key, org.org_id, conv, () => ingestBar(++ingested));
      const queue = [...conv.questions];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let q = queue.shift(); q; q = queue.shift()) {
            const res = await call(svc.url, key, "POST", "/v1/memories/search", {
              query: q.question,
              user_id: `locomo-${conv.id}`,
              mode: "retrieve",
              limit: LIMIT,
            });
            const turns = (res.data as any[]).map((m) =>
              Array.isArray(m.details?.source_event_ids) ? (m.details.source_event_ids as string[]) : [],
            );
            table.add(q.category, q.evidence, turns);
            if (DUMP)
              dumped.push(
                JSON.stringify({
                  conv: conv.id,
                  category: q.category,
                  question: q.question,
                  evidence: q.evidence,
                  top: (res.data as any[])
                    .slice(0, DUMP_ROWS)
                    .map((m, i) => [
                      turns[i],
                      m.text,
                      m.score,
                      m.type,
                      m.details?.source_role ?? null,
                      m.details?.episode_id ?? (m.type === "episode" ? m.id : null),
                    ]),
                }),
              );
            askBar(++asked);
          }
        }),
      );
    }
    const { rows } = await db.query("SELECT count(*)::int AS n FROM memories WHERE org_id = $1", [
      org.org_id,
    ]);
    memories = rows[0].n;
    // Evidence turns no memory came from: no ranking can find them, so they bound every recall.
    const sources = await db.query<{ user_id: string; ids: string[] }>(
      `SELECT user_id, ARRAY(SELECT jsonb_array_elements_text(details -> 'source_event_ids')) AS ids
       FROM memories WHERE org_id = $1 AND jsonb_typeof(details -> 'source_event_ids') = 'array'`,
      [org.org_id],
    );
    const stored = new Set(sources.rows.flatMap((r) => r.ids.map((id) => `${r.user_id} ${id}`)));
    for (const conv of convs)
      for (const q of conv.questions)
        for (const e of q.evidence) {
          const c = unstored[q.category] ?? { missing: 0, all: 0 };
          unstored[q.category] = c;
          c.all++;
          if (!stored.has(`locomo-${conv.id} ${e}`)) c.missing++;
        }
  } finally {
    await svc.stop();
  }
  const embedder = svc.runtime.deps.providers.embedder.name;
  console.log(
    `\n${convs.length} conversations, ${memories} memories stored (${TURNS ? "one fact per turn" : "extracted through the API"}),` +
      ` embedder ${embedder}, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log(table.render(TURNS ? "mnemo hybrid, turn-level" : "mnemo"));
  console.log(
    `\nevidence turns no memory came from, by category: ${Object.entries(unstored)
      .map(([cat, c]) => `${cat}: ${c.missing} of ${c.all}`)
      .join(", ")}`,
  );
  if (DUMP) writeFileSync(DUMP, `${dumped.sort().join("\n")}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
