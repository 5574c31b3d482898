import type { Config } from "./config.js";
import { canBegin, type Db, type Queryable, setLocalSql, type TxOptions } from "./db/db.js";
import type { Logger } from "./logger.js";
import type { Metrics } from "./metrics.js";
import type { Providers } from "./providers/types.js";
import type { Queue } from "./queue.js";

/** Long-lived dependencies, built once in the entry point and passed down. */
export interface Deps {
  config: Config;
  db: Db;
  /**
   * The same pool for the request path (REST, MCP, console): each statement given
   * MNEMO_DB_QUERY_TIMEOUT_MS to answer (Db.withQueryTimeout). Jobs, migrations and admin commands
   * use `db`, with no deadline. Unset: `db`.
   */
  requestDb?: Db;
  log: Logger;
  /** Prometheus registry and the series the service reports (src/metrics.ts). */
  metrics: Metrics;
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

/** The dependencies a verb reaches through its context: everything but the database handle. */
export type CtxDeps = Omit<Deps, "db">;

/** What every core verb receives: `{ ctx, input }`. */
export interface Ctx {
  deps: CtxDeps;
  principal: Principal;
  requestId: string;
  log: Logger;
  /**
   * The one database handle of a verb: the pool, or the open transaction when the verb runs inside
   * one (see `inTx`). Verbs never reach the pool past it.
   */
  db: Queryable;
}

/**
 * Runs `fn` in a transaction with a context whose handle is that transaction; commits on return,
 * rolls back on throw. Inside a transaction already, `fn` joins it. `options.settings` are SET
 * LOCAL for the transaction (with BEGIN, in one round trip).
 */
export async function inTx<T>(ctx: Ctx, fn: (txCtx: Ctx) => Promise<T>, options?: TxOptions): Promise<T> {
  const { db } = ctx;
  if (!canBegin(db)) {
    const sets = setLocalSql(options);
    if (sets.length) await db.query(sets.join("; "));
    return fn(ctx);
  }
  return db.tx((tx) => fn({ ...ctx, db: tx }), options);
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

/**
 * The context with the request's statement deadline (`requestDb`) lifted, for a verb whose work
 * may rightly outlast it (a whole scope deleted): unchanged inside a transaction, whose handle is
 * the transaction's.
 */
export const withoutDeadline = (ctx: Ctx): Ctx =>
  "withQueryTimeout" in ctx.db ? { ...ctx, db: (ctx.db as Db).withQueryTimeout(undefined) } : ctx;

/** The database handle a request runs with: `requestDb` (a statement deadline), else `db`. */
export const requestDb = (deps: Pick<Deps, "db" | "requestDb">): Db => deps.requestDb ?? deps.db;
