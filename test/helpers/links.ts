import type { Queryable } from "../../src/db/db.js";

/**
 * How many of an organisation's episode fact ids, and how many of its facts' neighbour links
 * (details.episode_near), name no stored memory: [episode fact ids, neighbour links].
 */
export async function danglingLinks(db: Queryable, orgId: string): Promise<number[]> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM memories e, jsonb_array_elements_text(e.details -> 'fact_ids') f(id)
     WHERE e.org_id = $1 AND e.type = 'episode' AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = f.id::uuid)
     UNION ALL
     SELECT count(*)::int FROM memories m, jsonb_each_text(m.details -> 'episode_near') n(k, id)
     WHERE m.org_id = $1 AND m.type = 'fact' AND NOT EXISTS (SELECT 1 FROM memories x WHERE x.id = n.id::uuid)`,
    [orgId],
  );
  return rows.map((r) => r.n);
}
