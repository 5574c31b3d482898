import type { z } from "zod";
import { CoreError } from "../src/errors.js";
import type { CreateGroupRequest, Group, GroupList, UpdateGroupRequest } from "../src/wire/groups.js";
import type { IngestJob, IngestRequestSchema } from "../src/wire/ingest.js";
import type { ListMemoriesQuery, Memory, MemoryGroupPatchRequest, MemoryList } from "../src/wire/memories.js";
import type { SearchRequest, SearchResult, TriggerRequest } from "../src/wire/search.js";
import type {
  VariantList,
  VariantListRequest,
  VariantMemory,
  VariantPatchInput,
  VariantSearchRequest,
  VariantSearchResult,
} from "../src/wire/variant.js";

/**
 * What the MCP tools need from the memory service: one method per operation, in the wire
 * vocabulary (requests are checked by the same schemas as REST). Two adapters: `in-process.ts`
 * calls the core verbs; `remote.ts` speaks HTTP to a running server. Failures are `CoreError`s;
 * one with a 5xx status carries only a safe message naming the request id.
 */
export interface MemoryService {
  ingest(request: z.input<typeof IngestRequestSchema>, options: { wait: boolean }): Promise<IngestJob>;
  getIngestJob(jobId: string): Promise<IngestJob>;
  search(request: SearchRequest): Promise<SearchResult>;
  trigger(request: TriggerRequest): Promise<SearchResult>;
  /** REST query names; `include` may be `full_content`. */
  listMemories(query: z.input<typeof ListMemoriesQuery>): Promise<MemoryList>;
  getMemory(memoryId: string): Promise<Memory>;
  deleteMemory(memoryId: string): Promise<void>;
  memoryRevisions(memoryId: string): Promise<MemoryList>;
  tagMemory(memoryId: string, patch: z.input<typeof MemoryGroupPatchRequest>): Promise<Memory>;
  /** The variant search (filter language), `POST /v1/memories/search/`. */
  searchFiltered(request: VariantSearchRequest): Promise<VariantSearchResult>;
  /** The variant list (filter language), `POST /v1/memories/`. */
  listFiltered(request: VariantListRequest): Promise<VariantList>;
  /** The variant PATCH: text (supersedes a fact), metadata, group tags, `PATCH /v1/memories/{id}/`. */
  updateMemory(memoryId: string, patch: VariantPatchInput): Promise<VariantMemory>;
  listGroups(options: { includeArchived: boolean }): Promise<GroupList>;
  createGroup(request: z.input<typeof CreateGroupRequest>): Promise<Group>;
  updateGroup(groupId: string, patch: z.input<typeof UpdateGroupRequest>): Promise<Group>;
  archiveGroup(groupId: string): Promise<Group>;
}

/** A failure with a server-side cause: the code, and a message that names only the request id. */
export const internalError = (code: CoreError["code"], requestId: string | null) =>
  new CoreError(
    code,
    `Internal error in the memory service. Quote request id ${requestId ?? "(none)"} to the operator.`,
  );

/** The service could not be reached at all (remote adapter: server down, DNS, time-out). */
export class UnreachableError extends Error {
  override name = "UnreachableError";
}
