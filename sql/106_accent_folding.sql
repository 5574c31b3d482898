-- Latin letters are indexed, and a query read, without their diacritics: "Zoë", "São Paulo" and
-- "Café Müller" were words of their own, so "Zoe", "Sao Paulo" and "cafe muller" (people type
-- names without accents all the time) found nothing, and the other way round. The text as
-- indexed (mnemo_index_text, sql/105) now also has each Latin letter's combining marks taken off
-- (é, ü, ñ, ç, ş, ő, ệ... become e, u, n, c, s, o, e), and the Latin letters that have no
-- decomposition written as their plain letters (ø ł đ ð ħ ı ŧ as o l d d h i t; ß æ œ þ as ss ae
-- oe th). Only Latin letters: "й", "ё" (Cyrillic) and "ά" (Greek) are other letters, or written so
-- by their readers, and stay as they are, as do CJK text and emoji. An ASCII query is read as
-- before (nothing to fold) and meets the folded words of the index. A speaker's name (source_role)
-- is read the same way now, and so are trigger entities: `mnemo_trigger_keys` also keeps each
-- entity and base name folded, and trigger adds the folded form of every identifier it looks up
-- (src/fold.ts), so a directive about "Zoë" or `schéma.sql` (or the same name in NFD, as macOS
-- writes it) is triggered by "Zoe" and `schema.sql` too, and exact matches still match.
--
-- Not PostgreSQL's unaccent extension: PGlite has it only when loaded by the embedding process,
-- a server only when contrib is installed and the extension created, its unaccent() is not
-- IMMUTABLE (it would keep the query reading from being inlined, sql/105), and its rules fold
-- Greek and Cyrillic letters too (ά, ё).

-- `body` (in NFKC, sql/105) with its Latin letters' diacritics taken off. Called only on text with
-- such a letter or a combining mark (mnemo_index_text tests first): the two normalisations cost.
CREATE FUNCTION mnemo_fold_latin(body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN normalize(regexp_replace(
  replace(replace(replace(replace(replace(replace(replace(replace(
    translate(normalize(body, NFD), 'øØłŁđĐðÐħĦıŧŦ', 'oOlLdDdDhHitT'),
    'ß', 'ss'), 'ẞ', 'SS'), 'æ', 'ae'), 'Æ', 'AE'), 'œ', 'oe'), 'Œ', 'OE'), 'þ', 'th'), 'Þ', 'TH'),
  '([A-Za-z])[\u0300-\u036f]+', '\1', 'g'), NFC);

-- As sql/105's, Latin diacritics folded. Still one expression, which the planner inlines into
-- mnemo_query_tsv and so into the search statement; a text all ASCII is only cut, as before.
CREATE OR REPLACE FUNCTION mnemo_index_text(body text, most integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
  WHEN body ~ '[^\x01-\x7f]' THEN left(CASE
    WHEN body ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]' THEN mnemo_fold_latin(regexp_replace(
      normalize(body, NFKC),
      '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]',
      '', 'g'))
    ELSE regexp_replace(normalize(body, NFKC),
      '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]',
      '', 'g') END, most)
  ELSE left(coalesce(body, ''), most)
END;

-- As sql/105's, the speaker's name read as the text is (it was indexed as written).
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
    || setweight(to_tsvector('simple', mnemo_index_text(details ->> 'source_role', 1000)), 'C')
    || to_tsvector('english', left(coalesce(concepts, ''), 20000))
  FROM (SELECT mnemo_index_text(body, 50000) AS b, mnemo_index_text(context, 10000) AS c) x);

-- As sql/030's, each entity and base name also folded (the generated column trigger_keys).
CREATE OR REPLACE FUNCTION mnemo_trigger_keys(entities text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
  SELECT DISTINCT f
  FROM unnest(entities) AS e, unnest(ARRAY[e, regexp_replace(e, '^.*[/\\]', '')]) AS k,
    unnest(CASE WHEN k ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]'
      THEN ARRAY[k, mnemo_fold_latin(k)] ELSE ARRAY[k] END) AS f
  WHERE f <> ''
);

-- Memories whose index this changes are indexed again, as sql/105 does: those with a Latin
-- letter with a diacritic (or a combining mark) in their text, context, title or speaker's name,
-- and directives with one in a trigger entity (setting trigger_entities derives trigger_keys
-- again). No other row is written. A table of at most 50,000 rows is indexed again here; a larger
-- one by `admin reindex-text --org ORG_ID` for each organisation in a quiet hour: until then its
-- rows are found as before (by their words as written, and an accented query still finds them).
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 50001) s) <= 50000 THEN
    UPDATE memories SET tsv = NULL, trigger_entities = trigger_entities
    WHERE text ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]'
       OR context ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]'
       OR details ->> 'title' ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]'
       OR details ->> 'source_role' ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]'
       OR array_to_string(trigger_entities, ' ') ~ '[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff]';
  END IF;
END $$;
