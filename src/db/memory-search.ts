import { MEMORY_COLUMNS, type MemoryRow, type MemoryType } from "../memories/model.js";
import { type ResolvedScope, scopeSql } from "../search/scope.js";
import type { Queryable } from "./db.js";

/** A candidate from one retriever: its id and its rank-ordering value. */
export interface Candidate {
  id: string;
  value: number;
}

/** Rows that search may serve: never a superseded fact, never a failed directive. */
const SERVABLE = "(m.status IS DISTINCT FROM 'superseded') AND (m.outcome IS DISTINCT FROM 'failed')";

/**
 * The OR of the query's lexemes. `plainto_tsquery` ANDs every word, which misses nearly everything
 * for a natural-language question; the ranking below rewards rows that match more and rarer terms.
 */
const OR_TSQUERY = `(SELECT string_agg(quote_literal(l), ' | ')::tsquery
  FROM unnest(tsvector_to_array(to_tsvector('english', $1::text))) AS l)`;

/**
 * Nearest neighbours by cosine distance over the HNSW index, restricted to the scope. pgvector
 * 0.8's iterative scan keeps walking the graph until `limit` rows pass the filter (relaxed order,
 * so the outer query re-sorts); on a small scope the planner picks the exact path through the
 * b-tree scope indexes instead. Must run inside a transaction (SET LOCAL): on the embedded
 * database every connection shares one session.
 */
export async function nearestMemories(
  tx: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  vector: number[],
  limit: number,
): Promise<Candidate[]> {
  const params: unknown[] = [`[${vector.join(",")}]`, types, limit];
  const where = scopeSql(scope, params);
  await tx.query("SET LOCAL hnsw.iterative_scan = relaxed_order");
  await tx.query(`SET LOCAL hnsw.ef_search = ${Math.max(40, Math.min(1000, limit * 2))}`);
  const { rows } = await tx.query<{ id: string; dist: number }>(
    `WITH c AS MATERIALIZED (
       SELECT m.id, m.embedding <=> $1::vector AS dist FROM memories m
       WHERE ${where} AND m.type = ANY($2::text[]) AND m.embedding IS NOT NULL AND ${SERVABLE}
       ORDER BY m.embedding <=> $1::vector LIMIT $3::int)
     SELECT id, dist FROM c ORDER BY dist, id`,
    params,
  );
  return rows.map((r) => ({ id: r.id, value: 1 - Number(r.dist) }));
}

/**
 * Full-text candidates, ranked BM25-style: each matched lexeme counts by its rarity among the
 * matching rows of the scope (an IDF estimate), damped by term frequency and row length (k1 1.2,
 * b 0.3: memories are short and alike in length, and on LoCoMo b 0.3 beat the usual 0.75 by half a
 * point of recall@1).
 */
export async function textMatches(
  db: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  query: string,
  limit: number,
): Promise<Candidate[]> {
  const params: unknown[] = [query, types, limit];
  const where = scopeSql(scope, params);
  const { rows } = await db.query<{ id: string; score: number }>(
    `WITH q AS (SELECT ${OR_TSQUERY} AS q),
     hits AS (
       SELECT m.id, m.tsv, length(m.tsv)::float8 AS dl FROM memories m, q
       WHERE q.q IS NOT NULL AND m.tsv @@ q.q AND ${where} AND m.type = ANY($2::text[]) AND ${SERVABLE}
       LIMIT 5000),
     stats AS (SELECT greatest(count(*), 20)::float8 AS n, greatest(avg(dl), 1) AS avgdl FROM hits),
     terms AS (SELECT DISTINCT l FROM unnest(tsvector_to_array(to_tsvector('english', $1::text))) AS l),
     postings AS (
       SELECT h.id, h.dl, u.lexeme, coalesce(array_length(u.positions, 1), 1)::float8 AS tf
       FROM hits h, unnest(h.tsv) AS u WHERE u.lexeme IN (SELECT l FROM terms)),
     df AS (SELECT lexeme, count(*)::float8 AS df FROM postings GROUP BY lexeme)
     SELECT p.id, sum(
         ln(1 + (s.n - df.df + 0.5) / (df.df + 0.5))
         * p.tf * 2.2 / (p.tf + 1.2 * (0.7 + 0.3 * p.dl / s.avgdl))) AS score
     FROM postings p JOIN df USING (lexeme) CROSS JOIN stats s
     GROUP BY p.id ORDER BY score DESC, p.id LIMIT $3::int`,
    params,
  );
  return rows.map((r) => ({ id: r.id, value: Number(r.score) }));
}

/** The organisation's rows among `ids`, in no particular order. */
export async function memoriesByIds(db: Queryable, orgId: string, ids: string[]): Promise<MemoryRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE org_id = $1::text AND id = ANY($2::uuid[])`,
    [orgId, ids],
  );
  return rows;
}

/**
 * Directives whose trigger entities (or their base names) equal one of `keys`: one GIN probe on
 * `trigger_keys`. Failed directives are never served; a namespace narrows to itself plus the
 * global (null-namespace) ones.
 */
export async function directivesByKeys(
  db: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  keys: string[],
  namespace: string | null,
  limit: number,
): Promise<MemoryRow[]> {
  if (keys.length === 0 || types.length === 0) return [];
  const params: unknown[] = [keys, types, namespace, limit];
  const where = scopeSql(scope, params);
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories m
     WHERE m.type IN ('lesson', 'procedure') AND m.trigger_keys && $1::text[] AND m.type = ANY($2::text[])
       AND ${where} AND m.outcome IS DISTINCT FROM 'failed'
       AND ($3::text IS NULL OR m.namespace IS NULL OR m.namespace = $3::text)
     ORDER BY (m.outcome = 'resolved') DESC NULLS LAST, m.updated_at DESC, m.id LIMIT $4::int`,
    params,
  );
  return rows;
}
