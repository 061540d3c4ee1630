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
use crate::options::{Options, ReadRequest};

mod attachments;
mod memory;
mod resolve;
mod section;

pub use section::whole_request;

use attachments::*;
use memory::*;
use resolve::*;

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
    /// A file carried in the request and not kept (a one-shot read): nothing of it is
    /// stored, its attachments included.
    carried: bool,
}

impl Prepared {
    /// Index what this read returns even where reads are indexed only on demand, all of
    /// it (no `DOCREADER_INDEX_MAX_MB`). Its text is moved into the index, not copied: the
    /// envelope comes back with an empty `text` and `char_count` the characters it held.
    pub fn index_on_demand(&mut self) {
        self.index = true;
    }

    /// The read's options, to change its budget (a several-file read shares one).
    pub(super) fn options_mut(&mut self) -> &mut Options {
        &mut self.plan.opts
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
            carried: false,
        })
    }

    /// Plan a read of a file carried in the request and not kept (`Files::carried`: a
    /// one-shot read): read from its temp file, never stored, indexed or remembered, its
    /// attachments listed but not kept. `req` names no file.
    pub fn prepare_carried(
        &self,
        tenant: &str,
        req: ReadRequest,
        file: crate::files::Carried,
    ) -> Result<Prepared, ApiError> {
        let crate::files::Carried {
            held,
            name,
            format,
            size,
        } = file;
        let held = held::Held::adopt(held);
        let input = new_input(held.path().to_path_buf(), name, format, size);
        let plan = ReadPlan::new(req, format, &self.limits)?;
        Ok(Prepared {
            resolved: Resolved {
                input,
                upload: None,
                _held: Some(held),
            },
            plan,
            tenant: tenant.to_string(),
            index: false,
            carried: true,
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
            carried: false,
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
            carried,
        } = prepared;
        let tenant = tenant.as_str();
        let format = plan.format.family().as_str();
        let size = input.size;
        // Only PDF pages are remembered (images are read whole, once per upload).
        let memory = match (&upload, &self.storage) {
            (Some((_, sha)), Some(st)) if matches!(plan.format, Format::Pdf) => {
                // Naming the variant selects the engine, which may stat model files or load
                // a library the first time: off the async runtime.
                let (ocr, lang) = (plan.opts.ocr, plan.opts.ocr_lang.clone());
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
                // Lines read for Markdown or json carry their page layout's roles and are
                // kept apart (`ocr::page_layout::LAYOUT_VARIANT`); a plain read takes
                // either. Without the model a structured read's lines have no roles: they
                // are plain lines.
                let structured = plan.opts.structured() && crate::ocr::page_layout::installed();
                let laid = format!("{variant}{}", crate::ocr::page_layout::LAYOUT_VARIANT);
                input.known_ocr = remembered(st, tenant, sha, &laid).await;
                if !structured {
                    for (page, lines) in remembered(st, tenant, sha, &variant).await {
                        input.known_ocr.entry(page).or_insert(lines);
                    }
                }
                Some((sha.clone(), if structured { laid } else { variant }))
            }
            _ => None,
        };
        input.progress = progress;
        let started = Instant::now();
        // Counted in flight until this future ends, however it ends: a client that goes
        // away drops it mid-read, and the read is counted as `client_closed`.
        let flight = InFlight::start(&self.metrics, format);
        let file_id = upload.as_ref().map(|(id, _)| id.clone());
        let section = plan.opts.section.clone();
        let out = match plan.opts.max_tokens {
            _ if section.is_some() => {
                let asked = section.as_deref().unwrap_or_default();
                self.run_section(tenant, input, file_id, &plan, asked).await
            }
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
            if let (Some((id, _)), true) = (
                &upload,
                wanted && crate::search::indexable(plan.opts.request()),
            ) {
                let coverage = crate::search::Coverage::of(&env);
                let text = match index {
                    // A read on request (`index_whole`) is for the index alone: its text
                    // (up to 50 million characters) moves there rather than being copied.
                    true => {
                        let text = std::mem::take(&mut env.text);
                        env.char_count = text.chars().count() as u64;
                        std::borrow::Cow::Owned(text)
                    }
                    false => std::borrow::Cow::Borrowed(env.text.as_str()),
                };
                st.files
                    .indexing
                    .index(tenant, id, text, &env.spans, coverage, index)
                    .await;
            }
            if carried {
                attachments_not_kept(&self.limits, &mut env).await;
            } else {
                store_attachments(st, &self.limits, tenant, &mut env).await;
            }
        }
        // The units in characters, on request (counting them is a pass over the text).
        if plan.opts.include_units == Some(true) {
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
            plan.opts.set_max_chars(chars as usize);
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
