import { z } from "zod";
import { IngestJobSchema } from "../../src/wire/ingest.js";
import { jobText } from "../render.js";
import { defineTool } from "../tool.js";

export const getIngestJobTool = defineTool({
  name: "get_ingest_job",
  title: "Read an ingest job",
  description:
    "Read the state of an add_memory job (pending, running, succeeded or failed) and, once it succeeded, " +
    "the memories it created or updated.",
  input: { job_id: z.string().min(1).describe("The job id (job_...) returned by add_memory.") },
  output: IngestJobSchema,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const job = await env.service.getIngestJob(args.job_id);
    return { structured: job, text: jobText(job) };
  },
});
