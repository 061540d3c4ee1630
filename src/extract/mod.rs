//! Extraction: the `Extractor` trait, dispatch by format, and `run`, the one place where
//! work leaves the async runtime (bounded concurrency, deadline, tracing span).

pub mod docx;
pub mod email;
pub mod encoding;
pub mod excel;
pub mod html;
pub mod image;
pub mod package;
pub mod pdf;
pub mod pptx;
pub mod rtf;
pub mod text;
pub mod xml;
pub mod zipdir;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tracing::Instrument;

use crate::config::Limits;
use crate::envelope::{Envelope, Extraction};
use crate::error::{ApiError, ErrorCode};
use crate::options::ReadRequest;
use crate::sniff::{Family, Format};

/// A stored file, ready to be read.
#[derive(Debug, Clone)]
pub struct Input {
    pub path: PathBuf,
    /// The client's name for it (a hint for the text family; metadata otherwise).
    pub name: String,
    pub format: Format,
    pub size: u64,
    /// When page-based extractors stop and return what they have (`partial` + `next`).
    pub deadline: Option<Instant>,
    /// OCR lines already known for pages of these bytes (the document memory).
    pub known_ocr: std::collections::HashMap<u64, Vec<crate::ocr::OcrLine>>,
    /// Where page-based extractors report how far they are.
    pub progress: ProgressSink,
}

/// How far a long read is: pages done of pages selected, and what the last one took.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    /// `open`, `text` or `ocr`.
    pub stage: String,
}

/// A receiver of progress reports (nothing, by default).
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<dyn Fn(Progress) + Send + Sync>>);

impl ProgressSink {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    pub fn report(&self, done: u64, total: u64, stage: &str) {
        if let Some(f) = &self.0 {
            f(Progress {
                done,
                total,
                stage: stage.to_string(),
            });
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(on)"
        } else {
            "ProgressSink(off)"
        })
    }
}

/// A synchronous extractor for one family of formats.
pub trait Extractor: Send + Sync {
    fn extract(
        &self,
        input: &Input,
        req: &ReadRequest,
        limits: &Limits,
    ) -> Result<Extraction, ApiError>;
}

/// The extractor for a format, or why there is none.
pub fn extractor_for(format: Format) -> Result<&'static dyn Extractor, ApiError> {
    match format.family() {
        Family::Text => Ok(&text::TextExtractor),
        Family::Pdf => Ok(&pdf::PdfExtractor),
        Family::Docx if !matches!(format, Format::Odt) => Ok(&docx::DocxExtractor),
        Family::Pptx if !matches!(format, Format::Odp) => Ok(&pptx::PptxExtractor),
        Family::Excel => Ok(&excel::ExcelExtractor),
        Family::Email => Ok(&email::EmailExtractor),
        Family::Image => Ok(&image::ImageExtractor),
        other => Err(ApiError::new(
            ErrorCode::UnsupportedFormat,
            format!(
                "reading {} files ({}) is not available in this build yet",
                other.as_str(),
                format.mime()
            ),
        )),
    }
}

/// Read synchronously: option fit, extraction, envelope. Used by the CLI and by `run`.
pub fn read_blocking(
    input: &Input,
    file_id: Option<String>,
    req: &ReadRequest,
    limits: &Limits,
) -> Result<Envelope, ApiError> {
    let started = Instant::now();
    req.check_fit(input.format.family())?;
    let ex = extractor_for(input.format)?;
    let out = ex.extract(input, req, limits)?;
    Ok(Envelope {
        status: "ok",
        file_id,
        file: input.name.clone(),
        format: input.format.family(),
        mime: input.format.mime().to_string(),
        char_count: out.char_count,
        truncated: out.truncated,
        text: out.text,
        next: out.next,
        matches: out.matches,
        warnings: out.warnings,
        elapsed_ms: started.elapsed().as_millis() as u64,
        cached: out.cached,
        extra: out.extra,
        attachments: out.attachments,
        fresh_ocr: out.fresh_ocr,
    })
}

/// Run a read off the async runtime, with bounded concurrency and the read's deadline.
pub async fn run(
    slots: &Arc<Semaphore>,
    limits: &Limits,
    mut input: Input,
    file_id: Option<String>,
    req: ReadRequest,
) -> Result<Envelope, ApiError> {
    let deadline = match crate::options::count("deadline_ms", req.deadline_ms, 1)? {
        Some(ms) => ms,
        None => limits.deadline_ms,
    };
    let started = Instant::now();
    let budget = Duration::from_millis(deadline);
    let span = tracing::info_span!(
        "extract",
        format = input.format.family().as_str(),
        size = input.size
    );
    let permit = tokio::time::timeout(budget, slots.clone().acquire_owned())
        .await
        .map_err(|_| timeout_error(deadline))?
        .map_err(ApiError::internal)?;
    // The extractor stops itself at the deadline and returns finished pages; the outer
    // timeout only catches work stuck inside one page.
    input.deadline = Some(started + budget);
    let limits = limits.clone();
    let job = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        read_blocking(&input, file_id, &req, &limits)
    });
    let remaining = budget.saturating_sub(started.elapsed()) + GRACE;
    match tokio::time::timeout(remaining, job).instrument(span).await {
        Err(_) => Err(timeout_error(deadline)),
        Ok(Err(join)) if join.is_panic() => {
            tracing::error!("extractor panicked");
            Err(ApiError::new(
                ErrorCode::ExtractionCrashed,
                "the extractor failed on this file",
            ))
        }
        Ok(Err(join)) => Err(ApiError::internal(join)),
        Ok(Ok(r)) => r.map(|mut env| {
            env.elapsed_ms = started.elapsed().as_millis() as u64;
            env
        }),
    }
}

/// How long past its deadline a read may take to hand back its finished pages: only work
/// stuck inside one page runs into it.
const GRACE: Duration = Duration::from_secs(10);

fn timeout_error(deadline: u64) -> ApiError {
    ApiError::new(
        ErrorCode::Timeout,
        format!("the read did not finish within its deadline of {deadline} ms"),
    )
}
