import type { Ctx } from "../context.js";
import { getOrg } from "../db/orgs.js";
import { monthBounds, usageTotals } from "../db/usage.js";
import { CoreError } from "../errors.js";
import { BUILTIN_TIERS, resolveTier } from "../ratelimit/tiers.js";

/**
 * Refuses work that would take the organisation past its tier's monthly cap (UTC calendar month):
 * ingest by messages, search and trigger by calls. 429 `monthly_quota_exceeded` with Retry-After
 * until the month resets. When no tier has a monthly cap this costs no query. The check reads the
 * month's counters before the work is counted, so requests racing at the cap may pass it by a few.
 */
export async function checkMonthlyQuota(
  ctx: Ctx,
  need: { messages?: number; searches?: number },
): Promise<void> {
  if (ctx.principal.via === "system") return;
  const tiers = Object.values({ ...BUILTIN_TIERS, ...ctx.deps.config.MNEMO_RATE_TIERS });
  if (!tiers.some((t) => t.messages_per_month != null || t.searches_per_month != null)) return;
  const org = await getOrg(ctx.db, ctx.principal.orgId);
  if (!org) return;
  const tier = resolveTier(ctx.deps.config, org.tier);
  const checks = [
    { what: "messages_ingested", cap: tier.messagesPerMonth, add: need.messages ?? 0 },
    { what: "searches", cap: tier.searchesPerMonth, add: need.searches ?? 0 },
  ] as const;
  if (!checks.some((c) => c.cap !== null && c.add > 0)) return;
  const month = await monthBounds(ctx.db, undefined);
  const used = await usageTotals(ctx.db, ctx.principal.orgId, month.start, month.end);
  for (const c of checks) {
    if (c.cap === null || c.add === 0 || used[c.what] + c.add <= c.cap) continue;
    const retryAfter = Math.max(1, Math.ceil((Date.parse(month.resets_at) - Date.parse(month.as_of)) / 1000));
    throw new CoreError(
      "monthly_quota_exceeded",
      `The ${tier.name} tier allows ${c.cap} ${c.what.replace("_", " ")} a month; ${used[c.what]} used this month (resets ${month.resets_at}).`,
      { headers: { "Retry-After": String(retryAfter) } },
    );
  }
}
