//! PDF through PDFium: native text per page (`--- Page N ---`), page ranges, queries,
//! passwords, metadata, and an honest verdict per page on whether it needs OCR
//! (no text layer, sparse text, or a garbled layer that forms no words).

use std::sync::OnceLock;
use std::time::Instant;

use image::RgbImage;
use pdfium_render::prelude::*;

use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{close_truncated, take_blocks, Extraction, Next, Taken};
use crate::error::{ApiError, ErrorCode};
use crate::ocr::{self, OcrChoice};
use crate::options::{self, format_pages, grep, ReadRequest};
use crate::report::{Boxes, OcrQuality, PageBoxes, PageSize, Report};

pub struct PdfExtractor;

/// PDFium, bound once per process (its bindings are process-global).
fn pdfium() -> Result<&'static Pdfium, ApiError> {
    static PDFIUM: OnceLock<Result<Pdfium, String>> = OnceLock::new();
    PDFIUM
        .get_or_init(|| {
            let path = crate::native::find("libpdfium.so", Some("DOCREADER_PDFIUM_LIB"))?;
            let bindings =
                Pdfium::bind_to_library(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Pdfium::new(bindings))
        })
        .as_ref()
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Unavailable,
                format!("the PDF engine (PDFium) is not available: {e}"),
            )
            .with_hint(crate::native::INSTALL_HINT)
        })
}

/// A page (1-based) rendered to PNG at `dpi`, through the process's one PDFium binding.
pub fn render_page_png(path: &std::path::Path, page: u64, dpi: f32) -> Result<Vec<u8>, ApiError> {
    let pdfium = pdfium()?;
    let doc = pdfium
        .load_pdf_from_file(path, None)
        .map_err(|e| ApiError::new(ErrorCode::Corrupt, format!("the PDF cannot be opened: {e}")))?;
    let p = doc.pages().get((page.max(1) - 1) as i32).map_err(|_| {
        ApiError::out_of_range(format!(
            "page {page} but the document has {} pages",
            doc.pages().len()
        ))
    })?;
    let w = (p.width().value / 72.0 * dpi).round() as i32;
    let img = p
        .render_with_config(&PdfRenderConfig::new().set_target_width(w))
        .and_then(|b| b.as_image())
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Corrupt,
                format!("the page cannot be rendered: {e}"),
            )
        })?;
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(ApiError::internal)?;
    Ok(out.into_inner())
}

/// Whether PDFium can be loaded (for `/readyz` details and tests).
pub fn available() -> bool {
    pdfium().is_ok()
}

/// Why a page needs OCR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcrReason {
    NoTextLayer,
    SparseText,
    GarbledText,
    /// `ocr: "force"`.
    Forced,
}

impl OcrReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoTextLayer => "no_text_layer",
            Self::SparseText => "sparse_text",
            Self::GarbledText => "garbled_text",
            Self::Forced => "forced",
        }
    }
}

/// Judge a page's native text. `has_images`: a page with neither text nor images is blank,
/// and OCR could find nothing on it.
/// `has_images` is asked only for sparse pages (walking page objects costs time).
pub fn assess(
    text: &str,
    min_chars: usize,
    has_images: impl FnOnce() -> bool,
) -> Option<OcrReason> {
    let visible: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let n = visible.len();
    if n == 0 {
        return has_images().then_some(OcrReason::NoTextLayer);
    }
    if is_garbled(&visible) {
        return Some(OcrReason::GarbledText);
    }
    (n < min_chars && has_images()).then_some(OcrReason::SparseText)
}

/// A text layer that is mostly unmappable: private-use code points, U+FFFD, control
/// characters, or Latin "glyph soup" (shifted glyph codes) with no vowels to make words.
fn is_garbled(visible: &[char]) -> bool {
    let n = visible.len();
    let bad = visible
        .iter()
        .filter(|&&c| {
            matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{10FFFF}' | '\u{FFFD}')
                || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        })
        .count();
    if bad * 10 >= n * 3 {
        return true;
    }
    let letters: Vec<char> = visible
        .iter()
        .copied()
        .filter(|c| c.is_ascii_alphabetic())
        .collect();
    if letters.len() >= 40 && letters.len() * 2 >= n {
        let vowels = letters
            .iter()
            .filter(|c| "aeiouyAEIOUY".contains(**c))
            .count();
        if vowels * 100 < letters.len() * 12 {
            return true;
        }
    }
    let symbols = visible.iter().filter(|c| c.is_ascii_punctuation()).count();
    n >= 40 && symbols * 100 > n * 55
}

/// What OCR made of a page.
struct PageOcr {
    lines: Vec<ocr::OcrLine>,
    confidence: Option<f32>,
}

/// One page's native text and verdict.
struct Page {
    number: u64,
    /// OCR's result, when the page was OCR'd (then `text` is OCR's text).
    ocr: Option<PageOcr>,
    text: String,
    need: Option<OcrReason>,
}

impl Page {
    fn set_ocr(&mut self, lines: Vec<ocr::OcrLine>) {
        self.text = ocr::lines_to_text(&lines);
        self.ocr = Some(PageOcr {
            confidence: ocr::mean_confidence(&lines),
            lines,
        });
    }
}

fn open<'a>(
    pdfium: &'a Pdfium,
    input: &Input,
    password: Option<&str>,
) -> Result<PdfDocument<'a>, ApiError> {
    let first = pdfium.load_pdf_from_file(&input.path, password);
    let result = match (first, password) {
        // AES-256 (R6) passwords are SASLprep'd; PDFium wants the prepared form.
        (
            Err(PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError)),
            Some(pw),
        ) if saslprep(pw) != pw => pdfium.load_pdf_from_file(&input.path, Some(&saslprep(pw))),
        (r, _) => r,
    };
    result.map_err(|e| match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::PasswordError) => {
            match password {
                None => ApiError::new(ErrorCode::Encrypted, "the PDF is password-protected")
                    .with_hint("Send the document's password in the `password` option."),
                Some(_) => ApiError::new(
                    ErrorCode::Encrypted,
                    "the password is wrong for this PDF",
                )
                .with_hint(
                    "Check the password (it is case-sensitive) and send it again in `password`.",
                ),
            }
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::SecurityError) => {
            ApiError::new(
                ErrorCode::Encrypted,
                "the PDF uses a security handler that cannot be opened",
            )
            .with_hint("Save an unprotected copy of the PDF and upload that.")
        }
        PdfiumError::IoError(e) => ApiError::internal(e),
        other => ApiError::new(
            ErrorCode::Corrupt,
            format!("the PDF cannot be opened: {}", describe(&other)),
        ),
    })
}

fn describe(e: &PdfiumError) -> &'static str {
    match e {
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FormatError) => {
            "it is damaged or not a PDF"
        }
        PdfiumError::PdfiumLibraryInternalError(PdfiumInternalError::FileError) => {
            "its file structure is unreadable"
        }
        _ => "PDFium rejected it",
    }
}

/// The parts of SASLprep (RFC 4013) that matter for passwords: NFKC, soft hyphens and
/// other "mapped to nothing" characters dropped, non-ASCII spaces made spaces.
fn saslprep(pw: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    pw.chars()
        .filter(|c| !matches!(*c, '\u{00AD}' | '\u{034F}' | '\u{1806}' | '\u{180B}'..='\u{180D}' | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'))
        .map(|c| if c != ' ' && c.is_whitespace() { ' ' } else { c })
        .collect::<String>()
        .nfkc()
        .collect()
}

fn metadata(doc: &PdfDocument<'_>) -> crate::report::PdfMetadata {
    let mut m = crate::report::PdfMetadata::default();
    let meta = doc.metadata();
    for (key, tag) in [
        ("title", PdfDocumentMetadataTagType::Title),
        ("author", PdfDocumentMetadataTagType::Author),
        ("subject", PdfDocumentMetadataTagType::Subject),
        ("creator", PdfDocumentMetadataTagType::Creator),
        ("producer", PdfDocumentMetadataTagType::Producer),
        ("created", PdfDocumentMetadataTagType::CreationDate),
        ("modified", PdfDocumentMetadataTagType::ModificationDate),
    ] {
        if let Some(v) = meta.get(tag) {
            let v = v.value().trim();
            if !v.is_empty() {
                let v = if matches!(key, "created" | "modified") {
                    pdf_date(v)
                } else {
                    v.to_string()
                };
                let slot = match key {
                    "title" => &mut m.title,
                    "author" => &mut m.author,
                    "subject" => &mut m.subject,
                    "creator" => &mut m.creator,
                    "producer" => &mut m.producer,
                    "created" => &mut m.created,
                    _ => &mut m.modified,
                };
                *slot = Some(v);
            }
        }
    }
    if let Ok(first) = doc.pages().get(0) {
        m.page_size = Some(PageSize {
            width_pt: round2(first.width().value).into(),
            height_pt: round2(first.height().value).into(),
        });
    }
    m
}

fn round2(v: f32) -> f64 {
    (v as f64 * 100.0).round() / 100.0
}

/// `D:20230102030405+01'00'` → `2023-01-02T03:04:05+01:00` (as much as the value has).
fn pdf_date(v: &str) -> String {
    let s = v.strip_prefix("D:").unwrap_or(v);
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.len() < 4 {
        return v.to_string();
    }
    let part = |a: usize, b: usize, d: &str| digits.get(a..b).unwrap_or(d).to_string();
    let mut out = format!(
        "{}-{}-{}T{}:{}:{}",
        part(0, 4, "0000"),
        part(4, 6, "01"),
        part(6, 8, "01"),
        part(8, 10, "00"),
        part(10, 12, "00"),
        part(12, 14, "00")
    );
    let rest = &s[digits.len()..];
    match rest.chars().next() {
        Some('Z') => out.push('Z'),
        Some(sign @ ('+' | '-')) => {
            let tz: String = rest[1..].chars().filter(|c| c.is_ascii_digit()).collect();
            if tz.len() >= 2 {
                out.push_str(&format!(
                    "{sign}{}:{}",
                    &tz[..2],
                    tz.get(2..4).unwrap_or("00")
                ));
            }
        }
        _ => {}
    }
    out
}

fn page_text(page: &PdfPage<'_>) -> Result<String, ApiError> {
    let layer = page.text().map_err(|e| {
        ApiError::new(
            ErrorCode::Corrupt,
            format!("a page's text cannot be read: {e}"),
        )
    })?;
    // `all()` keeps only text inside the page-size rectangle anchored at the origin, which
    // drops whole pages whose MediaBox starts elsewhere; ask for everything instead.
    let everywhere = PdfRect::new_from_values(-1.0e7, -1.0e7, 1.0e7, 1.0e7);
    let mut text = layer.inside_rect(everywhere);
    if text.is_empty() && layer.len() > 0 {
        // pdfium-render turns the whole page into "" when PDFium's UTF-16 holds one lone
        // surrogate; rebuild it character by character instead.
        text = char_by_char(&layer);
    }
    if text.chars().any(is_rtl) {
        text = logical_order(&layer);
    }
    // PDFium separates lines with CRLF; NULs can appear from broken fonts.
    Ok(text.replace("\r\n", "\n").replace(['\r', '\0'], "\n"))
}

/// The page's text from its characters one by one: surrogate pairs joined, lone
/// surrogates replaced by U+FFFD.
fn char_by_char(layer: &PdfPageText<'_>) -> String {
    let units: Vec<u32> = layer.chars().iter().map(|c| c.unicode_value()).collect();
    let mut out = String::with_capacity(units.len());
    let mut utf16 = Vec::with_capacity(units.len());
    for u in units {
        match char::from_u32(u) {
            Some(c) if u > 0xFFFF => {
                out.extend(char::decode_utf16(utf16.drain(..)).map(|r| r.unwrap_or('\u{FFFD}')));
                out.push(c);
            }
            _ if u <= 0xFFFF => utf16.push(u as u16),
            _ => utf16.push(0xFFFD),
        }
    }
    out.extend(char::decode_utf16(utf16).map(|r| r.unwrap_or('\u{FFFD}')));
    out
}

fn is_rtl(c: char) -> bool {
    matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')
}

/// Whether one glyph's characters come out in visual order: the lam-alef ligature, which
/// PDFium decomposes alef-first, and whole-word glyphs (they hold a space, which no
/// ligature does) whose ToUnicode strings producers write visually.
fn cluster_is_visual(chars: &[char]) -> bool {
    match chars {
        ['\u{0622}' | '\u{0623}' | '\u{0625}' | '\u{0627}', '\u{0644}'] => true,
        _ => chars.len() > 2 && chars.contains(&' ') && chars.iter().copied().any(is_rtl),
    }
}

/// Rebuild a page's text with right-to-left runs in logical order. Two things go wrong
/// in real files (both seen in the corpus): a ligature glyph whose ToUnicode string lists
/// its characters in visual order (all share one origin), and RTL glyphs drawn left to
/// right in stream order (origins advance rightwards). Runs already logical are kept.
fn logical_order(layer: &PdfPageText<'_>) -> String {
    // Clusters: consecutive characters that come from one glyph (same origin).
    let mut clusters: Vec<(Vec<char>, Option<f32>)> = Vec::new();
    for c in layer.chars().iter() {
        let Some(ch) = c.unicode_char() else { continue };
        let x = c.origin_x().ok().map(|x| x.value);
        match clusters.last_mut() {
            Some((chars, Some(px)))
                if x == Some(*px) && !matches!(ch, '\r' | '\n') && !chars.ends_with(&['\n']) =>
            {
                chars.push(ch)
            }
            _ => clusters.push((vec![ch], x)),
        }
    }
    for (chars, _) in clusters.iter_mut() {
        if cluster_is_visual(chars) {
            chars.reverse();
        }
    }
    let rtl = |c: &(Vec<char>, Option<f32>)| c.0.iter().copied().any(is_rtl);
    let space = |c: &(Vec<char>, Option<f32>)| c.0.iter().all(|ch| *ch == ' ');
    let mut out = String::new();
    let mut i = 0;
    while i < clusters.len() {
        if !rtl(&clusters[i]) {
            out.extend(clusters[i].0.iter());
            i += 1;
            continue;
        }
        // A run of RTL clusters, with the spaces between them.
        let mut j = i;
        let mut last = i;
        while j < clusters.len() && (rtl(&clusters[j]) || space(&clusters[j])) {
            if rtl(&clusters[j]) {
                last = j;
            }
            j += 1;
        }
        let run = &clusters[i..=last];
        let xs: Vec<f32> = run.iter().filter_map(|c| c.1).collect();
        let visual =
            xs.len() >= 2 && xs.windows(2).filter(|w| w[1] > w[0]).count() * 2 > xs.len() - 1;
        if visual {
            run.iter().rev().for_each(|c| out.extend(c.0.iter()));
        } else {
            run.iter().for_each(|c| out.extend(c.0.iter()));
        }
        i = last + 1;
    }
    out
}

/// Filled-in AcroForm values on a page (`name: value`), which are not part of its text
/// layer: a form's answers are often the point of reading it.
fn form_values(page: &PdfPage<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for annot in page.annotations().iter() {
        let Some(field) = annot.as_form_field() else {
            continue;
        };
        let value = match field {
            PdfFormField::Text(f) => f.value(),
            PdfFormField::ComboBox(f) => f.value(),
            PdfFormField::ListBox(f) => f.value(),
            PdfFormField::Checkbox(f) => f
                .is_checked()
                .ok()
                .filter(|c| *c)
                .map(|_| "[x]".to_string()),
            PdfFormField::RadioButton(f) => f
                .is_checked()
                .ok()
                .filter(|c| *c)
                .map(|_| "(selected)".to_string()),
            _ => None,
        };
        let Some(value) = value
            .map(|v| v.trim().replace(['\r', '\n'], " "))
            .filter(|v| !v.is_empty())
        else {
            continue;
        };
        let line = match field.name() {
            Some(name) if !name.trim().is_empty() => format!("{}: {value}", name.trim()),
            _ => value,
        };
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

fn has_images(page: &PdfPage<'_>) -> bool {
    page.objects().iter().any(|o| {
        matches!(o.object_type(), PdfPageObjectType::Image)
            || o.as_x_object_form_object().is_some_and(|f| {
                f.iter()
                    .any(|i| i.object_type() == PdfPageObjectType::Image)
            })
    })
}

impl Extractor for PdfExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &ReadRequest,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars(limits.max_chars)?;
        let query = req.query()?;
        let min_text =
            options::count("min_text_per_page", req.min_text_per_page, 0)?.unwrap_or(50) as usize;
        let choice = OcrChoice::parse(req.ocr.map(|o| o.as_str()))?;
        let engine = match choice {
            OcrChoice::Off => None,
            _ => ocr::engine_for(req.ocr.map(|o| o.as_str()), req.ocr_lang.as_deref())?,
        };
        let pdfium = pdfium()?;
        let doc = open(pdfium, input, req.password.as_deref())?;
        let total = doc.pages().len() as u64;
        if total == 0 {
            return Err(ApiError::new(
                ErrorCode::Corrupt,
                "the PDF has no pages (its page tree is missing or broken)",
            ));
        }
        let mut warnings = Vec::new();
        let selected = options::select_pages(
            req.pages.as_deref(),
            total,
            "page",
            "document",
            &mut warnings,
        )?;

        // Page by page: native text, the verdict, and OCR where it is needed, until done
        // or the deadline passes.
        let engine = engine.as_deref();
        let mut pixel_budget = limits.max_render_pixels_per_read;
        let mut pages: Vec<Page> = Vec::with_capacity(selected.len());
        let (mut fresh, mut from_memory) = (Vec::new(), 0usize);
        let started = Instant::now();
        // A page renders (PDFium, this thread) while the page before it is recognised (on
        // the OCR engine's threads): one page's OCR in flight at a time.
        std::thread::scope(|scope| -> Result<(), ApiError> {
            let mut pending: Option<PendingOcr<'_>> = None;
            // Progress counts finished pages: not one whose OCR is still running.
            let report = |pages: &[Page], pending: &Option<PendingOcr<'_>>| {
                let stage = if pages.last().is_some_and(|p| p.ocr.is_some()) {
                    "ocr"
                } else {
                    "text"
                };
                if pending.is_none() {
                    input
                        .progress
                        .report(pages.len() as u64, selected.len() as u64, stage);
                }
            };
            let mut read = || -> Result<(), ApiError> {
                for &n in &selected {
                    // Stop at the deadline, or before a page that would likely end past it (the
                    // average page so far), so finished pages come back instead of a timeout.
                    if let Some(d) = input.deadline {
                        let now = Instant::now();
                        let per_page =
                            (!pages.is_empty()).then(|| (now - started) / pages.len() as u32);
                        if now >= d || per_page.is_some_and(|p| now + p > d) {
                            break;
                        }
                    }
                    let page = doc.pages().get((n - 1) as i32).map_err(|e| {
                        ApiError::new(ErrorCode::Corrupt, format!("page {n} cannot be read: {e}"))
                    })?;
                    let mut text = page_text(&page)?;
                    let fields = form_values(&page);
                    if !fields.is_empty() {
                        text = format!(
                            "{}\n[Form fields]\n{}\n",
                            text.trim_end(),
                            fields.join("\n")
                        );
                    }
                    let need = match choice {
                        OcrChoice::Force => Some(OcrReason::Forced),
                        _ => assess(&text, min_text, || has_images(&page)),
                    };
                    let mut rec = Page {
                        number: n,
                        text,
                        need,
                        ocr: None,
                    };
                    if let (Some(_), Some(engine)) = (need, engine) {
                        if let Some(known) = input.known_ocr.get(&n) {
                            from_memory += 1;
                            rec.set_ocr(known.clone());
                        } else {
                            // The models load while the page renders.
                            engine.warm_up();
                            let (rgb, warning) = render_for_ocr(
                                &page,
                                limits.max_render_pixels_per_page,
                                &mut pixel_budget,
                            )?;
                            if let Some(p) = pending.take() {
                                if !p.finish(&mut pages, &mut fresh)? {
                                    break;
                                }
                                report(&pages, &pending);
                            }
                            warnings.extend(warning);
                            let deadline = input.deadline;
                            pending = Some(PendingOcr {
                                index: pages.len(),
                                handle: scope.spawn(move || engine.recognize_until(&rgb, deadline)),
                            });
                        }
                    }
                    pages.push(rec);
                    report(&pages, &pending);
                }
                Ok(())
            };
            let read = read();
            match (pending.take(), read) {
                (Some(p), Ok(())) => {
                    if p.finish(&mut pages, &mut fresh)? {
                        report(&pages, &None);
                    }
                    Ok(())
                }
                // The read failed on a later page: the OCR in flight is waited for (the
                // scope would wait anyway) and dropped with the rest.
                (Some(p), Err(e)) => {
                    let _ = p.handle.join();
                    Err(e)
                }
                (None, read) => read,
            }
        })?;
        if pages.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Timeout,
                "the deadline passed before any page was read",
            ));
        }
        let unread: Vec<u64> = selected[pages.len()..].to_vec();

        let skipped: Vec<&Page> = pages
            .iter()
            .filter(|p| p.need.is_some() && p.ocr.is_none())
            .collect();
        let done: Vec<&Page> = pages.iter().filter(|p| p.ocr.is_some()).collect();
        if !skipped.is_empty()
            && skipped.len() == pages.len()
            && unread.is_empty()
            && choice != OcrChoice::Off
        {
            return Err(ocr::no_engine(&format!(
                "the selected page{} need{} OCR ({})",
                if pages.len() == 1 { "" } else { "s" },
                if pages.len() == 1 { "s" } else { "" },
                skipped[0].need.map(OcrReason::as_str).unwrap_or_default()
            )));
        }
        let mut extra = Report {
            total_pages: Some(total as u64),
            ocr_pages: Some(done.len() as u64),
            ocr_engine: engine
                .filter(|_| !done.is_empty())
                .map(|e| e.name().to_string()),
            skipped_pages: Some(skipped.iter().map(|p| p.number).collect()),
            pages_ocr: Some(
                pages
                    .iter()
                    .filter(|p| p.need.is_some())
                    .map(|p| crate::report::PageOcr {
                        page: p.number,
                        reason: p.need.map(|r| r.as_str().to_string()),
                        confidence: p.ocr.as_ref().and_then(|o| o.confidence),
                        status: if p.ocr.is_some() { "done" } else { "skipped" }.to_string(),
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        if req.include_boxes == Some(true) {
            extra.boxes = Some(Boxes::Pages(
                done.iter()
                    .map(|p| PageBoxes {
                        page: p.number,
                        lines: p.ocr.as_ref().map(|o| o.lines.clone()),
                    })
                    .collect(),
            ));
        }
        if !skipped.is_empty() {
            warnings.push(format!(
                "page{} {} need{} OCR and {}; their text is missing",
                if skipped.len() == 1 { "" } else { "s" },
                format_pages(&skipped.iter().map(|p| p.number).collect::<Vec<_>>()),
                if skipped.len() == 1 { "s" } else { "" },
                if choice == OcrChoice::Off {
                    "ocr is \"none\""
                } else {
                    "no OCR engine is installed"
                },
            ));
        }

        // Garbled layers are never passed through as text.
        let pieces: Vec<(u64, String)> = pages
            .iter()
            .map(|p| {
                let body = if p.ocr.is_none() && p.need == Some(OcrReason::GarbledText) {
                    ""
                } else {
                    p.text.trim_end()
                };
                (p.number, body.to_string())
            })
            .collect();
        let visible_chars: usize = pieces
            .iter()
            .map(|(_, t)| t.chars().filter(|c| !c.is_whitespace()).count())
            .sum();
        let degraded = done.iter().any(|p| {
            p.ocr
                .as_ref()
                .is_none_or(|o| o.lines.is_empty() || o.confidence.is_some_and(|c| c < 0.8))
        });
        let flag = if pages.iter().all(|p| p.need.is_none()) {
            "no_ocr_needed"
        } else if !skipped.is_empty() {
            "no_ocr_engine"
        } else if degraded {
            "degraded"
        } else {
            "good"
        };
        extra.ocr_quality = Some(OcrQuality {
            quality_flag: flag.to_string(),
            ocr_pages: done.len() as u64,
            text_density: (visible_chars as f64 / pages.len() as f64).round(),
            confidence: None,
        });
        extra.metadata = Some(metadata(&doc));

        let mut ex = assemble(pieces, query.as_ref(), max_chars, &unread, &mut extra);
        if !unread.is_empty() {
            extra.partial = Some(true);
            warnings.push(format!(
                "the deadline passed after {} of {} pages; `next` reads the rest",
                pages.len(),
                selected.len()
            ));
        }
        ex.warnings.splice(0..0, warnings);
        if from_memory > 0 {
            extra.ocr_pages_from_memory = Some(from_memory as u64);
        }
        ex.report = extra;
        ex.fresh_ocr = fresh;
        ex.cached = from_memory > 0 && ex.fresh_ocr.is_empty();
        Ok(ex)
    }
}

/// The pixel size (and dpi) a page of `wpt` × `hpt` points renders at for OCR: 300 dpi, or
/// less so that width × height stays within `cap`. Computed in floating point, so a page
/// box of absurd size (a hostile MediaBox) cannot overflow past the cap; each side is at
/// least 1 and at most `cap` pixels.
fn ocr_render_size(wpt: f32, hpt: f32, cap: u64) -> (u32, u32, f64) {
    let clean = |v: f32| {
        if v.is_finite() {
            f64::from(v).max(1.0)
        } else {
            1.0
        }
    };
    let (wpt, hpt) = (clean(wpt), clean(hpt));
    let cap = cap.max(1) as f64;
    let mut scale = 300.0 / 72.0;
    let pixels = |s: f64| (wpt * s) * (hpt * s);
    if pixels(scale) > cap {
        scale *= (cap / pixels(scale)).sqrt();
    }
    let side = |pt: f64| (pt * scale).floor().clamp(1.0, cap.min(u32::MAX as f64)) as u32;
    let (mut w, mut h) = (side(wpt), side(hpt));
    // A sliver page (1 pt by 10⁹) keeps its long side within the cap too.
    while (w as u64).saturating_mul(h as u64) > cap as u64 {
        if w >= h {
            w = (w / 2).max(1);
        } else {
            h = (h / 2).max(1);
        }
    }
    (w, h, scale * 72.0)
}

/// Render a page for OCR at 300 dpi, or less within the read's pixel budget (then with a
/// warning saying so).
fn render_for_ocr(
    page: &PdfPage<'_>,
    per_page: u64,
    budget: &mut u64,
) -> Result<(RgbImage, Option<String>), ApiError> {
    let cap = per_page.min((*budget).max(1_000_000));
    let (w, h, dpi) = ocr_render_size(page.width().value, page.height().value, cap);
    let warning = (dpi < 299.5)
        .then(|| format!("page rendered for OCR at {dpi:.0} dpi instead of 300 (pixel budget)"));
    let (w, h) = (w as i32, h as i32);
    *budget = budget.saturating_sub(w as u64 * h as u64);
    let bitmap = page
        .render_with_config(
            &PdfRenderConfig::new()
                .set_target_width(w)
                .set_maximum_height(h)
                .set_reverse_byte_order(true)
                .render_form_data(true),
        )
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Corrupt,
                format!("the page cannot be rendered: {e}"),
            )
        })?;
    Ok((bitmap_rgb(&bitmap)?, warning))
}

/// A page rendered with `set_reverse_byte_order(true)` as RGB. PDFium then writes RGBA
/// (its "BGRA" with red and blue swapped; rows possibly padded): turned into RGB in one
/// pass, where `as_image().to_rgb8()` made an RGBA copy and then cast it pixel by pixel
/// (tens of ms per 300 dpi page, on the thread that renders while the OCR lanes run).
fn bitmap_rgb(bitmap: &PdfBitmap) -> Result<RgbImage, ApiError> {
    let failed = |e: &dyn std::fmt::Display| {
        ApiError::new(
            ErrorCode::Corrupt,
            format!("the page cannot be rendered: {e}"),
        )
    };
    let (w, h) = (
        bitmap.width().max(0) as usize,
        bitmap.height().max(0) as usize,
    );
    if matches!(
        bitmap.format(),
        Ok(PdfBitmapFormat::BGRA | PdfBitmapFormat::BGRx)
    ) && w > 0
        && h > 0
    {
        let raw = bitmap.as_raw_bytes();
        let stride = raw.len() / h;
        if stride >= w * 4 {
            let mut rgb = vec![0u8; w * h * 3];
            for (out, row) in rgb.chunks_exact_mut(w * 3).zip(raw.chunks_exact(stride)) {
                for (o, p) in out.chunks_exact_mut(3).zip(row.chunks_exact(4)) {
                    o.copy_from_slice(&p[..3]);
                }
            }
            return RgbImage::from_raw(w as u32, h as u32, rgb)
                .ok_or_else(|| failed(&"the bitmap has the wrong size"));
        }
    }
    Ok(ocr::into_rgb(bitmap.as_image().map_err(|e| failed(&e))?))
}

/// A page's OCR running while the next page renders.
struct PendingOcr<'scope> {
    /// Its place in the pages read so far.
    index: usize,
    handle: std::thread::ScopedJoinHandle<'scope, Result<Vec<ocr::OcrLine>, ApiError>>,
}

impl PendingOcr<'_> {
    /// Wait for the page's OCR and put its text in place. `Ok(false)` when the deadline
    /// passed inside it: that page and any read after it are dropped, to be read with
    /// `next` (unless it was the first page, when the read is a timeout).
    fn finish(
        self,
        pages: &mut Vec<Page>,
        fresh: &mut Vec<(u64, Vec<ocr::OcrLine>)>,
    ) -> Result<bool, ApiError> {
        let result = self.handle.join().unwrap_or_else(|_| {
            Err(ApiError::new(
                ErrorCode::ExtractionCrashed,
                "the OCR of a page panicked",
            ))
        });
        match result {
            Ok(lines) => {
                let page = &mut pages[self.index];
                fresh.push((page.number, lines.clone()));
                page.set_ocr(lines);
                Ok(true)
            }
            Err(e) if e.code == ErrorCode::Timeout && self.index > 0 => {
                pages.truncate(self.index);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

/// Build the text from per-page pieces (or their query hits), cutting at page boundaries,
/// and set `next` to the pages still to read.
fn assemble(
    pieces: Vec<(u64, String)>,
    query: Option<&options::Query>,
    max_chars: usize,
    unread: &[u64],
    extra: &mut Report,
) -> Extraction {
    let read: Vec<u64> = pieces.iter().map(|(n, _)| *n).collect();
    let mut blocks: Vec<(u64, String)> = Vec::new();
    let mut matches = 0u64;
    for (n, text) in pieces {
        match query {
            None => blocks.push((n, format!("--- Page {n} ---\n{text}\n"))),
            Some(q) => {
                let lines: Vec<&str> = text.lines().collect();
                let (hits, count) = grep(&lines, 1, q);
                matches += count as u64;
                if count > 0 {
                    blocks.push((n, format!("--- Page {n} ---\n{hits}")));
                }
            }
        }
    }
    // Pages with no text at all: an empty result, not a column of page markers.
    if query.is_none()
        && blocks
            .iter()
            .all(|(n, b)| b.len() == format!("--- Page {n} ---\n\n").len())
    {
        extra.pages_read = Some(read.len() as u64);
        extra.page_range_read = Some(format_pages(&read));
        if !unread.is_empty() {
            let mut next = Next::default();
            next.pages = Some(format_pages(unread));
            return Extraction {
                next: Some(next),
                ..Default::default()
            };
        }
        extra.note = Some("the selected pages carry no text".into());
        return Extraction::default();
    }
    let char_count: usize = blocks.iter().map(|(_, b)| b.chars().count()).sum();
    let mut ex = Extraction {
        char_count: char_count as u64,
        ..Default::default()
    };
    if query.is_some() {
        ex.matches = Some(matches);
    }
    let texts: Vec<&str> = blocks.iter().map(|(_, b)| b.as_str()).collect();
    let Taken {
        text: kept,
        count,
        oversize,
    } = take_blocks(&texts, max_chars, usize::MAX);
    let shown: Vec<u64> = blocks[..count].iter().map(|(n, _)| *n).collect();
    let oversize_page = oversize.map(|len| (blocks[0].0, len));
    // With a query, pages without hits make no block but were searched: what remains is
    // every page read after the last one shown (or from the one cut short).
    let mut rest: Vec<u64> = Vec::new();
    if count < blocks.len() {
        let resume_from = oversize_page
            .map(|(n, _)| n)
            .unwrap_or_else(|| shown.last().map_or(0, |l| l + 1));
        rest = read.iter().copied().filter(|n| *n >= resume_from).collect();
    }
    rest.extend_from_slice(unread);
    extra.pages_read = Some(shown.len() as u64);
    extra.page_range_read = Some(format_pages(&shown));
    if rest.len() > unread.len() || oversize_page.is_some() {
        ex.truncated = true;
        ex.text = close_truncated(kept, char_count as u64);
    } else {
        ex.text = kept;
    }
    if !rest.is_empty() {
        let mut next = Next::default();
        next.pages = Some(format_pages(&rest));
        if let Some((n, len)) = oversize_page {
            next.max_chars = Some(len as u64);
            ex.warnings.push(format!(
                "page {n} alone is longer than max_chars ({max_chars}); `next` reads it whole with a larger max_chars"
            ));
        }
        ex.next = Some(next);
    }
    ex
}

#[cfg(test)]
mod tests {
    #[test]
    fn ocr_render_size_stays_within_the_cap() {
        use super::ocr_render_size;
        // A4 fits: 300 dpi.
        let (w, h, dpi) = ocr_render_size(595.0, 842.0, 9_000_000);
        assert_eq!((w, h), (2479, 3508));
        assert!((dpi - 300.0).abs() < 0.01);
        // Hostile page boxes: huge, infinite, NaN, slivers. Before, width × height was
        // multiplied as saturated integers, which overflowed past the cap.
        for (wpt, hpt) in [
            (1e20, 1e20),
            (f32::MAX, f32::MAX),
            (f32::INFINITY, 10.0),
            (f32::NAN, f32::NAN),
            (1.0, 1e9),
            (1e9, 0.5),
            (-50.0, 842.0),
        ] {
            let (w, h, _) = ocr_render_size(wpt, hpt, 9_000_000);
            assert!(w >= 1 && h >= 1, "{wpt} x {hpt}");
            assert!(
                w as u64 * h as u64 <= 9_000_000,
                "{wpt} x {hpt} -> {w} x {h}"
            );
        }
    }

    use super::*;

    /// A rendered page comes out as the RGB `as_image().to_rgb8()` makes, channels in
    /// place: page 1 of the corpus's testPDFVarious.pdf has coloured text and images.
    #[test]
    fn rendered_pages_keep_their_colours() {
        let path = std::env::var_os("DOCREADER_CORPUS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
            })
            .join("pdf/testPDFVarious.pdf");
        let pdfium = pdfium().expect("PDFium (make native)");
        let doc = pdfium.load_pdf_from_file(&path, None).expect("corpus PDF");
        let page = doc.pages().get(0).expect("page 1");
        // An odd width: rows of a BGRA bitmap may be padded.
        let bitmap = page
            .render_with_config(
                &PdfRenderConfig::new()
                    .set_target_width(601)
                    .set_reverse_byte_order(true),
            )
            .expect("rendered");
        let fast = bitmap_rgb(&bitmap).expect("converted");
        let slow = bitmap.as_image().expect("image").to_rgb8();
        assert_eq!(fast.dimensions(), slow.dimensions());
        let coloured = slow.pixels().filter(|p| p[0].abs_diff(p[2]) > 40).count();
        assert!(
            coloured > 100,
            "page 1 should have colour, found {coloured} pixels"
        );
        assert!(fast == slow, "the fast conversion differs from image's");
    }

    #[test]
    fn verdicts() {
        let words = "The quick brown fox jumps over the lazy dog. ".repeat(3);
        assert_eq!(assess(&words, 50, || true), None);
        assert_eq!(assess("", 50, || true), Some(OcrReason::NoTextLayer));
        assert_eq!(
            assess("  \n", 50, || false),
            None,
            "a blank page has nothing to OCR"
        );
        assert_eq!(assess("Page 3", 50, || true), Some(OcrReason::SparseText));
        assert_eq!(assess("Page 3", 50, || false), None);
        let pua: String = "\u{E041}\u{E042}\u{E043} ".repeat(30);
        assert_eq!(assess(&pua, 50, || false), Some(OcrReason::GarbledText));
        let fffd = "\u{FFFD}\u{FFFD}ab ".repeat(30);
        assert_eq!(assess(&fffd, 50, || false), Some(OcrReason::GarbledText));
        let soup = "Vkg tzxbn drgwp ktr mlzqs qwtr khl lzxd; ".repeat(4);
        assert_eq!(assess(&soup, 50, || false), Some(OcrReason::GarbledText));
        let symbols = "#$%& ()*+ ,-./ :;<= >?@[ ]^_` {|}~ ".repeat(5);
        assert_eq!(assess(&symbols, 50, || false), Some(OcrReason::GarbledText));
        let table = "Item 1 | $1,234.00 | 12% | 2024-01-02\n".repeat(5);
        assert_eq!(assess(&table, 50, || false), None);
        let cjk = "日本語のテキストです。これは正しい文章です。".repeat(4);
        assert_eq!(assess(&cjk, 50, || false), None);
    }

    #[test]
    fn dates() {
        assert_eq!(
            pdf_date("D:20230102030405+01'00'"),
            "2023-01-02T03:04:05+01:00"
        );
        assert_eq!(pdf_date("D:20230102030405Z"), "2023-01-02T03:04:05Z");
        assert_eq!(pdf_date("D:2023"), "2023-01-01T00:00:00");
        assert_eq!(pdf_date("yesterday"), "yesterday");
    }

    #[test]
    fn saslprep_drops_soft_hyphens() {
        assert_eq!(saslprep("S\u{AA}SL\u{AD}prep"), "SaSLprep");
        assert_eq!(saslprep("plain"), "plain");
    }
}
