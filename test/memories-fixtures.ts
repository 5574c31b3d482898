import { systemCtx } from "../src/context.js";
import type { MemoryRow } from "../src/db/memory-row.js";
import { type MemoryInput, writeMemories } from "../src/memories/write.js";
import type { TestService } from "./helpers/harness.js";

/** Creates memories through the core write, as ingest does (never raw SQL). */
export function seed(svc: TestService, orgId: string, inputs: MemoryInput[]): Promise<MemoryRow[]> {
  return writeMemories(systemCtx(svc.deps, orgId, "test"), inputs);
}

export const fact = (text: string, extra: Partial<MemoryInput> = {}): MemoryInput => ({
  type: "fact",
  text,
  user_id: "u1",
  conv_id: "c1",
  ...extra,
});

export async function createGroup(
  svc: TestService,
  key: string,
  name = "g",
  prompt?: string,
): Promise<string> {
  const r = await svc.request("POST", "/v1/groups", { key, body: { name, ...(prompt ? { prompt } : {}) } });
  if (r.status !== 201) throw new Error(`group create failed: ${r.status} ${r.text}`);
  return r.body.id;
}
