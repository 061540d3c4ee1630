//! Writing the index: reads queued for indexing (`Pending`), gathered and written in
//! trips (SQLite FTS5 or Postgres), and what part of each file is indexed (`Coverage`).

use super::*;

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
    /// Text queued for indexing, in KiB, at most `QUEUED_KIB` at once (with `slots`, what
    /// indexing may hold whatever the files' sizes).
    queued: std::sync::Arc<tokio::sync::Semaphore>,
    /// The most text one read adds by itself (`IndexPolicy::max_bytes`).
    max_bytes: usize,
    /// Reads waiting for `queued` or `slots` (see `GiveWay`).
    queue_waiters: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// Whether the last read that waited for room gave up (`READ_WAITS_AT_MOST`): until a
    /// read finds room at once, the next ones do not wait.
    busy: std::sync::atomic::AtomicBool,
    /// Where reads left out of the index are counted (`docreader_index_skipped_total`).
    metrics: Option<std::sync::Arc<crate::metrics::Metrics>>,
}

/// What indexing may cost (issue #46 item 1).
#[derive(Clone, Default)]
pub struct IndexPolicy {
    /// The most bytes of text one read adds to the index by itself (0: no cap): its first
    /// units, the one that crosses the cap cut at a line. A read on request
    /// (`POST /files/{id}/index`) indexes all it returned.
    pub max_bytes: usize,
    /// The service's reads in flight: a long indexing gives way to them (`GiveWay`).
    pub reads: Option<std::sync::Arc<crate::metrics::Metrics>>,
}

/// The most text, in KiB, waiting in the index's queue or being written at once: a read
/// whose text would pass it waits before it answers (as for `SLOTS`), so indexing never
/// holds more than this of reads' texts, whatever their number and size. A larger text
/// (a read on request, uncapped) takes all of it, alone.
pub(super) const QUEUED_KIB: usize = 64 * 1024;

/// How long SQLite's writer waits, between two trips of a long group (`run_trips`), while
/// reads are in flight: a 50 MB text's ~200 trips go in between reads rather than taking
/// the CPU they need (on two cores the 52 MB CSV's 6.7 CPU-seconds of indexing, all at
/// once, made the next reads slower). Bounded, so indexing is never starved; never while a
/// search or delete waits for it (`settled`).
pub(super) const GIVE_WAY: std::time::Duration = std::time::Duration::from_millis(100);

/// Indexing gives way to reads (`GIVE_WAY`).
#[derive(Clone, Default)]
pub(super) struct GiveWay {
    reads: Option<std::sync::Arc<crate::metrics::Metrics>>,
    hurry: std::sync::Arc<Hurry>,
    /// Reads waiting for room in the index's queue (`Pending::index`): the writer never
    /// pauses while one waits for it, or the reads it gives way to would wait on it.
    queue_waiters: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl GiveWay {
    fn reads_in_flight(&self) -> bool {
        self.reads
            .as_ref()
            .is_some_and(|m| m.in_flight.load(std::sync::atomic::Ordering::Relaxed) > 0)
    }

    async fn wait(&self) {
        let until = tokio::time::Instant::now() + GIVE_WAY;
        while self.reads_in_flight()
            && self.hurry.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0
            && self.queue_waiters.load(std::sync::atomic::Ordering::SeqCst) == 0
            && tokio::time::Instant::now() < until
        {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
}

/// How long SQLite's index writer gathers reads' texts before it writes them in one
/// transaction, unless `GATHER_AT` have come or a search or delete waits (`settled`).
/// Written a read at a time, each read's index transaction (for a one-page read: FTS5's
/// new segment and its merges, ~20 log frames) ran just as the next request came in and
/// took the CPU that request needed on a machine of two: without indexing at all, upload
/// + read of a one-page PDF at concurrency 1 took 0.2 ms less. Gathered, one transaction
/// writes many reads' texts for little more than the cost of one (the server's CPU an
/// operation ~0.3 ms less; concurrency 1 ~0.2 ms faster, concurrency 8 ~10 % more reads).
pub(super) const GATHER: std::time::Duration = std::time::Duration::from_millis(25);
pub(super) const GATHER_AT: usize = SLOTS / 2;

/// Who waits for the index writer (see `GATHER`). `now` wakes a gathering writer; when it
/// is writing instead, the wake is kept and ends its next gathering at once (harmless: one
/// group written without gathering).
#[derive(Debug, Default)]
pub(super) struct Hurry {
    waiting: std::sync::atomic::AtomicUsize,
    now: tokio::sync::Notify,
}

/// One waiting, counted in its counter until it ends however it ends: a `settled` (in
/// `Hurry::waiting`, which also wakes a gathering writer) or a read waiting for room in the
/// index's queue (`Pending::queue_waiters`).
pub(super) struct Waiting<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Waiting<'a> {
    fn start(count: &'a std::sync::atomic::AtomicUsize) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(count)
    }

    fn hurrying(hurry: &'a Hurry) -> Self {
        let waiting = Self::start(&hurry.waiting);
        hurry.now.notify_one();
        waiting
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A read's text waiting to be indexed, with its share of the gate and its slot (both let
/// go once it is written).
#[derive(Debug)]
pub(super) struct IndexJob {
    read: Indexed,
    _held: (
        tokio::sync::OwnedRwLockReadGuard<()>,
        tokio::sync::OwnedSemaphorePermit,
        tokio::sync::OwnedSemaphorePermit,
    ),
}

pub(super) const SLOTS: usize = 16;

/// How long a read (its answer not yet sent) waits for room in the index's queue, or for a
/// search that waits for the index, before its text is left out of the index. Without it a
/// read stood behind the whole of a long indexing: 16 reads after a 50 MB text indexed
/// uncapped (or on request), the next waited 1.7 s. A read left out is not in the index
/// (its hits, none; `POST /files/{id}/index` adds it), which costs a search less than the
/// wait cost the read.
pub(super) const READ_WAITS_AT_MOST: std::time::Duration = std::time::Duration::from_millis(50);

impl Pending {
    pub fn new(db: Db, policy: IndexPolicy) -> Self {
        let turn = std::sync::Arc::new(tokio::sync::Mutex::new(()));
        let hurry = std::sync::Arc::new(Hurry::default());
        let queue_waiters = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let give_way = GiveWay {
            reads: policy.reads.clone(),
            hurry: hurry.clone(),
            queue_waiters: queue_waiters.clone(),
        };
        let queue = match &db {
            Db::Sqlite(pool) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                tokio::spawn(write_index(pool.clone(), turn.clone(), give_way, rx));
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
            queued: std::sync::Arc::new(tokio::sync::Semaphore::new(QUEUED_KIB)),
            max_bytes: policy.max_bytes,
            queue_waiters,
            busy: Default::default(),
            metrics: policy.reads,
        }
    }

    /// Index `text` (what a read of the upload returned) in the background: all of it when
    /// the read was asked for the index (`whole_on_request`), else at most the policy's
    /// `max_bytes` of it (a read that passes it is not the file's whole in the index).
    pub async fn index(
        &self,
        tenant: &str,
        file_id: &str,
        text: std::borrow::Cow<'_, str>,
        units: &[crate::model::Span],
        mut coverage: Coverage,
        whole_on_request: bool,
    ) {
        let cap = match whole_on_request || self.max_bytes == 0 {
            true => usize::MAX,
            false => self.max_bytes,
        };
        let Within { units, copied, cut } = within(&text, units, cap);
        if cut {
            // What the read returned past the cap is not searchable until the file is
            // indexed whole (the hits say `whole: false`).
            coverage.whole = false;
        }
        let kib = (copied / 1024 + 1).min(QUEUED_KIB) as u32;
        let room = async {
            let (bytes, slot) = {
                let _waiting = Waiting::start(&self.queue_waiters);
                let bytes = self.queued.clone().acquire_many_owned(kib).await.ok()?;
                let slot = self.slots.clone().acquire_owned().await.ok()?;
                (bytes, slot)
            };
            let share = self.gate.clone().read_owned().await;
            Some((bytes, slot, share))
        };
        let at_once = (|| {
            let bytes = self.queued.clone().try_acquire_many_owned(kib).ok()?;
            let slot = self.slots.clone().try_acquire_owned().ok()?;
            let share = self.gate.clone().try_read_owned().ok()?;
            Some((bytes, slot, share))
        })();
        let busy = &self.busy;
        let skipped = || {
            if let Some(m) = &self.metrics {
                m.index_skipped
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        };
        let held = match at_once {
            Some(held) => {
                busy.store(false, std::sync::atomic::Ordering::Relaxed);
                Some(held)
            }
            // The index asked for: it waits its turn, however long.
            None if whole_on_request => room.await,
            // A read before this one already waited its while for room and found none: no
            // room now either, so this one does not wait at all.
            None if busy.load(std::sync::atomic::Ordering::Relaxed) => {
                tracing::debug!(
                    file_id,
                    "the search index is busy: this read is not indexed"
                );
                skipped();
                return;
            }
            None => match tokio::time::timeout(READ_WAITS_AT_MOST, room).await {
                Ok(held) => {
                    busy.store(false, std::sync::atomic::Ordering::Relaxed);
                    held
                }
                Err(_) => {
                    busy.store(true, std::sync::atomic::Ordering::Relaxed);
                    skipped();
                    tracing::warn!(
                        file_id,
                        "the search index is busy: reads are not indexed until it has room \
                         (POST /files/{{id}}/index indexes a file)"
                    );
                    return;
                }
            },
        };
        let Some((bytes, slot, share)) = held else {
            return;
        };
        let job = IndexJob {
            read: Indexed {
                tenant: tenant.to_string(),
                file_id: file_id.to_string(),
                text: match text {
                    std::borrow::Cow::Owned(mut t) => {
                        t.truncate(copied);
                        t
                    }
                    std::borrow::Cow::Borrowed(t) => t[..copied].to_string(),
                },
                units,
                coverage,
            },
            _held: (share, slot, bytes),
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
        let _waiting = Waiting::hurrying(&self.hurry);
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
pub(super) async fn cover_sqlite(
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
pub(super) const MAX_GROUP: usize = 32;

/// SQLite's index writer: the texts that queued while it wrote the last ones go into one
/// transaction (FTS5 then writes one segment for them all, not one per read), in the
/// index writers' turn. A group that fails is written again text by text, so one bad text
/// costs only its own indexing.
pub(super) async fn write_index(
    pool: sqlx::SqlitePool,
    turn: std::sync::Arc<tokio::sync::Mutex<()>>,
    give_way: GiveWay,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<IndexJob>,
) {
    let hurry = give_way.hurry.clone();
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
        match index_texts_on(&pool, &mut conn, texts.clone(), None, &give_way).await {
            Ok(()) => cover_on(&mut conn, &texts).await,
            Err(e) if texts.len() == 1 => {
                tracing::warn!(error = %e, "could not index the read for search");
            }
            Err(_) => {
                for (k, one) in texts.iter().enumerate() {
                    match index_texts_on(&pool, &mut conn, texts.clone(), Some(k), &give_way).await
                    {
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
pub(super) async fn cover_on(conn: &mut Option<sqlx::SqliteConnection>, texts: &[Indexed]) {
    if let Some(c) = conn {
        if let Err(e) = cover_sqlite(c, texts).await {
            tracing::warn!(error = %e, "could not record how much of a file is indexed");
        }
    }
}

/// Reads' texts waiting to be indexed together: (tenant, file id, text).
pub(super) type Texts = std::sync::Arc<Vec<Indexed>>;

/// A read's text waiting to be indexed, with where its units stand in it (the envelope's
/// `units`): each page, slide, sheet or chapter is a unit of the index.
#[derive(Debug, Default)]
pub(super) struct Indexed {
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

/// What one read adds to the index by itself (`Pending::index`).
#[derive(Debug)]
pub(super) struct Within {
    /// Its units, the last one cut at a line when it crossed the cap.
    pub(super) units: Vec<crate::model::Span>,
    /// The bytes of the read's text they stand in (copied for the index).
    pub(super) copied: usize,
    /// Whether anything of the read's units was left out.
    pub(super) cut: bool,
}

/// A read's units up to `max` bytes of their text: the first ones whole, the one that
/// crosses `max` up to its last line break within it (left out when its first line alone
/// passes), the rest left out.
pub(super) fn within(text: &str, units: &[crate::model::Span], max: usize) -> Within {
    let mut kept = Vec::with_capacity(units.len());
    let mut room = max;
    let mut cut = false;
    for u in units {
        let Some(body) = text.get(u.body..u.end) else {
            continue;
        };
        if body.len() <= room {
            room -= body.len();
            kept.push(u.clone());
            continue;
        }
        cut = true;
        let mut end = room.min(body.len());
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(nl) = body[..end].rfind('\n') {
            let mut part = u.clone();
            part.end = u.body + nl + 1;
            kept.push(part);
        }
        break;
    }
    let copied = kept.iter().map(|u| u.end).max().unwrap_or(0);
    Within {
        units: kept,
        copied,
        cut,
    }
}

/// A unit of the index: its kind, key (number or sheet name; a part's key also says where
/// it starts: `part_key`) and text.
pub(super) struct SearchUnit<'a> {
    kind: &'static str,
    key: String,
    text: &'a str,
}

/// The most bytes of a unit's text one row of the index holds: a longer unit (a 50 MB CSV
/// is one, a 100,000-row sheet another) is indexed in parts cut at line breaks, so what one
/// row, one FTS5 document and one trip cost is bounded whatever the file's size (one
/// 52 MB row took the server from 182 MB to 1.44 GB while it was indexed), and each hit's
/// line is found in its part (a snippet is looked for in a row's first `SNIPPET_SCAN`
/// characters).
pub(super) const PART_BYTES: usize = 64 * 1024;

/// Between a unit's key and where its part starts (`part_key`).
pub(super) const PART_SEP: char = '\u{1f}';

/// The key of a unit's part that starts at byte `offset` of its text, on its line `line`
/// (1-based): the unit's key for its first part, `key␟line␟offset` for the others.
pub(super) fn part_key(key: &str, line: u64, offset: usize) -> String {
    match offset {
        0 => key.to_string(),
        _ => format!("{key}{PART_SEP}{line}{PART_SEP}{offset}"),
    }
}

/// A stored key as (the unit's key, the line of the unit its part starts on).
pub(crate) fn unit_of_part(key: &str) -> (&str, u64) {
    let mut it = key.rsplitn(3, PART_SEP);
    if let (Some(offset), Some(line), Some(unit)) = (it.next(), it.next(), it.next()) {
        if let (Ok(_), Ok(line)) = (offset.parse::<usize>(), line.parse::<u64>()) {
            return (unit, line);
        }
    }
    (key, 1)
}

/// A unit's text in parts of at most `PART_BYTES`, cut after a line break (within a line
/// longer than that, at a character): (byte offset, 1-based line it starts on, text).
pub(super) fn parts(text: &str) -> Vec<(usize, u64, &str)> {
    let mut out = Vec::with_capacity(text.len() / PART_BYTES + 1);
    let (mut start, mut line) = (0usize, 1u64);
    while start < text.len() {
        let mut end = (start + PART_BYTES).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end < text.len() {
            if let Some(nl) = text[start..end].rfind('\n') {
                end = start + nl + 1;
            }
        }
        let part = &text[start..end];
        out.push((start, line, part));
        line += part.bytes().filter(|&b| b == b'\n').count() as u64;
        start = end;
    }
    out
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
            .flat_map(|(kind, key, text)| {
                let parts = parts(text);
                // A unit's first part is kept when later ones are, blank or not: it is the
                // one `indexed_units` counts.
                let more = parts.len() > 1;
                parts
                    .into_iter()
                    .filter(move |(offset, _, t)| !t.trim().is_empty() || (*offset == 0 && more))
                    .map(move |(offset, line, text)| SearchUnit {
                        kind,
                        key: part_key(&key, line, offset),
                        text,
                    })
            })
            .collect()
    }
}

/// Run `work` (the index's CPU work: a text's units, their words and their encoding) off
/// the runtime, on a thread of its own at a lower OS priority (`low_priority`). Not on a
/// runtime thread: it takes ~4 ms for a 200-page read's 870,000 characters (more in
/// proportion for longer ones), ~0.1–0.3 ms for one page, and it runs just after the read's
/// answer went out, on the thread, and so the CPU, the read's client was just woken on to
/// take that answer.
pub(super) async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, sqlx::Error> + Send + 'static,
) -> Result<T, sqlx::Error> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    low_priority(move || {
        let _ = tx.send(work());
    })
    .map_err(sqlx::Error::Io)?;
    rx.await
        .map_err(|e| sqlx::Error::Io(std::io::Error::other(e)))?
}

/// How much lower the index's CPU work runs than the rest of the server (a nice value
/// added: 10 of the 20 steps to the lowest).
const INDEX_NICENESS: i32 = 10;

/// Run `work` on a thread of its own whose OS priority is lowered by `INDEX_NICENESS` (on
/// Linux a thread's nice value is its own): when reads and indexing both want the CPU, the
/// kernel gives it to the reads (their worker processes, and the server's threads that
/// answer them) first. A thread per job, not a pool: a job is a read's indexing or a
/// group's trips (one at a time, each waiting for the writer to take the one before), and
/// a lowered thread cannot be raised again without privilege, so none is reused for reads.
/// The SQLite side of indexing (FTS5 writing its index) runs on the writer connection's own
/// thread, lowered the same (`lower_connection`); `GiveWay` paces it between trips.
pub(super) fn low_priority(work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("docreader-index".into())
        .spawn(move || {
            lower_this_thread(INDEX_NICENESS);
            work();
        })
        .map(drop)
}

/// Lower the OS priority of the thread behind `conn` (sqlx runs each SQLite connection on
/// a thread of its own), as `low_priority` does the index's CPU work: the index writer's
/// connection is detached from the pool (never used for a search or a read's lookup), so
/// SQLite's share of indexing (FTS5 building and merging its segments) gives the CPU to
/// reads too. Done on that thread by a collation whose comparison lowers the thread it
/// runs on, once.
pub(super) async fn lower_connection(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    conn.lock_handle()
        .await?
        .create_collation("docreader_lower_priority", |_, _| {
            thread_local!(static LOWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
            if !LOWERED.replace(true) {
                lower_this_thread(INDEX_NICENESS);
            }
            std::cmp::Ordering::Equal
        })?;
    sqlx::query("SELECT 'a' = 'b' COLLATE docreader_lower_priority")
        .execute(&mut *conn)
        .await
        .map(drop)
}

/// Add `by` to the calling thread's nice value (best effort: a failure leaves it as it was).
fn lower_this_thread(by: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        *libc::__errno_location() = 0;
        let now = libc::getpriority(libc::PRIO_PROCESS, tid);
        if now != -1 || *libc::__errno_location() == 0 {
            libc::setpriority(libc::PRIO_PROCESS, tid, (now + by).min(19));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = by;
}

/// Index what a read of a tenant's upload returned, on Postgres (SQLite's reads go through
/// `write_index`): its units and their terms made off the runtime, then written.
pub(super) async fn index_text_postgres(
    pool: &sqlx::PgPool,
    read: Indexed,
) -> Result<(), sqlx::Error> {
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
pub(super) async fn index_units_postgres(
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
pub(super) async fn index_texts_on(
    pool: &sqlx::SqlitePool,
    conn: &mut Option<sqlx::SqliteConnection>,
    texts: Texts,
    only: Option<usize>,
    give_way: &GiveWay,
) -> Result<(), sqlx::Error> {
    let mut trips = trips_off_runtime(texts, only);
    let c = match conn {
        Some(c) => c,
        None => {
            let mut c = pool.acquire().await?.detach();
            lower_connection(&mut c).await?;
            conn.insert(c)
        }
    };
    let done = run_trips(c, &mut trips, give_way).await;
    if done.is_err() {
        *conn = None;
    }
    done
}

/// The most units, and about the most bytes of text, one round trip to the connection's
/// thread carries (the text is copied on its way there, and again into SQLite): a larger
/// group goes in several, all in its one transaction.
pub(super) const UNITS_A_TRIP: usize = 1000;
pub(super) const TEXT_BYTES_A_TRIP: usize = 256 * 1024;

/// Index reads' texts on `conn` as `index_texts_on` does (for tests).
#[cfg(test)]
pub(super) async fn index_texts_sqlite(
    conn: &mut sqlx::SqliteConnection,
    texts: &[(&str, &str, Vec<String>)],
) -> Result<(), sqlx::Error> {
    let texts: Texts = std::sync::Arc::new(
        texts
            .iter()
            .map(|(t, f, pages)| paged(t, f, pages))
            .collect(),
    );
    run_trips(
        conn,
        &mut trips_off_runtime(texts, None),
        &GiveWay::default(),
    )
    .await
}

/// A text of pages as an extractor makes it (each page its marker line, then its text),
/// with its units (for tests).
#[cfg(test)]
pub(super) fn paged(tenant: &str, file_id: &str, pages: &[String]) -> Indexed {
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
pub(super) type Trip = Result<(usize, usize, String), sqlx::Error>;

/// The trips of `texts` (all, or only the k-th), made on the blocking pool (see
/// `off_runtime`) one at a time, each when the one before was taken: a group's text is
/// not held a second time whole as JSON (a read may return 50 million characters).
pub(super) fn trips_off_runtime(
    texts: Texts,
    only: Option<usize>,
) -> tokio::sync::mpsc::Receiver<Trip> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let failed = tx.clone();
    let made = low_priority(move || {
        let texts = match only {
            Some(k) => &texts[k..=k],
            None => &texts[..],
        };
        // Sending waits while the trip before is still in the channel; it fails when the
        // writer has stopped taking them (a trip failed).
        sqlite_trips(texts, |trip| tx.blocking_send(trip).is_ok());
    });
    if let Err(e) = made {
        // No thread to be had: the group fails as a trip that could not be made does (the
        // channel is empty, so this fits).
        let _ = failed.try_send(Err(sqlx::Error::Io(e)));
    }
    rx
}

/// The trips of a group of reads' texts (tenant, file id, text), each given to `send` as
/// it is made (CPU work: see `off_runtime`); stops when `send` says so. The group is
/// written in one transaction, sent to the connection's thread whole when small (at most
/// `UNITS_A_TRIP` units and `TEXT_BYTES_A_TRIP` bytes of text a trip): the units go into a
/// temp table and SQL moves them on (`index_trip!`). Statement by statement, a one-page
/// read took five round trips to that thread and a 200-page one 402, each waking it and
/// then a runtime thread.
pub(super) fn sqlite_trips(texts: &[Indexed], mut send: impl FnMut(Trip) -> bool) {
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
pub(super) async fn run_trips(
    conn: &mut sqlx::SqliteConnection,
    trips: &mut tokio::sync::mpsc::Receiver<Trip>,
    give_way: &GiveWay,
) -> Result<(), sqlx::Error> {
    let mut begun = false;
    loop {
        if begun {
            // A long group (more than one trip) lets reads in flight go first.
            give_way.wait().await;
        }
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

pub(super) const INDEX_ONE_TRIP: &str = index_trip!(index_begin!(), "COMMIT;\n");
pub(super) const INDEX_FIRST_TRIP: &str = index_trip!(index_begin!(), "");
pub(super) const INDEX_NEXT_TRIP: &str = index_trip!("", "");
pub(super) const INDEX_LAST_TRIP: &str = index_trip!("", "COMMIT;\n");

#[cfg(test)]
mod read_waits {
    use super::*;

    /// A read's answer never stands behind a busy index: with the queue full, its text is
    /// left out after `READ_WAITS_AT_MOST` (it waited for as long as the index took, 1.7 s
    /// behind a 50 MB text); an index request (`whole_on_request`) waits its turn.
    #[tokio::test]
    async fn a_read_does_not_wait_for_a_busy_index_but_an_index_request_does() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::db::open(dir.path(), None).await.unwrap();
        let derived = crate::db::open_derived(dir.path(), &db).await.unwrap();
        let metrics = std::sync::Arc::new(crate::metrics::Metrics::default());
        let pending = Pending::new(
            derived,
            IndexPolicy {
                max_bytes: 0,
                reads: Some(metrics.clone()),
            },
        );
        // The queue full: every slot held, as by 16 texts waiting for a long group.
        let held = pending
            .slots
            .clone()
            .acquire_many_owned(SLOTS as u32)
            .await
            .unwrap();
        let coverage = || Coverage {
            total_units: Some(1),
            whole: true,
        };
        let liveness = std::time::Duration::from_secs(60);
        tokio::time::timeout(
            liveness,
            pending.index("t", "f", "a read's text".into(), &[], coverage(), false),
        )
        .await
        .expect("a read does not wait for room in the index");
        // The next reads do not wait at all while there is no room; both are counted.
        assert!(pending.busy.load(std::sync::atomic::Ordering::Relaxed));
        pending
            .index("t", "f", "a second read".into(), &[], coverage(), false)
            .await;
        let skipped = || {
            metrics
                .index_skipped
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        assert_eq!(skipped(), 2);
        assert!(metrics
            .render(0, None)
            .contains("docreader_index_skipped_total 2"));
        let request = pending.index("t", "f", "the file's text".into(), &[], coverage(), true);
        tokio::pin!(request);
        assert!(
            tokio::time::timeout(READ_WAITS_AT_MOST * 4, &mut request)
                .await
                .is_err(),
            "an index request waits for room"
        );
        drop(held);
        tokio::time::timeout(liveness, request)
            .await
            .expect("and is queued once there is room");
        // A read that finds room at once ends the busy spell.
        pending
            .index("t", "g", "another read".into(), &[], coverage(), false)
            .await;
        assert!(!pending.busy.load(std::sync::atomic::Ordering::Relaxed));
        assert_eq!(skipped(), 2);
    }
}
