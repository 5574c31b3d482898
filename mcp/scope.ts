import type { Config } from "../src/config.js";

/**
 * Who the agent is when a tool call does not say: pinned by configuration (stdio and /mcp) or by
 * per-request headers on /mcp, so an agent's config file can fix its identity once.
 */
export interface DefaultScope {
  user_id?: string;
  agent_id?: string;
  app_id?: string;
  namespace?: string;
}

/** Headers read on /mcp; each overrides the matching MNEMO_DEFAULT_* setting for that request. */
export const SCOPE_HEADERS = {
  user_id: "x-mnemo-user-id",
  agent_id: "x-mnemo-agent-id",
  app_id: "x-mnemo-app-id",
  namespace: "x-mnemo-namespace",
} as const;

export function scopeFromConfig(config: Config): DefaultScope {
  return clean({
    user_id: config.MNEMO_DEFAULT_USER_ID,
    agent_id: config.MNEMO_DEFAULT_AGENT_ID,
    app_id: config.MNEMO_DEFAULT_APP_ID,
    namespace: config.MNEMO_DEFAULT_NAMESPACE,
  });
}

/**
 * The user the credential belongs to first (a key confined to a user acts only as that user, so
 * no default, neither a server-wide one nor a config file's `X-Mnemo-User-Id: me`, may point it
 * at another: every call would be 403 `user_mismatch`), then headers, then configuration. A user
 * named in a tool call's arguments is still checked against the key.
 */
export function defaultScopeFor(
  config: Config,
  header: (name: string) => string | undefined,
  keyUserId: string | null,
): DefaultScope {
  const out: DefaultScope = scopeFromConfig(config);
  for (const [field, name] of Object.entries(SCOPE_HEADERS) as [keyof DefaultScope, string][]) {
    const raw = header(name);
    const v = raw === undefined ? undefined : headerUtf8(name, raw).trim();
    if (v) out[field] = v;
  }
  if (keyUserId) out.user_id = keyUserId;
  return out;
}

/** A header value that is not UTF-8 (X-Mnemo-User-Id and the others carry ids as UTF-8). */
export class HeaderNotUtf8 extends Error {
  override name = "HeaderNotUtf8";
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * An id sent in a header as UTF-8 bytes ("café"). HTTP gives header values as bytes, one
 * character each (Latin-1), so without this the id was stored as "cafÃ©": the user's memories
 * split across two ids without a word. Bytes that are not UTF-8 are refused (HeaderNotUtf8).
 */
export function headerUtf8(name: string, value: string): string {
  if (/^[\x00-\x7f]*$/.test(value)) return value;
  try {
    if (/[^\x00-\xff]/.test(value)) throw new TypeError("not bytes");
    return utf8.decode(Buffer.from(value, "latin1"));
  } catch {
    throw new HeaderNotUtf8(`The ${name} header is not UTF-8: send the id's UTF-8 bytes.`);
  }
}

function clean(s: Record<keyof DefaultScope, string | undefined>): DefaultScope {
  const out: DefaultScope = {};
  for (const [k, v] of Object.entries(s) as [keyof DefaultScope, string | undefined][]) if (v) out[k] = v;
  return out;
}
