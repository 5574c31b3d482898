import { PgBoss } from "pg-boss";
import type { Queryable } from "../src/db/db.js";
import type { Logger } from "../src/logger.js";
import type { Queue } from "../src/queue.js";
import { ensureQueues } from "./queues.js";

/**
 * pg-boss in the same Postgres as the data. Tuned for pick-up within about 100 ms on an idle
 * server, and for a killed worker's job to come back within seconds rather than a minute.
 */
export async function startBoss(
  connectionString: string,
  log: Logger,
  options: { max?: number; schedule?: boolean } = {},
) {
  const boss = new PgBoss({
    connectionString,
    max: options.max ?? 4,
    schedule: options.schedule ?? true,
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
    migrate: true,
  });
  boss.on("error", (err) => log.error({ err }, "pg-boss error"));
  await boss.start();
  await ensureQueues(boss);
  return boss;
}

/** Adapts our transaction client so `send` commits together with the caller's rows. */
export const bossDb = (db: Queryable) => ({
  executeSql: async (text: string, values?: unknown[]) => ({ rows: (await db.query(text, values)).rows }),
});

export function queueFor(boss: PgBoss): Queue {
  return {
    send: (name, data, options = {}) =>
      boss.send(name, data, {
        ...(options.db ? { db: bossDb(options.db) } : {}),
        ...(options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {}),
        ...(options.singletonKey ? { singletonKey: options.singletonKey } : {}),
        ...(options.expireInSeconds ? { expireInSeconds: options.expireInSeconds } : {}),
      }),
  };
}
