import type { Ctx } from "../context.js";
import { revokeApiKey } from "../db/api-keys.js";
import { CoreError } from "../errors.js";

/**
 * Revokes a key of the caller's organisation. Keys are looked up on every request, so the key is
 * refused on its very next request on every process. Repeating the revocation is harmless.
 */
export async function revokeServiceKey({ ctx, input }: { ctx: Ctx; input: { id: string } }): Promise<void> {
  const row = await revokeApiKey(ctx.db, input.id, ctx.principal.orgId);
  if (!row) throw new CoreError("key_not_found", `No API key ${input.id} in this organisation.`);
  ctx.log.info({ keyId: row.id }, "API key revoked");
}
