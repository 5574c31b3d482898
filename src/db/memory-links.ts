import type { Queryable } from "./db.js";
import { MEMORY_COLUMNS, type MemoryRow, type MemoryType } from "./memory-row.js";
import { type ResolvedScope, scopeSql } from "./scope.js";

/**
 * Facts linked to `factIds` through their episode: the facts within `span` places of each in its
 * episode's fact order (the turns just before and after it), in the scope and servable. `of` is
 * the fact the neighbour was reached from, `distance` how many places away it sits; a neighbour of
 * several comes once for each.
 */
export async function episodeNeighbours(
  db: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  factIds: string[],
  span: number,
): Promise<{ of: string; distance: number; row: MemoryRow }[]> {
  if (factIds.length === 0) return [];
  const params: unknown[] = [factIds, types, span];
  const where = scopeSql(scope, params);
  const org = "$4";
  const { rows } = await db.query<MemoryRow & { link_of: string; link_distance: number }>(
    `WITH hits AS (
       SELECT f.id, (f.details ->> 'episode_id')::uuid AS episode FROM memories f
       WHERE f.org_id = ${org}::text AND f.id = ANY($1::uuid[]) AND f.details ? 'episode_id'),
     links AS (
       SELECT h.id AS link_of, x.fid::uuid AS fid, abs(x.n - me.n)::int AS link_distance
       FROM hits h
       JOIN memories e ON e.org_id = ${org}::text AND e.id = h.episode AND e.type = 'episode',
       LATERAL (SELECT y.n FROM jsonb_array_elements_text(e.details -> 'fact_ids') WITH ORDINALITY y(fid, n)
                WHERE y.fid = h.id::text LIMIT 1) me,
       LATERAL jsonb_array_elements_text(e.details -> 'fact_ids') WITH ORDINALITY x(fid, n)
       WHERE abs(x.n - me.n) BETWEEN 1 AND $3::int)
     SELECT ${MEMORY_COLUMNS.split(", ")
       .map((c) => `m.${c}`)
       .join(", ")}, l.link_of, l.link_distance
     FROM links l JOIN memories m ON m.id = l.fid
     WHERE ${where} AND m.type = ANY($2::text[])
       AND m.status IS DISTINCT FROM 'superseded' AND m.outcome IS DISTINCT FROM 'failed'`,
    params,
  );
  return rows.map(({ link_of, link_distance, ...row }) => ({
    of: link_of,
    distance: link_distance,
    row: row as MemoryRow,
  }));
}
