-- How far a job's store stage got: the new facts of its plan before this position (by plan order,
-- `f<n>` write keys) were committed by an earlier store transaction. A retried job (its worker
-- killed between two store transactions) starts after them instead of writing them again: the ids
-- are the same, so nothing would be stored twice, but a fact the user deleted in between would
-- come back (src/ingest/store.ts).
ALTER TABLE ingest_jobs ADD COLUMN stored_facts integer NOT NULL DEFAULT 0;
