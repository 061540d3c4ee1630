-- Kept the same as SQLite's 0008 (the two hold the same tables): the bytes kept until a
-- blob file is synced leave the `files` row for a table of their own. With Postgres,
-- uploads sync their blob files before they answer and leave it empty; rows are inserted
-- into `files` directly (SQLite's `new_uploads` view is not needed here).
CREATE TABLE unsynced_blobs (
    file_id TEXT PRIMARY KEY NOT NULL,
    bytes   BYTEA NOT NULL
);
INSERT INTO unsynced_blobs (file_id, bytes)
    SELECT id, unsynced FROM files WHERE unsynced IS NOT NULL;
ALTER TABLE files DROP COLUMN unsynced;
