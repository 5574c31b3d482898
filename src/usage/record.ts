import type { Queryable } from "../db/db.js";

export interface UsageDelta {
  orgId: string;
  keyId: string | null;
  messages?: number;
  searches?: number;
  requests?: number;
}

/**
 * Adds to the organisation's usage counters (filled in by the usage issue). Ingest records the
 * messages it accepted, search and trigger record searches, the auth middleware records requests.
 */
export async function recordUsage(_db: Queryable, _delta: UsageDelta): Promise<void> {}
