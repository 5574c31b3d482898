import { MEMORY_COLUMNS, type MemoryRow, type MemoryType } from "../memories/model.js";
import type { Queryable } from "./db.js";

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
  }));
  const { rows: inserted } = await db.query<MemoryRow>(
    `INSERT INTO memories (id, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, categories,
       details, status, supersedes, namespace, trigger_entities, outcome, full_content, content_hash, job_id,
       write_key, embedding, created_at, updated_at)
     SELECT x.id, x.org_id, x.type, x.text, x.user_id, x.agent_id, x.conv_id, x.app_id, x.group_ids, x.categories,
       x.details, x.status, x.supersedes, x.namespace, x.trigger_entities, x.outcome, x.full_content,
       x.content_hash, x.job_id, x.write_key, x.embedding::vector,
       coalesce(x.created_at, now()), coalesce(x.created_at, now())
     FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, org_id text, type text, text text, user_id text,
       agent_id text, conv_id text, app_id text, group_ids text[], categories text[], details jsonb, status text,
       supersedes uuid, namespace text, trigger_entities text[], outcome text, full_content text,
       content_hash text, job_id text, write_key text, embedding text, created_at timestamptz)
     ON CONFLICT (job_id, write_key) WHERE job_id IS NOT NULL DO NOTHING
     RETURNING ${MEMORY_COLUMNS}`,
    [JSON.stringify(payload)],
  );
  return inserted;
}

/** One memory of the organisation, or undefined (unknown, malformed and foreign ids alike). */
export async function findMemory(db: Queryable, orgId: string, id: string): Promise<MemoryRow | undefined> {
  const { rows } = await db.query<MemoryRow>(
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE org_id = $1 AND id::text = $2`,
    [orgId, id.toLowerCase()],
  );
  return rows[0];
}
