-- Retrieval without a model (issue 17): two internal columns that full text searches but no
-- surface returns (they are not in MEMORY_COLUMNS).
--
-- `context`: what a memory is about beyond its own words, e.g. the question a reply answered
-- ("Yes, at the lake!" answering "Where did Ana go camping?"). Indexed at full weight (label B).
-- `concepts`: synonyms and broader terms of the memory's words from WordNet
-- (src/providers/local/concepts.ts), so "instrument" reaches "cello". Label D: half weight.
ALTER TABLE memories ADD COLUMN context text;
ALTER TABLE memories ADD COLUMN concepts text;

CREATE FUNCTION mnemo_memory_tsv(body text, details jsonb, context text, concepts text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN setweight(to_tsvector('english', coalesce(body, '')), 'A')
  || setweight(to_tsvector('english', coalesce(details ->> 'title', '')), 'A')
  || setweight(to_tsvector('english', coalesce(context, '')), 'B')
  || setweight(to_tsvector('simple', coalesce(details ->> 'source_role', '')), 'C')
  || to_tsvector('english', coalesce(concepts, ''));

CREATE OR REPLACE FUNCTION mnemo_memories_text() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  avgdl float8;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.text IS NOT DISTINCT FROM OLD.text AND NEW.tsv IS NOT DISTINCT FROM OLD.tsv
     AND NEW.context IS NOT DISTINCT FROM OLD.context AND NEW.concepts IS NOT DISTINCT FROM OLD.concepts
     AND (NEW.details -> 'title') IS NOT DISTINCT FROM (OLD.details -> 'title')
     AND (NEW.details -> 'source_role') IS NOT DISTINCT FROM (OLD.details -> 'source_role') THEN
    NEW.tsv := OLD.tsv;
    NEW.bm25 := OLD.bm25;
    RETURN NEW;
  END IF;
  NEW.tsv := mnemo_memory_tsv(NEW.text, NEW.details, NEW.context, NEW.concepts);
  SELECT sum(total_len)::float8 / greatest(sum(docs), 1) INTO avgdl FROM text_doc_stats WHERE org_id = NEW.org_id;
  NEW.bm25 := mnemo_bm25_doc(NEW.tsv, coalesce(nullif(avgdl, 0), length(NEW.tsv)));
  RETURN NEW;
END;
$$;

-- Concept terms count a quarter of an occurrence (label D), and the document length counts only
-- the memory's own lexemes: expansions should lift a document that has nothing else for a query
-- word, not outweigh a literal match or make a document read as longer.
CREATE FUNCTION mnemo_doc_len(tsv tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT count(*) FROM unnest(tsv) u WHERE u.weights <> ARRAY['D']);

-- A memory's own lexemes, concept terms left out: document frequencies count only these, so a
-- query word's rarity is its rarity as written, and a word no memory states (a category word,
-- say) keeps the full weight of a rare term where a memory's concepts match it.
CREATE FUNCTION mnemo_doc_lexemes(tsv tsvector) RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT u.lexeme FROM unnest(tsv) u WHERE u.weights <> ARRAY['D'] $$;

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
    ) x
  );
END;
$$;

-- The statistics' document lengths and frequencies likewise count only a memory's own lexemes, so a document's
-- length and the organisation's average are measured alike.
CREATE OR REPLACE FUNCTION mnemo_memories_text_stats() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  delta jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_build_object(
      'docs', (SELECT jsonb_agg(d) FROM (SELECT org_id, count(*) AS docs, sum(mnemo_doc_len(tsv)) AS len
                                         FROM new_rows GROUP BY org_id) d),
      'lexemes', (SELECT jsonb_agg(l) FROM (SELECT org_id, lexeme, count(*) AS n
                                            FROM new_rows, mnemo_doc_lexemes(tsv) AS lexeme
                                            GROUP BY 1, 2) l))
    INTO delta;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_build_object(
      'docs', (SELECT jsonb_agg(d) FROM (SELECT org_id, -count(*) AS docs, -sum(mnemo_doc_len(tsv)) AS len
                                         FROM old_rows GROUP BY org_id) d),
      'lexemes', (SELECT jsonb_agg(l) FROM (SELECT org_id, lexeme, -count(*) AS n
                                            FROM old_rows, mnemo_doc_lexemes(tsv) AS lexeme
                                            GROUP BY 1, 2) l))
    INTO delta;
  ELSE
    SELECT jsonb_build_object(
      'docs', (SELECT jsonb_agg(d) FROM (SELECT n.org_id, 0 AS docs, sum(mnemo_doc_len(n.tsv)) - sum(mnemo_doc_len(o.tsv)) AS len
                                         FROM new_rows n JOIN old_rows o ON o.id = n.id
                                         WHERE n.tsv IS DISTINCT FROM o.tsv GROUP BY n.org_id) d),
      'lexemes', (SELECT jsonb_agg(l) FROM (
                    SELECT org_id, lexeme, sum(k) AS n FROM (
                      SELECT n.org_id, lexeme, 1 AS k
                      FROM new_rows n JOIN old_rows o ON o.id = n.id, mnemo_doc_lexemes(n.tsv) AS lexeme
                      WHERE n.tsv IS DISTINCT FROM o.tsv
                      UNION ALL
                      SELECT o.org_id, lexeme, -1
                      FROM new_rows n JOIN old_rows o ON o.id = n.id, mnemo_doc_lexemes(o.tsv) AS lexeme
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

-- Existing rows need no recomputation: before this migration no memory had a D lexeme, so their
-- lengths and the statistics already agree with mnemo_doc_len.
