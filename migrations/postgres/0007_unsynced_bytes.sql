-- Kept the same as SQLite's 0007 (the two hold the same tables). With Postgres, uploads
-- sync their blob files before they answer and leave this empty: the bytes of an upload
-- are committed with its row only in the embedded database (`files::RowQueue`).
ALTER TABLE files ADD COLUMN unsynced BYTEA;
