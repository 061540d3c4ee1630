//! Where a read's bytes come from: a tenant's upload, an allowed server path (opened once
//! beneath its root and copied from that descriptor), or the CLI's local file; sniffed.

use super::*;

impl ReadService {
    /// The file to read: an upload of the tenant (with its id and sha256), a URL fetched
    /// into a new upload, or a server path.
    pub(super) async fn resolve(
        &self,
        tenant: &str,
        req: &ReadRequest,
    ) -> Result<Resolved, ApiError> {
        if let Some(url) = &req.url {
            if req.file_id.is_some() || req.path.is_some() {
                return Err(ApiError::invalid_request(
                    "give one of file_id, url and path, not several",
                ));
            }
            let Some(st) = &self.storage else {
                return Err(ApiError::new(
                    ErrorCode::UrlNotAllowed,
                    "URLs are read by the service only",
                ));
            };
            let rec = crate::fetch::fetch(&st.files, &self.fetch, tenant, url).await?;
            return self.upload_input(st, tenant, &rec.file_id).await;
        }
        match (&req.file_id, &req.path) {
            (Some(_), Some(_)) => Err(ApiError::invalid_request(
                "give either file_id or path, not both",
            )),
            (None, None) => Err(ApiError::invalid_request("missing file_id")
                .with_hint("Upload the file with POST /upload and pass the file_id it returns.")),
            (Some(id), None) => {
                let Some(st) = &self.storage else {
                    return Err(ApiError::not_found());
                };
                self.upload_input(st, tenant, id).await
            }
            (None, Some(p)) => {
                let (input, held) = self.server_path_input(p).await?;
                Ok(Resolved {
                    input,
                    upload: None,
                    _held: Some(held),
                })
            }
        }
    }

    /// An upload of the tenant, held for this read.
    pub(super) async fn upload_input(
        &self,
        st: &Storage,
        tenant: &str,
        id: &str,
    ) -> Result<Resolved, ApiError> {
        let rec = st.files.get(tenant, id).await?;
        let format = Format::from_mime(&rec.mime, &rec.name)
            .ok_or_else(|| ApiError::internal(format!("unknown stored mime {}", rec.mime)))?;
        // With a shared blob store, bytes another replica stored come into this one's cache.
        if !st.files.store.ensure_local(&rec.sha256).await? {
            return Err(ApiError::not_found());
        }
        // A delete from now on removes the upload's name, not the bytes this read
        // is about to open (in a worker, maybe after waiting for one).
        let held = held::link_blob(
            &st.files.store.blob_path(&rec.sha256),
            &st.files.store.spool(),
        )?;
        let input = new_input(held.path().to_path_buf(), rec.name, format, rec.size as u64);
        Ok(Resolved {
            input,
            upload: Some((rec.file_id, rec.sha256)),
            _held: Some(held),
        })
    }

    /// A server-side path: only under an allowed root (`~` expanded, relative paths taken
    /// from the working folder), opened once beneath it and read from a copy made from
    /// that descriptor (`held::copy_server_path`).
    pub(super) async fn server_path_input(
        &self,
        raw: &str,
    ) -> Result<(Input, held::Held), ApiError> {
        let outside = || {
            ApiError::new(
                ErrorCode::OutsideAllowedRoots,
                "that path is outside the folders this service may read",
            )
        };
        if self.allowed_roots.is_empty() {
            return Err(ApiError::new(ErrorCode::OutsideAllowedRoots, "reading server paths is disabled on this service")
                .with_hint("Upload the file with POST /upload, or ask the operator to set DOCREADER_ALLOWED_ROOTS."));
        }
        if raw.starts_with("\\\\")
            || raw.starts_with("//")
            || raw.contains("://")
            || raw.contains('\0')
        {
            return Err(outside().with_hint(
                "UNC paths and URLs are not read; give a local path under an allowed root.",
            ));
        }
        let mut expanded = expand_home(raw);
        if expanded.is_relative() {
            expanded = std::env::current_dir()
                .map_err(ApiError::internal)?
                .join(expanded);
        }
        let name = expanded
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Opened once beneath its root and copied from that descriptor: nothing swapped
        // in after the check (a symlink, a FIFO) reaches the read.
        let (roots, max) = (self.allowed_roots.clone(), self.limits.max_file_bytes);
        let spool = match &self.storage {
            Some(st) => st.files.store.spool(),
            None => std::env::temp_dir(),
        };
        let (held, size) = tokio::task::spawn_blocking(move || {
            held::copy_server_path(&expanded, &roots, &spool, max)
        })
        .await
        .map_err(ApiError::internal)??;
        let format = sniff_path(held.path().to_path_buf(), name.clone()).await?;
        Ok((
            new_input(held.path().to_path_buf(), name, format, size),
            held,
        ))
    }
}

pub(super) fn new_input(path: PathBuf, name: String, format: Format, size: u64) -> Input {
    Input {
        path,
        name,
        format,
        size,
        deadline: crate::extract::Deadline::none(),
        known_ocr: Default::default(),
        progress: Default::default(),
    }
}

/// A file on disk as an input: named by its path's last part, its format sniffed.
pub(super) async fn file_input(path: PathBuf, size: u64) -> Result<Input, ApiError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let format = sniff_path(path.clone(), name.clone()).await?;
    Ok(new_input(path, name, format, size))
}

/// Decide a file's format from its bytes, off the async runtime.
pub(super) async fn sniff_path(path: PathBuf, name: String) -> Result<Format, ApiError> {
    tokio::task::spawn_blocking(move || {
        let mut f = std::fs::File::open(&path)?;
        Ok::<_, std::io::Error>(sniff::sniff_file(&mut f, &name))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?
    .map_err(|r| r.into_error())
}

pub(super) fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ if p == "~" => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(p)),
        _ => PathBuf::from(p),
    }
}
