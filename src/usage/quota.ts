import { type Ctx, inTx } from "../context.js";
import type { Queryable } from "../db/db.js";
import { lockMonthlyQuota } from "../db/locks.js";
import { getOrg } from "../db/orgs.js";
import { monthBounds, usageTotals } from "../db/usage.js";
import { CoreError } from "../errors.js";
import { BUILTIN_TIERS, resolveTier } from "../ratelimit/tiers.js";
import { recordUsage } from "./record.js";

/**
 * Refuses work that would take the organisation past its tier's monthly cap (UTC calendar month):
 * ingest by messages, search and trigger by calls. 429 `monthly_quota_exceeded` with Retry-After
 * until the month resets. When no tier has a monthly cap this costs no query.
 *
 * Exact under concurrency: where a cap applies, the month's counters are read under the
 * organisation's quota lock (lockMonthlyQuota) and the work is counted before it is released, so
 * a burst at the cap never passes it (a read before counting let 50 concurrent searches through
 * with 25 left). `tx`: the caller's transaction, which counts the work itself before it commits
 * (ingest: the job and its messages); without one, the work is counted here, in a transaction of
 * its own, and the result says so (`counted`: search and trigger then do not count it again).
 */
export async function checkMonthlyQuota(
  ctx: Ctx,
  need: { messages?: number; searches?: number },
  tx?: Queryable,
): Promise<{ counted: boolean }> {
  if (ctx.principal.via === "system") return { counted: false };
  const tiers = Object.values({ ...BUILTIN_TIERS, ...ctx.deps.config.MNEMO_RATE_TIERS });
  if (!tiers.some((t) => t.messages_per_month != null || t.searches_per_month != null))
    return { counted: false };
  const org = await getOrg(tx ?? ctx.db, ctx.principal.orgId);
  if (!org) return { counted: false };
  const tier = resolveTier(ctx.deps.config, org.tier);
  const checks = [
    { what: "messages_ingested", cap: tier.messagesPerMonth, add: need.messages ?? 0 },
    { what: "searches", cap: tier.searchesPerMonth, add: need.searches ?? 0 },
  ] as const;
  if (!checks.some((c) => c.cap !== null && c.add > 0)) return { counted: false };
  const check = async (db: Queryable) => {
    await lockMonthlyQuota(db, ctx.principal.orgId);
    const month = await monthBounds(db, undefined);
    const used = await usageTotals(db, ctx.principal.orgId, month.start, month.end);
    for (const c of checks) {
      if (c.cap === null || c.add === 0 || used[c.what] + c.add <= c.cap) continue;
      const retryAfter = Math.max(
        1,
        Math.ceil((Date.parse(month.resets_at) - Date.parse(month.as_of)) / 1000),
      );
      throw new CoreError(
        "monthly_quota_exceeded",
        `The ${tier.name} tier allows ${c.cap} ${c.what.replace("_", " ")} a month; ${used[c.what]} used this month (resets ${month.resets_at}).`,
        { headers: { "Retry-After": String(retryAfter) } },
      );
    }
  };
  if (tx) {
    await check(tx);
    return { counted: false };
  }
  await inTx(ctx, async ({ db }) => {
    await check(db);
    await recordUsage(db, { orgId: ctx.principal.orgId, keyId: ctx.principal.keyId, ...need });
  });
  return { counted: true };
}
