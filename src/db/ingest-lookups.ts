import { withFolded } from "../fold.js";
import { type Queryable, queryInOneTrip } from "./db.js";
import type { NewMemoryRow } from "./memories.js";
import type { MemoryType } from "./memory-row.js";
import { hnswSettings } from "./memory-search.js";

/** Reads and touches on memories that the ingest pipeline needs (dedup, supersede, versions). */

/**
 * A count kept in `details` (an artifact's version, a directive's observation count), 1 when it is
 * missing or not a whole number: an import file may carry anything there, and a cast error would
 * fail every later ingest job of the user.
 */
const countIn = (key: string) =>
  `coalesce(CASE WHEN details->>'${key}' ~ '^[0-9]{1,9}$' THEN (details->>'${key}')::int END, 1)`;

const vec = (v: number[]) => `[${v.join(",")}]`;

export type Similar = { id: string; text: string; similarity: number };

/** Facts looked up per statement by similarActiveFactsOf (bounds the statement's size). */
const LOOKUP_CHUNK = 200;

/**
 * The statement of similarActiveFactsOf: $1 org, $2 user, $3 the facts' embeddings (vector[]), $4
 * their content hashes, $5 neighbours per fact, $6 a job whose own rows are left out (or null). The embeddings come as a vector array, parsed once:
 * passed as text and cast inside the per-fact lookup (`x.vec::vector`), each was parsed again for
 * every row it was compared with. Where the planner walks the user's rows (a user whose rows it
 * does not know yet, such as one filled by the jobs of the last minute), that was 70 µs a row on
 * the embedded database: 28 s for 200 facts against 2,000 rows, the one session held throughout
 * and every other request failing behind it; 0.65 s with the vectors parsed once.
 */
export const SIMILAR_FACTS_SQL = `SELECT x.n::int AS n, c.id, c.text, c.similarity
       FROM unnest($3::vector[], $4::text[]) WITH ORDINALITY AS x(vec, hash, n),
       LATERAL (
         (SELECT id::text, text, 1.0::float8 AS similarity, 0::float8 AS k FROM memories
           WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status = 'active' AND content_hash = x.hash
             AND ($6::text IS NULL OR job_id IS DISTINCT FROM $6) LIMIT 1)
         UNION ALL
         (SELECT id::text, text, (1 - d)::float8, 1 + d FROM (
           SELECT id, text, embedding <=> x.vec AS d FROM memories
           WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status = 'active' AND embedding IS NOT NULL
             AND ($6::text IS NULL OR job_id IS DISTINCT FROM $6)
           ORDER BY d LIMIT $5) near
          WHERE d <> 'NaN'::float8)) c
       ORDER BY x.n, c.k`;

/**
 * For each fact (its embedding and content hash), the user's active facts nearest to it (cosine
 * similarity, `limit` of them), plus the exact-hash match first: one statement per LOOKUP_CHUNK
 * facts, not one per fact (a 5,000-message ingest has 3,000 facts). Zero vectors have no
 * similarity (NaN) and bring no candidates. `exceptJob`'s own facts are never candidates: a job
 * retried after part of its facts were stored (see storeResult) finds its own, not duplicates.
 *
 * The statement runs with search's iterative-scan settings (hnswSettings), in the same round trip:
 * where the planner walks the HNSW index (a user holding a few percent of a big table), the index
 * otherwise yields its first 40 rows of the whole table and the scope filter keeps the user's few
 * among them. A scale probe (8,000 of 160,000 rows) saw 78 of 200 lookups find no candidate.
 */
export async function similarActiveFactsOf(
  db: Queryable,
  scope: { orgId: string; userId: string },
  facts: Array<{ embedding: number[]; hash: string }>,
  limit = 5,
  exceptJob: string | null = null,
): Promise<Similar[][]> {
  const out: Similar[][] = facts.map(() => []);
  for (let start = 0; start < facts.length; start += LOOKUP_CHUNK) {
    const chunk = facts.slice(start, start + LOOKUP_CHUNK);
    const { rows } = await queryInOneTrip<Similar & { n: number }>(
      db,
      SIMILAR_FACTS_SQL,
      [
        scope.orgId,
        scope.userId,
        chunk.map((f) => vec(f.embedding)),
        chunk.map((f) => f.hash),
        limit,
        exceptJob,
      ],
      { settings: hnswSettings(limit) },
    );
    for (const { n, ...r } of rows) {
      const list = out[start + n - 1]!;
      if (!list.some((c) => c.id === r.id)) list.push({ ...r, similarity: Number(r.similarity) });
    }
  }
  return out;
}

/** Rows read per statement by activeFactsMatching, and the most it reads. */
const MATCHING_PAGE = 100;
const MATCHING_MOST = 500;

/**
 * The user's active facts, newest first, that hold `words` (a full-text query, through the user's
 * scoped text index) and pass `states`, up to `limit`, other than `exceptJob`'s own: candidates of
 * the same kind as a new fact. Reads the newest MATCHING_MOST holding the words at most.
 */
export async function activeFactsMatching(
  db: Queryable,
  scope: { orgId: string; userId: string },
  search: { words: string; states: (text: string) => boolean },
  limit: number,
  exceptJob: string | null = null,
): Promise<Similar[]> {
  const out: Similar[] = [];
  for (let offset = 0; out.length < limit && offset < MATCHING_MOST; offset += MATCHING_PAGE) {
    const { rows } = await db.query<{ id: string; text: string }>(
      `SELECT id::text, text FROM memories
       WHERE org_id = $1 AND user_id = $2 AND tsv @@ to_tsquery('english', mnemo_index_text($3, 50000))
         AND type = 'fact' AND status = 'active'
         AND ($4::text IS NULL OR job_id IS DISTINCT FROM $4)
       ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`,
      [scope.orgId, scope.userId, search.words, exceptJob, MATCHING_PAGE, offset],
    );
    for (const r of rows)
      if (out.length < limit && search.states(r.text)) out.push({ ...r, similarity: 0.5 });
    if (rows.length < MATCHING_PAGE) break;
  }
  return out;
}

/**
 * For each fact of `ids`, the active facts of the same user told by the same turns (its job's,
 * with the same source turns), itself included: what a turn's extraction left of it. With
 * `withSuperseded`, those superseded since too (by their status), with the text of the fact that
 * superseded each (`successor`).
 */
export async function sameTurnFacts(
  db: Queryable,
  scope: { orgId: string; userId: string },
  ids: string[],
  withSuperseded = false,
): Promise<Array<{ of: string; id: string; text: string; status: string; successor: string | null }>> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{
    of: string;
    id: string;
    text: string;
    status: string;
    successor: string | null;
  }>(
    `SELECT o.id::text AS of, m.id::text, m.text, m.status, s.text AS successor FROM memories o
     JOIN memories m ON m.org_id = o.org_id AND m.job_id = o.job_id AND m.user_id = o.user_id
       AND m.type = 'fact' AND (m.status = 'active' OR ($4::boolean AND m.status = 'superseded'))
       AND m.details -> 'source_event_ids' = o.details -> 'source_event_ids'
     LEFT JOIN LATERAL (
       SELECT text FROM memories WHERE org_id = m.org_id AND supersedes = m.id AND m.status = 'superseded'
       ORDER BY created_at DESC LIMIT 1
     ) s ON true
     WHERE o.org_id = $1 AND o.user_id = $2 AND o.id = ANY($3::uuid[]) AND o.job_id IS NOT NULL`,
    [scope.orgId, scope.userId, ids, withSuperseded],
  );
  return rows;
}

/**
 * The user's active facts of these ids as rows to write again: where they belong (conversation,
 * agent, app, groups), their details, categories, indexed context and creation time.
 */
export async function factRows(
  db: Queryable,
  scope: { orgId: string; userId: string },
  ids: string[],
): Promise<Array<NewMemoryRow & { id: string }>> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(
    `SELECT id::text, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, categories, details,
       context, created_at
     FROM memories
     WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status = 'active' AND id = ANY($3::uuid[])`,
    [scope.orgId, scope.userId, ids],
  );
  return rows;
}

/**
 * Active facts of the user with one of these hashes (re-checked under the store lock), other than
 * `exceptJob`'s own.
 */
export async function activeFactsByHash(
  db: Queryable,
  scope: { orgId: string; userId: string },
  hashes: string[],
  exceptJob: string | null = null,
): Promise<Array<{ id: string; content_hash: string }>> {
  if (hashes.length === 0) return [];
  const { rows } = await db.query(
    `SELECT DISTINCT ON (content_hash) id::text, content_hash FROM memories
     WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status = 'active' AND content_hash = ANY($3::text[])
       AND ($4::text IS NULL OR job_id IS DISTINCT FROM $4)
     ORDER BY content_hash, created_at`,
    [scope.orgId, scope.userId, hashes, exceptJob],
  );
  return rows;
}

/** The memories a job stored (by any of its attempts), by id. */
export async function jobMemories(
  db: Queryable,
  orgId: string,
  jobId: string,
): Promise<Map<string, Touched>> {
  const { rows } = await db.query<Touched>(
    "SELECT id::text, type, text FROM memories WHERE org_id = $1 AND job_id = $2",
    [orgId, jobId],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Merges top-level keys into memories' details (a fact's neighbour links `episode_near`, its
 * artifact links), for rows written by an earlier store transaction.
 */
export async function patchDetails(
  db: Queryable,
  orgId: string,
  rows: Array<{ id: string; patch: Record<string, unknown> }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `UPDATE memories m SET details = m.details || x.patch
     FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, patch jsonb)
     WHERE m.org_id = $1 AND m.id = x.id`,
    [orgId, JSON.stringify(rows)],
  );
}

/** Points facts written by an earlier store transaction at the fact they replace now. */
export async function setSupersedes(
  db: Queryable,
  orgId: string,
  rows: Array<{ id: string; supersedes: string }>,
): Promise<void> {
  if (rows.length === 0) return;
  await db.query(
    `UPDATE memories m SET supersedes = x.supersedes
     FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, supersedes uuid)
     WHERE m.org_id = $1 AND m.id = x.id`,
    [orgId, JSON.stringify(rows)],
  );
}

/** Which of these ids name a stored memory of the organisation. */
export async function existingIds(db: Queryable, orgId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    "SELECT id::text FROM memories WHERE org_id = $1 AND id = ANY($2::uuid[])",
    [orgId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * For each fact id, the newest fact of the user that supersedes it, whatever its status, other than
 * `exceptJob`'s own (re-checked under the store lock: another job may have replaced it since). The
 * caller walks these links to the chain's end: a successor itself replaced meanwhile (blue <- red <-
 * green) is a step, not the end, or a job would replace blue again and fork the chain into two
 * active values.
 */
export async function newestSuccessors(
  db: Queryable,
  scope: { orgId: string; userId: string },
  ids: string[],
  exceptJob: string,
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ of: string; id: string }>(
    `SELECT DISTINCT ON (supersedes) supersedes::text AS of, id::text FROM memories
     WHERE org_id = $1 AND user_id = $2 AND type = 'fact'
       AND supersedes = ANY($3::uuid[]) AND job_id IS DISTINCT FROM $4
     ORDER BY supersedes, created_at DESC, id DESC`,
    [scope.orgId, scope.userId, ids, exceptJob],
  );
  return new Map(rows.map((r) => [r.of, r.id]));
}

/** The user's latest version of the artifact with this title. */
export async function latestArtifactVersion(
  db: Queryable,
  scope: { orgId: string; userId: string },
  title: string,
): Promise<{ id: string; content_hash: string | null; version: number; root_id: string } | undefined> {
  const { rows } = await db.query(
    `SELECT id::text, content_hash, ${countIn("version")} AS version,
       coalesce(details->>'root_id', id::text) AS root_id
     FROM memories WHERE org_id = $1 AND user_id = $2 AND type = 'artifact' AND details->>'title' = $3
     ORDER BY ${countIn("version")} DESC, created_at DESC LIMIT 1`,
    [scope.orgId, scope.userId, title],
  );
  return rows[0];
}

/**
 * The active lessons of the scope and namespace, those whose trigger entities share one of
 * `entities` first, then the latest others, newest first, not of this job: what a new lesson may
 * reverse (a rule changed may share no entity with it: `npm test` became `pnpm test`).
 */
export async function activeLessonsSharing(
  db: Queryable,
  scope: { orgId: string; userId: string; agentId: string | null },
  namespace: string | null,
  entities: readonly string[],
  jobId: string,
): Promise<Array<{ id: string; text: string; trigger_entities: string[] }>> {
  if (entities.length === 0) return [];
  const { rows } = await db.query(
    `SELECT id::text, text, trigger_entities FROM memories
     WHERE org_id = $1 AND user_id = $2 AND agent_id IS NOT DISTINCT FROM $3 AND type = 'lesson'
       AND namespace IS NOT DISTINCT FROM $4
       AND status IS DISTINCT FROM 'superseded' AND outcome IS DISTINCT FROM 'failed'
       AND job_id IS DISTINCT FROM $6
     ORDER BY (trigger_keys && $5::text[]) DESC, created_at DESC, id LIMIT 50`,
    [scope.orgId, scope.userId, scope.agentId, namespace, withFolded(entities), jobId],
  );
  return rows;
}

/**
 * The active procedures of the scope and namespace introduced by the same line (`heading`, as
 * procedureGoal reads it), newest first, not of this job: what a new procedure replaces.
 */
export async function activeProceduresTitled(
  db: Queryable,
  scope: { orgId: string; userId: string; agentId: string | null },
  namespace: string | null,
  heading: string,
  jobId: string,
): Promise<Array<{ id: string; text: string }>> {
  const { rows } = await db.query(
    `SELECT id::text, text FROM memories
     WHERE org_id = $1 AND user_id = $2 AND agent_id IS NOT DISTINCT FROM $3 AND type = 'procedure'
       AND namespace IS NOT DISTINCT FROM $4 AND lower(split_part(text, chr(10), 1)) LIKE $5 || '%'
       AND status IS DISTINCT FROM 'superseded' AND job_id IS DISTINCT FROM $6
     ORDER BY created_at DESC, id LIMIT 20`,
    [scope.orgId, scope.userId, scope.agentId, namespace, heading.replace(/[\\%_]/g, "\\$&"), jobId],
  );
  return rows;
}

/**
 * The active facts a lesson's own turns gave in its job: those that may state its rule. A fact of
 * them superseded with a rest kept (what it said besides, written by a later job with its turns)
 * is there through that rest.
 */
export async function factsOfLessonTurns(
  db: Queryable,
  orgId: string,
  lessonId: string,
): Promise<Array<{ id: string; text: string }>> {
  const { rows } = await db.query(
    `WITH turn AS (
       SELECT f.id, f.text, f.status, f.details -> 'source_event_ids' AS events, l.user_id FROM memories l
         JOIN memories f ON f.org_id = l.org_id AND f.job_id = l.job_id AND f.user_id IS NOT DISTINCT FROM l.user_id
           AND f.type = 'fact'
       WHERE l.org_id = $1 AND l.id = $2::uuid
         AND jsonb_typeof(l.details -> 'source_event_ids') = 'array'
         AND jsonb_typeof(f.details -> 'source_event_ids') = 'array'
         AND f.details -> 'source_event_ids' ?| ARRAY(SELECT jsonb_array_elements_text(l.details -> 'source_event_ids'))
     )
     SELECT id::text, text FROM turn WHERE status = 'active'
     UNION ALL
     SELECT r.id::text, r.text FROM turn t
       JOIN memories r ON r.org_id = $1 AND r.supersedes = t.id AND r.type = 'fact' AND r.status = 'active'
         AND r.user_id IS NOT DISTINCT FROM t.user_id AND r.details -> 'source_event_ids' = t.events
     WHERE t.status = 'superseded'`,
    [orgId, lessonId],
  );
  return rows;
}

/**
 * An existing directive with the same content in the same scope and namespace, never a superseded
 * one: a rule the user turns back to ("use yarn", then "use pnpm", then "use yarn" again) is
 * stored again and supersedes the one in force.
 */
export async function sameDirective(
  db: Queryable,
  scope: { orgId: string; userId: string; agentId: string | null },
  type: string,
  namespace: string | null,
  hash: string,
): Promise<{ id: string } | undefined> {
  const { rows } = await db.query(
    `SELECT id::text FROM memories WHERE org_id = $1 AND user_id = $2 AND agent_id IS NOT DISTINCT FROM $3
       AND type = $4 AND namespace IS NOT DISTINCT FROM $5 AND content_hash = $6
       AND status IS DISTINCT FROM 'superseded'
     ORDER BY created_at LIMIT 1`,
    [scope.orgId, scope.userId, scope.agentId, type, namespace, hash],
  );
  return rows[0];
}

/** An episode of this user (and agent) and conversation with this exact text. */
export async function sameEpisode(
  db: Queryable,
  scope: { orgId: string; userId: string; agentId: string | null },
  convId: string | null,
  text: string,
): Promise<{ id: string } | undefined> {
  const { rows } = await db.query(
    `SELECT id::text FROM memories WHERE org_id = $1 AND user_id = $2 AND agent_id IS NOT DISTINCT FROM $3
       AND type = 'episode' AND conv_id IS NOT DISTINCT FROM $4 AND text = $5
     ORDER BY created_at LIMIT 1`,
    [scope.orgId, scope.userId, scope.agentId, convId, text],
  );
  return rows[0];
}

export type Touched = { id: string; type: MemoryType; text: string };

/** A restated fact: bump `updated_at` and add the new source turns. */
export async function touchFact(
  db: Queryable,
  orgId: string,
  id: string,
  eventIds: string[],
): Promise<Touched[]> {
  const { rows } = await db.query(
    `UPDATE memories SET updated_at = now(),
       details = jsonb_set(details, '{source_event_ids}',
         (SELECT coalesce(jsonb_agg(DISTINCT e), '[]'::jsonb) FROM jsonb_array_elements_text(
            coalesce(details->'source_event_ids', '[]'::jsonb) || $3::jsonb) AS e))
     WHERE org_id = $1 AND id = $2::uuid RETURNING id::text, type, text`,
    [orgId, id, JSON.stringify(eventIds)],
  );
  return rows;
}

/**
 * touchFact for many rows in one statement: each id's new source turns are merged first (an id
 * may be restated twice in one job), so the result equals touching them one by one.
 */
export async function touchFacts(
  db: Queryable,
  orgId: string,
  touches: Array<{ id: string; eventIds: string[]; groupIds?: string[]; metadata?: Record<string, unknown> }>,
  maxTags: number,
  metadataBounds: { keys: number; bytes: number },
): Promise<Touched[]> {
  if (touches.length === 0) return [];
  const merged = new Map<string, { events: string[]; groups: string[]; metadata: Record<string, unknown> }>();
  for (const t of touches) {
    const m = merged.get(t.id) ?? { events: [], groups: [], metadata: {} };
    merged.set(t.id, {
      events: [...m.events, ...t.eventIds],
      groups: [...m.groups, ...(t.groupIds ?? [])],
      metadata: { ...m.metadata, ...t.metadata },
    });
  }
  // The groups a restating job's classification gave are added after the row's own, as many as
  // the cap on a memory's tags leaves room for. Its metadata is merged over the row's, as a PATCH
  // merges it (keys never deleted), unless the result would pass the bounds a memory's metadata
  // keeps (`metadataBounds`: its keys, and its bytes measured on jsonb's text, a little longer
  // than compact JSON): the row then keeps its own, and the ingest does not
  // fail for it.
  const { rows } = await db.query(
    `UPDATE memories m SET updated_at = now(),
       details = jsonb_set(m.details, '{source_event_ids}',
         (SELECT coalesce(jsonb_agg(DISTINCT e), '[]'::jsonb) FROM jsonb_array_elements_text(
            coalesce(m.details->'source_event_ids', '[]'::jsonb) || x.events) AS e)),
       group_ids = ARRAY(
         SELECT g FROM (SELECT g, min(o) AS o FROM unnest(m.group_ids || x.groups) WITH ORDINALITY AS u(g, o) GROUP BY g) t
         ORDER BY o LIMIT greatest($3::int, cardinality(m.group_ids))),
       metadata = CASE
         WHEN x.metadata = '{}'::jsonb THEN m.metadata
         WHEN (SELECT count(*) FROM jsonb_object_keys(m.metadata || x.metadata)) <= $4::int
           AND octet_length((m.metadata || x.metadata)::text) <= $5::int THEN m.metadata || x.metadata
         ELSE m.metadata END
     FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, events jsonb, groups text[], metadata jsonb)
     WHERE m.org_id = $1 AND m.id = x.id RETURNING m.id::text, m.type, m.text`,
    [
      orgId,
      JSON.stringify(
        [...merged].map(([id, m]) => ({ id, events: m.events, groups: m.groups, metadata: m.metadata })),
      ),
      maxTags,
      metadataBounds.keys,
      metadataBounds.bytes,
    ],
  );
  return rows;
}

/** Adds facts to an episode's `fact_ids` (facts a job stored again in a conversation it found stored). */
export async function listFactsInEpisode(
  db: Queryable,
  orgId: string,
  episodeId: string,
  ids: string[],
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE memories SET details = jsonb_set(details, '{fact_ids}', coalesce(details -> 'fact_ids', '[]'::jsonb) || $3::jsonb)
     WHERE org_id = $1 AND id = $2 AND type = 'episode'`,
    [orgId, episodeId, JSON.stringify(ids)],
  );
}

/** An episode ingested again: `updated_at` now (if it is still there). */
export async function touchEpisode(db: Queryable, orgId: string, id: string): Promise<Touched[]> {
  const { rows } = await db.query(
    `UPDATE memories SET updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING id::text, type, text`,
    [orgId, id],
  );
  return rows;
}

/** Old facts replaced by new ones: status superseded, `updated_at` now (with each one's user). */
export async function markSuperseded(
  db: Queryable,
  orgId: string,
  ids: string[],
): Promise<Array<Touched & { user_id: string | null }>> {
  if (ids.length === 0) return [];
  const { rows } = await db.query(
    `UPDATE memories SET status = 'superseded', updated_at = now()
     WHERE org_id = $1 AND id = ANY($2::uuid[]) AND status IS DISTINCT FROM 'superseded'
     RETURNING id::text, type, text, user_id`,
    [orgId, ids],
  );
  return rows;
}

/** Re-observed artifact or directive: bump `updated_at`, count the observation, refresh outcome. */
export async function touchObserved(
  db: Queryable,
  orgId: string,
  id: string,
  outcome: string | null,
): Promise<Touched[]> {
  const { rows } = await db.query(
    `UPDATE memories SET updated_at = now(), outcome = coalesce($3, outcome),
       details = details || jsonb_build_object(
         'observation_count', ${countIn("observation_count")} + 1,
         'last_confirmed_at', to_jsonb(now()))
     WHERE org_id = $1 AND id = $2::uuid RETURNING id::text, type, text`,
    [orgId, id, outcome],
  );
  return rows;
}

/** The user's newest active facts: what the agentic path "already knows" before extracting. */
export async function recentFactTexts(
  db: Queryable,
  scope: { orgId: string; userId: string },
  limit = 50,
): Promise<string[]> {
  const { rows } = await db.query<{ text: string }>(
    `SELECT text FROM memories WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status = 'active'
     ORDER BY updated_at DESC LIMIT $3`,
    [scope.orgId, scope.userId, limit],
  );
  return rows.map((r) => r.text);
}

/**
 * The user's name from the newest active "The user's name is X." fact (the local extractor's
 * profile fact), or null: one probe of a partial index (sql/091).
 */
export async function userNameText(
  db: Queryable,
  scope: { orgId: string; userId: string },
): Promise<string | null> {
  const { rows } = await db.query<{ text: string }>(
    `SELECT text FROM memories
     WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status = 'active'
       AND text LIKE 'The user''s name is %'
     ORDER BY created_at DESC LIMIT 1`,
    [scope.orgId, scope.userId],
  );
  return rows[0]?.text ?? null;
}

/** Earlier facts named per statement by nameEarlierFacts. */
const NAME_BATCH = 100;

/**
 * A name introduced after facts were written: the user's earlier facts that say "the user" (from
 * user turns, not superseded, not this job's) get the name in their indexed context, so a
 * question naming the user reaches them as it reaches the later facts that read with the name
 * (whose context holds "(the user)"). The row trigger re-derives their full-text vectors, so each
 * row costs index writes (1.6-3.3 ms on PostgreSQL, more on the embedded database): NAME_BATCH
 * rows a statement, each its own transaction, until none is left, so no statement holds the
 * embedded database's one session for long. A named row no longer matches. Returns how many rows
 * it named.
 */
export async function nameEarlierFacts(
  db: Queryable,
  scope: { orgId: string; userId: string },
  name: string,
  jobId: string,
): Promise<number> {
  let named = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `UPDATE memories SET context = concat_ws(' ', context, '(' || $3::text || ')')
       WHERE id IN (
         SELECT id FROM memories
         WHERE org_id = $1 AND user_id = $2 AND type = 'fact' AND status IS DISTINCT FROM 'superseded'
           AND ($4::text IS NULL OR job_id IS DISTINCT FROM $4) AND details ->> 'source_role' = 'user'
           AND text ILIKE '%the user%' AND text NOT LIKE 'The user''s name is %'
           AND strpos(coalesce(context, ''), '(' || $3::text || ')') = 0
         LIMIT $5)
         AND strpos(coalesce(context, ''), '(' || $3::text || ')') = 0`,
      [scope.orgId, scope.userId, name, jobId, NAME_BATCH],
    );
    named += rowCount ?? 0;
    if ((rowCount ?? 0) < NAME_BATCH) return named;
  }
}
