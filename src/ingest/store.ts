import { type Ctx, inTx } from "../context.js";
import { canBegin, type Queryable } from "../db/db.js";
import {
  activeFactsByHash,
  activeFactsMatching,
  existingIds,
  jobMemories,
  latestArtifactVersion,
  listFactsInEpisode,
  markSuperseded,
  nameEarlierFacts,
  newestSuccessors,
  patchDetails,
  sameDirective,
  sameEpisode,
  setSupersedes,
  type Touched,
  touchEpisode,
  touchFacts,
  touchObserved,
} from "../db/ingest-lookups.js";
import { finishJob, type JobRow, recordStoredFacts } from "../db/jobs.js";
import { lockIngestUser } from "../db/locks.js";
import { txSizer } from "../db/timed-tx.js";
import {
  embedEpisodesAgain,
  type ReworkedEpisode,
  unsayInEpisodes,
  withoutFact,
} from "../memories/delete.js";
import { METADATA_MAX_BYTES, METADATA_MAX_KEYS } from "../memories/metadata.js";
import { writeMemories } from "../memories/write.js";
import { sameSlot, slotSearches } from "../providers/local/extractor.js";
import { nameFromFact } from "../providers/local/names.js";
import { LINK_SPAN } from "../search/linked.js";
import { enqueueJobWebhook } from "../webhooks/enqueue.js";
import type { PlannedRow } from "./assemble.js";
import { type Reconciled, SLOT_CANDIDATES, withSentenceEdits } from "./reconcile.js";
import type { StoredRequest } from "./submit.js";

/** A later attempt (or a finished job) owns this job: roll back and write nothing. */
export class StaleAttempt extends Error {
  override name = "StaleAttempt";
}

type EpisodeText = { text: string; details: Record<string, unknown> };

const ref = (r: Touched) => ({ id: r.id, type: r.type, text: r.text });

/**
 * Stage 6, store. The new facts are written in transactions of at most STORE_CHUNK rows each, then one
 * transaction writes the rest (the episode, artifacts and directives, restated and superseded
 * facts) with the job's terminal state and its webhook. On the embedded database a transaction
 * holds the one session, and nothing else runs until it ends: the whole store in one transaction
 * held every other request for its whole length (9.4 s for a 5,000-message job), so searches
 * queued behind it for as long and some were refused with 503. Between chunks other requests run.
 *
 * Each chunk's transaction records how far the job got (ingest_jobs.stored_facts), and a retried
 * job (its worker killed between two transactions) starts after that: what it committed is not
 * written again, so a fact deleted in between stays deleted. Ids are derived from (job_id,
 * write_key) (assemblePlan) and the job's dedup leaves its own facts out (they are not duplicates).
 * Until the last transaction commits, a job's facts may be seen before its episode, and both a
 * superseding fact and the one it replaces may be active.
 *
 * Concurrent ingests for one user are serialised transaction by transaction by an advisory lock,
 * under which what dedup decided before the store stage is checked again, since another job may
 * have written meanwhile:
 * - a new fact another job stored meanwhile (exact hash) is touched instead of stored, and the links
 *   of its neighbours are pointed at the stored one (two jobs restating a fact at once store it
 *   once);
 * - a fact replacing one that another job replaced meanwhile replaces that newer fact instead
 *   (two jobs changing one fact at once leave one active);
 * - an artifact or directive another job stored meanwhile with the same content is touched instead
 *   of stored, and an artifact another job gave a new version meanwhile gets the next version;
 * - a restated fact whose stored copy was deleted meanwhile is stored after all.
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
  const episode = rec.insert.find((r) => r.type === "episode");
  let artifacts = rec.insert.filter((r) => r.type === "artifact");
  let directives = rec.insert.filter(
    (r) => r.type !== "fact" && r.type !== "episode" && r.type !== "artifact",
  );
  // What an earlier attempt committed is not written again (see above).
  const todo = facts.filter((f) => planPosition(f) >= job.stored_facts);
  // Planned id -> the id of the row that holds it now (a fact or artifact another job stored
  // meanwhile; a restated fact's planned id for its deleted copy's), applied to every link.
  const moved = new Map<string, string>();
  // Facts found stored by another job meanwhile, and artifacts likewise.
  const late: PlannedRow[] = [];
  const sameArtifacts = [...rec.sameArtifacts];
  const sameDirectives = [...rec.sameDirectives];
  const recheck = async (tx: Queryable, rows: PlannedRow[]) => {
    const fresh = rows.filter((f) => !moved.has(f.id));
    const existing = new Map(
      (
        await activeFactsByHash(
          tx,
          scope,
          fresh.map((f) => f.content_hash!),
          job.id,
        )
      ).map((r) => [r.content_hash, r.id]),
    );
    for (const f of fresh) {
      const id = existing.get(f.content_hash!);
      if (id === undefined) continue;
      moved.set(f.id, id);
      late.push(f);
      if (f.supersedes) replaces(f, null);
    }
    // A later fact of this job replacing one of its own that another job stored meanwhile
    // replaces that stored copy.
    for (const f of todo)
      if (f.supersedes && moved.has(f.supersedes) && !written.has(f)) replaces(f, moved.get(f.supersedes)!);
    await replaceStatedMeanwhile(tx, fresh);
    await replaceNewest(tx, fresh);
  };
  // A new value of an attribute the user had none of when the job planned, which another job
  // stated meanwhile ("favourite colour is red" and "... green" at once, a first value each):
  // the later one replaces it, as it would have at plan time, so one value stays active.
  const replaceStatedMeanwhile = async (tx: Queryable, rows: PlannedRow[]) => {
    const open = rows.filter((f) => !f.supersedes && !moved.has(f.id));
    const kinds = new Map(open.flatMap((f) => slotSearches(f.text)).map((s) => [s.kind, s]));
    for (const s of kinds.values()) {
      // Not by time: a row's created_at is its transaction's start, which may come before this
      // job planned though it committed after (it waited on this lock). By what the judge saw.
      const stated = (await activeFactsMatching(tx, scope, s, SLOT_CANDIDATES, job.id)).filter(
        (c) => !rec.slotSeen.has(c.id),
      );
      for (const f of open) {
        if (f.supersedes) continue;
        const other = stated.find((c) => sameSlot(f.text, c.text) && !rec.supersedes.has(c.id));
        if (other) replaces(f, other.id);
      }
    }
  };
  // Facts replacing one that was replaced meanwhile (by another job, by a PATCH of its text)
  // replace the end of that chain instead, walked link by link (a chain is a few links at most):
  // those changed.
  const replaceNewest = async (tx: Queryable, rows: PlannedRow[]) => {
    const changed = new Set<PlannedRow>();
    let replacing = rows.filter((f) => f.supersedes && !moved.has(f.id));
    for (let hop = 0; replacing.length && hop < 10; hop++) {
      const newer = await newestSuccessors(
        tx,
        scope,
        replacing.map((f) => f.supersedes!),
        job.id,
      );
      replacing = replacing.filter((f) => {
        const id = newer.get(f.supersedes!);
        if (id) {
          replaces(f, id);
          changed.add(f);
        }
        return id !== undefined;
      });
    }
    return changed;
  };
  const replaces = (f: PlannedRow, id: string | null) => {
    if (rec.supersedes.get(f.supersedes!) === f.id) rec.supersedes.delete(f.supersedes!);
    f.supersedes = id;
    if (id) rec.supersedes.set(id, f.id);
  };
  // The first transaction of an attempt re-checks every fact, so the neighbours are placed by the
  // final ids.
  const placeFacts = async (tx: Queryable) => {
    await recheck(tx, todo);
    if (!episode) return;
    remap(episode, moved);
    storeEpisodeNeighbours(episode, facts);
  };
  const written = new Set<PlannedRow>();
  // Facts in the caller's transaction, re-checked first unless the caller just did.
  const writeFacts = async (txCtx: Ctx, rows: PlannedRow[], checked = false) => {
    if (!checked) await recheck(txCtx.db, rows);
    const chunk = rows.filter((f) => !moved.has(f.id));
    for (const f of chunk) remap(f, moved);
    await writeMemories(
      txCtx,
      chunk.map((r) => ({ ...r, metadata })),
    );
    for (const f of chunk) written.add(f);
  };
  // Every chunk but the last in a transaction of its own; the last one goes with the rest.
  const pause = ctx.deps.config.MNEMO_TEST_STORE_CHUNK_DELAY_MS;
  const from = await inTimedChunks(
    todo,
    (rows, first) =>
      inTx(ctx, async (txCtx) => {
        await lockIngestUser(txCtx.db, orgId, request.user_id);
        if (first) await placeFacts(txCtx.db);
        await writeFacts(txCtx, rows, first);
        if (!(await recordStoredFacts(txCtx.db, job.id, planPosition(rows.at(-1)!) + 1)))
          throw new StaleAttempt(job.id);
      }),
    {
      timed: canBegin(ctx.db) && ctx.db.oneSession,
      ms: ctx.deps.config.MNEMO_TEST_TX_MS,
      ...(pause ? { between: () => new Promise((r) => setTimeout(r, pause)) } : {}),
    },
  );
  // A name this job records also reaches the user's earlier facts ("The user ..."), by context:
  // in short statements of their own before the last transaction, not inside it (one statement
  // over 10,000 earlier facts held it 30 s, and the embedded database's one session with it).
  // Idempotent, so a retried attempt does no harm.
  const named = facts.map((f) => nameFromFact(f.text)).find(Boolean);
  if (named && request.user_id) await nameEarlierFacts(ctx.db, scope, named, job.id);
  // Episodes whose text a superseded fact left: their vectors are made again once this commits.
  let reworked: ReworkedEpisode[] = [];
  const finished = await inTx(ctx, async (txCtx) => {
    const tx = txCtx.db;
    await lockIngestUser(tx, orgId, request.user_id);
    const last = todo.slice(from);
    if (from === 0) await placeFacts(tx);
    else await recheck(tx, last);
    // Facts of earlier transactions that replace one, checked again now that the replaced facts are
    // to be marked: a change made meanwhile (a PATCH of its text) is replaced in turn.
    const retargeted = await replaceNewest(
      tx,
      facts.filter((f) => f.supersedes && !last.includes(f)),
    );
    await setSupersedes(
      tx,
      orgId,
      [...retargeted].map((f) => ({ id: f.id, supersedes: f.supersedes! })),
    );

    // Artifacts and directives another job stored meanwhile.
    const kept: PlannedRow[] = [];
    for (const a of artifacts) {
      const prev = await latestArtifactVersion(tx, scope, a.details!.title as string);
      if (prev && prev.content_hash === a.content_hash) {
        moved.set(a.id, prev.id);
        rec.newVersions.delete(a.id);
        sameArtifacts.push({ id: prev.id, eventIds: (a.details!.source_event_ids as string[]) ?? [] });
        continue;
      }
      a.details = { ...a.details, version: (prev?.version ?? 0) + 1, root_id: prev?.root_id ?? a.id };
      if (prev) rec.newVersions.add(a.id);
      else rec.newVersions.delete(a.id);
      kept.push(a);
    }
    artifacts = kept;
    const agentId = request.agent_id ?? null;
    const newDirectives: PlannedRow[] = [];
    for (const d of directives) {
      const prev = await sameDirective(
        tx,
        { ...scope, agentId },
        d.type,
        d.namespace ?? null,
        d.content_hash!,
      );
      if (prev) sameDirectives.push(prev.id);
      else newDirectives.push(d);
    }
    directives = newDirectives;

    // Restated facts whose stored copy is gone (deleted meanwhile) are stored after all, once each.
    const restated = [
      ...rec.duplicates,
      ...late.map((f) => ({
        row: f,
        existingId: moved.get(f.id)!,
        eventIds: (f.details?.source_event_ids as string[]) ?? [],
      })),
    ];
    const alive = await existingIds(
      tx,
      orgId,
      restated.map((d) => d.existingId),
    );
    // Another job may have stored one of those again already (two jobs restating a fact deleted
    // before both): that copy is the one restated, or the fact would be active twice.
    const gone = restated.filter((d) => !alive.has(d.existingId));
    const again = new Map(
      (
        await activeFactsByHash(
          tx,
          scope,
          gone.map((d) => d.row.content_hash!),
          job.id,
        )
      ).map((r) => [r.content_hash, r.id]),
    );
    for (const d of gone) {
      const id = again.get(d.row.content_hash!);
      if (id === undefined) continue;
      // Links to the deleted copy, or to this job's planned one, lead to that copy.
      if (moved.get(d.existingId) === undefined) moved.set(d.existingId, id);
      moved.set(d.row.id, id);
      d.existingId = id;
      alive.add(id);
    }
    const revived: PlannedRow[] = [];
    const duplicates = restated.filter((d) => {
      if (alive.has(d.existingId)) return true;
      if (moved.get(d.existingId) === undefined) {
        moved.delete(d.row.id);
        moved.set(d.existingId, d.row.id);
        revived.push(d.row);
      }
      return false;
    });

    // The same conversation stored by another job meanwhile (two identical ingests at once, each
    // planned before the other stored): with nothing of its own left to write, this job touches
    // that episode, as it would have had it planned after, instead of storing a second one.
    let episodeToWrite = episode;
    let touchedEpisode = rec.sameEpisode;
    if (
      episode &&
      !revived.length &&
      !artifacts.length &&
      !directives.length &&
      facts.every((f) => moved.has(f.id))
    ) {
      const stored = await sameEpisode(
        tx,
        { ...scope, agentId: request.agent_id ?? null },
        episode.conv_id ?? null,
        episode.text,
      );
      if (stored) {
        episodeToWrite = undefined;
        touchedEpisode = stored.id;
      }
    }
    // Every link through `moved`: the episode's, the facts' still to write and those written.
    if (episode) {
      remap(episode, moved);
      storeEpisodeNeighbours(episode, revived);
    }
    // A conversation sent again has no episode of its own to write (the stored one is touched):
    // facts it stores again belong to that one.
    const inSameEpisode = !episode && rec.sameEpisode ? rec.sameEpisode : null;
    if (inSameEpisode) for (const f of revived) f.details = { ...f.details, episode_id: inSameEpisode };
    for (const a of artifacts) remap(a, moved);
    const earlier = facts.filter((f) => !last.includes(f) && !moved.has(f.id));
    // Facts of earlier transactions deleted since (a DELETE between two of them): the episode
    // neither lists nor says them, and no neighbour links to them, as after a delete that came
    // once the episode was stored.
    if (episode && earlier.length) {
      const stillThere = await existingIds(
        tx,
        orgId,
        earlier.map((f) => f.id),
      );
      const deleted = earlier.filter((f) => !stillThere.has(f.id));
      for (const f of deleted) Object.assign(episode, withoutFact(episode as EpisodeText, f.id, f.text));
      const ids = new Set(deleted.map((f) => f.id));
      if (ids.size)
        for (const f of last) {
          const near = f.details?.episode_near as Record<string, string> | undefined;
          if (near && Object.values(near).some((id) => ids.has(id)))
            f.details = {
              ...f.details,
              episode_near: Object.fromEntries(Object.entries(near).filter(([, id]) => !ids.has(id))),
            };
        }
    }
    await writeFacts(txCtx, [...last, ...revived], true);
    if (inSameEpisode)
      await listFactsInEpisode(
        tx,
        orgId,
        inSameEpisode,
        revived.map((f) => f.id),
      );
    await patchDetails(
      tx,
      orgId,
      earlier.filter((f) => remap(f, moved)).map((f) => ({ id: f.id, patch: pick(f.details!, LINK_FIELDS) })),
    );
    await writeMemories(
      txCtx,
      [...(episodeToWrite ? [episodeToWrite] : []), ...artifacts, ...directives].map((r) => ({
        ...r,
        metadata,
      })),
    );
    // What a superseded sentence said besides its old value is in the episode that sentence was in.
    for (const f of facts)
      if (rec.rests.has(f.id) && !moved.has(f.id) && typeof f.details?.episode_id === "string")
        await listFactsInEpisode(tx, orgId, f.details.episode_id, [f.id]);
    // What the job stored, this attempt or an earlier one, in the planned order.
    const stored = await jobMemories(tx, orgId, job.id);
    const mine = [...rec.insert, ...revived].filter((r) => stored.has(r.id)).map((r) => stored.get(r.id)!);
    // Restated facts and artifacts in one statement; reported in the order they were met.
    const touched = new Map(
      (
        await touchFacts(
          tx,
          orgId,
          [
            ...duplicates.map((d) => ({
              id: d.existingId,
              eventIds: d.eventIds,
              groupIds: d.row.group_ids ?? [],
              metadata,
            })),
            ...sameArtifacts,
          ],
          ctx.deps.config.MAX_GROUP_IDS_PER_INGEST,
          { keys: METADATA_MAX_KEYS, bytes: METADATA_MAX_BYTES },
        )
      ).map((r) => [r.id, r]),
    );
    const updated = new Map<string, Touched>();
    for (const d of duplicates) {
      const r = touched.get(d.existingId);
      if (r) updated.set(r.id, r);
    }
    const superseded = await markSuperseded(tx, orgId, [...rec.supersedes.keys()]);
    // A fact of this job changed later in it is reported created (and superseded), not updated.
    for (const r of superseded)
      if (!stored.has(r.id)) updated.set(r.id, { id: r.id, type: r.type, text: r.text });
    // A sentence whose rest is kept (as a fact, or by an active fact that says it already) leaves
    // its episode the rest: its sentences the rest holds nothing of go, and one that said an ended
    // clause with the rest is said as the rest's clauses alone (rec.unsaid).
    reworked = await unsayInEpisodes(
      tx,
      orgId,
      withSentenceEdits(
        superseded.filter((r) => r.type === "fact"),
        rec.unsaid,
      ),
      { unlist: false },
    );
    for (const a of sameArtifacts) {
      const r = touched.get(a.id);
      if (r) updated.set(r.id, r);
    }
    for (const id of new Set(sameDirectives)) {
      for (const r of await touchObserved(tx, orgId, id, request.outcome ?? null)) updated.set(r.id, r);
    }
    if (touchedEpisode) for (const r of await touchEpisode(tx, orgId, touchedEpisode)) updated.set(r.id, r);
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
  await embedEpisodesAgain(ctx, reworked);
  return finished;
}

/**
 * New facts per store transaction: STORE_CHUNK each, or on the embedded database each after the
 * first sized to take about TX_MS (src/db/timed-tx.ts), MIN_TX_ROWS to STORE_CHUNK facts.
 */
const STORE_CHUNK = 50;

/**
 * Calls `write` on consecutive chunks of `rows`, in order, leaving out the last chunk (at most one
 * chunk's worth, none when `rows` fit in one), whose start it returns. Chunks have STORE_CHUNK
 * rows; when `timed`, each after the first is sized from how long the one before took (txSizer,
 * to take about `ms`). `between`, when given, runs after each chunk, untimed.
 */
export async function inTimedChunks<T>(
  rows: T[],
  write: (chunk: T[], first: boolean) => Promise<void>,
  options: { timed: boolean; ms?: number | undefined; between?: () => Promise<unknown> },
): Promise<number> {
  let from = 0;
  const sizer = txSizer({ timed: options.timed, max: STORE_CHUNK, ms: options.ms });
  while (rows.length - from > sizer.size) {
    const chunk = rows.slice(from, from + sizer.size);
    await sizer.time(chunk.length, () => write(chunk, from === 0));
    from += chunk.length;
    await options.between?.();
  }
  return from;
}

/** A planned fact's place in its job's plan (write key `f<n>`). */
const planPosition = (f: PlannedRow) => Number(f.write_key.slice(1));

/** The details that name other memories of the job (see remap). */
const LINK_FIELDS = ["episode_near", "artifact_id", "artifact_ids", "source_fact_ids", "fact_ids"];

const pick = (o: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));

/**
 * A row's links to other memories (its neighbours, artifacts, facts) through `moved`, each id
 * once: whether any changed.
 */
function remap(row: PlannedRow, moved: Map<string, string>): boolean {
  const d = row.details;
  if (!d || moved.size === 0) return false;
  let changed = false;
  const id = (x: unknown) => {
    const to = typeof x === "string" ? moved.get(x) : undefined;
    if (to === undefined) return x;
    changed = true;
    return to;
  };
  const next: Record<string, unknown> = { ...d };
  if (d.episode_near && typeof d.episode_near === "object")
    next.episode_near = Object.fromEntries(Object.entries(d.episode_near).map(([k, v]) => [k, id(v)]));
  for (const key of ["artifact_ids", "source_fact_ids", "fact_ids"])
    if (Array.isArray(d[key])) next[key] = [...new Set((d[key] as unknown[]).map(id))];
  if (typeof d.artifact_id === "string") next.artifact_id = id(d.artifact_id);
  if (changed) row.details = next;
  return changed;
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
