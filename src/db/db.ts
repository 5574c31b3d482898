import pg from "pg";

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
  close(): Promise<void>;
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
export function createDb(connectionString: string, poolSize: number, onClose?: () => Promise<void>): Db {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    idleTimeoutMillis: 30_000,
    // An owner that is gone or hung fails a checkout quickly instead of hanging the request.
    connectionTimeoutMillis: 5_000,
  });
  pool.on("error", () => {});
  let closed = false;
  return {
    pool,
    query: (text, values) => pool.query(text, values as unknown[]),
    async tx(fn, options) {
      const begin = beginSql(options);
      const client = await pool.connect();
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken = err;
      };
      client.on("error", onError);
      try {
        await client.query(begin);
        const out = await fn(client);
        await client.query("COMMIT");
        return out;
      } catch (err) {
        if (!broken) await client.query("ROLLBACK").catch((e: Error) => (broken = e));
        throw err;
      } finally {
        client.off("error", onError);
        client.release(broken);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
      await onClose?.();
    },
  };
}
