-- Rate limiting and usage (issue 8).

-- One row per rate-limited subject (an API key id, or `jwt:<org>:<user>` for identity-provider
-- tokens): the current minute window and the current UTC day, updated by one upsert per request
-- on the database clock, so every API process shares the same counts. A row lock is per subject,
-- never per organisation.
CREATE TABLE rate_limit_counters (
  subject text PRIMARY KEY,
  minute_start timestamptz NOT NULL,
  minute_count integer NOT NULL,
  day date NOT NULL,
  day_count integer NOT NULL,
  -- the clock reading and verdict of the last hit, returned to the caller
  seen_at timestamptz NOT NULL,
  admitted boolean NOT NULL
);

-- Operation counts per organisation, UTC day and API key ('' for credentials that are not keys):
-- one row per key per day, so busy organisations with several keys never share one hot row.
CREATE TABLE usage_counters (
  org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
  day date NOT NULL,
  key_id text NOT NULL DEFAULT '',
  messages bigint NOT NULL DEFAULT 0,
  searches bigint NOT NULL DEFAULT 0,
  requests bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, day, key_id)
);
