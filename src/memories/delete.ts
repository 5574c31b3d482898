import { confinedUser, mayWriteRow } from "../auth/user-scope.js";
import { type Ctx, inTx } from "../context.js";
import type { Queryable } from "../db/db.js";
import { deleteMemoryRow, episodesListingFacts, findMemory, updateEpisodeText } from "../db/memories.js";
import { CoreError, isCoreError } from "../errors.js";
import { withoutSentencesOf } from "../providers/local/english.js";
import { memoryNotFound } from "./get.js";

/**
 * Hard delete, no tombstone. A fact that others supersede simply leaves their chain (there is no
 * foreign key on `supersedes`; the revision walker stops at the gap). A deleted fact also leaves
 * the episodes that list it: its id from their `fact_ids`, and its sentences from their text
 * (the local extractor's summary is made of its facts' sentences; a model's summary in its own
 * words keeps what it says, so delete that episode too).
 */
export async function deleteMemory({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<void> {
  let deleted: boolean;
  if (confinedUser(ctx.principal) !== null) {
    // user_id is immutable, so checking the owner first cannot race with a change of owner.
    const row = await findMemory(ctx.db, ctx.principal.orgId, input.id);
    if (!row || !mayWriteRow(ctx.principal, row)) throw memoryNotFound(input.id);
  }
  try {
    deleted = await inTx(ctx, async ({ db }) => {
      const orgId = ctx.principal.orgId;
      const row = await deleteMemoryRow(db, orgId, input.id);
      if (row?.type === "fact")
        await unsayInEpisodes(db, orgId, [{ id: input.id, ...row }], { unlist: true });
      return row !== null;
    });
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("delete_failed", "The memory could not be deleted.", { cause: err });
  }
  if (!deleted) throw memoryNotFound(input.id);
  ctx.log.info({ memoryId: input.id }, "memory deleted");
}

/**
 * The episodes that list these facts (each of its user) no longer say them: their sentences leave
 * the episodes' text (an episode left with none reads as its title). A deleted fact also leaves
 * their `fact_ids` (`unlist`); a superseded one stays listed (it is still the episode's, as
 * history), but the summary no longer serves what the fact's successor replaced. One read per
 * user; run inside the transaction that deletes or supersedes the facts.
 */
export async function unsayInEpisodes(
  db: Queryable,
  orgId: string,
  facts: ReadonlyArray<{ id: string; text: string; user_id: string | null }>,
  options: { unlist: boolean },
): Promise<void> {
  const byUser = new Map<string | null, typeof facts>();
  for (const f of facts) byUser.set(f.user_id, [...(byUser.get(f.user_id) ?? []), f]);
  for (const [userId, ofUser] of byUser) {
    const ids = ofUser.map((f) => f.id);
    for (const ep of await episodesListingFacts(db, orgId, userId, ids)) {
      const listed = new Set(Array.isArray(ep.details.fact_ids) ? (ep.details.fact_ids as string[]) : []);
      let next: { text: string; details: Record<string, unknown> } = ep;
      for (const f of ofUser) if (listed.has(f.id)) next = withoutFact(next, f.id, f.text, options);
      if (next.text !== ep.text || next.details !== ep.details)
        await updateEpisodeText(db, orgId, ep.id, next.text, next.details);
    }
  }
}

/** An episode without a fact's sentences where the summary quotes them (and without its id: `unlist`). */
export function withoutFact(
  episode: { text: string; details: Record<string, unknown> },
  factId: string,
  factText: string,
  options: { unlist: boolean } = { unlist: true },
): { text: string; details: Record<string, unknown> } {
  const kept = withoutSentencesOf(episode.text, factText);
  const title = typeof episode.details.title === "string" ? episode.details.title : "";
  const factIds = Array.isArray(episode.details.fact_ids) ? (episode.details.fact_ids as string[]) : [];
  return {
    text: kept || title,
    details: options.unlist
      ? { ...episode.details, fact_ids: factIds.filter((id) => id !== factId) }
      : episode.details,
  };
}
