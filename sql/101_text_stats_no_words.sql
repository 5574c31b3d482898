-- A statement whose memories have no word of their own (an episode titled "It", summarised "It
-- is.", only stop words: a model may write that, an import may bring it) gave the statistics delta
-- a JSON null for its lexemes, and jsonb_to_recordset refused it ("cannot call
-- jsonb_to_recordset on a non-array"): the ingest job failed, and a delete of such a memory was a
-- 500. Such a statement changes the document counts and lengths only.
CREATE OR REPLACE FUNCTION mnemo_text_stats_apply(delta jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  my_shard smallint := pg_backend_pid() % 16;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('mnemo_text_stats:' || o), my_shard)
  FROM (SELECT DISTINCT d ->> 'org_id' AS o FROM jsonb_array_elements(delta -> 'docs') AS d ORDER BY 1) x;
  IF jsonb_typeof(delta -> 'lexemes') = 'array' THEN
    INSERT INTO text_lexeme_stats AS s (org_id, lexeme, shard, df)
    SELECT x.org_id, x.lexeme, my_shard, x.n
    FROM jsonb_to_recordset(delta -> 'lexemes') AS x(org_id text, lexeme text, n bigint)
    WHERE x.n <> 0
    ORDER BY x.org_id, x.lexeme
    ON CONFLICT (org_id, lexeme, shard) DO UPDATE SET df = s.df + EXCLUDED.df;
  END IF;
  INSERT INTO text_doc_stats AS s (org_id, shard, docs, total_len)
  SELECT x.org_id, my_shard, x.docs, x.len
  FROM jsonb_to_recordset(delta -> 'docs') AS x(org_id text, docs bigint, len bigint)
  ORDER BY x.org_id
  ON CONFLICT (org_id, shard) DO UPDATE SET docs = s.docs + EXCLUDED.docs, total_len = s.total_len + EXCLUDED.total_len;
END;
$$;
