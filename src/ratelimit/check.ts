import type { Config } from "../config.js";
import type { Principal } from "../context.js";
import type { Queryable } from "../db/db.js";
import { hitRateLimit, type RateHitRow, type TierTable } from "../db/rate-limits.js";
import { CoreError, isQueryTimeout } from "../errors.js";
import { type Logger, throttledWarning } from "../logger.js";
import { isUnlimited, resolveTier, type TierLimits } from "./tiers.js";

export interface RateDecision {
  /** Headers for the response (empty for an unlimited tier or when the limiter failed open). */
  headers: Record<string, string>;
}

/**
 * The rate limiter's statement failed (the database away, most often) and the request goes on
 * unchecked: once per 10 s at most, since every request of an outage says it.
 */
export const failOpen = throttledWarning(
  "rate limiter unavailable: request admitted without a limit check (fail open)",
);

/** The subject limits count against: the API key, or the user of an identity-provider token. */
export function rateSubject(p: Principal): string {
  if (p.keyId) return p.keyId;
  return `${p.via}:${p.orgId}:${p.userId ?? ""}`;
}

/**
 * Counts one request of `principal` against its tier (which also counts it in usage). Throws a 429
 * (`rate_limited` or `daily_cap_exceeded`, with Retry-After and the RateLimit headers) when a limit
 * is reached. If the limiter's own query fails it lets the request through and logs a warning: a
 * limiter outage must never take the API down. `at` replaces the database clock (tests).
 */
export async function checkRateLimit(input: {
  db: Queryable;
  log: Logger;
  principal: Principal;
  tier: TierLimits;
  at?: Date | undefined;
}): Promise<RateDecision> {
  const { db, log, principal, tier } = input;
  let hit: Awaited<ReturnType<typeof hitRateLimit>>;
  try {
    // An unlimited tier still runs the upsert: it is also how requests are counted for usage.
    hit = await hitRateLimit(db, {
      subject: rateSubject(principal),
      perMinute: tier.perMinute,
      perDay: tier.perDay,
      orgId: principal.orgId,
      keyId: principal.keyId,
      at: input.at,
    });
  } catch (err) {
    // A database that did not answer in time would not answer the request's statements either.
    if (isQueryTimeout(err)) throw err;
    failOpen(log, { err });
    return { headers: {} };
  }
  return rateDecision(tier, hit);
}

/**
 * The verdict on a counted request: RateLimit headers for the response, or a 429
 * (`rate_limited` or `daily_cap_exceeded`, with Retry-After) thrown when a limit was reached.
 */
export function rateDecision(tier: TierLimits, hit: RateHitRow): RateDecision {
  if (isUnlimited(tier)) return { headers: {} };
  const now = hit.seen_at.getTime();
  const minuteReset = Math.max(1, Math.ceil((hit.minute_start.getTime() + 60_000 - now) / 1000));
  const dayReset = Math.max(1, Math.ceil((Date.parse(`${hit.day}T00:00:00Z`) + 86_400_000 - now) / 1000));
  const minuteLeft = tier.perMinute === null ? Infinity : Math.max(0, tier.perMinute - hit.minute_count);
  const dayLeft = tier.perDay === null ? Infinity : Math.max(0, tier.perDay - hit.day_count);
  // The headers describe the binding window: the one with the fewest requests left (the day's on
  // a tie, which resets later), so Limit, Remaining and Reset always speak of the same window.
  const daily = tier.perDay !== null && dayLeft <= minuteLeft;
  const limit = String(daily ? tier.perDay : tier.perMinute);
  const remaining = String(Math.min(minuteLeft, dayLeft));
  const reset = String(daily ? dayReset : minuteReset);
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": limit,
    "X-RateLimit-Remaining": remaining,
    "RateLimit-Limit": limit,
    "RateLimit-Remaining": remaining,
    "RateLimit-Reset": reset,
  };
  if (tier.perDay !== null) {
    headers["X-RateLimit-Daily-Limit"] = String(tier.perDay);
    headers["X-RateLimit-Daily-Remaining"] = String(dayLeft);
  }
  if (hit.admitted) return { headers };

  const capped = tier.perDay !== null && hit.day_count >= tier.perDay;
  const retryAfter = capped ? dayReset : minuteReset;
  throw new CoreError(
    capped ? "daily_cap_exceeded" : "rate_limited",
    capped
      ? `Daily cap of ${tier.perDay} requests reached for this credential; it resets at 00:00 UTC.`
      : `Rate limit of ${tier.perMinute} requests per minute reached for this credential.`,
    { headers: { ...headers, "RateLimit-Reset": String(retryAfter), "Retry-After": String(retryAfter) } },
  );
}

/** Every configured tier's limits (and the fallback of an unknown name), for the folded key statement. */
export function tierTable(config: Pick<Config, "MNEMO_RATE_TIERS">): TierTable {
  const names = [...new Set(["default", "unlimited", ...Object.keys(config.MNEMO_RATE_TIERS)])];
  const tiers = names.map((n) => resolveTier(config, n));
  const fallback = resolveTier(config, "\u0000unknown");
  return {
    names,
    perMinute: tiers.map((t) => t.perMinute),
    perDay: tiers.map((t) => t.perDay),
    fallback: { perMinute: fallback.perMinute, perDay: fallback.perDay },
  };
}
