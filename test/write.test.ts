import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemCtx } from "../src/context.js";
import { findMemory } from "../src/db/memories.js";
import { toWire } from "../src/memories/model.js";
import { writeMemories } from "../src/memories/write.js";
import { startTestService, type TestService } from "./helpers/harness.js";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ workers: false });
});
afterAll(async () => {
  await svc?.stop();
});

describe("core write", () => {
  it("stores, embeds and maps memories; a repeated write key is skipped", async () => {
    const { orgId } = await svc.newOrg();
    const ctx = systemCtx(svc.deps, orgId, "t1");
    const input = () => [
      {
        type: "fact" as const,
        text: "Alice likes tea",
        user_id: "u1",
        conv_id: "c1",
        job_id: "job_x",
        write_key: "f0",
        details: { fact_type: "preference" },
      },
      {
        type: "artifact" as const,
        text: "A script",
        user_id: "u1",
        full_content: "print(1)",
        job_id: "job_x",
        write_key: "a0",
        details: { title: "script.py", version: 1 },
      },
    ];
    const rows = await writeMemories(ctx, input());
    expect(rows).toHaveLength(2);
    const again = await writeMemories(ctx, input());
    expect(again).toHaveLength(0);
    const fact = await findMemory(svc.deps.db, orgId, rows[0]!.id);
    const wire = toWire(fact!);
    expect(wire).toMatchObject({
      type: "fact",
      text: "Alice likes tea",
      user_id: "u1",
      score: null,
      group_ids: [],
    });
    expect(wire.details).toMatchObject({ fact_type: "preference", status: "active", supersedes: null });
    const art = toWire((await findMemory(svc.deps.db, orgId, rows[1]!.id))!, { fullContent: true });
    expect(art.details).toMatchObject({ title: "script.py", full_content: "print(1)", version: 1 });
    const { rows: emb } = await svc.deps.db.query(
      "SELECT vector_dims(embedding) AS d FROM memories WHERE id = $1",
      [rows[0]!.id],
    );
    expect(emb[0].d).toBe(svc.deps.config.MNEMO_EMBEDDING_DIM);
  });
});
