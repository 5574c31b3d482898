import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { findMemory } from "../src/db/memories.js";
import { MAX_RETRY_AFTER_MS, MODEL_RETRY_PAUSE_MS, retryPauseMs } from "../src/ingest/run-job.js";
import { embeddingText } from "../src/memories/write.js";
import { createOpenAIProviders, ProviderError } from "../src/providers/openai.js";
import { SUMMARY_MAX } from "../src/providers/openai-extraction.js";
import { IngestJobSchema } from "../src/wire/ingest.js";
import { seedGroup } from "./helpers/groups.js";
import { startTestService, type TestService, waitFor, withConfig } from "./helpers/harness.js";
import { duplicateKeys } from "./helpers/json-keys.js";
import { callErr, httpClient } from "./helpers/mcp-client.js";
import { type StubOpenAI, startStubOpenAI } from "./helpers/stub-openai.js";

let svc: TestService;
let stub: StubOpenAI;
/** The service's log lines, as the operator reads them. */
const logged: string[] = [];
beforeAll(async () => {
  stub = await startStubOpenAI({ dim: 384 });
  svc = await startTestService({
    env: {
      MNEMO_LLM_BASE_URL: stub.url,
      OPENAI_API_KEY: "sk-test",
      MNEMO_LLM_MAX_RETRIES: "2",
      // The pauses between a job's attempts (5 s, then 10 s by default): what they are for is
      // tested on retryPauseMs below, not by waiting them out.
      MNEMO_TEST_MODEL_RETRY_PAUSE_MS: "200",
    },
    log: pino({ level: "info" }, { write: (l: string) => logged.push(l) }),
  });
});
afterAll(async () => {
  await svc?.stop();
  await stub?.close();
});

const body = (extra: object = {}) => ({
  user_id: "u1",
  conv_id: "c1",
  messages: [
    { role: "user", content: "I started learning the cello.", dia_id: "D1:1" },
    { role: "assistant", content: "That is wonderful, how is it going?", dia_id: "D1:2" },
  ],
  ...extra,
});

const oneTurn = {
  index: 0,
  role: "user" as const,
  speaker: null,
  content: "I started learning the cello.",
  date: null,
  at: null,
  refDate: null,
  eventId: "0",
};

/** The job once it succeeded or failed, polled (its attempts may be paused for a model outage). */
const terminalJob = (key: string, id: string) =>
  waitFor(
    async () => {
      const r = await svc.request("GET", `/v1/memories/jobs/${id}`, { key });
      return ["succeeded", "failed"].includes(r.body.status) && r.body;
    },
    { timeoutMs: 90_000, intervalMs: 250 },
  );

describe("openai-compatible provider", () => {
  it("extracts through chat completions with a JSON schema and embeds with the configured dimension", async () => {
    expect(svc.deps.providers.kind).toBe("openai");
    expect(svc.deps.providers.llm).not.toBeNull();
    const { key, orgId } = await svc.newOrg();
    const seen = stub.requests.length;
    const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body() });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    const facts = res.body.result.memories_created.filter((m: any) => m.type === "fact");
    expect(facts.map((f: any) => f.text)).toContain("Stub fact: I started learning the cello.");
    const row = await findMemory(svc.deps.db, orgId, facts[0].id);
    expect(row!.details.source_event_ids).toEqual(["D1:1"]);
    expect(row!.details.source_role).toBe("user");
    const calls = stub.requests.slice(seen);
    const extract = calls.find((c) => c.kind === "extract")!;
    expect(extract.path).toBe("/v1/chat/completions");
    expect(extract.body.response_format.type).toBe("json_schema");
    const emb = calls.find((c) => c.kind === "embeddings")!;
    expect(emb.body.dimensions).toBe(384);
    const { rows } = await svc.deps.db.query(
      "SELECT vector_dims(embedding) AS d FROM memories WHERE id = $1",
      [facts[0].id],
    );
    expect(rows[0].d).toBe(384);
  });

  it("embeds without `dimensions` once a server refuses it (vLLM, for a model that cannot shorten its vectors)", async () => {
    // Providers of their own: the service's keep asking with `dimensions`, as the stub allows.
    const { embedder } = createOpenAIProviders(
      loadConfig({ MNEMO_LLM_BASE_URL: stub.url, OPENAI_API_KEY: "sk-test", MNEMO_EMBEDDING_DIM: "384" }),
    );
    const refused = {
      status: 400,
      body: { error: { message: "Model does not support matryoshka representation" } },
    };
    stub.enqueue("embeddings", refused);
    const seen = stub.requests.length;
    const [first] = await embedder.embed(["I play the cello."]);
    const [second] = await embedder.embed(["I play the violin."]);
    expect([first!.length, second!.length]).toEqual([384, 384]);
    const sent = stub.requests.slice(seen).map((r) => "dimensions" in r.body);
    expect(sent).toEqual([true, false, false]);
    // A refusal of another request still fails, saying why in the server's words.
    stub.enqueue("embeddings", { status: 404, body: { error: { message: "model 'nomic' not found" } } });
    await expect(embedder.embed(["x"])).rejects.toThrow(/HTTP 404: model 'nomic' not found/);
  });

  it("fails the job clearly when the model returns output that does not validate", async () => {
    const { key, orgId } = await svc.newOrg();
    stub.enqueue("extract", { content: '{"facts": "PRIVATE: the bank PIN is 4921, not a list"' });
    const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body() });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("failed");
    expect(res.body.result).toBeNull();
    expect(res.body.error).toMatchObject({ type: "server_error", code: "ingest_failed" });
    expect(res.body.error.message).toBe(
      "The language model (extraction) returned output that does not match the expected schema.",
    );
    expect(IngestJobSchema.safeParse(res.body).success).toBe(true);
    const { rows } = await svc.deps.db.query("SELECT count(*)::int AS n FROM memories WHERE org_id = $1", [
      orgId,
    ]);
    expect(rows[0].n).toBe(0);
    // The operator log says why, never what the model wrote (it can hold users' facts).
    const line = logged.find((l) => l.includes(res.body.id) && l.includes("ingest job failed"));
    expect(line).toMatch(/characters of output/);
    expect(duplicateKeys(line!)).toEqual([]);
    expect(logged.filter((l) => l.includes("PIN is 4921"))).toEqual([]);
  });

  it("a failed model call names the call: the extraction window, the dedup judgement; a reply of tool calls says so", async () => {
    const { key } = await svc.newOrg();
    const first = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "named" }),
    });
    expect(first.body.status).toBe("succeeded");
    // The same facts again: the judge is asked about them, and answers prose.
    stub.enqueue("judge", { content: "I think case 0 is new." });
    const judged = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "named2" }),
    });
    expect([judged.body.status, judged.body.error?.message]).toEqual([
      "failed",
      "The language model (dedup judgement) returned output that does not match the expected schema.",
    ]);
    // A long conversation in windows: the second window's reply is the one that does not do.
    const turns = Array.from({ length: 45 }, (_, i) => ({
      role: "user",
      content: `Turn number ${i} of the talk.`,
    }));
    stub.enqueue("extract", { delayMs: 0 }, { content: "not json" });
    const windowed = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "named3", messages: turns },
    });
    expect(windowed.body.error?.message).toBe(
      "The language model (extraction, window 2 of 2) returned output that does not match the expected schema.",
    );
    // The answer given as tool calls, content null.
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    const toolCall = {
      id: "call_1",
      type: "function",
      function: { name: "json", arguments: '{"facts":[]}' },
    };
    stub.enqueue("extract", {
      status: 200,
      body: {
        id: "c",
        object: "chat.completion",
        created: 0,
        model: "m",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: null, tool_calls: [toolCall] },
            finish_reason: "tool_calls",
          },
        ],
        usage,
      },
    });
    const tools = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "named4" }),
    });
    expect(tools.body.error?.message).toBe(
      "The language model (extraction) answered with tool calls, not text.",
    );
  });

  it("MCP add_memory whose job failed is an error result, with the job's code and id", async () => {
    const { key } = await svc.newOrg();
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    try {
      stub.enqueue("extract", { content: '{"facts": "not a list"' });
      // An agent that checks only isError must not take the memory as kept (it was isError false).
      const said = await callErr(client, "add_memory", { text: "I like jazz.", user_id: "u1" });
      expect(said).toMatch(/^Error ingest_failed: Ingest job job_\S+ failed: ingest_failed: /);
      // Both `messages` and `text`: refused, not one of them silently dropped.
      const both = await callErr(client, "add_memory", {
        text: "a",
        messages: [{ role: "user", content: "b" }],
        user_id: "u1",
      });
      expect(both).toMatch(/^Error invalid_request: Pass either `messages` or `text`, not both/);
    } finally {
      await client.close();
    }
  });

  it("reads a reply fenced as markdown or wrapped in prose, and cleans what the database cannot store", async () => {
    const { key } = await svc.newOrg();
    const reply = (facts: string[]) =>
      JSON.stringify({
        facts: facts.map((text) => ({
          text,
          fact_type: "other",
          categories: [],
          source_event_ids: ["D1:1"],
        })),
        episode: { title: "Cello \ud83d", summary: "A session." },
        artifacts: [],
        directives: [],
        gist: null,
      });
    stub.enqueue(
      "extract",
      { content: `\`\`\`json\n${reply(["Stub fact: NUL \u0000 here, emoji cut \ud83d."])}\n\`\`\`` },
      { content: `Sure! Here is the JSON:\n${reply(["Stub fact: prose around."])}\nLet me know.` },
    );
    const fenced = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "f1" }),
    });
    expect(fenced.body.status).toBe("succeeded");
    const texts = fenced.body.result.memories_created.map((m: any) => m.text);
    expect(texts).toContain("Stub fact: NUL  here, emoji cut \uFFFD.");
    const prose = await svc.request("POST", "/v1/memories?wait=true", { key, body: body({ conv_id: "f2" }) });
    expect(prose.body.status).toBe("succeeded");
    expect(prose.body.result.memories_created.map((m: any) => m.text)).toContain("Stub fact: prose around.");

    // A reasoning model's <think> sketching the format, an example fence before the answer's, and
    // braces in the prose after it: the object that matches the schema is the answer.
    stub.enqueue(
      "extract",
      { content: `<think>Format is {"facts": [...]}.</think>\n${reply(["Stub fact: after thinking."])}` },
      {
        content: `For example:\n\`\`\`json\n{}\n\`\`\`\nThe answer:\n\`\`\`json\n${reply(["Stub fact: second fence."])}\n\`\`\``,
      },
      { content: `Here: ${reply(["Stub fact: braces after."])} (per your {schema})` },
    );
    for (const [conv, said] of [
      ["f3", "Stub fact: after thinking."],
      ["f4", "Stub fact: second fence."],
      ["f5", "Stub fact: braces after."],
    ]) {
      const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body({ conv_id: conv }) });
      expect(res.body.status, said).toBe("succeeded");
      expect(res.body.result.memories_created.map((m: any) => m.text)).toContain(said);
    }
  });

  it("cuts a runaway reply to the length of what it was given", async () => {
    const { key } = await svc.newOrg();
    stub.enqueue("extract", {
      json: {
        facts: [
          {
            text: `Stub fact: ${"z".repeat(1_000_000)}`,
            fact_type: "other",
            categories: [],
            source_event_ids: ["D1:1"],
          },
        ],
        episode: { title: "t".repeat(5_000), summary: "s".repeat(1_000_000) },
        artifacts: [],
        directives: [],
        gist: null,
      },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body({ conv_id: "huge" }) });
    expect(res.body.status).toBe("succeeded");
    const lengths = res.body.result.memories_created.map((m: any) => m.text.length);
    // The window was two short turns: nothing the model says of it is longer than 2,000 characters.
    expect(Math.max(...lengths)).toBeLessThanOrEqual(2_000);
  });

  it("stores a fact or directive the model repeats once, told by every turn that said it", async () => {
    const { key, orgId } = await svc.newOrg();
    const fact = (text: string, ids: string[]) => ({
      text,
      fact_type: "attribute",
      categories: ["profile"],
      source_event_ids: ids,
    });
    const lesson = (ids: string[], entities: string[]) => ({
      type: "lesson",
      text: "Always run npm ci before npm test",
      trigger_entities: entities,
      steps: null,
      source_event_ids: ids,
    });
    const reply = (facts: object[], directives: object[]) => ({
      json: { facts, episode: { title: "T", summary: "S." }, artifacts: [], directives, gist: null },
    });
    // 80 messages: two windows of 40, each repeating the name and the lesson; the first says the
    // bicycle five times (a reply that repeats itself), with different letter case and a stop.
    const messages = Array.from({ length: 80 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `Message ${i}: I'm Alex Morgan, always run npm ci before npm test.`,
      dia_id: `D1:${i}`,
    }));
    stub.enqueue(
      "extract",
      reply(
        [
          fact("The user's name is Alex Morgan.", ["D1:0"]),
          ...["D1:2", "D1:2", "D1:4", "D1:6", "D1:8"].map((id, i) =>
            fact(
              i % 2 ? "the user owns a red bicycle named Bolt." : "The user owns a red bicycle named Bolt",
              [id],
            ),
          ),
        ],
        [lesson(["D1:10"], ["npm"])],
      ),
      reply([fact("The user's name is Alex Morgan.", ["D1:40"])], [lesson(["D1:42"], ["npm ci"])]),
    );
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "repeats", messages },
    });
    expect(res.body.status).toBe("succeeded");
    const { rows } = await svc.deps.db.query<{
      type: string;
      text: string;
      details: any;
      trigger_entities: string[];
    }>(
      "SELECT type, text, details, trigger_entities FROM memories WHERE org_id = $1 AND type <> 'episode' ORDER BY text",
      [orgId],
    );
    expect(rows.map((r) => [r.type, r.text, r.details.source_event_ids])).toEqual([
      ["lesson", "Always run npm ci before npm test", ["D1:10", "D1:42"]],
      ["fact", "The user owns a red bicycle named Bolt", ["D1:2", "D1:4", "D1:6", "D1:8"]],
      ["fact", "The user's name is Alex Morgan.", ["D1:0", "D1:40"]],
    ]);
    expect(rows[0]!.trigger_entities).toEqual(expect.arrayContaining(["npm", "npm ci"]));
    // The hook serves the lesson once.
    const hook = await svc.request("POST", "/v1/memories/trigger", {
      key,
      body: { user_id: "u1", entities: ["npm"], mode: "retrieve" },
    });
    expect(hook.body.data.map((r: any) => r.text)).toEqual(["Always run npm ci before npm test"]);
  });

  it("drops what a reply holds beyond its caps, saying so in the log", async () => {
    const { key, orgId } = await svc.newOrg();
    const files = Array.from({ length: 100 }, (_, i) => `src/mod${i}.ts`);
    stub.enqueue("extract", {
      json: {
        facts: Array.from({ length: 3_000 }, (_, i) => ({
          text: `Distinct stub fact number ${i} about topic${i}`,
          fact_type: "other",
          categories: Array.from({ length: 30 }, (_, j) => `category${j}`),
          source_event_ids: ["D1:1"],
        })),
        episode: { title: "T", summary: "S." },
        artifacts: [],
        directives: Array.from({ length: 100 }, (_, i) => ({
          type: "lesson",
          text: `Rule ${i}: format ${files.join(" ")} before committing`,
          trigger_entities: files,
          steps: null,
          source_event_ids: ["D1:1"],
        })),
        gist: null,
      },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body({ conv_id: "caps" }) });
    expect(res.body.status).toBe("succeeded");
    const { rows } = await svc.deps.db.query<{ type: string; n: number; cats: number; ents: number }>(
      `SELECT type, count(*)::int AS n, max(cardinality(categories))::int AS cats,
              max(cardinality(trigger_entities))::int AS ents
         FROM memories WHERE org_id = $1 GROUP BY type ORDER BY type`,
      [orgId],
    );
    expect(rows).toEqual([
      { type: "episode", n: 1, cats: 0, ents: 0 },
      { type: "fact", n: 200, cats: 10, ents: 0 },
      { type: "lesson", n: 40, cats: 0, ents: 30 },
    ]);
    const line = logged.find((l) => l.includes(res.body.id) && l.includes("over the caps"));
    const { dropped } = JSON.parse(line!);
    expect(dropped).toMatchObject({ facts: 2_800, categories: 200 * 20, directives: 60 });
    // At least the 70 proposed files beyond 30 in each directive kept (its own text names more).
    expect(dropped.trigger_entities).toBeGreaterThanOrEqual(40 * 70);
  });

  it("drops a fact that cites no turn of the conversation; reads an id cited as the prompt shows it", async () => {
    const { key, orgId } = await svc.newOrg();
    const fact = (text: string, ids: string[]) => ({
      text,
      fact_type: "other",
      categories: [],
      source_event_ids: ids,
    });
    stub.enqueue("extract", {
      json: {
        facts: [
          fact("An invented fact about Mars.", ["evt_fake_999", "../../x"]),
          fact("A fact citing nothing.", []),
          fact("The assistant finds the cello wonderful.", ["[D1:2]"]),
        ],
        episode: { title: "T", summary: "S." },
        artifacts: [],
        directives: [],
        gist: null,
      },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "cited" }),
    });
    expect(res.body.status).toBe("succeeded");
    const { rows } = await svc.deps.db.query<{ text: string; details: any }>(
      "SELECT text, details FROM memories WHERE org_id = $1 AND type = 'fact'",
      [orgId],
    );
    expect(rows.map((r) => [r.text, r.details.source_event_ids, r.details.source_role])).toEqual([
      ["The assistant finds the cello wonderful.", ["D1:2"], "assistant"],
    ]);
    const line = logged.find((l) => l.includes(res.body.id) && l.includes("tied to no turn"));
    expect(JSON.parse(line!).dropped).toEqual({ unsourced_facts: 2 });
  });

  it.each([
    [{ title: "", summary: "" }, "Conversation", "I started learning the cello."],
    [{ title: " ", summary: "\n" }, "Conversation", "I started learning the cello."],
    [{ title: "Cello lessons", summary: "" }, "Cello lessons", "Cello lessons"],
    [{ title: "", summary: "The user took up the cello." }, "Conversation", "The user took up the cello."],
  ])("an episode the model gave %j is stored with a title and words", async (episode, title, text) => {
    const { key } = await svc.newOrg();
    stub.enqueue("extract", {
      json: {
        facts: [
          {
            text: "The user plays the cello.",
            fact_type: "skill",
            categories: [],
            source_event_ids: ["D1:1"],
          },
        ],
        episode,
        artifacts: [],
        directives: [],
        gist: null,
      },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body({ conv_id: "ep" }) });
    expect(res.body.status).toBe("succeeded");
    const stored = res.body.result.memories_created.find((m: any) => m.type === "episode");
    const got = await svc.request("GET", `/v1/memories/${stored.id}/`, { key });
    expect([got.body.memory, got.body.details.title]).toEqual([text, title]);
  });

  it("judges and classifies a long conversation in bounded batches, each under a server's context limit", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    const messages = Array.from({ length: 200 }, (_, i) => ({
      role: "user",
      content: `Note ${i}: ${"I keep a long diary entry about my week. ".repeat(7)}`,
      dia_id: `D1:${i}`,
    }));
    const send = (conv: string) =>
      svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "u1", conv_id: conv, messages, group_ids: [all] },
      });
    expect((await send("long1")).body.status).toBe("succeeded");
    // The same 200 turns again: each fact meets its stored copy, 200 cases for the judge, who
    // calls each a duplicate; with the episode, 201 memories to classify. Sent at once, the
    // judge's prompt was 134 KB and the classifier's 64 KB: a 32k server refused both.
    const seen = stub.requests.length;
    stub.maxPromptChars = 40_000;
    stub.answers.judge = (prompt) => ({
      verdicts: [...prompt.matchAll(/^Case (\d+): NEW: .*\n {2}EXISTING (\S+):/gm)].map((m) => ({
        case: Number(m[1]),
        verdict: "duplicate",
        existing_id: m[2],
      })),
    });
    const again = await send("long2").finally(() => {
      stub.maxPromptChars = null;
      stub.answers = {};
    });
    expect(again.body.status, JSON.stringify(again.body.error)).toBe("succeeded");
    const calls = stub.requests.slice(seen);
    const length = (c: (typeof calls)[number]) =>
      c.body.messages.reduce((n: number, m: any) => n + String(m.content).length, 0);
    const judged = calls.filter((c) => c.kind === "judge");
    const classified = calls.filter((c) => c.kind === "classify");
    expect(judged.length).toBeGreaterThan(1);
    expect(classified.length).toBeGreaterThan(1);
    for (const c of [...judged, ...classified]) expect(length(c)).toBeLessThanOrEqual(40_000);
    // Every case asked once, in order, and every verdict kept: no fact stored twice.
    const cases = judged.flatMap((c) =>
      [...JSON.stringify(c.body.messages).matchAll(/Case (\d+): NEW/g)].map((m) => Number(m[1])),
    );
    expect(cases).toEqual(Array.from({ length: 200 }, (_, i) => i));
    const { rows } = await svc.deps.db.query<{ n: number; tagged: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE $2 = ANY(group_ids))::int AS tagged
         FROM memories WHERE org_id = $1 AND type = 'fact' AND status = 'active'`,
      [orgId, all],
    );
    expect(rows[0]).toEqual({ n: 200, tagged: 200 });
    // The episode's verdict came from its batch too: shareable, tagged.
    const episode = again.body.result.memories_created.find((m: any) => m.type === "episode");
    expect((await findMemory(svc.deps.db, orgId, episode.id))!.group_ids).toEqual([all]);
  });

  it("extracts many long turns in windows bounded by characters too, each turn once", async () => {
    const { key, orgId } = await svc.newOrg();
    // 30 turns of about 3,000 characters (pasted logs): one window of 40 turns was 90 KB, which a
    // server with a 32k context refuses. The last turn alone is longer than the bound.
    const messages = Array.from({ length: 30 }, (_, i) => ({
      role: "user",
      content: `Log ${i}: ${"the build step printed a long line of output again. ".repeat(58)}`,
      dia_id: `D1:${i}`,
    }));
    messages.push({ role: "user", content: `Log 30: ${"x".repeat(33_000)}`, dia_id: "D1:30" });
    const seen = stub.requests.length;
    stub.maxPromptChars = 45_000;
    const res = await svc
      .request("POST", "/v1/memories?wait=true", { key, body: { user_id: "u1", conv_id: "logs", messages } })
      .finally(() => {
        stub.maxPromptChars = null;
      });
    expect(res.body.status, JSON.stringify(res.body.error)).toBe("succeeded");
    const windows = stub.requests.slice(seen).filter((c) => c.kind === "extract");
    const prompt = (c: (typeof windows)[number]) =>
      c.body.messages.find((m: any) => m.role === "user").content;
    const turnsOf = (c: (typeof windows)[number]) =>
      [...prompt(c).matchAll(/^\[D1:(\d+)\] /gm)].map((m) => Number(m[1]));
    // Every turn sent once, in order; each window under the bound but the long turn's, sent alone.
    expect(windows.flatMap(turnsOf)).toEqual(Array.from({ length: 31 }, (_, i) => i));
    expect(windows.length).toBeGreaterThan(3);
    for (const w of windows) {
      if (turnsOf(w).includes(30)) expect(turnsOf(w)).toEqual([30]);
      else expect(prompt(w).length).toBeLessThanOrEqual(32_000);
    }
    // Each turn's fact stored.
    const { rows } = await svc.deps.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND type = 'fact'",
      [orgId],
    );
    expect(rows[0]!.n).toBe(31);
  });

  it("sends the embedding model each text cut to MNEMO_EMBEDDING_MAX_CHARS, stores it whole, and caps the joined episode summary", async () => {
    const { key, orgId } = await svc.newOrg();
    // A server that refuses an input over 2,000 characters (a 512-token model on vLLM); every
    // window's summary is 1,500 characters, and a turn of 3,000 makes a fact as long.
    stub.maxEmbeddingChars = 2_000;
    stub.answers.extract = (prompt) => {
      const turns = [...prompt.matchAll(/^\[([^\]]+)\] \(([^)]*)\) (.+)$/gm)];
      return {
        facts: turns.map((m) => ({
          text: `Stub fact: ${m[3]}`,
          fact_type: "other",
          categories: [],
          source_event_ids: [m[1]],
        })),
        episode: { title: "Garden", summary: `${"The user talked about the garden. ".repeat(45)}`.trim() },
        artifacts: [],
        directives: [],
        gist: null,
      };
    };
    try {
      const long = `My garden plan: ${"tomatoes, beans and squash along the south fence; ".repeat(60)}`;
      const messages = [
        { role: "user", content: long },
        ...Array.from({ length: 119 }, (_, i) => ({ role: "user", content: `Garden note number ${i}.` })),
      ];
      const seen = stub.requests.length;
      const res = await svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: { user_id: "u1", conv_id: "garden", messages },
      });
      expect([res.body.status, res.body.error]).toEqual(["succeeded", null]);
      const sent = stub.requests
        .slice(seen)
        .filter((r) => r.kind === "embeddings")
        .flatMap((r) => r.body.input as string[]);
      expect(Math.max(...sent.map((t) => t.length))).toBe(2_000);
      const { rows } = await svc.deps.db.query<{ type: string; text: string }>(
        "SELECT type, text FROM memories WHERE org_id = $1 AND (type = 'episode' OR length(text) > 2000)",
        [orgId],
      );
      // The fact is stored whole; the episode's summary of three windows' is capped.
      expect(rows.find((r) => r.type === "fact")!.text).toBe(`Stub fact: ${long.trim()}`);
      const episode = rows.find((r) => r.type === "episode")!.text;
      expect(episode.length).toBeLessThanOrEqual(SUMMARY_MAX);
      expect(episode).toMatch(/^The user talked about the garden\..* …$/);
    } finally {
      stub.maxEmbeddingChars = null;
      delete stub.answers.extract;
    }
  });

  it("gives each text its own vector when the server lists them out of order, and refuses a zero vector", async () => {
    const { key, orgId } = await svc.newOrg();
    stub.enqueue("embeddings", { embeddings: "reversed" });
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "order" }),
    });
    expect(res.body.status).toBe("succeeded");
    // Each stored vector is the one the stub makes for the row's own embedding text (it is
    // deterministic per text): ask the stub again, one text at a time, in order.
    const { rows } = await svc.deps.db.query<{ id: string; e: string }>(
      "SELECT id::text, embedding::text AS e FROM memories WHERE org_id = $1 ORDER BY id",
      [orgId],
    );
    expect(rows.length).toBeGreaterThan(1);
    const texts = await Promise.all(
      rows.map(async (r) => embeddingText((await findMemory(svc.deps.db, orgId, r.id))!)),
    );
    const fresh = await svc.deps.providers.embedder.embed(texts);
    const close = (a: number[], b: number[]) => a.every((x, i) => Math.abs(x - b[i]!) < 1e-6);
    rows.forEach((r, i) => {
      expect([r.id, close(JSON.parse(r.e), fresh[i]!)]).toEqual([r.id, true]);
    });

    stub.enqueue("embeddings", { embeddings: "zero" });
    const zero = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "zero" }),
    });
    expect(zero.body.status).toBe("failed");
    expect(zero.body.error.message).toMatch(/embedding model returned a vector of zeros/);
  });

  it("retries a 429 and then succeeds", async () => {
    const { key } = await svc.newOrg();
    const seen = stub.requests.length;
    stub.enqueue("extract", { status: 429, headers: { "retry-after-ms": "20" } });
    const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body() });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("succeeded");
    expect(stub.requests.slice(seen).filter((c) => c.kind === "extract")).toHaveLength(2);
  });

  it("retries the job after a pause when the model is down for a moment, and it succeeds", async () => {
    const { key } = await svc.newOrg();
    const err = { status: 503, headers: { "retry-after-ms": "10" } };
    const seen = stub.requests.filter((r) => r.kind === "extract").length;
    // One attempt's three calls fail (MNEMO_LLM_MAX_RETRIES 2); the next attempt gets the model back.
    stub.enqueue("extract", err, err, err);
    const accepted = await svc.request("POST", "/v1/memories", { key, body: body({ conv_id: "down" }) });
    expect(accepted.status).toBe(202);
    const job = await terminalJob(key, accepted.body.id);
    expect(job.status).toBe("succeeded");
    expect(stub.requests.filter((r) => r.kind === "extract").length - seen).toBe(4);
    expect(logged.some((l) => l.includes("ingest attempt interrupted (model unavailable)"))).toBe(true);
  });

  it("sends max_tokens on chat calls only when MNEMO_LLM_MAX_OUTPUT_TOKENS is set", async () => {
    const { key } = await svc.newOrg();
    const extractCalls = async (conv: string) => {
      const seen = stub.requests.length;
      const res = await svc.request("POST", "/v1/memories?wait=true", { key, body: body({ conv_id: conv }) });
      expect(res.body.status).toBe("succeeded");
      return stub.requests.slice(seen).filter((r) => r.kind === "extract");
    };
    const plain = await extractCalls("no-cap");
    expect(plain).toHaveLength(1);
    expect(plain[0]!.body).not.toHaveProperty("max_tokens");
    const capped = await withConfig(svc.deps, { MNEMO_LLM_MAX_OUTPUT_TOKENS: 777 }, () =>
      extractCalls("cap"),
    );
    expect(capped).toHaveLength(1);
    expect(capped[0]!.body.max_tokens).toBe(777);
  });

  it("fails with a clear error when the model keeps failing through every attempt", async () => {
    const { key } = await svc.newOrg();
    const err = { status: 503, headers: { "retry-after-ms": "10" } };
    stub.enqueue("extract", ...Array.from({ length: 9 }, () => err));
    const accepted = await svc.request("POST", "/v1/memories", { key, body: body({ conv_id: "gone" }) });
    const job = await terminalJob(key, accepted.body.id);
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("ingest_failed");
    expect(job.error.message).toMatch(
      /kept failing \(HTTP 503\) after 3 calls\. The job gave up after 3 attempts\.$/,
    );
  }, 120_000);

  it("never quotes the API key a server's refusal repeats, in the error or its cause", async () => {
    const secret = "sk-proj-PROBESECRETabcdef1234567890XYZ";
    const { extractor, embedder } = createOpenAIProviders(
      loadConfig({ MNEMO_LLM_BASE_URL: stub.url, OPENAI_API_KEY: secret, MNEMO_EMBEDDING_DIM: "384" }),
    );
    const refused = (said: string) => ({ status: 401, body: { error: { message: said } } });
    stub.enqueue("extract", refused(`Incorrect API key provided: ${secret}. Find yours at ...`));
    const err = await extractor
      .extract({ turns: [oneTurn], path: "live", extractArtifacts: false, agentic: false, known: [] })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("HTTP 401: Incorrect API key provided: [redacted API key]");
    // Another secret the server quotes (a key of another format) is masked too.
    stub.enqueue("embeddings", refused("token ghp_abcdefghijklmnopqrstuvwxyz0123456789 is not valid here"));
    const other = await embedder.embed(["x"]).catch((e: Error) => e);
    for (const e of [err, other] as Error[]) {
      const said = `${e.message} ${(e.cause as Error | undefined)?.message ?? ""}`;
      expect(said).not.toContain(secret);
      expect(said).not.toContain("ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    }
  });

  it("a refusal that judges what was sent gives its status and code, never its message (it may quote users' text)", async () => {
    const { key } = await svc.newOrg();
    const echo = "Flagged: [0] (user) My secret word is quixotrombonequinn, call +1-555-0199-7731";
    const cases = [
      {
        refused: {
          status: 400,
          body: { error: { message: echo, type: "invalid_request_error", code: "content_filter" } },
        },
        said: "HTTP 400: content_filter, invalid_request_error",
      },
      // No identifier beside the message (a local server's validation error): the status alone.
      { refused: { status: 422, body: { detail: echo } }, said: "HTTP 422)" },
    ];
    for (const [i, c] of cases.entries()) {
      stub.enqueue("extract", c.refused);
      const res = await svc.request("POST", "/v1/memories?wait=true", {
        key,
        body: body({ conv_id: `flag${i}` }),
      });
      expect(res.body.status).toBe("failed");
      expect(res.body.error.message).toContain(`The language model (extraction) call failed (${c.said}`);
      const line = logged.find((l) => l.includes(res.body.id) && l.includes("ingest job failed"));
      expect(line).toBeDefined();
    }
    expect(logged.filter((l) => l.includes("quixotrombonequinn") || l.includes("0199-7731"))).toEqual([]);
    const { rows } = await svc.deps.db.query(
      "SELECT count(*)::int AS n FROM ingest_jobs WHERE error::text LIKE '%quixotrombone%'",
    );
    expect(rows[0].n).toBe(0);
  });

  it("says how long the server asked to wait, so the job's pause is at least that (bounded)", async () => {
    const { extractor } = createOpenAIProviders(
      loadConfig({
        MNEMO_LLM_BASE_URL: stub.url,
        OPENAI_API_KEY: "sk-test",
        MNEMO_EMBEDDING_DIM: "384",
        MNEMO_LLM_MAX_RETRIES: "0",
      }),
    );
    stub.enqueue("extract", { status: 429, headers: { "retry-after": "90" } });
    const err = await extractor
      .extract({ turns: [oneTurn], path: "live", extractArtifacts: false, agentic: false, known: [] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).retryAfterMs).toBe(90_000);
    expect(retryPauseMs(err as ProviderError, 1)).toBe(90_000);
    expect(retryPauseMs(new ProviderError("x", { retryAfterMs: 3_600_000 }), 1)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryPauseMs(new ProviderError("x"), 2)).toBe(2 * MODEL_RETRY_PAUSE_MS);
    // Also when the call's time-out ends it while the AI SDK waits out that Retry-After.
    const timed = createOpenAIProviders(
      loadConfig({
        MNEMO_LLM_BASE_URL: stub.url,
        OPENAI_API_KEY: "sk-test",
        MNEMO_EMBEDDING_DIM: "384",
        MNEMO_LLM_MAX_RETRIES: "1",
        MNEMO_LLM_TIMEOUT_MS: "1000",
      }),
    ).extractor;
    stub.enqueue("extract", { status: 429, headers: { "retry-after": "20" } });
    const cut = await timed
      .extract({ turns: [oneTurn], path: "live", extractArtifacts: false, agentic: false, known: [] })
      .catch((e: unknown) => e);
    expect([(cut as ProviderError).message, (cut as ProviderError).retryAfterMs]).toEqual([
      "The language model (extraction) kept failing (HTTP 429) until its time-out, after 1 call.",
      20_000,
    ]);
  });

  it("searches by full text when the embedding model is stuck, within MNEMO_LLM_REQUEST_TIMEOUT_MS, and leaves it alone for a while", async () => {
    const { key } = await svc.newOrg();
    const stored = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "emb" }),
    });
    expect(stored.body.status).toBe("succeeded");
    stub.enqueue("embeddings", { delayMs: 20_000 });
    await withConfig(svc.deps, { MNEMO_LLM_REQUEST_TIMEOUT_MS: 300 }, async () => {
      const t = performance.now();
      const res = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query: "cello", user_id: "u1", mode: "retrieve" },
      });
      expect(performance.now() - t).toBeLessThan(10_000);
      expect(res.status).toBe(200);
      expect(res.body.data.map((m: any) => m.text)).toContain("Stub fact: I started learning the cello.");
      // The next search does not wait on the model again: no embedding call at all.
      const seen = stub.requests.filter((r) => r.kind === "embeddings").length;
      const next = await svc.request("POST", "/v1/memories/search", {
        key,
        body: { query: "cello", user_id: "u1", mode: "retrieve" },
      });
      expect(next.status).toBe(200);
      expect(next.body.data.map((m: any) => m.text)).toContain("Stub fact: I started learning the cello.");
      expect(stub.requests.filter((r) => r.kind === "embeddings")).toHaveLength(seen);
    });
    expect(logged.some((l) => l.includes("query embedding failed"))).toBe(true);
  });

  it("a fact's new text the embedding model cannot take is 503 service_unavailable, the fact unchanged; a permanent failure invites no retry", async () => {
    const { key, orgId } = await svc.newOrg();
    const first = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "p503" }),
    });
    const fact = first.body.result.memories_created.find((m: any) => m.type === "fact");
    const err = { status: 503, headers: { "retry-after-ms": "10" } };
    stub.enqueue("embeddings", err, err, err);
    const r = await svc.request("PATCH", `/v1/memories/${fact.id}/`, {
      key,
      body: { text: "I play the viola now." },
    });
    expect([r.status, r.body.detail.code, r.headers.get("retry-after")]).toEqual([
      503,
      "service_unavailable",
      "5",
    ]);
    expect(r.body.detail.message).toMatch(
      /^The embedding model kept failing \(HTTP 503\) after 3 calls\. Retry shortly\.$/,
    );
    expect((await findMemory(svc.deps.db, orgId, fact.id))!.text).toBe(fact.text);
    // The MCP tool answers the same, not an internal error.
    const client = await httpClient({
      url: "http://mnemo.test/mcp",
      app: svc.app,
      headers: { "x-api-key": key },
    });
    try {
      stub.enqueue("embeddings", err, err, err);
      const said = await callErr(client, "update_memory", {
        memory_id: fact.id,
        text: "I play the viola now.",
      });
      expect(said).toMatch(/^Error service_unavailable: The embedding model kept failing \(HTTP 503\)/);
      // A failure that will not pass by asking again (a wrong dimension, a refused key) invites no
      // retry: no Retry-After, and the message says so, over REST and MCP.
      const wrong = {
        status: 200,
        body: {
          object: "list",
          data: [{ object: "embedding", index: 0, embedding: [1, 0, 0] }],
          model: "m",
          usage: { prompt_tokens: 1, total_tokens: 1 },
        },
      };
      const refused = { status: 401, body: { error: { message: "Incorrect API key provided" } } };
      for (const [reply, said] of [
        [wrong, "The embedding model returned 3 dimensions; MNEMO_EMBEDDING_DIM is 384."],
        [refused, "The embedding model call failed (HTTP 401: Incorrect API key provided)."],
      ] as const) {
        stub.enqueue("embeddings", reply);
        const r = await svc.request("PATCH", `/v1/memories/${fact.id}/`, {
          key,
          body: { text: "I play the viola now." },
        });
        expect([r.status, r.body.detail.code, r.headers.get("retry-after"), r.body.detail.message]).toEqual([
          503,
          "service_unavailable",
          null,
          `${said} Retrying will not help until the operator fixes the model or its configuration.`,
        ]);
        stub.enqueue("embeddings", reply);
        expect(
          await callErr(client, "update_memory", { memory_id: fact.id, text: "I play the viola now." }),
        ).toMatch(/will not help until the operator fixes the model/);
      }
      expect((await findMemory(svc.deps.db, orgId, fact.id))!.text).toBe(fact.text);
    } finally {
      await client.close();
    }
  });

  it("a call its time-out ends while it waits to retry an error answer says the HTTP status, not that the model was slow", async () => {
    const { key } = await svc.newOrg();
    const first = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "fast503" }),
    });
    const fact = first.body.result.memories_created.find((m: any) => m.type === "fact");
    // Each error answer comes at once; its Retry-After (50 s) outlasts the time-out, which fires
    // while the AI SDK waits to retry (before, that was "did not answer in time", the 503 lost).
    // The time-outs (2 s) only need to outlast an answer from this process's stub.
    stub.enqueue("embeddings", { status: 503, headers: { "retry-after-ms": "50000" } });
    const patched = await withConfig(svc.deps, { MNEMO_LLM_REQUEST_TIMEOUT_MS: 2000 }, () =>
      svc.request("PATCH", `/v1/memories/${fact.id}/`, { key, body: { text: "I play the viola now." } }),
    );
    expect([patched.status, patched.headers.get("retry-after"), patched.body.detail.message]).toEqual([
      503,
      "5",
      "The embedding model kept failing (HTTP 503) until its time-out, after 1 call. Retry shortly.",
    ]);
    // A job's chat model rate-limited: the attempt ends (the job is tried again), the log says 429.
    // The time-out is set before the job is accepted: a worker that took the job first made its
    // call with the default time-out, waited out the 50 s and succeeded with nothing to log.
    // Its Retry-After (4 s) outlasts the time-out too: the job's next attempt waits that long, not
    // the plain pause (200 ms here), which called a rate-limited server earlier than it asked.
    stub.enqueue("extract", { status: 429, headers: { "retry-after-ms": "4000" } });
    const { accepted, job } = await withConfig(svc.deps, { MNEMO_LLM_TIMEOUT_MS: 2000 }, async () => {
      const accepted = await svc.request("POST", "/v1/memories", { key, body: body({ conv_id: "fast429" }) });
      return { accepted, job: await terminalJob(key, accepted.body.id) };
    });
    expect(job.status).toBe("succeeded");
    const line = logged.find((l) => l.includes(accepted.body.id) && l.includes("ingest attempt interrupted"));
    expect(line).toMatch(
      /The language model \(extraction\) kept failing \(HTTP 429\) until its time-out, after 1 call\./,
    );
    expect(JSON.parse(line!).retryInMs).toBe(4000);
    // A search's context selection too: the deterministic block answers, and the log says 500.
    stub.enqueue("other", { status: 500, headers: { "retry-after-ms": "50000" } });
    const seen = logged.length;
    const search = await withConfig(svc.deps, { MNEMO_LLM_REQUEST_TIMEOUT_MS: 2000 }, () =>
      svc.request("POST", "/v1/memories/search", {
        key,
        body: { user_id: "u1", query: "cello", mode: "compose" },
      }),
    );
    expect([search.status, search.body.context_selection_applied]).toEqual([200, false]);
    const selection = logged.slice(seen).find((l) => l.includes("context selection failed"));
    expect(selection).toMatch(
      /The language model \(context selection\) kept failing \(HTTP 500\) until its time-out, after 1 call\./,
    );
  }, 60_000);

  it("fails the job saying which when an answer lacks the embeddings or the choice it should hold", async () => {
    const { key } = await svc.newOrg();
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    stub.enqueue("embeddings", { status: 200, body: { object: "list", data: [], model: "m", usage } });
    const noVectors = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "no-vectors" }),
    });
    expect([noVectors.body.status, noVectors.body.error?.message]).toEqual([
      "failed",
      "The embedding model returned an invalid answer: Expected 3 embeddings, but received 0.",
    ]);
    const completion = { id: "c", object: "chat.completion", created: 0, model: "m", choices: [], usage };
    stub.enqueue("extract", { status: 200, body: completion });
    const noChoice = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "no-choice" }),
    });
    expect([noChoice.body.status, noChoice.body.error?.message]).toEqual([
      "failed",
      "The language model (extraction) returned an invalid answer: Response did not contain any choices.",
    ]);
  });

  it("a fact's new text is embedded before its transaction: a slow model holds no lock", async () => {
    const { key } = await svc.newOrg();
    const first = await svc.request("POST", "/v1/memories?wait=true", { key, body: body() });
    const fact = first.body.result.memories_created.find((m: any) => m.type === "fact");
    // The patch's embedding takes 6 s; an ingest of the same user, sent while it waits, must not
    // wait for it (before, the embedding ran inside the patch's transaction, under the user's
    // ingest lock, and on the embedded database under every other statement too). At 3 s the
    // ingest itself once took longer, on a loaded machine (PostgreSQL pass, load average 10).
    stub.enqueue("embeddings", { delayMs: 6000 });
    const order: string[] = [];
    const patching = svc
      .request("PATCH", `/v1/memories/${fact.id}/`, { key, body: { text: "I play the viola now." } })
      .then((r) => {
        order.push("patch");
        return r;
      });
    // The ingest goes once the model holds the patch's embedding (so that the slow reply is its).
    await waitFor(async () =>
      stub.requests.some((q) => q.kind === "embeddings" && JSON.stringify(q.body.input).includes("viola")),
    );
    const ingest = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "c2", messages: [{ role: "user", content: "I moved to Bergen." }] }),
    });
    order.push("ingest");
    const patched = await patching;
    expect(ingest.body.status).toBe("succeeded");
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.memory).toBe("I play the viola now.");
    expect(order).toEqual(["ingest", "patch"]);
  });

  it("tags with the model's classification: catch-all plus matched prompted groups, personal none", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    const music = await seedGroup(svc.deps, orgId, { prompt: "music lessons" });
    const other = await seedGroup(svc.deps, orgId, { prompt: "cooking" });
    // memories are [episode, fact 1, fact 2] in that order
    stub.enqueue("classify", {
      json: {
        results: [
          { index: 0, verdict: "personal", matched_group_ids: [music] },
          { index: 1, verdict: "shareable", matched_group_ids: [music, "grp_unknown"] },
        ],
      },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ group_ids: [all, music, other] }),
    });
    expect(res.body.status).toBe("succeeded");
    const created = res.body.result.memories_created;
    const rows = await Promise.all(created.map((m: any) => findMemory(svc.deps.db, orgId, m.id)));
    const episode = rows.find((r) => r!.type === "episode")!;
    expect(episode.group_ids).toEqual([]);
    const tagged = rows.filter((r) => r!.group_ids.length > 0);
    expect(tagged).toHaveLength(1);
    expect([...tagged[0]!.group_ids].sort()).toEqual([all, music].sort());
    // index 2 got no verdict: fails closed
    expect(rows.filter((r) => r!.group_ids.length === 0)).toHaveLength(created.length - 1);
  });

  it("masks the secrets a model puts together from the turns in all it writes, and keeps those memories personal", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    // No turn holds a secret the redactor reads: the model assembles them, as any model does.
    const messages = [
      { role: "user", content: "What password should I set for the staging DB?" },
      { role: "assistant", content: "How about Tr0ub4dor&3x ?" },
      { role: "user", content: "OK, done, I set it." },
      { role: "user", content: "My stripe live key starts sk_live_51HxYzAbCd and ends EfGhIjKlMnOpQr" },
      { role: "assistant", content: "Got it." },
    ];
    const fact = (text: string, ids: string[]) => ({
      text,
      fact_type: "other",
      categories: [],
      source_event_ids: ids,
    });
    stub.enqueue("extract", {
      json: {
        facts: [
          fact("The user's staging database password is Tr0ub4dor&3x.", ["0", "1", "2"]),
          fact("The user's Stripe key is sk_live_51HxYzAbCdEfGhIjKlMnOpQr.", ["3", "4"]),
          fact("The user set up a staging database.", ["0", "2"]),
        ],
        episode: {
          title: "Stripe key sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
          summary: "The user's password is hunter2x and their AWS key is AKIAIOSFODNN7EXAMPLE.",
        },
        artifacts: [
          {
            title: "staging.env",
            summary: "The staging database's URL",
            rationale: null,
            content: "DATABASE_URL=postgres://admin:s3cretpw@db.internal/app",
            source_event_ids: ["2"],
          },
        ],
        directives: [
          {
            type: "lesson",
            text: "Always export PGPASSWORD=supersecret99 before running migrations.",
            trigger_entities: ["PGPASSWORD=supersecret99"],
            steps: null,
            source_event_ids: ["2"],
          },
        ],
        gist: null,
      },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: { user_id: "u1", conv_id: "secrets", messages, extract_artifacts: true, group_ids: [all] },
    });
    expect(res.body.status).toBe("succeeded");
    const { rows } = await svc.deps.db.query<{
      type: string;
      text: string;
      details: any;
      group_ids: string[];
      full_content: string | null;
    }>(
      "SELECT type, text, details, group_ids, full_content, trigger_entities FROM memories WHERE org_id = $1",
      [orgId],
    );
    const stored = JSON.stringify(rows);
    for (const secret of [
      "Tr0ub4dor",
      "sk_live_51Hx",
      "hunter2x",
      "AKIAIOSFODNN7EXAMPLE",
      "s3cretpw",
      "supersecret99",
    ])
      expect([secret, stored.includes(secret)]).toEqual([secret, false]);
    const facts = rows.filter((r) => r.type === "fact");
    expect(Object.fromEntries(facts.map((r) => [r.text, r.group_ids]))).toEqual({
      "The user's staging database password is [redacted password].": [],
      "The user's Stripe key is [redacted Stripe key].": [],
      "The user set up a staging database.": [all],
    });
    const episode = rows.find((r) => r.type === "episode")!;
    expect([episode.details.title, episode.text]).toEqual([
      "Stripe key [redacted Stripe key]",
      "The user's password is [redacted password] and their AWS key is [redacted AWS access key].",
    ]);
    expect(rows.find((r) => r.type === "lesson")!.text).toBe(
      "Always export PGPASSWORD=[redacted secret] before running migrations.",
    );
    expect(rows.find((r) => r.type === "artifact")!.full_content).toBe(
      "DATABASE_URL=postgres://admin:[redacted password]@db.internal/app",
    );
    // MNEMO_REDACT_SECRETS=false keeps what the model wrote, as it keeps the messages.
    const { extractor } = createOpenAIProviders(
      loadConfig({ MNEMO_LLM_BASE_URL: stub.url, OPENAI_API_KEY: "sk-test", MNEMO_REDACT_SECRETS: "false" }),
    );
    stub.enqueue("extract", {
      json: {
        facts: [fact("The user's staging database password is Tr0ub4dor&3x.", ["0"])],
        episode: { title: "t", summary: "s" },
        artifacts: [],
        directives: [],
        gist: null,
      },
    });
    const kept = await extractor.extract({
      turns: [oneTurn],
      path: "live",
      extractArtifacts: false,
      agentic: false,
      known: [],
    });
    expect(kept.facts.map((f) => f.text)).toEqual(["The user's staging database password is Tr0ub4dor&3x."]);
  });

  it("keeps the extraction when the classifier answers nothing usable: stored untagged (personal)", async () => {
    const { key, orgId } = await svc.newOrg();
    const all = await seedGroup(svc.deps, orgId, { prompt: null });
    stub.enqueue("classify", {
      json: { results: [{ index: 0, verdict: "persönlich", matched_group_ids: [] }] },
    });
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: body({ conv_id: "unclassified", group_ids: [all] }),
    });
    expect(res.body.status).toBe("succeeded");
    const created = res.body.result.memories_created;
    expect(created.length).toBeGreaterThan(0);
    const rows = await Promise.all(created.map((m: any) => findMemory(svc.deps.db, orgId, m.id)));
    expect(rows.map((r) => r!.group_ids)).toEqual(rows.map(() => []));
    expect(logged.some((l) => l.includes("classification failed"))).toBe(true);
  });
});
