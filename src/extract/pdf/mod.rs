//! PDF through PDFium: native text per page (`--- Page N ---`), page ranges, queries,
//! passwords, metadata, and an honest verdict per page on whether it needs OCR
//! (no text layer, sparse text, or a garbled layer that forms no words).
//!
//! A read opens the document (`pdfium`), selects pages, reads them one by one — text
//! layer (`text`), verdict (`verdict`), OCR of a rendered page (`render`) — and makes the
//! text and the typed report from what was read (`report`).

mod annotations;
mod cid;
mod columns;
mod differences;
mod figures;
mod fonts;
mod furniture;
mod geometry;
mod glyph_names;
mod headings;
mod hidden;
mod layers;
mod lines;
mod objects;
mod paragraphs;
mod pdfium;
mod render;
mod report;
mod scan_layer;
mod tables;
mod text;
mod verdict;

use std::time::Instant;

use pdfium_render::prelude::*;

pub use pdfium::available;
pub use render::{render_page, render_page_png};
pub use verdict::{assess, OcrReason};

use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::{ApiError, ErrorCode};
use crate::ocr::{self, OcrChoice};
use crate::options::{self, Options};
use render::PendingOcr;

pub struct PdfExtractor;

impl Extractor for PdfExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let settings = Settings::parse(req)?;
        let pdfium = pdfium::pdfium()?;
        let doc = pdfium::open(pdfium, &input.path, req.password.as_deref())?;
        // Opened again, only when it has optional content, for the layers off by default.
        let layers = layers::Layers::open(
            pdfium,
            &input.path,
            &pdfium::passwords(req.password.as_deref()),
        );
        let count = pdfium::PageCount::of(&doc);
        let total = count.found;
        if total == 0 {
            return Err(ApiError::new(
                ErrorCode::Corrupt,
                "the PDF has no pages (its page tree is missing or broken)",
            ));
        }
        let mut warnings = Vec::new();
        let selected = req
            .select_pages(total, "page", "document", &mut warnings)
            .map_err(|mut e| {
                if let Some(why) = count.shortfall() {
                    e.message = format!("{}; {why}", e.message);
                }
                e
            })?;
        warnings.extend(count.shortfall().map(|why| {
            let missing = if count.found + 1 == count.claimed {
                format!("page {} is missing", count.claimed)
            } else {
                format!("pages {}-{} are missing", count.found + 1, count.claimed)
            };
            format!("{why}: {missing}, and the pages read are those found")
        }));
        let outline = if settings.markdown || settings.json {
            headings::Outline::read(&doc)
        } else {
            headings::Outline::default()
        };
        let settings_ocr_on = settings.choice != OcrChoice::Off;
        let job = Job {
            input,
            limits,
            settings,
            total,
            selected,
            warnings,
            outline,
            layers,
            scan_layer: scan_layer::LayerCheck::new(settings_ocr_on),
            type3: differences::Lazy::new(&input.path, total as usize),
        };
        let mut read = read_pages(&doc, &job)?;
        let hidden: Vec<(u64, Vec<hidden::PageHidden>)> = read
            .pages
            .iter_mut()
            .map(|p| (p.number, std::mem::take(&mut p.hidden)))
            .collect();
        let searched = job.settings.query.is_some();
        let markdown = job.settings.markdown;
        let dropped = job.settings.hidden_text == options::HiddenText::Drop;
        let mut ex = report::make_report(&doc, job, read)?;
        if markdown {
            ex.warnings.push(
                "Markdown of a PDF: headings only where font size or bookmarks make them clear, tables where ruling lines draw their cells or where three lines or more stand in clear columns; other tables without rulings come as plain lines"
                    .to_string(),
            );
        }
        // The pages the text shows, as the report says (a query read searched them all).
        let shown = ex
            .report
            .page_range_read
            .as_deref()
            .and_then(|r| options::parse_spans(r).ok())
            .unwrap_or_default();
        ex.findings = hidden_findings(
            |n| searched || shown.iter().any(|&(a, b)| (a..=b).contains(&n)),
            hidden,
            dropped,
        );
        Ok(ex)
    }
}

/// The request's options for a PDF, checked before the document is opened.
struct Settings {
    max_chars: usize,
    query: Option<options::Query>,
    /// Fewer visible characters than this make a page with images sparse.
    min_text: usize,
    choice: OcrChoice,
    /// The OCR engine, unless `ocr` is `none` (or none is installed).
    engine: Option<Box<dyn ocr::OcrEngine>>,
    include_boxes: bool,
    /// `output: "markdown"`: clear headings marked.
    markdown: bool,
    /// `hidden_text`: what becomes of text objects no one sees (`keep` by default).
    hidden_text: options::HiddenText,
    /// `include_annotations` (default on): FreeText boxes and comments after each page.
    annotations: bool,
    /// `output: "json"`: each page's typed blocks beside its text.
    json: bool,
    /// `furniture: "keep"`: running headers and footers stay in Markdown.
    keep_furniture: bool,
    /// OCR'd pages get their layout (`ReadRequest::structured`).
    layout: bool,
}

impl Settings {
    fn parse(req: &Options) -> Result<Self, ApiError> {
        let max_chars = req.max_chars;
        let query = req.query.clone();
        let min_text = req.min_text_per_page;
        let choice = OcrChoice::parse(req.ocr.map(|o| o.as_str()))?;
        let engine = match choice {
            OcrChoice::Off => None,
            _ => ocr::engine_for(req.ocr.map(|o| o.as_str()), req.ocr_lang.as_deref())?,
        };
        Ok(Self {
            max_chars,
            query,
            min_text,
            choice,
            engine,
            include_boxes: req.include_boxes == Some(true),
            markdown: req.markdown(),
            hidden_text: req.hidden_text.unwrap_or(options::HiddenText::Keep),
            annotations: req.include_annotations != Some(false),
            json: req.json(),
            keep_furniture: req.keep_furniture(),
            layout: req.structured(),
        })
    }
}

/// One read of an open document: its settings, the pages selected (1-based, in reading
/// order) and what selecting them warned about.
struct Job<'a> {
    input: &'a Input,
    limits: &'a Limits,
    settings: Settings,
    /// Pages in the document.
    total: u64,
    selected: Vec<u64>,
    warnings: Vec<String>,
    /// The bookmarks, for the headings of Markdown and json (empty otherwise).
    outline: headings::Outline,
    /// The document opened again for its layers, when it has optional content.
    layers: Option<layers::Layers>,
    /// What checking scans' text layers against their images may do in this read.
    scan_layer: scan_layer::LayerCheck,
    /// The document's Type3 fonts, read from its file when a page needs them.
    type3: differences::Lazy,
}

impl Job<'_> {
    /// Whether to stop before the next page: at the deadline, or when a page as long as
    /// the average so far would end past it, so finished pages come back, not a timeout.
    fn out_of_time(&self, started: Instant, done: usize) -> bool {
        if self.input.deadline.stopped() {
            return true;
        }
        let Some(d) = self.input.deadline.instant() else {
            return false;
        };
        let now = Instant::now();
        let per_page = (done > 0).then(|| (now - started) / done as u32);
        now >= d || per_page.is_some_and(|p| now + p > d)
    }

    /// Report finished pages; nothing while a page's OCR is still running.
    fn progress(&self, pages: &[Page], ocr_in_flight: bool) {
        if ocr_in_flight {
            return;
        }
        let stage = if pages.last().is_some_and(|p| p.ocr.is_some()) {
            super::Stage::Ocr
        } else {
            super::Stage::Text
        };
        self.input
            .progress
            .report(pages.len() as u64, self.selected.len() as u64, stage);
    }
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
    /// The annotations' sections, after the page's text whether it was read or OCR'd.
    notes: String,
    need: Option<OcrReason>,
    /// The layer went to OCR, but was kept: judged garbled, OCR read the same words; or
    /// sparse (a line over a picture), OCR read less than it holds.
    layer_kept: Option<OcrReason>,
    /// Text objects a person does not see.
    hidden: Vec<hidden::PageHidden>,
    /// With `output: "json"`: the blocks of the page's native text (its headings, lines,
    /// table and form fields; an OCR'd page's come from its lines), and its annotations'.
    blocks: Vec<crate::model::Block>,
    note_blocks: Vec<crate::model::Block>,
    /// With Markdown or `output: "json"`: its text layer's lines with their boxes, for
    /// paragraphs (made once the page furniture of every page read is known).
    geometry: paragraphs::Geometry,
    /// With `output: "json"` or `"markdown"`: its figures' boxes (`figures::find`).
    figures: Vec<[f32; 4]>,
}

impl Page {
    /// Put OCR's reading in place of the page's text, unless the page went to OCR only for
    /// a layer that looked garbled and OCR read the same words (`verdict::ocr_confirms`),
    /// or for a sparse layer and OCR read fewer characters than it holds (a line of text
    /// over a picture with none): the layer is then kept (exact where OCR errs; nothing of
    /// it lost), and the page counts as not OCR'd.
    fn set_ocr(&mut self, lines: Vec<ocr::OcrLine>) {
        let read = ocr::lines_to_text(&lines);
        let visible = |t: &str| t.chars().filter(|c| !c.is_whitespace()).count();
        let keep = match self.need {
            Some(OcrReason::GarbledText) => verdict::ocr_confirms(&self.text, &read),
            Some(OcrReason::SparseText) => visible(&read) < visible(&self.text),
            _ => false,
        };
        if keep {
            self.layer_kept = self.need.take();
            return;
        }
        self.text = read;
        self.ocr = Some(PageOcr {
            confidence: ocr::mean_confidence(&lines),
            lines,
        });
    }
}

/// The pages read: the selection's first pages (all of them unless the deadline came
/// first), the OCR run now (for the document memory) and its warnings.
struct PagesRead {
    pages: Vec<Page>,
    fresh: Vec<(u64, Vec<ocr::OcrLine>)>,
    /// Pages whose OCR came from the document memory.
    from_memory: usize,
    warnings: Vec<String>,
}

/// Page by page: native text, the verdict, and OCR where it is needed, until done or the
/// deadline passes. A page renders (PDFium, this thread) while the page before it is
/// recognised (on the OCR engine's threads): one page's OCR in flight at a time.
fn read_pages(doc: &PdfDocument<'_>, job: &Job<'_>) -> Result<PagesRead, ApiError> {
    let engine = job.settings.engine.as_deref();
    let mut pixel_budget = job.limits.max_render_pixels_per_read;
    let mut out = PagesRead {
        pages: Vec::with_capacity(job.selected.len()),
        fresh: Vec::new(),
        from_memory: 0,
        warnings: Vec::new(),
    };
    let started = Instant::now();
    std::thread::scope(|scope| -> Result<(), ApiError> {
        let mut pending: Option<PendingOcr<'_>> = None;
        let mut read = || -> Result<(), ApiError> {
            for &n in &job.selected {
                if job.out_of_time(started, out.pages.len()) {
                    break;
                }
                let mut page = doc.pages().get((n - 1) as i32).map_err(|e| {
                    ApiError::new(
                        ErrorCode::Corrupt,
                        format!("page {n} cannot be read: the PDF's page tree is damaged there"),
                    )
                    .with_cause(e)
                    .with_hint(format!(
                        "Read the pages before it (`pages: \"1-{}\"`), or re-save the PDF from a viewer that repairs it.",
                        n.saturating_sub(1).max(1)
                    ))
                })?;
                // The page as shown, read before `upright` may unturn it (only where boxes
                // are made: Markdown and json without a query).
                let settings = &job.settings;
                let frame = ((settings.markdown || settings.json) && settings.query.is_none())
                    .then(|| paragraphs::Frame::of(&page));
                let turned = upright(&mut page);
                let mut rec = read_page(&page, frame, n, job, turned)?;
                if let (Some(_), Some(engine)) = (rec.need, engine) {
                    if let Some(known) = job.input.known_ocr.get(&n) {
                        out.from_memory += 1;
                        rec.set_ocr(known.clone());
                    } else {
                        // The models load while the page renders.
                        engine.warm_up();
                        let (rgb, warning) = render::render_for_ocr(
                            &page,
                            job.limits.max_render_pixels_per_page,
                            &mut pixel_budget,
                        )?;
                        if let Some(p) = pending.take() {
                            if !p.finish(&mut out.pages, &mut out.fresh)? {
                                break;
                            }
                            job.progress(&out.pages, false);
                        }
                        out.warnings.extend(warning);
                        let deadline = job.input.deadline.clone();
                        // The page's layout where the output has structure (the document
                        // memory keeps those lines apart: `ocr::page_layout`).
                        let layout = settings.layout;
                        pending = Some(PendingOcr {
                            index: out.pages.len(),
                            handle: scope.spawn(move || {
                                let lines = engine.recognize_until(&rgb, &deadline)?;
                                Ok(if layout {
                                    ocr::page_layout::with_roles(&rgb, lines)
                                } else {
                                    lines
                                })
                            }),
                        });
                    }
                }
                out.pages.push(rec);
                job.progress(&out.pages, pending.is_some());
            }
            Ok(())
        };
        let read = read();
        match (pending.take(), read) {
            (Some(p), Ok(())) => {
                if p.finish(&mut out.pages, &mut out.fresh)? {
                    job.progress(&out.pages, false);
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
    if out.pages.is_empty() {
        return Err(ApiError::new(
            ErrorCode::Timeout,
            "the deadline passed before any page was read",
        ));
    }
    let kept = |why: OcrReason| -> Vec<String> {
        out.pages
            .iter()
            .filter(|p| p.layer_kept == Some(why))
            .map(|p| p.number.to_string())
            .collect()
    };
    let (garbled, sparse) = (kept(OcrReason::GarbledText), kept(OcrReason::SparseText));
    let plural = |k: &[String]| if k.len() == 1 { "" } else { "s" };
    if !garbled.is_empty() {
        out.warnings.push(format!(
            "page{} {}: the text layer looked garbled, but OCR read the same words, so the \
             layer's own text is given (exact where OCR errs)",
            plural(&garbled),
            garbled.join(", ")
        ));
    }
    if !sparse.is_empty() {
        out.warnings.push(format!(
            "page{} {}: little text over pictures went to OCR, which read less than the text \
             layer holds, so the layer's own text is given",
            plural(&sparse),
            sparse.join(", ")
        ));
    }
    Ok(out)
}

/// One page's native text (with its form fields) and the verdict on it.
/// A page `/Rotate` turns for display whose text is written upright in the page's own
/// space (a portrait page turned to landscape, a scan turned in a viewer) is read unturned:
/// PDFium orders a turned page's text by the turned page, which runs such lines together
/// out of order. Its text then reads in the order it is written, and renders upright for
/// OCR and the hidden-text checks. A page whose text is drawn turned, for `/Rotate` to set
/// upright (a landscape page from a word processor), stays as it is, and `true` says so:
/// its text is read as PDFium lays it out (`text::native_text`).
fn upright(page: &mut PdfPage<'_>) -> bool {
    if matches!(page.rotation(), Ok(PdfPageRenderRotation::None) | Err(_)) {
        return false;
    }
    // The text objects' direction in the page's own space (the first 2,000 looked at).
    let (mut upright, mut turned) = (0usize, 0usize);
    for o in page.objects().iter().take(2_000) {
        if o.as_text_object().is_none() {
            continue;
        }
        let Ok(m) = o.matrix() else { continue };
        let (a, b) = (m.a(), m.b());
        if a > 0.0 && b.abs() < 0.1 * a {
            upright += 1;
        } else {
            turned += 1;
        }
    }
    if upright > 0 && upright >= 4 * turned {
        page.set_rotation(PdfPageRenderRotation::None);
        return false;
    }
    turned > 0
}

fn read_page(
    page: &PdfPage<'_>,
    frame: Option<paragraphs::Frame>,
    number: u64,
    job: &Job<'_>,
    turned: bool,
) -> Result<Page, ApiError> {
    let settings = &job.settings;
    let layer = text::layer(page)?;
    let mut hidden = hidden::scan(page, &layer, &job.scan_layer);
    if let Some(layers) = &job.layers {
        hidden.extend(layers.hidden((number - 1) as i32));
    }
    let type3 = differences::PageFonts::new(&job.type3, (number - 1) as usize);
    text::repair_hidden_texts(&layer, &mut hidden, type3);
    hidden.extend(text::hidden_form_fields(page));
    // Marked or dropped on request: the characters of the text objects no one sees.
    let unseen = text::HiddenBoxes::new(&hidden, hidden::PageHidden::unseen);
    let native = |type3: differences::PageFonts<'_>| match settings.hidden_text {
        options::HiddenText::Keep => text::native_text(page, &layer, type3, turned),
        _ if unseen.is_empty() => text::native_text(page, &layer, type3, turned),
        mode => (
            text::native_text_hiding(
                page,
                &layer,
                &unseen,
                mode == options::HiddenText::Mark,
                type3,
            ),
            None,
        ),
    };
    let (mut text, mut mended) = native(type3);
    let judge = |text: &str| match settings.choice {
        OcrChoice::Force => Some(OcrReason::Forced),
        _ => assess(text, settings.min_text, || text::has_images(page)),
    };
    let mut need = judge(&text);
    if need == Some(OcrReason::GarbledText) {
        // Codes that look like text (a Type3 font's codes from 32 up) pass the cheap check
        // `fonts` makes on every page; once the page is judged garbled, its fonts are
        // looked at whatever the text looks like, and their reading kept when it is not.
        let forced = type3.forced();
        let (again, again_mended) = native(forced);
        let verdict = judge(&again);
        if verdict != Some(OcrReason::GarbledText) {
            text::repair_hidden_texts(&layer, &mut hidden, forced);
            (text, mended, need) = (again, again_mended, verdict);
        }
    }
    // The native text's blocks; OCR, when it runs, replaces them. A garbled or sparse
    // layer's too: OCR may find it was text after all, or read less than it holds
    // (`Page::set_ocr`).
    let layered = matches!(
        need,
        None | Some(OcrReason::GarbledText) | Some(OcrReason::SparseText)
    );
    // Lines read column after column (`columns`) are the lines the paragraphs measure.
    // Pictures and drawings (`tables::find_with_art`), for the figures.
    let mut art = Vec::new();
    let blocks = if settings.json && layered {
        let (blocks, columns, drawn) =
            page_blocks(page, &layer, number, &text, &job.outline, frame);
        mended = columns.or(mended);
        art = drawn;
        blocks
    } else {
        Vec::new()
    };
    if settings.markdown && layered {
        let (marked, drawn) = tables::mark(page, &layer, &text);
        if let Some((t, columns)) = marked {
            text = t;
            mended = columns.or(mended);
        }
        art = drawn;
        text = headings::mark(page, &layer, number, &text, &job.outline);
    }
    if let std::borrow::Cow::Owned(t) = text::without_controls(&text) {
        text = t;
    }
    let mut notes = String::new();
    let mut note_blocks = Vec::new();
    if settings.annotations {
        let found = annotations::read(page, &layer, &text, settings.hidden_text);
        hidden.extend(found.found);
        notes = text::without_controls(&found.text).into_owned();
        if settings.json {
            note_blocks = found.blocks;
        }
    }
    let geometry = match frame {
        Some(frame) if layered => paragraphs::Geometry::read(&layer, frame, mended),
        _ => Default::default(),
    };
    let figures = match frame {
        Some(frame) if layered && (settings.json || settings.markdown) => {
            figures::find(page, frame, &art)
        }
        _ => Vec::new(),
    };
    Ok(Page {
        number,
        text,
        notes,
        need,
        layer_kept: None,
        ocr: None,
        hidden,
        blocks,
        note_blocks,
        geometry,
        figures,
    })
}

/// A page's text layer as typed blocks: its clear headings, its ruled tables as cells (each
/// with its `bbox` where the page's frame is known), its
/// other lines as lines, and its filled-in form fields as fields; and its lines when two
/// prose columns drawn row by row were read column after column (`tables::Found`).
fn page_blocks(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    number: u64,
    text: &str,
    outline: &headings::Outline,
    frame: Option<paragraphs::Frame>,
) -> (
    Vec<crate::model::Block>,
    Option<Vec<lines::Line>>,
    Vec<tables::Bounds>,
) {
    use crate::model::{Block, Content};
    let clean = |s: &str| text::without_controls(s.trim()).into_owned();
    let mut out = Vec::new();
    let lines = |s: &str, out: &mut Vec<Block>| {
        for p in headings::pieces(page, layer, number, s, outline) {
            match p {
                headings::Piece::Heading(level, t) => out.push(Block::new(Content::Heading {
                    level: level.min(6) as u8,
                    text: clean(&t),
                })),
                headings::Piece::Line(l) if !l.trim().is_empty() => out.push(Block::line(clean(l))),
                headings::Piece::Line(_) => {}
            }
        }
    };
    // The form fields `native_text` wrote after the text layer, as fields.
    let fields = text::form_values(page);
    let body = match text.rfind("\n[Form fields]\n") {
        Some(at) if !fields.is_empty() => &text[..at],
        _ => text,
    };
    let mut columns = None;
    let (found, art) = tables::find_with_art(page, layer, body);
    match found {
        Some(found) => {
            columns = found.lines;
            for p in found.pieces {
                match p {
                    tables::Piece::Text(t) => lines(&t, &mut out),
                    tables::Piece::Table(g) => out.push(
                        Block::new(Content::Table {
                            header_rows: g.header_rows,
                            rows: g
                                .rows
                                .iter()
                                .map(|r| r.iter().map(|c| clean(c)).collect())
                                .collect(),
                            spans: g.spans,
                        })
                        .at(frame.map(|f| f.bbox(g.bounds))),
                    ),
                }
            }
        }
        None => lines(body, &mut out),
    }
    for f in fields {
        let (name, value) = match f.split_once(": ") {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (String::new(), f),
        };
        out.push(Block::in_part(
            Content::Field { name, value },
            Some("form_fields"),
        ));
    }
    (out, columns, art)
}

/// The hidden text of the pages read as findings (a query read searched every page it
/// read; otherwise the pages the text shows), by page; instruction-like text is `high`,
/// an invisible render mode and two texts on one spot `medium`.
fn hidden_findings(
    read: impl Fn(u64) -> bool,
    pages: Vec<(u64, Vec<hidden::PageHidden>)>,
    dropped: bool,
) -> Vec<crate::findings::Finding> {
    let mut out = Vec::new();
    for (n, found) in pages {
        if found.is_empty() || !read(n) {
            continue;
        }
        for h in found {
            // Drawn invisible, or two texts on one spot (what is read is not what shows):
            // medium; out of sight otherwise: low.
            let how = (h.kind == crate::findings::FindingKind::Comment)
                .then_some("a comment, shown beside the page on request");
            let severity = match h.kind {
                crate::findings::FindingKind::InvisibleRenderMode
                | crate::findings::FindingKind::OverlappingDifferent
                | crate::findings::FindingKind::HiddenLayer
                | crate::findings::FindingKind::InvisibleTextNotInImage => {
                    crate::findings::Severity::Medium
                }
                _ => crate::findings::Severity::Low,
            };
            // The text is in what is returned (PDFium extracts it), and its phrases are
            // found there, unless `drop` left it out.
            let left_out = dropped && h.unseen();
            for mut f in crate::findings::hidden(h.kind, how, severity, &h.text, 0, left_out) {
                f.place.page = Some(n);
                out.push(f);
            }
        }
    }
    out
}
