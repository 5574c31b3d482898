-- Delivery attempts: what became of each one, and when the next is due (retrying only).
ALTER TABLE webhook_deliveries
  ADD COLUMN outcome text NOT NULL DEFAULT 'failed'
    CHECK (outcome IN ('delivered', 'retrying', 'failed')),
  ADD COLUMN next_attempt_at timestamptz;
