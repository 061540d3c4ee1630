-- The size of a done job's result, so that a tenant's kept results can be held to
-- DOCREADER_MAX_JOB_RESULT_BYTES (the attack pass of 2026-12-07: one tenant's results could
-- use up the room every tenant's jobs need). NULL for results kept before this column.
ALTER TABLE jobs ADD COLUMN result_bytes INTEGER;
