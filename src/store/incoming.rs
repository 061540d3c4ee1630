//! An upload being received: `Incoming` (its bytes gathered in memory, hashed, written to
//! its temp file a piece at a time), `Finished`, and `Spares`, the empty temp files under
//! `<data>/tmp/in` made ahead of need.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{blocking, random_hex, Store};

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
pub(super) struct Spares {
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
pub(super) fn new_temp(path: &Path) -> std::io::Result<std::fs::File> {
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

/// Bytes kept in memory before they are written out.
const SPILL: usize = 256 * 1024;

/// A transient file up to this size is written on the runtime's thread (see `finish`).
const INLINE_BYTES: u64 = 64 * 1024;

impl Store {
    /// Make spare temp files up to the pool's size, off the runtime: called once an
    /// upload's file is in place (see `Spares`).
    pub fn top_up_spares(&self) {
        self.spares.refill(&self.incoming_dir());
    }

    /// The folder of uploads' temp files (see `Spares`).
    fn incoming_dir(&self) -> PathBuf {
        self.root.join("tmp").join(INCOMING)
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

    /// Finish a file that is read once and not kept (a one-shot read): write the rest to
    /// its temp file without syncing it (it is removed when the read ends, and a crash
    /// loses nothing anyone was promised) and run `check` on it from its start. A small
    /// file whose temp file is made already costs a few calls on the page cache and is
    /// done on this thread (as in `finish`); the rest goes to the blocking pool. The temp
    /// file is the returned `TempFile`'s from here: removed when it is dropped, a failure here
    /// and a caller that goes away while this waits included.
    pub async fn finish_transient<T: Send + 'static>(
        mut self,
        check: impl FnOnce(&mut std::fs::File) -> T + Send + 'static,
    ) -> std::io::Result<(TempFile, T)> {
        let inline = self.in_memory() && self.file.is_some() && self.size <= INLINE_BYTES;
        let (file, buf) = self.take();
        let held = TempFile(std::mem::take(&mut self.path));
        self.exists = false;
        let work = move || {
            use std::io::Seek;
            let mut f = file()?;
            f.write_all(&buf)?;
            f.rewind()?;
            Ok(check(&mut f))
        };
        let checked = if inline {
            work()?
        } else {
            blocking(work).await?
        };
        Ok((held, checked))
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

/// A temp file a caller holds for a while (a one-shot read's bytes, `finish_transient`):
/// removed when dropped, unless taken over (`into_path`).
#[derive(Debug)]
pub struct TempFile(PathBuf);

impl TempFile {
    /// The path, no longer removed by this value: the caller removes it.
    pub fn into_path(mut self) -> PathBuf {
        std::mem::take(&mut self.0)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.0.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}
