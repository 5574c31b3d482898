import type { Config } from "./config.js";
import type { Db, Queryable } from "./db/db.js";
import type { Logger } from "./logger.js";
import type { Providers } from "./providers/types.js";
import type { Queue } from "./queue.js";

/** Long-lived dependencies, built once in the entry point and passed down. */
export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  providers: Providers;
  queue: Queue;
  /** Server secret for cursors and webhook-secret encryption (32 bytes). */
  secret: Buffer;
}

/** Who is calling: always an organisation, derived from the credential, never a parameter. */
export interface Principal {
  orgId: string;
  /** API key id, when the credential is a key. */
  keyId: string | null;
  /** The user the credential belongs to, when known (service keys, JWTs). */
  userId: string | null;
  via: "api_key" | "jwt" | "system";
}

/** What every core verb receives: `{ ctx, input }`. */
export interface Ctx {
  deps: Deps;
  principal: Principal;
  requestId: string;
  log: Logger;
  /** The pool, or the open transaction when the verb runs inside one. */
  db: Queryable;
}

export function systemCtx(deps: Deps, orgId: string, requestId: string): Ctx {
  return {
    deps,
    principal: { orgId, keyId: null, userId: null, via: "system" },
    requestId,
    log: deps.log.child({ requestId, orgId }),
    db: deps.db,
  };
}
