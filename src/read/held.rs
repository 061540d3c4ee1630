//! The bytes a read works on, held by the read itself so nothing can change them under it:
//!
//! - a server path is opened once, beneath its allowed root (`openat2` with
//!   `RESOLVE_BENEATH`, else component by component with `O_NOFOLLOW`), refused unless it is
//!   a regular file (a FIFO, device or socket never blocks a thread), and copied from that
//!   descriptor into the spool: a directory swapped for a symlink, or the file for a FIFO,
//!   after the check cannot reach the read (before: 35 of 300 raced reads returned a file
//!   outside the root);
//! - an upload's blob is hard-linked into the spool, so a delete that lands while the read
//!   waits for a worker removes the name, not the bytes the read is about to open (before:
//!   the worker found no file and the read failed with 500).
//!
//! Either way the read gets a private path, removed when the read ends.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::error::{ApiError, ErrorCode};

/// A private name for a read's bytes, removed when dropped (unless it is the blob itself,
/// on a filesystem without hard links).
#[derive(Debug)]
pub struct Held {
    path: PathBuf,
    owned: bool,
}

impl Held {
    /// A temp file of the store's taken over by a read (a one-shot read's bytes), removed
    /// when the read ends.
    pub fn adopt(file: crate::store::TempFile) -> Self {
        Self {
            path: file.into_path(),
            owned: true,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn spool_name(spool: &Path) -> PathBuf {
    spool.join(format!("read-{}", crate::store::random_hex(12)))
}

/// Hard-link an upload's blob into the spool (same filesystem). `NotFound` when the blob
/// is already gone (deleted before the read began).
pub fn link_blob(blob: &Path, spool: &Path) -> Result<Held, ApiError> {
    let to = spool_name(spool);
    match std::fs::hard_link(blob, &to) {
        Ok(()) => Ok(Held {
            path: to,
            owned: true,
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ApiError::not_found()),
        // A data folder on a filesystem without hard links (some network and FUSE mounts):
        // the read uses the blob's own name, as before, rather than fail.
        Err(e) => {
            tracing::warn!(error = %e, "could not hard-link an upload for its read; reading the blob in place");
            Ok(Held {
                path: blob.to_path_buf(),
                owned: false,
            })
        }
    }
}

/// Open `rel` beneath the directory `root`, never leaving it (symlinks that stay beneath
/// are followed by `openat2`; the fallback follows none), without blocking on a FIFO.
fn open_beneath(root: &Path, rel: &Path) -> io::Result<File> {
    let root_fd = open_dir(root)?;
    match openat2_beneath(&root_fd, rel) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => walk_nofollow(root_fd, rel),
        other => other,
    }
}

fn open_dir(p: &Path) -> io::Result<OwnedFd> {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a valid C string; the result is checked.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor this function just opened and owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn openat2_beneath(root: &OwnedFd, rel: &Path) -> io::Result<File> {
    let c = std::ffi::CString::new(rel.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `open_how` is plain data; zeroed is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: valid descriptor, C string and struct, with its size; the result is checked.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned to us.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}

/// Where `openat2` is missing: each component opened with `O_NOFOLLOW` from the one
/// before (no symlink is followed at all, `..` is refused).
fn walk_nofollow(root: OwnedFd, rel: &Path) -> io::Result<File> {
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => Ok(s),
            _ => Err(io::Error::from_raw_os_error(libc::EXDEV)),
        })
        .collect::<io::Result<_>>()?;
    let mut dir = root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let c = std::ffi::CString::new(part.as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let flags = libc::O_RDONLY
            | libc::O_NOFOLLOW
            | libc::O_CLOEXEC
            | if last {
                libc::O_NONBLOCK | libc::O_NOCTTY
            } else {
                libc::O_DIRECTORY
            };
        // SAFETY: valid descriptor and C string; the result is checked.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), c.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor this function just opened and owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        if last {
            return Ok(File::from(owned));
        }
        dir = owned;
    }
    Err(io::Error::from(io::ErrorKind::NotFound))
}

/// Open a server path under one of `roots` (canonical folders) once, check what it is, and
/// copy it into `spool` from that descriptor. `max_bytes`: the file size limit.
pub fn copy_server_path(
    path: &Path,
    roots: &[PathBuf],
    spool: &Path,
    max_bytes: u64,
) -> Result<(Held, u64), ApiError> {
    let outside = || {
        ApiError::new(
            ErrorCode::OutsideAllowedRoots,
            "that path is outside the folders this service may read",
        )
    };
    let Some((root, rel)) = roots
        .iter()
        .find_map(|r| path.strip_prefix(r).ok().map(|rel| (r, rel)))
    else {
        return Err(outside().with_hint(
            "Give the path under an allowed root as the server sees it (its real location, without symlinks above the root).",
        ));
    };
    if rel.as_os_str().is_empty() {
        return Err(ApiError::invalid_request("that path is not a file"));
    }
    let mut file = open_beneath(root, rel).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => {
            ApiError::new(ErrorCode::NotFound, "no such file under the allowed roots")
        }
        // Escaping the root (`..`, an absolute or outward symlink), or a symlink where
        // none may be followed.
        Some(libc::EXDEV) | Some(libc::ELOOP) | Some(libc::EACCES) | Some(libc::EPERM) => outside(),
        _ => ApiError::internal(e),
    })?;
    let meta = file.metadata().map_err(ApiError::internal)?;
    if !meta.file_type().is_file() {
        return Err(ApiError::invalid_request(
            "that path is not a regular file (a folder, FIFO, device or socket is not read)",
        ));
    }
    if meta.len() > max_bytes {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("the file is over the limit of {max_bytes} bytes"),
        ));
    }
    let to = spool_name(spool);
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&to)
        .map_err(ApiError::internal)?;
    let held = Held {
        path: to,
        owned: true,
    };
    // At most the limit is copied, however the file grows meanwhile.
    let copied = io::copy(&mut io::Read::take(&mut file, max_bytes + 1), &mut out)
        .map_err(ApiError::internal)?;
    if copied > max_bytes {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("the file is over the limit of {max_bytes} bytes"),
        ));
    }
    Ok((held, copied))
}
