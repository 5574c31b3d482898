import type { JobData, QueueName } from "../jobs/queues.js";
import type { Queryable } from "./db/db.js";

/**
 * The background queue (pg-boss, in the same Postgres). Queue names and the shape of each job's
 * data come from the one registry, jobs/queues.ts. `send` takes the caller's transaction so that a
 * row and the job about it commit together.
 */
export interface Queue {
  send<N extends QueueName>(
    name: N,
    data: JobData<N>,
    options?: {
      db?: Queryable;
      startAfterSeconds?: number;
      singletonKey?: string;
      /** How long an attempt may run before it is taken as stuck and retried. */
      expireInSeconds?: number;
      /** How long an attempt's worker may go without refreshing its heartbeat before it is taken as dead. */
      heartbeatSeconds?: number;
      /** The job's group (an organisation): workers may cap how many of a group's jobs run at once. */
      group?: string;
    },
  ): Promise<string | null>;
}
