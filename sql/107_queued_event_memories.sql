-- The memories each webhook delivery job (pgboss.job, queue `webhook-delivery`) names in its body,
-- one row per memory, written in the transaction that queues the attempt (src/db/webhooks.ts
-- indexQueuedEvent). A delete takes its memories out of the queued and kept events that name
-- them (rewriteQueuedEvents), which found them by parsing every kept event's body of the
-- organisation: 21,000 kept events (an hour of completed attempts, each failed attempt a job of
-- its own) made a single delete about 1 s on PostgreSQL, and a 5,000-memory forget 11 of its 14 s.
-- pg-boss owns its schema, so the index of the bodies is a table of ours. Its rows go with their
-- job: dropped by a forget (dropDeliveriesOfScope), or, once pg-boss deleted the job, by the
-- maintenance sweep (deleteIndexOfGoneDeliveries).
CREATE TABLE webhook_event_memories (
  org_id text NOT NULL,
  memory_id text NOT NULL,
  delivery_job_id uuid NOT NULL,
  PRIMARY KEY (org_id, memory_id, delivery_job_id)
);
CREATE INDEX webhook_event_memories_job_idx ON webhook_event_memories (delivery_job_id);

-- A job's body as jsonb, or null where it is not JSON (the service writes none such, but an
-- upgrade must not stop at start on one: such an event names no memory).
CREATE FUNCTION mnemo_jsonb_or_null(body text) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN body::jsonb;
EXCEPTION WHEN others THEN
  RETURN NULL;
END $$;

-- The events already queued or kept when this runs (none on a database the queue never started
-- on); callable again (it adds only what is missing).
CREATE OR REPLACE FUNCTION mnemo_index_queued_events() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint := 0;
BEGIN
  IF to_regclass('pgboss.job') IS NOT NULL THEN
    INSERT INTO webhook_event_memories (org_id, memory_id, delivery_job_id)
    SELECT DISTINCT j.data ->> 'orgId', e ->> 'id', j.id
      FROM pgboss.job j
      CROSS JOIN LATERAL (SELECT mnemo_jsonb_or_null(j.data ->> 'body') AS body) b
      CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(b.body -> 'memories') = 'array' THEN b.body -> 'memories' ELSE '[]' END
        || CASE WHEN jsonb_typeof(b.body -> 'memories_updated') = 'array' THEN b.body -> 'memories_updated' ELSE '[]' END) e
     WHERE j.name = 'webhook-delivery' AND j.data ->> 'event' = 'memory.learning.completed'
       AND j.data ->> 'orgId' IS NOT NULL AND e ->> 'id' IS NOT NULL
    ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS n = ROW_COUNT;
  END IF;
  RETURN n;
END $$;
SELECT mnemo_index_queued_events();
