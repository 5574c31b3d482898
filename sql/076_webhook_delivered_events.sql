-- At most one delivered attempt per event: a delivery job run again after its worker died (having
-- recorded the receiver's 2xx but not yet told the queue) finds the record and does not post again.
CREATE INDEX webhook_deliveries_delivered_idx ON webhook_deliveries (org_id, event_id)
  WHERE outcome = 'delivered';
