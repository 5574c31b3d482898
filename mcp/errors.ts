import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CoreError, isDatabaseUnavailable, quotedId } from "../src/errors.js";
import { providerAdvice, providerFailure } from "../src/providers/openai.js";
import { UnreachableError } from "./port.js";
import type { DefaultScope } from "./scope.js";

/**
 * The one place where failures become MCP tool results. A core error keeps its code and message
 * (they already name the id or the missing field) plus a hint on what to do next; a 5xx says
 * only the request id (the port made its message so), never internals; anything unexpected is
 * logged, never shown.
 */
export function toolError(
  err: unknown,
  log?: { error: (o: object, m: string) => void },
  args?: Record<string, unknown>,
  scope?: DefaultScope,
): CallToolResult {
  // The service out of reach (remote stdio) first: its refused connection would also read as a
  // database's below, and send the operator to the database instead of MNEMO_URL.
  if (err instanceof UnreachableError) {
    return result("service_unavailable", `${err.message}. Check that the server is running and MNEMO_URL.`);
  }
  // As over REST (rest/errors.ts): the database out of reach is worth a retry, not an internal error.
  if (isDatabaseUnavailable(err)) {
    return result("service_unavailable", "The database is unavailable; retry shortly.");
  }
  const model = providerFailure(err);
  if (model) return result("service_unavailable", `${model.message} ${providerAdvice(model)}`);
  if (err instanceof CoreError) {
    if (err.status >= 500) return result(err.code, err.message);
    const retryAfter = Number(err.headers?.["Retry-After"]);
    const hint = retryAfter > 0 ? `Retry after ${retryAfter} s.` : hintFor(err.code, scope);
    return result(err.code, `${namingTheId(err, args)}${hint ? ` ${hint}` : ""}`);
  }
  if (err instanceof ToolFailure) return result(err.code, err.message);
  log?.error({ err }, "mcp tool failed");
  return result("server_error", "Internal error in the MCP tool; the server log has the details.");
}

/** A refusal decided by the tool itself (a default it cannot fill), in the same code vocabulary. */
export class ToolFailure extends Error {
  override name = "ToolFailure";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function result(code: string, message: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: `Error ${code}: ${message}` }],
  };
}

const HINTS: Record<string, string> = {
  unauthorized: "Send a valid API key (x-api-key or Authorization: Bearer; MNEMO_API_KEY for stdio).",
  org_mismatch: "Drop X-Org-Id or set it to the key's organisation.",
  user_mismatch:
    "This key belongs to one user: omit user_id (it defaults to the key's user) or use an organisation-wide key.",
  forbidden: "Use an organisation-wide API key (made by the operator) for organisation settings.",
  org_not_linked:
    "Ask the operator to run `npm run --silent admin -- link-org --org <id>`, or use an API key.",
  missing_scope:
    "Pass user_id, agent_id, app_id or group_ids, or pin a default (MNEMO_DEFAULT_USER_ID, or the X-Mnemo-User-Id header on /mcp).",
  missing_trigger: "Pass `tool` (with optional `args`/`output`) or `entities`.",
  memory_not_found: "Use search_memory or list_memories to find a current id.",
  job_not_found: "Jobs are kept 24 hours after they finish; the memories they wrote remain (list_memories).",
  group_not_found: "Use list_groups (include_archived: true) to see the organisation's groups.",
  invalid_group_ids: "Only active groups can be added; see list_groups, or un-archive with update_group.",
  cursor_mismatch: "Reuse next_cursor only with the same order; start again without a cursor.",
  groups_quota_exceeded: "Archive a group you no longer need (archive_group) first.",
  rate_limited: "Wait a little and retry.",
  daily_cap_exceeded: "The key's daily cap is spent; retry tomorrow or use another key.",
  monthly_quota_exceeded:
    "The organisation's monthly quota is spent (see GET /v1/usage); it resets on the 1st (UTC).",
  invalid_messages: "Send at least one message with non-blank content (or `text`).",
  too_many_messages: "Split the conversation into several add_memory calls.",
};

/**
 * What to do next. With a default scope axis pinned, a missing scope means the call named an axis
 * of its own (in its arguments or filters), so the default did not apply: "pin a default" would
 * send the agent to what it already has.
 */
function hintFor(code: string, scope: DefaultScope | undefined): string | undefined {
  if (code === "missing_scope" && (scope?.user_id || scope?.agent_id || scope?.app_id)) {
    return (
      "The pinned default applies only when neither the call nor its filters name a scope axis: pass " +
      "user_id, agent_id, app_id or group_ids (in filters: an equality or $in on one of them)."
    );
  }
  return HINTS[code];
}

const ID_ARGS = {
  memory_not_found: "memory_id",
  job_not_found: "job_id",
  group_not_found: "group_id",
} as const;

/** A not-found message always says which id was not found, whatever the route's wording. */
function namingTheId(err: CoreError, args?: Record<string, unknown>): string {
  const field = ID_ARGS[err.code as keyof typeof ID_ARGS];
  const id = field ? args?.[field] : undefined;
  if (typeof id !== "string" || err.message.includes(quotedId(id))) return err.message;
  return `${err.message.replace(/\.?$/, ".")} (${field} ${quotedId(id)})`;
}
