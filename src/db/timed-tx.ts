/**
 * How long a write transaction may take where it holds everyone up. On the embedded database each
 * transaction holds the one session for its length, and a search (two statements) waits behind
 * one for each: 200 ingested facts (one INSERT statement's worth) took about 1.2 s on a directory of
 * 20,000 memories (search p95 3.8-4.6 s at 20 clients during a 5,000-message job); 50, 0.2-0.4 s
 * (p95 1.5-1.6 s). So there each transaction after the first is sized to take about TX_MS, from the
 * time the one before took, between MIN_TX_ROWS and its writer's maximum (p95 0.9 s, the job's store
 * twice as long under that load). On a PostgreSQL server a transaction holds no one else up, and
 * smaller ones only cost time (an ingest job's store 35 -> 57 s for no better search): there every
 * transaction has the maximum.
 */
export const TX_MS = 100;
const MIN_TX_ROWS = 15;

/**
 * Rows for a writer's next transaction: `max` each, or, when `timed` (see TX_MS), each after the
 * first sized from how long the one before took, to take about `ms` (TX_MS; 0 keeps every one
 * after the first at MIN_TX_ROWS), between MIN_TX_ROWS and `max`.
 */
export function txSizer(options: { timed: boolean; max: number; ms?: number | undefined }) {
  const min = Math.min(MIN_TX_ROWS, options.max);
  const budget = options.ms ?? TX_MS;
  let size = options.max;
  return {
    /** Rows for the next transaction. */
    get size() {
      return size;
    },
    /** Runs `write` (a transaction of `rows` rows); the time it took sizes the next one. */
    async time<T>(rows: number, write: () => Promise<T>): Promise<T> {
      const started = performance.now();
      const out = await write();
      const ms = Math.max(performance.now() - started, 1);
      if (options.timed) size = Math.max(min, Math.min(options.max, Math.floor((rows * budget) / ms)));
      return out;
    },
  };
}
