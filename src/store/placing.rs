//! Putting bytes in place under their hash: `Store::commit`, `Placing` (the rename, and
//! the syncing of the blob's folder when `durable`), `free_later` for a duplicate's copy,
//! `sync_blobs` for blobs placed without syncing, and `restore` of a blob from a row's copy.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::incoming::new_temp;
use super::{blocking, random_hex, Store, StoreError};

impl Store {
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
