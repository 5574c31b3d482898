-- Search and trigger.
--
-- Trigger matching is exact, but a path-valued trigger entity ("src/db/pool.ts") must also match
-- an action that names only its base name ("pool.ts"). Keeping the base names in a generated
-- column lets one GIN lookup (`trigger_keys && $1::text[]`) answer both, on every tool call.
CREATE FUNCTION mnemo_trigger_keys(entities text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
  SELECT DISTINCT k
  FROM unnest(entities) AS e, unnest(ARRAY[e, regexp_replace(e, '^.*[/\\]', '')]) AS k
  WHERE k <> ''
);

ALTER TABLE memories
  ADD COLUMN trigger_keys text[] GENERATED ALWAYS AS (mnemo_trigger_keys(trigger_entities)) STORED;
CREATE INDEX memories_trigger_keys_idx ON memories USING gin (trigger_keys)
  WHERE type IN ('lesson', 'procedure');

-- Full text also knows who said it: a fact extracted from a chat turn ("Researching adoption
-- agencies") often leaves the speaker out of its text, while questions name them ("What did
-- Caroline research?"). The speaker (details.source_role) joins the vector at lower weight, and
-- an artifact's title at the same weight as its text.
DROP INDEX memories_tsv_idx;
ALTER TABLE memories DROP COLUMN tsv;
ALTER TABLE memories ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english', coalesce(text, '')), 'A')
  || setweight(to_tsvector('english', coalesce(details ->> 'title', '')), 'A')
  || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C')
) STORED;
CREATE INDEX memories_tsv_idx ON memories USING gin (tsv);
