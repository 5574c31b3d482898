import { withFolded } from "../fold.js";
import {
  inlineParams,
  kept,
  type Queryable,
  queryInOneTrip,
  queryPrepared,
  setLocalSql,
  type TxOptions,
} from "./db.js";
import { MEMORY_COLUMNS, type MemoryRow, type MemoryType, type RankRow } from "./memory-row.js";
import { type ResolvedScope, scopeSql } from "./scope.js";
import { usageUpsertSql } from "./usage.js";

/** A candidate from one retriever: its id and its rank-ordering value. */
export interface Candidate {
  id: string;
  value: number;
}

/**
 * A text value as a uuid, or null when it is not one: ids read out of `details` (written by the
 * service, but an import file may carry anything) must never fail a search with a cast error.
 */
const asUuid = (expr: string) =>
  `CASE WHEN ${expr} ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (${expr})::uuid END`;

/** Rows that search may serve: never a superseded fact, never a failed directive. */
const SERVABLE = "(m.status IS DISTINCT FROM 'superseded') AND (m.outcome IS DISTINCT FROM 'failed')";

/**
 * Nearest neighbours by cosine distance over the HNSW index, restricted to the scope. pgvector
 * 0.8's iterative scan keeps walking the graph until `limit` rows pass the filter (relaxed order,
 * so the outer query re-sorts); on a small scope the planner picks the exact path through the
 * b-tree scope indexes instead. Run it inside a transaction opened with hnswSettings(limit)
 * (SET LOCAL: on the embedded database every connection shares one session). A zero vector (a
 * query or memory with no content words under the local embedder) has no cosine distance (NaN):
 * such pairs are left out, here and in rankCandidates, so one cannot turn a list's scaling
 * (its minimum and maximum) into NaN for every row.
 */
export async function nearestMemories(
  tx: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  vector: number[],
  limit: number,
  settings?: TxOptions,
): Promise<Candidate[]> {
  const { text, params } = nearestSql(scope, types, vector, limit);
  const { rows } = settings
    ? await queryInOneTrip<{ id: string; dist: number }>(tx, text, params, settings)
    : await tx.query<{ id: string; dist: number }>(text, params);
  return rows.map((r) => ({ id: r.id, value: 1 - Number(r.dist) }));
}

/** The nearest-neighbour statement (nearestMemories): `id, dist`, nearest first. */
function nearestSql(
  scope: ResolvedScope,
  types: readonly MemoryType[],
  vector: number[],
  limit: number,
): { text: string; params: unknown[]; shape: string | null } {
  const params: unknown[] = [`[${vector.join(",")}]`, types, limit];
  const where = scopeSql(scope, params);
  const shape = scope.filter ? null : `near\u0000${where}`;
  const text = shaped(
    shape,
    () => `WITH c AS MATERIALIZED (
       SELECT m.id, m.embedding <=> $1::vector AS dist FROM memories m
       WHERE ${where} AND m.type = ANY($2::text[]) AND m.embedding IS NOT NULL AND ${SERVABLE}
       ORDER BY m.embedding <=> $1::vector LIMIT $3::int)
     SELECT id, dist FROM c WHERE dist <> 'NaN'::float8 ORDER BY dist, id`,
  );
  return { text, params, shape };
}

/**
 * Statement texts by shape (the scope's axes and the statement's options, never values): built
 * once and kept, so a search does not rebuild and rehash 8 KB of SQL on every call. A shape of its
 * own each time (a filter tree: key null) is built and not kept.
 */
const shapes = new Map<string, string>();
const shaped = (key: string | null, build: () => string): string =>
  key === null ? build() : kept(shapes, key, build);

/**
 * The transaction setting through which the nearest neighbours reach the ranking statement in the
 * same round trip (rankCandidates): `id:similarity` pairs, nearest first, comma-separated.
 */
const NEAR_SETTING = "mnemo.near";

/**
 * How many documents (organisation-wide document frequency, summed over the query's rarest terms)
 * full text gathers before ranking. The rarest terms carry nearly all of a BM25 score, so a row
 * matching only the common ones rarely ranks; on the synthetic 100,000-row corpus of
 * bench:search this kept 99% of the exact top 80 at a fraction of the cost. When the scope holds
 * fewer matches of the rare terms than were asked for, every term is used.
 */
const RARE_TERMS_BUDGET = 3000;
/** At most this many rows of one term set are ranked (a query made of very common words). */
const MAX_TEXT_HITS = 5000;
/**
 * The most a lexeme adds to a row's BM25 vector: a saturated term frequency tf * (k1 + 1) /
 * (tf + k1 * (...)) stays below k1 + 1 (sql/065_bm25_sparse.sql), so a row's score from a set of
 * terms is below (k1 + 1) times the sum of their IDF weights.
 */
const MAX_SATURATED_TF = 2.2;

/**
 * The full-text part of a statement, as CTEs ending in `text_hits(id, value)`: up to `limit` rows
 * of the scope ranked by BM25 (sql/065_bm25_sparse.sql). The query's IDF weights come from the
 * organisation's lexeme statistics, taken relative to the rows the query can match (N is the sum
 * of its terms' document frequencies, at least 20, at most the organisation's documents): a term
 * counts by its rarity among the matches, as the earlier scan-every-match ranking did (on LoCoMo
 * this kept R@1 3 points above IDF over the whole organisation). The score is one sparse inner
 * product per candidate, and the candidates are the rows matching the query's rarest terms (see
 * RARE_TERMS_BUDGET), so the cost follows that budget, not the number of rows matching the
 * query's common words.
 *
 * The rare terms are the query's terms by ascending frequency while the frequency before them is
 * under the budget, so the last one may be far more common than the budget (a 43,000-row word
 * after 2,000 rows of rare ones), and its rows were most of the work. The core terms stop before
 * it (those within the budget, at least the rarest); when the scope's core matches already fill
 * `limit` and the limit-th of them scores above what any row matching none of the core terms
 * could score (MAX_SATURATED_TF times the IDF of every other term), the rows of the other terms
 * cannot rank and are never read: the result is the one the rare terms give, at the cost of the
 * core ones. Otherwise the rows of the other rare terms that match no core term are added, which
 * is the rare terms' candidate set without reading the core rows twice.
 * `$q` is the query text, `$types` the types and `$limit` the row count, as parameter references.
 */
function textCtes(p: { q: string; org: string; types: string; limit: string; where: string }): string {
  const rows = `m.tsv @@ %TSQ% AND ${p.where} AND m.type = ANY(${p.types}::text[]) AND ${SERVABLE}`;
  return `terms AS (
       SELECT l AS lexeme, mnemo_lexeme_dim(l) AS dim, greatest(coalesce(sum(s.df), 0), 0)::float8 AS df
       FROM unnest(tsvector_to_array(mnemo_query_tsv(${p.q}::text))) AS l
       LEFT JOIN text_lexeme_stats s ON s.org_id = ${p.org}::text AND s.lexeme = l
       GROUP BY l),
     term_info AS (
       SELECT t.lexeme, t.dim,
         ln(1 + (c.n - least(t.df, c.n) + 0.5) / (least(t.df, c.n) + 0.5)) AS idf,
         sum(t.df) OVER w - t.df < ${RARE_TERMS_BUDGET} AS rare,
         sum(t.df) OVER w <= ${RARE_TERMS_BUDGET} OR sum(t.df) OVER w - t.df = 0 AS core
       FROM terms t,
         (SELECT greatest(least((SELECT sum(docs) FROM text_doc_stats WHERE org_id = ${p.org}::text),
            (SELECT sum(df) FROM terms)), 20)::float8 AS n) c
       WINDOW w AS (ORDER BY t.df, t.lexeme)),
     text_query AS (
       SELECT
         (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM term_info) AS every,
         (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM term_info WHERE rare AND NOT core) AS extra,
         (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM term_info WHERE core) AS core,
         (SELECT coalesce(bool_and(core OR NOT rare), true) FROM term_info) AS core_is_rare,
         (SELECT coalesce(sum(idf), 0) * ${MAX_SATURATED_TF} FROM term_info WHERE NOT core) AS rest_bound,
         (SELECT ('{' || string_agg(dim || ':' || idf, ',' ORDER BY dim) || '}/1000000000')::sparsevec
          FROM (SELECT dim, max(idf) AS idf FROM term_info GROUP BY dim) w) AS weights),
     core_hits AS MATERIALIZED (
       SELECT m.id, m.bm25 FROM memories m, text_query tq
       WHERE ${rows.replace("%TSQ%", "tq.core")} LIMIT ${MAX_TEXT_HITS}),
     core_decides AS (
       SELECT tq.core_is_rare OR coalesce(
           (SELECT -(h.bm25 <#> tq.weights) FROM core_hits h
            ORDER BY h.bm25 <#> tq.weights LIMIT 1 OFFSET ${p.limit}::int - 1) > tq.rest_bound * 1.0001 + 1e-6,
           false) AS yes
       FROM text_query tq),
     extra_hits AS MATERIALIZED (
       SELECT m.id, m.bm25 FROM memories m, text_query tq
       WHERE NOT (SELECT yes FROM core_decides) AND ${rows.replace("%TSQ%", "tq.extra")}
         AND NOT (m.tsv @@ tq.core)
       LIMIT greatest(${MAX_TEXT_HITS} - (SELECT count(*) FROM core_hits), 0)),
     base_hits AS MATERIALIZED (SELECT id, bm25 FROM core_hits UNION ALL SELECT id, bm25 FROM extra_hits),
     more_hits AS MATERIALIZED (
       SELECT m.id, m.bm25 FROM memories m, text_query tq
       WHERE (SELECT count(*) FROM base_hits) < ${p.limit}::int AND ${rows.replace("%TSQ%", "tq.every")}
         AND m.id NOT IN (SELECT id FROM base_hits)
       LIMIT ${MAX_TEXT_HITS}),
     text_hits AS MATERIALIZED (
       SELECT h.id, -(h.bm25 <#> tq.weights) AS value
       FROM (SELECT * FROM base_hits UNION ALL SELECT * FROM more_hits) h, text_query tq
       ORDER BY h.bm25 <#> tq.weights, h.id LIMIT ${p.limit}::int)`;
}

/**
 * Full-text candidates of the scope, ranked by BM25 (k1 1.2, b 0.3; see textCtes), best first.
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
  const { rows } = await db.query<{ id: string; value: number }>(
    `WITH ${textCtes({ q: "$1", types: "$2", limit: "$3", org: "$4", where })}
     SELECT id, value FROM text_hits ORDER BY value DESC, id`,
    params,
  );
  return rows.map((r) => ({ id: r.id, value: Number(r.value) }));
}

/** The iterative-scan settings of a nearest-neighbour query returning `limit` rows. */
export function hnswSettings(limit: number): Record<string, string | number> {
  return {
    "hnsw.iterative_scan": "relaxed_order",
    "hnsw.ef_search": Math.max(40, Math.min(1000, limit * 2)),
  };
}

export interface HybridInput {
  scope: ResolvedScope;
  types: readonly MemoryType[];
  query: string;
  vector: number[];
  /** Candidates taken from each retriever. */
  pool: number;
  /** Rows returned after fusion. */
  limit: number;
  /** The nearest-neighbour list's weight beside full text's 1 (see fuseScores). */
  vectorWeight: number;
  /** Counts one search in usage, in the same statement. */
  usage?: { keyId: string | null } | undefined;
  /**
   * The nearest-neighbour statement's settings (hnswSettings(pool)), SET LOCAL in the same round
   * trip. Without them, the caller has applied the settings (a transaction opened with them).
   */
  settings?: TxOptions | undefined;
}

/**
 * A fact next to a fact of the ranking in its episode: `of` is that fact, `offset` places after it
 * (negative: before it), `distance` places away.
 */
export interface EpisodeLink {
  of: string;
  offset: number;
  distance: number;
  row: RankRow;
}

/**
 * Hybrid search ranked, in ONE round trip and one implicit transaction, as three statements sent
 * together: the nearest-neighbour settings (SET LOCAL), the nearest neighbours themselves (planned
 * for their values: the scope decides between the HNSW index and an exact ordering of the scope's
 * rows), whose `id:similarity` list they leave in a transaction setting (NEAR_SETTING), and the
 * ranking statement, which plans the same whatever the values and so runs prepared with a generic
 * plan (queryPrepared): BM25 full text over the scope, the fusion exactly as fuseScores does (each
 * list min-max scaled to 0.05..1, weighted sum over the total weight, rounded to 6 places), the
 * usage count of the search, and with `linkSpan` (when facts are searched) the facts within that
 * many places of each of the first `linkFrom` ranked facts (all by default) in its episode's fact
 * order, in the scope and servable (a neighbour of several facts comes once for each). Rows come
 * as RankRows, best first.
 */
export async function rankCandidates(
  db: Queryable,
  input: HybridInput & { linkSpan?: number | undefined; linkFrom?: number | undefined },
): Promise<{ ranked: { row: RankRow; score: number }[]; links: EpisodeLink[] }> {
  const near = nearestSql(input.scope, input.types, input.vector, input.pool);
  const params: unknown[] = [input.query, input.types, input.pool, input.vectorWeight, input.limit];
  const where = scopeSql(input.scope, params);
  let usageKey: string | null = null;
  if (input.usage) {
    params.push(input.usage.keyId ?? "");
    usageKey = `$${params.length}`;
  }
  let link: { from: string; span: string } | null = null;
  if (input.linkSpan && input.types.includes("fact")) {
    params.push(input.linkFrom ?? input.limit, input.linkSpan);
    link = { from: `$${params.length - 1}`, span: `$${params.length}` };
  }
  const key = input.scope.filter ? null : `rank\u0000${where}\u0000${usageKey}\u0000${link?.from}`;
  const text = shaped(key, () => rankSql(where, usageKey, link));
  const nearToSetting = shaped(
    near.shape && `setting\u0000${near.shape}`,
    () => `SELECT set_config('${NEAR_SETTING}', coalesce((
       SELECT string_agg(n.id::text || ':' || (1 - n.dist)::text, ',' ORDER BY n.dist, n.id)
       FROM (${near.text}) n), ''), true)`,
  );
  type Row = {
    id: string;
    type: MemoryType;
    text: string;
    episode_id: string | null;
    source_role: string | null;
    score: number | null;
    link_of: string | null;
    link_offset: number | null;
  };
  const before = [...setLocalSql(input.settings), inlineParams(nearToSetting, near.params)];
  // A filter tree is a statement shape of its own each time: planned per call, never kept.
  const { rows } = input.scope.filter
    ? await queryInOneTrip<Row>(db, text, params, { before })
    : await queryPrepared<Row>(db, text, params, { before });
  const ranked: { row: RankRow; score: number }[] = [];
  const linked: EpisodeLink[] = [];
  for (const r of rows) {
    const details: Record<string, unknown> = {};
    if (r.episode_id !== null) details.episode_id = r.episode_id;
    if (r.source_role !== null) details.source_role = r.source_role;
    const row: RankRow = { id: r.id, type: r.type, text: r.text, details };
    if (r.link_of === null) ranked.push({ row, score: Number(r.score) });
    else {
      const offset = Number(r.link_offset);
      linked.push({ of: r.link_of, offset, distance: Math.abs(offset), row });
    }
  }
  return { ranked, links: linked };
}

/**
 * The ranking statement's text (see rankCandidates): `where` the scope's condition, `usageKey` the
 * parameter holding the key the search is counted for (none: not counted), `link` the parameters
 * holding how many hits bring their neighbours and how far (none: no links).
 */
function rankSql(
  where: string,
  usageKey: string | null,
  link: { from: string; span: string } | null,
): string {
  const org = "$6";
  const usage = usageKey ? `, counted AS (${usageUpsertSql(org, usageKey, { searches: 1 })})` : "";
  // An episode's details are never read here: its fact list is 120 KB for a 3,000-fact
  // conversation, and re-ranking puts an episode below its own facts, so it is rarely served.
  const rankCols = (m: string) =>
    `${m}.id, ${m}.type, ${m}.text,
       CASE WHEN ${m}.type <> 'episode' AND jsonb_typeof(${m}.details -> 'episode_id') = 'string'
         THEN ${m}.details ->> 'episode_id' END AS episode_id,
       CASE WHEN ${m}.type <> 'episode' AND jsonb_typeof(${m}.details -> 'source_role') = 'string'
         THEN ${m}.details ->> 'source_role' END AS source_role`;
  let links = "";
  let linkRows = "";
  if (link) {
    const span = `${link.span}::int`;
    // Ingest stores each fact's neighbours with it (details.episode_near: ids by offset, see
    // src/ingest/store.ts), so a hit's links come from its own row. A fact without them (an
    // import file's, or one stored before sql/093 on a table too large to backfill) is placed by
    // array_position in its episode's list, read only for an episode with such a hit. (Reading
    // the episode's list for every hit cost a long conversation's whole fact list, 120 KB for
    // 3,000 facts, decompressed by every search: half a search's time on the embedded database.)
    links = `,
     hits AS MATERIALIZED (
       SELECT m.id, ${asUuid("m.details ->> 'episode_id'")} AS episode,
         CASE WHEN jsonb_typeof(m.details -> 'episode_near') = 'object' THEN m.details -> 'episode_near' END AS near
       FROM (SELECT id FROM fused ORDER BY score DESC, id LIMIT ${link.from}::int) f
         JOIN memories m ON m.id = f.id
       WHERE m.type = 'fact' AND m.details ? 'episode_id'),
     listed AS MATERIALIZED (
       SELECT e.id AS episode, e.details -> 'fact_ids' AS fids,
         ARRAY(SELECT jsonb_array_elements_text(e.details -> 'fact_ids')) AS ids
       FROM memories e
       WHERE e.org_id = ${org}::text AND e.type = 'episode'
         AND e.id IN (SELECT episode FROM hits WHERE near IS NULL)
         AND jsonb_typeof(e.details -> 'fact_ids') = 'array'),
     links AS MATERIALIZED (
       SELECT h.id AS link_of, ${asUuid("n.value")} AS fid, n.key::int AS link_offset
       FROM hits h, jsonb_each_text(h.near) n
       WHERE n.key ~ '^-?[0-9]{1,3}$' AND n.key::int <> 0 AND abs(n.key::int) <= ${span}
         AND ${asUuid("n.value")} IS NOT NULL
       UNION ALL
       SELECT p.id, ${asUuid("p.fids ->> (p.n + d)")}, d
       FROM (SELECT h.id, l.fids, array_position(l.ids, h.id::text) - 1 AS n
             FROM hits h JOIN listed l ON l.episode = h.episode WHERE h.near IS NULL) p,
         generate_series(-${span}, ${span}) d
       WHERE d <> 0 AND p.n + d >= 0 AND ${asUuid("p.fids ->> (p.n + d)")} IS NOT NULL)`;
    // The links are computed once (MATERIALIZED) and each linked row is fetched by its id (a
    // LATERAL the planner cannot turn around): with the statistics of a table that just grew, and
    // before autovacuum's analyze, the planner otherwise walked the scope's rows and recomputed
    // every link for each one (3,009 facts, 19 hits: 5 s a search on PostgreSQL 15).
    linkRows = `
     UNION ALL
     SELECT ${rankCols("m")}, NULL::float8, l.link_of, l.link_offset
     FROM links l CROSS JOIN LATERAL (
       SELECT m.id, m.type, m.text, m.details FROM memories m
       WHERE m.id = l.fid AND ${where} AND m.type = 'fact' AND ${SERVABLE} LIMIT 1) m`;
  }
  return `WITH vector_hits AS (
       SELECT split_part(e, ':', 1)::uuid AS id, split_part(e, ':', 2)::float8 AS value
       FROM unnest(string_to_array(nullif(current_setting('${NEAR_SETTING}', true), ''), ',')) AS e),
     ${textCtes({ q: "$1", types: "$2", limit: "$3", org, where })},
     lists AS (
       SELECT id, value, $4::float8 AS weight, 1 AS list FROM vector_hits
       UNION ALL SELECT id, value, 1::float8, 2 FROM text_hits),
     scaled AS (
       SELECT id, weight, value,
         CASE WHEN max(value) OVER l = min(value) OVER l THEN min(value) OVER l - 1 ELSE min(value) OVER l END AS lo,
         coalesce(nullif(max(value) OVER l - min(value) OVER l, 0), 1) AS span
       FROM lists WINDOW l AS (PARTITION BY list)),
     fused AS (
       SELECT id, round((sum(weight * (value - lo + span * 0.05) / (span * 1.05)) / ($4::float8 + 1))::numeric, 6)
         ::float8 AS score
       FROM scaled GROUP BY id ORDER BY score DESC, id LIMIT $5::int)${usage}${links}
     SELECT ${rankCols("m")}, f.score, NULL::uuid AS link_of, NULL::int AS link_offset
     FROM fused f JOIN memories m ON m.id = f.id${linkRows}
     ORDER BY score DESC NULLS LAST, id`;
}

/**
 * The rows of `ids`, whole and in that order, read again within the scope and servable: what was
 * ranked is served only if it still may be (a fact superseded, a row deleted or a group tag removed
 * since the ranking statement read it is left out, so a search never serves what its ranking would
 * not). One prepared statement per scope shape.
 */
export async function memoriesInOrder(
  db: Queryable,
  scope: ResolvedScope,
  ids: readonly string[],
): Promise<MemoryRow[]> {
  if (ids.length === 0) return [];
  const params: unknown[] = [ids];
  const where = scopeSql(scope, params);
  const text = shaped(
    scope.filter ? null : `rows\u0000${where}`,
    () =>
      `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE m.id = ANY($1::uuid[]) AND ${where} AND ${SERVABLE}`,
  );
  const { rows } = scope.filter
    ? await db.query<MemoryRow>(text, params)
    : await queryPrepared<MemoryRow>(db, text, params);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A ranking's rows read whole (memoriesInOrder), each with its score. */
export async function servedRows(
  db: Queryable,
  scope: ResolvedScope,
  ranked: readonly { row: { id: string }; score: number }[],
): Promise<{ row: MemoryRow; score: number }[]> {
  const score = new Map(ranked.map((r) => [r.row.id, r.score]));
  const rows = await memoriesInOrder(
    db,
    scope,
    ranked.map((r) => r.row.id),
  );
  return rows.map((row) => ({ row, score: score.get(row.id)! }));
}

/**
 * Hybrid search with whole rows (rankCandidates without links, then its rows read whole): the
 * ranking before any re-ranking, as tests and benchmarks compare it.
 */
export async function hybridSearch(
  db: Queryable,
  input: HybridInput,
): Promise<{ row: MemoryRow; score: number }[]> {
  return servedRows(db, input.scope, (await rankCandidates(db, input)).ranked);
}

/**
 * Directives whose trigger entities (or their base names) equal one of `keys`, Latin accents aside
 * (`trigger_keys` holds each folded too, sql/106): one GIN probe on `trigger_keys`. Failed directives and lessons a later one reversed are never served; a namespace narrows to itself plus the
 * global (null-namespace) ones. `usage` counts one search in the same statement.
 */
export async function directivesByKeys(
  db: Queryable,
  scope: ResolvedScope,
  types: readonly MemoryType[],
  keys: string[],
  namespace: string | null,
  limit: number,
  usage?: { keyId: string | null },
): Promise<MemoryRow[]> {
  if (keys.length === 0 || types.length === 0) {
    if (usage) await db.query(usageUpsertSql("$1", "$2", { searches: 1 }), [scope.orgId, usage.keyId ?? ""]);
    return [];
  }
  const params: unknown[] = [withFolded(keys), types, namespace, limit];
  const where = scopeSql(scope, params);
  let counted = "";
  if (usage) {
    params.push(usage.keyId ?? "");
    counted = `WITH counted AS (${usageUpsertSql("$5", `$${params.length}`, { searches: 1 })}) `;
  }
  const { rows } = await db.query<MemoryRow>(
    `${counted}SELECT ${MEMORY_COLUMNS} FROM memories m
     WHERE m.type IN ('lesson', 'procedure') AND m.trigger_keys && $1::text[] AND m.type = ANY($2::text[])
       AND ${where} AND m.outcome IS DISTINCT FROM 'failed' AND m.status IS DISTINCT FROM 'superseded'
       AND ($3::text IS NULL OR m.namespace IS NULL OR m.namespace = $3::text)
     ORDER BY (m.outcome = 'resolved') DESC NULLS LAST, m.updated_at DESC, m.id LIMIT $4::int`,
    params,
  );
  return rows;
}
