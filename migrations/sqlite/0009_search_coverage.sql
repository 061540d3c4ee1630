-- Postgres's 0009 adds `search_coverage` beside its search index; SQLite keeps its search
-- index in search.db (migrations/sqlite_search/0002). Nothing to change here.
SELECT 1;
