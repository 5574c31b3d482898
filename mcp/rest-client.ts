/**
 * A small typed client over the REST contract (`/v1`). Every MCP tool goes through it, so MCP and
 * REST run the same routes, the same verbs, the same auth and the same rate limits. The transport
 * is a `fetch`-like function: in-process it is the Hono app's own `app.request`, remotely it is
 * the global `fetch` against `MNEMO_URL`.
 */

export type FetchLike = (path: string, init: RequestInit) => Promise<Response>;

/** A non-2xx answer, kept in the REST error vocabulary so the MCP mapper can speak it. */
export class RestError extends Error {
  override name = "RestError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
    /** 422 field validation issues, when the answer had them. */
    readonly issues: { loc: string[]; msg: string; type: string }[] = [],
    /** Seconds, from Retry-After on a 429. */
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

/** The service could not be reached at all (remote mode: server down, DNS, time-out). */
export class UnreachableError extends Error {
  override name = "UnreachableError";
}

type Json = Record<string, unknown>;
type Query = Record<string, string | number | boolean | null | undefined>;

export interface RestClientOptions {
  fetch: FetchLike;
  /** Credential and other headers sent on every call (x-api-key, authorization, x-org-id...). */
  headers: Record<string, string>;
}

export function createRestClient(options: RestClientOptions) {
  const call = async <T>(
    method: string,
    path: string,
    opts: { query?: Query; body?: unknown; accept?: number[] } = {},
  ): Promise<{ status: number; body: T }> => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v !== undefined && v !== null) qs.set(k, String(v));
    }
    const url = qs.size ? `${path}?${qs}` : path;
    const headers: Record<string, string> = { ...options.headers, accept: "application/json" };
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    let res: Response;
    try {
      res = await options.fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    } catch (err) {
      throw new UnreachableError(`Could not reach the Mnemo service: ${(err as Error).message}`, {
        cause: err,
      });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.ok) return { status: res.status, body: parsed as T };
    throw toRestError(res, parsed);
  };

  const enc = encodeURIComponent;
  return {
    ingest: (body: Json, wait: boolean) =>
      call<Json>("POST", "/v1/memories", { body, query: { wait: wait || undefined } }),
    getJob: async (id: string) => (await call<Json>("GET", `/v1/memories/jobs/${enc(id)}`)).body,
    search: async (body: Json) => (await call<Json>("POST", "/v1/memories/search", { body })).body,
    trigger: async (body: Json) => (await call<Json>("POST", "/v1/memories/trigger", { body })).body,
    listMemories: async (query: Query) => (await call<Json>("GET", "/v1/memories", { query })).body,
    getMemory: async (id: string) => (await call<Json>("GET", `/v1/memories/${enc(id)}`)).body,
    deleteMemory: async (id: string) => {
      await call<undefined>("DELETE", `/v1/memories/${enc(id)}`);
    },
    revisions: async (id: string) => (await call<Json>("GET", `/v1/memories/${enc(id)}/revisions`)).body,
    patchMemory: async (id: string, body: Json) =>
      (await call<Json>("PATCH", `/v1/memories/${enc(id)}`, { body })).body,
    listGroups: async (includeArchived: boolean) =>
      (await call<Json>("GET", "/v1/groups", { query: { include_archived: includeArchived || undefined } }))
        .body,
    createGroup: async (body: Json) => (await call<Json>("POST", "/v1/groups", { body })).body,
    updateGroup: async (id: string, body: Json) =>
      (await call<Json>("PATCH", `/v1/groups/${enc(id)}`, { body })).body,
    archiveGroup: async (id: string) => (await call<Json>("DELETE", `/v1/groups/${enc(id)}`)).body,
  };
}

export type RestClient = ReturnType<typeof createRestClient>;

function toRestError(res: Response, body: unknown): RestError {
  const requestId = res.headers.get("x-request-id");
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (Array.isArray(detail)) {
    const issues = detail.map((d) => ({
      loc: Array.isArray(d?.loc) ? d.loc.map(String) : [],
      msg: String(d?.msg ?? "invalid"),
      type: String(d?.type ?? "invalid"),
    }));
    const message = issues.map((i) => `${i.loc.join(".") || "input"}: ${i.msg}`).join("; ");
    return new RestError(res.status, "invalid_request", message, requestId, issues);
  }
  if (detail && typeof detail === "object" && "code" in detail) {
    const d = detail as { code: unknown; message?: unknown };
    const retry = Number(res.headers.get("retry-after"));
    return new RestError(
      res.status,
      String(d.code),
      String(d.message ?? ""),
      requestId,
      [],
      Number.isFinite(retry) && retry > 0 ? retry : null,
    );
  }
  const code = res.status >= 500 ? "server_error" : res.status === 404 ? "not_found" : "invalid_request";
  return new RestError(res.status, code, `HTTP ${res.status}`, requestId);
}
