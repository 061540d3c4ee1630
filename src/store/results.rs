//! Jobs' results (`jobs/`): kept in the shared blob store when there is one, else under
//! `<data>/results`.

use super::{blocking, Store, StoreError};

impl Store {
    /// Keep a job's result (`jobs/`): in the shared store when there is one (any replica
    /// answers for the job), else under `<data>/results`.
    pub async fn put_result(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        if let Some(r) = &self.remote {
            return r.put_bytes(&format!("results/{key}"), bytes).await;
        }
        let (dir, key) = (self.root.join("results"), key.to_string());
        blocking(move || {
            if !room_for(&dir, bytes.len() as u64) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "the data directory's disk is nearly full",
                ));
            }
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
}

/// Whether `len` more bytes leave the disk of `dir` its reserve: 1 GiB, or a twentieth of
/// it if that is more. Jobs' results are kept a day; many large ones (the attack pass of
/// 2026-12-07 wrote 954 MB in 23 s) must fail their own jobs, never fill the disk the
/// uploads and the database need. True when the disk cannot be asked.
pub(super) fn room_for(dir: &std::path::Path, len: u64) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: `statvfs` writes into the zeroed struct it is given; `path` is a valid C
    // string for the call's length.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return true;
    }
    let unit = st.f_frsize as u64;
    let (free, total) = (st.f_bavail as u64 * unit, st.f_blocks as u64 * unit);
    let reserve = (1u64 << 30).max(total / 20);
    free.saturating_sub(reserve) >= len
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_result_never_takes_the_disks_reserve() {
        let dir = std::env::temp_dir();
        assert!(super::room_for(&dir, 1));
        assert!(!super::room_for(&dir, u64::MAX / 2));
    }
}
