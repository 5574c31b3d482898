import type { Ctx } from "../context.js";
import { memoryProvenance } from "../db/memories.js";
import { getMemory, memoryNotFound } from "./get.js";
import type { Memory } from "./model.js";

/** A memory with what the console shows beside it: whether it is embedded and which job wrote it. */
export async function inspectMemory({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { id: string };
}): Promise<{ memory: Memory; has_embedding: boolean; job_id: string | null }> {
  const memory = await getMemory({ ctx, input });
  const extra = await memoryProvenance(ctx.db, ctx.principal.orgId, input.id);
  if (!extra) throw memoryNotFound(input.id);
  return { memory, ...extra };
}
