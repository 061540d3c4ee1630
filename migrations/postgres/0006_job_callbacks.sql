-- Job callbacks (issue #22): `callback_url` is POSTed when the job ends, signed with the
-- tenant's secret. Delivery state lives with the job so any replica retries it: a
-- delivery is claimed by pushing `callback_next_at` ahead, so a replica that dies
-- mid-delivery leaves it to another. Times are unix milliseconds.
ALTER TABLE jobs ADD COLUMN callback_url TEXT;
ALTER TABLE jobs ADD COLUMN callback_state TEXT;            -- pending, delivered, failed
ALTER TABLE jobs ADD COLUMN callback_attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN callback_next_at BIGINT;
ALTER TABLE jobs ADD COLUMN callback_error TEXT;            -- why the last attempt failed
CREATE INDEX jobs_callbacks ON jobs (callback_state, callback_next_at);
-- Each tenant's signing secret, made on first use and shown by GET /callbacks/secret.
CREATE TABLE callback_secrets (
    tenant     TEXT PRIMARY KEY NOT NULL,
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
