import { PgBoss } from "pg-boss";
import type { Queryable } from "../src/db/db.js";
import { isDatabaseUnavailable } from "../src/errors.js";
import type { Listen } from "../src/ingest/signals.js";
import { type Logger, throttledWarning } from "../src/logger.js";
import type { Queue } from "../src/queue.js";
import { ensureQueues, QUEUES } from "./queues.js";

/**
 * pg-boss in the same Postgres as the data. The supervisor runs every 5 s, so an ingest attempt
 * whose heartbeat lapsed (its worker killed; MNEMO_JOB_HEARTBEAT_SECONDS, sent with each job) is
 * retried within seconds of lapsing. With `listen`, pg-boss holds one LISTEN connection: a job sent
 * to a queue with `notify` (jobs/queues.ts) sends a NOTIFY in the sending transaction, and every
 * process's workers on that queue fetch at once, whichever process enqueued. Polling stays the
 * fallback (and the only path when the listener cannot be had).
 */
/**
 * pg-boss's LISTEN connection unanswered for its heartbeat's 5 s, or ended (it reconnects by
 * itself, and polling carries on meanwhile): the database busy or away, as a failed poll is. On the
 * embedded database a big job's transactions or a vacuum hold the one session that long. Not a
 * registration lost on a connection that answers (a transaction-mode pooler in between): an
 * error, as a setup to fix.
 */
const LISTEN_LOST = /^LISTEN\/NOTIFY (heartbeat timed out|connection ended)/;

export async function startBoss(
  connectionString: string,
  log: Logger,
  options: { max?: number; schedule?: boolean; listen?: boolean } = {},
) {
  const boss = new PgBoss({
    connectionString,
    max: options.max ?? 4,
    schedule: options.schedule ?? true,
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
    migrate: true,
    useListenNotify: options.listen ?? false,
  });
  // The database away (a restart, a failover): every worker slot's poll fails every few seconds,
  // which /readyz (503) already says. One warning per 10 s, counting the rest, instead of an error
  // line per poll; anything else is an error.
  const dbAway = throttledWarning("pg-boss: the database is unavailable");
  boss.on("error", (err) => {
    // A graceful stop that ran out of time: pg-boss failed the running jobs (they are retried) and
    // closed its pool; a handler that ends after that cannot settle its job. Expected, not an error.
    if (/^Database connection is not opened/.test(err.message)) {
      return log.info(
        { queue: (err as { queue?: string }).queue },
        "pg-boss: a job ran past the shutdown time-out; it is retried after the restart",
      );
    }
    if (!isDatabaseUnavailable(err) && !LISTEN_LOST.test(err.message))
      return log.error({ err }, "pg-boss error");
    dbAway(log, { err });
  });
  // Losing LISTEN/NOTIFY matters to operators (everything falls back to polling); pg-boss's
  // other warnings (slow queries, backlogs) are for debugging.
  boss.on("warning", (w) => {
    const listen = (w.data as { type?: string } | undefined)?.type === "listen_notify_unavailable";
    log[listen ? "warn" : "debug"]({ warning: w.data }, w.message);
  });
  await boss.start();
  await ensureQueues(boss);
  return boss;
}

/**
 * pg-boss's LISTEN, with its reconnects and heartbeat, for our own channels (src/ingest/signals.ts):
 * a connection of its own beside pg-boss's job listener (pg-boss listens on one per channel).
 */
export function bossListen(boss: PgBoss): Listen | undefined {
  const db = boss.getDb();
  if (typeof db.listen !== "function") return undefined;
  return (channel, onPayload, onReconnect) => db.listen!(channel, onPayload, onReconnect);
}

/** Adapts our transaction client so `send` commits together with the caller's rows. */
export const bossDb = (db: Queryable) => ({
  executeSql: async (text: string, values?: unknown[]) => ({ rows: (await db.query(text, values)).rows }),
});

export function queueFor(boss: PgBoss): Queue {
  return {
    send: (name, data, options = {}) =>
      boss.send(name, QUEUES[name].data.parse(data) as object, {
        ...(options.db ? { db: bossDb(options.db) } : {}),
        ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
        ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
        ...(options.expireInSeconds ? { expireInSeconds: options.expireInSeconds } : {}),
        ...(options.heartbeatSeconds ? { heartbeatSeconds: options.heartbeatSeconds } : {}),
        ...(options.group ? { group: { id: options.group } } : {}),
      }),
  };
}
