-- Embeddings stay in the row. A memory row with its 384-number embedding (1,540 bytes) and its
-- text, tsvector and BM25 vector averages about 2,700 bytes, over PostgreSQL's 2,032-byte
-- threshold, so the embedding (the largest value, storage EXTERNAL) went to the TOAST table and
-- every distance computed outside the HNSW index (a small scope's exact ordering, the score of
-- each candidate) fetched it through the TOAST index: 3,010 memories took 35 ms to order on the
-- embedded database, 1 ms once inline. MAIN keeps the vector in the row unless nothing else can
-- be moved out; rows up to 8,160 bytes are no longer compressed or moved at all.
ALTER TABLE memories ALTER COLUMN embedding SET STORAGE MAIN, SET (toast_tuple_target = 8160);

-- Rows stored before keep their out-of-line embedding until rewritten. A small table (every
-- embedded database in practice) is rewritten here; a larger one keeps working as before and is
-- rewritten by `VACUUM FULL memories` in a maintenance window (it takes an exclusive lock and
-- rebuilds the indexes; README, "Upgrading").
DO $$
BEGIN
  IF (SELECT count(*) FROM (SELECT 1 FROM memories LIMIT 50001) s) <= 50000 THEN
    UPDATE memories SET embedding = embedding::text::vector WHERE embedding IS NOT NULL;
  END IF;
END $$;
