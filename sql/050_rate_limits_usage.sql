-- Rate limiting and usage (issue 8).

-- One row per rate-limited subject (an API key id, or `jwt:<org>:<user>` for identity-provider
-- tokens) and UTC day: the day's admitted requests and the current minute window. One upsert per
-- request on the database clock keeps it, so every API process shares the same counts; the same
-- row is the usage count of requests, so counting costs no second write. Row locks are per
-- subject, never per organisation.
CREATE TABLE rate_limit_counters (
  subject text NOT NULL,
  day date NOT NULL,
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  -- '' for credentials that are not API keys
  key_id text NOT NULL DEFAULT '',
  day_count integer NOT NULL,
  minute_start timestamptz NOT NULL,
  minute_count integer NOT NULL,
  -- the clock reading and verdict of the last hit, returned to the caller
  seen_at timestamptz NOT NULL,
  admitted boolean NOT NULL,
  PRIMARY KEY (subject, day)
);
CREATE INDEX rate_limit_counters_org_idx ON rate_limit_counters (org_id, day);

-- Other operation counts per organisation, UTC day and API key ('' for credentials that are not
-- keys): one row per key per day, so busy organisations with several keys never share a hot row.
CREATE TABLE usage_counters (
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  day date NOT NULL,
  key_id text NOT NULL DEFAULT '',
  messages bigint NOT NULL DEFAULT 0,
  searches bigint NOT NULL DEFAULT 0,
  requests bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, day, key_id)
);
