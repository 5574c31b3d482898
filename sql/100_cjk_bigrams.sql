-- Chinese, Japanese and Korean text is written without spaces between words, so the text parser
-- reads a whole run ("我喜欢寿司") as one word and a query for one of its words ("寿司") matched
-- nothing. Such runs are also indexed as overlapping two-character pieces (the usual CJK bigrams:
-- 我喜 喜欢 欢寿 寿司), and a query is read the same way (src/db/memory-search.ts), so a word of
-- two or more characters matches wherever it is written. A run of one character is itself.
-- The character ranges are those of src/providers/local/english.ts (CJK_RUN).
CREATE FUNCTION mnemo_cjk_bigrams(body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
  SELECT string_agg(substr(r.m[1], i, 2), ' ' ORDER BY r.n, i)
  FROM regexp_matches(coalesce(body, ''), '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+', 'g')
    WITH ORDINALITY AS r(m, n),
    generate_series(1, greatest(length(r.m[1]) - 1, 1)) AS i);

-- The pieces of a text as lexemes of weight `w`, or nothing, at the cost of one regular-expression
-- test, for a text without such characters (nearly every English memory and query).
CREATE FUNCTION mnemo_cjk_tsv(body text, w "char") RETURNS tsvector
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

-- Memories stored before with such text are indexed again (the text trigger recomputes a
-- cleared tsv, and the statistics' trigger follows); no other row is touched.
UPDATE memories SET tsv = NULL
WHERE text ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]'
   OR context ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]';
