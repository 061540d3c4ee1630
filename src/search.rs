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

/// Whether a character belongs to a script written without spaces between words (or, for
/// Hangul, with words long enough that bigrams match better than whole words).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF
        | 0x20000..=0x3FFFF)
}

/// Split text into words and CJK runs (both lowercased by the tokenizer later).
fn pieces(text: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    for c in text.chars() {
        let kind = if is_cjk(c) {
            Some(true)
        } else if c.is_alphanumeric() {
            Some(false)
        } else {
            None
        };
        match (kind, out.last_mut()) {
            (Some(k), Some((lk, s))) if *lk == k && !s.is_empty() => s.push(c),
            (Some(k), _) => out.push((k, c.to_string())),
            (None, Some((_, s))) if !s.is_empty() => out.push((false, String::new())),
            (None, _) => {}
        }
    }
    out.retain(|(_, s)| !s.is_empty());
    out
}

fn bigrams(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() == 1 {
        return vec![run.to_string()];
    }
    chars.windows(2).map(|w| w.iter().collect()).collect()
}

/// What the index stores for a text: its words, with CJK runs as bigrams.
pub fn index_terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (cjk, s) in pieces(text) {
        if cjk {
            for b in bigrams(&s) {
                out.push_str(&b);
                out.push(' ');
            }
        } else {
            out.push_str(&s);
            out.push(' ');
        }
    }
    out
}

/// A query as the index matches it: its phrases (words between double quotes, which must
/// stand together in that order) and its other words, at most `MAX_TERMS` words in all (a
/// CJK run counts as one). An unclosed quote quotes nothing.
#[derive(Debug, Default)]
struct Parsed {
    phrases: Vec<Vec<(bool, String)>>,
    loose: Vec<(bool, String)>,
}

fn parse_query(query: &str) -> Parsed {
    let segments: Vec<&str> = query.split('"').collect();
    let closed = segments.len() % 2 == 1;
    let mut left = MAX_TERMS;
    let mut parsed = Parsed::default();
    for (i, seg) in segments.iter().enumerate() {
        let quoted = i % 2 == 1 && (closed || i + 1 < segments.len());
        let mut words: Vec<(bool, String)> = pieces(seg)
            .into_iter()
            .map(|(cjk, w)| (cjk, w.to_lowercase()))
            .collect();
        words.truncate(left);
        left -= words.len();
        if quoted && !words.is_empty() {
            parsed.phrases.push(words);
        } else {
            parsed.loose.extend(words);
        }
    }
    parsed
}

impl Parsed {
    /// Every word, for the snippet's line.
    fn words(&self) -> Vec<String> {
        self.phrases
            .iter()
            .flatten()
            .chain(&self.loose)
            .map(|(_, w)| w.clone())
            .collect()
    }

    /// The index's terms of a phrase, in order (a CJK run as its bigrams).
    fn phrase_terms(phrase: &[(bool, String)]) -> Vec<String> {
        phrase
            .iter()
            .flat_map(|(cjk, w)| if *cjk { bigrams(w) } else { vec![w.clone()] })
            .collect()
    }

    /// The query in an index's syntax, given how it writes a run of terms that must
    /// stand together (`phrase`) and a prefix (`prefix`): phrases required, the other
    /// words (and the first phrase) ranked — `P1 AND P2 AND (w1 OR w2 OR P1)`; without
    /// phrases, any of the words. A loose word is a phrase of its terms (a CJK run's
    /// bigrams), a lone CJK character a prefix.
    fn render(
        &self,
        phrase: impl Fn(&[String]) -> String,
        prefix: impl Fn(&str) -> String,
        and: &str,
        or: &str,
    ) -> Option<String> {
        let required: Vec<String> = self
            .phrases
            .iter()
            .map(|p| phrase(&Self::phrase_terms(p)))
            .collect();
        let mut loose: Vec<String> = self
            .loose
            .iter()
            .map(|(cjk, s)| match *cjk && s.chars().count() == 1 {
                true => prefix(s),
                false => phrase(&Self::phrase_terms(&[(*cjk, s.clone())])),
            })
            .collect();
        loose.dedup();
        match (required.is_empty(), loose.is_empty()) {
            (true, true) => None,
            (true, false) => Some(loose.join(or)),
            (false, true) => Some(required.join(and)),
            (false, false) => {
                loose.push(required[0].clone());
                Some(format!("{}{and}({})", required.join(and), loose.join(or)))
            }
        }
    }
}

/// The FTS5 query for a user's query: any of its words (BM25 ranks documents with more
/// of them, and rarer ones, first); a CJK run is a phrase of its bigrams; words in double
/// quotes a phrase that must match. Every term is quoted, so no user text is FTS5 syntax.
pub fn match_query(query: &str) -> Option<String> {
    parse_query(query).render(
        |terms| format!("\"{}\"", terms.join(" ")),
        |t| format!("\"{t}\"*"),
        " AND ",
        " OR ",
    )
}

/// The Postgres tsvector of a text: the terms `index_terms` gives, lowercased, with their
/// positions (so a CJK run's bigrams match as a phrase), written as tsvector input: no
/// text search parser or locale of the database decides what a word is.
pub fn ts_vector(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (i, term) in index_terms(text)
        .split(' ')
        .filter(|t| !t.is_empty())
        .enumerate()
    {
        let term = term.to_lowercase();
        out.push('\'');
        out.push_str(&term.replace('\'', "''"));
        out.push_str("':");
        out.push_str(&(i + 1).min(16383).to_string());
        out.push(' ');
    }
    out
}

/// The Postgres query for a user's query: the same terms as `match_query`, as a tsquery
/// (`|` between terms, a CJK run's bigrams and a phrase's words in sequence with `<->`,
/// one CJK character a prefix, phrases required with `&`), cast to tsquery as written (no
/// parser: `ts_vector`). Terms are letters and digits only, each quoted: no user text is
/// syntax.
pub fn ts_query(query: &str) -> Option<String> {
    let quote = |t: &str| format!("'{}'", t.replace('\'', "''"));
    parse_query(query).render(
        |terms| match terms {
            [one] => quote(one),
            _ => {
                let seq: Vec<String> = terms.iter().map(|t| quote(t)).collect();
                format!("({})", seq.join(" <-> "))
            }
        },
        |t| format!("{}:*", quote(t)),
        " & ",
        " | ",
    )
}

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
}

/// Indexing that runs after a read has answered (a read's answer does not wait for the
/// index's writes and their sync). Searches and deletes wait for the indexing already
/// under way (`settled`), so a search right after a read finds it and a delete leaves
/// nothing behind; at most `SLOTS` wait or are written at once, and a read waits for a slot
/// before it answers, so a backlog of copies of read texts cannot grow.
#[derive(Debug)]
pub struct Pending {
    /// On SQLite, the task that writes the index (`write_index`); on Postgres none: each
    /// read's text is written by a task of its own, Postgres having row locks.
    queue: Option<tokio::sync::mpsc::UnboundedSender<IndexJob>>,
    /// The index's database (`db::open_derived`: on SQLite `search.db`).
    db: Db,
    /// On SQLite, the index's writers (the indexing task, deletes) take turns here: its
    /// transactions read before they write, which SQLite allows only to one writer.
    turn: std::sync::Arc<tokio::sync::Mutex<()>>,
    gate: std::sync::Arc<tokio::sync::RwLock<()>>,
    slots: std::sync::Arc<tokio::sync::Semaphore>,
    /// Searches and deletes waiting for the indexing under way (`settled`): the writer
    /// stops gathering for them (`GATHER`).
    hurry: std::sync::Arc<Hurry>,
}

/// How long SQLite's index writer gathers reads' texts before it writes them in one
/// transaction, unless `GATHER_AT` have come or a search or delete waits (`settled`).
/// Written a read at a time, each read's index transaction (for a one-page read: FTS5's
/// new segment and its merges, ~20 log frames) ran just as the next request came in and
/// took the CPU that request needed on a machine of two: without indexing at all, upload
/// + read of a one-page PDF at concurrency 1 took 0.2 ms less. Gathered, one transaction
/// writes many reads' texts for little more than the cost of one (the server's CPU an
/// operation ~0.3 ms less; concurrency 1 ~0.2 ms faster, concurrency 8 ~10 % more reads).
const GATHER: std::time::Duration = std::time::Duration::from_millis(25);
const GATHER_AT: usize = SLOTS / 2;

/// Who waits for the index writer (see `GATHER`). `now` wakes a gathering writer; when it
/// is writing instead, the wake is kept and ends its next gathering at once (harmless: one
/// group written without gathering).
#[derive(Debug, Default)]
struct Hurry {
    waiting: std::sync::atomic::AtomicUsize,
    now: tokio::sync::Notify,
}

/// One `settled` waiting, counted until it ends however it ends.
struct Waiting<'a>(&'a Hurry);

impl<'a> Waiting<'a> {
    fn start(hurry: &'a Hurry) -> Self {
        hurry
            .waiting
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        hurry.now.notify_one();
        Self(hurry)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0
            .waiting
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A read's text waiting to be indexed, with its share of the gate and its slot (both let
/// go once it is written).
#[derive(Debug)]
struct IndexJob {
    read: Indexed,
    _held: (
        tokio::sync::OwnedRwLockReadGuard<()>,
        tokio::sync::OwnedSemaphorePermit,
    ),
}

const SLOTS: usize = 16;

impl Pending {
    pub fn new(db: Db) -> Self {
        let turn = std::sync::Arc::new(tokio::sync::Mutex::new(()));
        let hurry = std::sync::Arc::new(Hurry::default());
        let queue = match &db {
            Db::Sqlite(pool) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                tokio::spawn(write_index(pool.clone(), turn.clone(), hurry.clone(), rx));
                Some(tx)
            }
            Db::Postgres(_) => None,
        };
        Self {
            queue,
            db,
            turn,
            gate: Default::default(),
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(SLOTS)),
            hurry,
        }
    }

    /// Index `text` (what a read of the upload returned) in the background.
    pub async fn index(
        &self,
        tenant: &str,
        file_id: &str,
        text: &str,
        units: &[crate::model::Span],
        coverage: Coverage,
    ) {
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return;
        };
        let share = self.gate.clone().read_owned().await;
        let job = IndexJob {
            read: Indexed {
                tenant: tenant.to_string(),
                file_id: file_id.to_string(),
                text: text.to_string(),
                units: units.to_vec(),
                coverage,
            },
            _held: (share, slot),
        };
        if let Some(queue) = &self.queue {
            // The writer ends only with the service; a job it never takes is dropped, and
            // with it its share and slot.
            let _ = queue.send(job);
            return;
        }
        // No writer task: Postgres, where each read's text is written by a task of its own.
        let Db::Postgres(pool) = self.db.clone() else {
            return;
        };
        let rid = crate::request_id::current().unwrap_or_default();
        tokio::spawn(crate::request_id::scope(rid, async move {
            // Search is a by-product of reading: a failure to index never fails the read.
            let IndexJob { read, _held } = job;
            if let Err(e) = index_text_postgres(&pool, read).await {
                tracing::warn!(error = %e, "could not index the read for search");
            }
        }));
    }

    /// Wait until the indexing started before this call is written (the writer stops
    /// gathering meanwhile).
    pub async fn settled(&self) {
        let _waiting = Waiting::start(&self.hurry);
        drop(self.gate.write().await);
    }

    /// The index's database (searches read it).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Remove a file's text from the index (its row is already gone, so no indexing that
    /// starts after this writes it again).
    pub async fn forget(&self, tenant: &str, file_id: &str) -> Result<(), sqlx::Error> {
        let _turn = self.turn.lock().await;
        forget(&self.db, tenant, file_id).await
    }

    /// Record that a file was read whole into the index (`POST /files/{id}/index` followed
    /// every `next` to the end), once the reads' indexing is written.
    pub async fn mark_whole(&self, tenant: &str, file_id: &str) -> Result<(), sqlx::Error> {
        self.settled().await;
        let _turn = self.turn.lock().await;
        let q = match &self.db {
            Db::Sqlite(_) => {
                "INSERT INTO search_coverage (tenant, file_id, whole) SELECT $1, $2, 1 \
                 WHERE EXISTS (SELECT 1 FROM app.files f WHERE f.id = $2 AND f.tenant = $1) \
                 ON CONFLICT (tenant, file_id) DO UPDATE SET whole = 1"
            }
            Db::Postgres(_) => {
                "INSERT INTO search_coverage (tenant, file_id, whole) SELECT $1, $2, TRUE \
                 WHERE EXISTS (SELECT 1 FROM files f WHERE f.id = $2 AND f.tenant = $1) \
                 ON CONFLICT (tenant, file_id) DO UPDATE SET whole = TRUE"
            }
        };
        crate::db::on!(&self.db, p => sqlx::query(q).bind(tenant).bind(file_id).execute(p).await.map(drop))?;
        Ok(())
    }
}

/// What reads said of their files' coverage, kept beside their units (SQLite's writer,
/// on its connection, after the units went in): the larger total wins a `NULL`, and a file
/// once covered whole stays so. Rows only for files still there.
async fn cover_sqlite(
    conn: &mut sqlx::SqliteConnection,
    texts: &[Indexed],
) -> Result<(), sqlx::Error> {
    // One transaction for the group (one commit, not one a text).
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    for t in texts {
        sqlx::query(
            "INSERT INTO search_coverage (tenant, file_id, total_units, whole) SELECT ?1, ?2, ?3, ?4 \
             WHERE EXISTS (SELECT 1 FROM app.files f WHERE f.id = ?2 AND f.tenant = ?1) \
             ON CONFLICT (tenant, file_id) DO UPDATE SET \
             total_units = coalesce(excluded.total_units, search_coverage.total_units), \
             whole = max(search_coverage.whole, excluded.whole)",
        )
        .bind(&t.tenant)
        .bind(&t.file_id)
        .bind(t.coverage.total_units.map(|n| n.min(i64::MAX as u64) as i64))
        .bind(t.coverage.whole)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await
}

/// The most reads' texts one index transaction writes.
const MAX_GROUP: usize = 32;

/// SQLite's index writer: the texts that queued while it wrote the last ones go into one
/// transaction (FTS5 then writes one segment for them all, not one per read), in the
/// index writers' turn. A group that fails is written again text by text, so one bad text
/// costs only its own indexing.
async fn write_index(
    pool: sqlx::SqlitePool,
    turn: std::sync::Arc<tokio::sync::Mutex<()>>,
    hurry: std::sync::Arc<Hurry>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<IndexJob>,
) {
    // A connection of its own, out of the pool: a pool's connection is pinged on its way
    // out and again on its way back, each a round trip to the connection's thread.
    let mut conn = None;
    while let Some(first) = rx.recv().await {
        let mut group = vec![first];
        let until = tokio::time::Instant::now() + GATHER;
        while group.len() < GATHER_AT
            && hurry.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0
        {
            tokio::select! {
                job = rx.recv() => match job {
                    Some(job) => group.push(job),
                    None => break,
                },
                _ = tokio::time::sleep_until(until) => break,
                _ = hurry.now.notified() => break,
            }
        }
        let turn = turn.lock().await;
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let texts: Texts = std::sync::Arc::new(
            group
                .iter_mut()
                .map(|j| std::mem::take(&mut j.read))
                .collect(),
        );
        match index_texts_on(&pool, &mut conn, texts.clone(), None).await {
            Ok(()) => cover_on(&mut conn, &texts).await,
            Err(e) if texts.len() == 1 => {
                tracing::warn!(error = %e, "could not index the read for search");
            }
            Err(_) => {
                for (k, one) in texts.iter().enumerate() {
                    match index_texts_on(&pool, &mut conn, texts.clone(), Some(k)).await {
                        Ok(()) => cover_on(&mut conn, &texts[k..=k]).await,
                        Err(e) => {
                            tracing::warn!(error = %e, file_id = one.file_id, "could not index the read for search")
                        }
                    }
                }
            }
        }
        drop(turn);
        // Each job's share of the gate and its slot go with it.
        drop(group);
    }
}

/// `cover_sqlite` on the writer's connection (a failure costs the hits' coverage only).
async fn cover_on(conn: &mut Option<sqlx::SqliteConnection>, texts: &[Indexed]) {
    if let Some(c) = conn {
        if let Err(e) = cover_sqlite(c, texts).await {
            tracing::warn!(error = %e, "could not record how much of a file is indexed");
        }
    }
}

/// Reads' texts waiting to be indexed together: (tenant, file id, text).
type Texts = std::sync::Arc<Vec<Indexed>>;

/// A read's text waiting to be indexed, with where its units stand in it (the envelope's
/// `units`): each page, slide, sheet or chapter is a unit of the index.
#[derive(Debug, Default)]
struct Indexed {
    tenant: String,
    file_id: String,
    text: String,
    units: Vec<crate::model::Span>,
    coverage: Coverage,
}

/// What a read says of how much of its file it covers (for the hits' `coverage`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Coverage {
    /// The units (pages, slides, sheets, chapters; 1 for a text without them) the file has.
    pub total_units: Option<u64>,
    /// Whether the read returned all of the file's text (every unit, none cut).
    pub whole: bool,
}

impl Coverage {
    /// What a read's envelope says: its total of units, and whether nothing was left out.
    pub fn of(env: &crate::envelope::Envelope) -> Self {
        let r = &env.report;
        // (A multi-page image says no total: it is never whole from one read, as pages it
        // could not decode leave only a warning; the hits show at least its units.)
        let total = r
            .total_pages
            .or(r.total_slides)
            .or(r.total_chapters)
            .or(r.sheets.as_ref().map(|s| s.len() as u64))
            .or(Some(1));
        let whole = !env.truncated
            && env.next.is_none()
            && r.partial != Some(true)
            && r.skipped_pages.as_ref().is_none_or(|p| p.is_empty())
            && Some(env.spans.len() as u64) == total;
        Self {
            total_units: total,
            whole,
        }
    }
}

/// A unit of the index: its kind, key (number or sheet name) and text.
struct SearchUnit<'a> {
    kind: &'static str,
    key: String,
    text: &'a str,
}

impl Indexed {
    /// Its units with text: each unit's own text (not its marker line, nor what stands
    /// outside every unit, such as a workbook's sheet list).
    fn search_units(&self) -> Vec<SearchUnit<'_>> {
        self.units
            .iter()
            .filter_map(|s| {
                Some((
                    s.unit.kind.as_str(),
                    s.unit.key(),
                    self.text.get(s.body..s.end)?,
                ))
            })
            .filter(|(_, _, t)| !t.trim().is_empty())
            .map(|(kind, key, text)| SearchUnit { kind, key, text })
            .collect()
    }
}

/// Run `work` (the index's CPU work: a text's units, their words and their encoding) on the
/// blocking pool. Not on a runtime thread: it takes ~4 ms for a 200-page read's 870,000
/// characters (more in proportion for longer ones), ~0.1–0.3 ms for one page, and it runs
/// just after the read's answer went out, on the thread, and so the CPU, the read's client
/// was just woken on to take that answer.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, sqlx::Error> + Send + 'static,
) -> Result<T, sqlx::Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| sqlx::Error::Io(std::io::Error::other(e)))?
}

/// Index what a read of a tenant's upload returned, on Postgres (SQLite's reads go through
/// `write_index`): its units and their terms made off the runtime, then written.
async fn index_text_postgres(pool: &sqlx::PgPool, read: Indexed) -> Result<(), sqlx::Error> {
    let (tenant, file_id, coverage) = (read.tenant.clone(), read.file_id.clone(), read.coverage);
    let units = off_runtime(move || {
        Ok(read
            .search_units()
            .into_iter()
            .map(|u| {
                let terms = ts_vector(u.text);
                (u.kind, u.key, u.text.to_string(), terms)
            })
            .collect::<Vec<_>>())
    })
    .await?;
    index_units_postgres(pool, &tenant, &file_id, units, coverage).await
}

/// A read's units with their terms (`ts_vector`), made ready off the runtime.
async fn index_units_postgres(
    db: &sqlx::PgPool,
    tenant: &str,
    file_id: &str,
    units: Vec<(&'static str, String, String, String)>,
    coverage: Coverage,
) -> Result<(), sqlx::Error> {
    let mut tx = db.begin().await?;
    // Locks the file's row: a delete of it waits for this transaction, and one already
    // done leaves nothing to index.
    let kept: Option<(String,)> =
        sqlx::query_as("SELECT id FROM files WHERE id = $1 AND tenant = $2 FOR SHARE")
            .bind(file_id)
            .bind(tenant)
            .fetch_optional(&mut *tx)
            .await?;
    if kept.is_none() {
        return Ok(());
    }
    for (kind, key, text, terms) in units {
        // A unit is replaced only by a longer text of it (a later read that returned more).
        sqlx::query(
            "INSERT INTO search_units (tenant, file_id, unit, unit_key, text, terms) \
             VALUES ($1, $2, $3, $4, $5, CAST($6 AS tsvector)) \
             ON CONFLICT (tenant, file_id, unit, unit_key) DO UPDATE \
             SET text = excluded.text, terms = excluded.terms \
             WHERE length(search_units.text) < length(excluded.text)",
        )
        .bind(tenant)
        .bind(file_id)
        .bind(kind)
        .bind(&key)
        .bind(&text)
        .bind(terms)
        .execute(&mut *tx)
        .await?;
    }
    sqlx::query(
        "INSERT INTO search_coverage (tenant, file_id, total_units, whole) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (tenant, file_id) DO UPDATE SET \
         total_units = COALESCE(excluded.total_units, search_coverage.total_units), \
         whole = search_coverage.whole OR excluded.whole",
    )
    .bind(tenant)
    .bind(file_id)
    .bind(coverage.total_units.map(|n| n.min(i64::MAX as u64) as i64))
    .bind(coverage.whole)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

/// Index reads' texts on the writer's own connection (`conn`, taken out of the pool when
/// there is none; after a failure the next group starts on a fresh one).
///
/// `only`: the one text of `texts` to index, else all of them.
async fn index_texts_on(
    pool: &sqlx::SqlitePool,
    conn: &mut Option<sqlx::SqliteConnection>,
    texts: Texts,
    only: Option<usize>,
) -> Result<(), sqlx::Error> {
    let mut trips = trips_off_runtime(texts, only);
    let c = match conn {
        Some(c) => c,
        None => conn.insert(pool.acquire().await?.detach()),
    };
    let done = run_trips(c, &mut trips).await;
    if done.is_err() {
        *conn = None;
    }
    done
}

/// The most units, and about the most bytes of text, one round trip to the connection's
/// thread carries (the text is copied on its way there, and again into SQLite): a larger
/// group goes in several, all in its one transaction.
const UNITS_A_TRIP: usize = 1000;
const TEXT_BYTES_A_TRIP: usize = 256 * 1024;

/// Index reads' texts on `conn` as `index_texts_on` does (for tests).
#[cfg(test)]
async fn index_texts_sqlite(
    conn: &mut sqlx::SqliteConnection,
    texts: &[(&str, &str, Vec<String>)],
) -> Result<(), sqlx::Error> {
    let texts: Texts = std::sync::Arc::new(
        texts
            .iter()
            .map(|(t, f, pages)| paged(t, f, pages))
            .collect(),
    );
    run_trips(conn, &mut trips_off_runtime(texts, None)).await
}

/// A text of pages as an extractor makes it (each page its marker line, then its text),
/// with its units (for tests).
#[cfg(test)]
fn paged(tenant: &str, file_id: &str, pages: &[String]) -> Indexed {
    use crate::model::{Span, Unit, UnitKind};
    let (mut text, mut spans) = (String::new(), Vec::new());
    for (i, p) in pages.iter().enumerate() {
        let head = text.len();
        text.push_str(&format!("--- Page {} ---\n", i + 1));
        let body = text.len();
        text.push_str(p);
        spans.push(Span {
            unit: Unit::numbered(UnitKind::Page, i as u64 + 1),
            head,
            body,
            end: text.len(),
        });
    }
    Indexed {
        tenant: tenant.into(),
        file_id: file_id.into(),
        text,
        units: spans,
        coverage: Coverage::default(),
    }
}

/// One trip of a group: its number, how many the group has, and its units as one JSON
/// array.
type Trip = Result<(usize, usize, String), sqlx::Error>;

/// The trips of `texts` (all, or only the k-th), made on the blocking pool (see
/// `off_runtime`) one at a time, each when the one before was taken: a group's text is
/// not held a second time whole as JSON (a read may return 50 million characters).
fn trips_off_runtime(texts: Texts, only: Option<usize>) -> tokio::sync::mpsc::Receiver<Trip> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::task::spawn_blocking(move || {
        let texts = match only {
            Some(k) => &texts[k..=k],
            None => &texts[..],
        };
        // Sending waits while the trip before is still in the channel; it fails when the
        // writer has stopped taking them (a trip failed).
        sqlite_trips(texts, |trip| tx.blocking_send(trip).is_ok());
    });
    rx
}

/// The trips of a group of reads' texts (tenant, file id, text), each given to `send` as
/// it is made (CPU work: see `off_runtime`); stops when `send` says so. The group is
/// written in one transaction, sent to the connection's thread whole when small (at most
/// `UNITS_A_TRIP` units and `TEXT_BYTES_A_TRIP` bytes of text a trip): the units go into a
/// temp table and SQL moves them on (`index_trip!`). Statement by statement, a one-page
/// read took five round trips to that thread and a 200-page one 402, each waking it and
/// then a runtime thread.
fn sqlite_trips(texts: &[Indexed], mut send: impl FnMut(Trip) -> bool) {
    let units: Vec<(&str, &str, SearchUnit)> = texts
        .iter()
        .flat_map(|x| {
            x.search_units()
                .into_iter()
                .map(move |u| (x.tenant.as_str(), x.file_id.as_str(), u))
        })
        .collect();
    // The trips: runs of units within both bounds (a unit larger than the byte bound goes
    // alone).
    let mut trips: Vec<&[(&str, &str, SearchUnit)]> = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (_, _, u)) in units.iter().enumerate() {
        if i > start && (i - start == UNITS_A_TRIP || bytes + u.text.len() > TEXT_BYTES_A_TRIP) {
            trips.push(&units[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += u.text.len();
    }
    if start < units.len() {
        trips.push(&units[start..]);
    }
    let count = trips.len();
    for (i, trip) in trips.into_iter().enumerate() {
        // The trip's units as one JSON array: one parameter, so the statements are the
        // same whatever their number (prepared once, not once for each count).
        let terms: Vec<String> = trip.iter().map(|(_, _, u)| index_terms(u.text)).collect();
        let mut rows: Vec<[&str; 6]> = Vec::with_capacity(trip.len());
        for ((tenant, file_id, u), terms) in trip.iter().zip(&terms) {
            rows.push([tenant, file_id, u.kind, &u.key, u.text, terms]);
        }
        let encoded = serde_json::to_string(&rows)
            .map(|rows| (i, count, rows))
            .map_err(|e| sqlx::Error::Encode(e.into()));
        let failed = encoded.is_err();
        if !send(encoded) || failed {
            return;
        }
    }
}

/// Run a group's trips (`sqlite_trips`) in its one transaction. No trip at all: nothing
/// to index.
async fn run_trips(
    conn: &mut sqlx::SqliteConnection,
    trips: &mut tokio::sync::mpsc::Receiver<Trip>,
) -> Result<(), sqlx::Error> {
    let mut begun = false;
    loop {
        let (i, count, rows) = match trips.recv().await {
            Some(Ok(trip)) => trip,
            failed => {
                // A trip that could not be made, or none after the first (the maker
                // stopped): nothing of the group stays.
                if begun {
                    let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
                }
                return match failed {
                    Some(Err(e)) => Err(e),
                    _ if begun => Err(sqlx::Error::Io(std::io::Error::other(
                        "the index's trips stopped before the last",
                    ))),
                    _ => Ok(()),
                };
            }
        };
        let last = i + 1 == count;
        let sql = match (i == 0, last) {
            (true, true) => INDEX_ONE_TRIP,
            (true, false) => INDEX_FIRST_TRIP,
            (false, true) => INDEX_LAST_TRIP,
            (false, false) => INDEX_NEXT_TRIP,
        };
        let done = sqlx::query(sql).bind(rows).execute(&mut *conn).await;
        begun = true;
        if let Err(e) = done {
            // A statement failed mid-way: nothing of the group stays (the temp table's rows
            // went in inside the transaction too).
            let _ = sqlx::query("ROLLBACK").execute(&mut *conn).await;
            return Err(e);
        }
        if last {
            return Ok(());
        }
    }
}

/// A trip of a group (`sqlite_trips`): the first makes the connection's temp table
/// (once) and begins the transaction (deferred: an immediate one would lock the attached
/// `docreader.db` for writing too; the index's writers take turns, `Pending::turn`, so its
/// reads never go stale before it writes); each puts its units (`?`: a JSON array of
/// [tenant, file id, unit, key, text, terms]) into the temp table and moves them on, and
/// empties it: it leaves out files deleted since their read (a delete waits for indexing
/// already under way: `Pending::settled`); keeps each unit once, at its longest (a group may
/// hold two reads of a file; in two trips, the later is one more text to compare); replaces
/// a unit already indexed only by a longer text of it (a later read that returned more), its
/// words with it; adds the new ones and their words. Each join starts from the temp table
/// (`CROSS JOIN` keeps that order) and finds `search_units` by its unique key. The last
/// trip commits.
macro_rules! index_trip {
    ($begin:expr, $end:expr) => {
        concat!(
            $begin,
            "\
INSERT INTO temp.new_units (tenant, file_id, unit, unit_key, text, terms) \
    SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5 \
    FROM json_each(?);
DELETE FROM temp.new_units WHERE NOT EXISTS \
    (SELECT 1 FROM app.files f WHERE f.id = new_units.file_id AND f.tenant = new_units.tenant);
DELETE FROM temp.new_units WHERE rowid NOT IN (SELECT keep FROM \
    (SELECT rowid AS keep, max(length(text)) FROM temp.new_units \
     GROUP BY tenant, file_id, unit, unit_key));
DELETE FROM search_fts WHERE rowid IN (SELECT u.id FROM temp.new_units n CROSS JOIN search_units u \
    ON u.tenant = n.tenant AND u.file_id = n.file_id AND u.unit = n.unit AND u.unit_key = n.unit_key \
    WHERE length(u.text) < length(n.text));
INSERT INTO search_fts (rowid, terms) SELECT u.id, n.terms FROM temp.new_units n CROSS JOIN search_units u \
    ON u.tenant = n.tenant AND u.file_id = n.file_id AND u.unit = n.unit AND u.unit_key = n.unit_key \
    WHERE length(u.text) < length(n.text);
UPDATE search_units SET text = (SELECT n.text FROM temp.new_units n WHERE n.tenant = search_units.tenant \
    AND n.file_id = search_units.file_id AND n.unit = search_units.unit AND n.unit_key = search_units.unit_key) \
    WHERE id IN (SELECT u.id FROM temp.new_units n CROSS JOIN search_units u \
    ON u.tenant = n.tenant AND u.file_id = n.file_id AND u.unit = n.unit AND u.unit_key = n.unit_key \
    WHERE length(u.text) < length(n.text));
DELETE FROM temp.new_units WHERE EXISTS (SELECT 1 FROM search_units u WHERE u.tenant = new_units.tenant \
    AND u.file_id = new_units.file_id AND u.unit = new_units.unit AND u.unit_key = new_units.unit_key);
INSERT INTO search_units (tenant, file_id, unit, unit_key, text) \
    SELECT tenant, file_id, unit, unit_key, text FROM temp.new_units;
INSERT INTO search_fts (rowid, terms) SELECT u.id, n.terms FROM temp.new_units n CROSS JOIN search_units u \
    ON u.tenant = n.tenant AND u.file_id = n.file_id AND u.unit = n.unit AND u.unit_key = n.unit_key;
DELETE FROM temp.new_units;
",
            $end
        )
    };
}

macro_rules! index_begin {
    () => {
        "CREATE TEMP TABLE IF NOT EXISTS new_units \
         (tenant TEXT, file_id TEXT, unit TEXT, unit_key TEXT, text TEXT, terms TEXT);\nBEGIN;\n"
    };
}

const INDEX_ONE_TRIP: &str = index_trip!(index_begin!(), "COMMIT;\n");
const INDEX_FIRST_TRIP: &str = index_trip!(index_begin!(), "");
const INDEX_NEXT_TRIP: &str = index_trip!("", "");
const INDEX_LAST_TRIP: &str = index_trip!("", "COMMIT;\n");

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

/// Body of `POST /search`.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Words to find (any of them; documents with more, and rarer, words rank first).
    /// Chinese, Japanese and Korean match from two characters.
    #[schema(min_length = 1, max_length = 1000)]
    pub query: String,
    /// Only these files (default: all the tenant's files).
    #[serde(default)]
    #[schema(max_items = 1000)]
    pub file_ids: Option<Vec<String>>,
    /// At most this many hits (default 10, at most 100).
    #[serde(default, deserialize_with = "crate::options::whole_number")]
    #[schema(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
}

/// One place a query matched.
#[derive(Debug, Serialize, ToSchema)]
pub struct Hit {
    pub file_id: String,
    /// Every upload of the same bytes that holds this hit (`file_id` first): identical
    /// files uploaded several times are one hit.
    pub file_ids: Vec<String>,
    /// The file's name.
    pub name: String,
    /// The page, slide, sheet or chapter of the hit, when the format has them.
    #[serde(flatten)]
    pub place: crate::model::Place,
    /// The 1-based line of the best match, within the page/slide/sheet/chapter (or the
    /// document's text).
    pub line: u64,
    /// That line (at most 240 characters around the match).
    pub snippet: String,
    /// BM25 relevance: higher is better.
    pub score: f64,
    /// How much of the file the index holds: a search finds only what was read.
    pub coverage: HitCoverage,
}

/// How much of a hit's file is in the index.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct HitCoverage {
    /// Units (pages, slides, sheets, chapters; 1 for a text without them) of the file
    /// whose text is indexed.
    pub indexed_units: u64,
    /// The units the file has, as its reads said (`null` when none said).
    pub total_units: Option<u64>,
    /// Whether all of the file's text is indexed: one read returned it whole, or it was
    /// indexed whole (`POST /files/{id}/index`, MCP `index_document`, a search naming it in
    /// `file_ids`). When `false`, words in the parts not read are not found: index the file
    /// whole to search all of it.
    pub whole: bool,
}

/// The answer of `POST /search`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResults {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    /// Best first.
    pub hits: Vec<Hit>,
}

/// Search the tenant's indexed documents.
pub async fn search(db: &Db, tenant: &str, req: &SearchRequest) -> Result<Vec<Hit>, ApiError> {
    let limit = req.limit.unwrap_or(10);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::invalid_option(format!(
            "limit must be between 1 and 100, got {limit}"
        )));
    }
    if req.query.is_empty() {
        return Err(ApiError::invalid_option("query is empty")
            .with_hint("Give words or characters, e.g. {\"query\": \"invoice total\"}."));
    }
    if req.query.chars().count() > 1000 {
        return Err(ApiError::invalid_option(
            "query is longer than 1000 characters",
        ));
    }
    // The request's shape first: a query with nothing to find does not excuse it.
    let ids = req.file_ids.clone().unwrap_or_default();
    if ids.len() > 1000 {
        return Err(ApiError::invalid_option(
            "file_ids takes at most 1000 files",
        ));
    }
    // The work one search may cost is bounded: its first MAX_TERMS words, at most
    // CANDIDATES units ranked, each scanned for its snippet over its first SNIPPET_SCAN
    // characters; the scoring of lines runs on the blocking pool, never on a runtime thread
    // (two searches over a tenant's 20 MB once held /healthz for 46 s).
    let query = &req.query;
    // A query of only spaces and punctuation has nothing to find.
    let Some(fts) = match_query(query) else {
        return Ok(Vec::new());
    };
    // Identical bytes uploaded several times are one hit: more units are ranked than
    // asked for, and the copies folded into the first.
    let candidates = (limit * 4).min(CANDIDATES);
    // The file filter is a JSON array bound as one parameter (no SQL built from input).
    let rows: Vec<(String, String, String, String, String, String, f64)> =
        match db {
            Db::Sqlite(p) => sqlx::query_as(
                "SELECT u.file_id, f.name, f.sha256, u.unit, u.unit_key, substr(u.text, 1, ?), -bm25(search_fts) AS score \
         FROM search_fts JOIN search_units u ON u.id = search_fts.rowid \
         JOIN app.files f ON f.id = u.file_id AND f.tenant = u.tenant \
         WHERE search_fts MATCH ? AND u.tenant = ? \
         AND (? = 0 OR u.file_id IN (SELECT value FROM json_each(?))) \
         ORDER BY bm25(search_fts) LIMIT ?",
            )
            .bind(SNIPPET_SCAN as i64)
            .bind(&fts)
            .bind(tenant)
            .bind(ids.len() as i64)
            .bind(serde_json::to_string(&ids).unwrap_or_default())
            .bind(candidates)
            .fetch_all(p)
            .await,
            Db::Postgres(p) => {
                let Some(tsq) = ts_query(query) else {
                    return Ok(Vec::new());
                };
                sqlx::query_as(
                    "SELECT u.file_id, f.name, f.sha256, u.unit, u.unit_key, substr(u.text, 1, $5), \
                 CAST(ts_rank_cd(u.terms, q) AS DOUBLE PRECISION) AS score \
                 FROM search_units u CROSS JOIN CAST($1 AS tsquery) q \
                 JOIN files f ON f.id = u.file_id AND f.tenant = u.tenant \
                 WHERE u.terms @@ q AND u.tenant = $2 \
                 AND (cardinality($3::text[]) = 0 OR u.file_id = ANY($3::text[])) \
                 ORDER BY score DESC, u.id LIMIT $4",
                )
                .bind(tsq)
                .bind(tenant)
                .bind(&ids)
                .bind(candidates)
                .bind(SNIPPET_SCAN as i32)
                .fetch_all(p)
                .await
            }
        }
        .map_err(crate::db::failure)?;
    let words = parse_query(query).words();
    let limit = limit as usize;
    let mut hits = tokio::task::spawn_blocking(move || hits_of(rows, &words, limit))
        .await
        .map_err(ApiError::internal)?;
    add_coverage(db, tenant, &mut hits)
        .await
        .map_err(crate::db::failure)?;
    Ok(hits)
}

/// Each hit's `coverage`: its file's units in the index and what its reads said.
async fn add_coverage(db: &Db, tenant: &str, hits: &mut [Hit]) -> Result<(), sqlx::Error> {
    let mut ids: Vec<&str> = hits.iter().map(|h| h.file_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<(String, i64, Option<i64>, bool)> = match db {
        Db::Sqlite(p) => {
            sqlx::query_as(
                "SELECT u.file_id, COUNT(*), c.total_units, coalesce(c.whole, 0) \
                 FROM search_units u LEFT JOIN search_coverage c \
                 ON c.tenant = u.tenant AND c.file_id = u.file_id \
                 WHERE u.tenant = ? AND u.file_id IN (SELECT value FROM json_each(?)) \
                 GROUP BY u.file_id",
            )
            .bind(tenant)
            .bind(serde_json::to_string(&ids).unwrap_or_default())
            .fetch_all(p)
            .await?
        }
        Db::Postgres(p) => sqlx::query_as(
            "SELECT u.file_id, COUNT(*), MAX(c.total_units), COALESCE(BOOL_OR(c.whole), FALSE) \
                 FROM search_units u LEFT JOIN search_coverage c \
                 ON c.tenant = u.tenant AND c.file_id = u.file_id \
                 WHERE u.tenant = $1 AND u.file_id = ANY($2::text[]) \
                 GROUP BY u.file_id",
        )
        .bind(tenant)
        .bind(&ids)
        .fetch_all(p)
        .await?,
    };
    for h in hits.iter_mut() {
        if let Some((_, n, total, whole)) = rows.iter().find(|r| r.0 == h.file_id) {
            let indexed = (*n).max(0) as u64;
            let total = total.map(|t| (t.max(0) as u64).max(indexed));
            h.coverage = HitCoverage {
                indexed_units: indexed,
                total_units: total,
                whole: *whole,
            };
        }
    }
    Ok(())
}

/// Words of a query that count (the rest are left out of the search).
const MAX_TERMS: usize = 32;
/// Units ranked for one search, before identical bytes are folded.
const CANDIDATES: i64 = 400;
/// Characters of a unit scanned for its snippet.
const SNIPPET_SCAN: usize = 256 * 1024;

/// The ranked rows as hits: identical bytes folded into their best hit (its `file_ids`
/// naming every upload of them), each with its best line.
fn hits_of(
    rows: Vec<(String, String, String, String, String, String, f64)>,
    words: &[String],
    limit: usize,
) -> Vec<Hit> {
    let mut hits: Vec<Hit> = Vec::new();
    let mut seen: std::collections::HashMap<(String, String, String), usize> = Default::default();
    for (file_id, name, sha, unit, key, text, score) in rows {
        if let Some(&i) = seen.get(&(sha.clone(), unit.clone(), key.clone())) {
            if !hits[i].file_ids.contains(&file_id) {
                hits[i].file_ids.push(file_id);
            }
            continue;
        }
        if hits.len() == limit {
            continue;
        }
        seen.insert((sha, unit.clone(), key.clone()), hits.len());
        let (line, snippet) = best_line(&text, words);
        hits.push(Hit {
            file_ids: vec![file_id.clone()],
            file_id,
            name,
            place: crate::model::Place::of(&crate::model::Unit::stored(&unit, &key)),
            line,
            snippet,
            score: (score * 1000.0).round() / 1000.0,
            coverage: HitCoverage::default(),
        });
    }
    hits
}

/// The line holding most of the query's words (1-based), cut to 240 characters around
/// the first one. Lines are compared lowercased character by character, so a character
/// whose lowercase is longer (`İ` → `i̇`) cannot shift the cut off the line.
fn best_line(text: &str, words: &[String]) -> (u64, String) {
    let mut best = (0usize, 0usize, "");
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_lowercase();
        let n = words.iter().filter(|w| lower.contains(w.as_str())).count();
        if n > best.1 {
            best = (i, n, line);
        }
    }
    if best.1 == 0 {
        best.2 = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    }
    let line = best.2.trim();
    let chars: Vec<char> = line.chars().collect();
    // The lowercase line, each of its characters tagged with the original's index.
    let mut lower = String::with_capacity(line.len());
    let mut origin: Vec<usize> = Vec::with_capacity(line.len());
    for (i, c) in chars.iter().enumerate() {
        for l in c.to_lowercase() {
            lower.push(l);
            origin.extend(std::iter::repeat_n(i, l.len_utf8()));
        }
    }
    let at = words
        .iter()
        .filter_map(|w| lower.find(w.as_str()))
        .min()
        .map(|b| origin.get(b).copied().unwrap_or(0))
        .unwrap_or(0);
    let start = at.saturating_sub(80).min(chars.len());
    let end = (start + 240).min(chars.len());
    (best.0 as u64 + 1, chars[start..end].iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(find("lima").fetch_all(&mut c).await.unwrap().len(), 1);
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
    fn the_best_line_is_found() {
        let (line, snip) = best_line("intro\nthe total is 42\nother", &["total".into()]);
        assert_eq!((line, snip.as_str()), (2, "the total is 42"));
    }
}
