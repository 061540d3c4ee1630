//! `ReadService`: the one way a read runs. It resolves what to read (a tenant's upload, an
//! allowed server path, or a local file for the CLI), plans it, runs it on the executor,
//! and does what every caller needs after: remember OCR'd pages, keep attachments as
//! uploads, count and log the read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::{held, Executor, ReadPlan};
use crate::config::Limits;
use crate::detect::{self as sniff, Format};
use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorCode};
use crate::extract::page_image::{PageImage, PageImageRequest};
use crate::extract::{Input, ProgressSink};
use crate::files::Files;
use crate::metrics::Metrics;
use crate::ocr::OcrLine;
use crate::options::ReadRequest;

/// Where uploads live, for reads by `file_id` (absent for the CLI).
#[derive(Clone)]
pub struct Storage {
    pub files: Files,
    /// Whether attachments found in documents are stored as uploads.
    pub store_attachments: bool,
    /// What reads add to the search index.
    pub index_reads: crate::config::IndexReads,
}

/// A page drawn, or known to the client already.
pub enum Drawn {
    Picture { picture: PageImage, etag: String },
    NotModified { etag: String },
}

/// The read service: everything a read needs, shared by every caller.
pub struct ReadService {
    pub executor: Executor,
    pub limits: Limits,
    pub storage: Option<Storage>,
    /// Canonical folders `path` reads may come from; empty: `path` is refused.
    pub allowed_roots: Vec<PathBuf>,
    /// Which URLs `url` reads may fetch (none by default).
    pub fetch: crate::fetch::FetchPolicy,
    pub metrics: Arc<Metrics>,
}

/// What a read resolved to: the input, and for uploads its id and content hash.
struct Resolved {
    input: Input,
    upload: Option<(String, String)>,
    /// The read's own name for its bytes (see `held`), removed when the read ends.
    _held: Option<held::Held>,
}

/// A read that was resolved and planned and may now run: every error a client can get
/// without extracting (unknown file, option that does not fit, bad deadline) is behind it.
pub struct Prepared {
    resolved: Resolved,
    plan: ReadPlan,
    tenant: String,
    /// Indexed for search whatever `index_reads` says (a read on request: `index_whole`).
    index: bool,
}

impl Prepared {
    /// Index what this read returns even where reads are indexed only on demand.
    pub fn index_on_demand(&mut self) {
        self.index = true;
    }

    /// The read's options, to change its budget (a several-file read shares one).
    pub(super) fn request_mut(&mut self) -> &mut ReadRequest {
        &mut self.plan.req
    }

    /// Run as a job: the deadline may reach the jobs' cap rather than the interactive one.
    pub fn for_job(&mut self, job_max_ms: u64, limits: &Limits) {
        self.plan.for_job(job_max_ms, limits);
    }
}

impl ReadService {
    /// A service without storage, for reading local files (the CLI).
    pub fn local(limits: Limits) -> Self {
        Self {
            executor: Executor::in_process(limits.max_concurrent_reads, usize::MAX),
            limits,
            storage: None,
            allowed_roots: Vec::new(),
            fetch: Default::default(),
            metrics: Arc::new(Metrics::default()),
        }
    }

    /// Resolve and plan a read without running it (a stream answers these errors as plain
    /// HTTP errors, before it starts).
    pub async fn prepare(&self, tenant: &str, req: ReadRequest) -> Result<Prepared, ApiError> {
        let resolved = self.resolve(tenant, &req).await?;
        let plan = ReadPlan::new(req, resolved.input.format, &self.limits)?;
        Ok(Prepared {
            resolved,
            plan,
            tenant: tenant.to_string(),
            index: false,
        })
    }

    /// Draw a page of a tenant's upload (`GET /files/{id}/pages/{n}`). Its `ETag` names the
    /// bytes and the drawing asked for, so a client that holds it (`If-None-Match`) is
    /// answered without drawing.
    pub async fn draw(
        &self,
        tenant: &str,
        file_id: &str,
        req: PageImageRequest,
        if_none_match: Option<&str>,
    ) -> Result<Drawn, ApiError> {
        let Some(st) = &self.storage else {
            return Err(ApiError::not_found());
        };
        let resolved = self.upload_input(st, tenant, file_id).await?;
        req.check(resolved.input.format)?;
        let sha = resolved.upload.as_ref().map_or("", |(_, sha)| sha.as_str());
        let size = match (req.width, req.dpi) {
            (Some(w), _) => format!("w{w}"),
            (None, Some(d)) => format!("d{d}"),
            (None, None) => "d".into(),
        };
        // The password is part of the tag (hashed with the bytes' hash): a client that
        // holds the tag of a page drawn with the password gets no 304 without it, or with
        // a wrong one — it gets the drawing's own answer, `encrypted`.
        let key = match &req.password {
            Some(p) => {
                use sha2::Digest;
                let mut h = sha2::Sha256::new();
                h.update(sha.as_bytes());
                h.update([0]);
                h.update(p.as_bytes());
                format!(".p{}", &hex::encode(h.finalize())[..16])
            }
            None => String::new(),
        };
        let etag = format!(
            "\"{}.{}.{size}.{}{key}.{}\"",
            &sha[..sha.len().min(32)],
            req.page,
            req.format.as_str(),
            env!("CARGO_PKG_VERSION")
        );
        // Only the exact tag: `*` would answer 304 for any page, password or not.
        if if_none_match.is_some_and(|v| {
            v.split(',')
                .any(|t| t.trim().trim_start_matches("W/") == etag)
        }) {
            return Ok(Drawn::NotModified { etag });
        }
        let deadline = std::time::Duration::from_millis(self.limits.deadline_ms);
        let picture = self
            .executor
            .draw(tenant, resolved.input, req, deadline, &self.limits)
            .await?;
        Ok(Drawn::Picture { picture, etag })
    }

    /// Read a local file the caller may read (the CLI; never reachable from a client).
    pub async fn read_local(&self, path: &Path, req: ReadRequest) -> Result<Envelope, ApiError> {
        self.read_local_with(path, req, ProgressSink::default())
            .await
    }

    /// `read_local`, reporting progress (the CLI's progress line on a terminal).
    pub async fn read_local_with(
        &self,
        path: &Path,
        req: ReadRequest,
        progress: ProgressSink,
    ) -> Result<Envelope, ApiError> {
        let meta = std::fs::metadata(path).map_err(|e| {
            ApiError::new(ErrorCode::NotFound, format!("{}: {e}", path.display()))
                .with_hint("Check the path (a relative one starts from the current directory).")
        })?;
        if meta.is_dir() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("{}: is a directory", path.display()),
            )
            .with_hint(
                "Name a file; to read every file of a folder, loop over them (for f in DIR/*; do docreader read \"$f\"; done).",
            ));
        }
        // The server's cap on a file (`DOCREADER_MAX_FILE_BYTES`), as for its uploads.
        if meta.len() > self.limits.max_file_bytes {
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                format!(
                    "{}: {} bytes, over the limit of {} bytes",
                    path.display(),
                    meta.len(),
                    self.limits.max_file_bytes
                ),
            )
            .with_hint("Set DOCREADER_MAX_FILE_BYTES higher (for example 1G) to read it."));
        }
        let input = file_input(path.to_path_buf(), meta.len()).await?;
        let plan = ReadPlan::new(req, input.format, &self.limits)?;
        let resolved = Resolved {
            input,
            upload: None,
            _held: None,
        };
        let prepared = Prepared {
            resolved,
            plan,
            tenant: String::new(),
            index: false,
        };
        self.run(prepared, progress).await
    }

    /// Run a prepared read: document memory in and out, the executor, attachments, counts.
    pub async fn run(
        &self,
        prepared: Prepared,
        progress: ProgressSink,
    ) -> Result<Envelope, ApiError> {
        let Prepared {
            resolved:
                Resolved {
                    mut input,
                    upload,
                    _held,
                },
            plan,
            tenant,
            index,
        } = prepared;
        let tenant = tenant.as_str();
        let format = plan.format.family().as_str();
        let size = input.size;
        // Only PDF pages are remembered (images are read whole, once per upload).
        let memory = match (&upload, &self.storage) {
            (Some((_, sha)), Some(st)) if matches!(plan.format, Format::Pdf) => {
                // Naming the variant selects the engine, which may stat model files or load
                // a library the first time: off the async runtime.
                let (ocr, lang) = (plan.req.ocr, plan.req.ocr_lang.clone());
                let known =
                    crate::ocr::known_memory_variant(ocr.map(|o| o.as_str()), lang.as_deref());
                let variant = match known {
                    Some(v) => v,
                    None => tokio::task::spawn_blocking(move || {
                        crate::ocr::memory_variant_for(ocr.map(|o| o.as_str()), lang.as_deref())
                    })
                    .await
                    .map_err(ApiError::internal)?,
                };
                input.known_ocr = remembered(st, tenant, sha, &variant).await;
                Some((sha.clone(), variant))
            }
            _ => None,
        };
        input.progress = progress;
        let started = Instant::now();
        // Counted in flight until this future ends, however it ends: a client that goes
        // away drops it mid-read, and the read is counted as `client_closed`.
        let flight = InFlight::start(&self.metrics, format);
        let file_id = upload.as_ref().map(|(id, _)| id.clone());
        let out = match plan.req.max_tokens {
            Some(t) => {
                self.run_within_tokens(tenant, input, file_id, plan.clone(), t as u64)
                    .await
            }
            None => {
                self.executor
                    .run(tenant, input, file_id, &plan, &self.limits)
                    .await
            }
        };
        flight.end();
        if let (Ok(env), Some((sha, variant)), Some(st)) = (&out, &memory, &self.storage) {
            self.remember(st, tenant, sha, variant, env).await;
        }
        let outcome = out
            .as_ref()
            .map(|_| "ok")
            .unwrap_or_else(|e| e.code.as_str());
        self.metrics
            .read_done(format, outcome, started.elapsed().as_secs_f64());
        match &out {
            Ok(env) => tracing::info!(
                format,
                size,
                chars = env.char_count,
                truncated = env.truncated,
                elapsed_ms = env.elapsed_ms,
                "read"
            ),
            // The cause (library text, paths) goes to the log, never to the client.
            Err(e) => match &e.cause {
                Some(cause) if e.code.status() >= 500 => {
                    tracing::error!(format, size, code = e.code.as_str(), %cause, "read failed")
                }
                Some(cause) => {
                    tracing::warn!(format, size, code = e.code.as_str(), %cause, "read failed")
                }
                None => tracing::info!(format, size, code = e.code.as_str(), "read failed"),
            },
        }
        let mut env = out?;
        if let Some(asked) = plan.deadline_clamped {
            env.warnings.push(format!(
                "deadline_ms {asked} is over this service's max_deadline_ms; the read ran within {} ms",
                plan.deadline.as_millis()
            ));
        }
        if let Some(st) = &self.storage {
            let wanted = match st.index_reads {
                crate::config::IndexReads::All => true,
                crate::config::IndexReads::OnDemand => index,
                crate::config::IndexReads::Off => false,
            };
            if let (Some((id, _)), true) = (&upload, wanted && crate::search::indexable(&plan.req))
            {
                st.files
                    .indexing
                    .index(
                        tenant,
                        id,
                        &env.text,
                        &env.spans,
                        crate::search::Coverage::of(&env),
                    )
                    .await;
            }
            store_attachments(st, &self.limits, tenant, &mut env).await;
        }
        // The units in characters, on request (counting them is a pass over the text).
        if plan.req.include_units == Some(true) {
            env.units = Some(crate::model::char_ranges(&env.text, &env.spans));
        }
        Ok(env)
    }

    /// A read by `max_tokens`: read as many characters as the budget could hold (four a
    /// token), and when the estimate of what came back is over the budget, read again
    /// within the longest prefix that fits (the extractors cut at the same places, so the
    /// second text is a prefix of the first). `next` carries the token budget.
    async fn run_within_tokens(
        &self,
        tenant: &str,
        input: crate::extract::Input,
        file_id: Option<String>,
        mut plan: ReadPlan,
        max_tokens: u64,
    ) -> Result<Envelope, ApiError> {
        use crate::tokens;
        let started = Instant::now();
        let total = plan.deadline;
        let mut chars = tokens::first_pass_chars(max_tokens);
        let mut passes = 0;
        let mut env = loop {
            plan.req.max_tokens = None;
            plan.req.max_chars = Some(chars as i64);
            plan.deadline = total.saturating_sub(started.elapsed());
            let env = self
                .executor
                .run(tenant, input.clone(), file_id.clone(), &plan, &self.limits)
                .await?;
            passes += 1;
            let estimate = tokens::estimate(&env.text);
            if estimate <= max_tokens || passes == 4 {
                break env;
            }
            // The closing line of a cut text counts too; each further pass leaves more room.
            let (body, tail) = match env.text.rfind(crate::envelope::TRUNCATION_LINE) {
                Some(i) => env.text.split_at(i),
                None => (env.text.as_str(), ""),
            };
            let room = max_tokens.saturating_sub(tokens::estimate(tail));
            let fit = tokens::prefix_within(body, room) as u64;
            chars = (fit * (10 - passes) / 10).clamp(1, chars.saturating_sub(1).max(1));
        };
        let estimate = tokens::estimate(&env.text);
        if estimate > max_tokens {
            // Each pass returns less text, so this is not expected; if it happens it is said,
            // not returned over budget silently.
            env.warnings.push(format!(
                "the text is estimated at {estimate} tokens, over max_tokens {max_tokens}"
            ));
        }
        env.tokens = Some(estimate);
        // The extractors speak of the character budget this read used inside.
        static INNER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r"max_chars( \(\d+\))?").expect("a valid pattern")
        });
        for w in env.warnings.iter_mut() {
            *w = INNER
                .replace_all(w, format!("max_tokens ({max_tokens})").as_str())
                .into_owned();
        }
        if let Some(next) = env.next.as_mut() {
            // A block longer than the budget: a token budget that surely holds it.
            next.max_tokens = Some(match next.max_chars.take() {
                Some(c) => c
                    .saturating_mul(tokens::MAX_PER_CHAR)
                    .min(tokens::MAX_BUDGET),
                None => max_tokens,
            });
        }
        Ok(env)
    }

    /// The file to read: an upload of the tenant (with its id and sha256), a URL fetched
    /// into a new upload, or a server path.
    async fn resolve(&self, tenant: &str, req: &ReadRequest) -> Result<Resolved, ApiError> {
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
    async fn upload_input(
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

    /// Keep what this read recognised; count what it reused.
    async fn remember(
        &self,
        st: &Storage,
        tenant: &str,
        sha256: &str,
        variant: &str,
        env: &Envelope,
    ) {
        if let Some(n) = env.report.ocr_pages_from_memory {
            self.metrics.cache_hits.fetch_add(n, Ordering::Relaxed);
        }
        if env.fresh_ocr.is_empty() {
            return;
        }
        // Under the lock a delete holds: written only while an upload of these bytes still
        // exists for the tenant, so a file deleted during its read leaves no memory behind.
        let Ok(lock) = st.files.lock_bytes(sha256).await else {
            tracing::warn!("document memory not written: the database is unavailable");
            return;
        };
        self.remember_locked(st, tenant, sha256, variant, env).await;
        lock.release().await;
    }

    async fn remember_locked(
        &self,
        st: &Storage,
        tenant: &str,
        sha256: &str,
        variant: &str,
        env: &Envelope,
    ) {
        match crate::db::tenant_refs(&st.files.db, tenant, sha256).await {
            Ok(n) if n > 0 => {}
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(error = %e, "document memory not written");
                return;
            }
        }
        let _turn = st.files.write_turn().await;
        if let Some(keys) = &st.files.memory_keys {
            keys.add(sha256);
        }
        for (page, lines) in &env.fresh_ocr {
            let Ok(json) = serde_json::to_string(lines) else {
                continue;
            };
            let put = crate::db::memory_put(
                &st.files.db,
                tenant,
                sha256,
                variant,
                *page as i64,
                &json,
                self.limits.document_memory_bytes as i64,
            );
            if let Err(e) = put.await {
                tracing::warn!(error = %e, "document memory not written");
            }
        }
    }

    /// A server-side path: only under an allowed root (`~` expanded, relative paths taken
    /// from the working folder), opened once beneath it and read from a copy made from
    /// that descriptor (`held::copy_server_path`).
    async fn server_path_input(&self, raw: &str) -> Result<(Input, held::Held), ApiError> {
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

/// A read in flight: counted in `docreader_reads_in_flight` from `start` until dropped; one
/// dropped before `end` (its client went away) is counted as a read with the outcome
/// `client_closed`.
struct InFlight<'a> {
    metrics: &'a Metrics,
    format: &'static str,
    started: Instant,
    ended: bool,
}

impl<'a> InFlight<'a> {
    fn start(metrics: &'a Metrics, format: &'static str) -> Self {
        metrics.in_flight.fetch_add(1, Ordering::Relaxed);
        Self {
            metrics,
            format,
            started: Instant::now(),
            ended: false,
        }
    }

    fn end(mut self) {
        self.ended = true;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        if !self.ended {
            self.metrics.read_done(
                self.format,
                "client_closed",
                self.started.elapsed().as_secs_f64(),
            );
        }
    }
}

fn new_input(path: PathBuf, name: String, format: Format, size: u64) -> Input {
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
async fn file_input(path: PathBuf, size: u64) -> Result<Input, ApiError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let format = sniff_path(path.clone(), name.clone()).await?;
    Ok(new_input(path, name, format, size))
}

/// Decide a file's format from its bytes, off the async runtime.
async fn sniff_path(path: PathBuf, name: String) -> Result<Format, ApiError> {
    tokio::task::spawn_blocking(move || {
        let mut f = std::fs::File::open(&path)?;
        Ok::<_, std::io::Error>(sniff::sniff_file(&mut f, &name))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?
    .map_err(|r| r.into_error())
}

/// OCR lines the document memory holds for a tenant's bytes.
async fn remembered(
    st: &Storage,
    tenant: &str,
    sha256: &str,
    variant: &str,
) -> HashMap<u64, Vec<OcrLine>> {
    if let Some(keys) = &st.files.memory_keys {
        if !keys.may_hold(sha256) {
            return HashMap::new();
        }
    }
    let rows = match crate::db::memory_get(&st.files.db, tenant, sha256, variant).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(error = %e, "document memory unavailable");
            return Default::default();
        }
    };
    rows.into_iter()
        .filter_map(|(page, json)| Some((page as u64, serde_json::from_str(&json).ok()?)))
        .collect()
}

/// Keep attachments found in the document as uploads of the same tenant and list their
/// ids; one that is refused (blocked type, too large) is listed with its error instead.
/// At most `max_attachments_per_read` of them and `max_attachment_bytes_per_read` bytes are
/// stored (a message with thousands of parts must not become thousands of uploads); the
/// rest are listed as not stored, with why. If storing fails inside the service, the ones
/// this read stored are removed again: a read leaves all of its attachments or none.
async fn store_attachments(st: &Storage, limits: &Limits, tenant: &str, env: &mut Envelope) {
    let found = std::mem::take(&mut env.attachments);
    if found.is_empty() {
        return;
    }
    let Some(listed) = env.report.attachments.as_mut() else {
        return;
    };
    let (mut count, mut bytes) = (0usize, 0u64);
    let mut stored: Vec<String> = Vec::new();
    let mut failed: Option<ApiError> = None;
    for (i, att) in found.into_iter().enumerate() {
        let Some(entry) = listed.get_mut(i) else {
            break;
        };
        if !st.store_attachments {
            entry.note = Some("this deployment does not store attachments".into());
            continue;
        }
        let size = att.bytes.len() as u64;
        if count >= limits.max_attachments_per_read
            || bytes.saturating_add(size) > limits.max_attachment_bytes_per_read
        {
            entry.note = Some(format!(
                "not stored: one read stores at most {} attachments and {} bytes",
                limits.max_attachments_per_read, limits.max_attachment_bytes_per_read
            ));
            continue;
        }
        count += 1;
        bytes += size;
        match st.files.store_bytes(tenant, &att.name, &att.bytes).await {
            Ok((rec, created)) => {
                if created {
                    stored.push(rec.file_id.clone());
                }
                entry.file_id = Some(rec.file_id);
                entry.format = Some(rec.format);
            }
            Err(e) if e.code == ErrorCode::Internal => {
                failed = Some(e);
                break;
            }
            Err(e) => {
                entry.error = Some(crate::report::AttachmentError {
                    code: e.code,
                    message: e.message,
                });
            }
        }
    }
    if let Some(e) = failed {
        tracing::error!(
            cause = e.cause.as_deref().unwrap_or(""),
            "attachments not stored"
        );
        for id in &stored {
            let _ = st.files.forget(tenant, id).await;
        }
        for entry in listed.iter_mut() {
            entry.file_id = None;
            entry.format = None;
            entry.note = Some(
                "not stored: the service failed to store this message's attachments; read it again"
                    .into(),
            );
        }
    }
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ if p == "~" => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(p)),
        _ => PathBuf::from(p),
    }
}
