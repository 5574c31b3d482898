-- The stored-row counts of `GET /v1/usage` (active facts, episodes, artifacts, directives) kept
-- per organisation by the statements that change them, as the full-text statistics are
-- (065_bm25_sparse.sql): counting them on every call read the organisation's whole slice of
-- `memories` (0.6-1.6 s at 157,560 memories, holding the embedded database's one session).
-- Sharded like text_doc_stats, under the same advisory lock, so concurrent writers of one
-- organisation rarely touch the same row and never wait on each other in two orders; readers add
-- the shards up.
CREATE TABLE storage_counts (
  org_id text NOT NULL,
  shard smallint NOT NULL,
  facts bigint NOT NULL,
  episodes bigint NOT NULL,
  artifacts bigint NOT NULL,
  directives bigint NOT NULL,
  PRIMARY KEY (org_id, shard)
);

-- What a row counts as: an active fact, or an episode, artifact or directive (lesson, procedure)
-- whose status is not superseded; NULL for a row that counts as nothing.
CREATE FUNCTION mnemo_storage_kind(type text, status text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN type = 'fact' THEN CASE WHEN status = 'active' THEN 'facts' END
    WHEN coalesce(status, 'active') <> 'active' THEN NULL
    WHEN type = 'episode' THEN 'episodes'
    WHEN type = 'artifact' THEN 'artifacts'
    WHEN type IN ('lesson', 'procedure') THEN 'directives'
  END
$$;

-- Statement level, after the write, as the text statistics' trigger: the delta as JSON, the
-- organisations' shard locks in order, then the rows in order.
CREATE FUNCTION mnemo_storage_counts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  my_shard smallint := pg_backend_pid() % 16;
  delta jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(d) INTO delta FROM (
      SELECT org_id, mnemo_storage_kind(type, status) AS kind, count(*) AS n FROM new_rows GROUP BY 1, 2) d
    WHERE d.kind IS NOT NULL;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(d) INTO delta FROM (
      SELECT org_id, mnemo_storage_kind(type, status) AS kind, -count(*) AS n FROM old_rows GROUP BY 1, 2) d
    WHERE d.kind IS NOT NULL;
  ELSE
    SELECT jsonb_agg(d) INTO delta FROM (
      SELECT org_id, kind, sum(k) AS n FROM (
        SELECT n.org_id, mnemo_storage_kind(n.type, n.status) AS kind, 1 AS k, mnemo_storage_kind(o.type, o.status) AS was
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        UNION ALL
        SELECT o.org_id, mnemo_storage_kind(o.type, o.status), -1, mnemo_storage_kind(n.type, n.status)
        FROM new_rows n JOIN old_rows o ON o.id = n.id) c
      WHERE kind IS DISTINCT FROM was
      GROUP BY 1, 2) d
    WHERE d.kind IS NOT NULL AND d.n <> 0;
  END IF;
  IF delta IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtext('mnemo_text_stats:' || o), my_shard)
  FROM (SELECT DISTINCT d ->> 'org_id' AS o FROM jsonb_array_elements(delta) AS d ORDER BY 1) x;
  INSERT INTO storage_counts AS s (org_id, shard, facts, episodes, artifacts, directives)
  SELECT x.org_id, my_shard,
    coalesce(sum(x.n) FILTER (WHERE x.kind = 'facts'), 0), coalesce(sum(x.n) FILTER (WHERE x.kind = 'episodes'), 0),
    coalesce(sum(x.n) FILTER (WHERE x.kind = 'artifacts'), 0), coalesce(sum(x.n) FILTER (WHERE x.kind = 'directives'), 0)
  FROM jsonb_to_recordset(delta) AS x(org_id text, kind text, n bigint)
  GROUP BY x.org_id ORDER BY x.org_id
  ON CONFLICT (org_id, shard) DO UPDATE SET
    facts = s.facts + EXCLUDED.facts, episodes = s.episodes + EXCLUDED.episodes,
    artifacts = s.artifacts + EXCLUDED.artifacts, directives = s.directives + EXCLUDED.directives;
  RETURN NULL;
END;
$$;
CREATE TRIGGER memories_storage_counts_insert AFTER INSERT ON memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mnemo_storage_counts();
CREATE TRIGGER memories_storage_counts_update AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_storage_counts();
CREATE TRIGGER memories_storage_counts_delete AFTER DELETE ON memories
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mnemo_storage_counts();

-- The rows already stored.
INSERT INTO storage_counts (org_id, shard, facts, episodes, artifacts, directives)
SELECT org_id, 0,
  count(*) FILTER (WHERE mnemo_storage_kind(type, status) = 'facts'),
  count(*) FILTER (WHERE mnemo_storage_kind(type, status) = 'episodes'),
  count(*) FILTER (WHERE mnemo_storage_kind(type, status) = 'artifacts'),
  count(*) FILTER (WHERE mnemo_storage_kind(type, status) = 'directives')
FROM memories GROUP BY org_id;
