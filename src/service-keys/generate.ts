import { createApiKey } from "../auth/keys.js";
import type { Ctx } from "../context.js";
import { CoreError } from "../errors.js";
import type { NewServiceKey } from "../wire/service-keys.js";

/**
 * Mints a service key for the signed-in user of an identity-provider JWT. Only a JWT may mint: an
 * API key minting keys would let a leaked key outlive its own revocation.
 */
export async function generateServiceKey({
  ctx,
  input,
}: {
  ctx: Ctx;
  input: { name?: string | undefined };
}): Promise<NewServiceKey> {
  const p = ctx.principal;
  if (p.via !== "jwt") {
    throw new CoreError(
      "unauthorized",
      "Generating a service key needs an identity-provider JWT in Authorization: Bearer; API keys cannot mint keys.",
    );
  }
  const { row, key } = await createApiKey(ctx.db, {
    orgId: p.orgId,
    userId: p.userId,
    name: input.name ?? null,
    kind: "service",
  });
  ctx.log.info({ keyId: row.id, userId: p.userId }, "service key generated");
  return {
    object: "service_key" as const,
    id: row.id,
    key,
    prefix: row.prefix,
    last_four: row.last_four,
    org_id: row.org_id,
    user_id: row.user_id,
    name: row.name,
    created_at: row.created_at.toISOString(),
  };
}
