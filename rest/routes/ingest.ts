import { createRoute, z } from "@hono/zod-openapi";
import { getIngestJob } from "../../src/ingest/get-job.js";
import { listIngestJobs } from "../../src/ingest/list-jobs.js";
import { submitIngest } from "../../src/ingest/submit.js";
import { QueryBool } from "../../src/wire/common.js";
import {
  IngestJobListSchema,
  IngestJobSchema,
  IngestRequestSchema,
  ListIngestJobsQuery,
} from "../../src/wire/ingest.js";
import { errorResponses, INGEST_ERRORS, json } from "../schemas.js";
import type { App } from "../types.js";

export function registerIngestRoutes(app: App) {
  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/memories",
      tags: ["memories"],
      summary: "Ingest chat turns (extraction runs as a background job)",
      request: {
        // Strict: a misspelt `wait` (`?wiat=true`) answered 202 to a client that thought it waited.
        query: z
          .object({
            wait: QueryBool.openapi({ description: "Hold up to the wait window for the terminal job" }),
          })
          .strict(),
        body: { required: true, ...json(IngestRequestSchema) },
      },
      responses: {
        200: {
          description: "wait=true: the job finished in the window (succeeded or failed)",
          ...json(IngestJobSchema),
        },
        202: { description: "The job, pending", ...json(IngestJobSchema) },
        ...errorResponses(INGEST_ERRORS, { body: true }),
      },
    }),
    async (c) => {
      const out = await submitIngest({
        ctx: c.get("ctx"),
        input: { request: c.req.valid("json"), wait: c.req.valid("query").wait },
      });
      return out.terminal ? c.json(out.job, 200) : c.json(out.job, 202);
    },
  );

  // Registered before GET /v1/memories/{memory_id}, which would otherwise take "jobs" for an id.
  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/memories/jobs",
      tags: ["memories"],
      summary: "List recent ingest jobs, newest first",
      description:
        "Jobs are kept for MNEMO_JOB_RETENTION_HOURS after they finish. Keyset-paginated with `next_cursor`.",
      request: { query: ListIngestJobsQuery },
      responses: {
        200: { description: "A page of jobs", ...json(IngestJobListSchema) },
        ...errorResponses({ 422: ["invalid_limit", "cursor_mismatch", "invalid_request"] }),
      },
    }),
    async (c) => {
      const q = c.req.valid("query");
      return c.json(
        await listIngestJobs({
          ctx: c.get("ctx"),
          input: { limit: q.limit, cursor: q.cursor ?? null, status: q.status ?? null },
        }),
        200,
      );
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
        200: { description: "The job", ...json(IngestJobSchema) },
        ...errorResponses({ 404: ["job_not_found"] }),
      },
    }),
    async (c) =>
      c.json(await getIngestJob({ ctx: c.get("ctx"), input: { jobId: c.req.valid("param").job_id } }), 200),
  );
}
