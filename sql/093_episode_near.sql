-- Each fact carries its episode neighbours: `details.episode_near`, the ids of the facts within
-- two places before and after it in its episode's fact order ({"-2": id, "-1": id, "1": id,
-- "2": id}, internal, never on the wire). Search then links a hit to its neighbours from the hit's
-- own row, instead of reading the episode's whole fact list (a 3,000-fact episode is a 120 KB
-- value, read and decompressed by every search that hit one of its facts: about half of a
-- search's database time on the embedded database). It replaces `details.episode_index`.
-- A fact with no `episode_near` (an import file's, or a large table not yet backfilled) is still
-- placed by scanning its episode's list: correct, only slower.
CREATE OR REPLACE FUNCTION mnemo_backfill_episode_near(org text DEFAULT NULL) RETURNS bigint LANGUAGE sql AS $$
  WITH listed AS (
    SELECT e.id::text AS episode, x.fid, x.i
    FROM memories e, jsonb_array_elements_text(e.details -> 'fact_ids') WITH ORDINALITY AS x (fid, i)
    WHERE e.type = 'episode' AND jsonb_typeof(e.details -> 'fact_ids') = 'array' AND (org IS NULL OR e.org_id = org)),
  near AS (
    SELECT episode, fid, jsonb_strip_nulls(jsonb_build_object(
        '-2', lag(fid, 2) OVER w, '-1', lag(fid, 1) OVER w, '1', lead(fid, 1) OVER w, '2', lead(fid, 2) OVER w)) AS near
    FROM listed WINDOW w AS (PARTITION BY episode ORDER BY i)),
  done AS (
    UPDATE memories m SET details = (m.details - 'episode_index') || jsonb_build_object('episode_near', n.near)
    FROM near n
    WHERE m.type = 'fact' AND (org IS NULL OR m.org_id = org) AND m.details ->> 'episode_id' = n.episode
      AND m.id = CASE WHEN n.fid ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN n.fid::uuid END
      AND m.details -> 'episode_near' IS NULL
    RETURNING 1)
  SELECT count(*) FROM done
$$;

-- A table of at most 50,000 rows (every embedded database in practice) is backfilled here; a
-- larger one by `SELECT mnemo_backfill_episode_near();` in a quiet hour, or one organisation at a
-- time with `SELECT mnemo_backfill_episode_near('org_id');` (README, "Upgrading").
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 50001) s) <= 50000 THEN
    PERFORM mnemo_backfill_episode_near();
  END IF;
END $$;
