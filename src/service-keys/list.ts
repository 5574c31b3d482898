import { maskKey } from "../auth/keys.js";
import { confinedUser } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { type ApiKeyRow, listActiveApiKeys } from "../db/api-keys.js";
import type { ServiceKey, ServiceKeyList } from "../wire/service-keys.js";

/** A key as listed: masked (prefix and last four), never the key or its hash. */
export function serviceKeyView(row: ApiKeyRow): ServiceKey {
  return {
    object: "service_key" as const,
    id: row.id,
    name: row.name,
    kind: row.kind,
    prefix: row.prefix,
    last_four: row.last_four,
    display: maskKey(row.prefix, row.last_four),
    org_id: row.org_id,
    user_id: row.user_id,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}

/**
 * The keys that still work: the whole organisation's (service keys and operator-made API keys) for
 * an organisation-wide credential, only the user's own for a credential confined to a user.
 */
export async function listServiceKeys({ ctx }: { ctx: Ctx; input?: undefined }): Promise<ServiceKeyList> {
  const rows = await listActiveApiKeys(ctx.db, ctx.principal.orgId, confinedUser(ctx.principal));
  return { object: "list" as const, data: rows.map(serviceKeyView), has_more: false, next_cursor: null };
}
