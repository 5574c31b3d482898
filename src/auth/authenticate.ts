import type { Principal } from "../context.js";
import { findActiveKeyByHash, touchApiKey } from "../db/api-keys.js";
import type { Queryable } from "../db/db.js";
import { CoreError } from "../errors.js";
import { hashApiKey } from "./keys.js";

export interface CredentialHeaders {
  apiKey?: string | undefined;
  authorization?: string | undefined;
  orgId?: string | undefined;
}

/** Reads the credential from `x-api-key`, `Authorization: Bearer KEY` or `Authorization: Token KEY`. */
export function readCredential(h: CredentialHeaders): string {
  if (h.apiKey !== undefined) {
    const key = h.apiKey.trim();
    if (!key) throw new CoreError("unauthorized", "The x-api-key header is empty.");
    return key;
  }
  if (h.authorization !== undefined) {
    const m = /^(Bearer|Token)\s+(\S+)\s*$/i.exec(h.authorization.trim());
    if (!m)
      throw new CoreError(
        "unauthorized",
        "Malformed Authorization header: expected 'Bearer <key>' or 'Token <key>'.",
      );
    return m[2]!;
  }
  throw new CoreError(
    "unauthorized",
    "Missing credential: send an API key in x-api-key or Authorization: Bearer.",
  );
}

/**
 * Resolves a request's credential to its organisation. The organisation always comes from the
 * credential; `X-Org-Id`, when sent, must agree with it.
 */
export async function authenticate(db: Queryable, h: CredentialHeaders): Promise<Principal> {
  const credential = readCredential(h);
  const row = await findActiveKeyByHash(db, hashApiKey(credential));
  if (!row) throw new CoreError("unauthorized", "Invalid or revoked API key.");
  if (h.orgId !== undefined && h.orgId !== row.org_id) {
    throw new CoreError("org_mismatch", "X-Org-Id does not match the organisation of this API key.");
  }
  touchApiKey(db, row.id).catch(() => {});
  return { orgId: row.org_id, keyId: row.id, userId: row.user_id, via: "api_key" };
}
