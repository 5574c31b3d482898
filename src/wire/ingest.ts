import { z } from "@hono/zod-openapi";
import { MEMORY_TYPES } from "../memories/model.js";
import { DateTime, DigitsLimit, Ident, isBlank, JsonObject, LooseText, listOf, Str } from "./common.js";

export const MessageSchema = z
  .looseObject({
    role: Ident().openapi({ example: "user" }),
    content: LooseText().openapi({
      description:
        "The turn's text. Secrets in it (keys, tokens, passwords) are masked when the ingest is accepted, unless MNEMO_REDACT_SECRETS=false.",
      example: "I moved to Lisbon last month.",
    }),
    date: Ident().nullish().openapi({ example: "1:56 pm on 8 May, 2023" }),
    dia_id: Ident().nullish().openapi({ example: "D1:3" }),
    name: Ident().nullish().openapi({ description: "Speaker name (optional)", example: "Caroline" }),
  })
  .openapi("Message");

/** POST /v1/memories body and the add_memory tool's request. */
export const IngestRequestSchema = z
  .object({
    messages: z.array(MessageSchema),
    // A blank id is no id: it would file the memories under a user or conversation no one sees.
    user_id: Ident()
      .min(1)
      .refine((s) => !isBlank(s), { error: "must not be blank", params: { code: "missing_user_id" } }),
    conv_id: Ident()
      .min(1)
      .refine((s) => !isBlank(s), { error: "must not be blank", params: { code: "missing_conv_id" } }),
    agent_id: Ident().nullish(),
    app_id: Ident().nullish(),
    outcome: z.enum(["resolved", "failed"]).nullish(),
    timestamp_format: Ident().nullish().openapi({ example: "%I:%M %p on %d %B, %Y" }),
    extract_artifacts: z.boolean().default(false),
    agentic: z.boolean().default(false),
    namespace: Ident().nullish(),
    group_ids: z
      .array(Ident())
      .default([])
      .openapi({
        description:
          "Groups to share the shareable memories with: at most MAX_GROUP_IDS_PER_INGEST (20 by default) distinct " +
          "ids, more is 422 `invalid_request`; unknown, archived or blank ones come back in `ignored_group_ids`.",
      }),
    metadata: JsonObject()
      .nullish()
      .openapi({
        type: ["object", "null"],
        description:
          "Free-form JSON object stored on every memory this ingest writes and filterable as `metadata.<key>`. " +
          "Reserved keys (tag1-tag5, kb_type, org_id) are dropped; at most 64 keys and 16 KB as JSON.",
        example: { topic: "travel", priority: 2 },
      }),
  })
  .openapi("IngestRequest");
/** A checked ingest request (defaults filled, NUL dropped from message content). */
export type IngestRequest = z.output<typeof IngestRequestSchema>;
/** A message as stored: the submit verb keeps an extra `name` (the speaker) only when it is a string. */
export type IngestMessage = IngestRequest["messages"][number] & { name?: string | null };

/** Every memory type a job result or webhook event can name. */
export const MemoryTypeSchema = z.enum(MEMORY_TYPES).openapi("MemoryType", {
  description:
    "`fact`, `artifact`, `episode`, and the directive types `lesson` and `procedure` (captured from " +
    "tool-using transcripts; recalled by the trigger operation).",
});

export const MemoryRefSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    type: MemoryTypeSchema,
    text: z.string().openapi({ description: "The memory's short preview." }),
  })
  .openapi("MemoryRef", { description: "A memory written or touched by an ingest job." });
const MemoryRef = MemoryRefSchema;

export const IngestResultSchema = z
  .object({
    object: z.literal("ingest_result"),
    memories_created: z.array(MemoryRef),
    memories_updated: z.array(MemoryRef),
    memories_superseded_by: z.record(z.string(), z.string()).openapi({
      description:
        "old id -> the id that supersedes it: facts, and lessons a later lesson reversed (a fact that recorded the reversed rule names the fact, or else the lesson, recording the new one)",
    }),
    stage_timings: z.record(z.string(), z.number()).openapi({
      description: "Seconds per stage: queue_wait, extract, embed, dedup, classify, store, total",
    }),
    ignored_group_ids: z.array(z.string()),
  })
  .openapi("IngestResult");
export type IngestResult = z.infer<typeof IngestResultSchema>;

export const JOB_STATUSES = ["pending", "running", "succeeded", "failed"] as const;
export const JOB_LIST_LIMIT_MAX = 100;
export const JOB_LIST_LIMIT_DEFAULT = 20;

export const IngestJobError = z
  .object({ type: z.string(), code: z.string(), message: z.string() })
  .openapi("IngestJobError");

export const IngestJobSchema = z
  .object({
    id: z.string().openapi({ example: "job_0123456789abcdef0123456789abcdef" }),
    object: z.literal("ingest_job"),
    status: z.enum(JOB_STATUSES),
    created_at: DateTime,
    updated_at: DateTime,
    // A union with null, not .nullable(): on a named schema, .nullable() is rendered as allOf of
    // the $ref and a nullable type (which no null can satisfy) or makes the named schema itself
    // nullable wherever it is used.
    result: z.union([IngestResultSchema, z.null()]),
    error: z.union([IngestJobError, z.null()]),
  })
  .openapi("IngestJob");
export type IngestJob = z.infer<typeof IngestJobSchema>;

export const IngestJobListSchema = listOf(IngestJobSchema, "IngestJobList");
export type IngestJobList = z.infer<typeof IngestJobListSchema>;

/** GET /v1/memories/jobs query. */
export const ListIngestJobsQuery = z
  .object({
    status: z
      .enum(JOB_STATUSES)
      .optional()
      .openapi({ param: { name: "status", in: "query" }, description: "Only jobs in this state." }),
    cursor: Str()
      .optional()
      .openapi({
        param: { name: "cursor", in: "query" },
        description: "`next_cursor` of the previous page.",
      }),
    limit: DigitsLimit(JOB_LIST_LIMIT_MAX)
      .default(JOB_LIST_LIMIT_DEFAULT)
      .openapi({
        param: { name: "limit", in: "query" },
        type: "integer",
        minimum: 1,
        maximum: JOB_LIST_LIMIT_MAX,
        default: JOB_LIST_LIMIT_DEFAULT,
      }),
  })
  // A parameter it does not know is a 422 naming it, never dropped (as on every list).
  .strict();
