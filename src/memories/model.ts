import { FACT_STATUSES, MEMORY_TYPES, type MemoryRow, type MemoryType } from "../db/memory-row.js";

/**
 * The memory as sent on the wire (the stored row is src/db/memory-row.ts). Row-to-wire mapping
 * lives here and only here, so list, get, search, trigger, ingest results and MCP all render a
 * memory the same way.
 */

export { FACT_STATUSES, MEMORY_TYPES, type MemoryType };
export const CONTENT_TYPES = ["fact", "artifact", "episode"] as const;
export const DIRECTIVE_TYPES = ["lesson", "procedure"] as const;
export type DirectiveType = (typeof DIRECTIVE_TYPES)[number];

import type { Memory } from "../wire/memories.js";

export type { Memory };

export interface WireOptions {
  /** Fill `details.full_content` on artifacts (get-by-id always; list and search on request). */
  fullContent?: boolean;
  /** Search score; null everywhere else. */
  score?: number | null;
  /** Directive fields that depend on the request (trigger, search): matched_on, because, confidence. */
  directive?: { matched_on?: string[]; because?: string | null; confidence?: number | null };
}

export function toWire(row: MemoryRow, options: WireOptions = {}): Memory {
  return {
    id: row.id,
    object: "memory",
    type: row.type,
    text: row.text,
    user_id: row.user_id,
    agent_id: row.agent_id,
    conv_id: row.conv_id,
    app_id: row.app_id,
    group_ids: row.group_ids ?? [],
    categories: row.categories ?? [],
    score: options.score ?? null,
    created_at: row.created_at?.toISOString() ?? null,
    updated_at: row.updated_at?.toISOString() ?? null,
    metadata: row.metadata ?? {},
    details: detailsFor(row, options),
  };
}

function detailsFor(row: MemoryRow, options: WireOptions): Record<string, unknown> {
  const stored = row.details ?? {};
  switch (row.type) {
    case "fact": {
      const { episode_index: _index, episode_near: _near, ...rest } = stored;
      return {
        fact_type: null,
        source_role: null,
        episode_id: null,
        artifact_id: null,
        artifact_ids: [],
        source_event_ids: [],
        ...rest,
        status: row.status ?? "active",
        supersedes: row.supersedes,
      };
    }
    case "artifact": {
      const { full_content: _ignored, ...rest } = stored;
      return {
        title: null,
        rationale: null,
        version: 1,
        root_id: row.id,
        source_fact_ids: [],
        episode_ids: [],
        ...rest,
        ...(options.fullContent ? { full_content: row.full_content } : {}),
      };
    }
    case "episode":
      return { title: null, started_at: null, ended_at: null, fact_ids: [], artifact_ids: [], ...stored };
    case "lesson":
    case "procedure":
      return {
        observation_count: null,
        last_confirmed_at: null,
        steps: null,
        ...stored,
        fact_type: row.type,
        trigger_entities: row.trigger_entities ?? [],
        namespace: row.namespace,
        source_outcome: row.outcome,
        matched_on: options.directive?.matched_on ?? [],
        because: options.directive?.because ?? null,
        confidence: options.directive?.confidence ?? null,
      };
  }
}
