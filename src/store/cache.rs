//! This replica's cache of the shared blob store: `ensure_local` (bytes another replica
//! stored fetched here for a read) and `sweep_cache` (copies unused for `max_age` removed).

use super::{blocking, random_hex, Store, StoreError};

impl Store {
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
    /// Remove cached copies of shared blobs not used for `max_age` (see the `store` module
    /// doc).
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
