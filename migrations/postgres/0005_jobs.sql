-- Read jobs (issue #22): `POST /read` with "async": true. Claimed by a replica (lease
-- renewed by heartbeat; `fence` grows with every claim and is checked on every write of
-- the runner), results in the blob store under `result_key`. Times are unix milliseconds.
CREATE TABLE jobs (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant      TEXT NOT NULL,
    request     TEXT NOT NULL,            -- the ReadRequest, JSON
    state       TEXT NOT NULL,            -- queued, running, done, failed, cancelled
    turn        BIGINT NOT NULL,         -- the tenant's jobs ahead of it when queued
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    started_at  BIGINT,                  -- when a runner last claimed it
    lease_until BIGINT NOT NULL DEFAULT 0,
    fence       BIGINT NOT NULL DEFAULT 0,
    owner       TEXT,
    progress    TEXT,                     -- the last progress event, JSON
    error       TEXT,                     -- the error body, JSON
    result_key  TEXT,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX jobs_queue ON jobs (state, turn, created_at);
CREATE INDEX jobs_expiry ON jobs (expires_at);
-- Progress events of a job, replayed by `GET /jobs/{id}/events` from Last-Event-ID.
CREATE TABLE job_events (
    job_id TEXT NOT NULL,
    seq    BIGINT NOT NULL,
    data   TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
);
