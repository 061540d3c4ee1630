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
        let rec = tokio::spawn(async move { files.keep(tenant, name, inc).await })
            .await
            .map_err(ApiError::internal)??;
        if let Some(r) = &self.recent {
            r.put(&rec);
        }
        tracing::info!(file_id = %rec.file_id, format = %rec.format, size, "stored");
        Ok(rec)
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
            .finish(move |f, tmp| {
                let sniffed = sniff::sniff_file(f, &hint);
                let placed = match (&sniffed, place) {
                    (Ok(_), Some(p)) => Some(p.place(tmp)),
                    _ => None,
                };
                (sniffed, placed)
            })
            .await;
        let (sniffed, placed) = match finished {
            Ok((_, _, checked)) => checked,
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
        if let Err(e) = self.rows.insert(rec.clone()).await {
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

type RowJob = (FileRecord, oneshot::Sender<Result<(), sqlx::Error>>);

/// Upload rows on their way into the database. On SQLite one task writes them, as many as
/// have queued in one transaction (group commit): uploads arriving together share one
/// sync of the log instead of waiting for each other's; each is answered only once its
/// row is on disk. On Postgres, which commits concurrent transactions together itself,
/// each row is its own statement.
#[derive(Clone)]
pub struct RowQueue {
    db: Db,
    queue: Option<mpsc::UnboundedSender<RowJob>>,
}

/// The most rows one transaction writes.
const MAX_GROUP: usize = 64;

impl RowQueue {
    pub fn new(db: Db, store: Arc<Store>) -> Self {
        let queue = match &db {
            Db::Sqlite(pool) => {
                let (tx, rx) = mpsc::unbounded_channel();
                tokio::spawn(write_rows(pool.clone(), store, rx));
                Some(tx)
            }
            Db::Postgres(_) => None,
        };
        Self { db, queue }
    }

    /// Write an upload's row; returns once it is committed.
    pub async fn insert(&self, rec: FileRecord) -> Result<(), sqlx::Error> {
        let Some(queue) = &self.queue else {
            return db::insert(&self.db, &rec).await;
        };
        let (tx, rx) = oneshot::channel();
        queue
            .send((rec, tx))
            .map_err(|_| sqlx::Error::WorkerCrashed)?;
        rx.await.map_err(|_| sqlx::Error::WorkerCrashed)?
    }
}

async fn write_rows(
    pool: sqlx::SqlitePool,
    store: Arc<Store>,
    mut rx: mpsc::UnboundedReceiver<RowJob>,
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
        let rows: Vec<&FileRecord> = group.iter().map(|(r, _)| r).collect();
        let written = match &mut conn {
            Some(c) => db::insert_group_on(c, &rows).await,
            None => match pool.acquire().await {
                Ok(c) => db::insert_group_on(conn.insert(c.detach()), &rows).await,
                Err(e) => Err(e),
            },
        };
        if written.is_err() {
            conn = None;
        }
        match written {
            Ok(()) => {
                for (_, reply) in group {
                    let _ = reply.send(Ok(()));
                }
            }
            // One row's failure fails that row alone: each again on its own.
            Err(e) if group.len() == 1 => {
                let (_, reply) = group.pop().expect("one row");
                let _ = reply.send(Err(e));
            }
            Err(_) => {
                for (rec, reply) in group {
                    let _ = reply.send(db::insert(&db, &rec).await);
                }
            }
        }
        drop(turn);
    }
}
