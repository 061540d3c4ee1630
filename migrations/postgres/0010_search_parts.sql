-- The same as SQLite's search index's 0003 (sqlite_search/): units indexed whole before
-- issue #46 item 1, longer than a part (64 KiB), leave the index; their files are no longer
-- indexed whole. SQLite's 0010 is empty: its search index is a database of its own.
UPDATE search_coverage c SET whole = FALSE WHERE EXISTS (SELECT 1 FROM search_units u
    WHERE u.tenant = c.tenant AND u.file_id = c.file_id AND octet_length(u.text) > 65536);
DELETE FROM search_units WHERE octet_length(text) > 65536;
