import { confinedUser } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { revokeApiKey } from "../db/api-keys.js";
import { CoreError, quotedId } from "../errors.js";

/**
 * Revokes a key of the caller's organisation. Keys are looked up on every request, so the key is
 * refused on its very next request on every process. Repeating the revocation is harmless. A
 * credential confined to a user revokes only that user's keys; another user's key reads as unknown.
 */
export async function revokeServiceKey({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<void> {
  const row = await revokeApiKey(ctx.db, input.id, ctx.principal.orgId, confinedUser(ctx.principal));
  if (!row) throw new CoreError("key_not_found", `No API key ${quotedId(input.id)} in this organisation.`);
  ctx.log.info({ keyId: row.id }, "API key revoked");
}
