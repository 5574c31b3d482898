-- Databases migrated by a version whose migration was later changed in place (a released
-- migration is never changed; these were, before that rule was kept) are brought to what the
-- changed migration makes. Each repair does nothing where the database is right already.
--
-- 1. sql/100 as first released (b9a2e5c) had no mnemo_cjk_tsv: every search of a database
--    migrated then failed ("function mnemo_cjk_tsv(text, unknown) does not exist"). The two
--    functions as sql/100 makes them now; they index the same lexemes as the first version, so no
--    row is indexed again.
CREATE OR REPLACE FUNCTION mnemo_cjk_tsv(body text, w "char") RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN body ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]'
    THEN setweight(to_tsvector('simple', mnemo_cjk_bigrams(body)), w)
  ELSE ''::tsvector
END;

CREATE OR REPLACE FUNCTION mnemo_memory_tsv(body text, details jsonb, context text, concepts text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN setweight(to_tsvector('english', coalesce(body, '')), 'A')
  || mnemo_cjk_tsv(body, 'A')
  || setweight(to_tsvector('english', coalesce(details ->> 'title', '')), 'A')
  || setweight(to_tsvector('english', coalesce(context, '')), 'B')
  || mnemo_cjk_tsv(context, 'B')
  || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C')
  || to_tsvector('english', coalesce(concepts, ''));

-- 2. sql/050 as first released (f78fa8d) keyed rate_limit_counters by subject alone, without
--    org_id and key_id: every request's limiter failed open (no limits, no daily caps) and
--    GET /v1/usage was a 500. Its rows count the current minute and day only: the table is made
--    again as sql/050 makes it now (today's counts start again).
DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = 'rate_limit_counters' AND column_name = 'org_id'
  ) THEN
    DROP TABLE rate_limit_counters;
    CREATE TABLE rate_limit_counters (
      subject text NOT NULL,
      day date NOT NULL,
      org_id text NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
      key_id text NOT NULL DEFAULT '',
      day_count integer NOT NULL,
      minute_start timestamptz NOT NULL,
      minute_count integer NOT NULL,
      seen_at timestamptz NOT NULL,
      admitted boolean NOT NULL,
      PRIMARY KEY (subject, day)
    );
    CREATE INDEX rate_limit_counters_org_idx ON rate_limit_counters (org_id, day);
  END IF;
END;
$$;

-- 3. sql/060 as first released (93412b9) left the text indexes with GIN's pending list, which
--    every search reads whole after a bulk load (a cost, not a fault).
ALTER INDEX memories_scope_tsv_idx SET (fastupdate = off);
ALTER INDEX memories_tsv_idx SET (fastupdate = off);
