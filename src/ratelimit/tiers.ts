import type { Config } from "../config.js";

/** A tier's limits per credential; null means no limit in that dimension. */
export interface TierLimits {
  name: string;
  perMinute: number | null;
  perDay: number | null;
  /** Monthly caps per organisation (messages ingested, searches and trigger calls). */
  messagesPerMonth: number | null;
  searchesPerMonth: number | null;
}

interface TierConfig {
  per_minute: number | null;
  per_day: number | null;
  messages_per_month?: number | null;
  searches_per_month?: number | null;
}

/** Built-in tiers (null: unlimited); `MNEMO_RATE_TIERS` adds tiers or overrides these. */
export const BUILTIN_TIERS: Record<string, TierConfig> = {
  default: { per_minute: 600, per_day: 50_000, messages_per_month: null, searches_per_month: null },
  unlimited: { per_minute: null, per_day: null, messages_per_month: null, searches_per_month: null },
};

const limits = (name: string, t: TierConfig): TierLimits => ({
  name,
  perMinute: t.per_minute,
  perDay: t.per_day,
  messagesPerMonth: t.messages_per_month ?? null,
  searchesPerMonth: t.searches_per_month ?? null,
});

/**
 * The limits of an organisation's tier. An unknown tier name falls back to `default`, so a typo in
 * an operator's tier assignment never lifts the limits.
 */
export function resolveTier(config: Pick<Config, "MNEMO_RATE_TIERS">, name: string): TierLimits {
  const tiers = { ...BUILTIN_TIERS, ...config.MNEMO_RATE_TIERS };
  const found = tiers[name];
  if (found) return limits(name, found);
  return limits("default", tiers.default ?? BUILTIN_TIERS.default!);
}

export const isUnlimited = (t: TierLimits) => t.perMinute === null && t.perDay === null;
