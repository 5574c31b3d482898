import type { Queryable } from "./db.js";
import type { MemoryRow } from "./memory-row.js";

/**
 * Queries behind `admin export` and `admin import`: an organisation's rows in a stable order with
 * timestamps at full precision (UTC, microseconds) and embeddings as arrays, and inserts that keep
 * ids and skip rows whose id is already there (a second import changes nothing).
 */

const ts = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export interface ExportGroup {
  id: string;
  name: string;
  prompt: string | null;
  status: "active" | "archived";
  created_at: string;
  updated_at: string;
}

/** A memory as exported: the stored row without its organisation, timestamps as exact text. */
export type ExportMemory = Omit<MemoryRow, "org_id" | "metadata" | "created_at" | "updated_at"> & {
  /** Absent from exports written before metadata existed. */
  metadata?: Record<string, unknown>;
  embedding: number[] | null;
  created_at: string;
  updated_at: string;
  /** Internal search columns (sql/090); absent from exports written before them. */
  context?: string | null;
  concepts?: string | null;
};

export interface ExportWebhook {
  url: string;
  events: string[];
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

export async function exportGroups(db: Queryable, orgId: string): Promise<ExportGroup[]> {
  const { rows } = await db.query<ExportGroup>(
    `SELECT id, name, prompt, status, ${ts("created_at")} AS created_at, ${ts("updated_at")} AS updated_at
     FROM groups WHERE org_id = $1 ORDER BY created_at, id`,
    [orgId],
  );
  return rows;
}

export async function exportWebhook(db: Queryable, orgId: string): Promise<ExportWebhook | undefined> {
  const { rows } = await db.query<ExportWebhook>(
    `SELECT url, events, enabled, ${ts("created_at")} AS created_at, ${ts("updated_at")} AS updated_at
     FROM webhooks WHERE org_id = $1`,
    [orgId],
  );
  return rows[0];
}

export async function countMemories(db: Queryable, orgId: string, userId: string | null): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memories WHERE org_id = $1 AND ($2::text IS NULL OR user_id = $2)",
    [orgId, userId],
  );
  return rows[0]!.n;
}

/** One page of memories in (created_at, id) order, after the keyset position `after`. */
export async function exportMemoriesPage(
  db: Queryable,
  input: { orgId: string; userId: string | null; after: { at: string; id: string } | null; limit: number },
): Promise<ExportMemory[]> {
  const { rows } = await db.query<ExportMemory & { embedding: string | null }>(
    `SELECT id, type, text, user_id, agent_id, conv_id, app_id, group_ids, categories, details, metadata, status,
       supersedes, namespace, trigger_entities, outcome, full_content, content_hash, job_id, write_key,
       embedding::text AS embedding, ${ts("created_at")} AS created_at, ${ts("updated_at")} AS updated_at,
       context, concepts
     FROM memories
     WHERE org_id = $1 AND ($2::text IS NULL OR user_id = $2)
       AND ($3::timestamptz IS NULL OR (created_at, id) > ($3::timestamptz, $4::uuid))
     ORDER BY created_at, id
     LIMIT $5`,
    [input.orgId, input.userId, input.after?.at ?? null, input.after?.id ?? null, input.limit],
  );
  return rows.map((r) => ({ ...r, embedding: r.embedding ? (JSON.parse(r.embedding) as number[]) : null }));
}

/** Inserts groups keeping their ids; returns how many were new. */
export async function importGroups(db: Queryable, orgId: string, groups: ExportGroup[]): Promise<number> {
  if (groups.length === 0) return 0;
  const { rowCount } = await db.query(
    `INSERT INTO groups (id, org_id, name, prompt, status, created_at, updated_at)
     SELECT x.id, $2, x.name, x.prompt, x.status, x.created_at, x.updated_at
     FROM jsonb_to_recordset($1::jsonb) AS x(id text, name text, prompt text, status text,
       created_at timestamptz, updated_at timestamptz)
     ON CONFLICT DO NOTHING`,
    [JSON.stringify(groups), orgId],
  );
  return rowCount ?? 0;
}

/**
 * Inserts memories keeping ids, embeddings and timestamps; returns the ids of the new ones. Only
 * an id already there is skipped: a new id whose job_id and write_key another memory holds is an
 * error, not a row counted as already there.
 */
export async function importMemories(db: Queryable, orgId: string, rows: ExportMemory[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const payload = rows.map((r) => ({ ...r, embedding: r.embedding ? `[${r.embedding.join(",")}]` : null }));
  const { rows: inserted } = await db.query<{ id: string }>(
    `INSERT INTO memories (id, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, categories,
       details, metadata, status, supersedes, namespace, trigger_entities, outcome, full_content, content_hash,
       job_id, write_key, embedding, created_at, updated_at, context, concepts)
     SELECT x.id, $2, x.type, x.text, x.user_id, x.agent_id, x.conv_id, x.app_id, x.group_ids, x.categories,
       x.details, coalesce(x.metadata, '{}'),
       CASE WHEN x.type = 'fact' THEN coalesce(x.status, 'active') ELSE x.status END, x.supersedes, x.namespace, x.trigger_entities, x.outcome, x.full_content,
       x.content_hash, x.job_id, x.write_key, x.embedding::vector, x.created_at, x.updated_at, x.context, x.concepts
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, type text, text text, user_id text, agent_id text,
       conv_id text, app_id text, group_ids text[], categories text[], details jsonb, metadata jsonb,
       status text, supersedes uuid, namespace text, trigger_entities text[], outcome text, full_content text,
       content_hash text, job_id text, write_key text, embedding text, created_at timestamptz,
       updated_at timestamptz, context text, concepts text)
     ON CONFLICT (id) DO NOTHING
     RETURNING id::text AS id`,
    [JSON.stringify(payload), orgId],
  );
  return inserted.map((r) => r.id);
}

/**
 * Derives the full-text index and BM25 vector of `ids` again, against the organisation's
 * statistics as they are now (the text trigger, sql/090): rows written in a bulk were weighed
 * against the statistics of the rows before them, the first ones against almost none.
 */
/**
 * Facts among `ids` (or pointed at by them) that another fact of the same user supersedes but that
 * still read active, marked superseded: what a fact that `supersedes` one means. A file exported
 * page by page while the source was written (see exportOrg) can hold a fact as active beside the
 * fact that superseded it during the export. A link to another user's fact is not followed: a
 * fact supersedes only its own user's facts, as ingest replaces them (crossUserSupersedes names
 * such links). Returns how many were marked.
 */
export async function markSupersededTargets(db: Queryable, orgId: string, ids: string[]): Promise<number> {
  let marked = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const { rowCount } = await db.query(
      `UPDATE memories t SET status = 'superseded'
       FROM (SELECT DISTINCT n.supersedes AS id, n.user_id FROM memories n
             WHERE n.org_id = $1 AND n.type = 'fact' AND n.supersedes IS NOT NULL AND n.supersedes <> n.id
               AND (n.id = ANY($2::uuid[]) OR n.supersedes = ANY($2::uuid[]))) x
       WHERE t.org_id = $1 AND t.id = x.id AND t.type = 'fact' AND t.status = 'active'
         AND t.user_id IS NOT DISTINCT FROM x.user_id`,
      [orgId, ids.slice(i, i + 1000)],
    );
    marked += rowCount ?? 0;
  }
  return marked;
}

/**
 * Facts among `ids`, or facts naming one of `ids` in `supersedes`, whose link names a fact of
 * another user (which markSupersededTargets does not follow): each link once, as `id` supersedes
 * `target`.
 */
export async function crossUserSupersedes(
  db: Queryable,
  orgId: string,
  ids: string[],
): Promise<Array<{ id: string; target: string }>> {
  const links = new Map<string, { id: string; target: string }>();
  for (let i = 0; i < ids.length; i += 1000) {
    const { rows } = await db.query<{ id: string; target: string }>(
      `SELECT n.id::text AS id, t.id::text AS target
       FROM memories n JOIN memories t ON t.org_id = n.org_id AND t.id = n.supersedes
       WHERE n.org_id = $1 AND n.type = 'fact' AND t.type = 'fact' AND n.supersedes <> n.id
         AND n.user_id IS DISTINCT FROM t.user_id
         AND (n.id = ANY($2::uuid[]) OR n.supersedes = ANY($2::uuid[]))
       ORDER BY n.id`,
      [orgId, ids.slice(i, i + 1000)],
    );
    for (const r of rows) links.set(r.id, r);
  }
  return [...links.values()];
}

/** How many documents the organisation's full-text statistics count. */
export async function orgDocuments(db: Queryable, orgId: string): Promise<number> {
  const { rows } = await db.query<{ n: string | null }>(
    "SELECT sum(docs)::bigint AS n FROM text_doc_stats WHERE org_id = $1",
    [orgId],
  );
  return Number(rows[0]?.n ?? 0);
}

/** One page of an organisation's memory ids in created order, after a position (reindexOrgText). */
export async function memoryIdsPage(
  db: Queryable,
  orgId: string,
  after: { at: string; id: string } | null,
  limit: number,
): Promise<Array<{ id: string; at: string }>> {
  const { rows } = await db.query<{ id: string; at: string }>(
    `SELECT id::text AS id, ${ts("created_at")} AS at FROM memories
     WHERE org_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2::timestamptz, $3::uuid))
     ORDER BY created_at, id LIMIT $4`,
    [orgId, after?.at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/**
 * The full-text columns of `ids` derived again (the text trigger recomputes a cleared tsv and the
 * BM25 vector), and trigger_keys (a generated column, derived again when trigger_entities is set).
 */
export async function reindexText(db: Queryable, orgId: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 1000)
    await db.query(
      "UPDATE memories SET tsv = NULL, trigger_entities = trigger_entities WHERE org_id = $1 AND id = ANY($2::uuid[])",
      [orgId, ids.slice(i, i + 1000)],
    );
}

/** Of `ids`, those that exist under another organisation (an import cannot take them over). */
export async function foreignIds(
  db: Queryable,
  table: "groups" | "memories",
  orgId: string,
  ids: string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const cast = table === "memories" ? "uuid" : "text";
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text AS id FROM ${table} WHERE id = ANY($1::${cast}[]) AND org_id <> $2`,
    [ids, orgId],
  );
  return rows.map((r) => r.id);
}

/**
 * Takes out of the memories `ids` (the organisation's) each group tag that names no group of the
 * organisation, keeping the others in order; returns the memories changed and what each lost.
 */
export async function dropUnknownGroupTags(
  db: Queryable,
  orgId: string,
  ids: string[],
): Promise<Array<{ id: string; dropped: string[] }>> {
  const out: Array<{ id: string; dropped: string[] }> = [];
  for (let i = 0; i < ids.length; i += 1000) {
    const { rows } = await db.query<{ id: string; dropped: string[] }>(
      `UPDATE memories m SET group_ids = x.kept
       FROM (
         SELECT r.id,
                coalesce(array_agg(t.id ORDER BY t.n) FILTER (WHERE g.id IS NOT NULL), '{}') AS kept,
                array_agg(t.id ORDER BY t.n) FILTER (WHERE g.id IS NULL) AS dropped
         FROM memories r
         CROSS JOIN LATERAL unnest(r.group_ids) WITH ORDINALITY AS t(id, n)
         LEFT JOIN groups g ON g.org_id = $1 AND g.id = t.id
         WHERE r.org_id = $1 AND r.id = ANY($2::uuid[]) AND cardinality(r.group_ids) > 0
         GROUP BY r.id
         HAVING bool_or(g.id IS NULL)
       ) x
       WHERE m.org_id = $1 AND m.id = x.id
       RETURNING m.id::text AS id, x.dropped`,
      [orgId, ids.slice(i, i + 1000)],
    );
    out.push(...rows);
  }
  return out;
}

/** Of group `ids`, those that exist (in any organisation). */
export async function groupIdsTaken(db: Queryable, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>("SELECT id FROM groups WHERE id = ANY($1::text[])", [ids]);
  return rows.map((r) => r.id);
}

/** Creates the organisation's webhook from an export unless it already has one; true if created. */
export async function importWebhook(
  db: Queryable,
  orgId: string,
  hook: ExportWebhook & { secret_enc: string; secret_last_four: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO webhooks (org_id, url, events, enabled, secret_enc, secret_last_four, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (org_id) DO NOTHING`,
    [
      orgId,
      hook.url,
      hook.events,
      hook.enabled,
      hook.secret_enc,
      hook.secret_last_four,
      hook.created_at,
      hook.updated_at,
    ],
  );
  return (rowCount ?? 0) > 0;
}
