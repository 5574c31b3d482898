import { confinedUser, mayWriteRow, writeUserId } from "../auth/user-scope.js";
import { type Ctx, inTx, withoutDeadline } from "../context.js";
import { analyzeIfStale } from "../db/analyze.js";
import type { Queryable } from "../db/db.js";
import { lockIngestUser } from "../db/locks.js";
import {
  countUnfinishedJobsInScope,
  type DeletedRow,
  deleteFinishedJobsInScope,
  deleteMemoryRow,
  deleteMemoryRowsInScope,
  episodesListingFacts,
  FORGET_AXES,
  type ForgetScope,
  findMemory,
  forgetUnusedWords,
  rewriteJobReports,
  unlinkNeighbours,
  updateEpisodeText,
  usersInScope,
} from "../db/memories.js";
import { dropDeliveriesOfScope } from "../db/webhooks.js";
import { CoreError, isCoreError, isLockConflict } from "../errors.js";
import { contentWords, stem, withoutSentencesOf } from "../providers/local/english.js";
import { memoryNotFound } from "./get.js";
import { embedRows } from "./vectors.js";

/**
 * Hard delete, no tombstone. A fact that others supersede simply leaves their chain (there is no
 * foreign key on `supersedes`; the revision walker stops at the gap). A deleted fact also leaves
 * the episodes that list it: its id from their `fact_ids`, and its sentences from their text
 * (the local extractor's summary is made of its facts' sentences; a model's summary in its own
 * words keeps what it says, so delete that episode too).
 */
export async function deleteMemory({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<void> {
  let deleted: boolean;
  let reworked: ReworkedEpisode[] = [];
  let lexemes: string[] = [];
  // A memory's type and user never change, so reading them first cannot race with a change.
  const before = await findMemory(ctx.db, ctx.principal.orgId, input.id);
  if (!before || (confinedUser(ctx.principal) !== null && !mayWriteRow(ctx.principal, before)))
    throw memoryNotFound(input.id);
  try {
    deleted = await inTx(ctx, async ({ db }) => {
      const orgId = ctx.principal.orgId;
      // A fact goes under its user's ingest lock, taken first as ingest and PATCH take it: a job
      // storing at once either finishes first (its episode listing the fact is then cleaned here)
      // or starts after (and sees the fact gone). Without it a job's episode kept the deleted
      // fact, and the two deadlocked over the fact, its episodes and the text statistics.
      if (before.type === "fact") await lockIngestUser(db, orgId, before.user_id ?? "");
      const row = await deleteMemoryRow(db, orgId, input.id);
      if (row === null) return false;
      if (row.type === "fact")
        reworked = await unsayInEpisodes(db, orgId, [{ id: input.id, ...row }], { unlist: true });
      await rewriteJobReports(db, orgId, [input.id], reworked);
      lexemes = row.lexemes ?? [];
      return true;
    });
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("delete_failed", "The memory could not be deleted.", { cause: err });
  }
  if (!deleted) throw memoryNotFound(input.id);
  await embedEpisodesAgain(ctx, reworked);
  // Its words that no other memory of the organisation uses leave the search statistics (they
  // would still name what was said), as after a forget.
  await inTx(ctx, ({ db }) => forgetUnusedWords(db, ctx.principal.orgId, lexemes)).catch((err: unknown) =>
    ctx.log.warn({ err }, "forgetting unused words of the search statistics failed"),
  );
  ctx.log.info({ memoryId: input.id }, "memory deleted");
}

/**
 * Runs a forget's transaction again when PostgreSQL rolled it back as a deadlock or a serialization
 * failure (isLockConflict), a few times: a delivery attempt recording its outcome locks the
 * memories its retry names, and two statements locking the same rows in another order can still
 * meet. An erasure is not refused (500 `delete_failed`, nothing forgotten) for a conflict that
 * running it again resolves.
 */
async function againOnLockConflict<T>(ctx: Ctx, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!isLockConflict(err) || attempt >= 5) throw err;
      ctx.log.info({ err, attempt }, "forget rolled back by a lock conflict; running it again");
    }
  }
}

export interface ScopeDeletionInput {
  user_id?: string | undefined;
  agent_id?: string | undefined;
  conv_id?: string | undefined;
  app_id?: string | undefined;
}

export interface ScopeDeletion {
  object: "memory_deletion";
  deleted: number;
  by_type: Record<string, number>;
  jobs_deleted: number;
  jobs_in_flight: number;
}

/**
 * Forgets a scope: hard-deletes every memory of the organisation whose scope matches each axis
 * given (a user's all, a conversation's, an agent's...; superseded facts, episodes, artifacts and
 * directives included), in one transaction. At least one axis: a whole organisation is never
 * deleted this way (422 `missing_scope`), and the request names one, even for a key confined to a
 * user (`user_id=` blank is its own user; another one is 403; no axis at all is 422). Episodes outside the scope that list a
 * deleted fact (a fact restated in another conversation) lose it, as after a single delete.
 */
export async function deleteMemoriesInScope({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: ScopeDeletionInput;
}): Promise<ScopeDeletion> {
  const scope = { ...input, user_id: writeUserId(ctx.principal, input.user_id) ?? undefined };
  const axes = FORGET_AXES.filter((a) => scope[a]?.trim());
  // The request names what goes, even for a key confined to a user (`user_id=` blank is its own):
  // the key's default alone never deletes.
  // A blank axis names no one ("app_id=" as a client sends an empty field): for a confined key
  // only `user_id=` blank names its own user.
  const namesOne = input.user_id !== undefined || FORGET_AXES.some((a) => input[a]?.trim());
  if (axes.length === 0 || !namesOne) {
    throw new CoreError(
      "missing_scope",
      "Name what to forget: user_id, agent_id, conv_id or app_id (each given must match); a whole organisation is never deleted this way.",
    );
  }
  const orgId = ctx.principal.orgId;
  const named: ForgetScope = Object.fromEntries(axes.map((a) => [a, scope[a]!]));
  // A whole scope's statements run without the request's statement deadline
  // (MNEMO_DB_QUERY_TIMEOUT_MS): deleting a big user's rows, or vacuuming after them, may take
  // longer than it, and cut there it would roll back and fail the same way every time.
  const long = withoutDeadline(ctx);
  let rows: DeletedRow[];
  let jobs: number;
  let inFlight: number;
  let dropped: number;
  let reworked: ReworkedEpisode[] = [];
  try {
    ({ rows, jobs, inFlight, dropped } = await againOnLockConflict(ctx, () =>
      inTx(long, async ({ db }) => {
        reworked = [];
        // Under each user's ingest lock, as a single delete: a job storing at once (in another
        // conversation of the user, restating a fact of this scope) finishes first and its episode
        // is cleaned here, or starts after and sees the facts gone.
        for (const userId of named.user_id !== undefined
          ? [named.user_id]
          : await usersInScope(db, orgId, named))
          await lockIngestUser(db, orgId, userId);
        const gone = await deleteMemoryRowsInScope(db, orgId, named);
        const facts = gone.filter((r) => r.type === "fact");
        if (facts.length) reworked = await unsayInEpisodes(db, orgId, facts, { unlist: true });
        const jobIds = await deleteFinishedJobsInScope(db, orgId, named);
        const dropped = await dropDeliveriesOfScope(db, orgId, jobIds, named);
        // Jobs outside the scope (kept) that reported them, and their events still queued: restated
        // facts, the episodes they left.
        await rewriteJobReports(
          db,
          orgId,
          gone.map((r) => r.id),
          reworked,
        );
        // Jobs still pending or running are left to finish: they store after this, and the caller
        // forgets again once they have (README); the answer says how many there were.
        const inFlight = await countUnfinishedJobsInScope(db, orgId, named);
        return { rows: gone, jobs: jobIds.length, inFlight, dropped };
      }),
    ));
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("delete_failed", "The memories could not be deleted.", { cause: err });
  }
  await embedEpisodesAgain(ctx, reworked);
  // The words only the forgotten memories held leave the search statistics too. The memories are
  // gone already: a failure here is logged, not answered.
  if (rows.length) {
    await inTx(long, ({ db }) => forgetUnusedWords(db, orgId)).catch((err: unknown) =>
      ctx.log.warn({ err }, "forgetting unused words of the search statistics failed"),
    );
  }
  // After the answer, as after an ingest job: the tables it deleted from are analyzed, as the
  // planner's statistics (pg_stats: a column's most common values and histogram) quote rows
  // verbatim, the forgotten user's sentences, ids and webhook bodies included, and autovacuum's
  // threshold (50 rows plus a tenth of the table) is not reached by one user's rows in a big table.
  // Then the dead rows a big forget leaves are vacuumed where no autovacuum runs (the embedded
  // database): a search of the forgotten user read them all, about a second each, until the next
  // maintenance sweep.
  const touched = [rows.length && "memories", jobs && "ingest_jobs", dropped && "pgboss.job"].filter(
    (t): t is string => typeof t === "string",
  );
  if (touched.length)
    void (async () => {
      await long.db.query(`ANALYZE ${touched.join(", ")}`);
      await clearStatisticsOfEmptied(long.db, touched);
      if (rows.length) await analyzeIfStale(long.db);
    })().catch((err: unknown) => ctx.log.warn({ err }, "analyze after a forget failed"));
  const byType: Record<string, number> = {};
  for (const r of rows) byType[r.type] = (byType[r.type] ?? 0) + 1;
  ctx.log.info({ scope: named, deleted: rows.length, jobs, inFlight }, "memories deleted");
  return {
    object: "memory_deletion",
    deleted: rows.length,
    by_type: byType,
    jobs_deleted: jobs,
    jobs_in_flight: inFlight,
  };
}

/**
 * ANALYZE of a table with no rows left keeps its previous statistics (PostgreSQL updates them only
 * from a sample of some rows): the last user forgotten stays quoted there. Where the service may
 * (the embedded database; a PostgreSQL role with the right to write pg_statistic), the statistics
 * of such a table (and of its partitions) are deleted; elsewhere that is the operator's (README).
 */
async function clearStatisticsOfEmptied(db: Queryable, tables: readonly string[]): Promise<void> {
  for (const table of tables) {
    const { rows } = await db.query<{ empty: boolean }>(
      `SELECT NOT EXISTS (SELECT 1 FROM ${table}) AS empty`,
    );
    if (!rows[0]?.empty) continue;
    await db
      .query(
        `DELETE FROM pg_statistic WHERE starelid = $1::regclass
            OR starelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)`,
        [table],
      )
      .catch(() => undefined);
  }
}

/**
 * The episodes that list these facts (each of its user) no longer say them: their sentences leave
 * the episodes' text (an episode left with none reads as its title), or are said as `instead`
 * where a fact's sentence is rewritten to what of it still holds. A deleted fact also leaves
 * their `fact_ids` and its neighbours' links (`details.episode_near`) (`unlist`); a superseded one stays listed (it is still the episode's, as
 * history), but the summary no longer serves what the fact's successor replaced. One read per
 * user; run inside the transaction that deletes or supersedes the facts.
 */
export async function unsayInEpisodes(
  db: Queryable,
  orgId: string,
  facts: ReadonlyArray<{
    id: string;
    text: string;
    user_id: string | null;
    near?: Record<string, unknown> | null;
    instead?: string;
  }>,
  options: { unlist: boolean },
): Promise<ReworkedEpisode[]> {
  const reworked: ReworkedEpisode[] = [];
  // Appended in place: a copy per fact was quadratic (a forget of 50,000 facts held the event
  // loop 21 s).
  const byUser = new Map<string | null, Array<(typeof facts)[number]>>();
  for (const f of facts) {
    const list = byUser.get(f.user_id);
    if (list) list.push(f);
    else byUser.set(f.user_id, [f]);
  }
  // The facts that may link to a deleted one: its own neighbours, and the facts of the episodes
  // that list it (a fact restated in another conversation sits in that episode's order too).
  const linking = new Set(facts.flatMap((f) => Object.values(f.near ?? {}).map(String)));
  for (const [userId, ofUser] of byUser) {
    const ids = ofUser.map((f) => f.id);
    for (const ep of await episodesListingFacts(db, orgId, userId, ids)) {
      const listed = new Set(Array.isArray(ep.details.fact_ids) ? (ep.details.fact_ids as string[]) : []);
      for (const id of listed) linking.add(String(id));
      let next: { text: string; details: Record<string, unknown> } = ep;
      for (const f of ofUser)
        if (listed.has(f.id)) next = withoutFact(next, f.id, f.text, options, f.instead);
      if (next.text !== ep.text || next.details !== ep.details) {
        await updateEpisodeText(db, orgId, ep.id, next.text, next.details, { dropVector: options.unlist });
        if (options.unlist) reworked.push({ id: ep.id, text: next.text, details: next.details });
      }
    }
  }
  if (options.unlist)
    await unlinkNeighbours(
      db,
      orgId,
      [...linking],
      facts.map((f) => f.id),
    );
  return reworked;
}

/** An episode whose text unsayInEpisodes changed after a delete: its vector is gone until embedEpisodesAgain. */
export interface ReworkedEpisode {
  id: string;
  text: string;
  details: Record<string, unknown>;
}

/**
 * Vectors for episodes unsayInEpisodes changed, once their transaction has committed (a model's
 * call is never made holding the user's lock). Until then, or if the model fails, such an episode
 * is found by full text only: never by the vector of what it no longer says.
 */
export async function embedEpisodesAgain(ctx: Ctx, episodes: readonly ReworkedEpisode[]): Promise<void> {
  try {
    await embedRows(
      ctx.deps,
      ctx.db,
      episodes.map((e) => ({ ...e, org_id: ctx.principal.orgId, type: "episode" as const })),
    );
  } catch (err) {
    ctx.log.warn(
      { err, episodes: episodes.length },
      "embedding changed episodes failed: they are found by full text only until the maintenance sweep embeds them",
    );
  }
}

/**
 * An episode without a fact's sentences where the summary quotes them (and without its id:
 * `unlist`), or saying `instead` in their place.
 */
export function withoutFact(
  episode: { text: string; details: Record<string, unknown> },
  factId: string,
  factText: string,
  options: { unlist: boolean } = { unlist: true },
  instead = "",
): { text: string; details: Record<string, unknown> } {
  const kept = withoutSentencesOf(episode.text, factText, instead);
  const details = withoutWordsOf(episode.details, factText, kept);
  const title = typeof details.title === "string" ? details.title : "";
  const factIds = Array.isArray(details.fact_ids) ? (details.fact_ids as string[]) : [];
  return {
    text: kept || title,
    details: options.unlist ? { ...details, fact_ids: factIds.filter((id) => id !== factId) } : details,
  };
}

/** Content words of a text, lower case, as stems ("orchids" and "orchid" are one). */
const wordsOf = (text: string) => new Set(contentWords(text).map(stem));
/** Whether most of a line's words (three in five) are a fact's: the line says that fact. */
const says = (line: string, fact: Set<string>) => {
  const words = [...wordsOf(line)];
  return words.length > 0 && words.filter((w) => fact.has(w)).length / words.length >= 0.6;
};

/**
 * An episode's title and gist without what a fact removed from it said: a keyword title
 * ("Conversation about orchid, Lisbon") loses the topics only that fact held (those the kept
 * text still says stay), and a title or a gist's line (its goal, outcome, errors) made mostly of
 * the fact's words goes ("Session: My dog Xanthippe ..." becomes "Session"). Files and tools stay.
 */
function withoutWordsOf(details: Record<string, unknown>, factText: string, keptText: string) {
  const fact = wordsOf(factText);
  const keptWords = wordsOf(keptText);
  let changed = false;
  const next = { ...details };
  if (typeof details.title === "string") {
    const topics = /^(Conversation(?: (?:between|with) .+?)?) about (.+)$/.exec(details.title);
    let title = details.title;
    if (topics) {
      const left = topics[2]!
        .split(", ")
        .filter((t) => !fact.has(stem(t.toLowerCase())) || keptWords.has(stem(t.toLowerCase())));
      title = left.length ? `${topics[1]} about ${left.join(", ")}` : topics[1]!;
    } else if (title.startsWith("Session: ")) {
      if (says(title.slice(9), fact)) title = "Session";
    } else if (!/^Conversation\b/.test(title) && says(title, fact)) title = "Conversation";
    // (A keyword title's speakers, "Conversation between Alice and Bob", "Conversation with
    // Alice", stay: they are no topic.)
    if (title !== details.title) {
      next.title = title;
      changed = true;
    }
  }
  const gist = details.gist;
  if (gist && typeof gist === "object" && !Array.isArray(gist)) {
    const g = { ...(gist as Record<string, unknown>) };
    for (const k of ["goal", "outcome"])
      if (typeof g[k] === "string" && says(g[k] as string, fact)) {
        g[k] = null;
        changed = true;
      }
    if (Array.isArray(g.errors)) {
      const errors = g.errors.filter((e) => typeof e !== "string" || !says(e, fact));
      if (errors.length !== g.errors.length) {
        g.errors = errors;
        changed = true;
      }
    }
    next.gist = g;
  }
  return changed ? next : details;
}
