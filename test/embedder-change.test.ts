import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reembedAll } from "../src/admin/reembed.js";
import { loadConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { embeddingText } from "../src/memories/write.js";
import { createOpenAIProviders } from "../src/providers/openai.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { migratedDataDir, runMnemo } from "./helpers/process.js";
import { type StubOpenAI, startStubOpenAI } from "./helpers/stub-openai.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";

let svc: TestService;
let stub: StubOpenAI;
beforeAll(async () => {
  stub = await startStubOpenAI({ dim: TEST_EMBEDDING_DIM });
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
  await stub?.close();
});

const recorded = async () =>
  (await svc.deps.db.query<{ value: string }>("SELECT value FROM settings WHERE key = 'embedder'")).rows[0]
    ?.value;

describe("changing the embedding model", () => {
  it("refuses a process of another embedder while the database holds vectors; admin reembed makes them again", async () => {
    const db = svc.deps.db;
    const dim = TEST_EMBEDDING_DIM;
    const model = createOpenAIProviders(
      loadConfig({
        MNEMO_LLM_BASE_URL: stub.url,
        OPENAI_API_KEY: "sk-test",
        MNEMO_EMBEDDING_DIM: String(dim),
      }),
    ).embedder;
    expect(model.name).toBe("openai:text-embedding-3-small");
    // The service started on the local embedder, and recorded it.
    expect(await recorded()).toBe("local-hash");
    // No vectors yet: another embedder is taken, and back again.
    await migrate(db, { embeddingDim: dim, embedder: model.name });
    expect(await recorded()).toBe(model.name);
    await migrate(db, { embeddingDim: dim, embedder: "local-hash" });
    expect(await recorded()).toBe("local-hash");

    const { key, orgId } = await svc.newOrg();
    const res = await svc.request("POST", "/v1/memories?wait=true", {
      key,
      body: {
        user_id: "u1",
        conv_id: "c1",
        messages: [
          { role: "user", content: "I am allergic to peanuts and shellfish." },
          { role: "user", content: "My favourite band is Radiohead." },
        ],
      },
    });
    expect(res.body.status).toBe("succeeded");
    // Vectors of the local embedder are stored: a process of the model is refused, saying why and
    // what to do.
    await expect(migrate(db, { embeddingDim: dim, embedder: model.name })).rejects.toThrow(
      /vectors were made by the embedder local-hash, and this process is configured for openai:text-embedding-3-small[\s\S]*admin reembed/,
    );
    expect(await recorded()).toBe("local-hash");

    const { rows: before } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memories WHERE embedding IS NOT NULL",
    );
    const done = await reembedAll(db, model);
    expect(done.embedder).toBe(model.name);
    expect(done.memories).toBeGreaterThanOrEqual(before[0]!.n);
    expect(await recorded()).toBe(model.name);
    // Every vector is now the model's, for the text it is made from.
    const { rows } = await db.query<{
      type: "fact" | "episode";
      text: string;
      details: Record<string, unknown>;
      context: string | null;
      embedding: string;
    }>("SELECT type, text, details, context, embedding::text FROM memories WHERE org_id = $1", [orgId]);
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const want = await model.embed(rows.map(embeddingText));
    rows.forEach((r, i) => {
      const got = JSON.parse(r.embedding) as number[];
      expect(got.map((x) => x.toFixed(4))).toEqual(want[i]!.map((x) => x.toFixed(4)));
    });
    // The model's process starts; the local embedder's is the one refused now.
    await expect(migrate(db, { embeddingDim: dim, embedder: model.name })).resolves.toMatchObject({
      applied: [],
    });
    await expect(migrate(db, { embeddingDim: dim, embedder: "local-hash" })).rejects.toThrow(
      /made by the embedder openai:text-embedding-3-small/,
    );
    // Leave the service's database as its process expects it.
    await reembedAll(db, svc.deps.providers.embedder);
    expect(await recorded()).toBe("local-hash");
  });

  it("admin reembed runs through the command line with the configured embedder", async () => {
    const dir = migratedDataDir("mn-reembed-");
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    const env = {
      MNEMO_DATA_DIR: dir,
      ...(serverDb ? { DATABASE_URL: serverDb.url } : {}),
      MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
      MNEMO_LLM_BASE_URL: stub.url,
      OPENAI_API_KEY: "sk-test",
    };
    try {
      const r = await runMnemo(["admin", "reembed", "--json"], env);
      expect([r.code, JSON.parse(r.stdout)]).toEqual([
        0,
        { memories: 0, embedder: "openai:text-embedding-3-small" },
      ]);
    } finally {
      await serverDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
