import { randomBytes, timingSafeEqual } from "node:crypto";
import { authenticate } from "../auth/authenticate.js";
import { looksLikeJwt } from "../auth/jwt.js";
import { type Deps, type Principal, requestDb } from "../context.js";
import { deleteDeadSessions, deleteSession, findLiveSession, insertSession } from "../db/console-sessions.js";
import { CoreError } from "../errors.js";
import { sha256Hex } from "../ids.js";
import { seal, unseal } from "../seal.js";

/**
 * Console sessions. Signing in exchanges an API key (or service key) for a session row and a
 * sealed cookie value naming it; the key itself is never kept, in the browser or in the row. Each
 * request opens the cookie and reads the row joined to its key, so a revoked key, an expired
 * session or a signed-out one is refused on the very next request, on every process.
 */
const PURPOSE = "mnemo:console-session";

interface SealedSession {
  v: 1;
  t: string;
}

export interface OpenSession {
  principal: Principal;
  tier: string;
  csrf: string;
  expiresAt: Date;
}

export const sessionExpired = () =>
  new CoreError("unauthorized", "Your console session has ended (signed out, expired or its key revoked).");

export async function signIn(
  deps: Deps,
  key: string,
): Promise<{ cookie: string; csrf: string; expiresAt: Date; orgId: string }> {
  const trimmed = key.trim();
  if (!trimmed) throw new CoreError("unauthorized", "Enter an API key or a service key.");
  // A session holds a key, which a token is not (whether or not tokens are configured here).
  if (looksLikeJwt(trimmed)) {
    throw new CoreError(
      "unauthorized",
      "Sign in with an API key or a service key, not a token: a token of your identity provider mints a service key with POST /v1/auth/generate-service-key.",
    );
  }
  const who = await authenticate(requestDb(deps), { apiKey: trimmed });
  if (who.via !== "api_key" || !who.keyId) {
    throw new CoreError("unauthorized", "Sign in with an API key or a service key.");
  }
  // Housekeeping on the rare write path keeps the table to live sessions without a scheduled job.
  await deleteDeadSessions(requestDb(deps));
  const token = randomBytes(32).toString("base64url");
  const csrf = randomBytes(24).toString("base64url");
  const expiresAt = await insertSession(requestDb(deps), {
    tokenHash: sha256Hex(token),
    orgId: who.orgId,
    keyId: who.keyId,
    csrf,
    ttlSeconds: deps.config.MNEMO_CONSOLE_SESSION_HOURS * 3600,
  });
  const payload: SealedSession = { v: 1, t: token };
  return { cookie: seal(deps.secret, PURPOSE, payload), csrf, expiresAt, orgId: who.orgId };
}

const tokenOf = (deps: Deps, cookie: string | undefined): string | undefined => {
  if (!cookie) return undefined;
  const payload = unseal(deps.secret, PURPOSE, cookie) as SealedSession | undefined;
  return payload?.v === 1 && typeof payload.t === "string" ? payload.t : undefined;
};

/** The live session named by the cookie; `unauthorized` for anything else. */
export async function openSession(deps: Deps, cookie: string | undefined): Promise<OpenSession> {
  const token = tokenOf(deps, cookie);
  if (!token) throw sessionExpired();
  const row = await findLiveSession(requestDb(deps), sha256Hex(token));
  if (!row) throw sessionExpired();
  return {
    principal: { orgId: row.org_id, keyId: row.key_id, userId: row.user_id, via: "api_key" },
    tier: row.tier,
    csrf: row.csrf,
    expiresAt: row.expires_at,
  };
}

export async function signOut(deps: Deps, cookie: string | undefined): Promise<void> {
  const token = tokenOf(deps, cookie);
  if (token) await deleteSession(requestDb(deps), sha256Hex(token));
}

/** Constant-time comparison of a submitted form token with the session's. */
export function csrfMatches(expected: string, submitted: string | undefined): boolean {
  if (!submitted) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
