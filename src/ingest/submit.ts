import { writeUserId } from "../auth/user-scope.js";
import { type Ctx, inTx } from "../context.js";
import { findGroupsByIds } from "../db/groups.js";
import { findJob, insertJob } from "../db/jobs.js";
import { CoreError, isDatabaseUnavailable } from "../errors.js";
import { newJobId } from "../ids.js";
import { ingestMetadata } from "../memories/metadata.js";
import { checkMonthlyQuota } from "../usage/quota.js";
import { recordUsage } from "../usage/record.js";
import { isBlank } from "../wire/common.js";
import type { IngestMessage, IngestRequest } from "../wire/ingest.js";
import { type IngestJob, isTerminal, toJobWire } from "./job-wire.js";
import { redactSecrets } from "./redact.js";
import { jobSignals, stopDeadline } from "./signals.js";

export type { IngestMessage, IngestRequest };

/** What the job row keeps: the request, with the group ids split into valid and ignored. */
export interface StoredRequest extends Omit<IngestRequest, "group_ids" | "messages"> {
  messages: IngestMessage[];
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
  const { config } = ctx.deps;
  // A credential confined to a user writes only as that user (403 user_mismatch otherwise).
  const request = { ...input.request, user_id: writeUserId(ctx.principal, input.request.user_id) ?? "" };
  if (request.messages.length === 0)
    throw new CoreError("invalid_messages", "messages must not be empty.", { field: "messages" });
  if (request.messages.every((m) => isBlank(m.content))) {
    throw new CoreError("invalid_messages", "Every message is blank; send at least one turn with content.", {
      field: "messages",
    });
  }
  if (request.messages.length > config.MNEMO_MAX_MESSAGES_PER_INGEST) {
    throw new CoreError(
      "too_many_messages",
      `At most ${config.MNEMO_MAX_MESSAGES_PER_INGEST} messages may be sent with one ingest ` +
        `(got ${request.messages.length}); split the conversation into several ingests.`,
      { field: "messages" },
    );
  }
  // The cap counts distinct ids: a list naming one group twice tags with it once.
  const requested = [...new Set(request.group_ids ?? [])];
  if (requested.length > config.MAX_GROUP_IDS_PER_INGEST) {
    throw new CoreError(
      "invalid_request",
      `At most ${config.MAX_GROUP_IDS_PER_INGEST} group_ids may be sent with one ingest.`,
      { field: "group_ids" },
    );
  }
  const metadata = ingestMetadata(request.metadata);
  const found = await findGroupsByIds(ctx.db, ctx.principal.orgId, requested);
  const active = new Set(found.filter((g) => g.status === "active").map((g) => g.id));
  // Secrets are masked before the job row is written: nothing made from the conversation, and no
  // model it is sent to, ever holds them (src/ingest/redact.ts).
  const redacted: string[] = [];
  const content = (text: string) => {
    if (!config.MNEMO_REDACT_SECRETS) return text;
    const out = redactSecrets(text);
    redacted.push(...out.kinds);
    return out.text;
  };
  const stored: StoredRequest = {
    ...request,
    metadata,
    messages: request.messages.map((m) => ({
      role: m.role,
      content: content(m.content),
      date: m.date ?? null,
      dia_id: m.dia_id ?? null,
      ...(typeof m.name === "string" && m.name.trim() ? { name: m.name.trim() } : {}),
    })),
    group_ids: requested.filter((id) => active.has(id)),
    ignored_group_ids: requested.filter((id) => !active.has(id)),
  };

  const jobId = newJobId();
  for (const kind of redacted) ctx.deps.metrics.secretsRedacted.inc({ kind });
  const row = await inTx(ctx, async ({ db: tx }) => {
    // Under the organisation's quota lock until this transaction, which counts the messages, commits.
    await checkMonthlyQuota(ctx, { messages: request.messages.length }, tx);
    const job = await insertJob(tx, {
      id: jobId,
      orgId: ctx.principal.orgId,
      apiKeyId: ctx.principal.keyId,
      request: stored,
    });
    await ctx.deps.queue.send(
      "ingest",
      { jobId, orgId: ctx.principal.orgId, requestId: ctx.requestId },
      {
        db: tx,
        expireInSeconds: config.MNEMO_JOB_EXPIRE_SECONDS,
        heartbeatSeconds: config.MNEMO_JOB_HEARTBEAT_SECONDS,
      },
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
  ctx.log.info(
    {
      jobId,
      messages: request.messages.length,
      ...(redacted.length ? { secretsRedacted: redacted.length } : {}),
    },
    "ingest accepted",
  );

  if (!input.wait || config.MNEMO_WAIT_SECONDS === 0) return { job: toJobWire(row), terminal: false };
  const final = await waitForTerminal(ctx, jobId, config.MNEMO_WAIT_SECONDS * 1000);
  return final ? { job: toJobWire(final), terminal: true } : { job: toJobWire(row), terminal: false };
}

/**
 * Waits for the job to become terminal: woken by the signal for this job, raised in-process when
 * this process ran it and relayed from LISTEN/NOTIFY when another did, with a slow fallback poll
 * (1 s) for a missed notification or a database that cannot deliver them. A shutdown shortens
 * the window so the request is answered (202, pending) before the server closes. The database
 * going away ends the wait the same way: the job is committed and runs once it is back, and a 503
 * would have the client send the conversation again.
 */
async function waitForTerminal(ctx: Ctx, jobId: string, windowMs: number) {
  const signals = jobSignals(ctx.deps);
  const deadline = Date.now() + windowMs;
  for (;;) {
    const row = await findJob(ctx.db, ctx.principal.orgId, jobId).catch((err: unknown) => {
      if (!isDatabaseUnavailable(err)) throw err;
      ctx.log.warn({ err, jobId }, "database unavailable during the wait: the ingest answered pending");
      return undefined;
    });
    if (!row) return undefined;
    if (isTerminal(row.status)) return row;
    const left = Math.min(deadline, stopDeadline(ctx.deps)) - Date.now();
    if (left <= 0) return undefined;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signals.off(`finished:${jobId}`, done);
        signals.off("recheck", done);
        signals.off("stopping", done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(1000, left));
      signals.on(`finished:${jobId}`, done);
      signals.on("recheck", done);
      signals.on("stopping", done);
    });
  }
}
