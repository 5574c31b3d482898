import type { Ctx } from "../context.js";
import { analyzeIfStale } from "../db/analyze.js";
import { findGroupsByIds } from "../db/groups.js";
import { recentFactTexts, userNameText } from "../db/ingest-lookups.js";
import { claimJob } from "../db/jobs.js";
import { isDatabaseUnavailable, isLockConflict } from "../errors.js";
import { embeddingText } from "../memories/write.js";
import { nameFromFact } from "../providers/local/names.js";
import { ProviderError } from "../providers/openai.js";
import { assemblePlan, type PlannedRow } from "./assemble.js";
import { type Reconciled, reconcile } from "./reconcile.js";
import { holdsRedacted } from "./redact.js";
import { routeTurns } from "./route.js";
import { jobSignals, stopDeadline } from "./signals.js";
import { failJob, StaleAttempt, storeResult } from "./store.js";
import type { StoredRequest } from "./submit.js";

/**
 * Attempts per job: a job claimed more often than this fails (with its webhook) instead of running,
 * so a job that crashes its worker cannot loop forever.
 */
export const MAX_ATTEMPTS = 3;
/**
 * The pause before an attempt the model interrupted is tried again, times the attempts so far
 * (MNEMO_TEST_MODEL_RETRY_PAUSE_MS, whose default this is, shortens it for tests).
 */
export const MODEL_RETRY_PAUSE_MS = 5_000;
/**
 * The longest a server's Retry-After lengthens that pause (the AI SDK itself honours up to 60 s
 * within a call): a rate limit of 90 s used to fail the job after 15 s of pauses.
 */
export const MAX_RETRY_AFTER_MS = 300_000;

/** The pause before the next attempt of a job the model interrupted (`attempts` so far). */
export const retryPauseMs = (err: ProviderError, attempts: number, pauseMs = MODEL_RETRY_PAUSE_MS) =>
  Math.max(pauseMs * attempts, Math.min(err.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
/** The pause before an attempt a lock conflict ended is tried again. */
const LOCK_RETRY_PAUSE_MS = 500;

/**
 * An attempt ended by something that passes (the model's endpoint out of reach, a lock conflict
 * with another transaction): retried after `retryInMs`, as a new attempt that re-reads what the
 * last one stored.
 */
export class RetryLater extends Error {
  override name = "RetryLater";
  constructor(
    cause: Error,
    readonly retryInMs: number,
  ) {
    super(cause.message, { cause });
  }
}

/**
 * Texts per embedder call. The local embedder computes on this thread: 500 texts held it about
 * 60 ms at a time, and on PostgreSQL (a job of 5,000 messages lasting 4 s) that was /healthz's
 * p99; 100 keep each slice near 12 ms.
 */
const EMBED_SLICE = 100;

/**
 * Runs one ingest job through the pipeline: route, extract, embed, dedup/supersede, classify,
 * store. Slow stages (the model) run outside any transaction; the store stage commits every row
 * and the terminal state together. Any stage error fails the job and writes no memories. A
 * `rerun` is the same attempt run again after the database failed under it (jobs/ingest.ts): it
 * does not count as an attempt. `ctx.log` already carries the job id (jobs/ingest.ts): its lines
 * do not repeat it (a key written twice in one JSON line).
 */
export async function runIngestJob({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { jobId: string; rerun?: boolean };
}): Promise<void> {
  const { deps } = ctx;
  const job = await claimJob(ctx.db, input.jobId, { rerun: input.rerun });
  if (!job) return; // terminal or swept: a redelivery, nothing to do
  const request = job.request as StoredRequest;
  const signal = () => {
    const hub = jobSignals(deps);
    hub.emit(`finished:${job.id}`);
    hub.emit("finished"); // a webhook delivery may have been enqueued with the terminal state
  };
  const { metrics } = deps;
  if (job.attempts > MAX_ATTEMPTS) {
    metrics.ingestJobs.inc({ outcome: "gave_up" });
    ctx.log.error({ attempts: job.attempts }, "ingest job gave up");
    await failJob({
      ctx,
      input: { job, request, message: `Extraction did not complete after ${MAX_ATTEMPTS} attempts.` },
    });
    signal();
    return;
  }
  const startedAt = performance.now();
  const timings: Record<string, number> = {
    queue_wait: Math.max(0, (Date.now() - job.created_at.getTime()) / 1000),
  };
  metrics.ingestQueueWait.observe(timings.queue_wait!);
  const time = async <T>(stage: string, fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await fn();
    } finally {
      timings[stage] = (performance.now() - t) / 1000;
    }
  };
  let stored = 0;
  try {
    const { providers, config } = deps;
    const scope = { orgId: ctx.principal.orgId, userId: request.user_id, agentId: request.agent_id ?? null };
    const { path, turns } = routeTurns(request, config.MNEMO_BATCH_THRESHOLD, job.created_at);
    const extraction = await time("extract", async () => {
      const known = request.agentic ? await recentFactTexts(ctx.db, scope) : [];
      // Unnamed user turns speak as the user's name once it is on record.
      const unnamed = turns.some((t) => t.role === "user" && !t.speaker);
      const nameFact = unnamed ? await userNameText(ctx.db, scope) : null;
      return providers.extractor.extract({
        turns,
        path,
        extractArtifacts: request.extract_artifacts === true,
        agentic: request.agentic === true,
        known,
        userName: nameFact ? nameFromFact(nameFact) : null,
        log: ctx.log,
      });
    });
    const plan = assemblePlan(job.id, scope.orgId, request, turns, extraction, job.created_at);
    const all: PlannedRow[] = [plan.episode, ...plan.facts, ...plan.artifacts, ...plan.directives];
    await time("embed", async () => {
      // In slices, giving the event loop a turn between them: a local embedder computes on this
      // thread, and thousands of rows at once would hold every request behind it.
      const texts = all.map((r) => embeddingText(r));
      const vectors: number[][] = [];
      for (let i = 0; i < texts.length; i += EMBED_SLICE) {
        vectors.push(...(await providers.embedder.embed(texts.slice(i, i + EMBED_SLICE))));
        await new Promise((r) => setImmediate(r));
      }
      if (vectors.length !== all.length)
        throw new ProviderError("The embedder returned the wrong number of vectors.");
      all.forEach((r, i) => {
        r.embedding = vectors[i]!;
      });
    });
    const rec = await time("dedup", () => reconcile(ctx.db, providers, scope, plan));
    // Restated facts too: a fact first said in private and restated in a conversation shared with
    // groups gains the groups its verdict gives (the store adds them to the stored fact). The rest
    // of an earlier fact (reconcile's `rests`) keeps that fact's groups.
    const archived = await classifyStage(
      ctx,
      request,
      [...rec.insert.filter((r) => !rec.rests.has(r.id)), ...rec.duplicates.map((d) => d.row)],
      time,
      job.attempts >= MAX_ATTEMPTS,
    );
    confineEpisodesToTheirFacts(rec);
    // A group archived since the request was accepted is dropped like one archived before: the
    // result says so (spec 4.1, `ignored_group_ids`).
    const ignored = [...new Set([...request.ignored_group_ids, ...archived])];
    await storeResult({
      ctx,
      input: { job, request: { ...request, ignored_group_ids: ignored }, rec, timings, startedAt },
    });
    stored = rec.insert.length;
    for (const stage of ["extract", "embed", "dedup", "classify", "store"]) {
      if (timings[stage] !== undefined) metrics.ingestStage.observe({ stage }, timings[stage]);
    }
    metrics.ingestJobs.inc({ outcome: "succeeded" });
    ctx.log.info({ pipeline: path, created: rec.insert.length }, "ingest job succeeded");
  } catch (err) {
    if (err instanceof StaleAttempt) return;
    // The database out of reach or out of room (a connection dropped, a server restarting or
    // failing over, a full disk) is not the job's fault: the attempt ends without a terminal
    // state and runs again once the database answers (jobs/ingest.ts), not counted against
    // MAX_ATTEMPTS. A job failed for this was lost work: its messages were accepted and would
    // never be read.
    if (isDatabaseUnavailable(err)) {
      metrics.ingestJobs.inc({ outcome: "interrupted" });
      // A stop whose time-out ended the attempt closed the database under it: documented, not a
      // fault (it logged "ingest job failed" at error level, and counted a failure).
      if (Number.isFinite(stopDeadline(ctx.deps)))
        ctx.log.info("ingest attempt ended by the shutdown; it runs again after the restart");
      else ctx.log.warn({ err }, "ingest attempt interrupted (database unavailable); it will be retried");
      throw err;
    }
    // The model's endpoint out of reach (rate-limited, restarting, too slow) is not the job's
    // fault either: the attempt ends, and after a pause the job is tried again (jobs/ingest.ts),
    // up to MAX_ATTEMPTS; the last attempt's failure fails it.
    if (err instanceof ProviderError && err.transient && job.attempts < MAX_ATTEMPTS) {
      metrics.ingestJobs.inc({ outcome: "interrupted" });
      const retryInMs = retryPauseMs(err, job.attempts, ctx.deps.config.MNEMO_TEST_MODEL_RETRY_PAUSE_MS);
      ctx.log.warn(
        { err, attempt: job.attempts, retryInMs },
        "ingest attempt interrupted (model unavailable); it will be retried",
      );
      throw new RetryLater(err, retryInMs);
    }
    // A deadlock with a request or another job on the same rows (a DELETE, a PATCH): the
    // transaction was rolled back whole, and the attempt runs again shortly. It used to fail the
    // job for good, "Extraction failed".
    if (isLockConflict(err) && job.attempts < MAX_ATTEMPTS) {
      metrics.ingestJobs.inc({ outcome: "interrupted" });
      ctx.log.warn(
        { err, attempt: job.attempts },
        "ingest attempt interrupted (lock conflict); it will be retried",
      );
      throw new RetryLater(err as Error, LOCK_RETRY_PAUSE_MS);
    }
    metrics.ingestJobs.inc({ outcome: "failed" });
    ctx.log.error({ err }, "ingest job failed");
    const message =
      err instanceof ProviderError
        ? // The calls a message counts are one attempt's: say the job's attempts too.
          err.transient
          ? `${err.message} The job gave up after ${job.attempts} attempts.`
          : err.message
        : `Extraction failed; the operator log has the cause under job ${job.id}.`;
    await failJob({ ctx, input: { job, request, message } });
  }
  signal();
  // Planner statistics, after the job's waiters were told: the embedded database has no
  // autovacuum, and a server's looks only once a minute (see analyzeIfStale).
  analyzeIfStale(ctx.db, { stored }).catch((err: unknown) =>
    ctx.log.warn({ err }, "analyze after ingest failed"),
  );
}

/**
 * An episode quotes its facts (text, title, gist): it is shared with a group only where every fact
 * it quotes is, so a fact judged personal never reaches a group through the episode beside a
 * shareable one ("I'm interviewing elsewhere. Our team deploys on Fridays." classified the episode
 * by its work sentence, and the personal one was read in the group).
 */
function confineEpisodesToTheirFacts(rec: Reconciled): void {
  const groupsOf = new Map<string, readonly string[]>();
  for (const r of rec.insert) if (r.type === "fact") groupsOf.set(r.id, r.group_ids ?? []);
  for (const d of rec.duplicates) {
    // A restated fact is quoted by its stored id; it gains this job's groups (the store adds them).
    groupsOf.set(d.row.id, d.row.group_ids ?? []);
    groupsOf.set(d.existingId, d.row.group_ids ?? []);
  }
  for (const episode of rec.insert) {
    if (episode.type !== "episode" || !episode.group_ids?.length) continue;
    let groups = episode.group_ids;
    for (const id of (episode.details?.fact_ids as string[] | undefined) ?? []) {
      const ofFact = groupsOf.get(id) ?? [];
      groups = groups.filter((g) => ofFact.includes(g));
    }
    episode.group_ids = groups;
  }
}

/**
 * Stage 5, classify: personal memories get no tags; shareable ones get every catch-all group of
 * the valid subset plus each prompted group the classifier matched; no verdict, no tags. Groups
 * are re-read here so one archived since the request is not tagged: returns those ids.
 */
async function classifyStage(
  ctx: Ctx,
  request: StoredRequest,
  rows: PlannedRow[],
  time: <T>(stage: string, fn: () => Promise<T>) => Promise<T>,
  lastAttempt: boolean,
) {
  const groups = (await findGroupsByIds(ctx.db, ctx.principal.orgId, request.group_ids)).filter(
    (g) => g.status === "active",
  );
  const active = new Set(groups.map((g) => g.id));
  const archived = request.group_ids.filter((id) => !active.has(id));
  if (groups.length === 0 || rows.length === 0) return archived;
  const catchAll = groups.filter((g) => g.prompt === null).map((g) => g.id);
  const prompted = groups.filter((g) => g.prompt !== null).map((g) => ({ id: g.id, prompt: g.prompt! }));
  const promptedIds = new Set(prompted.map((g) => g.id));
  await time("classify", async () => {
    let verdicts: Awaited<ReturnType<typeof ctx.deps.providers.classifier.classify>> = [];
    const items = rows.map((r) => ({
      type: r.type,
      text: r.type === "episode" ? `${r.details?.title}: ${r.text}` : r.text,
    }));
    try {
      verdicts = await ctx.deps.providers.classifier.classify(items, prompted);
    } catch (err) {
      // A classifier that answers nothing usable leaves every row without a verdict, which is
      // personal (no tags), as a missing verdict already is: the extraction is kept. One out of
      // reach is waited for like the extractor (the attempt ends), except on the last attempt.
      if (!(err instanceof ProviderError) || (err.transient && !lastAttempt)) throw err;
      ctx.log.warn({ err }, "classification failed; the memories are stored untagged (personal)");
    }
    rows.forEach((r, i) => {
      const v = verdicts[i];
      // A memory holding a masked secret is about a credential: personal, whatever a model said
      // (the local classifier reads most markers' words so; "[redacted Stripe key]" too now).
      if (v?.verdict !== "shareable" || holdsRedacted(items[i]!.text)) {
        r.group_ids = [];
        return;
      }
      const matched = v.matched_group_ids.filter((id) => promptedIds.has(id));
      r.group_ids = [...new Set([...catchAll, ...matched])];
    });
  });
  return archived;
}
