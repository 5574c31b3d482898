-- The user's name (issue 17): ingest reads the newest "The user's name is X." profile fact of a
-- user before extracting unnamed user turns; this partial index makes that one probe.
CREATE INDEX memories_user_name_idx ON memories (org_id, user_id, created_at)
  WHERE type = 'fact' AND status = 'active' AND text LIKE 'The user''s name is %';
