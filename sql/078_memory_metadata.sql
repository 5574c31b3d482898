-- Free-form metadata on memories (issue 14, spec 4.12): a JSON object sent with an ingest and stored
-- on every memory the job writes, shown on every memory and filterable (`metadata.<key>` in the
-- filter language). The default jsonb_ops GIN index serves containment (`@>`, what an equality on a
-- metadata key compiles to) and key existence (`?`, `$exists`).
ALTER TABLE memories ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
CREATE INDEX memories_metadata_idx ON memories USING gin (metadata);
