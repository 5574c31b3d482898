import type { Ctx } from "../context.js";
import { directivesByKeys, memoriesByIds, nearestMemories, textMatches } from "../db/memory-search.js";
import { CoreError, isCoreError } from "../errors.js";
import {
  CONTENT_TYPES,
  DIRECTIVE_TYPES,
  type Memory,
  type MemoryRow,
  type MemoryType,
  toWire,
} from "../memories/model.js";
import { extractIdentifiers, matchedOn } from "../trigger/extract.js";
import { recordUsage } from "../usage/record.js";
import { composeDeterministic, composeWithModel } from "./compose.js";
import { fuseScores, vectorWeight } from "./fuse.js";
import { resolveScope, type Scope } from "./scope.js";
import { elapsed } from "./timing.js";

export type SearchInclude = MemoryType | "full_content";

export interface SearchInput extends Scope {
  query: string;
  mode?: "retrieve" | "compose" | undefined;
  include?: SearchInclude[] | undefined;
  limit?: number | undefined;
}

export interface SearchResult {
  object: "search";
  mode: "retrieve" | "compose";
  data: Memory[];
  context: string | null;
  context_selection_applied: boolean;
  stage_timings: Record<string, number>;
}

/** Directive rows that lead a search asking for them: at most this many. */
const MAX_LEADING_DIRECTIVES = 10;

/**
 * Hybrid search (4.8): nearest neighbours and full-text matches within the scope, fused by rank;
 * directives asked for lead with a null score; under compose, a context block on top.
 */
export async function searchMemories({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: SearchInput;
}): Promise<SearchResult> {
  const scope = resolveScope(ctx.principal.orgId, input);
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
    const [vector] = contentTypes.length ? await ctx.deps.providers.embedder.embed([input.query]) : [];
    if (vector) timings.embed = elapsed(t);

    // One short transaction for every statement: the iterative-scan settings are SET LOCAL (on the
    // embedded database all connections share one session), and the rows read agree with each other.
    t = performance.now();
    const pool = Math.min(400, Math.max(50, limit * 4));
    let rerankStart = 0;
    const { directives, ranked } = await ctx.deps.db.tx(async (tx) => {
      const vectorHits = vector ? await nearestMemories(tx, scope, contentTypes, vector, pool) : [];
      const textHits = contentTypes.length
        ? await textMatches(tx, scope, contentTypes, input.query, pool)
        : [];
      const directives = directiveTypes.length
        ? await leadingDirectives(tx, scope, directiveTypes, input.query)
        : [];
      timings.retrieve = elapsed(t);
      rerankStart = performance.now();
      const fused = fuseScores([
        { candidates: vectorHits, weight: vectorWeight(ctx.deps.providers.embedder.name) },
        { candidates: textHits, weight: 1 },
      ]).slice(0, limit);
      const byId = new Map(
        (
          await memoriesByIds(
            tx,
            scope.orgId,
            fused.map((f) => f.id),
          )
        ).map((r) => [r.id, r]),
      );
      const ranked = fused.flatMap((f) => {
        const row = byId.get(f.id);
        return row ? [{ row, score: f.score }] : [];
      });
      return { directives, ranked };
    });
    t = rerankStart;
    timings.rerank = elapsed(t);

    const rows: MemoryRow[] = [...directives.map((d) => d.row), ...ranked.map((r) => r.row)];
    let context: string | null = null;
    let applied = false;
    if (mode === "compose") {
      t = performance.now();
      const selection = await composeWithModel(ctx, input.query, rows);
      if (selection) {
        context = selection.context;
        applied = true;
      } else context = composeDeterministic(rows);
      timings.compose = elapsed(t);
    }

    await recordUsage(ctx.deps.db, { orgId: scope.orgId, keyId: ctx.principal.keyId, searches: 1 });
    timings.total = elapsed(started);
    return {
      object: "search",
      mode,
      data: [
        ...directives.map((d) => toWire(d.row, { directive: { matched_on: d.matchedOn } })),
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

/**
 * Directives "matched for the query": those whose trigger entities the query names, then those
 * whose text matches it, never a failed one.
 */
async function leadingDirectives(
  tx: Parameters<typeof directivesByKeys>[0],
  scope: ReturnType<typeof resolveScope>,
  types: readonly MemoryType[],
  query: string,
): Promise<{ row: MemoryRow; matchedOn: string[] }[]> {
  const identifiers = extractIdentifiers({ output: query });
  const keyed = await directivesByKeys(tx, scope, types, identifiers, null, MAX_LEADING_DIRECTIVES);
  const ids = new Set(identifiers);
  const out = keyed.map((row) => ({ row, matchedOn: matchedOn(row.trigger_entities, ids) }));
  if (out.length < MAX_LEADING_DIRECTIVES) {
    const text = await textMatches(tx, scope, types, query, MAX_LEADING_DIRECTIVES);
    const seen = new Set(out.map((d) => d.row.id));
    const extra = (
      await memoriesByIds(
        tx,
        scope.orgId,
        text.map((c) => c.id).filter((id) => !seen.has(id)),
      )
    ).sort((a, b) => text.findIndex((c) => c.id === a.id) - text.findIndex((c) => c.id === b.id));
    for (const row of extra.slice(0, MAX_LEADING_DIRECTIVES - out.length)) out.push({ row, matchedOn: [] });
  }
  return out;
}
