-- Full text within a user's scope from one index, and text indexes without a pending list (issue 12).
--
-- A search scoped to a user (the common case) used to AND two bitmaps: the text index's matches
-- across every organisation and user, and the whole (organisation, user) slice of the b-tree
-- (10,000 entries for a user of 10,000 memories, read on every search whatever the query). A GIN
-- index over (org_id, user_id, tsv) (btree_gin gives GIN the equality operators of text) finds
-- the scope's matching rows directly: on 100,000 memories, 10 users, the full-text statement
-- read about half the buffers and ran in less than half the time. Scopes without a user
-- (groups, agents, apps) keep memories_tsv_idx, which the planner still picks for them.
-- btree_gin is a contrib extension shipped with PostgreSQL (trusted, so a database owner may
-- create it) and bundled with PGlite.
--
-- Both text indexes are written directly (fastupdate off). With GIN's default pending list, rows
-- written since the last vacuum (up to 4 MB of them) sit in an unsorted list that every search
-- reads in full: after a bulk load the full-text statement took 40 ms instead of 3 until
-- autovacuum came by. Writing each row's entries into the index costs little beside the HNSW
-- insert of the same row.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX memories_scope_tsv_idx ON memories USING gin (org_id, user_id, tsv) WITH (fastupdate = off);
ALTER INDEX memories_tsv_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('memories_tsv_idx'::regclass);
