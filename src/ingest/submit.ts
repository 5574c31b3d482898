import type { Ctx } from "../context.js";
import { findGroupsByIds } from "../db/groups.js";
import { findJob, insertJob } from "../db/jobs.js";
import { CoreError } from "../errors.js";
import { newJobId } from "../ids.js";
import { recordUsage } from "../usage/record.js";
import { type IngestJob, isTerminal, toJobWire } from "./job-wire.js";
import { jobSignals } from "./signals.js";

export const INGEST_QUEUE = "ingest";

export interface IngestMessage {
  role: string;
  content: string;
  date?: string | null;
  dia_id?: string | null;
  name?: string | null;
}

export interface IngestRequest {
  messages: IngestMessage[];
  user_id: string;
  conv_id: string;
  agent_id?: string | null;
  app_id?: string | null;
  outcome?: "resolved" | "failed" | null;
  timestamp_format?: string | null;
  extract_artifacts?: boolean;
  agentic?: boolean;
  namespace?: string | null;
  group_ids?: string[];
}

/** What the job row keeps: the request, with the group ids split into valid and ignored. */
export interface StoredRequest extends Omit<IngestRequest, "group_ids"> {
  group_ids: string[];
  ignored_group_ids: string[];
}

/**
 * Accepts an ingest: validates, records the job and enqueues it in one transaction, counts the
 * messages for usage. With `wait`, holds until the job is terminal or the wait window ends.
 */
export async function submitIngest({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { request: IngestRequest; wait: boolean };
}): Promise<{ job: IngestJob; terminal: boolean }> {
  const { request } = input;
  const { config } = ctx.deps;
  if (request.messages.length === 0) throw new CoreError("invalid_messages", "messages must not be empty.");
  if (request.messages.every((m) => !m.content.trim())) {
    throw new CoreError("invalid_messages", "Every message is blank; send at least one turn with content.");
  }
  const requested = [...new Set(request.group_ids ?? [])];
  if ((request.group_ids ?? []).length > config.MAX_GROUP_IDS_PER_INGEST) {
    throw new CoreError(
      "invalid_request",
      `At most ${config.MAX_GROUP_IDS_PER_INGEST} group_ids may be sent with one ingest.`,
    );
  }
  const found = await findGroupsByIds(ctx.db, ctx.principal.orgId, requested);
  const active = new Set(found.filter((g) => g.status === "active").map((g) => g.id));
  const stored: StoredRequest = {
    ...request,
    messages: request.messages.map((m) => ({
      role: m.role,
      content: m.content,
      date: m.date ?? null,
      dia_id: m.dia_id ?? null,
      ...(typeof m.name === "string" && m.name.trim() ? { name: m.name.trim() } : {}),
    })),
    group_ids: requested.filter((id) => active.has(id)),
    ignored_group_ids: requested.filter((id) => !active.has(id)),
  };

  const jobId = newJobId();
  const row = await ctx.deps.db.tx(async (tx) => {
    const job = await insertJob(tx, {
      id: jobId,
      orgId: ctx.principal.orgId,
      apiKeyId: ctx.principal.keyId,
      request: stored,
    });
    await ctx.deps.queue.send(
      INGEST_QUEUE,
      { jobId, orgId: ctx.principal.orgId, requestId: ctx.requestId },
      { db: tx, expireInSeconds: config.MNEMO_JOB_EXPIRE_SECONDS },
    );
    await recordUsage(tx, {
      orgId: ctx.principal.orgId,
      keyId: ctx.principal.keyId,
      messages: request.messages.length,
    });
    return job;
  });
  const signals = jobSignals(ctx.deps);
  signals.emit("enqueued", jobId);
  ctx.log.info({ jobId, messages: request.messages.length }, "ingest accepted");

  if (!input.wait || config.MNEMO_WAIT_SECONDS === 0) return { job: toJobWire(row), terminal: false };
  const final = await waitForTerminal(ctx, jobId, config.MNEMO_WAIT_SECONDS * 1000);
  return final ? { job: toJobWire(final), terminal: true } : { job: toJobWire(row), terminal: false };
}

/**
 * Waits for the job to become terminal: woken by the in-process signal when this process ran it,
 * with a slow fallback poll (1 s) for deployments where another process does.
 */
async function waitForTerminal(ctx: Ctx, jobId: string, windowMs: number) {
  const signals = jobSignals(ctx.deps);
  const deadline = Date.now() + windowMs;
  for (;;) {
    const row = await findJob(ctx.deps.db, ctx.principal.orgId, jobId);
    if (!row) return undefined;
    if (isTerminal(row.status)) return row;
    const left = deadline - Date.now();
    if (left <= 0) return undefined;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signals.off(`finished:${jobId}`, done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(1000, left));
      signals.on(`finished:${jobId}`, done);
    });
  }
}
