-- Search across a tenant's documents (issue #19): one row per indexed page, slide, sheet,
-- chapter or whole text of an upload, and its words in an FTS5 index (rowid = id).
CREATE TABLE search_units (
    id       INTEGER PRIMARY KEY,
    tenant   TEXT NOT NULL,
    file_id  TEXT NOT NULL,
    unit     TEXT NOT NULL,   -- page, slide, sheet, chapter, document
    unit_key TEXT NOT NULL,   -- its number or sheet name
    text     TEXT NOT NULL,
    UNIQUE (tenant, file_id, unit, unit_key)
);
CREATE VIRTUAL TABLE search_fts USING fts5(terms, tokenize = 'unicode61 remove_diacritics 2');
