import { randomUUID } from "node:crypto";
import { Agent, fetch } from "undici";
import type { z } from "zod";
import { unverifiedUser } from "../src/auth/jwt.js";
import { MAX_WAIT_SECONDS } from "../src/config.js";
import { CoreError, ERROR_STATUS, type ErrorCode } from "../src/errors.js";
import { groupNotFound } from "../src/groups/model.js";
import { jobNotFound } from "../src/ingest/get-job.js";
import { memoryNotFound } from "../src/memories/get.js";
import { type FieldIssue, isStorable, issuesMessage, parseWire } from "../src/wire/common.js";
import { GroupListSchema, GroupSchema } from "../src/wire/groups.js";
import { IngestJobSchema } from "../src/wire/ingest.js";
import { ListMemoriesQuery, MemoryListSchema, MemorySchema } from "../src/wire/memories.js";
import { SearchResultSchema } from "../src/wire/search.js";
import { ServiceKeyListSchema } from "../src/wire/service-keys.js";
import { VariantListSchema, VariantMemorySchema, VariantSearchResultSchema } from "../src/wire/variant.js";
import { internalError, type MemoryService, UnreachableError } from "./port.js";

type Query = Record<string, unknown>;

/**
 * The tools' port over HTTP to a running server (`MNEMO_URL`), with the caller's credential.
 * Every call sends its own request id, so a 5xx answer names one the operator can find in the
 * server's log; error envelopes become `CoreError`s again.
 */
export function remoteService(options: {
  baseUrl: string;
  headers: Record<string, string>;
  /** How long a call may take before it is given up; default 60 s. */
  timeoutMs?: number;
  /**
   * The same for an ingest with `wait`, which the server holds up to its MNEMO_WAIT_SECONDS (up to
   * 10 minutes; this side cannot know it): default the longest window a server takes plus `timeoutMs`.
   */
  waitTimeoutMs?: number;
  /** The claim naming a JWT's user (MNEMO_JWT_USER_CLAIM, as the server reads it); default `sub`. */
  userClaim?: string;
}): MemoryService & { credentialUser(key: string): Promise<string | null> } {
  const base = options.baseUrl.replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 60_000;
  const waitTimeoutMs = options.waitTimeoutMs ?? MAX_WAIT_SECONDS * 1000 + timeoutMs;
  // undici's own limits (300 s for the answer's headers) would cut a wait short of the bound; the
  // time-outs above are the bounds, one per call. Made on the first call: nothing at import.
  let dispatcher: Agent | undefined;
  /**
   * One REST call. A 2xx body is read through its wire schema (`answer`): a field a newer server
   * adds is dropped rather than breaking the tool's output schema.
   */
  const call = async <S extends z.ZodType>(
    method: string,
    path: string,
    answer: S | null,
    opts: { query?: Query; body?: unknown; timeoutMs?: number; accepts?: boolean } = {},
  ): Promise<z.output<S>> => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined && v !== null) qs.set(k, String(v));
    }
    const requestId = `mcp-${randomUUID()}`;
    const headers: Record<string, string> = {
      ...options.headers,
      accept: "application/json",
      "x-request-id": requestId,
    };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    let res: Awaited<ReturnType<typeof fetch>>;
    const limit = opts.timeoutMs ?? timeoutMs;
    dispatcher ??= new Agent({ headersTimeout: 0, bodyTimeout: 0 });
    try {
      res = await fetch(`${base}${path}${qs.size ? `?${qs}` : ""}`, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: AbortSignal.timeout(limit),
        dispatcher,
      });
    } catch (err) {
      const late = (err as Error).name === "TimeoutError";
      // Sent and not answered: an ingest may have been accepted (its job runs), so saying the
      // service was out of reach (and a retry ingesting twice) would be wrong.
      if (late && opts.accepts) {
        throw new CoreError(
          "service_unavailable",
          `The Mnemo service did not answer within ${Math.round(limit / 1000)} s; the ingest may have been ` +
            "accepted and still run: check list_memories (or GET /v1/memories/jobs) before sending it again.",
          { cause: err },
        );
      }
      const why = late ? `no answer within ${Math.round(limit / 1000)} s` : (err as Error).message;
      throw new UnreachableError(`Could not reach the Mnemo service: ${why}`, { cause: err });
    }
    // An empty or non-JSON body reads as no body.
    const parsed: unknown = await res.json().catch(() => undefined);
    if (res.ok) {
      if (!answer) return undefined as z.output<S>;
      const checked = answer.safeParse(parsed);
      if (checked.success) return checked.data;
      throw new Error(`Unexpected answer from ${method} ${path}: ${checked.error.message}`);
    }
    throw fromEnvelope(res, parsed, res.headers.get("x-request-id") ?? requestId);
  };

  const memory = (id: string) => segment(id, memoryNotFound);
  const job = (id: string) => segment(id, jobNotFound);
  const group = (id: string) => segment(id, groupNotFound);
  return {
    ingest: (request, { wait }) =>
      call("POST", "/v1/memories", IngestJobSchema, {
        body: request,
        query: { wait: wait || undefined },
        accepts: true,
        ...(wait ? { timeoutMs: waitTimeoutMs } : {}),
      }),
    getIngestJob: async (id) => call("GET", `/v1/memories/jobs/${job(id)}`, IngestJobSchema),
    search: (request) => call("POST", "/v1/memories/search", SearchResultSchema, { body: request }),
    trigger: (request) => call("POST", "/v1/memories/trigger", SearchResultSchema, { body: request }),
    // Checked here with the schema the server and the in-process port check it with: a query
    // string cannot carry a lone surrogate (URLSearchParams sent U+FFFD, another user's id, or a
    // cursor the server then read as cursor_mismatch), so such a value is refused as they refuse it.
    listMemories: async (query) => {
      parseWire(ListMemoriesQuery, query, "query");
      return call("GET", "/v1/memories", MemoryListSchema, { query: { ...query } });
    },
    getMemory: async (id) => call("GET", `/v1/memories/${memory(id)}`, MemorySchema),
    deleteMemory: async (id) => {
      await call("DELETE", `/v1/memories/${memory(id)}`, null);
    },
    memoryRevisions: async (id) => call("GET", `/v1/memories/${memory(id)}/revisions`, MemoryListSchema),
    tagMemory: async (id, patch) =>
      call("PATCH", `/v1/memories/${memory(id)}`, MemorySchema, { body: patch }),
    searchFiltered: (request) =>
      call("POST", "/v1/memories/search/", VariantSearchResultSchema, { body: request }),
    listFiltered: (request) => call("POST", "/v1/memories/", VariantListSchema, { body: request }),
    updateMemory: async (id, patch) =>
      call("PATCH", `/v1/memories/${memory(id)}/`, VariantMemorySchema, { body: patch }),
    listGroups: ({ includeArchived }) =>
      call("GET", "/v1/groups", GroupListSchema, {
        query: { include_archived: includeArchived || undefined },
      }),
    createGroup: (request) => call("POST", "/v1/groups", GroupSchema, { body: request }),
    updateGroup: async (id, patch) => call("PATCH", `/v1/groups/${group(id)}`, GroupSchema, { body: patch }),
    archiveGroup: async (id) => call("DELETE", `/v1/groups/${group(id)}`, GroupSchema),
    /**
     * The user `key` (the credential sent) is confined to, null for an organisation-wide key. A
     * JWT names its user itself (the claim the server reads; the server verifies the token on
     * every call). A key's own entry in the key list (matched by prefix and last four) names it:
     * a key confined to a user lists only that user's keys, so every match names the same user;
     * an organisation-wide key matches itself (no user).
     */
    credentialUser: async (key) => {
      const tokenUser = unverifiedUser(key, options.userClaim ?? "sub");
      if (tokenUser !== null) return tokenUser;
      const keys = await call("GET", "/v1/auth/service-keys", ServiceKeyListSchema);
      const users = new Set(
        keys.data.filter((k) => key.startsWith(k.prefix) && key.endsWith(k.last_four)).map((k) => k.user_id),
      );
      return users.size === 1 ? ([...users][0] ?? null) : null;
    },
  };
}

/**
 * An id as one path segment. `encodeURIComponent` leaves `.` and `..` as they are, and the URL
 * parser resolves them as dot segments (`/v1/memories/..` is `/v1`), so the call would reach
 * another route; their percent-encoded forms are dot segments too, so escaping them is no way out.
 * No stored id is one, so they are answered here as the unknown id they are, never sent; nor is
 * one longer than any id the service makes (a 100,000-character id made the URL too long for the
 * server, answered `invalid_request` where in-process and HTTP answer not found), nor one the
 * database cannot hold (a NUL, refused by the server as a URL character; a lone surrogate, which
 * `encodeURIComponent` throws on, answered as an internal error).
 */
const MAX_ID_LENGTH = 256;
function segment(id: string, notFound: (id: string) => CoreError): string {
  if (id === "." || id === ".." || id.length > MAX_ID_LENGTH || !isStorable(id)) throw notFound(id);
  return encodeURIComponent(id);
}

const isCode = (code: unknown): code is ErrorCode => typeof code === "string" && code in ERROR_STATUS;

/** A REST error answer as the `CoreError` the server raised (field failures as `invalid_request`). */
function fromEnvelope(
  res: { status: number; headers: { get(name: string): string | null } },
  body: unknown,
  requestId: string,
): CoreError {
  const fallback: ErrorCode =
    res.status >= 500 ? "server_error" : res.status === 404 ? "not_found" : "invalid_request";
  if (res.status >= 500) {
    const code = (body as { detail?: { code?: unknown } } | undefined)?.detail?.code;
    return internalError(isCode(code) ? code : fallback, requestId);
  }
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (Array.isArray(detail)) {
    const issues: FieldIssue[] = detail.map((d) => ({
      loc: Array.isArray(d?.loc) ? d.loc.map(String) : [],
      msg: String(d?.msg ?? "invalid"),
      type: String(d?.type ?? "invalid"),
    }));
    return new CoreError("invalid_request", issuesMessage(issues));
  }
  // `detail` (the spec's envelope) first; the hosted `error` object when a server sends only that.
  const coded = [detail, (body as { error?: unknown } | undefined)?.error].find(
    (d) => d && typeof d === "object" && "code" in d,
  );
  if (coded) {
    const d = coded as { code: unknown; message?: unknown; field?: unknown };
    const retryAfter = res.headers.get("retry-after");
    return new CoreError(isCode(d.code) ? d.code : fallback, String(d.message ?? ""), {
      ...(retryAfter ? { headers: { "Retry-After": retryAfter } } : {}),
      ...(typeof d.field === "string" ? { field: d.field } : {}),
    });
  }
  return new CoreError(fallback, `HTTP ${res.status}`);
}
