import type { Config } from "../config.js";

/** A tier's limits per credential; null means no limit in that dimension. */
export interface TierLimits {
  name: string;
  perMinute: number | null;
  perDay: number | null;
}

/** Built-in tiers (DECISIONS.md); `MNEMO_RATE_TIERS` adds tiers or overrides these. */
export const BUILTIN_TIERS: Record<string, { per_minute: number | null; per_day: number | null }> = {
  default: { per_minute: 600, per_day: 50_000 },
  unlimited: { per_minute: null, per_day: null },
};

/**
 * The limits of an organisation's tier. An unknown tier name falls back to `default`, so a typo in
 * an operator's tier assignment never lifts the limits.
 */
export function resolveTier(config: Pick<Config, "MNEMO_RATE_TIERS">, name: string): TierLimits {
  const tiers = { ...BUILTIN_TIERS, ...config.MNEMO_RATE_TIERS };
  const found = tiers[name];
  if (found) return { name, perMinute: found.per_minute, perDay: found.per_day };
  const fallback = tiers.default ?? BUILTIN_TIERS.default!;
  return { name: "default", perMinute: fallback.per_minute, perDay: fallback.per_day };
}

export const isUnlimited = (t: TierLimits) => t.perMinute === null && t.perDay === null;
