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

export async function findGroup(db: Queryable, orgId: string, id: string): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>(
    `SELECT ${GROUP_COLUMNS} FROM groups WHERE id = $2 AND org_id = $1`,
    [orgId, id],
  );
  return rows[0];
}

/** Same, locked for the rest of the transaction. */
export async function lockGroup(db: Queryable, orgId: string, id: string): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>(
    `SELECT ${GROUP_COLUMNS} FROM groups WHERE id = $2 AND org_id = $1 FOR UPDATE`,
    [orgId, id],
  );
  return rows[0];
}

export async function listGroupRows(
  db: Queryable,
  orgId: string,
  includeArchived: boolean,
): Promise<GroupRow[]> {
  const { rows } = await db.query<GroupRow>(
    `SELECT ${GROUP_COLUMNS} FROM groups
     WHERE org_id = $1 AND ($2::boolean OR status = 'active')
     ORDER BY created_at, id`,
    [orgId, includeArchived],
  );
  return rows;
}

/**
 * Serialises quota-sensitive changes of one organisation's groups (create, un-archive) by locking
 * its row, so two concurrent creates cannot both pass the active-group count.
 */
export async function lockOrgGroups(db: Queryable, orgId: string): Promise<void> {
  await db.query("SELECT 1 FROM organisations WHERE id = $1 FOR UPDATE", [orgId]);
}

export async function countActiveGroups(db: Queryable, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM groups WHERE org_id = $1 AND status = 'active'",
    [orgId],
  );
  return rows[0]!.n;
}

export async function insertGroup(
  db: Queryable,
  g: { id: string; orgId: string; name: string; prompt: string | null },
): Promise<GroupRow> {
  const { rows } = await db.query<GroupRow>(
    `INSERT INTO groups (id, org_id, name, prompt) VALUES ($1, $2, $3, $4) RETURNING ${GROUP_COLUMNS}`,
    [g.id, g.orgId, g.name, g.prompt],
  );
  return rows[0]!;
}

export async function updateGroupRow(
  db: Queryable,
  orgId: string,
  id: string,
  fields: { name: string; prompt: string | null; status: "active" | "archived" },
): Promise<GroupRow | undefined> {
  const { rows } = await db.query<GroupRow>(
    `UPDATE groups SET name = $3, prompt = $4, status = $5, updated_at = now()
     WHERE id = $2 AND org_id = $1 RETURNING ${GROUP_COLUMNS}`,
    [orgId, id, fields.name, fields.prompt, fields.status],
  );
  return rows[0];
}
