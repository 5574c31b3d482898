-- Restated facts touch their row without rewriting every index (issue 12, ingest).
--
-- Ingest touches an existing row for every fact, artifact or directive it sees again (a new
-- updated_at and source turns in `details`). An UPDATE is HOT (heap-only: no index entry is
-- written) only when no indexed column changes and the row's page has room for the new version.
-- Neither held: the artifact-version index was an expression over `details`, so every touch
-- wrote a new entry into all seventeen indexes of memories, the HNSW graph among them (about
-- 2.5 ms a row on the benchmark server), and pages were filled to the brim.
--
-- The version chain's root moves to its own column, set by a row trigger from details.root_id
-- (artifacts only; nothing updates an artifact's root), and the index is rebuilt on it; and
-- new pages keep 30% free, room for one more version of a row (a 384-dimension row is about
-- 1.8 KB). Adding a nullable column rewrites nothing; existing pages fill up as before.
ALTER TABLE memories ADD COLUMN artifact_root text;

CREATE FUNCTION mnemo_memories_artifact_root() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.artifact_root := CASE WHEN NEW.type = 'artifact' THEN NEW.details ->> 'root_id' END;
  RETURN NEW;
END;
$$;
CREATE TRIGGER memories_artifact_root BEFORE INSERT OR UPDATE OF details, type ON memories
  FOR EACH ROW EXECUTE FUNCTION mnemo_memories_artifact_root();

UPDATE memories SET artifact_root = details ->> 'root_id' WHERE type = 'artifact' AND details ? 'root_id';

DROP INDEX memories_artifact_root_idx;
CREATE INDEX memories_artifact_root_idx ON memories (org_id, artifact_root) WHERE type = 'artifact';

ALTER TABLE memories SET (fillfactor = 70);
