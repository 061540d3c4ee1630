-- Upload URLs: a short-lived, single-use, tenant-bound token. Only its sha256 is kept.
CREATE TABLE upload_tokens (
    token_sha256 TEXT PRIMARY KEY,
    tenant       TEXT NOT NULL,
    name         TEXT NOT NULL,
    expires_at   BIGINT NOT NULL,
    claimed_at   BIGINT,
    file_id      TEXT
);
CREATE INDEX upload_tokens_expiry ON upload_tokens (expires_at);
