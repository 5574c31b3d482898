import { confinedUser } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { findJob } from "../db/jobs.js";
import { CoreError, quotedId } from "../errors.js";
import { JOB_ID_RE } from "../ids.js";
import { type IngestJob, toJobWire } from "./job-wire.js";

export const jobNotFound = (id: string) => new CoreError("job_not_found", `No ingest job ${quotedId(id)}.`);

/** One ingest job of the caller's organisation; unknown, swept and foreign ids are all 404. */
export async function getIngestJob({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { jobId: string };
}): Promise<IngestJob> {
  const row = JOB_ID_RE.test(input.jobId)
    ? await findJob(ctx.db, ctx.principal.orgId, input.jobId)
    : undefined;
  // A credential confined to a user sees only that user's jobs; others read as unknown.
  const user = confinedUser(ctx.principal);
  if (!row || (user !== null && row.request.user_id !== user)) {
    throw jobNotFound(input.jobId);
  }
  return toJobWire(row);
}
