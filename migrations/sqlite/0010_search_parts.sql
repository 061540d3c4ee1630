-- Nothing here: the search index is a database of its own on SQLite (sqlite_search/0003).
-- Postgres's 0010 takes the unit rows longer than a part out of its index.
SELECT 1;
