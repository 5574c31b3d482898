import type { Queryable } from "./db.js";

export interface WebhookRow {
  org_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret_enc: string;
  secret_last_four: string;
  created_at: Date;
  updated_at: Date;
  /** Drawn anew when a change drops the queued deliveries (sql/095_webhook_drop_token.sql). */
  drop_token: string;
}

export interface DeliveryRow {
  id: string;
  org_id: string;
  event_id: string;
  event: string;
  job_id: string | null;
  url: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  outcome: "delivered" | "retrying" | "failed";
  next_attempt_at: Date | null;
  created_at: Date;
  /** created_at at full (microsecond) precision, for keyset cursors. */
  cursor_ts: string;
}

const COLS =
  "org_id, url, events, enabled, secret_enc, secret_last_four, created_at, updated_at, drop_token::text";

export async function findWebhook(db: Queryable, orgId: string): Promise<WebhookRow | undefined> {
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLS} FROM webhooks WHERE org_id = $1`, [orgId]);
  return rows[0];
}

/**
 * Creates or replaces the organisation's single config; `created_at` survives a replace, and so
 * does `drop_token` unless the replace disables the webhook or unsubscribes an event.
 */
export async function upsertWebhook(
  db: Queryable,
  w: Pick<WebhookRow, "org_id" | "url" | "events" | "enabled" | "secret_enc" | "secret_last_four">,
): Promise<WebhookRow> {
  const { rows } = await db.query<WebhookRow>(
    `INSERT INTO webhooks (org_id, url, events, enabled, secret_enc, secret_last_four)
     VALUES ($1, $2, $3::text[], $4, $5, $6)
     ON CONFLICT (org_id) DO UPDATE SET url = EXCLUDED.url, events = EXCLUDED.events,
       enabled = EXCLUDED.enabled, secret_enc = EXCLUDED.secret_enc,
       secret_last_four = EXCLUDED.secret_last_four, updated_at = now(),
       drop_token = CASE WHEN (webhooks.enabled AND NOT EXCLUDED.enabled) OR NOT (webhooks.events <@ EXCLUDED.events)
                         THEN gen_random_uuid() ELSE webhooks.drop_token END
     RETURNING ${COLS}`,
    [w.org_id, w.url, w.events, w.enabled, w.secret_enc, w.secret_last_four],
  );
  return rows[0]!;
}

export async function deleteWebhook(db: Queryable, orgId: string): Promise<void> {
  await db.query("DELETE FROM webhooks WHERE org_id = $1", [orgId]);
}

/** The URL of this event's latest recorded attempt, or undefined when none is on record. */
export async function lastDeliveryUrl(
  db: Queryable,
  orgId: string,
  eventId: string,
): Promise<string | undefined> {
  const { rows } = await db.query<{ url: string }>(
    "SELECT url FROM webhook_deliveries WHERE org_id = $1 AND event_id = $2 ORDER BY created_at DESC LIMIT 1",
    [orgId, eventId],
  );
  return rows[0]?.url;
}

/** Whether an attempt of this event was already acknowledged by the receiver (and recorded). */
export async function wasDelivered(db: Queryable, orgId: string, eventId: string): Promise<boolean> {
  const { rows } = await db.query(
    "SELECT 1 FROM webhook_deliveries WHERE org_id = $1 AND event_id = $2 AND outcome = 'delivered' LIMIT 1",
    [orgId, eventId],
  );
  return rows.length > 0;
}

/** `retry_in_seconds` sets next_attempt_at from the same clock as created_at (null: no retry). */
export async function insertDelivery(
  db: Queryable,
  d: Omit<DeliveryRow, "created_at" | "cursor_ts" | "next_attempt_at"> & { retry_in_seconds: number | null },
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries
       (id, org_id, event_id, event, job_id, url, attempt, status_code, error, duration_ms, outcome,
        next_attempt_at)
     VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::int, $8::int, $9, $10::int, $11,
             now() + $12::float8 * interval '1 second')`,
    [
      d.id,
      d.org_id,
      d.event_id,
      d.event,
      d.job_id,
      d.url,
      d.attempt,
      d.status_code,
      d.error,
      d.duration_ms,
      d.outcome,
      d.retry_in_seconds,
    ],
  );
}

/** Newest first; `after` is the (created_at, id) of the last row of the previous page. */
export async function listDeliveries(
  db: Queryable,
  orgId: string,
  limit: number,
  after: { ts: string; id: string } | null,
): Promise<DeliveryRow[]> {
  const { rows } = await db.query<DeliveryRow>(
    `SELECT id, org_id, event_id, event, job_id, url, attempt, status_code, error, duration_ms, outcome,
            next_attempt_at, created_at,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_ts
       FROM webhook_deliveries
      WHERE org_id = $1
        AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
      ORDER BY created_at DESC, id DESC
      LIMIT $4::int`,
    [orgId, after?.ts ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/** Delivery attempts per UTC day since `days - 1` days ago: delivered, and not (failed or retrying). */
/**
 * Deliveries per UTC day: acknowledged ones, and those that ended failed (an attempt that will be
 * retried is neither yet).
 */
export async function deliveryCountsByDay(
  db: Queryable,
  orgId: string,
  days: number,
): Promise<{ day: string; delivered: number; failed: number }[]> {
  const { rows } = await db.query<{ day: string; delivered: number; failed: number }>(
    `SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
            count(w.id) FILTER (WHERE w.outcome = 'delivered')::int AS delivered,
            count(w.id) FILTER (WHERE w.outcome = 'failed')::int AS failed
       FROM generate_series((now() AT TIME ZONE 'UTC')::date - ($2::int - 1), (now() AT TIME ZONE 'UTC')::date,
                            interval '1 day') AS d(day)
       LEFT JOIN webhook_deliveries w
         ON w.org_id = $1 AND (w.created_at AT TIME ZONE 'UTC')::date = d.day::date
      GROUP BY d.day ORDER BY d.day`,
    [orgId, days],
  );
  return rows;
}

/** Deletes delivery records older than `before` (retention). */
export async function deleteDeliveriesBefore(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM webhook_deliveries WHERE created_at < $1", [before]);
  return rowCount ?? 0;
}

/** An event's body as the queue keeps it (`data.body`, the string that is signed), as jsonb. */
const BODY = "(data ->> 'body')::jsonb";
/** The body of the delivery job being updated (`q`), as it is once its row is locked. */
const NOW = "(q.data ->> 'body')::jsonb";
/** The entries of an event's body (a jsonb expression) that name memories: `memories`, `memories_updated`. */
const namedEntries = (body: string) => `
    CASE WHEN jsonb_typeof(${body} -> 'memories') = 'array' THEN ${body} -> 'memories' ELSE '[]' END
    || CASE WHEN jsonb_typeof(${body} -> 'memories_updated') = 'array' THEN ${body} -> 'memories_updated' ELSE '[]' END`;

/**
 * The webhook deliveries of a forgotten scope still queued (a retry waiting its turn) or kept by
 * the queue after their last attempt: those of its ingest jobs (`jobIds`), and, once the job's
 * record is gone (job retention), those whose body names the scope's user and conversation
 * (`scope`: the axes an event's body carries; with another axis the job is the only link, and
 * rewriteQueuedEvents still takes the deleted memories out of the body). Their bodies (which hold
 * the memories' text) are neither sent nor kept after the forget. A dropped retry of an event
 * already attempted is recorded as a failed attempt, as a retry dropped at its turn is
 * (src/webhooks/deliver.ts), so the event's last record does not read "retrying" for ever. An
 * attempt running at that moment ends as it would have, marked so that it queues no retry, and
 * the body the queue keeps of it is emptied.
 */
export async function dropDeliveriesOfScope(
  db: Queryable,
  orgId: string,
  jobIds: readonly string[],
  scope: { user_id?: string; conv_id?: string; agent_id?: string; app_id?: string },
): Promise<number> {
  if (!(await hasQueue(db))) return 0;
  const byBody =
    !scope.agent_id && !scope.app_id && (scope.user_id !== undefined || scope.conv_id !== undefined);
  // The scope's deliveries: of its jobs, or (byBody) naming its user and conversation.
  const ofScope = `name = 'webhook-delivery' AND data ->> 'orgId' = $1
         AND (data ->> 'jobId' = ANY($2::text[])
              OR ($3::boolean AND ($4::text IS NULL OR ${BODY} ->> 'user_id' = $4)
                  AND ($5::text IS NULL OR ${BODY} ->> 'conv_id' = $5)))`;
  // The scope's jobs are locked first, and dropped or marked by id in a statement of their own. In
  // one statement, a job the queue fetched (made active) while it ran escaped both: the delete
  // re-read it as active and left it, the mark's snapshot still saw it waiting and did not match
  // it, and the retry was sent naming the erased user. Locked, a job stays as it is (the queue's
  // fetch skips locked jobs) and the next statement sees it as it is. A lock that waited for an
  // attempt recording its outcome does not see the retry that attempt queued (its snapshot is
  // older): the retries of the events locked are looked for again until none is new.
  const ids: string[] = [];
  const events = new Set<string>();
  for (let first = true; ; first = false) {
    const { rows } = first
      ? await db.query<{ id: string; event_id: string }>(
          `SELECT id::text, data ->> 'eventId' AS event_id FROM pgboss.job WHERE ${ofScope} FOR UPDATE`,
          [orgId, jobIds, byBody, scope.user_id ?? null, scope.conv_id ?? null],
        )
      : await db.query<{ id: string; event_id: string }>(
          `SELECT id::text, data ->> 'eventId' AS event_id FROM pgboss.job
            WHERE name = 'webhook-delivery' AND data ->> 'orgId' = $1 AND data ->> 'eventId' = ANY($2::text[])
              AND NOT (id = ANY($3::uuid[])) FOR UPDATE`,
          [orgId, [...events], ids],
        );
    if (rows.length === 0) break;
    for (const r of rows) {
      ids.push(r.id);
      events.add(r.event_id);
    }
  }
  if (ids.length === 0) return 0;
  const locked = "name = 'webhook-delivery' AND id = ANY($2::uuid[])";
  const { rows } = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM pgboss.job WHERE state <> 'active' AND ${locked}
       RETURNING id, state, data),
     -- An attempt running now ends as it would have, but queues no retry (src/webhooks/deliver.ts).
     -- The queue keeps its row an hour after it ends: its body (the event's user and conversation)
     -- is emptied now; its worker posts the copy it holds, and a rerun of it posts nothing.
     marked AS (
       UPDATE pgboss.job SET data = data || jsonb_build_object('forgotten', true, 'body', '{}')
        WHERE state = 'active' AND ${locked}
       RETURNING id),
     unindexed AS (
       DELETE FROM webhook_event_memories s
        WHERE s.delivery_job_id IN (SELECT id FROM gone UNION ALL SELECT id FROM marked)),
     recorded AS (
       INSERT INTO webhook_deliveries
         (id, org_id, event_id, event, job_id, url, attempt, status_code, error, duration_ms, outcome)
       SELECT gen_random_uuid(), $1, g.data ->> 'eventId', g.data ->> 'event', g.data ->> 'jobId', last.url,
              (g.data ->> 'attempt')::int, NULL,
              'not sent: its memories were forgotten; the delivery was dropped', 0, 'failed'
         FROM gone g CROSS JOIN LATERAL (
           SELECT w.url FROM webhook_deliveries w
            WHERE w.org_id = $1 AND w.event_id = g.data ->> 'eventId'
            ORDER BY w.created_at DESC, w.id DESC LIMIT 1) last
        WHERE g.state IN ('created', 'retry'))
     SELECT count(*)::int AS n FROM gone`,
    [orgId, ids],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The events still queued or kept by the queue that name these memories, rewritten as the jobs'
 * results are (rewriteJobReports): a deleted memory (`removed`) leaves `memories` and
 * `memories_updated`, and a rewritten episode (`texts`) reads as it does now. Found by the ids
 * their bodies name (webhook_event_memories, sql/107), so also after the job's own record is gone.
 * A retry sent after a memory's delete carried its text again. Only the bodies of the events
 * found are read: parsing every kept event of the organisation cost a delete 25-40 µs per kept
 * event (21,000, an hour of a busy organisation's attempts: about 1 s a single delete).
 */
export async function rewriteQueuedEvents(
  db: Queryable,
  orgId: string,
  removed: readonly string[],
  texts: ReadonlyArray<{ id: string; text: string }>,
): Promise<void> {
  if ((removed.length === 0 && texts.length === 0) || !(await hasQueue(db))) return;
  const list = (key: string, rewrite: boolean) => `coalesce((
      SELECT jsonb_agg(${rewrite ? "CASE WHEN t.text IS NULL THEN x.e ELSE jsonb_set(x.e, '{text}', to_jsonb(t.text)) END" : "x.e"} ORDER BY x.n)
      FROM jsonb_array_elements(${NOW} -> '${key}') WITH ORDINALITY x(e, n)
        ${rewrite ? "LEFT JOIN unnest($3::text[], $4::text[]) t(id, text) ON t.id = x.e ->> 'id'" : ""}
      WHERE NOT (x.e ->> 'id' = ANY($2::text[]))), '[]'::jsonb)`;
  // The body is parsed in the materialized list of the events found, never as a filter the
  // planner might apply to the queue's other rows. The new body is made from the row as it is
  // when locked (NOW, q.data), not from that list: a delete that waited for another's rewrite of
  // the same event would otherwise write back the body as it read it, with the other's memories.
  // An attempt running now is rewritten too: what the queue keeps of it after, and what it sends
  // when the queue runs it again (its worker died), are then without them; its own worker sends
  // what it holds, and its retry is made by bodyForRetry.
  await db.query(
    `WITH named AS MATERIALIZED (
       SELECT q.name, q.id, ${BODY} AS body
         FROM (SELECT DISTINCT delivery_job_id FROM webhook_event_memories
                WHERE org_id = $1 AND memory_id = ANY($2::text[] || $3::text[])) s
         JOIN pgboss.job q ON q.name = 'webhook-delivery' AND q.id = s.delivery_job_id
        WHERE q.data ->> 'orgId' = $1 AND q.data ->> 'event' = 'memory.learning.completed')
     UPDATE pgboss.job q SET data = jsonb_set(q.data, '{body}', to_jsonb((${NOW}
         || jsonb_build_object('memories', ${list("memories", false)},
                               'memories_updated', ${list("memories_updated", true)}))::text))
       FROM named b
      WHERE q.name = b.name AND q.id = b.id
        AND jsonb_typeof(b.body -> 'memories') = 'array' AND jsonb_typeof(b.body -> 'memories_updated') = 'array'
        AND ARRAY(SELECT e ->> 'id' FROM jsonb_array_elements(${namedEntries("b.body")}) e) && ($2::text[] || $3::text[])`,
    [orgId, removed, texts.map((t) => t.id), texts.map((t) => t.text)],
  );
  // The deleted ones no longer name any event.
  if (removed.length)
    await db.query("DELETE FROM webhook_event_memories WHERE org_id = $1 AND memory_id = ANY($2::text[])", [
      orgId,
      removed,
    ]);
}

/**
 * An event's body as a retry of it may carry it: without the memories deleted since (and an
 * episode a delete rewrote as it reads now), as rewriteQueuedEvents leaves queued events. The
 * attempt running while a memory was deleted holds the body as its worker took it (the delete
 * rewrites the queue's row, not that copy), and its retry, queued from the copy, carried the
 * deleted memory's text again. The rows it names are locked (FOR SHARE) until the retry is queued,
 * so a delete that comes after waits for it and then finds it by the memories it names (a lock on
 * the attempt's own row would not do: the delete's rewrite reads the index before it waits). The
 * body unchanged where nothing was.
 */
export async function bodyForRetry(db: Queryable, orgId: string, body: string): Promise<string> {
  let parsed: { memories?: unknown; memories_updated?: unknown };
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  type Entry = { id?: unknown; type?: unknown; text?: unknown };
  const lists = [parsed.memories, parsed.memories_updated].map((l) =>
    Array.isArray(l) ? (l as Entry[]) : [],
  );
  const ids = [...new Set(lists.flat().map((e) => e?.id))].filter(
    (id): id is string => typeof id === "string" && /^[0-9a-f-]{36}$/i.test(id),
  );
  if (ids.length === 0) return body;
  const { rows } = await db.query<{ id: string; text: string }>(
    "SELECT id::text, text FROM memories WHERE org_id = $1 AND id = ANY($2::uuid[]) FOR SHARE",
    [orgId, ids],
  );
  const now = new Map<string, string | null>(rows.map((r) => [r.id, r.text]));
  // A deleted memory no longer names any event (rewriteQueuedEvents, in the delete's transaction);
  // an id the event still names and no row holds was never one of ours: left as it is.
  const absent = ids.filter((id) => !now.has(id));
  if (absent.length) {
    const named = await db.query<{ id: string }>(
      "SELECT DISTINCT memory_id AS id FROM webhook_event_memories WHERE org_id = $1 AND memory_id = ANY($2::text[])",
      [orgId, absent],
    );
    for (const { id } of named.rows) now.set(id, null);
  }
  let changed = false;
  const kept = (list: Entry[], rewrite: boolean) =>
    list.flatMap((e) => {
      const text = typeof e?.id === "string" ? now.get(e.id) : undefined;
      if (text === undefined) {
        changed = true;
        return [];
      }
      if (text === null) return [e];
      if (rewrite && e.type === "episode" && typeof e.text === "string" && e.text !== text) {
        changed = true;
        return [{ ...e, text }];
      }
      return [e];
    });
  const memories = kept(lists[0]!, false);
  const memoriesUpdated = kept(lists[1]!, true);
  if (!changed) return body;
  return JSON.stringify({
    ...parsed,
    ...(Array.isArray(parsed.memories) ? { memories } : {}),
    ...(Array.isArray(parsed.memories_updated) ? { memories_updated: memoriesUpdated } : {}),
  });
}

/**
 * Records which memories a queued delivery attempt's body names (webhook_event_memories), in the
 * transaction that queues it, for rewriteQueuedEvents to find it by them.
 */
export async function indexQueuedEvent(
  db: Queryable,
  orgId: string,
  deliveryJobId: string,
  body: string,
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_event_memories (org_id, memory_id, delivery_job_id)
     SELECT DISTINCT $1, e ->> 'id', $2::uuid
       FROM jsonb_array_elements(${namedEntries("$3::jsonb")}) e
      WHERE e ->> 'id' IS NOT NULL
     ON CONFLICT DO NOTHING`,
    [orgId, deliveryJobId, body],
  );
}

/** Index rows of delivery jobs that pg-boss has deleted since (an hour after their attempt). */
export async function deleteIndexOfGoneDeliveries(db: Queryable): Promise<number> {
  if (!(await hasQueue(db))) return 0;
  const { rowCount } = await db.query(
    `DELETE FROM webhook_event_memories s WHERE NOT EXISTS (
       SELECT 1 FROM pgboss.job q WHERE q.name = 'webhook-delivery' AND q.id = s.delivery_job_id)`,
  );
  return rowCount ?? 0;
}

/** Whether the queue's tables exist (a database the queue never started on has none). */
async function hasQueue(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ t: string | null }>("SELECT to_regclass('pgboss.job')::text AS t");
  return Boolean(rows[0]?.t);
}
