-- A word of one character is a common query in Chinese and Korean (猫 "cat", 茶 "tea", 책
-- "book"), and no two-character piece of sql/100 is one: "我的猫很可爱" is indexed as 我的 的猫
-- 猫很 很可 可爱, and a search for 猫 found nothing. Han and Hangul characters of a memory's
-- text are now also indexed one by one, as concept terms are (no weight label: a quarter of an
-- occurrence, left out of document lengths and frequencies, sql/090), so a one-character query
-- matches wherever the character is written while a longer word still ranks by its pieces. A
-- query is read as before (a one-character run is that character). Kana alone are left out: one
-- is mostly a particle (の, を).
CREATE FUNCTION mnemo_cjk_unigrams(body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN body ~ '[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]'
    THEN to_tsvector('simple', (
      SELECT string_agg(m[1], ' ')
      FROM regexp_matches(body, '([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])', 'g') AS m))
  ELSE ''::tsvector
END;

CREATE OR REPLACE FUNCTION mnemo_memory_tsv(body text, details jsonb, context text, concepts text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN setweight(to_tsvector('english', coalesce(body, '')), 'A')
  || mnemo_cjk_tsv(body, 'A')
  || mnemo_cjk_unigrams(body)
  || setweight(to_tsvector('english', coalesce(details ->> 'title', '')), 'A')
  || setweight(to_tsvector('english', coalesce(context, '')), 'B')
  || mnemo_cjk_tsv(context, 'B')
  || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C')
  || to_tsvector('english', coalesce(concepts, ''));

-- Memories stored before with such characters are indexed again (the text trigger recomputes a
-- cleared tsv, and the statistics' trigger follows); no other row is touched.
UPDATE memories SET tsv = NULL WHERE text ~ '[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]';
