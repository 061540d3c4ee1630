-- The bytes a small upload keeps until its blob file is synced (0007) move out of its row
-- into a table of their own. Kept in `files`, they left each 4 KiB page of it holding two
-- rows for good: the space of bytes let go is not reused by the rows that follow (they go
-- at the table's end), so the table grew ~2 KB an upload where ~0.2 KB does. Here they are
-- deleted once synced and their pages reused, and the check at start reads this table
-- alone, not every row of `files`.
CREATE TABLE unsynced_blobs (
    file_id TEXT PRIMARY KEY NOT NULL,
    bytes   BLOB NOT NULL
);
INSERT INTO unsynced_blobs (file_id, bytes)
    SELECT id, unsynced FROM files WHERE unsynced IS NOT NULL;
ALTER TABLE files DROP COLUMN unsynced;

-- A row deleted takes its kept bytes with it (as it did when they were in the row).
CREATE TRIGGER files_forget_unsynced AFTER DELETE ON files
BEGIN
    DELETE FROM unsynced_blobs WHERE file_id = OLD.id;
END;

-- Upload rows are inserted here: the trigger writes each to `files` and its bytes, when it
-- has them, to `unsynced_blobs` — one statement for rows and bytes, as before (one round
-- trip to the database's thread, one commit).
CREATE VIEW new_uploads AS
    SELECT id, tenant, name, size, sha256, format, mime, created_at, NULL AS bytes FROM files;
CREATE TRIGGER new_uploads_insert INSTEAD OF INSERT ON new_uploads
BEGIN
    INSERT INTO files (id, tenant, name, size, sha256, format, mime, created_at)
        VALUES (NEW.id, NEW.tenant, NEW.name, NEW.size, NEW.sha256, NEW.format, NEW.mime,
                NEW.created_at);
    INSERT INTO unsynced_blobs (file_id, bytes)
        SELECT NEW.id, NEW.bytes WHERE NEW.bytes IS NOT NULL;
END;
