import { z } from "@hono/zod-openapi";
import { DIRECTIVE_TYPES, FACT_STATUSES, MEMORY_TYPES, type MemoryType } from "../memories/model.js";
import { FACT_TYPES } from "../providers/types.js";
import { DateTime, DigitsLimit, Ident, listOf, Str } from "./common.js";

export const LIST_LIMIT_MAX = 500;
export const LIST_LIMIT_DEFAULT = 50;

const Ids = z.array(z.string());
const NullableText = z.string().nullable();

/*
 * A memory's `details` by type (the interface's section 2.2, and DECISIONS). Every field is
 * optional and other fields pass (a mem0 import's `source`): the declared
 * ones have their declared types. Responses carry them; `admin import` checks each memory line's
 * details against its type's (src/admin/import.ts), so a file cannot store what the API would
 * then serve against its own schema.
 */
const FactDetailsSchema = z
  .looseObject({
    fact_type: z.enum(FACT_TYPES).nullable(),
    status: z.enum(FACT_STATUSES).nullable(),
    supersedes: NullableText,
    source_role: NullableText,
    episode_id: NullableText,
    artifact_id: NullableText,
    artifact_ids: Ids,
    source_event_ids: Ids,
    date: NullableText.openapi({ description: "The source message's `date` as sent." }),
    occurred_at: NullableText.openapi({
      description: "That date read as an instant (ISO 8601), when it could be.",
    }),
  })
  .partial()
  .openapi("FactDetails");

const ArtifactDetailsSchema = z
  .looseObject({
    title: NullableText,
    rationale: NullableText,
    version: z.number().int().nullable(),
    root_id: NullableText,
    source_fact_ids: Ids,
    episode_ids: Ids,
    source_event_ids: Ids,
    full_content: NullableText,
  })
  .partial()
  .openapi("ArtifactDetails");

const EpisodeDetailsSchema = z
  .looseObject({
    title: NullableText,
    // The conversation's own date strings when they were not read as dates: not always ISO 8601.
    started_at: NullableText,
    ended_at: NullableText,
    fact_ids: Ids,
    artifact_ids: Ids,
    gist: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: "An agentic session's gist: `goal`, `tools`, `files`." }),
  })
  .partial()
  .openapi("EpisodeDetails");

/** Lessons and procedures. */
const DirectiveDetailsSchema = z
  .looseObject({
    fact_type: z.enum(DIRECTIVE_TYPES),
    trigger_entities: Ids,
    matched_on: Ids,
    because: NullableText,
    confidence: z.number().min(0).max(1).nullable(),
    observation_count: z.number().int().nullable(),
    last_confirmed_at: DateTime.nullable(),
    steps: Ids.nullable(),
    source_outcome: z.enum(["resolved", "failed"]).nullable(),
    namespace: NullableText,
    episode_id: NullableText,
    source_event_ids: Ids,
  })
  .partial()
  .openapi("DirectiveDetails");

/** Each memory type's details schema. */
export const DETAILS_BY_TYPE = {
  fact: FactDetailsSchema,
  artifact: ArtifactDetailsSchema,
  episode: EpisodeDetailsSchema,
  lesson: DirectiveDetailsSchema,
  procedure: DirectiveDetailsSchema,
} as const satisfies Record<MemoryType, z.ZodType>;

/** A memory as every surface sends it (list, get, search, trigger, ingest results, MCP). */
export const MemorySchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    object: z.literal("memory"),
    type: z.enum(MEMORY_TYPES),
    text: z.string(),
    user_id: z.string().nullable(),
    agent_id: z.string().nullable(),
    conv_id: z.string().nullable(),
    app_id: z.string().nullable(),
    group_ids: z.array(z.string()),
    categories: z.array(z.string()),
    score: z.number().nullable(),
    created_at: DateTime.nullable(),
    updated_at: DateTime.nullable(),
    metadata: z.record(z.string(), z.unknown()).openapi({
      description: "Free-form metadata sent with the ingest that wrote the memory; `{}` when none.",
    }),
    // Typed as a plain object for the verbs, which build it field by field (src/memories/model.ts).
    details: z
      .union([FactDetailsSchema, ArtifactDetailsSchema, EpisodeDetailsSchema, DirectiveDetailsSchema])
      .openapi({
        description:
          "Always an object; its shape depends on `type`: FactDetails, ArtifactDetails, EpisodeDetails, or DirectiveDetails (lesson, procedure).",
      }) as unknown as z.ZodType<Record<string, unknown>>,
  })
  .openapi("Memory");
export type Memory = z.infer<typeof MemorySchema>;

export const MemoryListSchema = listOf(MemorySchema, "MemoryList");
export type MemoryList = z.infer<typeof MemoryListSchema>;

const q = (name: string, description: string, schema: z.ZodString = Ident()) =>
  schema.optional().openapi({ param: { name, in: "query" }, description });

/** GET /v1/memories query; `include` is a comma-separated list holding at most `full_content`. */
export const ListMemoriesQuery = z
  .object({
    user_id: q("user_id", "Exact match; ANDed with the other filters."),
    agent_id: q("agent_id", "Exact match."),
    conv_id: q("conv_id", "Exact match."),
    app_id: q("app_id", "Exact match."),
    group_id: q("group_id", "Rows tagged with this group id."),
    type: z
      .enum(["fact", "artifact", "episode"])
      .optional()
      .openapi({ param: { name: "type", in: "query" }, description: "Default: all three." }),
    status: z
      .enum(FACT_STATUSES)
      .optional()
      .openapi({
        param: { name: "status", in: "query" },
        description:
          "Facts' status (`superseded` facts were replaced by a newer one); other types count as active. Default: both.",
      }),
    cursor: q("cursor", "`next_cursor` of the previous page (same organisation and order).", Str().max(4096)),
    limit: DigitsLimit(LIST_LIMIT_MAX)
      .default(LIST_LIMIT_DEFAULT)
      .openapi({
        param: { name: "limit", in: "query" },
        type: "integer",
        minimum: 1,
        maximum: LIST_LIMIT_MAX,
        default: LIST_LIMIT_DEFAULT,
      }),
    order: z
      .enum(["created_at_desc", "created_at_asc"])
      .default("created_at_desc")
      .openapi({ param: { name: "order", in: "query" } }),
    include: z
      .string()
      .optional()
      .refine(
        (v) =>
          v === undefined ||
          v
            .split(",")
            .map((s) => s.trim())
            .every((s) => s === "" || s === "full_content"),
        { message: "only `full_content` is supported" },
      )
      .openapi({
        param: { name: "include", in: "query" },
        description: "Comma-separated; only `full_content` (fills `details.full_content` on artifacts).",
      }),
  })
  // A parameter it does not know is a 422, never dropped: dropped, a misspelt axis ("userId") or
  // search's plural "group_ids" listed the whole organisation to an organisation-wide key.
  .strict();

/** The list verb's input from a checked query: `include=full_content` becomes `fullContent`. */
export function listMemoriesInput(query: z.output<typeof ListMemoriesQuery>) {
  const { include, ...rest } = query;
  return { ...rest, fullContent: (include ?? "").split(",").some((s) => s.trim() === "full_content") };
}

/** DELETE /v1/memories query: the scope to forget, each axis given must match (at least one). */
export const DeleteMemoriesQuery = z
  .object({
    user_id: q("user_id", "The user whose memories go (a key confined to a user: its own, the default)."),
    agent_id: q("agent_id", "Exact match; ANDed with the other axes."),
    conv_id: q("conv_id", "Exact match; ANDed with the other axes."),
    app_id: q("app_id", "Exact match; ANDed with the other axes."),
  })
  // A parameter it does not know ("user_id[]", a misspelt axis) is a 422, never dropped: dropped,
  // a user's key would forget all of its own user's memories.
  .strict();

export const MemoryDeletionSchema = z
  .object({
    object: z.literal("memory_deletion"),
    deleted: z.number().int().openapi({ description: "How many memories were deleted." }),
    by_type: z
      .record(z.string(), z.number().int())
      .openapi({ description: "The same count by memory type.", example: { fact: 12, episode: 2 } }),
    jobs_deleted: z.number().int().openapi({
      description:
        "Finished ingest jobs of the scope deleted with them (their request and result hold the text).",
    }),
    jobs_in_flight: z.number().int().openapi({
      description:
        "Ingest jobs of the scope still pending or running at the time of the forget. They are left to finish and store their memories afterwards: when this is not 0, forget again once they have (GET /v1/memories/jobs?status=pending and ?status=running list them).",
    }),
  })
  .openapi("MemoryDeletion");

export const MemoryParams = z.object({
  memory_id: z.string().openapi({ param: { name: "memory_id", in: "path" }, format: "uuid" }),
});

export const GroupIdList = z.array(Ident()).max(1000).nullable().optional();

/** Fields of a memory that never change after ingest: naming one in a PATCH is 422 `immutable_field`. */
export const IMMUTABLE_MEMORY_FIELDS = [
  "id",
  "object",
  "type",
  "text",
  "user_id",
  "agent_id",
  "conv_id",
  "app_id",
  "created_at",
] as const;

export const MemoryGroupPatchRequest = z
  .looseObject({
    add_group_ids: GroupIdList.openapi({ description: "Active groups of the organisation to add." }),
    remove_group_ids: GroupIdList.openapi({
      description:
        "Tags to remove (not checked against the registry). A fact taken out of a group takes the episodes that quote it out of that group too: an episode is shared only where every fact it quotes is. Tags taken off a superseded fact also leave the later versions of its chain (a text edit copied them there).",
    }),
  })
  .superRefine((body, check) => {
    for (const field of IMMUTABLE_MEMORY_FIELDS) {
      if (field in body) {
        check.addIssue({
          code: "custom",
          path: [field],
          message: `${field} cannot change after ingest; only group tags can be edited here.`,
          params: { code: "immutable_field" },
        });
      }
    }
  })
  .openapi("MemoryGroupPatchRequest", {
    description: `Only group tags change. Naming ${IMMUTABLE_MEMORY_FIELDS.map((f) => `\`${f}\``).join(", ")} is 422 \`immutable_field\`; other fields are ignored.`,
  });
