-- A fact always has a status: the service writes 'active' or 'superseded', but an import file
-- could bring a fact with none. Such a fact was listed and searched as active, yet not counted in
-- `GET /v1/usage` (storage_counts counts facts whose status is 'active'). Import now reads a
-- missing status as active; facts stored before are given it here (the counts' trigger follows).
UPDATE memories SET status = 'active' WHERE type = 'fact' AND status IS NULL;
