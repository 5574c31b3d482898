import { maskKey } from "../auth/keys.js";
import { confinedUser } from "../auth/user-scope.js";
import type { Ctx } from "../context.js";
import { getOrg } from "../db/orgs.js";
import {
  monthBounds,
  storageCounts,
  usageByDay,
  usageByKey,
  usageTotals,
  userStorageCounts,
} from "../db/usage.js";
import { CoreError } from "../errors.js";
import { resolveTier } from "../ratelimit/tiers.js";
import { MONTH_RE, type Usage } from "../wire/usage.js";

export interface GetUsageInput {
  /** YYYY-MM; the current UTC month when absent. */
  month?: string | undefined;
  daily?: boolean | undefined;
  byApiKey?: boolean | undefined;
}

/** The caller's organisation's usage for a calendar month, its stored rows, tier and limits. */
export async function getUsage({ ctx, input }: { ctx: Ctx; input: GetUsageInput }): Promise<Usage> {
  const orgId = ctx.principal.orgId;
  if (input.month !== undefined && !MONTH_RE.test(input.month)) {
    throw new CoreError("invalid_month", "month must be YYYY-MM, year 0001 to 9999.", { field: "month" });
  }
  const org = await getOrg(ctx.db, orgId);
  if (!org) throw new CoreError("unauthorized", "The organisation of this credential no longer exists.");
  const tier = resolveTier(ctx.deps.config, org.tier);
  const period = await monthBounds(ctx.db, input.month);
  // A credential confined to a user sees its own user's figures only: the counts of its user's
  // API keys (not the line of requests made with no key, identity-provider tokens, which counts
  // every user's) and its user's stored memories. The organisation's would show it how much every
  // other user ingests, searches and keeps.
  const user = confinedUser(ctx.principal);
  const [totals, storage, daily, keyLines] = await Promise.all([
    usageTotals(ctx.db, orgId, period.start, period.end, user),
    user === null ? storageCounts(ctx.db, orgId) : userStorageCounts(ctx.db, orgId, user),
    input.daily ? usageByDay(ctx.db, orgId, period.start, period.end, user) : undefined,
    input.byApiKey ? usageByKey(ctx.db, orgId, period.start, period.end, user) : undefined,
  ]);
  const counts = (r: { messages_ingested: number; searches: number; requests: number }) => ({
    messages_ingested: r.messages_ingested,
    searches: r.searches,
    requests: r.requests,
  });
  return {
    object: "usage" as const,
    org_id: orgId,
    as_of: period.as_of,
    period: {
      key: period.month,
      type: "calendar_month",
      month: period.month,
      start: period.start,
      end: period.end,
    },
    tier: tier.name,
    limits: { requests_per_minute: tier.perMinute, requests_per_day: tier.perDay },
    operations: counts(totals),
    storage: { ...storage, as_of: period.as_of },
    quota: {
      rate_limit_req_per_min: tier.perMinute,
      monthly: {
        period_key: period.month,
        resets_at: period.resets_at,
        messages_ingested: { used: totals.messages_ingested, limit: tier.messagesPerMonth },
        searches: { used: totals.searches, limit: tier.searchesPerMonth },
      },
    },
    daily: daily ? daily.map((d) => ({ date: d.date, ...counts(d) })) : null,
    by_api_key: keyLines
      ? keyLines.map((k) => ({
          api_key_hash: k.key_hash,
          first_n: k.prefix,
          name: k.name,
          ...counts(k),
          last_used_at: k.last_used_at,
          api_key_id: k.key_id === "" ? null : k.key_id,
          kind: k.kind,
          display: k.prefix && k.last_four ? maskKey(k.prefix, k.last_four) : null,
        }))
      : null,
  };
}
