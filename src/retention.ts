import type { Config } from "./config.js";
import type { Deps } from "./context.js";
import type { Queryable } from "./db/db.js";

export type RetentionSweep = (args: { deps: Deps; input?: { now?: Date } }) => Promise<{ deleted: number }>;

/**
 * One retention sweep: deletes what `remove` finds older than the configured age before `now`
 * (tests pass a later `now` instead of waiting), logging the count. Sweeps run on a schedule across
 * every organisation, so they take `Deps`, not a context.
 */
export function retentionSweep(
  what: string,
  remove: (db: Queryable, before: Date) => Promise<number>,
  maxAgeMs: (config: Config) => number,
): RetentionSweep {
  return async ({ deps, input = {} }) => {
    const now = input.now ?? new Date();
    const deleted = await remove(deps.db, new Date(now.getTime() - maxAgeMs(deps.config)));
    if (deleted) deps.log.info({ deleted }, `swept ${what}`);
    return { deleted };
  };
}
