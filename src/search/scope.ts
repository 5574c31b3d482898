import { readFilterUsers, readUserId } from "../auth/user-scope.js";
import type { Config } from "../config.js";
import type { Principal } from "../context.js";
import type { ResolvedScope } from "../db/scope.js";
import { CoreError } from "../errors.js";
import { checkGroupIdCount, type FilterNode, pinsGroups, pinsScope } from "../memories/filters.js";

/** The four scope axes of search and trigger. */
export interface Scope {
  user_id?: string | null | undefined;
  agent_id?: string | null | undefined;
  app_id?: string | null | undefined;
  group_ids?: string[] | null | undefined;
}

/** What resolving a scope needs from the context (a `Ctx` has it): the caller and the read cap. */
export interface ScopeCtx {
  principal: Principal;
  deps: { config: Pick<Config, "MNEMO_MAX_GROUP_IDS_PER_QUERY"> };
}

/** An axis as given, or null when omitted, null or empty: an empty id names no one (as on ingest). */
const axis = (v: string | null | undefined): string | null => (v ? v : null);

/**
 * Every supplied axis is ANDed, an omitted (null) axis is unconstrained, and at least one axis is
 * required: an organisation-wide read is rejected. An empty id, like an empty `group_ids` list,
 * narrows nothing, so it does not count as an axis (so `user_id: ""` or `group_ids: [""]` alone is
 * 422 missing_scope); more than MNEMO_MAX_GROUP_IDS_PER_QUERY group ids is 422
 * `invalid_request` (a filter's own group ids were held to the same cap when it was parsed). A
 * credential confined to a user reads that user's rows (its user is the default `user_id`, another
 * one, there or in the filter, is 403) or, with `group_ids` and no user, the group's rows.
 */
export function resolveScope(ctx: ScopeCtx, scope: Scope, filter?: FilterNode): ResolvedScope {
  const { principal } = ctx;
  const named = [...new Set(scope.group_ids?.filter((id) => id !== ""))];
  const groupIds = named.length ? named : null;
  checkGroupIdCount(groupIds?.length ?? 0, ctx.deps.config.MNEMO_MAX_GROUP_IDS_PER_QUERY, "group_ids");
  readFilterUsers(principal, filter);
  const resolved: ResolvedScope = {
    orgId: principal.orgId,
    // Groups named (`group_ids`, or a filter every row of which is in named groups) are read
    // across users, also by a credential confined to one (src/auth/user-scope.ts).
    userId:
      readUserId(principal, axis(scope.user_id), {
        groupRead: groupIds !== null || (filter !== undefined && pinsGroups(filter)),
      }) ?? null,
    agentId: axis(scope.agent_id),
    appId: axis(scope.app_id),
    groupIds,
    filter,
  };
  const pinned = filter !== undefined && pinsScope(filter);
  if (
    resolved.userId === null &&
    resolved.agentId === null &&
    resolved.appId === null &&
    !groupIds &&
    !pinned
  ) {
    throw new CoreError(
      "missing_scope",
      "Supply at least one of user_id, agent_id, app_id or group_ids (in filters: an equality or $in on one of them); " +
        "an organisation-wide read is not allowed.",
    );
  }
  return resolved;
}
