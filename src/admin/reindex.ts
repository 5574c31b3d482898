import type { Db } from "../db/db.js";
import { getOrg } from "../db/orgs.js";
import { memoryIdsPage, reindexText } from "../db/transfer.js";
import { CoreError } from "../errors.js";

/** Memories re-derived per statement (and transaction). */
const PAGE = 1000;

/**
 * `admin reindex-text`: every memory of an organisation gets its full-text columns derived again
 * (the tsvector from `mnemo_memory_tsv`, and the BM25 vector against the organisation's
 * statistics), as after replacing that function. PAGE rows a statement, each its own transaction,
 * in created order, so no statement holds the embedded database's one session for long (each row
 * is written again, with an entry in every index of `memories`: 2-40 ms a row in a scale probe).
 */
export async function reindexOrgText(
  db: Db,
  orgId: string,
  onRows: (n: number) => void = () => {},
  pageSize = PAGE,
): Promise<{ memories: number }> {
  if (!(await getOrg(db, orgId))) throw new CoreError("not_found", `Organisation ${orgId} does not exist.`);
  let after: { at: string; id: string } | null = null;
  let memories = 0;
  for (;;) {
    const page = await memoryIdsPage(db, orgId, after, pageSize);
    if (page.length === 0) break;
    await reindexText(
      db,
      orgId,
      page.map((r) => r.id),
    );
    memories += page.length;
    onRows(page.length);
    const last = page.at(-1)!;
    after = { at: last.at, id: last.id };
  }
  return { memories };
}
