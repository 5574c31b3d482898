import type { Ctx } from "../context.js";
import type { IngestRequest } from "../wire/ingest.js";
import type { VariantAddResult } from "../wire/variant.js";
import { submitIngest } from "./submit.js";

/**
 * `POST /v1/memories/add/`: the same ingest, held up to the wait window, answered inline.
 * `mode` names the path the server chose (`chat` = live, `import` = batch); past the window the
 * answer is `status: "pending"` with the job id to poll.
 */
export async function addVariant({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: IngestRequest;
}): Promise<VariantAddResult> {
  const { job } = await submitIngest({ ctx, input: { request: input, wait: true } });
  const mode = input.messages.length > ctx.deps.config.MNEMO_BATCH_THRESHOLD ? "import" : "chat";
  const result = job.result;
  const created = result?.memories_created ?? [];
  const updated = result?.memories_updated ?? [];
  const items = [
    ...created.map((m) => ({ id: m.id, type: m.type, memory: m.text, event: "ADD" as const })),
    ...updated.map((m) => ({ id: m.id, type: m.type, memory: m.text, event: "UPDATE" as const })),
  ];
  const message =
    job.status === "succeeded"
      ? `Stored ${created.length} new and updated ${updated.length} memories.`
      : job.status === "failed"
        ? (job.error?.message ?? "Extraction failed.")
        : `Still extracting; poll GET /v1/memories/jobs/${job.id}.`;
  return {
    results: items,
    stored_facts: created.filter((m) => m.type === "fact").length,
    stored_artifacts: created.filter((m) => m.type === "artifact").length,
    flush_result: null,
    mode,
    status: job.status,
    message,
    job_id: job.id,
    stage_timings: result?.stage_timings ?? {},
  };
}
