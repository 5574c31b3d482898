import type { Queryable } from "./db/db.js";

/**
 * The background queue (pg-boss, in the same Postgres). `send` takes the caller's transaction so
 * that a row and the job about it commit together.
 */
export interface Queue {
  send(
    name: string,
    data: object,
    options?: {
      db?: Queryable;
      startAfterSeconds?: number;
      singletonKey?: string;
      /** How long an attempt may run before it is taken as dead and retried. */
      expireInSeconds?: number;
    },
  ): Promise<string | null>;
}
