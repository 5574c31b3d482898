import { type Ctx, inTx } from "../context.js";
import type { Queryable } from "../db/db.js";
import {
  activeFactsByHash,
  jobMemories,
  markSuperseded,
  nameEarlierFacts,
  setEpisodeNear,
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
 * Stage 6, store. The new facts are written in transactions of STORE_CHUNK rows each, then one
 * transaction writes the rest (the episode, artifacts and directives, restated and superseded
 * facts) with the job's terminal state and its webhook. On the embedded database a transaction
 * holds the one session, and nothing else runs until it ends: the whole store in one transaction
 * held every other request for its whole length (9.4 s for a 5,000-message job), so searches
 * queued behind it for as long and some were refused with 503. Between chunks other requests run.
 *
 * Writes are keyed by (job_id, write_key) and the ids are derived from them (assemblePlan), so a
 * retried job creates nothing twice: an attempt that stopped after some chunks leaves its facts,
 * the next attempt writes the same ids and skips them, and its dedup leaves the job's own facts
 * out (they are not duplicates). Until the last transaction commits, a job's facts may be seen
 * before its episode, and both a superseding fact and the one it replaces may be active.
 * Concurrent ingests for one user are serialised transaction by transaction by an advisory lock,
 * under which exact duplicates are checked again (two jobs restating the same fact at once store it
 * once); a fact another job stored between two chunks is touched instead of stored, and the links
 * of its neighbours already written are pointed at the stored one in the last transaction.
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
  const metadata = request.metadata ?? {};
  const t = performance.now();
  const facts = rec.insert.filter((r) => r.type === "fact");
  const rest = rec.insert.filter((r) => r.type !== "fact");
  const episode = rest.find((r) => r.type === "episode");
  // Planned fact id -> the id of the same fact stored meanwhile by another job (exact hash).
  const swap = new Map<string, string>();
  const late: PlannedRow[] = [];
  const recheck = async (tx: Queryable, rows: PlannedRow[]) => {
    const fresh = rows.filter((f) => !f.supersedes && !swap.has(f.id));
    const hashes = fresh.map((f) => f.content_hash!);
    const existing = new Map(
      (await activeFactsByHash(tx, scope, hashes, job.id)).map((r) => [r.content_hash, r.id]),
    );
    for (const f of fresh) {
      const id = existing.get(f.content_hash!);
      if (id === undefined) continue;
      swap.set(f.id, id);
      late.push(f);
    }
  };
  const episodeFacts = () => {
    if (!episode || swap.size === 0) return;
    const ids = (episode.details!.fact_ids as string[]).map((id) => swap.get(id) ?? id);
    episode.details = { ...episode.details, fact_ids: [...new Set(ids)] };
  };
  // Facts from..to, in the caller's transaction: exact duplicates re-checked under the lock (all of
  // them in the first chunk, so the neighbours are placed by the final ids), then written.
  const writeFacts = async (txCtx: Ctx, from: number, to: number) => {
    if (from === 0) {
      await recheck(txCtx.db, facts);
      episodeFacts();
      if (episode) storeEpisodeNeighbours(episode, facts);
    } else await recheck(txCtx.db, facts.slice(from, to));
    const chunk = facts.slice(from, to).filter((f) => !swap.has(f.id));
    for (const f of chunk) relink(f, swap);
    await writeMemories(
      txCtx,
      chunk.map((r) => ({ ...r, metadata })),
    );
    written.push(...chunk);
  };
  const written: PlannedRow[] = [];
  // Every chunk but the last in a transaction of its own; the last one goes with the rest.
  let from = 0;
  for (; facts.length - from > STORE_CHUNK; from += STORE_CHUNK) {
    await inTx(ctx, async (txCtx) => {
      await lockIngestUser(txCtx.db, orgId, request.user_id);
      await writeFacts(txCtx, from, from + STORE_CHUNK);
    });
    const pause = ctx.deps.config.MNEMO_TEST_STORE_CHUNK_DELAY_MS;
    if (pause) await new Promise((r) => setTimeout(r, pause));
  }
  return inTx(ctx, async (txCtx) => {
    const tx = txCtx.db;
    await lockIngestUser(tx, orgId, request.user_id);
    await writeFacts(txCtx, from, facts.length);
    episodeFacts();
    // A neighbour another job stored between two chunks, after a fact next to it was written:
    // that fact's link is pointed at the stored one.
    const relinked = written.filter((f) => relink(f, swap));
    await setEpisodeNear(
      tx,
      orgId,
      relinked.map((f) => ({ id: f.id, near: f.details!.episode_near as Record<string, string> })),
    );
    await writeMemories(
      txCtx,
      rest.map((r) => ({ ...r, metadata })),
    );
    // What the job stored, this attempt or an earlier one, in the planned order.
    const stored = await jobMemories(tx, orgId, job.id);
    const mine = rec.insert.filter((r) => stored.has(r.id)).map((r) => stored.get(r.id)!);
    const duplicates = [
      ...rec.duplicates,
      ...late.map((f) => ({
        plannedId: f.id,
        existingId: swap.get(f.id)!,
        hash: f.content_hash!,
        eventIds: (f.details?.source_event_ids as string[]) ?? [],
      })),
    ];
    // A name recorded now also reaches the user's earlier facts ("The user ..."), by context.
    const named = mine.map((r) => (r.type === "fact" ? nameFromFact(r.text) : null)).find(Boolean);
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
    for (const r of mine) {
      if (rec.newVersions.has(r.id)) updated.set(r.id, r);
      else created.push(r);
    }
    timings.store = (performance.now() - t) / 1000;
    timings.total = (performance.now() - startedAt) / 1000 + (timings.queue_wait ?? 0);
    const result = {
      object: "ingest_result",
      memories_created: created.map(ref),
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
 * New facts per store transaction. On the embedded database each holds the session for its
 * length: 200 (one INSERT statement's worth) took about 1.2 s on a directory of 20,000 memories,
 * and a search, three statements, could wait behind one for each (p95 3.8-4.6 s at 20 clients
 * during a 5,000-message job); 50, about 0.3 s (p95 1.4-1.6 s).
 */
const STORE_CHUNK = 50;

/**
 * A fact's neighbour ids (details.episode_near) through `swap`, for a neighbour stored meanwhile:
 * whether any changed.
 */
function relink(f: PlannedRow, swap: Map<string, string>): boolean {
  const near = f.details?.episode_near as Record<string, string> | undefined;
  if (!near || !Object.values(near).some((id) => swap.has(id))) return false;
  f.details = {
    ...f.details,
    episode_near: Object.fromEntries(Object.entries(near).map(([k, id]) => [k, swap.get(id) ?? id])),
  };
  return true;
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
