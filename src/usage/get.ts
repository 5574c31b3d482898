import { maskKey } from "../auth/keys.js";
import type { Ctx } from "../context.js";
import { getOrg } from "../db/orgs.js";
import { monthBounds, storageCounts, usageByDay, usageByKey, usageTotals } from "../db/usage.js";
import { CoreError } from "../errors.js";
import { resolveTier } from "../ratelimit/tiers.js";

export interface GetUsageInput {
  /** YYYY-MM; the current UTC month when absent. */
  month?: string | undefined;
  daily?: boolean | undefined;
  byApiKey?: boolean | undefined;
}

/** The caller's organisation's usage for a calendar month, its stored rows, tier and limits. */
export async function getUsage({ ctx, input }: { ctx: Ctx; input: GetUsageInput }) {
  const orgId = ctx.principal.orgId;
  if (input.month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(input.month)) {
    throw new CoreError("invalid_request", "month must be YYYY-MM.");
  }
  const org = await getOrg(ctx.db, orgId);
  if (!org) throw new CoreError("unauthorized", "The organisation of this credential no longer exists.");
  const tier = resolveTier(ctx.deps.config, org.tier);
  const period = await monthBounds(ctx.db, input.month);
  const [totals, storage, daily, byKey] = await Promise.all([
    usageTotals(ctx.db, orgId, period.start, period.end),
    storageCounts(ctx.db, orgId),
    input.daily ? usageByDay(ctx.db, orgId, period.start, period.end) : undefined,
    input.byApiKey ? usageByKey(ctx.db, orgId, period.start, period.end) : undefined,
  ]);
  const counts = (r: { messages_ingested: number; searches: number; requests: number }) => ({
    messages_ingested: r.messages_ingested,
    searches: r.searches,
    requests: r.requests,
  });
  return {
    object: "usage" as const,
    org_id: orgId,
    period,
    tier: tier.name,
    limits: { requests_per_minute: tier.perMinute, requests_per_day: tier.perDay },
    operations: counts(totals),
    storage,
    ...(daily ? { daily: daily.map((d) => ({ date: d.date, ...counts(d) })) } : {}),
    ...(byKey
      ? {
          by_api_key: byKey.map((k) => ({
            api_key_id: k.key_id === "" ? null : k.key_id,
            name: k.name,
            kind: k.kind,
            display: k.prefix && k.last_four ? maskKey(k.prefix, k.last_four) : null,
            ...counts(k),
          })),
        }
      : {}),
  };
}
