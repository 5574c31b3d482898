import { type Db, type Queryable, withSnapshot } from "../db/db.js";
import { getOrg } from "../db/orgs.js";
import { countMemories, exportGroups, exportMemoriesPage, exportWebhook } from "../db/transfer.js";
import { CoreError } from "../errors.js";
import type { Embedder } from "../providers/types.js";

export const EXPORT_FORMAT = "mnemo-export";
export const EXPORT_VERSION = 1;
const PAGE = 500;

/** The first line of an export: what it holds and how its vectors were made. */
export interface ExportHeader {
  kind: "header";
  format: typeof EXPORT_FORMAT;
  version: number;
  /** `origin` and `idp_linked_at`: whether identity-provider tokens may enter it (sql/073). */
  org: { id: string; name: string; tier: string; origin: string; idp_linked_at: string | null };
  user_id: string | null;
  embedding: { dim: number; embedder: string };
}

/**
 * Writes one organisation (or one user's memories in it) as JSON lines: a header, its groups, its
 * memories with every field (embeddings included; revision links are the memories' own
 * `supersedes` and `details.root_id`), and its webhook config without the secret. Same data, same
 * bytes: rows in a stable order, timestamps in UTC at microsecond precision, no export time.
 *
 * Everything is read in one snapshot: a supersede or a delete committed while the export runs is
 * either wholly in the file or not at all (page by page, a chain could be caught half-way). Except
 * with `paged`, for an embedded database served by another process: there a snapshot is a
 * transaction holding the database's one session, and every request of the server waited for the
 * whole export (7 min 23 s for 157,560 memories in a scale probe, requests answered 503). Paged,
 * each page of 500 is one statement and the server's requests run between pages; a write
 * committed meanwhile may be seen in part (a fact superseded during the export can be in the file
 * as active beside the fact that supersedes it, which import marks superseded), and groups created
 * meanwhile come after the memories.
 */
export async function exportOrg(
  db: Db,
  embedder: Pick<Embedder, "name" | "dim">,
  input: { orgId: string; userId?: string | undefined; paged?: boolean | undefined },
  write: (line: string) => Promise<void>,
  onProgress: (total: number) => (n: number) => void = () => () => {},
): Promise<{ groups: number; memories: number; webhook: boolean }> {
  // What the export reads from: one snapshot, or (paged) the pool, each statement on its own.
  const read = <T>(fn: (from: Queryable) => Promise<T>) => (input.paged ? fn(db) : withSnapshot(db, fn));
  return read(async (from) => {
    const org = await getOrg(from, input.orgId);
    if (!org) throw new CoreError("not_found", `Organisation ${input.orgId} does not exist.`);
    const userId = input.userId ?? null;
    const header: ExportHeader = {
      kind: "header",
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      org: {
        id: org.id,
        name: org.name,
        tier: org.tier,
        origin: org.origin,
        idp_linked_at: org.idp_linked_at?.toISOString() ?? null,
      },
      user_id: userId,
      embedding: { dim: embedder.dim, embedder: embedder.name },
    };
    await write(JSON.stringify(header));
    const groups = await exportGroups(from, org.id);
    for (const g of groups) await write(JSON.stringify({ kind: "group", ...g }));

    const tick = onProgress(await countMemories(from, org.id, userId));
    let after: { at: string; id: string } | null = null;
    let memories = 0;
    for (;;) {
      const page = await exportMemoriesPage(from, { orgId: org.id, userId, after, limit: PAGE });
      for (const m of page) await write(JSON.stringify({ kind: "memory", ...m }));
      memories += page.length;
      tick(page.length);
      const last = page.at(-1);
      if (!last || page.length < PAGE) break;
      after = { at: last.created_at, id: last.id };
    }
    let groupCount = groups.length;
    if (input.paged) {
      // Groups created while the pages were read: a memory of a later page may carry one.
      const written = new Set(groups.map((g) => g.id));
      for (const g of await exportGroups(from, org.id)) {
        if (written.has(g.id)) continue;
        await write(JSON.stringify({ kind: "group", ...g }));
        groupCount++;
      }
    }
    // The organisation's receiver is no part of one user's data: imported into another
    // organisation, it would be sent every event of that one.
    const hook = userId === null ? await exportWebhook(from, org.id) : null;
    if (hook) await write(JSON.stringify({ kind: "webhook", ...hook }));
    return { groups: groupCount, memories, webhook: Boolean(hook) };
  });
}
