-- The finished ingest jobs that report a memory (its id in `memories_created` or
-- `memories_updated` of their result), found by the memory's id: a delete takes a deleted memory
-- out of their results (rewriteJobReports in src/db/memories.ts), which otherwise read every
-- finished job's result (20,000 jobs: 1.5 s a delete, on the embedded database every other
-- request waiting behind it).
CREATE INDEX ingest_jobs_reported_idx ON ingest_jobs
  USING gin (((result -> 'memories_created') || (result -> 'memories_updated')) jsonb_path_ops)
  WHERE status = 'succeeded';

-- Memories without a vector: an episode a deletion rewrote keeps none until its text is embedded
-- again after the transaction (embedEpisodesAgain); where that failed (the model away), the
-- maintenance sweep embeds it (embedMissingVectors in src/memories/vectors.ts), found here.
CREATE INDEX memories_no_vector_idx ON memories (org_id) WHERE embedding IS NULL;
