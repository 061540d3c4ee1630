//! The scoped upload directory: bytes stream into a temp file under `<data>/tmp`, are
//! checked, then renamed atomically to `<data>/blobs/<sha256[..2]>/<sha256>`. Names the
//! client sends never touch a path.
//!
//! With a shared blob store (`DOCREADER_BLOB_STORE=s3://bucket/prefix`, issue #22) the
//! bytes live in the bucket under `<prefix>/blobs/<sha256[..2]>/<sha256>`, and
//! `<data>/blob-cache` is this replica's cache of them (a `<data>/blobs` of earlier
//! embedded use is left alone): filled by uploads made here and by
//! reads of bytes another replica stored, emptied at start and of what was not used for an
//! hour (a delete on another replica removes the bucket's copy; the cache's copy is never
//! served without the file's row, and is gone within the hour).
//!
//! Its files, by what each holds:
//!
//! - `mod.rs`: `Store` (opening the data dir, `refs_lock`, `writes`, `spool`, `blob_path`,
//!   `remove`), `StoreError`;
//! - `incoming.rs`: an upload being received (`Incoming`, `Finished`) and the spare temp
//!   files made ahead for it (`Spares`, `INCOMING`);
//! - `placing.rs`: putting received bytes in place under their hash (`commit`, `Placing`,
//!   `free_later`, `sync_blobs`, `restore`);
//! - `cache.rs`: this replica's cache of the shared blob store (`ensure_local`,
//!   `sweep_cache`);
//! - `results.rs`: jobs' results (`put_result`, `get_result`, `remove_result`);
//! - `names.rs`: `random_hex` and `clean_name`;
//! - `s3.rs`: the shared blob store itself (`Remote`).

mod cache;
mod incoming;
mod names;
mod placing;
mod results;
mod s3;

use std::path::{Path, PathBuf};

pub use incoming::{Finished, Incoming, TempFile, INCOMING};
pub use names::{clean_name, random_hex};
pub use placing::Placing;
pub use s3::Remote;

use incoming::Spares;
use tokio::sync::Mutex;

/// The blob directory, the locks that keep "is this blob still referenced?" and "store this
/// blob" from interleaving, and the turn SQLite's writers take.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    /// `<data>/blobs`, or with a shared blob store this replica's cache of it,
    /// `<data>/blob-cache`.
    blobs: PathBuf,
    /// The shared blob store, when configured (else the blob directory is the store).
    remote: Option<Remote>,
    /// Held while a blob gains or loses a reference: one of `REF_STRIPES` locks, chosen by
    /// the bytes' hash (`refs_lock`), so uploads of different bytes do not wait for each
    /// other.
    refs_locks: Box<[Mutex<()>]>,
    /// With SQLite, the writers of `docreader.db` take turns here — upload rows
    /// (`files::RowQueue`), deletes, document memory — rather than in SQLite's busy
    /// handler, which sleeps a millisecond or more each time two meet. (The search index
    /// is a file of its own with its own turn: `search::Pending`.)
    pub writes: Mutex<()>,
    /// With Postgres, the holders of a bytes lock at once (`db::BytesLock`): each holds a
    /// pooled connection while its statements take another, so at most half the pool.
    pub refs_gate: tokio::sync::Semaphore,
    /// Empty temp files made ahead of need (`Spares`).
    spares: std::sync::Arc<Spares>,
}

/// How many locks the bytes' references are spread over (`Store::refs_lock`).
const REF_STRIPES: usize = 64;

impl Store {
    pub fn open(data_dir: &Path) -> std::io::Result<Self> {
        Self::open_with(data_dir, None)
    }

    /// Open the data dir, with the shared blob store when one is configured (its cache
    /// starts empty).
    pub fn open_with(data_dir: &Path, remote: Option<Remote>) -> std::io::Result<Self> {
        let blobs = match remote {
            // Its own folder: a data dir that held embedded uploads before keeps them.
            Some(_) => {
                let cache = data_dir.join("blob-cache");
                let _ = std::fs::remove_dir_all(&cache);
                cache
            }
            None => data_dir.join("blobs"),
        };
        std::fs::create_dir_all(&blobs)?;
        std::fs::create_dir_all(data_dir.join("results"))?;
        let tmp = data_dir.join("tmp");
        // Leftovers of an interrupted upload are garbage.
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join(INCOMING))?;
        // Copies of bytes already stored, waiting to be freed (see `commit`).
        let discard = data_dir.join("discard");
        let _ = std::fs::remove_dir_all(&discard);
        std::fs::create_dir_all(&discard)?;
        Ok(Self {
            root: data_dir.to_path_buf(),
            blobs,
            remote,
            refs_locks: (0..REF_STRIPES).map(|_| Mutex::new(())).collect(),
            writes: Mutex::new(()),
            refs_gate: tokio::sync::Semaphore::new(crate::db::PG_POOL / 2),
            spares: Default::default(),
        })
    }

    /// The lock under which these bytes (a hex sha256) gain or lose a reference.
    pub fn refs_lock(&self, sha256: &str) -> &Mutex<()> {
        let key = u32::from_str_radix(sha256.get(..4).unwrap_or("0"), 16).unwrap_or(0);
        &self.refs_locks[key as usize % REF_STRIPES]
    }

    pub fn remote(&self) -> Option<&Remote> {
        self.remote.as_ref()
    }

    /// Where reads keep their own names for the bytes they read (`read::held`), on the
    /// blobs' filesystem.
    pub fn spool(&self) -> PathBuf {
        self.root.join("tmp")
    }
    pub fn blob_path(&self, sha256: &str) -> PathBuf {
        debug_assert!(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()));
        self.blobs.join(&sha256[..2]).join(sha256)
    }

    /// Remove a blob's bytes. The caller holds the bytes' lock and has checked no row
    /// refers to them.
    pub async fn remove(&self, sha256: &str) -> Result<(), StoreError> {
        if let Some(r) = &self.remote {
            r.delete(sha256).await?;
        }
        match tokio::fs::remove_file(self.blob_path(sha256)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}

/// A failure to keep or fetch bytes: the local disk's, or the shared blob store's.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("blob store: {0}")]
    Remote(#[from] object_store::Error),
}

impl StoreError {
    /// As the client sees it: a blob store that cannot be reached, or a disk without room
    /// for a job's result, is `unavailable` (503, `Retry-After`); a local failure is
    /// `internal`.
    pub fn into_api(self) -> crate::error::ApiError {
        match self {
            StoreError::Io(e) if e.kind() == std::io::ErrorKind::StorageFull => {
                crate::error::ApiError::new(
                    crate::error::ErrorCode::Unavailable,
                    "the server's disk is nearly full: this result was not kept",
                )
                .with_hint("Read a smaller part (pages, max_chars), or try again later.")
                .with_cause(e)
            }
            StoreError::Io(e) => crate::error::ApiError::internal(e),
            StoreError::Remote(e) => crate::error::ApiError::new(
                crate::error::ErrorCode::Unavailable,
                "the blob store is unavailable",
            )
            .with_cause(e),
        }
    }
}

impl From<StoreError> for crate::error::ApiError {
    fn from(e: StoreError) -> Self {
        e.into_api()
    }
}

/// Run file-system work off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> std::io::Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(std::io::Error::other)?
}
