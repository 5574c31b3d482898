import { getUsage } from "../../src/usage/get.js";
import { BarChart, Card, PageHead, Time } from "../components.js";
import { inFormWords } from "../fields.js";
import { Layout } from "../layout.js";
import { chrome, page, queryOf } from "../render.js";
import type { ConsoleApp } from "../types.js";

/** The storage counts, in the order shown (the storage object also holds when it was read). */
const STORAGE_LABELS = {
  memories_active: "Active facts",
  episodes_active: "Episodes",
  artifacts_active: "Artifacts",
  directives_active: "Lessons and procedures",
} as const;
const STORAGE_KEYS = Object.keys(STORAGE_LABELS) as (keyof typeof STORAGE_LABELS)[];

const fmt = (n: number | null) => (n === null ? "unlimited" : n.toLocaleString("en"));

/** Every day of the period up to today, so quiet days show as empty bars, not gaps. */
function daysOf(start: string, end: string): string[] {
  const out: string[] = [];
  const last = Math.min(Date.parse(end), Date.now());
  for (let t = Date.parse(start); t <= last; t += 86_400_000)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

export function registerUsagePages(app: ConsoleApp) {
  app.get("/usage", async (c) => {
    // A month that is none (`abc`, `2026-13`) is 422 as GET /v1/usage answers it, never the current month.
    const usage = await getUsage({
      ctx: c.get("ctx"),
      input: { month: queryOf(c).month, daily: true },
    }).catch((err) => {
      throw inFormWords(err, { month: "Month" });
    });
    const period = usage.period as { start: string; end: string };
    const labels = daysOf(period.start, period.end);
    const byDay = new Map((usage.daily ?? []).map((d) => [d.date, d]));
    const values = (k: "requests" | "searches" | "messages_ingested") =>
      labels.map((l) => byDay.get(l)?.[k] ?? 0);
    const storage = usage.storage;
    return page(
      c,
      <Layout title="Usage" chrome={chrome(c)} section="usage">
        <PageHead title="Usage" lead={`${period.start.slice(0, 7)} (UTC), counted per day.`}>
          <form method="get" action="/console/usage" class="inline">
            <label for="month" class="sr-only">
              Month
            </label>
            <input id="month" name="month" type="month" value={period.start.slice(0, 7)} />
            <button class="btn small" type="submit">
              Show
            </button>
          </form>
        </PageHead>
        <div class="stats">
          <div class="stat">
            <span class="stat-label">Requests</span>
            <span class="stat-value" id="usage-requests">
              {fmt(usage.operations.requests)}
            </span>
          </div>
          <div class="stat">
            <span class="stat-label">Searches</span>
            <span class="stat-value">{fmt(usage.operations.searches)}</span>
          </div>
          <div class="stat">
            <span class="stat-label">Messages ingested</span>
            <span class="stat-value">{fmt(usage.operations.messages_ingested)}</span>
          </div>
          <div class="stat">
            <span class="stat-label">Tier</span>
            <span class="stat-value">{usage.tier}</span>
            <span class="stat-note">
              {fmt(usage.limits.requests_per_minute)} / minute · {fmt(usage.limits.requests_per_day)} / day
            </span>
          </div>
        </div>
        <Card title="Per day">
          <BarChart
            label="Operations per day"
            labels={labels}
            series={[
              { name: "requests", cls: "s1", values: values("requests") },
              { name: "searches", cls: "s2", values: values("searches") },
              { name: "messages ingested", cls: "s3", values: values("messages_ingested") },
            ]}
          />
        </Card>
        <Card title="Storage">
          <dl class="kv">
            {STORAGE_KEYS.map((k) => (
              <>
                <dt>{STORAGE_LABELS[k]}</dt>
                <dd>{storage[k].toLocaleString("en")}</dd>
              </>
            ))}
          </dl>
          <p class="muted small">
            Held now, whatever the month shown: as of <Time iso={storage.as_of} />.
          </p>
        </Card>
      </Layout>,
    );
  });
}
