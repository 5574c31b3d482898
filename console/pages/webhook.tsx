import { requireOrgWide } from "../../src/auth/user-scope.js";
import { CoreError, isCoreError } from "../../src/errors.js";
import { removeWebhook } from "../../src/webhooks/delete.js";
import { webhookDeliveryStats } from "../../src/webhooks/delivery-stats.js";
import { getWebhook } from "../../src/webhooks/get.js";
import { listWebhookDeliveries } from "../../src/webhooks/list-deliveries.js";
import { WEBHOOK_EVENTS, type WebhookWire } from "../../src/webhooks/model.js";
import { putWebhook } from "../../src/webhooks/put.js";
import { BarChart, Card, Empty, excerpt, Notice, PageHead, Status, Time } from "../components.js";
import { inFormWords } from "../fields.js";
import { Csrf, Layout } from "../layout.js";
import { type Ctx, chrome, many, one, page, readForm } from "../render.js";
import type { ConsoleApp } from "../types.js";

const CHART_DAYS = 14;

async function current(c: Ctx): Promise<WebhookWire | null> {
  try {
    return await getWebhook({ ctx: c.get("ctx") });
  } catch (err) {
    if (isCoreError(err) && err.code === "webhook_not_found") return null;
    throw err;
  }
}

interface Shown {
  secret?: string;
  notice?: { kind: "ok" | "error"; text: string; status?: number };
  draft?: { url: string; events: string[]; enabled: boolean };
}

async function webhookPage(c: Ctx, shown: Shown = {}) {
  const ctx = c.get("ctx");
  const cursor = c.req.method === "GET" ? c.req.query("cursor") : undefined;
  const [hook, deliveries, stats] = await Promise.all([
    current(c),
    listWebhookDeliveries({ ctx, input: { limit: 20, cursor: cursor || null } }),
    webhookDeliveryStats({ ctx, input: { days: CHART_DAYS } }),
  ]);
  const csrf = c.get("csrf");
  const draft = shown.draft ?? {
    url: hook?.url ?? "",
    events: hook?.events ?? [...WEBHOOK_EVENTS],
    enabled: hook?.enabled ?? true,
  };
  return page(
    c,
    <Layout title="Webhook" chrome={chrome(c)} section="webhook">
      <PageHead
        title="Webhook"
        lead="Mnemo calls your endpoint when an ingest job finishes, signed with the secret below."
      />
      {shown.notice ? <Notice kind={shown.notice.kind}>{shown.notice.text}</Notice> : null}
      {shown.secret ? (
        <Notice kind="ok">
          <p>
            <strong>Signing secret — copy it now, it is shown only this once:</strong>
          </p>
          <code class="secret" id="webhook-secret">
            {shown.secret}
          </code>
        </Notice>
      ) : null}
      <div class="grid two">
        <form method="post" action="/console/webhook" class="card stack">
          <h2>{hook ? "Configuration" : "Set up a webhook"}</h2>
          <Csrf token={csrf} />
          <div class="field wide">
            <label for="w-url">Endpoint URL</label>
            <input
              id="w-url"
              name="url"
              type="url"
              required
              value={draft.url}
              placeholder="https://example.com/hooks/mnemo"
            />
          </div>
          <fieldset class="field">
            <legend>Events</legend>
            <div class="checks">
              {WEBHOOK_EVENTS.map((e) => (
                <label>
                  <input type="checkbox" name="events" value={e} checked={draft.events.includes(e)} />
                  <code>{e}</code>
                </label>
              ))}
            </div>
          </fieldset>
          <label class="check">
            <input type="checkbox" name="enabled" value="1" checked={draft.enabled} />
            Enabled
          </label>
          <div class="inline">
            <button type="submit" class="btn primary">
              {hook ? "Save" : "Create webhook"}
            </button>
          </div>
        </form>
        <Card title="Secret">
          {hook ? (
            <>
              <p class="mono">{hook.secret}</p>
              <p class="muted small">
                Verify each delivery's <code>X-Webhook-Signature</code> with it. Rotating mints a new secret
                at once; the old one stops verifying.
              </p>
              <form method="post" action="/console/webhook/rotate" class="inline">
                <Csrf token={csrf} />
                <button type="submit" class="btn">
                  Rotate secret
                </button>
              </form>
              <form method="post" action="/console/webhook/remove" class="inline end">
                <Csrf token={csrf} />
                <button type="submit" class="btn ghost small danger-text">
                  Remove webhook
                </button>
              </form>
            </>
          ) : (
            <p class="muted">The secret is minted when you create the webhook and shown once.</p>
          )}
        </Card>
      </div>
      <Card title={`Deliveries, last ${CHART_DAYS} days`}>
        <BarChart
          label="Webhook deliveries per day"
          labels={stats.days.map((d) => d.day)}
          series={[
            { name: "succeeded", cls: "ok", values: stats.days.map((d) => d.delivered) },
            { name: "failed", cls: "bad", values: stats.days.map((d) => d.failed) },
          ]}
        />
      </Card>
      <Card title="Recent deliveries" id="deliveries">
        {deliveries.data.length === 0 ? (
          <Empty title="No deliveries yet.">
            {hook
              ? "They appear here when an ingest job finishes. Submit one on the Ingest page to try it."
              : "Set up a webhook first."}
          </Empty>
        ) : (
          <>
            <div class="table-wrap">
              <table class="rows">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Event</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Attempt</th>
                    <th scope="col">HTTP</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Job · error</th>
                  </tr>
                </thead>
                <tbody>
                  {deliveries.data.map((d) => (
                    <tr>
                      <td class="nowrap">
                        <Time iso={d.created_at} />
                      </td>
                      <td>
                        <code>{d.event}</code>
                      </td>
                      <td>
                        <Status value={d.outcome} />
                      </td>
                      <td>{d.attempt}</td>
                      <td class="mono">{d.status_code ?? "—"}</td>
                      <td class="nowrap">{d.duration_ms === null ? "—" : `${d.duration_ms} ms`}</td>
                      <td class="small">
                        {d.job_id ? (
                          <a class="mono" href={`/console/ingest/jobs/${d.job_id}`}>
                            {d.job_id.slice(0, 12)}…
                          </a>
                        ) : null}
                        {d.error ? <span class="muted"> {d.error}</span> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {deliveries.next_cursor ? (
              <nav class="pager">
                <span />
                <a
                  href={`/console/webhook?cursor=${encodeURIComponent(deliveries.next_cursor)}#deliveries`}
                  rel="next"
                >
                  Older deliveries →
                </a>
              </nav>
            ) : null}
          </>
        )}
      </Card>
    </Layout>,
    shown.notice?.kind === "error" ? (shown.notice.status ?? 422) : 200,
  );
}

async function readDraft(c: Ctx) {
  const f = await readForm(c);
  return { url: one(f, "url") ?? "", events: many(f, "events"), enabled: f.enabled !== undefined };
}

export function registerWebhookPages(app: ConsoleApp) {
  // The webhook is the organisation's: a user's key is told so once, whatever it tried (a save
  // was refused with the message of the deliveries list the page then failed to show).
  const orgWide = async (c: Ctx, next: () => Promise<void>) => {
    requireOrgWide(c.get("ctx").principal, "The webhook page");
    await next();
  };
  app.use("/webhook", orgWide);
  app.use("/webhook/*", orgWide);
  app.get("/webhook", (c) => webhookPage(c));

  app.post("/webhook", async (c) => {
    const draft = await readDraft(c);
    try {
      // The events as the form offers them: none ticked, or one it does not offer, is refused in
      // the form's words (REST refuses an unknown event with 422; it was dropped here).
      const unknown = draft.events.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
      if (unknown.length > 0)
        throw new CoreError(
          "invalid_request",
          `Events: ${unknown.map((e) => JSON.stringify(excerpt(e, 64))).join(", ")} ${unknown.length === 1 ? "is not an event" : "are not events"} this service sends; tick among ${WEBHOOK_EVENTS.join(" and ")}.`,
          { field: "events" },
        );
      if (draft.events.length === 0)
        throw new CoreError(
          "invalid_request",
          "Events: tick at least one event; the webhook is called only for the events ticked.",
          { field: "events" },
        );
      const hook = await putWebhook({
        ctx: c.get("ctx"),
        input: { url: draft.url, events: draft.events, enabled: draft.enabled },
      });
      const fresh = hook.secret.includes("*") ? undefined : hook.secret;
      return webhookPage(c, {
        notice: { kind: "ok", text: "Webhook saved." },
        ...(fresh ? { secret: fresh } : {}),
      });
    } catch (err) {
      const said = inFormWords(err, { url: "Endpoint URL", events: "Events" });
      if (isCoreError(said) && said.status < 500)
        return webhookPage(c, { notice: { kind: "error", text: said.message, status: said.status }, draft });
      throw said;
    }
  });

  app.post("/webhook/rotate", async (c) => {
    const hook = await getWebhook({ ctx: c.get("ctx") });
    const rotated = await putWebhook({
      ctx: c.get("ctx"),
      input: { url: hook.url, events: hook.events, enabled: hook.enabled, rotateSecret: true },
    });
    return webhookPage(c, { notice: { kind: "ok", text: "Secret rotated." }, secret: rotated.secret });
  });

  app.post("/webhook/remove", async (c) => {
    await removeWebhook({ ctx: c.get("ctx") });
    return webhookPage(c, {
      notice: { kind: "ok", text: "Webhook removed: no more deliveries will be made." },
    });
  });
}
