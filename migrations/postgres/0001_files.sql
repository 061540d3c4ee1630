-- Uploaded files. The bytes live once per sha256 in the blob store; each upload gets
-- its own row and its own unguessable id, scoped to a tenant.
CREATE TABLE files (
    id         TEXT PRIMARY KEY NOT NULL,
    tenant     TEXT NOT NULL,
    name       TEXT NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT NOT NULL,
    format     TEXT NOT NULL,
    mime       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX files_by_tenant ON files (tenant, created_at);
CREATE INDEX files_by_sha256 ON files (sha256);
