//! The shared blob store: any S3-compatible bucket, through `object_store`
//! (`DOCREADER_BLOB_STORE=s3://bucket/prefix`; endpoint, region and credentials from the
//! usual `AWS_*` variables: `AWS_ENDPOINT_URL`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`).
//!
//! Bytes go up from the upload's temp file (a multipart upload in 8 MiB parts when bigger
//! than one part: never the whole file in memory) and come down into a temp file in
//! pieces. Keys are content addresses, so two replicas storing the same bytes write the
//! same object; whether an object may be removed is decided under the bytes' lock in the
//! database (`db::BytesLock`), never here.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as Key;
use object_store::{ClientOptions, ObjectStore, PutPayload, RetryConfig, WriteMultipart};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One part of a multipart upload (S3's minimum is 5 MiB).
const PART: usize = 8 * 1024 * 1024;

#[derive(Clone)]
pub struct Remote {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// The bucket as configured, for messages.
    shown: String,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Remote({})", self.shown)
    }
}

impl Remote {
    /// Connect to `s3://bucket/prefix` and check the bucket answers. The error is one line
    /// naming the bucket.
    pub async fn connect(url: &str) -> Result<Self, String> {
        let parsed = url::Url::parse(url)
            .map_err(|e| format!("DOCREADER_BLOB_STORE {url}: not a URL ({e})"))?;
        if parsed.scheme() != "s3" || parsed.host_str().unwrap_or("").is_empty() {
            return Err(format!(
                "DOCREADER_BLOB_STORE must be s3://bucket[/prefix], got {url}"
            ));
        }
        let bucket = parsed.host_str().unwrap_or_default().to_string();
        let prefix = parsed.path().trim_matches('/').to_string();
        let endpoint = std::env::var("AWS_ENDPOINT_URL")
            .or_else(|_| std::env::var("AWS_ENDPOINT"))
            .unwrap_or_default();
        let allow_http = endpoint.starts_with("http://")
            || std::env::var("AWS_ALLOW_HTTP").is_ok_and(|v| v == "true");
        let client = ClientOptions::new()
            .with_allow_http(allow_http)
            .with_connect_timeout(Duration::from_secs(5))
            .with_timeout(Duration::from_secs(300));
        // A bucket that went away fails requests in seconds (503 to the client), not after
        // object_store's default three minutes of retries.
        let retry = RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(15),
            ..Default::default()
        };
        // Credentials from the environment, a web identity or a container's role; without
        // any of them object_store would ask the EC2 instance metadata service, which off
        // AWS (a MinIO or SeaweedFS endpoint, a laptop) answers with a confusing 403 or not
        // at all: said plainly instead. On AWS itself (no endpoint set) an instance role is
        // a real source, so the bucket is asked and a failure names the credentials.
        let env_credentials = [
            "AWS_ACCESS_KEY_ID",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        ]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        const NO_CREDENTIALS: &str = "no S3 credentials: set AWS_ACCESS_KEY_ID and \
            AWS_SECRET_ACCESS_KEY (or AWS_WEB_IDENTITY_TOKEN_FILE, or run where a container or \
            instance role provides them)";
        if !env_credentials && !endpoint.is_empty() {
            return Err(format!(
                "the blob store {url} at {endpoint}: {NO_CREDENTIALS}"
            ));
        }
        let mut b = AmazonS3Builder::from_env()
            .with_bucket_name(&bucket)
            .with_client_options(client)
            .with_retry(retry);
        if std::env::var_os("AWS_REGION").is_none()
            && std::env::var_os("AWS_DEFAULT_REGION").is_none()
        {
            b = b.with_region("us-east-1");
        }
        let store = b.build().map_err(|e| format!("blob store {url}: {e}"))?;
        let remote = Self {
            store: Arc::new(store),
            prefix,
            shown: url.to_string(),
        };
        match remote.ping().await {
            Ok(()) => Ok(remote),
            Err(object_store::Error::NotFound { .. }) => {
                Err(format!("the blob store {url}: no such bucket ({bucket})"))
            }
            Err(e) if !env_credentials => Err(format!(
                "the blob store {url}: {NO_CREDENTIALS}; the instance's role was asked and \
                 answered: {}",
                one_line(&e)
            )),
            Err(e) => Err(format!(
                "cannot reach the blob store {url}: {}",
                one_line(&e)
            )),
        }
    }

    pub fn shown(&self) -> &str {
        &self.shown
    }

    fn key(&self, sha256: &str) -> Key {
        self.key_of(&format!("blobs/{}/{sha256}", &sha256[..2]))
    }

    /// One round trip (readiness): a listing of the prefix, which answers (maybe empty)
    /// when the bucket exists and the credentials are accepted, and "not found" only when
    /// the bucket does not exist.
    pub async fn ping(&self) -> Result<(), object_store::Error> {
        let under = Key::from(format!("{}/blobs/00", self.prefix).trim_start_matches('/'));
        self.store.list_with_delimiter(Some(&under)).await.map(drop)
    }

    /// Store the file's bytes under their hash, unless the bucket has them already.
    pub async fn put_file(&self, sha256: &str, file: &Path) -> Result<(), super::StoreError> {
        let key = self.key(sha256);
        match self.store.head(&key).await {
            Ok(_) => return Ok(()),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        let mut f = tokio::fs::File::open(file).await?;
        let size = f.metadata().await?.len();
        if size <= PART as u64 {
            let mut buf = Vec::with_capacity(size as usize);
            f.read_to_end(&mut buf).await?;
            self.store.put(&key, PutPayload::from(buf)).await?;
            return Ok(());
        }
        let upload = self.store.put_multipart(&key).await?;
        let mut w = WriteMultipart::new_with_chunk_size(upload, PART);
        let mut buf = vec![0u8; 1024 * 1024];
        let sent = async {
            loop {
                let n = f.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                // At most two parts in flight: memory stays bounded whatever the size.
                w.wait_for_capacity(2).await?;
                w.write(&buf[..n]);
            }
            Ok::<_, super::StoreError>(())
        }
        .await;
        match sent {
            Ok(()) => {
                w.finish().await?;
                Ok(())
            }
            Err(e) => {
                let _ = w.abort().await;
                Err(e)
            }
        }
    }

    /// Fetch the bytes into `to` (a new file). `Ok(false)`: the bucket does not have them.
    pub async fn get_file(&self, sha256: &str, to: &Path) -> Result<bool, super::StoreError> {
        let got = match self.store.get(&self.key(sha256)).await {
            Ok(g) => g,
            Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let mut out = tokio::fs::File::create_new(to).await?;
        let mut stream = got.into_stream();
        while let Some(chunk) = stream.next().await {
            out.write_all(&chunk?).await?;
        }
        out.sync_data().await?;
        Ok(true)
    }

    fn key_of(&self, rel: &str) -> Key {
        if self.prefix.is_empty() {
            Key::from(rel)
        } else {
            Key::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// Keep some bytes (a job's result) under `rel` (below the prefix).
    pub async fn put_bytes(&self, rel: &str, bytes: Vec<u8>) -> Result<(), super::StoreError> {
        self.store
            .put(&self.key_of(rel), PutPayload::from(bytes))
            .await?;
        Ok(())
    }

    pub async fn get_bytes(&self, rel: &str) -> Result<Option<Vec<u8>>, super::StoreError> {
        match self.store.get(&self.key_of(rel)).await {
            Ok(g) => Ok(Some(g.bytes().await?.to_vec())),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn delete_key(&self, rel: &str) -> Result<(), super::StoreError> {
        match self.store.delete(&self.key_of(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Remove the bytes (gone already is fine).
    pub async fn delete(&self, sha256: &str) -> Result<(), super::StoreError> {
        match self.store.delete(&self.key(sha256)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// An object_store error on one line (they nest causes over several).
fn one_line(e: &object_store::Error) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
