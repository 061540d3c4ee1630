-- The search index of the embedded database (issue #19), in a file of its own
-- (`search.db` beside `docreader.db`): its writes take that file's write lock, so indexing
-- a read never holds up an upload's row (issue #23). One row per indexed page, slide,
-- sheet, chapter or whole text of an upload, and its words in an FTS5 index (rowid = id).
-- Connections to it attach `docreader.db` as `app` (uploads' names, the kept check).
CREATE TABLE IF NOT EXISTS search_units (
    id       INTEGER PRIMARY KEY,
    tenant   TEXT NOT NULL,
    file_id  TEXT NOT NULL,
    unit     TEXT NOT NULL,   -- page, slide, sheet, chapter, document
    unit_key TEXT NOT NULL,   -- its number or sheet name
    text     TEXT NOT NULL,
    UNIQUE (tenant, file_id, unit, unit_key)
);
-- Contentless: the words are indexed, not kept a second time (search_units holds the text).
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(terms, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2');
