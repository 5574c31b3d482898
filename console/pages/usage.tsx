import { getUsage } from "../../src/usage/get.js";
import { BarChart, Card, PageHead } from "../components.js";
import { Layout } from "../layout.js";
import { chrome, page } from "../render.js";
import type { ConsoleApp } from "../types.js";

const STORAGE_LABELS: Record<string, string> = {
  memories_active: "Active facts",
  episodes_active: "Episodes",
  artifacts_active: "Artifacts",
  directives_active: "Lessons and procedures",
};

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
    const month = c.req.query("month");
    const usage = await getUsage({
      ctx: c.get("ctx"),
      input: { month: month && /^\d{4}-\d{2}$/.test(month) ? month : undefined, daily: true },
    });
    const period = usage.period as { start: string; end: string };
    const labels = daysOf(period.start, period.end);
    const byDay = new Map((usage.daily ?? []).map((d) => [d.date, d]));
    const values = (k: "requests" | "searches" | "messages_ingested") =>
      labels.map((l) => byDay.get(l)?.[k] ?? 0);
    const storage = usage.storage as unknown as Record<string, number>;
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
            {Object.entries(storage).map(([k, v]) => (
              <>
                <dt>{STORAGE_LABELS[k] ?? k.replaceAll("_", " ")}</dt>
                <dd>{typeof v === "number" ? v.toLocaleString("en") : String(v)}</dd>
              </>
            ))}
          </dl>
        </Card>
      </Layout>,
    );
  });
}
