-- Upload URLs (issue #19): a short-lived, single-use, tenant-bound token an agent's host
-- PUTs a file to. Only the token's sha256 is kept.
CREATE TABLE upload_tokens (
    token_sha256 TEXT PRIMARY KEY,
    tenant       TEXT NOT NULL,
    name         TEXT NOT NULL,
    expires_at   INTEGER NOT NULL,  -- unix seconds
    claimed_at   INTEGER,           -- set while an upload runs or once it is stored
    file_id      TEXT               -- the upload it became
);
CREATE INDEX upload_tokens_expiry ON upload_tokens (expires_at);
