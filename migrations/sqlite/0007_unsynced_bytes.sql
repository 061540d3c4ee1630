-- A small upload's bytes, kept with its row until its blob file is on disk: the upload's
-- one sync before its answer is the log's, which holds both; the blob file is synced after
-- (in batches) and this copy let go. After a crash in between, the blob is rewritten from
-- here when the service starts (`files::recover_unsynced`).
ALTER TABLE files ADD COLUMN unsynced BLOB;
