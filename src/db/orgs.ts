import type { Queryable } from "./db.js";

export interface OrgRow {
  id: string;
  name: string;
  tier: string;
  /** `identity_provider` when a token created it, else `operator`. */
  origin: "operator" | "identity_provider";
  /** Set when the operator allowed identity-provider tokens into an operator organisation. */
  idp_linked_at: Date | null;
  created_at: Date;
}

const ORG_COLS = "id, name, tier, origin, idp_linked_at, created_at";

export async function insertOrg(
  db: Queryable,
  org: { id: string; name: string; tier?: string; origin?: OrgRow["origin"]; idpLinkedAt?: string | null },
): Promise<OrgRow> {
  const { rows } = await db.query<OrgRow>(
    `INSERT INTO organisations (id, name, tier, origin, idp_linked_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${ORG_COLS}`,
    [org.id, org.name, org.tier ?? "default", org.origin ?? "operator", org.idpLinkedAt ?? null],
  );
  return rows[0]!;
}

export async function insertOrgIfMissing(
  db: Queryable,
  org: { id: string; name: string; origin?: OrgRow["origin"] },
): Promise<boolean> {
  const { rowCount } = await db.query(
    "INSERT INTO organisations (id, name, origin) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
    [org.id, org.name, org.origin ?? "operator"],
  );
  return rowCount === 1;
}

/**
 * Deletes organisation `id` (and, by cascade, all it holds) if its only key is the one hashed
 * `keyHash`: a first start's organisation, taken back when that start fails (src/auth/bootstrap.ts).
 */
export async function deleteOrgWithOnlyKey(db: Queryable, id: string, keyHash: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM organisations o WHERE o.id = $1
       AND EXISTS (SELECT 1 FROM api_keys k WHERE k.org_id = o.id AND k.key_hash = $2)
       AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.org_id = o.id AND k.key_hash <> $2)`,
    [id, keyHash],
  );
  return rowCount === 1;
}

export async function getOrg(db: Queryable, id: string): Promise<OrgRow | undefined> {
  const { rows } = await db.query<OrgRow>(`SELECT ${ORG_COLS} FROM organisations WHERE id = $1`, [id]);
  return rows[0];
}

/** Lets identity-provider tokens into an organisation (or, with `linked` false, no longer). */
export async function setOrgIdpLink(db: Queryable, id: string, linked: boolean): Promise<OrgRow | undefined> {
  const { rows } = await db.query<OrgRow>(
    `UPDATE organisations SET idp_linked_at = CASE WHEN $2::boolean THEN coalesce(idp_linked_at, now()) END
     WHERE id = $1 RETURNING ${ORG_COLS}`,
    [id, linked],
  );
  return rows[0];
}
