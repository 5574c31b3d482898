-- Two repairs of data written by earlier versions, whose rules have since changed (README,
-- "Upgrading"). Both only take information away, never add it.
--
-- 1. A fact deleted before a deleted fact left its episodes (src/memories/delete.ts) is still
--    quoted by them: its id in `details.fact_ids`, its sentences in the episode's text (the local
--    extractor's summary is made of its facts' sentences). The deleted text is gone, so an episode
--    that lists a fact that no longer exists keeps only the sentences found in the facts it still
--    lists (a model's summary, in its own words, is left with its title): what was deleted stays
--    deleted.
CREATE OR REPLACE FUNCTION mnemo_repair_deleted_fact_episodes(org text DEFAULT NULL) RETURNS bigint LANGUAGE sql AS $$
  WITH listed AS (
    SELECT e.id, x.fid, x.i,
      CASE WHEN x.fid ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN x.fid::uuid END AS fuid
    FROM memories e, jsonb_array_elements_text(e.details -> 'fact_ids') WITH ORDINALITY AS x (fid, i)
    WHERE e.type = 'episode' AND jsonb_typeof(e.details -> 'fact_ids') = 'array' AND (org IS NULL OR e.org_id = org)),
  marked AS (
    SELECT l.id, l.fid, l.i, f.text AS fact_text
    FROM listed l JOIN memories e ON e.id = l.id
    LEFT JOIN memories f ON f.id = l.fuid AND f.org_id = e.org_id),
  broken AS (SELECT id FROM marked GROUP BY id HAVING bool_or(fact_text IS NULL)),
  kept_ids AS (
    SELECT b.id, coalesce(jsonb_agg(to_jsonb(m.fid) ORDER BY m.i) FILTER (WHERE m.fact_text IS NOT NULL), '[]') AS ids
    FROM broken b JOIN marked m ON m.id = b.id GROUP BY b.id),
  pieces AS (
    SELECT b.id, s.piece[1] AS piece, s.n
    FROM broken b JOIN memories e ON e.id = b.id,
      regexp_matches(e.text, '[^.!?]+[.!?]*', 'g') WITH ORDINALITY AS s (piece, n)),
  kept_text AS (
    SELECT p.id, string_agg(btrim(p.piece), ' ' ORDER BY p.n) AS text
    FROM pieces p
    WHERE btrim(regexp_replace(p.piece, '[.!?]+$', '')) <> '' AND EXISTS (
      SELECT 1 FROM marked m
      WHERE m.id = p.id AND m.fact_text IS NOT NULL
        AND strpos(m.fact_text, btrim(regexp_replace(p.piece, '[.!?]+$', ''))) > 0)
    GROUP BY p.id),
  done AS (
    UPDATE memories e
    SET text = coalesce(t.text, nullif(e.details ->> 'title', ''), 'Conversation'),
        details = jsonb_set(e.details, '{fact_ids}', k.ids)
    FROM kept_ids k LEFT JOIN kept_text t ON t.id = k.id
    WHERE e.id = k.id
    RETURNING 1)
  SELECT count(*) FROM done
$$;

-- 2. Earlier classifiers found credentials and health details next to a technical word ("the door
--    code", "the staging server's SSH passphrase", "20 mg") shareable, and tagged them with the
--    ingest's catch-all groups, where the group's other users read them. A memory an ingest stored
--    whose text the rules now class as personal (src/providers/local/classifier.ts, as of this
--    migration; \y is PostgreSQL's word boundary) loses its group tags, as it would be stored now.
CREATE OR REPLACE FUNCTION mnemo_repair_personal_tags(org text DEFAULT NULL) RETURNS bigint LANGUAGE sql AS $$
  WITH done AS (
    UPDATE memories SET group_ids = '{}'
    WHERE group_ids <> '{}' AND job_id IS NOT NULL AND (org IS NULL OR org_id = org)
      AND (text ~ '\yPINs?\y' OR text ~* (
        '\y(health|doctor|hospital|clinic|sick|illness|disease|diagnos\w*|medications?|medicines?|meds|prescri\w+|dose|dosage|pills?|mood|therapy|therapist|psychiatr\w*|mental health|allerg\w*|pregnan\w*|surgery|depress\w*|anxiety|diabet\w*|cancer|blood pressure|insulin|antidepressants?)\y|\d+ ?mg\y'
        || '|\y(wife|husband|son|daughter|mother|mom|mum|father|dad|sister|brother|kids|children|family|boyfriend|girlfriend|divorce)\y'
        || '|\y(salary|debt|loan|mortgage|bank|account number|routing number|iban|credit card|debit card|cvv|income|tax return|savings)\y'
        || '|\y(passwords?|passcodes?|passphrases?|pin (code|number)|api key|private key|ssh key|secret|token|recovery (codes?|phrase)|backup codes|seed phrase|one-time code|wi-?fi (key|password)|(door|gate|alarm|access|lock|entry|garage) code|(lock|safe) combination|ssn|social security|passport|licen[cs]e number)\y'
        || '|\y(phone number|email address|home address|address is|lives at|birthday|date of birth)\y|\y[\w.+-]+@[\w-]+\.[\w.]+\y|\+?\d[\d ()-]{7,}\d'))
    RETURNING 1)
  SELECT count(*) FROM done
$$;

-- A table of at most 50,000 rows is repaired here; a larger one by
-- `SELECT mnemo_repair_deleted_fact_episodes(); SELECT mnemo_repair_personal_tags();` in a quiet
-- hour, or one organisation at a time with the organisation's id as the argument.
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 50001) s) <= 50000 THEN
    PERFORM mnemo_repair_deleted_fact_episodes();
    PERFORM mnemo_repair_personal_tags();
  END IF;
END $$;
