import { createApiKey, keyView } from "../auth/keys.js";
import { listApiKeys, revokeApiKey } from "../db/api-keys.js";
import type { Db } from "../db/db.js";
import { getOrg, insertOrg, setOrgIdpLink } from "../db/orgs.js";
import { CoreError } from "../errors.js";
import { newOrgId } from "../ids.js";

/** Operator verbs behind `mnemo admin`. They act across organisations, so no request ctx. */

/** A name or tier as given, trimmed; a blank one is refused (`create-org --name "   "` made one). */
function label(value: string, what: string): string {
  const v = value.trim();
  if (!v) throw new CoreError("invalid_request", `${what} must not be blank.`);
  return v;
}

export async function createOrg(db: Db, input: { name: string; tier?: string | undefined }) {
  const name = label(input.name, "The organisation's name");
  const tier = input.tier === undefined ? undefined : label(input.tier, "The tier");
  return db.tx(async (tx) => {
    const org = await insertOrg(tx, { id: newOrgId(), name, ...(tier ? { tier } : {}) });
    const { key, row } = await createApiKey(tx, { orgId: org.id, name: "admin" });
    return { org_id: org.id, name: org.name, api_key: key, key_id: row.id };
  });
}

export async function createKey(
  db: Db,
  input: { orgId: string; name?: string | undefined; userId?: string | undefined },
) {
  // A blank user id is no user (the API refuses it), not "every user": refused, never dropped.
  if (input.userId !== undefined && !input.userId.trim())
    throw new CoreError("invalid_request", "The user id must not be blank.");
  if (!(await getOrg(db, input.orgId)))
    throw new CoreError("not_found", `Organisation ${input.orgId} does not exist.`);
  const { key, row } = await createApiKey(db, {
    orgId: input.orgId,
    name: input.name === undefined ? null : label(input.name, "The key's name"),
    userId: input.userId ?? null,
  });
  return { org_id: row.org_id, key_id: row.id, api_key: key };
}

export async function listKeys(db: Db, orgId: string) {
  if (!(await getOrg(db, orgId))) throw new CoreError("not_found", `Organisation ${orgId} does not exist.`);
  return (await listApiKeys(db, orgId)).map(keyView);
}

export async function revokeKey(db: Db, keyId: string) {
  const row = await revokeApiKey(db, keyId);
  if (!row) throw new CoreError("key_not_found", `API key ${keyId} does not exist.`);
  return keyView(row);
}

/**
 * Lets identity-provider tokens naming this organisation enter it (`linked` true), or stops them
 * (`linked` false). Organisations created from tokens need no link; unlinking one has no effect.
 */
export async function linkOrg(db: Db, input: { orgId: string; linked: boolean }) {
  const org = await setOrgIdpLink(db, input.orgId, input.linked);
  if (!org) throw new CoreError("not_found", `Organisation ${input.orgId} does not exist.`);
  return {
    org_id: org.id,
    name: org.name,
    origin: org.origin,
    idp_linked_at: org.idp_linked_at?.toISOString() ?? null,
    tokens_may_enter: org.origin === "identity_provider" || org.idp_linked_at !== null,
  };
}
