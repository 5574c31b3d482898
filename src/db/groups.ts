import type { Queryable } from "./db.js";

export interface GroupRow {
  id: string;
  org_id: string;
  name: string;
  prompt: string | null;
  status: "active" | "archived";
  created_at: Date;
  updated_at: Date;
}

export const GROUP_COLUMNS = "id, org_id, name, prompt, status, created_at, updated_at";

/** The organisation's groups among `ids` (any status); unknown and foreign ids are simply absent. */
export async function findGroupsByIds(db: Queryable, orgId: string, ids: string[]): Promise<GroupRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<GroupRow>(
    `SELECT ${GROUP_COLUMNS} FROM groups WHERE org_id = $1 AND id = ANY($2::text[])`,
    [orgId, ids],
  );
  return rows;
}
