import type { Ctx } from "../src/context.js";
import { CoreError, isCoreError, isDatabaseUnavailable } from "../src/errors.js";
import { archiveGroup } from "../src/groups/archive.js";
import { createGroup } from "../src/groups/create.js";
import { listGroups } from "../src/groups/list.js";
import { updateGroup } from "../src/groups/update.js";
import { getIngestJob } from "../src/ingest/get-job.js";
import { submitIngest } from "../src/ingest/submit.js";
import { deleteMemory } from "../src/memories/delete.js";
import { getMemory } from "../src/memories/get.js";
import { listMemories } from "../src/memories/list.js";
import { patchMemoryGroups } from "../src/memories/patch.js";
import { listRevisions } from "../src/memories/revisions.js";
import { listVariant, patchVariant } from "../src/memories/variant.js";
import { providerFailure } from "../src/providers/openai.js";
import { searchMemories } from "../src/search/search.js";
import { searchVariant } from "../src/search/variant.js";
import { triggerDirectives } from "../src/trigger/trigger.js";
import { parseWire } from "../src/wire/common.js";
import { CreateGroupRequest, UpdateGroupRequest } from "../src/wire/groups.js";
import { IngestRequestSchema } from "../src/wire/ingest.js";
import { ListMemoriesQuery, listMemoriesInput, MemoryGroupPatchRequest } from "../src/wire/memories.js";
import { SearchRequestSchema, TriggerRequestSchema } from "../src/wire/search.js";
import {
  VariantListRequestSchema,
  VariantPatchRequestSchema,
  VariantSearchRequestSchema,
} from "../src/wire/variant.js";
import { internalError, type MemoryService } from "./port.js";

/**
 * The tools' port in this process: each method checks its request with the REST schema and calls
 * the verb with a context from `admit`. On /mcp that is the context the HTTP authentication built
 * for the request (already counted against the rate limit); over stdio it authenticates and counts
 * each tool call.
 */
export function inProcessService(
  admit: () => Promise<Ctx>,
  options: { logCalls?: boolean; maxBodyBytes?: number } = {},
): MemoryService {
  const run = async <T>(operation: string, verb: (ctx: Ctx) => Promise<T>, body?: unknown): Promise<T> => {
    // Over stdio no HTTP body rule ran: the request body REST would be sent (a remote stdio's)
    // is held to the same bound, before the call is counted (/mcp's POST was checked whole).
    const max = options.maxBodyBytes;
    if (max !== undefined && body !== undefined && Buffer.byteLength(JSON.stringify(body)) > max) {
      throw new CoreError("payload_too_large", `The request body is larger than ${max} bytes.`);
    }
    const ctx = await admit();
    const started = performance.now();
    let outcome = "ok";
    try {
      return await verb(ctx);
    } catch (err) {
      outcome = isCoreError(err) ? err.code : "server_error";
      if (isCoreError(err) && err.status < 500) throw err;
      // The database or a model out of reach: toolError answers service_unavailable.
      if (isDatabaseUnavailable(err) || providerFailure(err)) {
        outcome = "service_unavailable";
        throw err;
      }
      ctx.log.error({ err: isCoreError(err) ? (err.cause ?? err) : err }, "mcp tool failed");
      throw internalError(isCoreError(err) ? err.code : "server_error", ctx.requestId);
    } finally {
      // Over stdio there is no HTTP access log: each call gets its own line.
      if (options.logCalls) {
        const durationMs = Math.round((performance.now() - started) * 10) / 10;
        ctx.log.info({ operation, outcome, durationMs }, "request");
      }
    }
  };
  return {
    ingest: (request, { wait }) =>
      run(
        "ingest",
        async (ctx) => {
          const checked = parseWire(IngestRequestSchema, request);
          return (await submitIngest({ ctx, input: { request: checked, wait } })).job;
        },
        request,
      ),
    getIngestJob: (jobId) => run("getIngestJob", (ctx) => getIngestJob({ ctx, input: { jobId } })),
    search: (request) =>
      run(
        "search",
        (ctx) => searchMemories({ ctx, input: parseWire(SearchRequestSchema, request) }),
        request,
      ),
    trigger: (request) =>
      run(
        "trigger",
        (ctx) => triggerDirectives({ ctx, input: parseWire(TriggerRequestSchema, request) }),
        request,
      ),
    listMemories: (query) =>
      run("listMemories", (ctx) =>
        listMemories({ ctx, input: listMemoriesInput(parseWire(ListMemoriesQuery, query, "query")) }),
      ),
    getMemory: (id) => run("getMemory", (ctx) => getMemory({ ctx, input: { id } })),
    deleteMemory: (id) => run("deleteMemory", (ctx) => deleteMemory({ ctx, input: { id } })),
    memoryRevisions: (id) => run("memoryRevisions", (ctx) => listRevisions({ ctx, input: { id } })),
    tagMemory: (id, patch) =>
      run(
        "tagMemory",
        (ctx) => patchMemoryGroups({ ctx, input: { ...parseWire(MemoryGroupPatchRequest, patch), id } }),
        patch,
      ),
    searchFiltered: (request) =>
      run(
        "searchFiltered",
        (ctx) => searchVariant({ ctx, input: parseWire(VariantSearchRequestSchema, request) }),
        request,
      ),
    listFiltered: (request) =>
      run(
        "listFiltered",
        (ctx) => {
          const { include, ...rest } = parseWire(VariantListRequestSchema, request);
          return listVariant({
            ctx,
            input: { ...rest, fullContent: include?.includes("full_content") ?? false },
          });
        },
        request,
      ),
    updateMemory: (id, patch) =>
      run(
        "updateMemory",
        (ctx) => patchVariant({ ctx, input: { id, patch: parseWire(VariantPatchRequestSchema, patch) } }),
        patch,
      ),
    listGroups: ({ includeArchived }) =>
      run("listGroups", (ctx) => listGroups({ ctx, input: { includeArchived } })),
    createGroup: (request) =>
      run(
        "createGroup",
        (ctx) => createGroup({ ctx, input: parseWire(CreateGroupRequest, request) }),
        request,
      ),
    updateGroup: (id, patch) =>
      run(
        "updateGroup",
        (ctx) => updateGroup({ ctx, input: { ...parseWire(UpdateGroupRequest, patch), id } }),
        patch,
      ),
    archiveGroup: (id) => run("archiveGroup", (ctx) => archiveGroup({ ctx, input: { id } })),
  };
}
