import { isDeepStrictEqual } from "node:util";
import { mayWriteRow, readFilterUsers, readUserId } from "../auth/user-scope.js";
import { type Ctx, inTx } from "../context.js";
import { type CursorPosition, decodeCursor, encodeCursor } from "../cursor.js";
import { listFactsInEpisode, markSuperseded, sameTurnFacts } from "../db/ingest-lookups.js";
import { lockIngestUser } from "../db/locks.js";
import {
  countMemoryRows,
  findMemory,
  listMemoryRows,
  lockMemory,
  setMemoryMetadata,
} from "../db/memories.js";
import { MEMORY_TYPES, type MemoryRow, type MemoryType } from "../db/memory-row.js";
import { CoreError } from "../errors.js";
import { newMemoryId } from "../ids.js";
import { factHash } from "../ingest/assemble.js";
import { type SentenceEdit, wholeSentencesToo, withSentenceEdits } from "../ingest/reconcile.js";
import { sameSlot } from "../providers/local/extractor.js";
import { fingerprint } from "../seal.js";
import { isBlank } from "../wire/common.js";
import type { Memory } from "../wire/memories.js";
import {
  VARIANT_LIST_LIMIT_DEFAULT,
  type VariantList,
  type VariantMemory,
  type VariantPatchRequest,
} from "../wire/variant.js";
import { embedEpisodesAgain, type ReworkedEpisode, unsayInEpisodes } from "./delete.js";
import { parseFilters, pinsGroups, pinsScope } from "./filters.js";
import { getMemory, memoryNotFound } from "./get.js";
import { mergeMetadata } from "./metadata.js";
import { toWire } from "./model.js";
import { patchMemoryGroups } from "./patch.js";
import { embeddingText, type MemoryInput, writeMemories } from "./write.js";

/** A memory in the variant shape: `memory` instead of `text`. */
export function toVariant(m: Memory): VariantMemory {
  const { text, ...rest } = m;
  return { ...rest, memory: text };
}

// Cursors of the variant list: sealed like every list cursor, bound to their direction.
const NEXT = "variant:created_at_desc:next";
const PREV = "variant:created_at_desc:prev";

export interface VariantListInput {
  filters?: unknown;
  /** Exact-match shortcuts (GET query), ANDed with the filters. */
  user_id?: string | undefined;
  agent_id?: string | undefined;
  conv_id?: string | undefined;
  app_id?: string | undefined;
  /** Rows tagged with this group (GET query), as on the list without the slash. */
  group_id?: string | undefined;
  type?: MemoryType | undefined;
  limit?: number | undefined;
  cursor?: string | null | undefined;
  fullContent?: boolean | undefined;
}

/**
 * The list form `{count, next, previous, results}`, newest first. `next` and `previous` are keyset
 * cursors on (created_at, id) either way from the page; a filter must pin a scope axis, like search.
 */
export async function listVariant({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: VariantListInput;
}): Promise<VariantList> {
  const limit = input.limit ?? VARIANT_LIST_LIMIT_DEFAULT;
  const orgId = ctx.principal.orgId;
  const filter =
    input.filters !== undefined && input.filters !== null
      ? parseFilters(input.filters, { maxGroupIds: ctx.deps.config.MNEMO_MAX_GROUP_IDS_PER_QUERY })
      : undefined;
  readFilterUsers(ctx.principal, filter);
  const base = {
    orgId,
    types: input.type ? [input.type] : MEMORY_TYPES,
    // A credential confined to a user lists only that user's rows (another user_id is 403), but
    // reads named groups (`group_id`, or filters pinned to groups) across users, as the list does.
    userId: readUserId(ctx.principal, input.user_id, {
      groupRead: Boolean(input.group_id) || (filter !== undefined && pinsGroups(filter)),
    }),
    agentId: input.agent_id,
    convId: input.conv_id,
    appId: input.app_id,
    groupId: input.group_id,
    filter,
  };
  // Filters read within a scope, as on search: the filter's own axis, a shortcut's or the user a
  // credential is confined to (its default, as on search).
  if (filter && !pinsScope(filter) && !base.userId && !base.agentId && !base.appId && !base.groupId) {
    throw new CoreError(
      "missing_scope",
      "filters must pin a scope axis (an equality or $in on user_id, agent_id, app_id or group_ids).",
    );
  }
  let direction: "next" | "prev" = "next";
  let after: CursorPosition | undefined;
  if (input.cursor) {
    try {
      after = decodeCursor(ctx.deps.secret, orgId, NEXT, input.cursor);
    } catch {
      after = decodeCursor(ctx.deps.secret, orgId, PREV, input.cursor);
      direction = "prev";
    }
  }
  const rows = await listMemoryRows(ctx.db, {
    ...base,
    order: direction === "next" ? "created_at_desc" : "created_at_asc",
    after: after && { createdAt: after.createdAt, id: after.id },
    limit: limit + 1,
  });
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  if (direction === "prev") page.reverse();
  const first = page[0];
  const last = page.at(-1);
  // The count is taken on the first page and carried in the cursors, with a digest of what it
  // counted: counting on every page read the whole scope each time (0.2-0.7 s a page at 157,560
  // memories). A cursor sent with other filters counts again.
  const query = fingerprint(base);
  const count =
    after?.count?.query === query
      ? after.count.n
      : await countMemoryRows(ctx.db, { ...base, order: "created_at_desc" });
  const seal = (order: string, r: { cursor_ts: string; id: string }) =>
    encodeCursor(ctx.deps.secret, orgId, order, {
      createdAt: r.cursor_ts,
      id: r.id,
      count: { n: count, query },
    });
  const hasNext = direction === "next" ? more : after !== undefined;
  const hasPrev = direction === "prev" ? more : after !== undefined;
  return {
    count,
    next: hasNext && last ? seal(NEXT, last) : null,
    previous: hasPrev && first ? seal(PREV, first) : null,
    results: page.map((r) => toVariant(toWire(r, { fullContent: input.fullContent ?? false }))),
  };
}

const IMMUTABLE = new Set([
  "id",
  "object",
  "type",
  "memory",
  "user_id",
  "agent_id",
  "conv_id",
  "app_id",
  "categories",
  "created_at",
  "updated_at",
  "details",
  "score",
  "status",
  "supersedes",
]);

/**
 * The variant PATCH: `text` supersedes a fact (the new active row points back through
 * `supersedes`, the old one becomes superseded and keeps its history); `metadata` is merged onto the
 * row (keys never deleted); group tags as in the main PATCH. Returns the memory as it now stands
 * (the new fact after a text change).
 */
export async function patchVariant({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { id: string; patch: VariantPatchRequest };
}): Promise<VariantMemory> {
  const { text, metadata, add_group_ids, remove_group_ids, ...other } = input.patch;
  const named = Object.keys(other);
  const immutable = named.find((k) => IMMUTABLE.has(k));
  if (immutable) {
    throw new CoreError("immutable_field", `${immutable} cannot be changed after ingest.`, {
      field: immutable,
    });
  }
  if (named.length) {
    throw new CoreError(
      "invalid_request",
      `Unknown field ${named[0]}; a PATCH takes text, metadata, add_group_ids and remove_group_ids.`,
    );
  }
  const groups = (add_group_ids?.length ?? 0) + (remove_group_ids?.length ?? 0) > 0;
  if (text === undefined && metadata === undefined && !groups) {
    throw new CoreError("empty_patch", "Send text, metadata, add_group_ids or remove_group_ids.");
  }
  if (text !== undefined && isBlank(text)) {
    throw new CoreError("empty_text_field", "text must not be empty or blank.", { field: "text" });
  }
  const orgId = ctx.principal.orgId;
  let id = input.id;
  // Group tags first (validated and written atomically): a text change then carries them over.
  if (groups) {
    if (text !== undefined) {
      const current = await getMemory({ ctx, input: { id } });
      if (current.type !== "fact") throw textOnNonFact(current.type);
    }
    await patchMemoryGroups({ ctx, input: { id, add_group_ids, remove_group_ids } });
  }
  if (text !== undefined || metadata !== undefined) {
    // A new text's vector, before the transaction: a model's embedding call (seconds; bounded by
    // MNEMO_LLM_REQUEST_TIMEOUT_MS) would otherwise hold the user's ingest lock and the row's, and
    // on the embedded database every other statement. Only for a fact that can take the text;
    // the transaction checks again, and embeds itself if the row changed meanwhile.
    const before = text === undefined ? null : await findMemory(ctx.db, orgId, input.id);
    const planned =
      text !== undefined &&
      before?.type === "fact" &&
      before.status !== "superseded" &&
      mayWriteRow(ctx.principal, before)
        ? embeddingText({ type: "fact", text: text.trim(), details: before.details })
        : null;
    const vector =
      planned === null
        ? undefined
        : (
            await ctx.deps.providers.embedder.embed([planned], {
              timeoutMs: ctx.deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
            })
          )[0];
    const newId = newMemoryId();
    const also = planned === null || !before ? null : await supersededWith(ctx, before, newId, text!.trim());
    // Episodes whose text the replaced fact left: their vectors are made again once this commits.
    let reworked: ReworkedEpisode[] = [];
    id = await inTx(ctx, async (txCtx) => {
      // A new text replaces the fact: under its user's ingest lock (taken first, as ingest takes
      // it, before the row's), so an ingest replacing the same fact at once sees this change and
      // replaces the new fact instead of leaving two active ones (src/ingest/store.ts). The row
      // read above names the user: a memory's type and user never change.
      if (before?.type === "fact") await lockIngestUser(txCtx.db, orgId, before.user_id ?? "");
      const row = await lockMemory(txCtx.db, orgId, input.id);
      if (!row || !mayWriteRow(ctx.principal, row)) throw memoryNotFound(input.id);
      const merged = metadata ? mergeMetadata(row.metadata ?? {}, metadata) : row.metadata;
      if (text === undefined) {
        // A merge that changes nothing writes nothing.
        if (!isDeepStrictEqual(merged, row.metadata ?? {}))
          await setMemoryMetadata(txCtx.db, orgId, row.id, merged);
        return row.id;
      }
      if (row.type !== "fact") throw textOnNonFact(row.type);
      if (row.status === "superseded") {
        throw new CoreError(
          "invalid_request",
          "This fact is already superseded; patch the active fact of its chain (its revisions name it).",
        );
      }
      const unchanged = embeddingText({ type: "fact", text: text.trim(), details: row.details }) === planned;
      const [created] = await writeMemories(txCtx, [
        {
          ...(unchanged && vector ? { embedding: vector } : {}),
          ...(also ? { id: newId } : {}),
          type: "fact",
          text: text.trim(),
          user_id: row.user_id,
          agent_id: row.agent_id,
          conv_id: row.conv_id,
          app_id: row.app_id,
          group_ids: row.group_ids,
          categories: row.categories,
          details: row.details,
          metadata: merged,
          supersedes: row.id,
          status: "active",
          content_hash: factHash(text),
        },
      ]);
      // What an ingest of the new text would supersede goes with it (supersededWith), planned
      // from the row read before the transaction (the same row: it was active then and is now).
      const superseded = await markSuperseded(txCtx.db, orgId, [row.id, ...(also?.ids ?? [])]);
      const ended = new Set(superseded.map((r) => r.id));
      const rests = (also?.rests ?? []).filter((r) => ended.has(r.supersedes!));
      await writeMemories(txCtx, rests);
      for (const r of rests)
        if (typeof r.details?.episode_id === "string")
          await listFactsInEpisode(txCtx.db, orgId, r.details.episode_id, [r.id!]);
      reworked = await unsayInEpisodes(txCtx.db, orgId, withSentenceEdits(superseded, also?.unsaid), {
        unlist: false,
      });
      ctx.log.info({ memoryId: row.id, newId: created!.id }, "fact superseded by patch");
      return created!.id;
    });
    await embedEpisodesAgain(ctx, reworked);
  }
  return toVariant(await getMemory({ ctx, input: { id } }));
}

/**
 * What an ingest of a fact's new text would supersede besides the fact (src/ingest/reconcile.ts):
 * the clauses ingest cut from its turn that state what the new text states again ("The user moved
 * to Berlin last month." beside "... moved to Berlin last month and I work as a nurse."; the
 * others, "works as a nurse", stay), and the sentences of its turn that said the old value with
 * more (wholeSentencesToo: "The user is 34 years old and the user lives in Denver." when "The user
 * is 34 years old." becomes 35), each with its rest written as a fact of its own where it was
 * unless an active fact says it already, and what its episode says instead. Read before the
 * transaction, as the new text's vector is: the judge and the embedder may be a model's calls.
 */
async function supersededWith(
  ctx: Ctx,
  row: MemoryRow,
  newId: string,
  text: string,
): Promise<{ ids: string[]; rests: MemoryInput[]; unsaid: Map<string, SentenceEdit[]> }> {
  const scope = { orgId: ctx.principal.orgId, userId: row.user_id ?? "" };
  const clauses = (await sameTurnFacts(ctx.db, scope, [row.id])).filter(
    (c) => c.id !== row.id && sameSlot(text, c.text),
  );
  const supersedes = new Map([row.id, ...clauses.map((c) => c.id)].map((id) => [id, newId]));
  const wholes = await wholeSentencesToo(ctx.db, ctx.deps.providers.extractor, scope, supersedes, [
    { id: newId, org_id: scope.orgId, type: "fact", text, details: row.details },
  ]);
  const written = wholes.filter((w) => !w.said);
  const vectors = written.length
    ? await ctx.deps.providers.embedder.embed(
        written.map(({ whole, text }) => embeddingText({ ...whole, text })),
        { timeoutMs: ctx.deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS },
      )
    : [];
  const rests = written.map(({ whole, text }, k): MemoryInput => {
    const { id: _, org_id: __, ...where } = whole;
    return {
      ...where,
      id: newMemoryId(),
      text,
      content_hash: factHash(text),
      embedding: vectors[k]!,
      status: "active",
      supersedes: whole.id,
    };
  });
  return {
    ids: [...supersedes.keys()].filter((id) => id !== row.id),
    rests,
    unsaid: new Map(wholes.map((w) => [w.whole.id, w.unsaid])),
  };
}

const textOnNonFact = (type: string) =>
  new CoreError(
    "immutable_field",
    `The text of ${/^[aeiou]/.test(type) ? "an" : "a"} ${type} cannot change; only facts are superseded by a new text.`,
    {
      field: "text",
    },
  );
