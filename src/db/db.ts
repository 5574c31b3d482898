import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { setTimeout } from "node:timers/promises";
import pg from "pg";
import { isDatabaseUnavailable, isQueryTimeout } from "../errors.js";

/** node-pg's own conversion of a parameter to the text it sends (arrays, dates, JSON, ...). */
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as {
  prepareValue(value: unknown): string | Buffer | null;
};

/** Anything that runs a parameterised statement: the pool or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** The database handle passed down from the entry point. */
export interface Db extends Queryable {
  readonly pool: pg.Pool;
  /**
   * Runs `fn` in one transaction; commits on return, rolls back on throw. `settings` are applied
   * with SET LOCAL in the same round trip as BEGIN.
   */
  tx<T>(fn: (client: Queryable) => Promise<T>, options?: TxOptions): Promise<T>;
  /** Runs `fn` on one connection (one session), outside any transaction of its own. */
  session<T>(fn: (client: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * Every connection shares one database session (the embedded database, served by this process
   * or another): a transaction holds up every other connection's statements until it ends.
   */
  readonly oneSession: boolean;
  /**
   * The same pool, every statement run through this handle given `ms` to answer (node-postgres's
   * `query_timeout`): then it fails with "Query read timeout" (a database unavailable, see
   * src/errors.ts) and its connection is destroyed, not returned to the pool. For the request
   * path, whose statements are short: a database that stops answering with its connections open
   * (a paused server or VM, a network partition) is then a 503, not a request hung for as long.
   */
  withQueryTimeout(ms: number | undefined): Db;
}

export interface TxOptions {
  /** Server settings for this transaction only (names and values are constants of the code). */
  settings?: Record<string, string | number>;
}

const SETTING_NAME = /^[a-z_]+(\.[a-z_]+)?$/;
const SETTING_VALUE = /^[A-Za-z0-9_.]+$/;

/** The SET LOCALs of `options`, as simple-protocol statements. */
export function setLocalSql(options?: TxOptions): string[] {
  return Object.entries(options?.settings ?? {}).map(([name, value]) => {
    if (!SETTING_NAME.test(name) || !SETTING_VALUE.test(String(value))) {
      throw new Error(`invalid transaction setting ${name}=${value}`);
    }
    return `SET LOCAL ${name} = ${value}`;
  });
}

/** `BEGIN` plus its SET LOCALs, one simple-protocol string (one round trip). */
export function beginSql(options?: TxOptions): string {
  return ["BEGIN", ...setLocalSql(options)].join("; ");
}

/**
 * `text` with its `$n` parameters replaced by literals: each value converted exactly as node-pg
 * converts a parameter (prepareValue) and quoted with its escapeLiteral, so the server reads the
 * same text it would have been sent as a parameter, and the statement's own casts type it. `$n`
 * inside quoted strings or identifiers is left alone; dollar-quoted strings are refused.
 */
export function inlineParams(text: string, values: readonly unknown[]): string {
  const { parts, refs } = parsedParams(text);
  let out = parts[0]!;
  for (let k = 0; k < refs.length; k++) {
    const n = refs[k]!;
    if (n < 1 || n > values.length) throw new Error(`no value for $${n}`);
    const v = prepareValue(values[n - 1]);
    if (Buffer.isBuffer(v)) throw new Error("binary parameters cannot be inlined");
    out += (v === null ? "NULL" : pg.escapeLiteral(v)) + parts[k + 1]!;
  }
  return out;
}

/**
 * A statement's text cut at its `$n` references (outside quoted strings, identifiers and
 * comments): `parts[0] $refs[0] parts[1] ...`. Cut once per text and kept: a statement's text is
 * one of a few shapes, inlined on every call.
 */
const parsedTexts = new Map<string, { parts: string[]; refs: number[] }>();
const parsedParams = (text: string) => kept(parsedTexts, text, () => cutAtParams(text));
function cutAtParams(text: string): { parts: string[]; refs: number[] } {
  const parts: string[] = [];
  const refs: number[] = [];
  let start = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end < 0) throw new Error("unterminated quoted string in SQL");
      i = end + 1; // a doubled quote ('') reads as two adjacent strings: the same text
    } else if (c === "-" && text[i + 1] === "-") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (c === "$") {
      const m = /^\$(\d+)/.exec(text.slice(i, i + 12));
      if (!m || /[A-Za-z0-9_]/.test(text[i - 1] ?? "")) throw new Error("unsupported $ in SQL");
      parts.push(text.slice(start, i));
      refs.push(Number(m[1]));
      i += m[0].length;
      start = i;
    } else i++;
  }
  parts.push(text.slice(start));
  return { parts, refs };
}

/**
 * `cache`'s value for `key`, built on first use and kept. Keys are statement shapes, a few per
 * statement; a bound (the cache emptied past 1,000 entries) keeps a key built with values in it
 * from growing the cache without end.
 */
export function kept<V>(cache: Map<string, V>, key: string, build: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    value = build();
    if (cache.size >= 1000) cache.clear();
    cache.set(key, value);
  }
  return value;
}

/**
 * One parameterised statement with transaction settings, in ONE round trip: the SET LOCALs and the
 * statement (its values inlined, see inlineParams) as one simple-protocol query, which the server
 * runs as one implicit transaction. Unlike BEGIN, statement, COMMIT (three round trips), no
 * transaction stays open between round trips: on the embedded database, where every connection
 * shares one session and waits while another holds a transaction, the session is never held
 * while this process is busy elsewhere. Inside a transaction already, the settings are SET LOCAL
 * there and the statement runs as usual. `before` are statements (values inlined) run after the
 * settings and before the statement, in the same round trip.
 */
export async function queryInOneTrip<R extends pg.QueryResultRow = any>(
  db: Queryable,
  text: string,
  values: unknown[],
  options: TxOptions & { before?: readonly string[] },
): Promise<pg.QueryResult<R>> {
  const first = [...setLocalSql(options), ...(options.before ?? [])];
  if (!canBegin(db)) {
    for (const statement of first) await db.query(statement);
    return db.query<R>(text, values);
  }
  const results = (await db.query([...first, inlineParams(text, values)].join(";\n"))) as unknown as
    | pg.QueryResult<R>
    | pg.QueryResult<R>[];
  return Array.isArray(results) ? results[results.length - 1]! : results;
}

/**
 * A statement run from a server-side prepared statement with a generic plan: planned once per
 * session, then only executed (a search's statement took longer to plan than to run: 2.5 ms of
 * planning beside 3 ms of execution on the embedded database). PREPARE and EXECUTE are SQL, sent
 * as simple queries with the values inlined (see inlineParams), and the name is the text's hash:
 * on the embedded database every connection shares one session, and so one statement, which
 * node-pg's per-connection bookkeeping of named statements cannot know. A session that lacks the
 * statement (a new connection, a restarted database) prepares it and executes again; if that
 * fails too (a pooler that moves sessions), or inside a transaction, the statement runs as a
 * plain one. Only for statements whose best plan does not depend on their values, each `$n` typed
 * by a cast. `before` are statements (their values already inlined) that run first in the same
 * round trip and the same implicit transaction: SET LOCALs, or a statement whose result the
 * prepared one reads (see rankCandidates).
 */
export async function queryPrepared<R extends pg.QueryResultRow = any>(
  db: Queryable,
  text: string,
  values: unknown[],
  options: { before?: readonly string[] } = {},
): Promise<pg.QueryResult<R>> {
  const before = options.before ?? [];
  if (!canBegin(db)) {
    for (const statement of before) await db.query(statement);
    return db.query<R>(text, values);
  }
  const name = preparedName(text);
  const args = values.map((_, i) => `$${i + 1}`).join(", ");
  const execute = [
    ...before,
    "SET LOCAL plan_cache_mode = force_generic_plan",
    inlineParams(`EXECUTE ${name}(${args})`, values),
  ].join(";\n");
  const code = (err: unknown) => (err as { code?: string }).code;
  const missing = (err: unknown) => code(err) === "26000";
  const last = (results: unknown) =>
    (Array.isArray(results) ? results[results.length - 1] : results) as pg.QueryResult<R>;
  return db.session(async (client) => {
    const run = async () => last(await client.query(execute));
    // The statement unprepared, after the same statements in the same round trip.
    const plain = async () =>
      before.length
        ? last(await client.query([...before, inlineParams(text, values)].join(";\n")))
        : client.query<R>(text, values);
    try {
      return await run();
    } catch (err) {
      if (!missing(err)) throw err;
    }
    try {
      await client.query(`PREPARE ${name} AS ${text}`);
    } catch (err) {
      // Another connection of the shared embedded session prepared it first.
      if (code(err) !== "42P05") return plain();
    }
    try {
      return await run();
    } catch (err) {
      if (!missing(err)) throw err;
      return plain();
    }
  });
}

/** Prepared statements' names by text: the text's hash, computed once per statement shape. */
const preparedNames = new Map<string, string>();
const preparedName = (text: string) =>
  kept(preparedNames, text, () => `mnemo_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`);

/** Whether a handle is the pool (it can begin a transaction) rather than a client inside one. */
export const canBegin = (db: Queryable): db is Db => typeof (db as Partial<Db>).tx === "function";

// int8 and numeric as JS numbers; counts in this service stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
pg.types.setTypeParser(1700, (v) => Number.parseFloat(v));

/**
 * The pool. Losing the database (an embedded owner killed, a server restarted) must never crash
 * the process: idle clients are covered by the pool's listener, a checked-out client by its own
 * listener for as long as it is held (a held client with no listener turns a reset connection
 * into an unhandled 'error' event), and a broken client is destroyed, not returned. Queries then
 * fail, and succeed again once the database is back: the pool opens new connections.
 */
export function createDb(
  connectionString: string,
  poolSize: number,
  onClose?: () => Promise<void>,
  oneSession = false,
  /** `mnemo-admin` for an admin command on PostgreSQL, which `admin reembed` tells from the service's. */
  applicationName = "mnemo",
): Db {
  const pool = new pg.Pool({
    connectionString,
    // How the embedded database's wire server tells the service's connections from a tool's.
    application_name: applicationName,
    max: poolSize,
    idleTimeoutMillis: 30_000,
    // An owner that is gone or hung fails a checkout quickly instead of hanging the request.
    connectionTimeoutMillis: 5_000,
    // An idle pooled connection to a server that went silent (a partition, a paused host) is
    // found dead by TCP keep-alive probes after 10 s idle, not kept for hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  pool.on("error", () => {});
  // A connection made as the server shuts down may bring its last handshake message and a FATAL
  // (57P01) in one chunk: pg-pool hands the client over, with its idle listener removed, while that
  // chunk is still being parsed, before `session` (below) can listen, and an 'error' event with no
  // listener ends the process. So every client listens for its whole life; the pool's listener and
  // the session's still see each error.
  pool.on("connect", (client) => client.on("error", () => {}));
  // A checked-out client, with its own error listener for as long as it is held; a client that
  // broke (an 'error' event, a failed ROLLBACK, a statement past its time-out) is destroyed on
  // release, not returned.
  const session = async <T>(
    fn: (client: pg.PoolClient, state: { broken?: Error }) => Promise<T>,
  ): Promise<T> => {
    const client = await pool.connect();
    const state: { broken?: Error } = {};
    const onError = (err: Error) => {
      state.broken = err;
    };
    client.on("error", onError);
    try {
      return await fn(client, state);
    } finally {
      client.off("error", onError);
      client.release(state.broken);
    }
  };
  let closed = false;
  const handle = (timeoutMs: number | undefined): Db => {
    // A client's statements, each with the time-out; one past it leaves the client broken (its
    // statement may still be on the wire): destroyed on release.
    // (`query_timeout` per statement is node-postgres's, missing from its types.)
    const statement = (text: string, values: unknown[] | undefined) =>
      ({ text, values, query_timeout: timeoutMs }) as pg.QueryConfig;
    const timed = (client: pg.PoolClient, state: { broken?: Error }): Queryable =>
      timeoutMs === undefined
        ? client
        : {
            query: (text, values) =>
              client.query(statement(text, values)).catch((err: Error) => {
                if (isQueryTimeout(err)) state.broken = err;
                throw err;
              }) as Promise<any>,
          };
    return {
      pool,
      oneSession,
      // pg-pool destroys the client of a failed pool.query (a time-out included).
      query: (text, values) =>
        timeoutMs === undefined
          ? pool.query(text, values as unknown[])
          : (pool.query(statement(text, values)) as Promise<any>),
      async tx(fn, options) {
        const begin = beginSql(options);
        return session(async (raw, state) => {
          const client = timed(raw, state);
          try {
            await client.query(begin);
            const out = await fn(client);
            await client.query("COMMIT");
            return out;
          } catch (err) {
            if (!state.broken) await client.query("ROLLBACK").catch((e: Error) => (state.broken = e));
            throw err;
          }
        });
      },
      session: (fn) => session((raw, state) => fn(timed(raw, state))),
      withQueryTimeout: (ms) => handle(ms),
      async close() {
        if (closed) return;
        closed = true;
        // What the database handle owns (an embedded server, a test's copy) is let go even when
        // the pool was ended already or fails to end.
        try {
          if (!pool.ending) await pool.end();
        } finally {
          await onClose?.();
        }
      },
    };
  };
  return handle(undefined);
}

/**
 * Resolves once the database answers again (`SELECT 1`), trying every 250 ms at first and every
 * 5 s at most; at once when the failure is of another kind. Rejects with the signal's reason when
 * `signal` aborts first (the caller gave up: a shutdown, a deadline).
 */
export async function untilReachable(db: Queryable, signal: AbortSignal): Promise<void> {
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    signal.throwIfAborted();
    try {
      await db.query("SELECT 1");
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) return;
    }
    await setTimeout(delay, undefined, { signal });
  }
}

/**
 * Runs `fn` on one client inside a read-only repeatable-read transaction: everything it reads is
 * one snapshot, whatever commits meanwhile (migrate-to's copy, an export). On the embedded
 * database the transaction holds its one session while it lasts (src/db/pglite-server.ts).
 */
export async function withSnapshot<T>(db: Db, fn: (snap: Queryable) => Promise<T>): Promise<T> {
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
