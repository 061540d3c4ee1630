//! Extraction: the `Extractor` trait, dispatch by format, and `read_blocking`, which turns
//! one extraction into an envelope. Synchronous throughout; `read::Executor` is the one
//! place work leaves the async runtime.

pub mod blocks;
pub mod cell;
pub mod chart;
pub mod chunks;
pub mod diagram;
pub mod docx;
pub mod drawing;
pub mod email;
pub mod epub;

pub mod excel;
pub mod html;
pub mod image;
pub mod markdown;
pub mod odf;
pub mod outline;
pub mod package;
pub mod page_image;
pub mod pdf;
pub mod pptx;
pub mod profile;
pub mod rtf;
pub mod slides;
pub mod symbols;
pub mod text;
pub mod xml;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::config::Limits;
pub use crate::deadline::{Deadline, Stop};
use crate::detect::{Family, Format};
use crate::envelope::{Envelope, Extraction};
use crate::error::ApiError;
use crate::options::Options;

/// A stored file, ready to be read.
#[derive(Debug, Clone)]
pub struct Input {
    pub path: PathBuf,
    /// The client's name for it (a hint for the text family; metadata otherwise).
    pub name: String,
    pub format: Format,
    pub size: u64,
    /// When page-based extractors stop and return what they have (`partial` + `next`).
    pub deadline: Deadline,
    /// OCR lines already known for pages of these bytes (the document memory).
    pub known_ocr: std::collections::HashMap<u64, Vec<crate::ocr::OcrLine>>,
    /// Where page-based extractors report how far they are.
    pub progress: ProgressSink,
}

/// How far a long read is: pages done of pages selected, and what the last one took.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    pub stage: Stage,
}

/// What a long read is doing: a closed set.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Opening the document.
    Open,
    /// Reading pages' text.
    Text,
    /// Recognising pages (OCR).
    Ocr,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Open => "open",
            Self::Text => "text",
            Self::Ocr => "ocr",
        })
    }
}

/// A receiver of progress reports (nothing, by default).
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<dyn Fn(Progress) + Send + Sync>>);

impl ProgressSink {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    /// Whether anyone listens (a streamed read, a job).
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    pub fn report(&self, done: u64, total: u64, stage: Stage) {
        if let Some(f) = &self.0 {
            f(Progress { done, total, stage });
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
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError>;
}

/// The extractor for a format (every detected format is read; a document kind that is
/// not is refused at detection, `unsupported_format`).
pub fn extractor_for(format: Format) -> Result<&'static dyn Extractor, ApiError> {
    match format.family() {
        Family::Text => Ok(&text::TextExtractor),
        Family::Html => Ok(&text::HtmlExtractor),
        Family::Pdf => Ok(&pdf::PdfExtractor),
        Family::Docx => Ok(&docx::DocxExtractor),
        Family::Pptx => Ok(&pptx::PptxExtractor),
        Family::Odt => Ok(&odf::OdtExtractor),
        Family::Odp => Ok(&odf::OdpExtractor),
        Family::Rtf => Ok(&rtf::RtfExtractor),
        Family::Epub => Ok(&epub::EpubExtractor),
        Family::Excel => Ok(&excel::ExcelExtractor),
        Family::Email => Ok(&email::EmailExtractor),
        Family::Image => Ok(&image::ImageExtractor),
    }
}

/// Extract synchronously into an envelope (the options were checked by the read plan).
/// The executor calls it, in this process or in a worker.
pub fn read_blocking(
    input: &Input,
    file_id: Option<String>,
    req: &Options,
    limits: &Limits,
) -> Result<Envelope, ApiError> {
    let started = Instant::now();
    let ex = extractor_for(input.format)?;
    let mut out = ex.extract(input, req, limits)?;
    if let Some(next) = out.next.as_mut() {
        carry_on(next, req);
    }
    // A format without units of its own is one: the document's text (without the closing
    // line of a cut text, which only a cut text ends with).
    if out.units.is_empty() {
        let end = if out.truncated {
            crate::envelope::without_truncation_line(&out.text).len()
        } else {
            out.text.len()
        };
        out.units = crate::model::whole(0..end);
    }
    let document = match out.document.take() {
        Some(d) => {
            // Pages, slides and chapters `next` selects again are read again whole.
            let again = |spans: Option<&String>| {
                spans
                    .and_then(|s| crate::options::parse_spans(s).ok())
                    .unwrap_or_default()
            };
            let pages = again(out.next.as_ref().and_then(|n| n.pages.as_ref()));
            let chapters = again(out.next.as_ref().and_then(|n| n.chapters.as_ref()));
            // A larger budget and nothing else: the same selection read again (an image's
            // text); every unit of it comes again.
            let all_again = out.next.as_ref().is_some_and(|n| {
                n.max_chars.is_some()
                    && n.pages.is_none()
                    && n.chapters.is_none()
                    && n.sheet.is_none()
                    && n.offset.is_none()
                    && n.paragraph_offset.is_none()
            });
            let read_again = |u: &crate::model::Unit| {
                if all_again {
                    return true;
                }
                let listed = |spans: &[(u64, u64)]| {
                    u.number
                        .is_some_and(|n| spans.iter().any(|&(a, b)| (a..=b).contains(&n)))
                };
                match u.kind {
                    crate::model::UnitKind::Page | crate::model::UnitKind::Slide => listed(&pages),
                    crate::model::UnitKind::Chapter => listed(&chapters),
                    _ => false,
                }
            };
            Some(d.shown(&out.units, out.truncated, read_again))
        }
        // Every format gives its blocks (a test reads each family): one that did not is a
        // fault here, an empty document in a release build.
        None if req.json() => {
            debug_assert!(false, "{:?} gave no document", input.format);
            Some(crate::model::Document::default())
        }
        None => None,
    };
    // The outline of what a read from the document's start shows: its entries keep the
    // ids the whole document gives them (a read from elsewhere would number its own).
    let outline = document.as_ref().filter(|_| from_start(req)).map(|d| {
        let entries = outline::outline(d);
        let all = outline::heading_count(d);
        if all > entries.len() {
            out.warnings.push(format!(
                "the outline lists the first {} of {all} headings",
                entries.len()
            ));
        }
        entries
    });
    // Chunks are cut from the document the text shows, and replace it.
    let (document, chunks) = match document {
        Some(d) if req.chunks() => {
            let c = chunks::cut(
                &d,
                &out.text,
                &out.units,
                req.chunk_tokens,
                req.keep_furniture(),
            );
            (None, Some(c))
        }
        d => (d, None),
    };
    Ok(Envelope {
        status: crate::envelope::Ok::Ok,
        document,
        chunks,
        outline,
        file_id,
        file: input.name.clone(),
        format: input.format.family(),
        mime: input.format.mime().to_string(),
        char_count: out.char_count,
        truncated: out.truncated,
        security: crate::findings::scan(&out.text, &out.units, std::mem::take(&mut out.findings)),
        units: None,
        text: out.text,
        tokens: None,
        next: out.next,
        matches: out.matches,
        warnings: out.warnings,
        elapsed_ms: started.elapsed().as_millis() as u64,
        cached: out.cached,
        report: out.report,
        attachments: out.attachments,
        fresh_ocr: out.fresh_ocr,
        spans: out.units,
    })
}

/// What a read on (`next`) keeps of the read before it: its output, and what it kept or
/// left out.
pub fn carry_on(next: &mut crate::envelope::Next, req: &Options) {
    if req.output != Some(crate::options::Output::Text) {
        next.output = req.output;
    }
    next.hidden_text = req.hidden_text;
    next.include_annotations = req.include_annotations;
    next.include_headers_footers = req.include_headers_footers;
    next.chunk_tokens = req.request().chunk_tokens.map(|n| n as u64);
    next.furniture = req.furniture;
}

/// Whether a read starts at the document's start: no page, chapter, line, byte, sheet,
/// cell or paragraph range, no query, no section.
fn from_start(req: &Options) -> bool {
    let r = req.request();
    r.pages.is_none()
        && r.chapters.is_none()
        && r.offset.is_none()
        && r.byte_offset.is_none()
        && r.sheet.is_none()
        && r.range.is_none()
        && r.paragraph_offset.is_none()
        && r.query.is_none()
        && r.section.is_none()
}
