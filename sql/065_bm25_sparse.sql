-- Full text that scales (issue 12): BM25 as the inner product of two sparse vectors.
--
-- A memory keeps, beside its tsvector, a `bm25` sparse vector: one dimension per lexeme (a hash of
-- the lexeme), valued at the lexeme's saturated term frequency tf * (k1 + 1) / (tf + k1 * (1 - b +
-- b * dl / avgdl)), with k1 1.2 and b 0.3 (memories are short and alike in length; on LoCoMo b 0.3
-- beat the usual 0.75). A query is the sparse vector of its lexemes' IDF weights, taken from
-- per-organisation statistics kept here at write time, so `-(bm25 <#> query)` IS the BM25 score
-- and ranking a candidate costs one C inner product instead of unnesting its tsvector. How the
-- candidates are found is in src/db/memory-search.ts (textMatches).
--
-- The text index is one function, mnemo_memory_tsv: what it returns is what full text searches
-- and what BM25 counts. Weight labels A, B and C count a full occurrence; D (the label of a lexeme
-- given no weight) counts half, for terms added beside the text (concept expansions, say). To add
-- terms, replace the function and recompute: `UPDATE memories SET tsv = NULL` re-derives both.

CREATE FUNCTION mnemo_memory_tsv(body text, details jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN setweight(to_tsvector('english', coalesce(body, '')), 'A')
  || setweight(to_tsvector('english', coalesce(details ->> 'title', '')), 'A')
  || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C');

-- A lexeme's dimension: 1..999,999,999 from its hash. Two lexemes sharing one (about 5 pairs in
-- 100,000 distinct lexemes) add up; the ranking barely notices.
CREATE FUNCTION mnemo_lexeme_dim(lexeme text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (hashtext(lexeme) & 1073741823) % 999999999 + 1;

-- The document side: saturated term frequencies (k1 1.2, b 0.3) against the average length. A
-- lexeme's frequency counts its occurrences by label (see above; a stripped lexeme counts once).
-- PL/pgSQL, so its plan is cached across calls: it runs once per written row.
CREATE FUNCTION mnemo_bm25_doc(tsv tsvector, avgdl float8) RETURNS sparsevec
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (
    SELECT ('{' || string_agg(d || ':' || w, ',' ORDER BY d) || '}/1000000000')::sparsevec
    FROM (
      SELECT mnemo_lexeme_dim(u.lexeme) AS d,
        sum(f.tf * 2.2 / (f.tf + 1.2 * (0.7 + 0.3 * length(tsv) / greatest(avgdl, 1)))) AS w
      FROM unnest(tsv) AS u,
        LATERAL (SELECT coalesce(array_length(u.positions, 1), 1)
                   - 0.5 * coalesce(cardinality(array_positions(u.weights::text[], 'D')), 0) AS tf) f
      GROUP BY 1
    ) x
  );
END;
$$;

-- Per-organisation statistics: documents, their total length, and each lexeme's document
-- frequency. Each row is split into 16 shards (by server process) so concurrent writers of one
-- organisation rarely touch the same row; readers add the shards up. No foreign key: the rows of
-- a deleted organisation are updated by the cascade that deletes its memories, and are harmless.
CREATE TABLE text_doc_stats (
  org_id text NOT NULL,
  shard smallint NOT NULL,
  docs bigint NOT NULL,
  total_len bigint NOT NULL,
  PRIMARY KEY (org_id, shard)
);
CREATE TABLE text_lexeme_stats (
  org_id text NOT NULL,
  lexeme text NOT NULL,
  shard smallint NOT NULL,
  df bigint NOT NULL,
  PRIMARY KEY (org_id, lexeme, shard)
);

ALTER TABLE memories ALTER COLUMN tsv DROP EXPRESSION;
ALTER TABLE memories ADD COLUMN bm25 sparsevec(1000000000);

-- Existing rows: statistics first, then their vectors against the organisation's average.
INSERT INTO text_doc_stats (org_id, shard, docs, total_len)
SELECT org_id, 0, count(*), sum(length(tsv)) FROM memories GROUP BY org_id;
INSERT INTO text_lexeme_stats (org_id, lexeme, shard, df)
SELECT m.org_id, l, 0, count(*) FROM memories m, unnest(tsvector_to_array(m.tsv)) AS l GROUP BY 1, 2;
UPDATE memories m SET bm25 = mnemo_bm25_doc(m.tsv, s.total_len::float8 / greatest(s.docs, 1))
FROM text_doc_stats s WHERE s.org_id = m.org_id;

-- Row level, before the write: the tsvector and the BM25 vector, against the organisation's
-- average length at write time (documents do not move when the average drifts; with b 0.3 that
-- drift is a small fraction of a small term).
CREATE FUNCTION mnemo_memories_text() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  avgdl float8;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text AND NEW.tsv IS NOT DISTINCT FROM OLD.tsv
     AND (NEW.details -> 'title') IS NOT DISTINCT FROM (OLD.details -> 'title')
     AND (NEW.details -> 'source_role') IS NOT DISTINCT FROM (OLD.details -> 'source_role') THEN
    NEW.tsv := OLD.tsv;
    NEW.bm25 := OLD.bm25;
    RETURN NEW;
  END IF;
  NEW.tsv := mnemo_memory_tsv(NEW.text, NEW.details);
  SELECT sum(total_len)::float8 / greatest(sum(docs), 1) INTO avgdl FROM text_doc_stats WHERE org_id = NEW.org_id;
  NEW.bm25 := mnemo_bm25_doc(NEW.tsv, coalesce(nullif(avgdl, 0), length(NEW.tsv)));
  RETURN NEW;
END;
$$;
CREATE TRIGGER memories_text BEFORE INSERT OR UPDATE ON memories
  FOR EACH ROW EXECUTE FUNCTION mnemo_memories_text();

-- Statement level, after the write: the statistics change by what the statement changed. The
-- organisation's shard is taken under a transaction advisory lock first, so two transactions of
-- one shard queue instead of deadlocking over lexeme rows; lexemes are written in sorted order.
CREATE FUNCTION mnemo_text_stats_apply(delta jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  my_shard smallint := pg_backend_pid() % 16;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('mnemo_text_stats:' || o), my_shard)
  FROM (SELECT DISTINCT d ->> 'org_id' AS o FROM jsonb_array_elements(delta -> 'docs') AS d ORDER BY 1) x;
  INSERT INTO text_lexeme_stats AS s (org_id, lexeme, shard, df)
  SELECT x.org_id, x.lexeme, my_shard, x.n
  FROM jsonb_to_recordset(delta -> 'lexemes') AS x(org_id text, lexeme text, n bigint)
  WHERE x.n <> 0
  ORDER BY x.org_id, x.lexeme
  ON CONFLICT (org_id, lexeme, shard) DO UPDATE SET df = s.df + EXCLUDED.df;
  INSERT INTO text_doc_stats AS s (org_id, shard, docs, total_len)
  SELECT x.org_id, my_shard, x.docs, x.len
  FROM jsonb_to_recordset(delta -> 'docs') AS x(org_id text, docs bigint, len bigint)
  ORDER BY x.org_id
  ON CONFLICT (org_id, shard) DO UPDATE SET docs = s.docs + EXCLUDED.docs, total_len = s.total_len + EXCLUDED.total_len;
END;
$$;

CREATE FUNCTION mnemo_memories_text_stats() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  delta jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_build_object(
      'docs', (SELECT jsonb_agg(d) FROM (SELECT org_id, count(*) AS docs, sum(length(tsv)) AS len
                                         FROM new_rows GROUP BY org_id) d),
      'lexemes', (SELECT jsonb_agg(l) FROM (SELECT org_id, lexeme, count(*) AS n
                                            FROM new_rows, unnest(tsvector_to_array(tsv)) AS lexeme
                                            GROUP BY 1, 2) l))
    INTO delta;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_build_object(
      'docs', (SELECT jsonb_agg(d) FROM (SELECT org_id, -count(*) AS docs, -sum(length(tsv)) AS len
                                         FROM old_rows GROUP BY org_id) d),
      'lexemes', (SELECT jsonb_agg(l) FROM (SELECT org_id, lexeme, -count(*) AS n
                                            FROM old_rows, unnest(tsvector_to_array(tsv)) AS lexeme
                                            GROUP BY 1, 2) l))
    INTO delta;
  ELSE
    SELECT jsonb_build_object(
      'docs', (SELECT jsonb_agg(d) FROM (SELECT n.org_id, 0 AS docs, sum(length(n.tsv)) - sum(length(o.tsv)) AS len
                                         FROM new_rows n JOIN old_rows o ON o.id = n.id
                                         WHERE n.tsv IS DISTINCT FROM o.tsv GROUP BY n.org_id) d),
      'lexemes', (SELECT jsonb_agg(l) FROM (
                    SELECT org_id, lexeme, sum(k) AS n FROM (
                      SELECT n.org_id, lexeme, 1 AS k
                      FROM new_rows n JOIN old_rows o ON o.id = n.id, unnest(tsvector_to_array(n.tsv)) AS lexeme
                      WHERE n.tsv IS DISTINCT FROM o.tsv
                      UNION ALL
                      SELECT o.org_id, lexeme, -1
                      FROM new_rows n JOIN old_rows o ON o.id = n.id, unnest(tsvector_to_array(o.tsv)) AS lexeme
                      WHERE n.tsv IS DISTINCT FROM o.tsv) c
                    GROUP BY 1, 2) l))
    INTO delta;
  END IF;
  IF delta ->> 'docs' IS NOT NULL THEN
    PERFORM mnemo_text_stats_apply(delta);
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER memories_text_stats_insert AFTER INSERT ON memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mnemo_memories_text_stats();
CREATE TRIGGER memories_text_stats_update AFTER UPDATE ON memories
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mnemo_memories_text_stats();
CREATE TRIGGER memories_text_stats_delete AFTER DELETE ON memories
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mnemo_memories_text_stats();
