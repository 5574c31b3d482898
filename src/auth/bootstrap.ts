import { findKeyByHash } from "../db/api-keys.js";
import type { Db } from "../db/db.js";
import { lockBootstrap } from "../db/locks.js";
import { deleteOrgWithOnlyKey, insertOrgIfMissing } from "../db/orgs.js";
import { createApiKey, hashApiKey } from "./keys.js";

export const DEFAULT_ORG_ID = "org_default";

/**
 * The start that creates the `default` organisation (a first start, also on a database where an
 * admin command made another organisation first) creates its key too, returned so the caller can
 * print it once; one that finds it (a restart, or an import made it) creates none. `bootstrapKey`, when set, is created for the default organisation if
 * no key has its hash (scripted deployments, tests). A revoked one stays revoked (an operator
 * revoked it, perhaps because it leaked): `bootstrapKeyRevoked` says so, for a warning.
 */
export async function bootstrap(
  db: Db,
  bootstrapKey?: string,
): Promise<{ createdKey?: string; bootstrapKeyRevoked?: boolean }> {
  return db.tx(async (tx) => {
    // Serialise concurrent first starts so only one prints a key.
    await lockBootstrap(tx);
    // Not "no organisation at all": `admin create-org` before the first start left the `default`
    // organisation to this start, keyless, with no key printed.
    const created = await insertOrgIfMissing(tx, { id: DEFAULT_ORG_ID, name: "default" });
    if (bootstrapKey) {
      const existing = await findKeyByHash(tx, hashApiKey(bootstrapKey));
      if (!existing) await createApiKey(tx, { orgId: DEFAULT_ORG_ID, name: "bootstrap", key: bootstrapKey });
      return existing?.revoked_at ? { bootstrapKeyRevoked: true } : {};
    }
    if (!created) return {};
    const { key } = await createApiKey(tx, { orgId: DEFAULT_ORG_ID, name: "first-start" });
    return { createdKey: key };
  });
}

/**
 * Takes back what a first start's bootstrap created (the `default` organisation and its key) when
 * that start fails after it, before the key was printed (a port in use): otherwise the database is
 * no longer empty, the next start creates no key, and the one made here was never shown.
 */
export async function undoFirstStart(db: Db, createdKey: string): Promise<void> {
  await deleteOrgWithOnlyKey(db, DEFAULT_ORG_ID, hashApiKey(createdKey));
}
