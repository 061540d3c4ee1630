-- The same as SQLite's search index's 0002 (sqlite_search/): how much of each indexed
-- upload the index holds. SQLite's 0009 is empty: its search index is a database of its own.
CREATE TABLE search_coverage (
    tenant      TEXT NOT NULL,
    file_id     TEXT NOT NULL,
    total_units BIGINT,
    whole       BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (tenant, file_id)
);
