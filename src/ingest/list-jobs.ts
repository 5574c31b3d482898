import { confinedUser } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { decodeCursor, encodeCursor } from "../cursor.js";
import { type JobStatus, listJobRows } from "../db/jobs.js";
import { CoreError } from "../errors.js";
import { JOB_ID_RE } from "../ids.js";
import {
  type IngestJobList,
  JOB_LIST_LIMIT_DEFAULT,
  JOB_LIST_LIMIT_MAX,
  JOB_STATUSES,
} from "../wire/ingest.js";
import { toJobWire } from "./job-wire.js";

const CURSOR_BINDING = "ingest_jobs";

export interface ListIngestJobsInput {
  limit?: number | undefined;
  cursor?: string | null | undefined;
  status?: JobStatus | null | undefined;
}

/**
 * The organisation's ingest jobs (only its own user's, for a credential confined to a user), newest first, keyset-paginated. Finished jobs are kept for
 * MNEMO_JOB_RETENTION_HOURS, so this is the recent history, not an archive.
 */
export async function listIngestJobs({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: ListIngestJobsInput;
}): Promise<IngestJobList> {
  const limit = input.limit ?? JOB_LIST_LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > JOB_LIST_LIMIT_MAX) {
    throw new CoreError("invalid_request", `limit must be an integer from 1 to ${JOB_LIST_LIMIT_MAX}.`);
  }
  if (input.status && !(JOB_STATUSES as readonly string[]).includes(input.status)) {
    throw new CoreError("invalid_request", `status must be one of ${JOB_STATUSES.join(", ")}.`);
  }
  const orgId = ctx.principal.orgId;
  const after = input.cursor
    ? decodeCursor(ctx.deps.secret, orgId, CURSOR_BINDING, input.cursor, JOB_ID_RE)
    : null;
  const rows = await listJobRows(ctx.db, orgId, {
    limit: limit + 1,
    after,
    status: input.status ?? null,
    userId: confinedUser(ctx.principal),
  });
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    object: "list",
    data: page.map(toJobWire),
    has_more: hasMore,
    next_cursor:
      hasMore && last
        ? encodeCursor(ctx.deps.secret, orgId, CURSOR_BINDING, { createdAt: last.cursor_ts, id: last.id })
        : null,
  };
}
