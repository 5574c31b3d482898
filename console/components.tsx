import type { Child, FC, PropsWithChildren } from "hono/jsx";

/**
 * The start of a text, cut between characters (code points: never inside an emoji's pair). Tables
 * and lists show this much of a memory, linked to its page where the whole text is.
 */
export const excerpt = (s: string, n = 180) => {
  const chars = Array.from(s);
  return chars.length > n ? `${chars.slice(0, n - 1).join("")}…` : s;
};

export const PageHead: FC<PropsWithChildren<{ title: string; lead?: Child }>> = ({
  title,
  lead,
  children,
}) => (
  <div class="page-head">
    <div>
      <h1>{title}</h1>
      {lead ? <p class="lead">{lead}</p> : null}
    </div>
    {children ? <div class="actions">{children}</div> : null}
  </div>
);

export const Notice: FC<PropsWithChildren<{ kind: "ok" | "error" }>> = ({ kind, children }) => (
  <div class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>
    {children}
  </div>
);

/** An empty state: what is missing and what to do next. */
export const Empty: FC<PropsWithChildren<{ title: string }>> = ({ title, children }) => (
  <div class="empty">
    <p class="empty-title">{title}</p>
    <div class="empty-body">{children}</div>
  </div>
);

export const Card: FC<PropsWithChildren<{ title?: string; id?: string }>> = ({ title, id, children }) => (
  <section class="card" id={id}>
    {title ? <h2>{title}</h2> : null}
    {children}
  </section>
);

const pad = (n: number) => String(n).padStart(2, "0");

/** A UTC timestamp, readable, with the exact value in `datetime` and the tooltip. */
export const Time: FC<{ iso: string | null | undefined }> = ({ iso }) => {
  if (!iso) return <span class="muted">—</span>;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return <span>{iso}</span>;
  const text = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
  return (
    <time datetime={iso} title={iso}>
      {text}
    </time>
  );
};

export const Badge: FC<PropsWithChildren<{ tone?: string }>> = ({ tone, children }) => (
  <span class={`badge ${tone ?? ""}`}>{children}</span>
);

const STATUS_TONE: Record<string, string> = {
  succeeded: "ok",
  delivered: "ok",
  active: "ok",
  failed: "bad",
  retrying: "warn",
  running: "info",
  pending: "info",
  archived: "muted",
  superseded: "muted",
};
export const Status: FC<{ value: string }> = ({ value }) => <Badge tone={STATUS_TONE[value]}>{value}</Badge>;

export const Json: FC<{ value: unknown }> = ({ value }) => (
  <pre class="json">
    <code>{JSON.stringify(value, null, 2)}</code>
  </pre>
);

/** Stage timings (seconds) as a compact table, slowest stage highlighted. */
export const Timings: FC<{ timings: Record<string, unknown> | null | undefined; unit?: "s" | "ms" }> = ({
  timings,
  unit = "s",
}) => {
  const entries = Object.entries(timings ?? {}).filter(
    (e): e is [string, number] => typeof e[1] === "number",
  );
  if (entries.length === 0) return <span class="muted">—</span>;
  const max = Math.max(...entries.filter(([k]) => k !== "total").map(([, v]) => v), 0);
  return (
    <dl class="timings">
      {entries.map(([k, v]) => (
        <div class={v === max && k !== "total" && max > 0 ? "slow" : undefined}>
          <dt>{k}</dt>
          <dd>{unit === "s" ? `${(v * 1000).toFixed(v < 0.01 ? 2 : 0)} ms` : `${v.toFixed(1)} ms`}</dd>
        </div>
      ))}
    </dl>
  );
};

/** Human labels of the identifier axes. */
export const AXIS_LABELS: Record<string, string> = {
  user_id: "User",
  agent_id: "Agent",
  conv_id: "Conversation",
  app_id: "App",
};

export interface Series {
  name: string;
  /** CSS class giving the bar colour (`s1`, `s2`, `s3`). */
  cls: string;
  values: number[];
}

/** The top of the axis: four equal whole-number steps of 1, 2 or 5 times a power of ten. */
const niceMax = (v: number) => {
  const raw = Math.max(1, v / 4);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((s) => s * mag).find((s) => s >= raw) ?? 10 * mag;
  return Math.max(4, Math.ceil(step) * 4);
};

/**
 * Grouped bars per day as inline SVG, drawn here on the server (no chart script). Colours come
 * from the stylesheet (classes), so the strict style policy holds; each bar has a tooltip title.
 */
export const BarChart: FC<{ labels: string[]; series: Series[]; label: string }> = ({
  labels,
  series,
  label,
}) => {
  const W = 720;
  const H = 220;
  const left = 36;
  const bottom = 24;
  const top = 8;
  const plotW = W - left - 8;
  const plotH = H - top - bottom;
  const max = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const slot = plotW / Math.max(1, labels.length);
  const barW = Math.max(1.5, (slot * 0.78) / series.length);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const ticks = [0, max / 4, max / 2, (3 * max) / 4, max];
  const every = Math.ceil(labels.length / 10);
  const total = series.map((s) => `${s.name} ${s.values.reduce((a, b) => a + b, 0)}`).join(", ");
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${label}: ${total}`} preserveAspectRatio="none">
        {ticks.map((t) => (
          <g>
            <line class="gridline" x1={left} x2={W - 8} y1={y(t)} y2={y(t)} />
            <text class="axis" x={left - 6} y={y(t) + 4} text-anchor="end">
              {Number.isInteger(t) ? t : t.toFixed(1)}
            </text>
          </g>
        ))}
        {labels.map((l, i) => (
          <g>
            {series.map((s, j) => {
              const v = s.values[i] ?? 0;
              const x = left + i * slot + slot * 0.11 + j * barW;
              return (
                <rect
                  class={`bar ${s.cls}`}
                  x={x}
                  y={y(v)}
                  width={barW}
                  height={Math.max(0, top + plotH - y(v))}
                >
                  <title>{`${l} · ${s.name}: ${v}`}</title>
                </rect>
              );
            })}
            {i % every === 0 ? (
              <text class="axis" x={left + i * slot + slot / 2} y={H - 6} text-anchor="middle">
                {l.slice(5)}
              </text>
            ) : null}
          </g>
        ))}
      </svg>
      <figcaption class="legend">
        {series.map((s) => (
          <span>
            <i class={`swatch ${s.cls}`} aria-hidden="true" />
            {s.name}: {s.values.reduce((a, b) => a + b, 0)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
};
