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

mod s3;

use std::path::{Path, PathBuf};

pub use s3::Remote;

use sha2::{Digest, Sha256};
use std::io::Write;
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

/// Empty temp files under `<data>/tmp/in`, made ahead of need by a blocking task, so an
/// upload does not create its own while its client waits: making a file is an inode to
/// find, which on ext4 without a journal means stepping over every inode freed in the last
/// minute or more (`recently_deleted`): 0.1–0.5 ms here after a few hundred deletes, a
/// quarter of a small upload's time, and over a millisecond after a few thousand. Taken
/// without waiting; when none is ready the upload makes its own, as before. Named
/// `spare-…` (an upload's own: `up-…`); leftovers go with the rest of `<data>/tmp` at
/// start.
///
/// Making a file holds its folder's lock for all of that search, and a rename out of the
/// folder (an upload's file into place) or a name linked into it waits for the lock
/// (`rename` was seen spinning on it). So uploads' files have a folder of their own, apart
/// from the reads' names in `<data>/tmp`, and the spare an upload took is replaced once
/// its file is in place (`Store::top_up_spares`), not while it is being moved.
#[derive(Debug, Default)]
struct Spares {
    ready: std::sync::Mutex<Vec<(PathBuf, std::fs::File)>>,
    /// A blocking task is making more.
    making: std::sync::atomic::AtomicBool,
}

/// The folder under `<data>/tmp` of uploads' temp files (see `Spares`).
pub const INCOMING: &str = "in";

/// How many spare temp files are kept ready (enough for as many uploads at once as a
/// busy server of two cores serves).
const SPARES: usize = 8;

/// Taking a spare leaves fewer than this: more are made at once, not when the upload's
/// file is in place (many uploads at once).
const SPARES_LOW: usize = SPARES / 2;

impl Spares {
    /// A spare, and whether the pool is now low.
    fn take(&self) -> (Option<(PathBuf, std::fs::File)>, bool) {
        match self.ready.lock() {
            Ok(mut r) => {
                let spare = r.pop();
                (spare, r.len() < SPARES_LOW)
            }
            Err(_) => (None, false),
        }
    }

    /// Start making spares up to `SPARES`, unless that is under way or none are needed.
    fn refill(self: &std::sync::Arc<Self>, dir: &Path) {
        use std::sync::atomic::Ordering;
        let short = self.ready.lock().map(|r| r.len() < SPARES).unwrap_or(false);
        if !short || self.making.swap(true, Ordering::AcqRel) {
            return;
        }
        let (spares, dir) = (self.clone(), dir.to_path_buf());
        // Off the runtime; outside one (a test's plain thread) there is nothing to refill.
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            self.making.store(false, Ordering::Release);
            return;
        };
        rt.spawn_blocking(move || {
            loop {
                if spares
                    .ready
                    .lock()
                    .map(|r| r.len() >= SPARES)
                    .unwrap_or(true)
                {
                    break;
                }
                let path = dir.join(format!("spare-{}", random_hex(16)));
                match new_temp(&path) {
                    Ok(f) => match spares.ready.lock() {
                        Ok(mut r) => r.push((path, f)),
                        Err(_) => break,
                    },
                    // The upload that finds none makes its own and reports the failure.
                    Err(_) => break,
                }
            }
            spares.making.store(false, Ordering::Release);
        });
    }
}

/// Create a temp file that must not exist yet.
fn new_temp(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
}

/// A file being received: its bytes gather in memory and go to its temp file a quarter
/// of a megabyte at a time, each piece in one blocking call, so a small upload touches the
/// disk once, in `finish` (write, sync and the caller's check together, and the create
/// when no spare temp file was ready). Dropped unfinished, it removes its temp file.
pub struct Incoming {
    path: PathBuf,
    /// A spare made ahead (`Spares`), or created when the first piece is written.
    file: Option<std::fs::File>,
    /// Whether the temp file may exist (a spare, or a piece was or was being written).
    exists: bool,
    /// Whether a piece was (or was being) written out.
    spilled: bool,
    buf: Vec<u8>,
    hasher: Sha256,
    pub size: u64,
}

/// How many locks the bytes' references are spread over (`Store::refs_lock`).
const REF_STRIPES: usize = 64;

/// Bytes kept in memory before they are written out.
const SPILL: usize = 256 * 1024;

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

    /// Make spare temp files up to the pool's size, off the runtime: called once an
    /// upload's file is in place (see `Spares`).
    pub fn top_up_spares(&self) {
        self.spares.refill(&self.incoming_dir());
    }

    /// The folder of uploads' temp files (see `Spares`).
    fn incoming_dir(&self) -> PathBuf {
        self.root.join("tmp").join(INCOMING)
    }

    pub fn blob_path(&self, sha256: &str) -> PathBuf {
        debug_assert!(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()));
        self.blobs.join(&sha256[..2]).join(sha256)
    }

    /// Start receiving a file: into a spare temp file when one is ready (`Spares`), else
    /// into one created when its first bytes are written.
    pub async fn incoming(&self) -> std::io::Result<Incoming> {
        let tmp = self.incoming_dir();
        let (spare, low) = self.spares.take();
        if low {
            self.spares.refill(&tmp);
        }
        let (path, file) = match spare {
            Some((path, f)) => (path, Some(f)),
            None => (tmp.join(format!("up-{}", random_hex(16))), None),
        };
        Ok(Incoming {
            path,
            exists: file.is_some(),
            file,
            spilled: false,
            buf: Vec::new(),
            hasher: Sha256::new(),
            size: 0,
        })
    }

    /// Move a received file into place under its hash (or drop it when the bytes are
    /// already stored). The caller holds the bytes' `refs_lock`.
    ///
    /// Both ways cost the same before the answer: one rename. Freeing the copy of bytes
    /// already stored (unlinking 60 MB takes milliseconds) happens after, in the
    /// background, so an upload's latency does not tell whether anyone, another tenant
    /// included, already holds these bytes.
    pub async fn commit(&self, tmp: &Path, sha256: &str) -> Result<PathBuf, StoreError> {
        if let Some(r) = &self.remote {
            // The bucket first: bytes are stored once the bucket has them.
            r.put_file(sha256, tmp).await?;
        }
        let place = self.placing(tmp, sha256);
        let dest = place.dest.clone();
        let tmp = tmp.to_path_buf();
        // With a bucket, the local copy is a cache: its name need not survive a power cut.
        let durable = self.remote.is_none();
        // The look and the rename in one blocking call.
        let aside = blocking(move || place.place(&tmp, durable, None)).await?;
        self.free_later(aside);
        Ok(dest)
    }

    /// Where the temp file `tmp` of these bytes goes (`Placing::place`), for a caller that
    /// moves it in a blocking call of its own. Only for bytes kept on this machine alone:
    /// with a shared blob store, `commit` puts them in the bucket first.
    pub fn placing(&self, tmp: &Path, sha256: &str) -> Placing {
        let name = tmp.file_name().expect("temp files have names");
        Placing {
            dest: self.blob_path(sha256),
            aside: self.root.join("discard").join(name),
        }
    }

    /// Free, in the background, the copy of bytes already stored that `Placing::place`
    /// put aside.
    pub fn free_later(&self, aside: Option<PathBuf>) {
        if let Some(gone) = aside {
            tokio::spawn(async move {
                if let Err(e) = tokio::fs::remove_file(&gone).await {
                    tracing::warn!(error = %e, "could not free a duplicate upload's copy");
                }
            });
        }
    }

    /// Sync blob files placed without it (`Placing::place` not `durable`), and their
    /// names. Blocking.
    ///
    /// On Linux one `syncfs` of the blobs' filesystem does it for a whole batch: a sync of
    /// each file and of each folder cost a flush of the disk's cache each (~500 of them a
    /// batch at 500 uploads a second), competing with the syncs uploads wait for. It also
    /// writes whatever else of that filesystem is dirty; it reports write errors since
    /// Linux 5.8. Elsewhere, each file's data, each folder they are in and the blobs
    /// folder are synced, a blob removed meanwhile skipped.
    pub fn sync_blobs(&self, sha256s: &[String]) -> std::io::Result<()> {
        if sha256s.is_empty() {
            return Ok(());
        }
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let blobs = std::fs::File::open(&self.blobs)?;
            // SAFETY: syncfs only takes the descriptor, which `blobs` keeps open.
            if unsafe { libc::syncfs(blobs.as_raw_fd()) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        }
        #[cfg(not(target_os = "linux"))]
        self.sync_each_blob(sha256s)
    }

    #[cfg(not(target_os = "linux"))]
    fn sync_each_blob(&self, sha256s: &[String]) -> std::io::Result<()> {
        let mut folders = std::collections::BTreeSet::new();
        for sha in sha256s {
            let path = self.blob_path(sha);
            match std::fs::File::open(&path) {
                Ok(f) => f.sync_data()?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
            folders.insert(path.parent().expect("blob has a parent").to_path_buf());
        }
        if folders.is_empty() {
            return Ok(());
        }
        for folder in &folders {
            sync_dir(folder)?;
        }
        sync_dir(&self.blobs)
    }

    /// Put a blob back from a copy of its bytes (after a crash: `files::recover_unsynced`)
    /// unless its file already holds exactly these bytes; returns whether it was written.
    /// Not synced: the caller syncs the blobs it restored together (`sync_blobs`).
    /// Blocking; only for bytes kept on this machine alone.
    pub fn restore(&self, sha256: &str, bytes: &[u8]) -> std::io::Result<bool> {
        let dest = self.blob_path(sha256);
        if holds_exactly(&dest, bytes) {
            return Ok(false);
        }
        let tmp = self.spool().join(format!("restore-{}", random_hex(16)));
        let mut f = new_temp(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        let folder = dest.parent().expect("blob has a parent");
        std::fs::create_dir_all(folder)?;
        std::fs::rename(&tmp, &dest)?;
        Ok(true)
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

    /// Make sure the bytes are in the blob directory (with a shared store: fetch them into
    /// this replica's cache when another replica stored them). `Ok(false)`: no such bytes.
    pub async fn ensure_local(&self, sha256: &str) -> Result<bool, StoreError> {
        let path = self.blob_path(sha256);
        let Some(r) = &self.remote else {
            return Ok(true);
        };
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            // Used now: the cache sweep keeps it another hour.
            let _ = f.set_modified(std::time::SystemTime::now());
            return Ok(true);
        }
        let tmp = self
            .root
            .join("tmp")
            .join(format!("get-{}", random_hex(16)));
        let got = r.get_file(sha256, &tmp).await;
        match got {
            Ok(true) => {
                let to = path.clone();
                let moved = blocking(move || {
                    std::fs::create_dir_all(to.parent().expect("blob has a parent"))?;
                    std::fs::rename(&tmp, &to)
                })
                .await;
                moved?;
                Ok(true)
            }
            other => {
                let _ = tokio::fs::remove_file(&tmp).await;
                other
            }
        }
    }

    /// Keep a job's result (`jobs/`): in the shared store when there is one (any replica
    /// answers for the job), else under `<data>/results`.
    pub async fn put_result(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        if let Some(r) = &self.remote {
            return r.put_bytes(&format!("results/{key}"), bytes).await;
        }
        let (dir, key) = (self.root.join("results"), key.to_string());
        blocking(move || {
            let tmp = dir.join(format!(".{key}.part"));
            std::fs::write(&tmp, &bytes)?;
            std::fs::rename(&tmp, dir.join(&key))
        })
        .await?;
        Ok(())
    }

    /// A job's result, `None` when it is not there.
    pub async fn get_result(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if let Some(r) = &self.remote {
            return r.get_bytes(&format!("results/{key}")).await;
        }
        match tokio::fs::read(self.root.join("results").join(key)).await {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Forget a job's result (never fails: a leftover is logged).
    pub async fn remove_result(&self, key: &str) {
        let gone = match &self.remote {
            Some(r) => r.delete_key(&format!("results/{key}")).await,
            None => match tokio::fs::remove_file(self.root.join("results").join(key)).await {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
                _ => Ok(()),
            },
        };
        if let Err(e) = gone {
            tracing::warn!(error = %e, "could not remove a job's result");
        }
    }

    /// Remove cached copies of shared blobs not used for `max_age` (see the module doc).
    pub fn sweep_cache(&self, max_age: std::time::Duration) -> usize {
        if self.remote.is_none() {
            return 0;
        }
        let mut removed = 0;
        let Ok(dirs) = std::fs::read_dir(&self.blobs) else {
            return 0;
        };
        for d in dirs.flatten() {
            for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
                let old = f
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > max_age);
                if old && std::fs::remove_file(f.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        removed
    }
}

impl Incoming {
    pub async fn write(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.hasher.update(chunk);
        self.size += chunk.len() as u64;
        self.buf.extend_from_slice(chunk);
        if self.buf.len() >= SPILL {
            (self.exists, self.spilled) = (true, true);
            let (file, buf) = self.take();
            let (file, mut buf) = blocking(move || {
                let mut f = file()?;
                f.write_all(&buf)?;
                Ok((f, buf))
            })
            .await?;
            buf.clear();
            (self.file, self.buf) = (Some(file), buf);
        }
        Ok(())
    }

    /// The temp file (created on the first call, inside the blocking call that uses it) and
    /// the bytes waiting for it.
    fn take(&mut self) -> (impl FnOnce() -> std::io::Result<std::fs::File>, Vec<u8>) {
        let (file, path) = (self.file.take(), self.path.clone());
        let open = move || match file {
            Some(f) => Ok(f),
            None => new_temp(&path),
        };
        (open, std::mem::take(&mut self.buf))
    }

    /// The hex sha256 of the bytes received so far.
    pub fn sha256(&self) -> String {
        hex::encode(self.hasher.clone().finalize())
    }

    /// Whether every byte so far is still in memory (the file is small): `finish` then
    /// creates, writes and syncs it in one go.
    pub fn in_memory(&self) -> bool {
        !self.spilled
    }

    /// The temp file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finish: write the rest, sync it to disk, and run `check` on the file (from its
    /// start; given its path, and its bytes when they are all in memory) in the same
    /// blocking call. Returns the temp path, the hex sha256 and what `check` gave.
    ///
    /// With `keep_bytes`, a file whose bytes are all in memory (`in_memory`) is not synced:
    /// its bytes are returned instead, for the caller to commit somewhere durable before it
    /// answers (`files::RowQueue`: with the upload's row). A larger one is synced as always
    /// (and `None` returned).
    pub async fn finish<T: Send + 'static>(
        mut self,
        keep_bytes: bool,
        check: impl FnOnce(&mut std::fs::File, &Path, Option<&[u8]>) -> T + Send + 'static,
    ) -> std::io::Result<Finished<T>> {
        let in_memory = self.in_memory();
        let keep_bytes = keep_bytes && in_memory;
        // A small file (up to 64 KiB) not synced here, whose temp file is made already (a
        // spare), costs a few calls on the page cache (~50 µs: write it, read its head back
        // for the type's check, rename it; when the same bytes are stored already, read
        // that copy, at most 64 KiB, to compare): done on this thread, as handing them to
        // the blocking pool and back took twice that (~110 µs). What waits on the disk (a
        // sync, a file to create, a large file) goes to the blocking pool.
        let inline = keep_bytes && self.file.is_some();
        let (file, buf) = self.take();
        let path = self.path.clone();
        // From here the caller answers for the temp file (it removes it when it gives up).
        self.exists = false;
        let work = move || {
            use std::io::Seek;
            let mut f = file()?;
            f.write_all(&buf)?;
            if !keep_bytes {
                f.sync_data()?;
            }
            f.rewind()?;
            let checked = check(&mut f, &path, in_memory.then_some(&buf[..]));
            Ok((checked, keep_bytes.then_some(buf)))
        };
        let (checked, bytes) = if inline {
            work()?
        } else {
            blocking(work).await?
        };
        Ok(Finished {
            path: std::mem::take(&mut self.path),
            sha256: hex::encode(self.hasher.clone().finalize()),
            checked,
            unsynced: bytes,
        })
    }

    /// Give up: remove the temp file (when one was made).
    pub async fn discard(mut self) {
        if self.exists {
            self.exists = false;
            drop(self.file.take());
            let _ = tokio::fs::remove_file(&self.path).await;
        }
    }
}

impl Drop for Incoming {
    /// A receiving given up without `discard` (its request dropped when the client went
    /// away): the temp file, a spare or a partial one, goes too, off the runtime.
    fn drop(&mut self) {
        if !self.exists {
            return;
        }
        drop(self.file.take());
        let path = std::mem::take(&mut self.path);
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(move || std::fs::remove_file(path));
            }
            Err(_) => {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// A received file, finished (`Incoming::finish`).
pub struct Finished<T> {
    /// The temp file.
    pub path: PathBuf,
    pub sha256: String,
    /// What the caller's check gave.
    pub checked: T,
    /// The bytes, when they were kept rather than synced.
    pub unsynced: Option<Vec<u8>>,
}

/// Where a received file goes under its hash (`Store::placing`).
pub struct Placing {
    dest: PathBuf,
    aside: PathBuf,
}

impl Placing {
    /// Move the temp file into place, or aside when the bytes are stored already (returned:
    /// then it is to be freed, `Store::free_later`). Blocking; the caller holds the bytes'
    /// `refs_lock`.
    ///
    /// With `durable`, the new name is synced too (the blob's folder, and the blobs folder
    /// when the blob's folder is new): a file synced and renamed is not yet sure to be
    /// found under its new name after a power cut. Without it, the caller keeps the bytes
    /// elsewhere until `sync_blobs` has run.
    ///
    /// `small`: the bytes of an upload small enough to be kept in its row
    /// (`files::RowQueue`). A blob of such bytes is placed before its row is committed and
    /// synced after: if the service stopped in between, the blob file may be there with no
    /// row and cut short. So when these bytes are stored already, the file is compared with
    /// them (a read of at most 64 KiB), and one that differs is replaced.
    pub fn place(
        self,
        tmp: &Path,
        durable: bool,
        small: Option<&[u8]>,
    ) -> std::io::Result<Option<PathBuf>> {
        if self.dest.try_exists()? {
            let whole = small.is_none_or(|bytes| holds_exactly(&self.dest, bytes));
            if whole {
                std::fs::rename(tmp, &self.aside)?;
                return Ok(Some(self.aside));
            }
            tracing::warn!(blob = %self.dest.display(), "a stored blob did not hold its bytes (left by an upload that was never committed): replaced");
        }
        let folder = self.dest.parent().expect("blob has a parent");
        let new_folder = !folder.try_exists()?;
        if new_folder {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::rename(tmp, &self.dest)?;
        if durable {
            sync_dir(folder)?;
            if new_folder {
                sync_dir(folder.parent().expect("blob folders have a parent"))?;
            }
        }
        Ok(None)
    }
}

/// Whether the file at `path` holds exactly `bytes` (a small blob's, read whole).
fn holds_exactly(path: &Path, bytes: &[u8]) -> bool {
    std::fs::read(path).is_ok_and(|held| held == bytes)
}

/// Sync a folder (the names in it).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
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
    /// As the client sees it: a blob store that cannot be reached is `unavailable` (503,
    /// `Retry-After`); a local failure is `internal`.
    pub fn into_api(self) -> crate::error::ApiError {
        match self {
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

/// Random hex from the OS generator (file ids, temp names, request ids).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random generator is available");
    hex::encode(buf)
}

/// The client's name reduced to a safe label: last path component, no control
/// characters, at most 255 characters. Used as metadata only.
pub fn clean_name(raw: &str) -> String {
    let base = raw
        .rsplit(['/', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or("");
    // Control characters, and the invisible format characters that make a name display as
    // another (U+202E turns "gpj.exe" around; zero-width and tag characters hide text).
    let cleaned: String = base
        .chars()
        .filter(|c| !c.is_control() && !is_invisible_format(*c))
        .take(255)
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "upload".to_string()
    } else {
        cleaned.to_string()
    }
}

/// Bidi controls, zero-width characters, the BOM and Unicode tag characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061C}'
        | '\u{FEFF}'
        | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_labels_not_paths() {
        assert_eq!(clean_name("../../etc/passwd"), "passwd");
        assert_eq!(clean_name("C:\\Users\\x\\report.pdf"), "report.pdf");
        assert_eq!(clean_name(".."), "upload");
        assert_eq!(clean_name("a\u{0}b.txt"), "ab.txt");
        assert_eq!(clean_name("dir/"), "dir");
        // Bidi overrides and invisible characters are not kept in the display name.
        assert_eq!(clean_name("invoice\u{202E}fdp.exe"), "invoicefdp.exe");
        assert_eq!(clean_name("a\u{200B}b\u{2066}c\u{E0041}.txt"), "abc.txt");
    }
}
