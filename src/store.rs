//! The scoped upload directory: bytes stream into a temp file under `<data>/tmp`, are
//! checked, then renamed atomically to `<data>/blobs/<sha256[..2]>/<sha256>`. Names the
//! client sends never touch a path.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use std::io::Write;
use tokio::sync::Mutex;

/// The blob directory and the lock that keeps "is this blob still referenced?" and
/// "store this blob" from interleaving.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    /// Held while a blob gains or loses a reference, and while the search index is
    /// written (so the database's writers take turns here, not in SQLite's busy handler).
    pub refs_lock: Mutex<()>,
}

/// A file being received: its bytes gather in memory and go to its temp file a quarter
/// of a megabyte at a time, each piece in one blocking call, so a small upload touches the
/// disk once, in `finish` (create, write, sync and the caller's check, together).
pub struct Incoming {
    path: PathBuf,
    /// Created when the first piece is written.
    file: Option<std::fs::File>,
    /// Whether a piece was (or was being) written: the temp file may exist.
    on_disk: bool,
    buf: Vec<u8>,
    hasher: Sha256,
    pub size: u64,
}

/// Bytes kept in memory before they are written out.
const SPILL: usize = 256 * 1024;

impl Store {
    pub fn open(data_dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(data_dir.join("blobs"))?;
        let tmp = data_dir.join("tmp");
        // Leftovers of an interrupted upload are garbage.
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        // Copies of bytes already stored, waiting to be freed (see `commit`).
        let discard = data_dir.join("discard");
        let _ = std::fs::remove_dir_all(&discard);
        std::fs::create_dir_all(&discard)?;
        Ok(Self {
            root: data_dir.to_path_buf(),
            refs_lock: Mutex::new(()),
        })
    }

    /// Where reads keep their own names for the bytes they read (`read::held`), on the
    /// blobs' filesystem.
    pub fn spool(&self) -> PathBuf {
        self.root.join("tmp")
    }

    pub fn blob_path(&self, sha256: &str) -> PathBuf {
        debug_assert!(sha256.len() == 64 && sha256.bytes().all(|b| b.is_ascii_hexdigit()));
        self.root.join("blobs").join(&sha256[..2]).join(sha256)
    }

    /// Start receiving a file (its temp file is created when its first bytes are written).
    pub async fn incoming(&self) -> std::io::Result<Incoming> {
        let path = self.root.join("tmp").join(format!("up-{}", random_hex(16)));
        Ok(Incoming {
            path,
            file: None,
            on_disk: false,
            buf: Vec::new(),
            hasher: Sha256::new(),
            size: 0,
        })
    }

    /// Move a received file into place under its hash (or drop it when the bytes are
    /// already stored). The caller holds `refs_lock`.
    ///
    /// Both ways cost the same before the answer: one rename. Freeing the copy of bytes
    /// already stored (unlinking 60 MB takes milliseconds) happens after, in the
    /// background, so an upload's latency does not tell whether anyone, another tenant
    /// included, already holds these bytes.
    pub async fn commit(&self, tmp: &Path, sha256: &str) -> std::io::Result<PathBuf> {
        let dest = self.blob_path(sha256);
        let name = tmp.file_name().expect("temp files have names");
        let gone = self.root.join("discard").join(name);
        let (tmp, to, aside) = (tmp.to_path_buf(), dest.clone(), gone.clone());
        // The look and the rename in one blocking call.
        let duplicate = blocking(move || {
            if to.try_exists()? {
                std::fs::rename(&tmp, &aside)?;
                Ok(true)
            } else {
                std::fs::create_dir_all(to.parent().expect("blob has a parent"))?;
                std::fs::rename(&tmp, &to)?;
                Ok(false)
            }
        })
        .await?;
        if duplicate {
            tokio::spawn(async move {
                if let Err(e) = tokio::fs::remove_file(&gone).await {
                    tracing::warn!(error = %e, "could not free a duplicate upload's copy");
                }
            });
        }
        Ok(dest)
    }

    /// Remove a blob's bytes. The caller holds `refs_lock` and has checked no row refers to it.
    pub async fn remove(&self, sha256: &str) -> std::io::Result<()> {
        match tokio::fs::remove_file(self.blob_path(sha256)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl Incoming {
    pub async fn write(&mut self, chunk: &[u8]) -> std::io::Result<()> {
        self.hasher.update(chunk);
        self.size += chunk.len() as u64;
        self.buf.extend_from_slice(chunk);
        if self.buf.len() >= SPILL {
            self.on_disk = true;
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
            None => std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path),
        };
        (open, std::mem::take(&mut self.buf))
    }

    /// Finish: write the rest, sync it to disk, and run `check` on the file (from its
    /// start) in the same blocking call. Returns the temp path, the hex sha256 and what
    /// `check` gave.
    pub async fn finish<T: Send + 'static>(
        mut self,
        check: impl FnOnce(&mut std::fs::File) -> T + Send + 'static,
    ) -> std::io::Result<(PathBuf, String, T)> {
        let (file, buf) = self.take();
        let checked = blocking(move || {
            use std::io::Seek;
            let mut f = file()?;
            f.write_all(&buf)?;
            f.sync_data()?;
            f.rewind()?;
            Ok(check(&mut f))
        })
        .await?;
        Ok((self.path, hex::encode(self.hasher.finalize()), checked))
    }

    /// Give up: remove the temp file (when one was made).
    pub async fn discard(self) {
        if self.on_disk {
            drop(self.file);
            let _ = tokio::fs::remove_file(&self.path).await;
        }
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
