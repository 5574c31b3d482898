import type { Queryable } from "./db.js";

export interface OrgRow {
  id: string;
  name: string;
  tier: string;
  created_at: Date;
}

export async function insertOrg(
  db: Queryable,
  org: { id: string; name: string; tier?: string },
): Promise<OrgRow> {
  const { rows } = await db.query<OrgRow>(
    "INSERT INTO organisations (id, name, tier) VALUES ($1, $2, $3) RETURNING id, name, tier, created_at",
    [org.id, org.name, org.tier ?? "default"],
  );
  return rows[0]!;
}

export async function insertOrgIfMissing(db: Queryable, org: { id: string; name: string }): Promise<boolean> {
  const { rowCount } = await db.query(
    "INSERT INTO organisations (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
    [org.id, org.name],
  );
  return rowCount === 1;
}

export async function getOrg(db: Queryable, id: string): Promise<OrgRow | undefined> {
  const { rows } = await db.query<OrgRow>(
    "SELECT id, name, tier, created_at FROM organisations WHERE id = $1",
    [id],
  );
  return rows[0];
}

export async function countOrgs(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM organisations");
  return rows[0]!.n;
}
