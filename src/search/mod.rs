//! Search across a tenant's documents (issue #19): BM25 over SQLite FTS5, or (with
//! Postgres, issue #22) a `tsvector` of the same terms ranked by `ts_rank_cd`.
//!
//! What is indexed: the text of every page, slide, sheet or chapter a read of an upload
//! returned (its units as the extractor recorded them, never split at lines that read like
//! markers; a format without them is one unit), and whole documents through `POST /files/{id}/index`. A unit is kept once per
//! file, replaced when a later read returns more of it. Reads that do not start at the
//! document's start (`offset`, `byte_offset`, `paragraph_offset`, `range`) or return only
//! matching lines (`query`) are not indexed: their line numbers are not the document's.
//!
//! FTS5's `unicode61` tokenizer splits words at spaces and punctuation, which Chinese and
//! Japanese do not have, and its trigram tokenizer cannot match a 2-character query: runs
//! of CJK characters are indexed as overlapping bigrams (`北京大学` → `北京 京大 大学`), and a
//! query's CJK runs become phrases of the same bigrams (one character: a prefix query).

use crate::db::Db;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::options::ReadRequest;

mod query;
mod terms;
mod writer;

pub use query::*;
pub use terms::*;
pub use writer::*;

/// Whether a read's text is the document's own, from its start (see the module doc).
pub fn indexable(req: &ReadRequest) -> bool {
    // A Markdown read's text carries its syntax (`|`, `#`, `**`): the plain reading is
    // indexed, never a rendering of it.
    !req.markdown()
        && req.query.is_none()
        && req.offset.is_none()
        && req.limit.is_none()
        && req.byte_offset.is_none()
        && req.byte_length.is_none()
        && req.paragraph_offset.is_none()
        && req.range.is_none()
        && req.section.is_none()
}

/// Move an index that an earlier version kept inside `docreader.db` (`main`) into
/// `search.db` (`search`), then drop it there. Runs once at start; nothing to do after.
/// The search index's database (`db::open_derived`), with an index earlier versions kept in
/// `docreader.db` moved into it the first time.
pub async fn open(data_dir: &std::path::Path, db: &Db) -> Result<Db, String> {
    let derived = crate::db::open_derived(data_dir, db).await?;
    if let (Db::Sqlite(main), Db::Sqlite(search)) = (db, &derived) {
        move_index_out(main, search).await.map_err(|e| {
            format!(
                "cannot open the search index under {}: {e}",
                data_dir.display()
            )
        })?;
    }
    Ok(derived)
}

pub async fn move_index_out(
    main: &sqlx::SqlitePool,
    search: &sqlx::SqlitePool,
) -> Result<(), sqlx::Error> {
    let old: Option<(String,)> = sqlx::query_as(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'search_units'",
    )
    .fetch_optional(main)
    .await?;
    if old.is_none() {
        return Ok(());
    }
    let mut last = 0i64;
    let mut moved = 0usize;
    loop {
        let rows: Vec<(i64, String, String, String, String, String)> = sqlx::query_as(
            "SELECT id, tenant, file_id, unit, unit_key, text FROM search_units WHERE id > ? ORDER BY id LIMIT 500",
        )
        .bind(last)
        .fetch_all(main)
        .await?;
        let Some(end) = rows.last().map(|r| r.0) else {
            break;
        };
        let mut tx = search.begin().await?;
        for (_, tenant, file_id, unit, key, text) in &rows {
            let id: Option<(i64,)> = sqlx::query_as(
                "INSERT INTO search_units (tenant, file_id, unit, unit_key, text) VALUES (?, ?, ?, ?, ?) \
                 ON CONFLICT DO NOTHING RETURNING id",
            )
            .bind(tenant)
            .bind(file_id)
            .bind(unit)
            .bind(key)
            .bind(text)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some((id,)) = id {
                sqlx::query("INSERT INTO search_fts (rowid, terms) VALUES (?, ?)")
                    .bind(id)
                    .bind(index_terms(text))
                    .execute(&mut *tx)
                    .await?;
                moved += 1;
            }
        }
        tx.commit().await?;
        last = end;
    }
    sqlx::raw_sql("DROP TABLE search_fts; DROP TABLE search_units;")
        .execute(main)
        .await?;
    if moved > 0 {
        tracing::info!(
            units = moved,
            "search index moved to its own file (search.db)"
        );
    }
    Ok(())
}

/// Whether any of a file's text is indexed.
pub async fn indexed(db: &Db, tenant: &str, file_id: &str) -> Result<bool, sqlx::Error> {
    let q = "SELECT file_id FROM search_units WHERE tenant = $1 AND file_id = $2 LIMIT 1";
    let row: Option<(String,)> = crate::db::on!(db, p => sqlx::query_as(q)
        .bind(tenant)
        .bind(file_id)
        .fetch_optional(p)
        .await)?;
    Ok(row.is_some())
}

/// Remove a file from the index (when it is deleted).
pub async fn forget(db: &Db, tenant: &str, file_id: &str) -> Result<(), sqlx::Error> {
    let db = match db {
        Db::Sqlite(p) => p,
        Db::Postgres(p) => {
            for q in [
                "DELETE FROM search_units WHERE tenant = $1 AND file_id = $2",
                "DELETE FROM search_coverage WHERE tenant = $1 AND file_id = $2",
            ] {
                sqlx::query(q).bind(tenant).bind(file_id).execute(p).await?;
            }
            return Ok(());
        }
    };
    let mut tx = db.begin().await?;
    sqlx::query(
        "DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_units WHERE tenant = ? AND file_id = ?)",
    )
    .bind(tenant)
    .bind(file_id)
    .execute(&mut *tx)
    .await?;
    for q in [
        "DELETE FROM search_units WHERE tenant = ? AND file_id = ?",
        "DELETE FROM search_coverage WHERE tenant = ? AND file_id = ?",
    ] {
        sqlx::query(q)
            .bind(tenant)
            .bind(file_id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index's CPU work runs on a thread of its own, niced by `INDEX_NICENESS` (up to the
    /// lowest, 19), and its result comes back; the caller's priority is left as it was.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_index_work_runs_at_a_lower_priority() {
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let before = nice();
        let (name, during) = writer::off_runtime(move || {
            Ok((std::thread::current().name().map(str::to_string), nice()))
        })
        .await
        .unwrap();
        assert_eq!(name.as_deref(), Some("docreader-index"));
        assert_eq!(during, (before + 10).min(19));
        assert_eq!(nice(), before);
    }

    /// The index writer's connection thread, where SQLite builds FTS5's segments, runs
    /// niced by `INDEX_NICENESS` once `lower_connection` has run on it (once: twice does
    /// not lower it further); another connection of the pool is left as it was.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_index_writers_sqlite_thread_runs_at_a_lower_priority() {
        use sqlx::Connection;
        let nice =
            || unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        let before = nice();
        // The nice value of the thread a connection's statements run on.
        async fn probe(conn: &mut sqlx::SqliteConnection) -> i32 {
            let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
            let s = seen.clone();
            conn.lock_handle()
                .await
                .unwrap()
                .create_collation("probe", move |_, _| {
                    *s.lock().unwrap() = Some(unsafe {
                        libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
                    });
                    std::cmp::Ordering::Equal
                })
                .unwrap();
            sqlx::query("SELECT 'a' = 'b' COLLATE probe")
                .execute(&mut *conn)
                .await
                .unwrap();
            let n = seen.lock().unwrap().take().unwrap();
            n
        }
        let mut writer = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        let mut other = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        writer::lower_connection(&mut writer).await.unwrap();
        writer::lower_connection(&mut writer).await.unwrap();
        assert_eq!(probe(&mut writer).await, (before + 10).min(19));
        assert_eq!(probe(&mut other).await, before);
        assert_eq!(nice(), before);
    }

    #[test]
    fn cjk_runs_become_bigrams() {
        assert_eq!(
            index_terms("北京大学 in Beijing"),
            "北京 京大 大学 in Beijing "
        );
        assert_eq!(index_terms("東京は"), "東京 京は ");
        assert_eq!(match_query("大学").unwrap(), "\"大学\"");
        assert_eq!(match_query("北京大学").unwrap(), "\"北京 京大 大学\"");
        assert_eq!(match_query("学").unwrap(), "\"学\"*");
        assert_eq!(
            match_query("Invoice total OR x*").unwrap(),
            "\"invoice\" OR \"total\" OR \"or\" OR \"x\""
        );
        assert!(match_query(" ,;- ").is_none());
    }

    /// Words in double quotes are a phrase that must match (issue #45 item 7); the other
    /// words rank; an unclosed quote quotes nothing; no user text is syntax.
    #[test]
    fn quoted_words_are_a_phrase() {
        assert_eq!(
            match_query("\"Net Total\" invoice").unwrap(),
            "\"net total\" AND (\"invoice\" OR \"net total\")"
        );
        assert_eq!(
            match_query("\"net total\" \"due date\"").unwrap(),
            "\"net total\" AND \"due date\""
        );
        assert_eq!(match_query("\"北京大学\"").unwrap(), "\"北京 京大 大学\"");
        assert_eq!(match_query("\"net total").unwrap(), "\"net\" OR \"total\"");
        assert_eq!(
            ts_query("\"net total\" invoice").unwrap(),
            "('net' <-> 'total') & ('invoice' | ('net' <-> 'total'))"
        );
        assert_eq!(ts_query("a b").unwrap(), "'a' | 'b'");
    }

    /// Issue #46 item 1: an index written before units went in parts loses its rows longer
    /// than a part (they would stay beside the parts a later read adds), and their files
    /// are no longer indexed whole; shorter rows stay as they are.
    #[tokio::test]
    async fn units_indexed_whole_before_parts_leave_the_index() {
        use sqlx::{Connection, Executor};
        let mut c = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        let migrations = sqlx::migrate!("./migrations/sqlite_search");
        let (before, parts): (Vec<_>, Vec<_>) = migrations.iter().partition(|m| m.version < 3);
        for m in before {
            c.execute(&*m.sql).await.unwrap();
        }
        let long = "word ".repeat(20_000);
        for (id, file, text) in [(1, "big", long.as_str()), (2, "small", "a short page")] {
            sqlx::query("INSERT INTO search_units (id, tenant, file_id, unit, unit_key, text) VALUES (?, 't', ?, 'page', '1', ?)")
                .bind(id).bind(file).bind(text).execute(&mut c).await.unwrap();
            sqlx::query("INSERT INTO search_fts (rowid, terms) VALUES (?, ?)")
                .bind(id)
                .bind(text)
                .execute(&mut c)
                .await
                .unwrap();
            sqlx::query("INSERT INTO search_coverage (tenant, file_id, total_units, whole) VALUES ('t', ?, 1, 1)")
                .bind(file).execute(&mut c).await.unwrap();
        }
        for m in parts {
            c.execute(&*m.sql).await.unwrap();
        }
        let units: Vec<(String,)> = sqlx::query_as("SELECT file_id FROM search_units")
            .fetch_all(&mut c)
            .await
            .unwrap();
        assert_eq!(units, [("small".to_string(),)]);
        let words: i64 =
            sqlx::query_scalar("SELECT count(*) FROM search_fts WHERE search_fts MATCH 'word'")
                .fetch_one(&mut c)
                .await
                .unwrap();
        assert_eq!(words, 0);
        let whole: Vec<(String, bool)> =
            sqlx::query_as("SELECT file_id, whole FROM search_coverage ORDER BY file_id")
                .fetch_all(&mut c)
                .await
                .unwrap();
        assert_eq!(whole, [("big".into(), false), ("small".into(), true)]);
    }

    /// One group, one round trip: deleted files left out, a unit read twice kept at its
    /// longest, an indexed unit replaced only by a longer text (its words with it), words in
    /// the FTS index exactly once a unit; a group of more units than one INSERT takes.
    #[tokio::test]
    async fn a_group_is_indexed_in_one_piece() {
        use sqlx::{Connection, Executor};
        let mut c = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        c.execute("ATTACH DATABASE ':memory:' AS app; CREATE TABLE app.files (id TEXT PRIMARY KEY, tenant TEXT NOT NULL);")
            .await
            .unwrap();
        for m in sqlx::migrate!("./migrations/sqlite_search").iter() {
            c.execute(&*m.sql).await.unwrap();
        }
        c.execute("INSERT INTO app.files VALUES ('f1', 't'), ('f2', 't'), ('big', 't')")
            .await
            .unwrap();
        let find = |q: &'static str| {
            sqlx::query_as::<_, (String, String, String)>(
                "SELECT u.file_id, u.unit_key, u.text FROM search_fts JOIN search_units u ON u.id = search_fts.rowid \
                 WHERE search_fts MATCH ? ORDER BY u.file_id, u.unit_key",
            )
            .bind(match_query(q).unwrap())
        };
        let p = |pages: &[&str]| pages.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        index_texts_sqlite(
            &mut c,
            &[
                ("t", "f1", p(&["alpha one\n", "bravo\n"])),
                ("t", "gone", p(&["charlie\n"])),
                ("t", "f2", p(&["delta\n"])),
                ("t", "f2", p(&["delta echo\n"])),
                ("u", "f1", p(&["foxtrot\n"])),
            ],
        )
        .await
        .unwrap();
        let units: Vec<(String, String, String)> = sqlx::query_as(
            "SELECT file_id, unit_key, text FROM search_units ORDER BY file_id, unit_key",
        )
        .fetch_all(&mut c)
        .await
        .unwrap();
        let f1 = |k: &str, t: &str| ("f1".to_string(), k.to_string(), t.to_string());
        let f2 = |t: &str| ("f2".to_string(), "1".to_string(), t.to_string());
        assert_eq!(
            units,
            [
                f1("1", "alpha one\n"),
                f1("2", "bravo\n"),
                f2("delta echo\n")
            ],
            "no unit of a deleted file or of another tenant's id, the longest of two"
        );
        assert_eq!(
            find("echo").fetch_all(&mut c).await.unwrap(),
            [f2("delta echo\n")]
        );
        // Again, shorter and longer: page 1 of f1 grows (its old words go with the old
        // text), page 2 does not shrink.
        index_texts_sqlite(
            &mut c,
            &[(
                "t",
                "f1",
                p(&["alpha golf india\n", "br\n", "kilo\0oscar\n"]),
            )],
        )
        .await
        .unwrap();
        assert_eq!(
            find("alpha").fetch_all(&mut c).await.unwrap(),
            [f1("1", "alpha golf india\n")],
            "one entry, the longer text's"
        );
        assert!(find("one").fetch_all(&mut c).await.unwrap().is_empty());
        // A NUL in a text cuts nothing off it (JSON carries it as \u0000; SQLite before
        // 3.45 ended a string taken out with `->>` there).
        assert_eq!(
            find("oscar").fetch_all(&mut c).await.unwrap(),
            [f1("3", "kilo\0oscar\n")]
        );
        assert_eq!(find("golf").fetch_all(&mut c).await.unwrap().len(), 1);
        assert_eq!(
            find("bravo").fetch_all(&mut c).await.unwrap(),
            [f1("2", "bravo\n")]
        );
        let fts: i64 = sqlx::query_scalar("SELECT count(*) FROM search_fts WHERE search_fts MATCH 'alpha OR bravo OR delta OR golf'")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(fts, 3);
        // More units than one trip carries (three trips by count, and one of more text
        // than a trip's bytes on its own), and page 1 again, longer, in the last trip.
        let mut big: Vec<String> = (1..=2_500).map(|p| format!("word{p} hotel\n")).collect();
        big.push(format!("{}\n", "lima ".repeat(60_000)));
        index_texts_sqlite(
            &mut c,
            &[("t", "big", big), ("t", "big", p(&["word1 hotel mike\n"]))],
        )
        .await
        .unwrap();
        assert_eq!(find("hotel").fetch_all(&mut c).await.unwrap().len(), 2_500);
        assert_eq!(find("word2345").fetch_all(&mut c).await.unwrap().len(), 1);
        // 300,000 bytes on one line: five parts of at most PART_BYTES (issue #46 item 1).
        let lima = find("lima").fetch_all(&mut c).await.unwrap();
        assert_eq!(lima.len(), 300_000usize.div_ceil(PART_BYTES));
        assert!(lima.iter().all(|(_, _, t)| t.len() <= PART_BYTES));
        assert_eq!(lima.iter().map(|(_, _, t)| t.len()).sum::<usize>(), 300_001);
        let mike = find("mike").fetch_all(&mut c).await.unwrap();
        assert_eq!(mike.len(), 1);
        assert_eq!(mike[0].2, "word1 hotel mike\n");
        let left: i64 = sqlx::query_scalar("SELECT count(*) FROM temp.new_units")
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(left, 0);
    }

    #[test]
    fn a_line_whose_lowercase_is_longer_cuts_a_snippet_on_the_line() {
        // Issue #41 item 4: `İ` lowercases to two characters; 200 of them before the match
        // pushed the cut past the line's end (a panic that killed the search).
        let line = format!("{} invoice total", "İ".repeat(200));
        let (n, snippet) = best_line(&line, &["invoice".to_string()]);
        assert_eq!(n, 1);
        assert!(snippet.contains("invoice"), "{snippet}");
        assert!(snippet.chars().count() <= 240);
    }

    #[test]
    fn a_query_keeps_its_first_words() {
        let q: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(parse_query(&q).words().len(), MAX_TERMS);
        let quoted = format!("\"{q}\"");
        assert_eq!(parse_query(&quoted).words().len(), MAX_TERMS);
    }

    #[test]
    fn a_long_unit_is_indexed_in_parts_that_know_their_lines() {
        // Issue #46 item 1: parts of at most PART_BYTES, cut after a line break, each
        // knowing the line of its unit it starts on.
        let text: String = (1..=20_000)
            .map(|i| format!("row {i} of the file\n"))
            .collect();
        let ps = parts(&text);
        assert!(ps.len() > 1);
        assert_eq!(ps.iter().map(|p| p.2).collect::<String>(), text);
        for (offset, line, part) in &ps {
            assert!(part.len() <= PART_BYTES && part.ends_with('\n'));
            let first = part.lines().next().unwrap();
            assert_eq!(first, format!("row {line} of the file"), "at {offset}");
            let key = part_key("7", *line, *offset);
            assert_eq!(
                unit_of_part(&key),
                ("7", if *offset == 0 { 1 } else { *line })
            );
        }
        // A sheet's name stays its name, separators and all, when it is no part's key.
        assert_eq!(unit_of_part("Q1\u{1f}x"), ("Q1\u{1f}x", 1));
        assert_eq!(parts("").len(), 0);
        // Multi-byte text cut inside a line longer than a part: on a character.
        let long = "é".repeat(PART_BYTES);
        let ps = parts(&long);
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].2.len() + ps[1].2.len(), long.len());
        // A part's end falling inside a character, with line breaks before it.
        let odd: String = "é\n".repeat(PART_BYTES); // byte PART_BYTES is inside an é
        let ps = parts(&odd);
        assert_eq!(ps.iter().map(|p| p.2).collect::<String>(), odd);
        assert!(ps
            .iter()
            .all(|p| p.2.ends_with('\n') || p.0 + p.2.len() == odd.len()));
    }

    #[test]
    fn a_read_adds_at_most_its_cap_cut_at_a_line() {
        use crate::model::{Span, Unit, UnitKind};
        let mut text = String::new();
        let mut spans = Vec::new();
        for p in 1..=3u64 {
            let head = text.len();
            text.push_str(&format!("--- Page {p} ---\n"));
            let body = text.len();
            text.push_str("line one\nline two\n");
            spans.push(Span {
                unit: Unit::numbered(UnitKind::Page, p),
                head,
                body,
                end: text.len(),
            });
        }
        let all = within(&text, &spans, usize::MAX);
        assert_eq!(
            (all.units.len(), all.copied, all.cut),
            (3, text.len(), false)
        );
        // Room for page 1 and the first line of page 2.
        let w = within(&text, &spans, 18 + 9 + 3);
        assert!(w.cut);
        assert_eq!(w.units.len(), 2);
        assert_eq!(&text[w.units[1].body..w.units[1].end], "line one\n");
        assert_eq!(w.copied, w.units[1].end);
        // Not even one line of page 1.
        let w = within(&text, &spans, 4);
        assert!(w.cut && w.units.is_empty() && w.copied == 0);
    }

    #[test]
    fn the_best_line_is_found() {
        let (line, snip) = best_line("intro\nthe total is 42\nother", &["total".into()]);
        assert_eq!((line, snip.as_str()), (2, "the total is 42"));
    }
}
