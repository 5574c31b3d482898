import { type FilterNode, filterSql } from "./filter-sql.js";

/** A checked scope: only the axes actually supplied, and a checked filter tree (variant search). */
export interface ResolvedScope {
  orgId: string;
  userId: string | null;
  agentId: string | null;
  appId: string | null;
  groupIds: string[] | null;
  filter?: FilterNode | undefined;
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
  if (scope.filter) parts.push(filterSql(scope.filter, params, alias));
  return parts.join(" AND ");
}
