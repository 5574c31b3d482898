/**
 * The closed set of error codes the core raises. Each surface maps them in exactly one place:
 * rest/errors.ts to the `{detail: {code, message}}` envelope, mcp/ to an `isError` tool result,
 * jobs/ to retry or fail.
 */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_messages: 400,
  unauthorized: 401,
  org_mismatch: 403,
  forbidden: 403,
  not_found: 404,
  memory_not_found: 404,
  job_not_found: 404,
  group_not_found: 404,
  webhook_not_found: 404,
  key_not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_request: 422,
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
  rate_limited: 429,
  daily_cap_exceeded: 429,
  server_error: 500,
  patch_failed: 500,
  delete_failed: 500,
  search_failed: 500,
  trigger_failed: 500,
  ingest_failed: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class CoreError extends Error {
  override name = "CoreError";
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (Retry-After on 429, for instance). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options?.headers;
  }
}

export const isCoreError = (e: unknown): e is CoreError => e instanceof CoreError;
