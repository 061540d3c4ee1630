-- Search across a tenant's documents: one row per indexed unit, its words (CJK runs as
-- bigrams, made by the service) in a tsvector under the 'simple' configuration (no
-- stemming, no stop words: the same words FTS5's unicode61 finds on SQLite).
CREATE TABLE search_units (
    id       BIGSERIAL PRIMARY KEY,
    tenant   TEXT NOT NULL,
    file_id  TEXT NOT NULL,
    unit     TEXT NOT NULL,
    unit_key TEXT NOT NULL,
    text     TEXT NOT NULL,
    terms    TSVECTOR NOT NULL,
    UNIQUE (tenant, file_id, unit, unit_key)
);
CREATE INDEX search_units_terms ON search_units USING GIN (terms);
