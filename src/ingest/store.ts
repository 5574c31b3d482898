import { type Ctx, inTx } from "../context.js";
import {
  activeFactsByHash,
  markSuperseded,
  nameEarlierFacts,
  type Touched,
  touchFacts,
  touchObserved,
} from "../db/ingest-lookups.js";
import { finishJob, type JobRow } from "../db/jobs.js";
import { lockIngestUser } from "../db/locks.js";
import { writeMemories } from "../memories/write.js";
import { nameFromFact } from "../providers/local/names.js";
import { LINK_SPAN } from "../search/linked.js";
import { enqueueJobWebhook } from "../webhooks/enqueue.js";
import type { PlannedRow } from "./assemble.js";
import type { Reconciled } from "./reconcile.js";
import type { StoredRequest } from "./submit.js";

/** A later attempt (or a finished job) owns this job: roll back and write nothing. */
export class StaleAttempt extends Error {
  override name = "StaleAttempt";
}

const ref = (r: Touched) => ({ id: r.id, type: r.type, text: r.text });

/**
 * Stage 6, store: everything in one transaction, with the job's terminal state and its webhook.
 * Writes are keyed by (job_id, write_key), so a retried job creates nothing twice. Concurrent
 * ingests for one user are serialised by an advisory lock, under which exact duplicates are
 * checked again (two jobs restating the same fact at once store it once).
 */
export async function storeResult({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: {
    job: JobRow;
    request: StoredRequest;
    rec: Reconciled;
    timings: Record<string, number>;
    startedAt: number;
  };
}): Promise<JobRow> {
  const { job, request, rec, timings, startedAt } = input;
  const orgId = ctx.principal.orgId;
  const scope = { orgId, userId: request.user_id };
  return inTx(ctx, async (txCtx) => {
    const tx = txCtx.db;
    await lockIngestUser(tx, orgId, request.user_id);
    const t = performance.now();
    const newFacts = rec.insert.filter((r) => r.type === "fact" && !r.supersedes);
    const existing = new Map(
      (
        await activeFactsByHash(
          tx,
          scope,
          newFacts.map((f) => f.content_hash!),
        )
      ).map((r) => [r.content_hash, r.id]),
    );
    const late = newFacts.filter((f) => existing.has(f.content_hash!));
    const swap = new Map(late.map((f) => [f.id, existing.get(f.content_hash!)!]));
    const insert = rec.insert.filter((r) => !swap.has(r.id));
    const episode = insert.find((r) => r.type === "episode");
    if (episode && swap.size) {
      const ids = (episode.details!.fact_ids as string[]).map((id) => swap.get(id) ?? id);
      episode.details = { ...episode.details, fact_ids: [...new Set(ids)] };
    }
    if (episode) storeEpisodeNeighbours(episode, insert);
    const duplicates = [
      ...rec.duplicates,
      ...late.map((f) => ({
        plannedId: f.id,
        existingId: swap.get(f.id)!,
        hash: f.content_hash!,
        eventIds: (f.details?.source_event_ids as string[]) ?? [],
      })),
    ];

    const metadata = request.metadata ?? {};
    const inserted = await writeMemories(
      txCtx,
      insert.map((r) => ({ ...r, metadata })),
    );
    // A name recorded now also reaches the user's earlier facts ("The user ..."), by context.
    const named = inserted.map((r) => (r.type === "fact" ? nameFromFact(r.text) : null)).find(Boolean);
    if (named && request.user_id)
      await nameEarlierFacts(tx, { orgId, userId: request.user_id }, named, job.id);
    // Restated facts and artifacts in one statement; reported in the order they were met.
    const touched = new Map(
      (
        await touchFacts(tx, orgId, [
          ...duplicates.map((d) => ({ id: d.existingId, eventIds: d.eventIds })),
          ...rec.sameArtifacts,
        ])
      ).map((r) => [r.id, r]),
    );
    const updated = new Map<string, Touched>();
    for (const d of duplicates) {
      const r = touched.get(d.existingId);
      if (r) updated.set(r.id, r);
    }
    for (const r of await markSuperseded(tx, orgId, [...rec.supersedes.keys()])) updated.set(r.id, r);
    for (const a of rec.sameArtifacts) {
      const r = touched.get(a.id);
      if (r) updated.set(r.id, r);
    }
    for (const id of rec.sameDirectives) {
      for (const r of await touchObserved(tx, orgId, id, request.outcome ?? null)) updated.set(r.id, r);
    }
    const created = [];
    for (const r of inserted) {
      if (rec.newVersions.has(r.id)) updated.set(r.id, { id: r.id, type: r.type, text: r.text });
      else created.push({ id: r.id, type: r.type, text: r.text });
    }
    timings.store = (performance.now() - t) / 1000;
    timings.total = (performance.now() - startedAt) / 1000 + (timings.queue_wait ?? 0);
    const result = {
      object: "ingest_result",
      memories_created: created,
      memories_updated: [...updated.values()].map(ref),
      memories_superseded_by: Object.fromEntries(rec.supersedes),
      stage_timings: timings,
      ignored_group_ids: request.ignored_group_ids,
    };
    const done = await finishJob(tx, job.id, { status: "succeeded", result });
    if (!done) throw new StaleAttempt(job.id);
    await enqueueJobWebhook(txCtx.db, ctx.deps, {
      orgId,
      jobId: job.id,
      status: "succeeded",
      convId: request.conv_id,
      userId: request.user_id,
      memories: created.map((m) => ({ id: m.id, type: m.type })),
      memoriesUpdated: result.memories_updated,
      error: null,
      finishedAt: done.finished_at ?? new Date(),
    });
    return done;
  });
}

/**
 * Each new fact's neighbours in its episode's final fact order, as `details.episode_near` (the
 * ids LINK_SPAN places either side, keyed by offset): search links a hit to them from the hit's
 * own row, never reading the episode's whole list (src/db/memory-search.ts). Internal: not part
 * of the wire details.
 */
function storeEpisodeNeighbours(episode: PlannedRow, rows: PlannedRow[]): void {
  const ids = episode.details!.fact_ids as string[];
  const at = new Map(ids.map((id, i) => [id, i]));
  for (const r of rows) {
    const i = at.get(r.id);
    if (r.type === "fact" && r.details?.episode_id === episode.id && i !== undefined) {
      const near: Record<string, string> = {};
      for (let d = -LINK_SPAN; d <= LINK_SPAN; d++) {
        const id = ids[i + d];
        if (d !== 0 && id !== undefined) near[String(d)] = id;
      }
      r.details = { ...r.details, episode_near: near };
    }
  }
}

/** Records a failed job (with its webhook) in one transaction. */
export async function failJob({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { job: JobRow; request: StoredRequest; message: string };
}): Promise<JobRow | undefined> {
  const { job, request, message } = input;
  const error = { type: "server_error", code: "ingest_failed", message };
  return inTx(ctx, async (txCtx) => {
    const done = await finishJob(txCtx.db, job.id, { status: "failed", error });
    if (!done) return undefined;
    await enqueueJobWebhook(txCtx.db, ctx.deps, {
      orgId: ctx.principal.orgId,
      jobId: job.id,
      status: "failed",
      convId: request.conv_id,
      userId: request.user_id,
      memories: [],
      memoriesUpdated: [],
      error,
      finishedAt: done.finished_at ?? new Date(),
    });
    return done;
  });
}
