import { type Ctx, inTx } from "../context.js";
import type { MemoryRow } from "../db/memory-row.js";
import {
  directivesByKeys,
  hnswSettings,
  memoriesInOrder,
  rankCandidates,
  servedRows,
  textMatches,
} from "../db/memory-search.js";
import { CoreError, isCoreError } from "../errors.js";
import { foldLatin } from "../fold.js";
import { identifiersFromAction, matchedOn } from "../identifiers/identifiers.js";
import type { FilterNode } from "../memories/filters.js";
import { CONTENT_TYPES, DIRECTIVE_TYPES, type MemoryType, toWire } from "../memories/model.js";
import { withEverydayPhrases } from "../providers/local/concepts.js";
import { ProviderError } from "../providers/openai.js";
import { lexicalVerdict, sharesContentWord } from "../trigger/gate.js";
import { checkMonthlyQuota } from "../usage/quota.js";
import { recordUsage } from "../usage/record.js";
import type { SearchResult } from "../wire/search.js";
import { composeDeterministic, composeWithModel } from "./compose.js";
import { vectorWeight } from "./fuse.js";
import { LINK_CANDIDATES, LINK_SPAN } from "./linked.js";
import { rerank } from "./rerank.js";
import { resolveScope, type Scope } from "./scope.js";
import { asksForSeveral } from "./several.js";
import { withNamedDay } from "./temporal.js";
import { elapsed } from "./timing.js";

export type SearchInclude = MemoryType | "full_content";

export interface SearchInput extends Scope {
  query: string;
  mode?: "retrieve" | "compose" | undefined;
  include?: SearchInclude[] | undefined;
  limit?: number | undefined;
  /** A checked filter tree (variant search), ANDed with the scope; it may be what pins the scope. */
  filter?: FilterNode | undefined;
}

export type { SearchResult };

/**
 * Directive rows that lead a search asking for them: at most this many, and within `limit` (the
 * list is at most `limit` rows: the directives first, the ranked rows after them).
 */
const MAX_LEADING_DIRECTIVES = 10;

/**
 * Hybrid search: nearest neighbours and full-text matches within the scope, fused by rank;
 * directives asked for lead with a null score; under compose, a context block on top.
 */
export async function searchMemories({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: SearchInput;
}): Promise<SearchResult> {
  const scope = resolveScope(ctx, input, input.filter);
  // Counted here when the tier has a monthly cap (checked and counted at once), else with the ranking.
  const quota = await checkMonthlyQuota(ctx, { searches: 1 });
  const mode = input.mode ?? "compose";
  const limit = input.limit ?? 20;
  const include = input.include?.filter((t) => t !== "full_content") ?? [];
  const corpora = include.length ? (include as MemoryType[]) : [...CONTENT_TYPES];
  const contentTypes = CONTENT_TYPES.filter((t) => corpora.includes(t));
  const directiveTypes = DIRECTIVE_TYPES.filter((t) => corpora.includes(t));
  const fullContent = input.include?.includes("full_content") ?? false;
  const timings: Record<string, number> = {};
  const started = performance.now();

  try {
    let t = performance.now();
    const vector = contentTypes.length ? await queryVector(ctx, input.query) : undefined;
    if (vector) timings.embed = elapsed(t);

    // The nearest neighbours and the ranking statement (full text, fusion, the usage count and the
    // top hits' episode neighbours) in one round trip and its own implicit transaction (SET LOCAL:
    // on the embedded database all connections share one session), then the re-ranking
    // (src/search/rerank.ts) and the served rows read whole. Directives, when asked for, are read
    // in the same snapshot: one short transaction, BEGIN with the settings, the statements, COMMIT.
    t = performance.now();
    // Seconds spent re-ranking (the stage `rerank`), left out of `retrieve`; undefined: it did not run.
    let rerankSeconds: number | undefined;
    const pool = Math.min(400, Math.max(50, limit * 4));
    const weight = vectorWeight(ctx.deps.providers.embedder.name);
    let counted = quota.counted;
    // The neighbours the ranking may link are read by the statement, except for a question asking
    // for several things.
    const several = asksForSeveral(input.query);
    // `take`: the rows it ranks, what `limit` leaves after the leading directives.
    const hybrid = async (db: typeof ctx.db, take: number, settings?: ReturnType<typeof hnswSettings>) => {
      const { ranked, links } = await rankCandidates(db, {
        scope,
        types: contentTypes,
        query: withNamedDay(withEverydayPhrases(input.query)),
        vector: vector!,
        pool,
        limit: take,
        vectorWeight: weight,
        usage: counted ? undefined : { keyId: ctx.principal.keyId },
        settings: settings && { settings },
        linkSpan: several ? undefined : LINK_SPAN,
        linkFrom: LINK_CANDIDATES,
      });
      const r = performance.now();
      const served = rerank(input.query, ranked, links, contentTypes, take, several);
      rerankSeconds = elapsed(r);
      // An episode every sentence of which was superseded is left its title alone ("Conversation"):
      // nothing to serve, though its vector still neighbours every query a little.
      const rows = await servedRows(db, scope, served);
      return rows.filter((r) => !(r.row.type === "episode" && r.row.text === r.row.details?.title));
    };
    let directives: { row: MemoryRow; matchedOn: string[] }[] = [];
    let ranked: { row: MemoryRow; score: number }[] = [];
    if (!directiveTypes.length) {
      if (vector) {
        ranked = await hybrid(ctx.db, limit, hnswSettings(pool));
        counted = true;
      }
    } else {
      ({ directives, ranked } = await inTx(
        ctx,
        async ({ db: tx }) => {
          const directives = await leadingDirectives(
            tx,
            scope,
            directiveTypes,
            input.query,
            Math.min(MAX_LEADING_DIRECTIVES, limit),
          );
          let ranked: { row: MemoryRow; score: number }[] = [];
          if (vector && directives.length < limit) {
            ranked = await hybrid(tx, limit - directives.length);
            counted = true;
          }
          return { directives, ranked };
        },
        { settings: hnswSettings(pool) },
      ));
    }
    timings.retrieve = Math.round((elapsed(t) - (rerankSeconds ?? 0)) * 1e6) / 1e6;
    // Fusion ran inside the ranking statement; rerank is the re-ranking of its candidates.
    if (rerankSeconds !== undefined) timings.rerank = rerankSeconds;
    // Under compose a directive says why it is there (spec 2.1): the trigger's lexical gate, with
    // the query as the task; under retrieve, null. The block leaves out those the gate drops, as
    // trigger does: a directive it judged unrelated to the query is no context for it.
    const verdicts =
      mode === "compose" ? directives.map((d) => lexicalVerdict(d, input.query, "the query")) : null;
    const rows: MemoryRow[] = [
      ...directives.filter((_, i) => verdicts?.[i]?.keep ?? true).map((d) => d.row),
      ...ranked.map((r) => r.row),
    ];
    let context: string | null = null;
    let applied = false;
    if (mode === "compose") {
      t = performance.now();
      const selection = await composeWithModel(ctx, input.query, rows);
      if (selection) {
        context = selection.context;
        applied = true;
      } else context = composeDeterministic(rows, input.query);
      timings.compose = elapsed(t);
    }

    if (!counted) {
      await recordUsage(ctx.db, { orgId: scope.orgId, keyId: ctx.principal.keyId, searches: 1 });
    }
    timings.total = elapsed(started);
    ctx.deps.metrics.searchDuration.observe(timings.total);
    return {
      object: "search",
      mode,
      data: [
        ...directives.map((d, i) => {
          const verdict = verdicts?.[i];
          return toWire(d.row, {
            directive: {
              matched_on: d.matchedOn,
              because: verdict?.because ?? null,
              confidence: verdict?.confidence ?? null,
            },
          });
        }),
        ...ranked.map((r) => toWire(r.row, { score: r.score, fullContent })),
      ],
      context,
      context_selection_applied: applied,
      stage_timings: timings,
    };
  } catch (err) {
    if (isCoreError(err)) throw err;
    throw new CoreError("search_failed", "Search failed.", { cause: err });
  }
}

/** How long search leaves a failing embedding model alone, ranking by full text meanwhile. */
export const EMBEDDER_BACKOFF_MS = 30_000;
/** Until when each embedder is left alone (ms since the epoch), after a failed query embedding. */
const embedderAwayUntil = new WeakMap<object, number>();

/**
 * The query's vector. When the embedding model fails (down, rate-limited, too slow for the
 * request's time-out), a zero vector: it is no neighbour of anything (its distances are left out
 * of the ranking), so the search ranks by full text alone instead of failing, and for
 * EMBEDDER_BACKOFF_MS the next searches do not wait on the model either.
 */
async function queryVector(ctx: Ctx, query: string): Promise<number[]> {
  const embedder = ctx.deps.providers.embedder;
  const zero = () => new Array<number>(embedder.dim).fill(0);
  if ((embedderAwayUntil.get(embedder) ?? 0) > Date.now()) return zero();
  try {
    const [vector] = await embedder.embed([query], {
      timeoutMs: ctx.deps.config.MNEMO_LLM_REQUEST_TIMEOUT_MS,
    });
    return vector!;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    embedderAwayUntil.set(embedder, Date.now() + EMBEDDER_BACKOFF_MS);
    ctx.log.warn(
      { err, backoffMs: EMBEDDER_BACKOFF_MS },
      "query embedding failed: searching by full text alone for a while",
    );
    return zero();
  }
}

/**
 * Directives "matched for the query", at most `max`: those whose trigger entities the query
 * names, then those whose text matches it on a content word (sharesContentWord: not on "use" or
 * "new" alone, which most directives say), never a failed one.
 */
async function leadingDirectives(
  tx: Parameters<typeof directivesByKeys>[0],
  scope: ReturnType<typeof resolveScope>,
  types: readonly MemoryType[],
  query: string,
  max: number,
): Promise<{ row: MemoryRow; matchedOn: string[] }[]> {
  const identifiers = identifiersFromAction({ output: query });
  const keyed = await directivesByKeys(tx, scope, types, identifiers, null, max);
  const ids = new Set(identifiers);
  const out = keyed.map((row) => ({ row, matchedOn: matchedOn(row.trigger_entities, ids) }));
  if (out.length < max) {
    const text = await textMatches(tx, scope, types, query, max);
    const seen = new Set(out.map((d) => d.row.id));
    const extra = await memoriesInOrder(
      tx,
      scope,
      text.map((c) => c.id).filter((id) => !seen.has(id)),
    );
    // Found by their text: the trigger entities the query still names as words ("npm" in "fix
    // this failing npm install", which holds no identifier a tool call would) are what it hit.
    const words = new Set(foldLatin(query.toLowerCase()).match(/[\p{L}\p{N}_./-]+/gu) ?? []);
    const meant = extra.filter((row) => sharesContentWord(row, query));
    for (const row of meant.slice(0, max - out.length))
      out.push({
        row,
        matchedOn: row.trigger_entities.filter((e) => words.has(foldLatin(e.toLowerCase()))),
      });
  }
  return out;
}
