import { CoreError } from "../errors.js";

/** The four scope axes of search and trigger (4.8 rules 1-4). */
export interface Scope {
  user_id?: string | null | undefined;
  agent_id?: string | null | undefined;
  app_id?: string | null | undefined;
  group_ids?: string[] | null | undefined;
}

/** A checked scope: only the axes actually supplied. */
export interface ResolvedScope {
  orgId: string;
  userId: string | null;
  agentId: string | null;
  appId: string | null;
  groupIds: string[] | null;
}

/**
 * Every supplied axis is ANDed, an omitted (null) axis is unconstrained, and at least one axis is
 * required: an organisation-wide read is rejected. An empty `group_ids` list narrows nothing, so
 * it does not count as an axis.
 */
export function resolveScope(orgId: string, scope: Scope): ResolvedScope {
  const groupIds = scope.group_ids?.length ? [...new Set(scope.group_ids)] : null;
  const resolved: ResolvedScope = {
    orgId,
    userId: scope.user_id ?? null,
    agentId: scope.agent_id ?? null,
    appId: scope.app_id ?? null,
    groupIds,
  };
  if (resolved.userId === null && resolved.agentId === null && resolved.appId === null && !groupIds) {
    throw new CoreError(
      "missing_scope",
      "Supply at least one of user_id, agent_id, app_id or group_ids; an organisation-wide read is not allowed.",
    );
  }
  return resolved;
}

/**
 * The WHERE fragment for a scope, appending its values to `params` (so the caller's own `$n`
 * keep their numbers). `alias` is a constant table alias, never input.
 */
export function scopeSql(scope: ResolvedScope, params: unknown[], alias = "m"): string {
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const parts = [`${alias}.org_id = ${p(scope.orgId)}::text`];
  if (scope.userId !== null) parts.push(`${alias}.user_id = ${p(scope.userId)}::text`);
  if (scope.agentId !== null) parts.push(`${alias}.agent_id = ${p(scope.agentId)}::text`);
  if (scope.appId !== null) parts.push(`${alias}.app_id = ${p(scope.appId)}::text`);
  if (scope.groupIds) parts.push(`${alias}.group_ids && ${p(scope.groupIds)}::text[]`);
  return parts.join(" AND ");
}
