/**
 * The memory row as stored: its type set, its shape and its column list. Domain code renders it
 * (src/memories/model.ts maps it to the wire); queries select it.
 */
export const MEMORY_TYPES = ["fact", "artifact", "episode", "lesson", "procedure"] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export interface MemoryRow {
  id: string;
  org_id: string;
  type: MemoryType;
  text: string;
  user_id: string | null;
  agent_id: string | null;
  conv_id: string | null;
  app_id: string | null;
  group_ids: string[];
  categories: string[];
  details: Record<string, unknown>;
  /** Free-form metadata from the ingest request (reserved keys stripped). */
  metadata: Record<string, unknown>;
  status: FactStatus | null;
  supersedes: string | null;
  namespace: string | null;
  trigger_entities: string[];
  outcome: "resolved" | "failed" | null;
  full_content: string | null;
  content_hash: string | null;
  job_id: string | null;
  write_key: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A fact's status (other types have none, and count as active). */
export const FACT_STATUSES = ["active", "superseded"] as const;
type FactStatus = (typeof FACT_STATUSES)[number];

/**
 * What re-ranking reads of a candidate (src/search/rerank.ts): its id, type and text, and of its
 * details only the episode it belongs to and who said it (`episode_id`, `source_role`). The
 * search's ranking statement reads just these (rankCandidates); the rows served are read whole.
 */
export type RankRow = Pick<MemoryRow, "id" | "type" | "text" | "details">;

/** Every column but the embedding and the text-search vector (never sent, rarely needed). */
export const MEMORY_COLUMNS =
  "id, org_id, type, text, user_id, agent_id, conv_id, app_id, group_ids, categories, details, metadata, " +
  "status, " +
  "supersedes, namespace, trigger_entities, outcome, full_content, content_hash, job_id, write_key, " +
  "created_at, updated_at";
