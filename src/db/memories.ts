import { UUID_RE } from "../ids.js";
import type { Queryable } from "./db.js";
import { type FilterNode, filterSql } from "./filter-sql.js";
import { MEMORY_COLUMNS, MEMORY_TYPES, type MemoryRow, type MemoryType } from "./memory-row.js";
import { rewriteQueuedEvents } from "./webhooks.js";

export interface NewMemoryRow {
  id: string;
  org_id: string;
  type: MemoryType;
  text: string;
  user_id?: string | null;
  agent_id?: string | null;
  conv_id?: string | null;
  app_id?: string | null;
  group_ids?: string[];
  categories?: string[];
  details?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  status?: "active" | "superseded" | null;
  supersedes?: string | null;
  namespace?: string | null;
  trigger_entities?: string[];
  outcome?: "resolved" | "failed" | null;
  full_content?: string | null;
  content_hash?: string | null;
  job_id?: string | null;
  write_key?: string | null;
  embedding?: number[] | null;
  created_at?: Date | null;
  /** Indexed for full text, never returned: what the memory is about beyond its words (sql/090). */
  context?: string | null;
  /** Indexed at half weight, never returned: WordNet synonyms and broader terms (sql/090). */
  concepts?: string | null;
}

const toVector = (v: number[] | null | undefined) => (v ? `[${v.join(",")}]` : null);

/**
 * Inserts rows in one statement. A row whose (job_id, write_key) already exists is skipped, so a
 * retried job that writes the same keys creates nothing twice. Returns the rows actually inserted.
 */
export async function insertMemoryRows(db: Queryable, rows: NewMemoryRow[]): Promise<MemoryRow[]> {
  if (rows.length === 0) return [];
  const payload = rows.map((r) => ({
    id: r.id,
    org_id: r.org_id,
    type: r.type,
    text: r.text,
    user_id: r.user_id ?? null,
    agent_id: r.agent_id ?? null,
    conv_id: r.conv_id ?? null,
    app_id: r.app_id ?? null,
    group_ids: r.group_ids ?? [],
    categories: r.categories ?? [],
    details: r.details ?? {},
    metadata: r.metadata ?? {},
    status: r.status ?? (r.type === "fact" ? "active" : null),
    supersedes: r.supersedes ?? null,
    namespace: r.namespace ?? null,
    trigger_entities: r.trigger_entities ?? [],
    outcome: r.outcome ?? null,
    full_content: r.full_content ?? null,
    content_hash: r.content_hash ?? null,
    job_id: r.job_id ?? null,
    write_key: r.write_key ?? null,
    embedding: toVector(r.embedding),
    created_at: r.created_at?.toISOString() ?? null,
    context: r.context ?? null,
    concepts: r.concepts ?? null,
  }));
  const { rows: inserted } = await db.query<MemoryRow>(
    `INSERT INTO memories (id, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, categories,
       details, metadata, status, supersedes, namespace, trigger_entities, outcome, full_content, content_hash, job_id,
       write_key, embedding, created_at, updated_at, context, concepts)
     SELECT x.id, x.org_id, x.type, x.text, x.user_id, x.agent_id, x.conv_id, x.app_id, x.group_ids, x.categories,
       x.details, x.metadata, x.status, x.supersedes, x.namespace, x.trigger_entities, x.outcome, x.full_content,
       x.content_hash, x.job_id, x.write_key, x.embedding::vector,
       coalesce(x.created_at, now()), coalesce(x.created_at, now()), x.context, x.concepts
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id text, type text, text text, user_id text,
       agent_id text, conv_id text, app_id text, group_ids text[], categories text[], details jsonb, metadata jsonb, status text,
       supersedes uuid, namespace text, trigger_entities text[], outcome text, full_content text,
       content_hash text, job_id text, write_key text, embedding text, created_at timestamptz, context text,
       concepts text)
     ON CONFLICT (job_id, write_key) WHERE job_id IS NOT NULL DO NOTHING
     RETURNING ${MEMORY_COLUMNS}`,
    [JSON.stringify(payload)],
  );
  return inserted;
}

// ---- list, get, revisions, group patch, delete (issue 3) ----

/** The exact created_at (microseconds, UTC) as text: a JS Date would drop the microseconds. */
const CURSOR_TS = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export type MemoryListRow = MemoryRow & { cursor_ts: string };

export interface ListMemoryQuery {
  orgId: string;
  types: readonly MemoryType[];
  userId?: string | null | undefined;
  agentId?: string | null | undefined;
  convId?: string | null | undefined;
  appId?: string | null | undefined;
  groupId?: string | null | undefined;
  /** Facts' status; rows of other types count as active. */
  status?: "active" | "superseded" | null | undefined;
  /** A checked filter tree (the variant list forms). */
  filter?: FilterNode | undefined;
  order: "created_at_desc" | "created_at_asc";
  /** Keyset position: rows strictly after it in the order. */
  after?: { createdAt: string; id: string } | undefined;
  limit: number;
}

/**
 * One page of the organisation's memories, keyset-paginated on (created_at, id). The WHERE clause is
 * built from constant fragments only (values stay `$n`), so each filter combination gets a plan
 * that can use the matching (org_id, axis, created_at, id) index.
 */
export async function listMemoryRows(db: Queryable, q: ListMemoryQuery): Promise<MemoryListRow[]> {
  const { text, values } = listMemoryQuery(q);
  const { rows } = await db.query<MemoryListRow>(text, values);
  return rows;
}

/** The list statement itself (exported so the benchmark can EXPLAIN exactly what runs). */
export function listMemoryQuery(q: ListMemoryQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [q.orgId];
  const where = ["org_id = $1"];
  // Every type is no condition (the column's CHECK allows no other), so a count of an organisation
  // or a user can be answered from the b-tree alone.
  if (!MEMORY_TYPES.every((t) => q.types.includes(t))) {
    values.push(q.types);
    where.push(`type = ANY($${values.length}::text[])`);
  }
  const eq = (column: string, v: string | null | undefined) => {
    if (v === undefined || v === null) return;
    values.push(v);
    where.push(`${column} = $${values.length}`);
  };
  eq("user_id", q.userId);
  eq("agent_id", q.agentId);
  eq("conv_id", q.convId);
  eq("app_id", q.appId);
  if (q.groupId !== undefined && q.groupId !== null) {
    values.push([q.groupId]);
    where.push(`group_ids @> $${values.length}::text[]`);
  }
  // Superseded rows are few and have partial indexes of their own (sql/097); a row without a status
  // (not a fact) reads as active.
  if (q.status === "superseded") where.push("status = 'superseded'");
  else if (q.status === "active") where.push("status IS DISTINCT FROM 'superseded'");
  if (q.filter) where.push(filterSql(q.filter, values, "m"));
  const desc = q.order === "created_at_desc";
  if (q.after) {
    values.push(q.after.createdAt, q.after.id);
    const n = values.length;
    where.push(`(created_at, id) ${desc ? "<" : ">"} ($${n - 1}::timestamptz, $${n}::uuid)`);
  }
  values.push(q.limit);
  const dir = desc ? "DESC" : "ASC";
  return {
    text: `SELECT ${MEMORY_COLUMNS}, ${CURSOR_TS} AS cursor_ts FROM memories m
     WHERE ${where.join(" AND ")}
     ORDER BY created_at ${dir}, id ${dir}
     LIMIT $${values.length}`,
    values,
  };
}

export const FIND_BY_ID_SQL = `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $2::uuid AND org_id = $1`;

/**
 * One memory of the organisation by id, through the primary key: unknown, malformed and foreign
 * ids are all simply absent.
 */
export async function findMemory(db: Queryable, orgId: string, id: string): Promise<MemoryRow | undefined> {
  if (!UUID_RE.test(id)) return undefined;
  const { rows } = await db.query<MemoryRow>(FIND_BY_ID_SQL, [orgId, id]);
  return rows[0];
}

/** Whether the memory has an embedding, and the ingest job that wrote it (console inspection). */
export async function memoryProvenance(
  db: Queryable,
  orgId: string,
  id: string,
): Promise<{ has_embedding: boolean; job_id: string | null } | undefined> {
  if (!UUID_RE.test(id)) return undefined;
  const { rows } = await db.query<{ has_embedding: boolean; job_id: string | null }>(
    "SELECT embedding IS NOT NULL AS has_embedding, job_id FROM memories WHERE id = $2::uuid AND org_id = $1",
    [orgId, id],
  );
  return rows[0];
}

export interface GroupPatchOutcome {
  /** False when no row of the organisation has that id. */
  found: boolean;
  /** Added ids that would be new on the row but are not active groups of the organisation. */
  invalid: string[];
  /** How many tags the row would carry. */
  count: number;
  /** True when the patch adds a tag to a superseded fact, which is refused (nothing is written). */
  superseded: boolean;
  /** Whether the row was written (false for a no-op or a refused patch). */
  updated: boolean;
  /** The removed ids the row carried, when it was written. */
  removed: string[];
}

/**
 * Applies a group-tag patch in ONE statement: the row is locked, removal then addition is computed
 * from its latest version, added ids are checked against the active groups, and the row is written
 * only when the patch is valid, within `maxTags` and changes something. Concurrent patches of the
 * same row queue on the row lock and each sees the other's result, so no tag is lost. (A single
 * statement also needs no BEGIN/COMMIT round trips.)
 */
export async function patchMemoryGroupIds(
  db: Queryable,
  orgId: string,
  id: string,
  patch: { add: string[]; remove: string[]; maxTags: number },
): Promise<GroupPatchOutcome> {
  const none = { found: false, invalid: [], count: 0, updated: false, superseded: false, removed: [] };
  if (!UUID_RE.test(id)) return none;
  const { rows } = await db.query<{
    invalid: string[];
    count: number;
    updated: boolean;
    superseded: boolean;
    removed: string[];
  }>(
    `WITH target AS (
       SELECT id, group_ids, status FROM memories WHERE id = $2::uuid AND org_id = $1 FOR UPDATE
     ),
     calc AS (
       SELECT t.id, t.group_ids AS old_ids,
         -- A tag added to a superseded fact would share a row search never serves (the active fact
         -- of its chain is the one to share); read after the lock, so a text edit that committed
         -- first is seen. Removing tags from it stays allowed. Other types have no status (NULL),
         -- which must read as not superseded, not as unknown.
         (t.status IS NOT DISTINCT FROM 'superseded' AND EXISTS (
            SELECT 1 FROM unnest($4::text[]) AS a(g) WHERE NOT (g = ANY(t.group_ids)))) AS superseded,
         ARRAY(SELECT g FROM unnest(t.group_ids) WITH ORDINALITY AS k(g, n)
               WHERE NOT (g = ANY($3::text[])) ORDER BY n)
         || ARRAY(SELECT g FROM unnest($4::text[]) WITH ORDINALITY AS a(g, n)
               WHERE NOT (g = ANY(t.group_ids)) ORDER BY n) AS new_ids,
         ARRAY(SELECT g FROM unnest($4::text[]) WITH ORDINALITY AS a(g, n)
               WHERE NOT (g = ANY(t.group_ids))
                 AND NOT EXISTS (SELECT 1 FROM groups gr
                                 WHERE gr.org_id = $1 AND gr.id = a.g AND gr.status = 'active')
               ORDER BY n) AS invalid
       FROM target t
     ),
     upd AS (
       UPDATE memories m SET group_ids = c.new_ids
       FROM calc c
       WHERE m.id = c.id AND m.org_id = $1
         AND cardinality(c.invalid) = 0
         AND NOT c.superseded
         AND cardinality(c.new_ids) <= $5
         AND NOT (c.new_ids @> c.old_ids AND c.old_ids @> c.new_ids)
       RETURNING m.id, m.user_id
     ),
     -- A fact taken out of a group takes the episodes that quote it out of that group too: an
     -- episode is shared only where every fact it quotes is (src/ingest/run-job.ts). A data-modifying
     -- WITH runs whether or not the statement reads it.
     unshared AS (
       UPDATE memories e SET group_ids = ARRAY(
           SELECT g FROM unnest(e.group_ids) WITH ORDINALITY AS k(g, n)
           WHERE NOT (g = ANY(c.old_ids) AND g = ANY($3::text[])) ORDER BY n)
       FROM upd u, calc c
       WHERE e.org_id = $1 AND e.type = 'episode' AND e.user_id = u.user_id
         AND e.group_ids && c.old_ids AND e.group_ids && $3::text[]
         AND e.details->'fact_ids' ? u.id::text
     )
     SELECT c.invalid, cardinality(c.new_ids)::int AS count, EXISTS (SELECT 1 FROM upd) AS updated,
       c.superseded,
       CASE WHEN EXISTS (SELECT 1 FROM upd)
         THEN ARRAY(SELECT g FROM unnest(c.old_ids) AS k(g) WHERE g = ANY($3::text[])) ELSE '{}' END AS removed
     FROM calc c`,
    [orgId, id, patch.remove, patch.add, patch.maxTags],
  );
  const r = rows[0];
  if (!r) return none;
  return { found: true, ...r };
}

/** Hard delete; true when a row of the organisation was removed. */
export async function deleteMemoryRow(
  db: Queryable,
  orgId: string,
  id: string,
): Promise<(Omit<DeletedRow, "id"> & { lexemes: string[] | null }) | null> {
  if (!UUID_RE.test(id)) return null;
  const { rows } = await db.query(
    `DELETE FROM memories WHERE id = $2::uuid AND org_id = $1
     RETURNING ${DELETED_COLUMNS}, tsvector_to_array(tsv) AS lexemes`,
    [orgId, id],
  );
  return rows[0] ?? null;
}

/**
 * A deleted memory as the consolidation after it needs it: its text and user (the episodes that
 * quote it), and its neighbour links (`details.episode_near`: the facts that link back to it).
 */
export interface DeletedRow {
  id: string;
  type: MemoryType;
  text: string;
  user_id: string | null;
  near: Record<string, unknown> | null;
}
const DELETED_COLUMNS = `id::text, type, text, user_id,
  CASE WHEN jsonb_typeof(details -> 'episode_near') = 'object' THEN details -> 'episode_near' END AS near`;

/** The axes a scope may be forgotten by (DELETE /v1/memories), each a column of memories. */
export const FORGET_AXES = ["user_id", "agent_id", "conv_id", "app_id"] as const;
export type ForgetScope = Partial<Record<(typeof FORGET_AXES)[number], string>>;

/** `<column(axis)> = $n` for each axis given, ANDed, numbered from `$first`; with their values. */
function axesWhere(scope: ForgetScope, column: (axis: string) => string, first: number) {
  const axes = FORGET_AXES.filter((a) => scope[a] != null);
  if (axes.length === 0) throw new Error("a forgotten scope needs an axis");
  return {
    sql: axes.map((a, i) => `${column(a)} = $${first + i}`).join(" AND "),
    values: axes.map((a) => scope[a]),
  };
}

/** The users whose memories a scope holds (for their ingest locks, taken in this order). */
export async function usersInScope(db: Queryable, orgId: string, scope: ForgetScope): Promise<string[]> {
  const where = axesWhere(scope, (a) => a, 2);
  const { rows } = await db.query<{ user_id: string }>(
    `SELECT DISTINCT coalesce(user_id, '') AS user_id FROM memories WHERE org_id = $1 AND ${where.sql} ORDER BY 1`,
    [orgId, ...where.values],
  );
  return rows.map((r) => r.user_id);
}

/**
 * Deletes every memory of the organisation in a scope (each axis given must match; at least one
 * is): what was deleted, for the episodes that list a deleted fact outside the scope.
 */
export async function deleteMemoryRowsInScope(
  db: Queryable,
  orgId: string,
  scope: ForgetScope,
): Promise<DeletedRow[]> {
  const where = axesWhere(scope, (a) => a, 2);
  const { rows } = await db.query(
    `DELETE FROM memories WHERE org_id = $1 AND ${where.sql} RETURNING ${DELETED_COLUMNS}`,
    [orgId, ...where.values],
  );
  return rows;
}

/**
 * The word statistics of full-text search keep a row per word ever written, with a count of the
 * documents holding it (`text_lexeme_stats`, in 16 shards). Once a scope is forgotten, words no
 * document holds any more would still name what was said ("rex", "oslo"): those rows go. Every
 * shard of the organisation is locked first, in order (a writer holds one at a time, so this
 * cannot deadlock with it), so no increment in flight is lost. Run in a transaction of its own.
 */
export async function forgetUnusedWords(
  db: Queryable,
  orgId: string,
  /** Only these words (a single delete's), not every word of the organisation. */
  among?: readonly string[],
): Promise<number> {
  if (among?.length === 0) return 0;
  await db.query(
    "SELECT pg_advisory_xact_lock(hashtext('mnemo_text_stats:' || $1::text), s::int) FROM generate_series(0, 15) s ORDER BY s",
    [orgId],
  );
  const only = among ? "AND lexeme = ANY($2::text[])" : "";
  const { rowCount } = await db.query(
    `DELETE FROM text_lexeme_stats WHERE org_id = $1 ${only} AND lexeme IN (
       SELECT lexeme FROM text_lexeme_stats WHERE org_id = $1 ${only} GROUP BY lexeme HAVING sum(df) <= 0)`,
    among ? [orgId, among] : [orgId],
  );
  return rowCount ?? 0;
}

/**
 * What the results of finished ingest jobs report of memories that changed since: the deleted
 * ones (`removed`) leave `memories_created` and `memories_updated` (each entry holds a text), and
 * the rewritten ones (`texts`: an episode a deleted fact left) read as they do now; so do the
 * webhook events of those jobs still queued or kept by the queue (rewriteQueuedEvents). The jobs'
 * requests keep the messages until the jobs' retention or a forget of their scope.
 */
export async function rewriteJobReports(
  db: Queryable,
  orgId: string,
  removed: readonly string[],
  texts: ReadonlyArray<{ id: string; text: string }>,
): Promise<void> {
  if (removed.length === 0 && texts.length === 0) return;
  const list = (key: string) => `coalesce((
      SELECT jsonb_agg(CASE WHEN t.text IS NULL THEN x.e ELSE jsonb_set(x.e, '{text}', to_jsonb(t.text)) END ORDER BY x.n)
      FROM jsonb_array_elements(j.result -> '${key}') WITH ORDINALITY x(e, n)
        LEFT JOIN unnest($3::text[], $4::text[]) t(id, text) ON t.id = x.e ->> 'id'
      WHERE NOT (x.e ->> 'id' = ANY($2::text[]))), '[]'::jsonb)`;
  // The jobs are found through ingest_jobs_reported_idx (sql/103), one probe per memory.
  await db.query(
    `WITH reporting AS (
       SELECT DISTINCT j.id FROM unnest($2::text[] || $3::text[]) AS m(id)
         JOIN ingest_jobs j ON j.org_id = $1 AND j.status = 'succeeded'
          AND ((j.result -> 'memories_created') || (j.result -> 'memories_updated'))
              @> jsonb_build_array(jsonb_build_object('id', m.id)))
     UPDATE ingest_jobs j SET result = j.result
       || jsonb_build_object('memories_created', ${list("memories_created")}, 'memories_updated', ${list("memories_updated")})
     FROM reporting r
     WHERE j.id = r.id AND jsonb_typeof(j.result -> 'memories_created') = 'array'
       AND jsonb_typeof(j.result -> 'memories_updated') = 'array'`,
    [orgId, removed, texts.map((t) => t.id), texts.map((t) => t.text)],
  );
  await rewriteQueuedEvents(db, orgId, removed, texts);
}

/**
 * The finished ingest jobs of a scope (each axis given matches the request's): their request holds
 * the messages, their result the memories' text. Jobs still pending or running stay.
 */
export async function deleteFinishedJobsInScope(
  db: Queryable,
  orgId: string,
  scope: ForgetScope,
): Promise<string[]> {
  const where = axesWhere(scope, (a) => `request ->> '${a}'`, 2);
  const { rows } = await db.query<{ id: string }>(
    `DELETE FROM ingest_jobs WHERE org_id = $1 AND status IN ('succeeded', 'failed') AND ${where.sql} RETURNING id`,
    [orgId, ...where.values],
  );
  return rows.map((r) => r.id);
}

/** The scope's ingest jobs not finished yet (pending or running): a forget leaves them to store. */
export async function countUnfinishedJobsInScope(
  db: Queryable,
  orgId: string,
  scope: ForgetScope,
): Promise<number> {
  const where = axesWhere(scope, (a) => `request ->> '${a}'`, 2);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ingest_jobs WHERE org_id = $1 AND status IN ('pending', 'running') AND ${where.sql}`,
    [orgId, ...where.values],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Deleted facts leave their neighbours' links (`details.episode_near`, the facts either side of a
 * fact in its episode, which a search may add beside a hit): of the facts `candidates` (the ones
 * that may link to them), those that name one of `ids` lose that entry.
 */
export async function unlinkNeighbours(
  db: Queryable,
  orgId: string,
  candidates: string[],
  ids: string[],
): Promise<void> {
  const rows = candidates.filter((c) => UUID_RE.test(c));
  if (ids.length === 0 || rows.length === 0) return;
  await db.query(
    `UPDATE memories m SET details = jsonb_set(m.details, '{episode_near}', (
       SELECT coalesce(jsonb_object_agg(n.key, n.value), '{}'::jsonb)
       FROM jsonb_each(m.details -> 'episode_near') n WHERE NOT ((n.value #>> '{}') = ANY($3::text[]))))
     WHERE m.org_id = $1 AND m.id = ANY($2::uuid[]) AND m.type = 'fact'
       AND jsonb_typeof(m.details -> 'episode_near') = 'object'
       AND EXISTS (SELECT 1 FROM jsonb_each_text(m.details -> 'episode_near') n WHERE n.value = ANY($3::text[]))`,
    [orgId, rows, ids],
  );
}

/** The episodes of a user that list any of these facts in `details.fact_ids`, for update. */
export async function episodesListingFacts(
  db: Queryable,
  orgId: string,
  userId: string | null,
  factIds: string[],
): Promise<Array<{ id: string; text: string; details: Record<string, unknown> }>> {
  // `user_id = $2` (or IS NULL), not IS NOT DISTINCT FROM, which no index serves: a delete read
  // every memory of the organisation (0.55 s at 157,000 rows on PostgreSQL, a scale probe).
  const { rows } = await db.query(
    `SELECT id::text, text, details FROM memories
     WHERE org_id = $1 AND ${userId === null ? "user_id IS NULL AND $2::text IS NULL" : "user_id = $2"}
       AND type = 'episode' AND details->'fact_ids' ?| $3::text[]
     ORDER BY id FOR UPDATE`,
    [orgId, userId, factIds],
  );
  return rows;
}

export async function updateEpisodeText(
  db: Queryable,
  orgId: string,
  id: string,
  text: string,
  details: Record<string, unknown>,
  options: { dropVector: boolean },
): Promise<void> {
  // After a delete the vector said what the episode no longer does (the deleted fact's words): it
  // goes with them, and is made again from the new text after the transaction
  // (embedEpisodesAgain). A superseded fact is history, still stored: its episode keeps the vector
  // (making it again for every job that supersedes a fact cost embedded ingest 7%).
  await db.query(
    `UPDATE memories SET text = $3, details = $4, updated_at = now()${options.dropVector ? ", embedding = NULL" : ""}
     WHERE org_id = $1 AND id = $2::uuid`,
    [orgId, id, text, details],
  );
}

/** A memory with what its vector is made from (embeddingText). */
export interface EmbeddableRow {
  id: string;
  org_id: string;
  type: MemoryType;
  text: string;
  details: Record<string, unknown>;
  context: string | null;
}

/** Memories without a vector (memories_no_vector_idx), at most `limit`, with what embeds them. */
export async function memoriesWithoutVector(db: Queryable, limit: number): Promise<EmbeddableRow[]> {
  const { rows } = await db.query<EmbeddableRow>(
    `SELECT id::text, org_id, type, text, details, context FROM memories
     WHERE embedding IS NULL ORDER BY org_id LIMIT $1`,
    [limit],
  );
  return rows;
}

/** Every organisation's memories in id order after `afterId`, at most `limit`, with what embeds them. */
export async function memoriesAfter(db: Queryable, afterId: string, limit: number): Promise<EmbeddableRow[]> {
  const { rows } = await db.query<EmbeddableRow>(
    `SELECT id::text, org_id, type, text, details, context FROM memories
     WHERE id > $1::uuid ORDER BY id LIMIT $2`,
    [afterId, limit],
  );
  return rows;
}

/**
 * Vectors for rows whose text was changed (updateEpisodeText), each set only while the row still
 * has that text and no vector: a later change wins. `replace`: over the vector a row has (admin
 * reembed), still only while it has that text.
 */
export async function setEmbeddings(
  db: Queryable,
  orgId: string,
  rows: ReadonlyArray<{ id: string; text: string; embedding: number[] }>,
  options: { replace?: boolean } = {},
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `UPDATE memories m SET embedding = x.embedding::vector
     FROM unnest($2::uuid[], $3::text[], $4::text[]) AS x(id, text, embedding)
     WHERE m.org_id = $1 AND m.id = x.id AND m.text = x.text${options.replace ? "" : " AND m.embedding IS NULL"}`,
    [orgId, rows.map((r) => r.id), rows.map((r) => r.text), rows.map((r) => toVector(r.embedding))],
  );
}

/** Guards the chain walk against a cycle in bad data; real chains are far shorter. */
const MAX_CHAIN = 10_000;

/**
 * The supersede chain through `id` (a fact's, or a lesson's: rows of that type), oldest first:
 * older rows by following `supersedes`, newer rows by finding who supersedes the current one. A
 * deleted link simply ends that direction.
 */
export async function supersedeChainRows(
  db: Queryable,
  orgId: string,
  id: string,
  type: "fact" | "lesson",
): Promise<MemoryRow[]> {
  const { rows } = await db.query<MemoryRow>(
    `WITH RECURSIVE
       older(id, supersedes, pos) AS (
         SELECT id, supersedes, 0 FROM memories WHERE id = $2::uuid AND org_id = $1
         UNION
         SELECT m.id, m.supersedes, o.pos - 1 FROM older o
           JOIN memories m ON m.id = o.supersedes AND m.org_id = $1 AND m.type = $4::text
         WHERE o.pos > -($3::int)
       ),
       newer(id, pos) AS (
         SELECT id, 0 FROM memories WHERE id = $2::uuid AND org_id = $1
         UNION
         SELECT m.id, n.pos + 1 FROM newer n
           JOIN memories m ON m.supersedes = n.id AND m.org_id = $1 AND m.type = $4::text
         WHERE n.pos < $3::int
       ),
       chain AS (
         SELECT id, min(pos) AS pos FROM (SELECT id, pos FROM older UNION ALL SELECT id, pos FROM newer) c
         GROUP BY id
       )
     SELECT ${MEMORY_COLUMNS} FROM chain JOIN memories m USING (id)
     WHERE m.org_id = $1
     ORDER BY chain.pos, m.created_at, m.id`,
    [orgId, id, MAX_CHAIN, type],
  );
  return rows;
}

/** Every version of an artifact (same root: v1's id), v1 first. */
export async function artifactVersionRows(
  db: Queryable,
  orgId: string,
  rootId: string,
): Promise<MemoryRow[]> {
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories
     WHERE org_id = $1 AND type = 'artifact'
       AND (id = $3::uuid OR artifact_root = $2)
     ORDER BY CASE WHEN jsonb_typeof(details->'version') = 'number' THEN (details->>'version')::numeric END
              NULLS FIRST, created_at, id`,
    [orgId, rootId, UUID_RE.test(rootId) ? rootId : null],
  );
  return rows;
}

// ---- variant forms (issue 14): count, row lock, metadata write ----

/** How many rows the list query matches, all pages (same WHERE, no keyset position). */
export async function countMemoryRows(
  db: Queryable,
  q: Omit<ListMemoryQuery, "after" | "limit">,
): Promise<number> {
  const { text, values } = listMemoryQuery({ ...q, limit: 1 });
  const where = text.slice(text.indexOf("WHERE"), text.indexOf("ORDER BY"));
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM memories m ${where}`,
    values.slice(0, -1),
  );
  return Number(rows[0]?.n ?? 0);
}

/** One memory, locked for the rest of the transaction (read-modify-write of metadata or text). */
export async function lockMemory(db: Queryable, orgId: string, id: string): Promise<MemoryRow | undefined> {
  if (!UUID_RE.test(id)) return undefined;
  const { rows } = await db.query<MemoryRow>(`${FIND_BY_ID_SQL} FOR UPDATE`, [orgId, id]);
  return rows[0];
}

export async function setMemoryMetadata(
  db: Queryable,
  orgId: string,
  id: string,
  metadata: Record<string, unknown>,
): Promise<void> {
  await db.query(
    // Not updated_at: a memory's is the time of its last supersede or consolidation (spec 2.1),
    // and a metadata merge is neither (a group tag change moves it no more).
    "UPDATE memories SET metadata = $3::jsonb WHERE id = $2::uuid AND org_id = $1",
    [orgId, id, JSON.stringify(metadata)],
  );
}
