import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoriesToEmbed, reembedAll } from "../src/admin/reembed.js";
import { loadConfig } from "../src/config.js";
import { migrate } from "../src/db/migrate.js";
import { reembedMark } from "../src/db/settings.js";
import { embeddingText } from "../src/memories/write.js";
import { createOpenAIProviders } from "../src/providers/openai.js";
import { TEST_EMBEDDING_DIM } from "./helpers/constants.js";
import { startTestService, type TestService } from "./helpers/harness.js";
import { freePort, migratedDataDir, runMnemo, spawnMnemo } from "./helpers/process.js";
import { type StubOpenAI, startStubOpenAI } from "./helpers/stub-openai.js";
import { createTestDatabase, onServer } from "./helpers/test-db.js";
import { fact, seed } from "./memories-fixtures.js";

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

  it("an interrupted reembed leaves a mark: a start on either embedder is refused until a reembed completes, and a rerun resumes", async () => {
    const db = svc.deps.db;
    const dim = TEST_EMBEDDING_DIM;
    const model = createOpenAIProviders(
      loadConfig({
        MNEMO_LLM_BASE_URL: stub.url,
        OPENAI_API_KEY: "sk-test",
        MNEMO_EMBEDDING_DIM: String(dim),
        MNEMO_LLM_MAX_RETRIES: "0",
      }),
    ).embedder;
    const { orgId } = await svc.newOrg();
    await seed(
      svc,
      orgId,
      Array.from({ length: 150 }, (_, i) => fact(`Note number ${i}: my favourite thing ${i} is item${i}.`)),
    );
    const { rows: all } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM memories");
    const total = all[0]!.n;
    // The first page of 100 is made, then the model fails.
    const failing = { status: 500, body: { error: { message: "down" } } };
    stub.enqueue("embeddings", { delayMs: 0 }, failing);
    await expect(reembedAll(db, model)).rejects.toThrow(/The embedding model/);
    expect(await reembedMark(db)).toMatchObject({ to: model.name });
    expect(await recorded()).toBe("local-hash");
    for (const embedder of ["local-hash", model.name])
      await expect(migrate(db, { embeddingDim: dim, embedder })).rejects.toThrow(
        new RegExp(
          `admin reembed\` to the embedder ${model.name} started and did not finish: this database holds vectors of two models`,
        ),
      );
    // Run again with the model: only what was left is made, and the database is the model's.
    expect(await memoriesToEmbed(db, model)).toBe(total - 100);
    const done = await reembedAll(db, model);
    expect(done.memories).toBe(total - 100);
    expect(await reembedMark(db)).toBeUndefined();
    expect(await recorded()).toBe(model.name);
    await expect(migrate(db, { embeddingDim: dim, embedder: model.name })).resolves.toMatchObject({
      applied: [],
    });
    // Leave the service's database as its process expects it: a reembed of another embedder
    // than the mark's starts from the first memory.
    stub.enqueue("embeddings", failing);
    await expect(reembedAll(db, model)).rejects.toThrow(/The embedding model/);
    expect(await memoriesToEmbed(db, svc.deps.providers.embedder)).toBe(total);
    expect((await reembedAll(db, svc.deps.providers.embedder)).memories).toBe(total);
    expect(await recorded()).toBe("local-hash");
  });

  it("admin reembed refuses beside a running service, and says a model failure in one line", async () => {
    const dir = migratedDataDir("mn-reembed-");
    const serverDb = onServer() ? await createTestDatabase() : undefined;
    const database = { MNEMO_DATA_DIR: dir, ...(serverDb ? { DATABASE_URL: serverDb.url } : {}) };
    const env = {
      ...database,
      MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
      MNEMO_LLM_BASE_URL: stub.url,
      OPENAI_API_KEY: "sk-test",
      MNEMO_LLM_MAX_RETRIES: "0",
    };
    try {
      const port = await freePort();
      const key = "mnemo_test_reembed_beside_a_server_key";
      const server = spawnMnemo(["serve"], {
        ...database,
        MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
        PORT: String(port),
        HOST: "127.0.0.1",
        MNEMO_BOOTSTRAP_API_KEY: key,
      });
      try {
        await server.waitFor(/"msg":"ready"/);
        const res = await fetch(`http://127.0.0.1:${port}/v1/memories?wait=true`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({
            user_id: "u1",
            conv_id: "c1",
            messages: [{ role: "user", content: "My favourite band is Radiohead." }],
          }),
        });
        expect(((await res.json()) as { status: string }).status).toBe("succeeded");
        const seen = stub.requests.length;
        const r = await runMnemo(["admin", "reembed"], env);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /^mnemo: admin reembed: (a running Mnemo process \(pid \d+\) serves this data directory|\d+ connections? of running Mnemo processes .* use this database): stop (it|them) first/m,
        );
        expect(stub.requests.length).toBe(seen);
      } finally {
        await server.kill("SIGTERM");
      }
      // The service stopped: a model failure is one line, no stack trace, and leaves the mark.
      const refused = {
        status: 400,
        body: { error: { message: "too long", type: "invalid_request_error" } },
      };
      stub.enqueue("embeddings", refused, refused);
      const failed = await runMnemo(["admin", "reembed"], env);
      expect([failed.code, failed.stderr.trim().split("\n").at(-1)]).toEqual([
        1,
        "mnemo: admin reembed: The embedding model call failed (HTTP 400: invalid_request_error).",
      ]);
      expect(failed.stderr).not.toMatch(/\n\s+at /);
      // Any start is refused (an export embeds with the database's embedder), then a rerun finishes.
      const start = await runMnemo(["admin", "export", "--org", "org_default"], {
        ...database,
        MNEMO_EMBEDDING_DIM: String(TEST_EMBEDDING_DIM),
      });
      expect([start.code, start.stderr]).toEqual([1, expect.stringMatching(/started and did not finish/)]);
      const again = await runMnemo(["admin", "reembed", "--json"], env);
      expect([again.code, JSON.parse(again.stdout).embedder]).toEqual([0, "openai:text-embedding-3-small"]);
    } finally {
      await serverDb?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

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
