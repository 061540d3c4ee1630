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
