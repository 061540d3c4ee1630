-- How much of each indexed upload the index holds (issue #45 item 7): the number of units
-- (pages, slides, sheets, chapters) the file has, as its reads said, and whether one read
-- (or POST /files/{id}/index) covered it all. Search hits report it beside the units indexed.
CREATE TABLE IF NOT EXISTS search_coverage (
    tenant      TEXT NOT NULL,
    file_id     TEXT NOT NULL,
    total_units INTEGER,
    whole       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, file_id)
);
