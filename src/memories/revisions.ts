import { mayReadRow } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { artifactVersionRows, findMemory, supersedeChainRows } from "../db/memories.js";
import type { MemoryRow } from "../db/memory-row.js";
import { memoryNotFound } from "./get.js";
import type { MemoryList } from "./list.js";
import { toWire } from "./model.js";

/**
 * The revision chain of a memory, oldest first, in one page. Facts: the supersede chain through
 * the row in both directions, ending quietly where a link was deleted. Artifacts: every version
 * sharing the row's root (v1's id). Episodes and directives: just the row.
 */
export async function listRevisions({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { id: string };
}): Promise<MemoryList> {
  const orgId = ctx.principal.orgId;
  const row = await findMemory(ctx.db, orgId, input.id);
  if (!row || !mayReadRow(ctx.principal, row)) throw memoryNotFound(input.id);
  let rows: MemoryRow[];
  if (row.type === "fact" || row.type === "lesson") {
    rows = await supersedeChainRows(ctx.db, orgId, row.id, row.type);
  } else if (row.type === "artifact") {
    const root =
      typeof row.details?.root_id === "string" && row.details.root_id ? row.details.root_id : row.id;
    rows = await artifactVersionRows(ctx.db, orgId, root);
    // A row whose root_id names nothing it can reach still answers with itself.
    if (!rows.some((r) => r.id === row.id)) rows = [row];
  } else {
    rows = [row];
  }
  // A chain can cross users (a shared row superseded by a personal one): show only readable rows.
  rows = rows.filter((r) => mayReadRow(ctx.principal, r));
  return {
    object: "list",
    data: rows.map((r) => toWire(r, { fullContent: true })),
    has_more: false,
    next_cursor: null,
  };
}
