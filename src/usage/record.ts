import type { Queryable } from "../db/db.js";
import { addUsage } from "../db/usage.js";

export interface UsageDelta {
  orgId: string;
  keyId: string | null;
  messages?: number;
  searches?: number;
  requests?: number;
}

/**
 * Adds to the organisation's usage counters for the current UTC day (by the database clock), on
 * the row of the key that did the work. Ingest records the messages it accepted, search and
 * trigger record searches. Requests are counted by the rate limiter's own per-request upsert
 * (src/db/rate-limits.ts), so a request costs one write; `requests` here is for callers outside
 * the HTTP middleware. Runs inside the caller's transaction when given one.
 */
export async function recordUsage(db: Queryable, delta: UsageDelta): Promise<void> {
  const messages = delta.messages ?? 0;
  const searches = delta.searches ?? 0;
  const requests = delta.requests ?? 0;
  if (messages === 0 && searches === 0 && requests === 0) return;
  await addUsage(db, { orgId: delta.orgId, keyId: delta.keyId, messages, searches, requests });
}
