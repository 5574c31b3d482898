import { z } from "zod";
import { jobText } from "../render.js";
import { JobOut } from "../schemas.js";
import { defineTool } from "../tool.js";

export const getIngestJob = defineTool({
  name: "get_ingest_job",
  title: "Read an ingest job",
  description:
    "Read the state of an add_memory job (pending, running, succeeded or failed) and, once it succeeded, " +
    "the memories it created or updated.",
  input: { job_id: z.string().min(1).describe("The job id (job_...) returned by add_memory.") },
  output: JobOut,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, env) {
    const job = await env.client.getJob(args.job_id);
    return { structured: job, text: jobText(job) };
  },
});
