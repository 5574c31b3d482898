/**
 * The closed set of error codes the core raises. Each surface maps them in exactly one place:
 * rest/errors.ts to the `{detail: {code, message}, error: {type, code, ...}}` envelopes, mcp/ to an `isError` tool result,
 * jobs/ to retry or fail.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_messages: 400,
  unauthorized: 401,
  org_mismatch: 403,
  user_mismatch: 403,
  org_not_linked: 403,
  forbidden: 403,
  not_found: 404,
  memory_not_found: 404,
  job_not_found: 404,
  group_not_found: 404,
  webhook_not_found: 404,
  key_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_request: 422,
  too_many_messages: 422,
  empty_patch: 422,
  contradictory_group_ids: 422,
  invalid_group_ids: 422,
  cursor_mismatch: 422,
  groups_quota_exceeded: 422,
  missing_scope: 422,
  missing_trigger: 422,
  invalid_webhook_url: 422,
  immutable_field: 422,
  reserved_field: 422,
  empty_text_field: 422,
  invalid_filters: 422,
  invalid_metadata: 422,
  // Field errors with their own code (the README lists when each fires).
  invalid_limit: 422,
  invalid_order: 422,
  unsupported_include_option: 422,
  invalid_mode: 422,
  invalid_memory_type: 422,
  missing_user_id: 422,
  missing_conv_id: 422,
  empty_query: 422,
  query_too_long: 422,
  empty_name: 422,
  name_too_long: 422,
  empty_prompt: 422,
  prompt_too_long: 422,
  namespace_too_long: 422,
  task_too_long: 422,
  invalid_month: 422,
  rate_limited: 429,
  daily_cap_exceeded: 429,
  monthly_quota_exceeded: 429,
  server_error: 500,
  patch_failed: 500,
  delete_failed: 500,
  search_failed: 500,
  trigger_failed: 500,
  ingest_failed: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Where in a request a field is: its keys and indices, each whole (a key may hold a dot: "a.b"). */
export type FieldPath = readonly (string | number)[];

/** A path as the `field` of an error: `include[1]`, `filters.user_id`, `metadata.a.b`. */
export const fieldPath = (path: readonly PropertyKey[]) =>
  path.map((k, i) => (typeof k === "number" ? `[${k}]` : `${i ? "." : ""}${String(k)}`)).join("");

export class CoreError extends Error {
  override name = "CoreError";
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (Retry-After on 429, for instance). */
  readonly headers: Record<string, string> | undefined;
  /** The request field a field error is about (`limit`, `body.user_id`...); REST puts it in `detail.field`. */
  readonly field: string | undefined;
  /**
   * The same field as path segments, when given as such: the dotted `field` cannot tell the key
   * `a.b` from `b` inside `a`, and REST's `loc` keeps each segment whole.
   */
  readonly path: FieldPath | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string>; field?: string | FieldPath },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options?.headers;
    const field = options?.field;
    this.field = typeof field === "string" || field === undefined ? field : fieldPath(field);
    this.path = typeof field === "string" ? undefined : field;
  }
}

export const isCoreError = (e: unknown): e is CoreError => e instanceof CoreError;

/**
 * An id asked for, quoted for a message: the first 64 characters of a longer one, so a not-found
 * answer to a 100,000-character id (an MCP argument has no URL's length limit) does not echo it.
 */
export function quotedId(id: string): string {
  return JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}...` : id);
}

/** node-postgres's failure of a statement that did not answer within its `query_timeout`. */
export const isQueryTimeout = (err: unknown) => (err as Error | undefined)?.message === "Query read timeout";

/** How connecting to the database can fail when it is away (the `code` of a `connect` error). */
const CONNECT_FAILURES = new Set([
  "ECONNREFUSED",
  "ENOENT",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
/** How an established connection to the database can break (the `code` of a `read` or `write` error). */
const LOST_SOCKET = new Set(["ECONNRESET", "EPIPE", "ETIMEDOUT"]);
/** node-postgres's messages for a connection it could not get or lost. */
const LOST_CONNECTION =
  /^(timeout exceeded when trying to connect|Query read timeout|Connection terminated|Client has encountered a connection error|Cannot use a pool after calling end on the pool)/;

/**
 * Whether a failure (or one of its causes) is the database being out of reach rather than the
 * request going wrong: no connection within the pool's time-out, a refused or lost connection, a
 * server shutting down or starting (PostgreSQL classes 08 and 57P), a connection reset under a
 * query, or out of a resource (class 53: a full disk, memory, connections). The answer is then 503 with Retry-After, not 500: the
 * request may simply be sent again once the database has room.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  // A refusal of the request itself (a 4xx) stays what it is, whatever it was caused by.
  if (err instanceof CoreError && err.status < 500) return false;
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 8; depth++) {
    const { code, syscall, message, name } = e as {
      code?: unknown;
      syscall?: unknown;
      message?: unknown;
      name?: unknown;
    };
    // A language model's endpoint is not the database, whatever its sockets did.
    if (name === "ProviderError") return false;
    if (typeof code === "string" && /^(08...|57P0[123]|53...)$/.test(code)) return true;
    // The socket of the database server (or of the embedded database's owner) is not there, or
    // not reachable, or reset the connection as it was made (a server stopping: `connect
    // ECONNRESET` took a search to a 500 in a bench:soak run that stopped PostgreSQL).
    if (syscall === "connect" && typeof code === "string" && CONNECT_FAILURES.has(code)) return true;
    // A connection reset or broken under a query: the server restarted or ended it, or the network.
    if ((syscall === "read" || syscall === "write") && typeof code === "string" && LOST_SOCKET.has(code))
      return true;
    // node-postgres: no pooled connection in time; no answer to a statement within the request
    // path's MNEMO_DB_QUERY_TIMEOUT_MS (a server that stopped answering with its connections
    // open: paused, partitioned); a connection dropped under a query, or before
    // the next one on a client that lost it; the pool closed by a stop while work still ran.
    if (typeof message === "string" && LOST_CONNECTION.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Whether a failure (or one of its causes) is the server refusing a new connection because it has
 * as many as it allows (53300: `max_connections`, or a database's or role's connection limit):
 * the database is there, it has no room.
 */
export function isTooManyClients(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 8; depth++) {
    if ((e as { code?: unknown }).code === "53300") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** What /readyz and the request path's warning say of a refusal for too many connections. */
export const TOO_MANY_CLIENTS = "database refuses connections: too many clients (max_connections)";

/**
 * Whether a failure (or one of its causes) is a lock conflict PostgreSQL ended by rolling one
 * transaction back (a deadlock, 40P01; a serialization failure, 40001): nobody's fault, and the
 * same work run again succeeds.
 */
export function isLockConflict(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "40P01" || code === "40001") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
