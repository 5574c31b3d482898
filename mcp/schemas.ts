import { z } from "zod";

/*
 * Output schemas mirror the REST wire shapes (memory-service.md section 2 and DECISIONS.md).
 * They are loose objects: a field the service adds later must not turn a good answer into a
 * validation failure on the client.
 */

export const MemoryOut = z.looseObject({
  id: z.string(),
  object: z.literal("memory").optional(),
  type: z.enum(["fact", "artifact", "episode", "lesson", "procedure"]),
  text: z.string(),
  user_id: z.string().nullable().optional(),
  agent_id: z.string().nullable().optional(),
  conv_id: z.string().nullable().optional(),
  app_id: z.string().nullable().optional(),
  group_ids: z.array(z.string()).optional(),
  categories: z.array(z.string()).optional(),
  score: z.number().nullable().optional(),
  created_at: z.string().nullable().optional(),
  updated_at: z.string().nullable().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

export const MemoryListOut = z.looseObject({
  object: z.literal("list"),
  data: z.array(MemoryOut),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

const MemoryRef = z.looseObject({ id: z.string(), text: z.string(), type: z.string().optional() });

export const JobOut = z.looseObject({
  id: z.string(),
  object: z.literal("ingest_job").optional(),
  status: z.enum(["pending", "running", "succeeded", "failed"]),
  created_at: z.string(),
  updated_at: z.string().optional(),
  result: z
    .looseObject({
      memories_created: z.array(MemoryRef),
      memories_updated: z.array(MemoryRef),
      memories_superseded_by: z.record(z.string(), z.unknown()).optional(),
      ignored_group_ids: z.array(z.string()).optional(),
    })
    .nullable()
    .optional(),
  error: z.looseObject({ type: z.string(), code: z.string(), message: z.string() }).nullable().optional(),
});

export const SearchOut = z.looseObject({
  object: z.literal("search"),
  mode: z.enum(["retrieve", "compose"]),
  data: z.array(MemoryOut),
  context: z.string().nullable(),
  context_selection_applied: z.boolean().optional(),
  stage_timings: z.record(z.string(), z.number()).optional(),
});

export const GroupOut = z.looseObject({
  id: z.string(),
  object: z.literal("group").optional(),
  name: z.string(),
  prompt: z.string().nullable().optional(),
  status: z.enum(["active", "archived"]),
  created_at: z.string(),
  updated_at: z.string().optional(),
});

export const GroupListOut = z.looseObject({
  object: z.literal("list"),
  data: z.array(GroupOut),
});

/* Input fragments, described for a language model. */

export const userId = z
  .string()
  .min(1)
  .optional()
  .describe("Whose memories: the end user's id. Omit to use the configured default user.");
export const agentId = z
  .string()
  .min(1)
  .optional()
  .describe("Agent scope (exact match). Omit to use the configured default agent, if any.");
export const appId = z
  .string()
  .min(1)
  .optional()
  .describe("Application scope (exact match). Omit to use the configured default app, if any.");
export const groupIds = z
  .array(z.string())
  .optional()
  .describe("Group ids (grp_...) to read across: rows tagged with any of them. See list_groups.");
export const namespace = z
  .string()
  .max(256)
  .optional()
  .describe(
    "Working context for lessons and procedures (e.g. a repository or project name). Omit to use the default.",
  );
export const memoryId = z
  .string()
  .min(1)
  .describe("The memory id, as returned by search_memory or list_memories.");
export const groupId = z.string().min(1).describe("The group id (grp_...), as returned by list_groups.");
