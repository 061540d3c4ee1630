//! A tenant's files: keep received bytes (type decided from content, the same bytes stored
//! once by sha256, a random id per upload), look one up, forget one. Shared by uploads and
//! by the read service, which keeps attachments found inside documents.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::config::Limits;
use crate::db::{self, BytesLock, Db, FileRecord};
use crate::detect as sniff;
use crate::error::{ApiError, ErrorCode};
use crate::store::{clean_name, random_hex, Incoming, Store};

/// The metadata database and the blob directory, with the limits uploads obey.
#[derive(Clone)]
pub struct Files {
    pub db: Db,
    pub store: Arc<Store>,
    pub limits: Limits,
    /// Search indexing of reads, done after they answer.
    pub indexing: Arc<crate::search::Pending>,
    /// Where upload rows are written (grouped on SQLite).
    pub rows: RowQueue,
    /// Rows lately stored, so the read that follows an upload does not ask the database
    /// again. SQLite only: one process owns that database, and a row leaves
    /// here when this process deletes it; with Postgres another replica may delete it.
    pub recent: Option<Arc<Recent>>,
    /// Which bytes may have document memory, so a read of bytes that have none does not
    /// ask for it (SQLite only, like `recent`).
    pub memory_keys: Option<Arc<MemoryKeys>>,
}

/// The sha256s that may have rows in the document memory: loaded at start, added to before
/// a row is written, never taken from (a row evicted meanwhile costs one lookup). Past
/// `MEMORY_KEYS` of them it gives up and says "maybe" for all.
#[derive(Debug, Default)]
pub struct MemoryKeys(std::sync::Mutex<Option<std::collections::HashSet<String>>>);

const MEMORY_KEYS: usize = 200_000;

impl MemoryKeys {
    pub async fn load(db: &Db) -> Result<Self, sqlx::Error> {
        let keys = db::memory_keys(db).await?;
        Ok(Self(std::sync::Mutex::new(
            (keys.len() < MEMORY_KEYS).then(|| keys.into_iter().collect()),
        )))
    }

    pub fn may_hold(&self, sha256: &str) -> bool {
        let keys = self.0.lock().unwrap_or_else(|p| p.into_inner());
        keys.as_ref().is_none_or(|k| k.contains(sha256))
    }

    pub fn add(&self, sha256: &str) {
        let mut keys = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = keys.as_mut() {
            k.insert(sha256.to_string());
            if k.len() >= MEMORY_KEYS {
                *keys = None;
            }
        }
    }
}

/// Upload rows by (tenant, id), at most `RECENT` of them (emptied when full).
#[derive(Debug, Default)]
pub struct Recent(std::sync::Mutex<std::collections::HashMap<(String, String), FileRecord>>);

const RECENT: usize = 4096;

impl Recent {
    fn get(&self, tenant: &str, id: &str) -> Option<FileRecord> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&(tenant.to_string(), id.to_string())).cloned()
    }

    fn put(&self, rec: &FileRecord) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= RECENT {
            map.clear();
        }
        map.insert((rec.tenant.clone(), rec.file_id.clone()), rec.clone());
    }

    fn remove(&self, tenant: &str, id: &str) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.remove(&(tenant.to_string(), id.to_string()));
    }
}

impl Files {
    /// One of the tenant's files (another tenant's id reads as `not_found`).
    pub async fn get(&self, tenant: &str, id: &str) -> Result<FileRecord, ApiError> {
        if let Some(rec) = self.recent.as_ref().and_then(|r| r.get(tenant, id)) {
            return Ok(rec);
        }
        // Not remembered here: a delete between this lookup and remembering it would leave
        // a deleted row behind. Rows enter at upload, before anyone knows their id.
        db::get(&self.db, tenant, id)
            .await
            .map_err(db::failure)?
            .ok_or_else(ApiError::not_found)
    }

    /// The lock under which these bytes gain or lose a reference (`db::BytesLock`).
    pub async fn lock_bytes(&self, sha256: &str) -> Result<BytesLock<'_>, ApiError> {
        BytesLock::take(
            &self.db,
            self.store.refs_lock(sha256),
            &self.store.refs_gate,
            sha256,
        )
        .await
        .map_err(db::failure)
    }

    /// With SQLite, the writers' turn (`Store::writes`); Postgres needs none.
    pub async fn write_turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.db {
            Db::Sqlite(_) => Some(self.store.writes.lock().await),
            Db::Postgres(_) => None,
        }
    }

    /// Check a received file's bytes and keep it: the shared end of uploads and of
    /// attachments found inside documents.
    pub async fn finalize(
        &self,
        tenant: &str,
        name: &str,
        inc: Incoming,
    ) -> Result<FileRecord, ApiError> {
        let size = inc.size;
        // The bytes gain their reference whole, in a task of its own: a client that goes
        // away mid-request cannot leave a row queued after its bytes' lock was let go (a
        // delete of the same bytes meanwhile would remove them under the row).
        let files = self.clone();
        let (tenant, name) = (tenant.to_string(), name.to_string());
        let kept = tokio::spawn(async move { files.keep(tenant, name, inc).await }).await;
        // Its file is in place (or gone): the spare it took is replaced (`store::Spares`).
        self.store.top_up_spares();
        let rec = kept.map_err(ApiError::internal)??;
        if let Some(r) = &self.recent {
            r.put(&rec);
        }
        tracing::info!(file_id = %rec.file_id, format = %rec.format, size, "stored");
        Ok(rec)
    }

    /// Check a received file as an upload is checked (its type decided from its bytes, an
    /// executable or archive refused) and hold it for one read without keeping it: no row,
    /// no blob, no sync (a one-shot read that is not kept, #46 item 2). Its temp file is
    /// removed when the `Carried` is dropped.
    pub async fn carried(&self, name: &str, inc: Incoming) -> Result<Carried, ApiError> {
        let size = inc.size;
        let hint = name.to_string();
        let finished = inc
            .finish_transient(move |f| sniff::sniff_file(f, &hint))
            .await;
        // Its spare temp file was taken (`store::Spares`).
        self.store.top_up_spares();
        let (held, sniffed) = finished.map_err(ApiError::internal)?;
        match sniffed {
            Ok(format) => Ok(Carried {
                held,
                name: name.to_string(),
                format,
                size,
            }),
            Err(refusal) => {
                let mut e = refusal.into_error();
                e.message = format!("{name}: {}", e.message);
                tracing::info!(code = e.code.as_str(), size, "upload refused");
                Err(e)
            }
        }
    }

    /// `carried` for bytes in hand (MCP's `content_base64`), within the file size limit.
    pub async fn carried_bytes(&self, name: &str, bytes: &[u8]) -> Result<Carried, ApiError> {
        let name = clean_name(name);
        let inc = self.received(&name, bytes).await?;
        self.carried(&name, inc).await
    }

    /// Bytes in hand (an attachment, MCP's `content_base64`) as a received file, within the
    /// file size limit: for `finalize` or `carried`.
    async fn received(&self, name: &str, bytes: &[u8]) -> Result<Incoming, ApiError> {
        if bytes.len() as u64 > self.limits.max_file_bytes {
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                format!(
                    "{name}: the file is over the limit of {} bytes",
                    self.limits.max_file_bytes
                ),
            ));
        }
        let mut inc = self.store.incoming().await.map_err(ApiError::internal)?;
        if let Err(e) = inc.write(bytes).await {
            inc.discard().await;
            return Err(ApiError::internal(e));
        }
        Ok(inc)
    }

    /// Sync the received bytes, decide their type, move them into place and write their
    /// row; the last two under the bytes' lock.
    ///
    /// A small file kept on this machine alone (the common upload) is written, synced,
    /// checked and moved into place in one blocking call (which creates its temp file too
    /// when no spare was ready), under the lock taken before it. A large one is synced and
    /// checked first, so the lock (shared by 1/64 of all bytes) is not held while megabytes
    /// reach the disk; with a shared blob store the bytes go to the bucket before they are
    /// moved (`Store::commit`).
    async fn keep(
        &self,
        tenant: String,
        name: String,
        inc: Incoming,
    ) -> Result<FileRecord, ApiError> {
        let sha256 = inc.sha256();
        let size = inc.size;
        let tmp = inc.path().to_path_buf();
        let early = inc.in_memory() && self.store.remote().is_none();
        // A small upload kept on this machine with SQLite is synced once before its answer:
        // its bytes go into the log with its row, the blob file is synced after
        // (`RowQueue`).
        let keep_bytes = early && size <= ROW_BYTES && self.rows.keeps_bytes();
        let mut lock = None;
        let mut place = None;
        if early {
            match self.lock_bytes(&sha256).await {
                Ok(l) => lock = Some(l),
                Err(e) => {
                    inc.discard().await;
                    return Err(e);
                }
            }
            place = Some(self.store.placing(&tmp, &sha256));
        }
        let hint = name.clone();
        // The type decided from the bytes in the same blocking call that syncs them (it may
        // read the zip directory).
        let finished = inc
            .finish(keep_bytes, move |f, tmp, bytes| {
                let sniffed = sniff::sniff_file(f, &hint);
                let small = bytes.filter(|b| b.len() as u64 <= ROW_BYTES);
                let placed = match (&sniffed, place) {
                    (Ok(_), Some(p)) => Some(p.place(tmp, !keep_bytes, small)),
                    _ => None,
                };
                (sniffed, placed)
            })
            .await;
        let ((sniffed, placed), unsynced) = match finished {
            Ok(f) => (f.checked, f.unsynced),
            Err(e) => return give_up(lock, &tmp, ApiError::internal(e)).await,
        };
        let format = match sniffed {
            Ok(f) => f,
            Err(refusal) => {
                let mut e = refusal.into_error();
                e.message = format!("{name}: {}", e.message);
                tracing::info!(code = e.code.as_str(), size, "upload refused");
                return give_up(lock, &tmp, e).await;
            }
        };
        let lock = match (placed, lock) {
            (Some(Ok(aside)), Some(lock)) => {
                self.store.free_later(aside);
                lock
            }
            (Some(Err(e)), lock) => return give_up(lock, &tmp, ApiError::internal(e)).await,
            (_, lock) => {
                let lock = match lock {
                    Some(l) => l,
                    None => match self.lock_bytes(&sha256).await {
                        Ok(l) => l,
                        Err(e) => return give_up(None, &tmp, e).await,
                    },
                };
                if let Err(e) = self.store.commit(&tmp, &sha256).await {
                    return give_up(Some(lock), &tmp, e.into_api()).await;
                }
                lock
            }
        };
        let rec = FileRecord {
            file_id: format!("f_{}", random_hex(16)),
            tenant,
            name,
            size: size as i64,
            sha256: sha256.clone(),
            format: format.family().as_str().to_string(),
            mime: format.mime().to_string(),
            created_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        if let Err(e) = self.rows.insert(rec.clone(), unsynced).await {
            if db::refs(&self.db, &sha256).await.unwrap_or(1) == 0 {
                let _ = self.store.remove(&sha256).await;
            }
            lock.release().await;
            return Err(db::failure(e));
        }
        lock.release().await;
        Ok(rec)
    }

    /// Store bytes found inside a document (an e-mail attachment) as an upload of the tenant.
    /// The same bytes under the same name reuse the tenant's earlier upload, so reading a
    /// message twice does not store its attachments twice.
    pub async fn store_bytes(
        &self,
        tenant: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<(FileRecord, bool), ApiError> {
        let name = clean_name(name);
        let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes));
        if let Some(rec) = db::find_same(&self.db, tenant, &sha, &name)
            .await
            .map_err(db::failure)?
        {
            return Ok((rec, false));
        }
        let inc = self.received(&name, bytes).await?;
        self.finalize(tenant, &name, inc)
            .await
            .map(|rec| (rec, true))
    }

    /// Delete a row and, when no upload references the bytes any more, the bytes.
    pub async fn forget(&self, tenant: &str, id: &str) -> Result<bool, ApiError> {
        self.indexing.settled().await;
        // The bytes' hash decides the lock: look the row up first (a delete racing this
        // one finds it gone below and answers not found).
        let Some(rec) = db::get(&self.db, tenant, id).await.map_err(db::failure)? else {
            return Ok(false);
        };
        let lock = self.lock_bytes(&rec.sha256).await?;
        let done = self.forget_locked(tenant, id).await;
        lock.release().await;
        done
    }

    async fn forget_locked(&self, tenant: &str, id: &str) -> Result<bool, ApiError> {
        let turn = self.write_turn().await;
        let deleted = db::delete(&self.db, tenant, id).await;
        if let Some(r) = &self.recent {
            r.remove(tenant, id);
        }
        let Some(sha) = deleted.map_err(db::failure)? else {
            return Ok(false);
        };
        if db::tenant_refs(&self.db, tenant, &sha)
            .await
            .map_err(db::failure)?
            == 0
        {
            db::memory_forget(&self.db, tenant, &sha)
                .await
                .map_err(db::failure)?;
        }
        let unreferenced = db::refs(&self.db, &sha).await.map_err(db::failure)? == 0;
        drop(turn);
        self.indexing
            .forget(tenant, id)
            .await
            .map_err(db::failure)?;
        if unreferenced {
            self.store.remove(&sha).await?;
        }
        Ok(true)
    }
}

/// A file carried in a request for one read and not kept (`Files::carried`): checked as
/// an upload is, held in the data folder's temp space until the read ends.
pub struct Carried {
    pub held: crate::store::TempFile,
    pub name: String,
    pub format: sniff::Format,
    pub size: u64,
}

/// What an upload gives up when its bytes do not make it into place: the bytes' lock (when
/// taken) and the temp file.
async fn give_up(
    lock: Option<BytesLock<'_>>,
    tmp: &std::path::Path,
    e: ApiError,
) -> Result<FileRecord, ApiError> {
    if let Some(l) = lock {
        l.release().await;
    }
    let _ = tokio::fs::remove_file(tmp).await;
    Err(e)
}

/// An upload's row, its bytes when its blob file is not synced, and where its answer goes.
type RowJob = (
    FileRecord,
    Option<Vec<u8>>,
    oneshot::Sender<Result<(), sqlx::Error>>,
);

/// Upload rows on their way into the database. On SQLite one task writes them, as many as
/// have queued in one transaction (group commit): uploads arriving together share one
/// sync of the log instead of waiting for each other's; each is answered only once its
/// row is on disk. On Postgres, which commits concurrent transactions together itself,
/// each row is its own statement.
///
/// On SQLite a small upload's bytes are committed with its row (in `unsynced_blobs`, by the
/// same statement), and its blob file is placed without a sync of its own: the log's sync
/// before the answer holds both, so an upload waits for one sync rather than two. The blob
/// files are synced after, a batch at a time (`sync_blobs`), and the kept copies deleted;
/// after a crash in between, the service rewrites those blobs from them when it starts
/// (`recover_unsynced`).
#[derive(Clone)]
pub struct RowQueue {
    db: Db,
    queue: Option<mpsc::UnboundedSender<RowJob>>,
}

/// The largest upload whose bytes go into the log with its row (`RowQueue`): above it the
/// sync saved is a small part of the upload's time, and the bytes would be written thrice
/// (blob file, log, database file).
const ROW_BYTES: u64 = 64 * 1024;

/// The most rows one transaction writes.
const MAX_GROUP: usize = 64;

impl RowQueue {
    /// `sync_delay`: how long blob files placed without a sync wait to be synced together.
    pub fn new(db: Db, store: Arc<Store>, sync_delay: std::time::Duration) -> Self {
        let queue = match &db {
            Db::Sqlite(pool) => {
                let (tx, rx) = mpsc::unbounded_channel();
                let unsynced = Arc::new(Unsynced::default());
                tokio::spawn(sync_blobs(
                    pool.clone(),
                    store.clone(),
                    unsynced.clone(),
                    sync_delay,
                ));
                tokio::spawn(write_rows(pool.clone(), store, rx, unsynced));
                Some(tx)
            }
            Db::Postgres(_) => None,
        };
        Self { db, queue }
    }

    /// Whether a row may carry its upload's bytes (`insert`'s `unsynced`): on SQLite.
    pub fn keeps_bytes(&self) -> bool {
        self.queue.is_some()
    }

    /// Write an upload's row (with its bytes, when its blob file was placed without a
    /// sync: only where `keeps_bytes`); returns once it is committed.
    pub async fn insert(
        &self,
        rec: FileRecord,
        unsynced: Option<Vec<u8>>,
    ) -> Result<(), sqlx::Error> {
        let Some(queue) = &self.queue else {
            debug_assert!(unsynced.is_none(), "only SQLite rows keep bytes");
            return db::insert(&self.db, (&rec, None)).await;
        };
        let (tx, rx) = oneshot::channel();
        queue
            .send((rec, unsynced, tx))
            .map_err(|_| sqlx::Error::WorkerCrashed)?;
        rx.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

async fn write_rows(
    pool: sqlx::SqlitePool,
    store: Arc<Store>,
    mut rx: mpsc::UnboundedReceiver<RowJob>,
    unsynced: Arc<Unsynced>,
) {
    let db = Db::Sqlite(pool.clone());
    // A connection of its own, out of the pool (a pool's connection is pinged on its way
    // back, a round trip to the connection's thread each row); a fresh one after a failure.
    let mut conn: Option<sqlx::SqliteConnection> = None;
    while let Some(first) = rx.recv().await {
        let turn = store.writes.lock().await;
        // What queued while the last group was written (or while this one waited its turn).
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => group.push(job),
                Err(_) => break,
            }
        }
        let rows: Vec<db::NewRow<'_>> = group.iter().map(|(r, b, _)| (r, b.as_deref())).collect();
        let written = match &mut conn {
            Some(c) => db::insert_group_on(c, &rows).await,
            None => match pool.acquire().await {
                Ok(c) => db::insert_group_on(conn.insert(c.detach()), &rows).await,
                Err(e) => Err(e),
            },
        };
        drop(rows);
        if written.is_err() {
            conn = None;
        }
        match written {
            Ok(()) => {
                unsynced.add(
                    group
                        .iter()
                        .filter(|(_, b, _)| b.is_some())
                        .map(|(r, _, _)| r),
                );
                for (_, _, reply) in group {
                    let _ = reply.send(Ok(()));
                }
            }
            // One row's failure fails that row alone: each again on its own.
            Err(e) if group.len() == 1 => {
                let (_, _, reply) = group.pop().expect("one row");
                let _ = reply.send(Err(e));
            }
            Err(_) => {
                for (rec, bytes, reply) in group {
                    let done = db::insert(&db, (&rec, bytes.as_deref())).await;
                    if done.is_ok() && bytes.is_some() {
                        unsynced.add([&rec]);
                    }
                    let _ = reply.send(done);
                }
            }
        }
        drop(turn);
    }
}

/// Rows committed with their bytes whose blob files wait to be synced: (file id, sha256).
#[derive(Default)]
struct Unsynced {
    rows: std::sync::Mutex<Vec<(String, String)>>,
    wake: tokio::sync::Notify,
}

impl Unsynced {
    fn add<'a>(&self, recs: impl IntoIterator<Item = &'a FileRecord>) {
        let Ok(mut rows) = self.rows.lock() else {
            return;
        };
        let before = rows.len();
        rows.extend(
            recs.into_iter()
                .map(|r| (r.file_id.clone(), r.sha256.clone())),
        );
        if rows.len() > before {
            self.wake.notify_one();
        }
    }
}

/// Sync the blob files placed without a sync, a batch every `delay` at most, and let go of
/// the rows' copies of their bytes (one transaction a batch, in the writers' turn). When a
/// sync fails the copies stay, and the blobs are rewritten from them at the next start.
async fn sync_blobs(
    pool: sqlx::SqlitePool,
    store: Arc<Store>,
    unsynced: Arc<Unsynced>,
    delay: std::time::Duration,
) {
    loop {
        unsynced.wake.notified().await;
        tokio::time::sleep(delay).await;
        let batch = match unsynced.rows.lock() {
            Ok(mut rows) => std::mem::take(&mut *rows),
            Err(_) => return,
        };
        if batch.is_empty() {
            continue;
        }
        let (ids, shas): (Vec<String>, Vec<String>) = batch.into_iter().unzip();
        let s = store.clone();
        match tokio::task::spawn_blocking(move || s.sync_blobs(&shas)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(error = %e, rows = ids.len(), "could not sync uploads' blob files (their rows keep the bytes)");
                continue;
            }
            Err(_) => continue,
        }
        let turn = store.writes.lock().await;
        if let Err(e) = db::clear_unsynced(&pool, &ids).await {
            tracing::warn!(error = %e, "could not let go of synced uploads' copies (they go at the next start)");
        }
        drop(turn);
    }
}

/// At start, before any request: the blobs of rows that still keep their bytes (the
/// service stopped before it synced them) are rewritten from the rows where the file is
/// missing or not whole, synced, and the copies let go. SQLite with the blobs on this
/// machine only. Returns how many blob files were rewritten.
pub async fn recover_unsynced(db: &Db, store: &Arc<Store>) -> Result<usize, String> {
    let Db::Sqlite(pool) = db else {
        return Ok(0);
    };
    if store.remote().is_some() {
        return Ok(0);
    }
    let failed = |e: sqlx::Error| format!("cannot read the uploads kept with their rows: {e}");
    let rows = db::unsynced_rows(pool).await.map_err(failed)?;
    let mut done = std::collections::HashSet::new();
    let mut rewritten = 0;
    for (id, sha256) in &rows {
        if !done.insert(sha256.clone()) {
            continue;
        }
        let Some(bytes) = db::unsynced_bytes(pool, id).await.map_err(failed)? else {
            continue;
        };
        let (s, sha) = (store.clone(), sha256.clone());
        let restored = tokio::task::spawn_blocking(move || s.restore(&sha, &bytes))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
            .map_err(|e| format!("cannot restore upload {id}'s bytes: {e}"))?;
        rewritten += restored as usize;
    }
    // Every blob kept bytes were found for, rewritten or found whole, synced at once
    // before the copies go.
    let s = store.clone();
    let shas: Vec<String> = done.into_iter().collect();
    tokio::task::spawn_blocking(move || s.sync_blobs(&shas))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()))
        .map_err(|e| format!("cannot sync the restored uploads' blob files: {e}"))?;
    let ids: Vec<String> = rows.into_iter().map(|(id, _)| id).collect();
    db::clear_unsynced(pool, &ids).await.map_err(failed)?;
    if rewritten > 0 {
        tracing::warn!(rewritten, "uploads' blob files rewritten from their rows (the service had stopped before it synced them)");
    }
    Ok(rewritten)
}
