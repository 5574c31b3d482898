import { randomUUID } from "node:crypto";
import { setTimeout } from "node:timers/promises";
import { request } from "undici";
import type { DeliveryJobData } from "../../jobs/queues.js";
import { type Ctx, inTx } from "../context.js";
import { type Queryable, untilReachable } from "../db/db.js";
import {
  bodyForRetry,
  findWebhook,
  indexQueuedEvent,
  insertDelivery,
  lastDeliveryUrl,
  wasDelivered,
} from "../db/webhooks.js";
import { isDatabaseUnavailable } from "../errors.js";
import { truncate } from "../truncate.js";
import { deliveryExpirySeconds } from "./enqueue.js";
import { decryptSecret, signBody } from "./secrets.js";
import { createSafeDispatcher, type Resolver, UnsafeAddressError } from "./url-safety.js";

export const USER_AGENT = "Mnemo-Webhooks/1.0";
/** A receiver's Retry-After is honoured up to this many seconds. */
const MAX_RETRY_AFTER_SECONDS = 3600;

export type AttemptResult =
  | { outcome: "skipped"; reason: string }
  | { outcome: "delivered" | "retrying" | "failed"; statusCode: number | null; error: string | null };

interface Sent {
  statusCode: number | null;
  error: string | null;
  retryable: boolean;
  retryAfterSeconds: number | null;
}

/**
 * One delivery attempt: re-reads the config (a webhook disabled, unsubscribed or removed since
 * the event stops here) and whether the event was already delivered, signs the stored body with
 * the current secret, posts it through the address-checking dispatcher, records the attempt, and schedules the next attempt as a new,
 * persisted job in the same transaction as the record. A record the database cannot take (away,
 * out of connections) is tried again until `signal` ends (untilRecorded), so a receiver that
 * answered is not posted the event again.
 */
export async function deliverWebhook({
  ctx,
  input,
  resolve,
  signal,
  deliveryJobId,
}: {
  ctx: Ctx;
  input: DeliveryJobData;
  resolve?: Resolver;
  /** Ends the record's retries (a shutdown, the job's expiry); a minute without one. */
  signal?: AbortSignal;
  /** The queue's job of this attempt, which a forget of its scope marks while it runs. */
  deliveryJobId?: string;
}): Promise<AttemptResult> {
  const { config } = ctx.deps;
  // The queue's rerun of an attempt a forget marked while it ran (its worker died).
  if (input.forgotten) return drop(ctx, input, "its memories were forgotten");
  const hook = await findWebhook(ctx.db, input.orgId);
  if (!hook) return drop(ctx, input, "webhook removed");
  if (!hook.enabled) return drop(ctx, input, "webhook disabled");
  if (!hook.events.includes(input.event)) return drop(ctx, input, "event no longer subscribed");
  // Disabled, unsubscribed or deleted since the event was queued, even if enabled or created again.
  if (input.dropToken && input.dropToken !== hook.drop_token)
    return drop(ctx, input, "webhook disabled, unsubscribed or re-created since the event");
  // The queue runs a job again when its worker died before completing it; if that worker had
  // already recorded the receiver's 2xx, the event is delivered: never post it twice.
  if (await wasDelivered(ctx.db, input.orgId, input.eventId)) return skip(ctx, input, "already delivered");

  const secret = readSecret(ctx, input.orgId, hook.secret_enc);
  const started = performance.now();
  // A secret the server key does not read (the key changed since it was stored) is an attempt
  // that failed, recorded and retried like any other: the next PUT mints a secret that reads.
  const sent =
    secret === undefined
      ? { statusCode: null, error: UNREADABLE_SECRET, retryable: true, retryAfterSeconds: null }
      : await post(hook.url, input, secret, {
          allowPrivate: config.MNEMO_WEBHOOK_ALLOW_PRIVATE,
          timeoutMs: config.MNEMO_WEBHOOK_TIMEOUT_MS,
          ...(resolve ? { resolve } : {}),
        });
  const durationMs = Math.round(performance.now() - started);

  const schedule = config.MNEMO_WEBHOOK_RETRY_SCHEDULE;
  const ok = sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300;
  const more = sent.retryable && input.attempt < schedule.length;
  const delay = more
    ? Math.max(schedule[input.attempt] ?? 0, Math.min(sent.retryAfterSeconds ?? 0, MAX_RETRY_AFTER_SECONDS))
    : 0;
  let outcome: "delivered" | "retrying" | "failed" = ok ? "delivered" : more ? "retrying" : "failed";
  let error = sent.error;

  // Once posted, the outcome is recorded whatever it takes: a record the database cannot take now
  // (out of reach, out of connections) is tried again once it answers, never the POST, which
  // would repeat the event to the receiver.
  const record = () =>
    inTx(ctx, async ({ db: tx }) => {
      // The retry's body first: it locks the memories it names (bodyForRetry) before the attempt's
      // own job row is read below, the order a forget takes them in (memories, then the scope's
      // delivery jobs). The other order deadlocked with a forget of the event's scope.
      const nextBody = more ? await bodyForRetry(tx, input.orgId, input.body) : input.body;
      // A forget of the event's scope while this attempt ran marked it (dropDeliveriesOfScope): no
      // retry, as for the retries it found queued.
      const retry = more && !(deliveryJobId && (await forgottenWhileRunning(tx, deliveryJobId)));
      if (more && !retry) {
        outcome = "failed";
        error = `${sent.error ?? `HTTP ${sent.statusCode}`}; not retried: its memories were forgotten`;
      }
      await insertDelivery(tx, {
        id: randomUUID(),
        org_id: input.orgId,
        event_id: input.eventId,
        event: input.event,
        job_id: input.jobId,
        url: hook.url,
        attempt: input.attempt,
        status_code: sent.statusCode,
        error,
        duration_ms: durationMs,
        outcome,
        retry_in_seconds: retry ? delay : null,
      });
      if (retry) {
        const next: DeliveryJobData = {
          ...input,
          attempt: input.attempt + 1,
          body: nextBody,
        };
        const queued = await ctx.deps.queue.send("webhook-delivery", next, {
          db: tx,
          startAfterSeconds: delay,
          expireInSeconds: deliveryExpirySeconds(config.MNEMO_WEBHOOK_TIMEOUT_MS),
          group: input.orgId,
        });
        if (queued) await indexQueuedEvent(tx, input.orgId, queued, next.body);
      }
    });
  await untilRecorded(ctx.db, record, signal ?? AbortSignal.timeout(RECORD_RETRY_WINDOW_MS));
  ctx.deps.metrics.webhookDeliveries.inc({ outcome, attempt: String(input.attempt) });
  ctx.log[ok ? "info" : "warn"](
    {
      eventId: input.eventId,
      attempt: input.attempt,
      statusCode: sent.statusCode,
      error,
      outcome,
    },
    "webhook delivery attempt",
  );
  return { outcome, statusCode: sent.statusCode, error };
}

/** How long a record is retried when the caller gives no signal. */
const RECORD_RETRY_WINDOW_MS = 60_000;

/**
 * Runs `record` until it succeeds. A failure because the database is unavailable (isDatabaseUnavailable)
 * is retried 1, 2, 4, 8 ... s apart (at most 8 s), each once the database answers again, until
 * `signal` ends it (then the last error is thrown and the queue runs the attempt again); any
 * other failure is thrown at once.
 */
/** Whether a forget marked the running attempt's job (locked until the retry is queued or not). */
async function forgottenWhileRunning(db: Queryable, deliveryJobId: string): Promise<boolean> {
  const { rows } = await db.query<{ forgotten: boolean }>(
    `SELECT coalesce((data ->> 'forgotten')::boolean, false) AS forgotten FROM pgboss.job
      WHERE name = 'webhook-delivery' AND id = $1::uuid FOR SHARE`,
    [deliveryJobId],
  );
  return rows[0]?.forgotten ?? false;
}

const RETRY_AT_ONCE = new Set(["40P01", "40001"]);

async function untilRecorded(
  db: Queryable,
  record: () => Promise<unknown>,
  signal: AbortSignal,
): Promise<void> {
  for (let delay = 1000; ; delay = Math.min(delay * 2, 8000)) {
    try {
      await record();
      return;
    } catch (err) {
      // A deadlock (the retry's lock on the memories it names met a forget deleting them) or a
      // serialization failure: the database chose this transaction to roll back; it goes again.
      if (RETRY_AT_ONCE.has((err as { code?: unknown }).code as string) && !signal.aborted) {
        await setTimeout(50, undefined, { signal }).catch(() => {});
        continue;
      }
      if (!isDatabaseUnavailable(err) || signal.aborted) throw err;
      try {
        await setTimeout(delay, undefined, { signal });
        await untilReachable(db, signal);
      } catch {
        throw err;
      }
    }
  }
}

const UNREADABLE_SECRET =
  "not sent: the webhook's signing secret cannot be decrypted with the server key (MNEMO_SECRET_KEY " +
  "changed since it was stored); PUT /v1/webhooks mints a new secret";

function readSecret(ctx: Ctx, orgId: string, stored: string): string | undefined {
  try {
    return decryptSecret(ctx.deps.secret, orgId, stored);
  } catch {
    return undefined;
  }
}

/**
 * A queued delivery a config change dropped. Once an attempt of the event is on record, the drop is
 * recorded too (a failed attempt naming why, nothing sent), so the event's last record does not
 * read "retrying" for ever.
 */
async function drop(ctx: Ctx, input: DeliveryJobData, reason: string): Promise<AttemptResult> {
  const last = await lastDeliveryUrl(ctx.db, input.orgId, input.eventId);
  if (last !== undefined) {
    await insertDelivery(ctx.db, {
      id: randomUUID(),
      org_id: input.orgId,
      event_id: input.eventId,
      event: input.event,
      job_id: input.jobId,
      url: last,
      attempt: input.attempt,
      status_code: null,
      error: `not sent: ${reason}; the delivery was dropped`,
      duration_ms: 0,
      outcome: "failed",
      retry_in_seconds: null,
    });
  }
  return skip(ctx, input, reason);
}

function skip(ctx: Ctx, input: DeliveryJobData, reason: string): AttemptResult {
  ctx.deps.metrics.webhookDeliveries.inc({ outcome: "skipped", attempt: String(input.attempt) });
  ctx.log.info({ reason }, "webhook delivery dropped");
  return { outcome: "skipped", reason };
}

async function post(
  url: string,
  input: DeliveryJobData,
  secret: string,
  options: { allowPrivate: boolean; timeoutMs: number; resolve?: Resolver },
): Promise<Sent> {
  if (!options.allowPrivate && !url.startsWith("https://")) {
    return { statusCode: null, error: "url is not https", retryable: false, retryAfterSeconds: null };
  }
  const dispatcher = createSafeDispatcher(options);
  try {
    const res = await request(url, {
      method: "POST",
      dispatcher,
      body: input.body,
      signal: AbortSignal.timeout(options.timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "x-webhook-event": input.event,
        "x-webhook-id": input.eventId,
        "x-webhook-signature": signBody(secret, input.body),
        "x-webhook-attempt": String(input.attempt),
      },
    });
    await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
    const s = res.statusCode;
    if (s >= 200 && s < 300) return { statusCode: s, error: null, retryable: false, retryAfterSeconds: null };
    // Spec section 6: any answer but a 2xx is retried, except a 4xx other than 408 and 429. A 3xx
    // is retried too (its redirect is never followed: the next attempt goes to the same URL).
    const retryable = s < 400 || s >= 500 || s === 408 || s === 429;
    const error = s >= 300 && s < 400 ? "redirect not followed" : `HTTP ${s}`;
    const retryAfter = s === 429 || s === 503 ? parseRetryAfter(res.headers["retry-after"]) : null;
    return { statusCode: s, error, retryable, retryAfterSeconds: retryAfter };
  } catch (err) {
    if (isUnsafe(err)) {
      return {
        statusCode: null,
        error: "refused: non-public address",
        retryable: false,
        retryAfterSeconds: null,
      };
    }
    return { statusCode: null, error: describe(err), retryable: true, retryAfterSeconds: null };
  } finally {
    dispatcher.destroy().catch(() => {});
  }
}

function isUnsafe(err: unknown): boolean {
  for (let e = err as any, i = 0; e && i < 5; e = e.cause, i++) {
    if (e instanceof UnsafeAddressError || e.code === "ERR_WEBHOOK_UNSAFE_ADDRESS") return true;
  }
  return false;
}

function describe(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e.name === "TimeoutError" || /TIMEOUT/.test(e.code ?? "")) return "timeout";
  return (e.code ? `${e.code}: ` : "") + truncate(e.message ?? String(err), 300);
}

/** Retry-After in seconds, from delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
