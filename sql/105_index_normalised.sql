-- The text index reads text as a person means it, and no text can fail or stall it.
--
-- 1. Unicode forms. "café" typed as one character (NFC) and as "e" plus a combining accent (NFD,
--    as macOS writes it) were different words, and so were full-width digits (７８９), ligatures
--    (ﬁlm) and a word with an invisible zero-width space inside (Ren<U+200B>ata). What is indexed,
--    and what a query is read as, is now the text in NFKC with the default-ignorable characters
--    (zero-width spaces and joiners, the soft hyphen, variation selectors, bidirectional marks...)
--    taken out: mnemo_index_text. The stored `text` stays as sent.
-- 2. Emoji. The text parser skips them, so a search for "💍" found nothing. Pictographs
--    (U+2600-U+27BF, U+1F000-U+1FAFF less the skin-tone modifiers) are indexed one by one, and a
--    flag (two regional indicators) as itself, at the weight of the text they are in; a query is
--    read the same way (mnemo_query_tsv), so 👍🏽 finds 👍.
-- 3. Bounds. mnemo_cjk_bigrams cut a run with substr(run, i, 2), which walks the run from its
--    start on multibyte text: a 300,000-character Chinese text held the database for minutes. It
--    now splits the run once (string_to_table) and pairs neighbours (lead), in linear time, with
--    the same output. Full text indexes the first 50,000 characters of a memory's text (10,000
--    of its context, 1,000 of a title, 20,000 of its concept terms) and the first 20,000 CJK
--    pieces of each, so a tsvector never reaches PostgreSQL's 1 MB limit ("string is too long for
--    tsvector" failed a 1 MB text of numbers), and a BM25 vector keeps a memory's 16,000
--    highest-weighted lexemes (pgvector's sparsevec limit: "sparsevec cannot have more than 16000
--    non-zero elements" failed a 10,000-character text of random CJK characters, and a 120 KB text
--    of distinct English words). Ordinary text is indexed exactly as before.

-- A text as indexed: in NFKC, without Unicode's default-ignorable code points, its first `most`
-- characters (a text all ASCII, nearly every one, is only cut).
CREATE FUNCTION mnemo_index_text(body text, most integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN body ~ '[^\x01-\x7f]' THEN left(regexp_replace(normalize(body, NFKC),
    '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]',
    '', 'g'), most)
  ELSE left(coalesce(body, ''), most)
END;

CREATE OR REPLACE FUNCTION mnemo_cjk_bigrams(body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
  SELECT string_agg(piece, ' ' ORDER BY n, i)
  FROM (
    SELECT n, i, piece FROM (
      SELECT r.n, c.i, c.ch || coalesce(lead(c.ch) OVER (PARTITION BY r.n ORDER BY c.i), '') AS piece,
        c.i > 1 AND lead(c.ch) OVER (PARTITION BY r.n ORDER BY c.i) IS NULL AS tail
      FROM regexp_matches(coalesce(body, ''), '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+', 'g')
          WITH ORDINALITY AS r(m, n),
        string_to_table(r.m[1], NULL) WITH ORDINALITY AS c(ch, i)) x
    WHERE NOT tail
    ORDER BY n, i
    LIMIT 20000) p);

-- A text's pictographs as lexemes of weight `w` (positions in order of appearance), or nothing,
-- at the cost of one regular-expression test for a text without any.
CREATE FUNCTION mnemo_emoji_tsv(body text, w "char") RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN body ~ '[\u2600-\u27bf\U0001f000-\U0001faff]'
    THEN setweight((
      SELECT string_agg(quote_literal(r.m[1]) || ':' || least(r.n, 16383), ' ')::tsvector
      FROM regexp_matches(body, '([\U0001f1e6-\U0001f1ff]{2}|[\u2600-\u27bf\U0001f000-\U0001f1e5\U0001f200-\U0001f3fa\U0001f400-\U0001faff])', 'g')
        WITH ORDINALITY AS r(m, n)), w)
  ELSE ''::tsvector
END;

CREATE OR REPLACE FUNCTION mnemo_memory_tsv(body text, details jsonb, context text, concepts text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
  SELECT setweight(to_tsvector('english', b), 'A')
    || mnemo_cjk_tsv(b, 'A')
    || mnemo_cjk_unigrams(b)
    || mnemo_emoji_tsv(b, 'A')
    || setweight(to_tsvector('english', mnemo_index_text(details ->> 'title', 1000)), 'A')
    || setweight(to_tsvector('english', c), 'B')
    || mnemo_cjk_tsv(c, 'B')
    || mnemo_emoji_tsv(c, 'B')
    || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C')
    || to_tsvector('english', left(coalesce(concepts, ''), 20000))
  FROM (SELECT mnemo_index_text(body, 50000) AS b, mnemo_index_text(context, 10000) AS c) x);

-- What a search query is read as (src/db/memory-search.ts): its words, its CJK pieces and its
-- pictographs, from the same normalised text as a memory's.
CREATE FUNCTION mnemo_query_tsv(query text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- One expression, which the planner inlines into the search statement (a body with a subquery is
-- run as a function call of its own on every search). A query all ASCII (nearly every one) holds
-- no CJK piece and no pictograph: its words alone, without the two scans.
RETURN CASE WHEN query ~ '[^\x01-\x7f]'
  THEN to_tsvector('english', mnemo_index_text(query, 50000))
    || mnemo_cjk_tsv(mnemo_index_text(query, 50000), 'A')
    || mnemo_emoji_tsv(mnemo_index_text(query, 50000), 'A')
  ELSE to_tsvector('english', left(query, 50000)) END;

-- As sql/090's, keeping a memory's 16,000 highest-weighted lexemes (ties: the lower dimension).
CREATE OR REPLACE FUNCTION mnemo_bm25_doc(tsv tsvector, avgdl float8) RETURNS sparsevec
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  dl float8 := greatest(mnemo_doc_len(tsv), 1);
BEGIN
  RETURN (
    SELECT ('{' || string_agg(d || ':' || w, ',' ORDER BY d) || '}/1000000000')::sparsevec
    FROM (
      SELECT mnemo_lexeme_dim(u.lexeme) AS d,
        sum(f.tf * 2.2 / (f.tf + 1.2 * (0.7 + 0.3 * dl / greatest(avgdl, 1)))) AS w
      FROM unnest(tsv) AS u,
        LATERAL (SELECT coalesce(array_length(u.positions, 1), 1)
                   - 0.75 * coalesce(cardinality(array_positions(u.weights::text[], 'D')), 0) AS tf) f
      GROUP BY 1
      ORDER BY 2 DESC, 1
      LIMIT 16000
    ) x
  );
END;
$$;

-- Memories whose index this changes are indexed again (the text trigger recomputes a cleared
-- tsv, and the statistics' trigger follows): those with a character outside ASCII in what is
-- indexed, or past the new bounds. No other row is written. A table of at most 50,000 rows is
-- indexed again here (every embedded database in practice); a larger one, where curly
-- apostrophes alone may make most rows qualify, by `admin reindex-text --org ORG_ID` for each
-- organisation in a quiet hour: until then its rows are found as before.
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 50001) s) <= 50000 THEN
    UPDATE memories SET tsv = NULL
    WHERE text ~ '[^\x01-\x7f]' OR context ~ '[^\x01-\x7f]' OR details ->> 'title' ~ '[^\x01-\x7f]'
       OR length(text) > 50000 OR length(context) > 10000 OR length(details ->> 'title') > 1000
       OR length(concepts) > 20000;
  END IF;
END $$;
