import { createRoute, z } from "@hono/zod-openapi";
import { getIngestJob } from "../../src/ingest/get-job.js";
import { submitIngest } from "../../src/ingest/submit.js";
import { DateTime, errorResponses, LooseText, Str } from "../schemas.js";
import type { App } from "../types.js";

const Message = z
  .looseObject({
    role: Str().openapi({ example: "user" }),
    content: LooseText().openapi({ example: "I moved to Lisbon last month." }),
    date: Str().nullish().openapi({ example: "1:56 pm on 8 May, 2023" }),
    dia_id: Str().nullish().openapi({ example: "D1:3" }),
  })
  .openapi("Message");

export const IngestRequest = z
  .object({
    messages: z.array(Message),
    user_id: Str().min(1),
    conv_id: Str().min(1),
    agent_id: Str().nullish(),
    app_id: Str().nullish(),
    outcome: z.enum(["resolved", "failed"]).nullish(),
    timestamp_format: Str().nullish().openapi({ example: "%I:%M %p on %d %B, %Y" }),
    extract_artifacts: z.boolean().default(false),
    agentic: z.boolean().default(false),
    namespace: Str().max(256).nullish(),
    group_ids: z.array(Str()).default([]),
  })
  .openapi("IngestRequest");

const MemoryRef = z.object({ id: z.string(), type: z.string(), text: z.string() }).openapi("MemoryRef");

const IngestResult = z
  .object({
    object: z.literal("ingest_result"),
    memories_created: z.array(MemoryRef),
    memories_updated: z.array(MemoryRef),
    memories_superseded_by: z.record(z.string(), z.string()).openapi({
      description: "old fact id -> the new fact id that supersedes it",
    }),
    stage_timings: z.record(z.string(), z.number()).openapi({
      description: "Seconds per stage: queue_wait, extract, embed, dedup, classify, store, total",
    }),
    ignored_group_ids: z.array(z.string()),
  })
  .openapi("IngestResult");

const IngestJobError = z
  .object({ type: z.string(), code: z.string(), message: z.string() })
  .openapi("IngestJobError");

export const IngestJob = z
  .object({
    id: z.string().openapi({ example: "job_0123456789abcdef0123456789abcdef" }),
    object: z.literal("ingest_job"),
    status: z.enum(["pending", "running", "succeeded", "failed"]),
    created_at: DateTime,
    updated_at: DateTime,
    result: IngestResult.nullable(),
    error: IngestJobError.nullable(),
  })
  .openapi("IngestJob");

const jobContent = { "application/json": { schema: IngestJob } };

export function registerIngestRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories",
      tags: ["memories"],
      summary: "Ingest chat turns (extraction runs as a background job)",
      request: {
        query: z.object({
          wait: z
            .enum(["true", "false", "1", "0"])
            .optional()
            .openapi({ description: "Hold up to the wait window for the terminal job" }),
        }),
        body: { required: true, content: { "application/json": { schema: IngestRequest } } },
      },
      responses: {
        200: {
          description: "wait=true: the job finished in the window (succeeded or failed)",
          content: jobContent,
        },
        202: { description: "The job, pending", content: jobContent },
        ...errorResponses({ 400: ["invalid_messages"], 422: ["invalid_request"] }, { body: true }),
      },
    }),
    async (c) => {
      const { wait } = c.req.valid("query");
      const out = await submitIngest({
        ctx: c.get("ctx"),
        input: { request: c.req.valid("json"), wait: wait === "true" || wait === "1" },
      });
      return out.terminal ? c.json(out.job as never, 200) : c.json(out.job as never, 202);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/jobs/{job_id}",
      tags: ["memories"],
      summary: "Read an ingest job",
      request: { params: z.object({ job_id: z.string() }) },
      responses: {
        200: { description: "The job", content: jobContent },
        ...errorResponses({ 404: ["job_not_found"] }),
      },
    }),
    async (c) =>
      c.json(
        (await getIngestJob({ ctx: c.get("ctx"), input: { jobId: c.req.valid("param").job_id } })) as never,
        200,
      ),
  );
}
