-- Units are indexed in parts of at most 64 KiB since issue #46 item 1 (`search::writer::parts`).
-- A unit indexed whole before that, longer than a part, would stay beside the parts a later
-- read adds (a row is replaced only by a longer text): such rows leave the index, and their
-- files are no longer indexed whole (their hits say so; a read or POST /files/{id}/index adds
-- them again, in parts).
UPDATE search_coverage SET whole = 0 WHERE EXISTS (SELECT 1 FROM search_units u
    WHERE u.tenant = search_coverage.tenant AND u.file_id = search_coverage.file_id
    AND length(CAST(u.text AS BLOB)) > 65536);
DELETE FROM search_fts WHERE rowid IN
    (SELECT id FROM search_units WHERE length(CAST(text AS BLOB)) > 65536);
DELETE FROM search_units WHERE length(CAST(text AS BLOB)) > 65536;
