//! What a read returns: the pages' text (or their query hits) cut at page boundaries with
//! `next`, and the typed report — OCR per page and its quality, boxes, the document's
//! metadata, partial reads — with the warnings in the order they arose.

use pdfium_render::prelude::*;

use super::{Job, OcrReason, Page, PagesRead, Settings};
use crate::envelope::{close_truncated, take_blocks, Extraction, Next, Taken};
use crate::error::ApiError;
use crate::model::{Unit, UnitKind};
use crate::ocr::{self, OcrChoice};
use crate::options::{self, format_pages, grep};
use crate::report::{Boxes, OcrQuality, PageBoxes, PageSize, Report};

/// The extraction from the pages read: an error when OCR was needed everywhere and no
/// engine could give it, else the text (OCR's where it ran; never a garbled layer) and the
/// report.
pub(super) fn make_report(
    doc: &PdfDocument<'_>,
    job: Job<'_>,
    read: PagesRead,
) -> Result<Extraction, ApiError> {
    let Job {
        settings,
        total,
        selected,
        mut warnings,
        ..
    } = job;
    let PagesRead {
        mut pages,
        fresh,
        from_memory,
        warnings: read_warnings,
    } = read;
    warnings.extend(read_warnings);
    let unread: Vec<u64> = selected[pages.len()..].to_vec();

    let skipped: Vec<&Page> = pages
        .iter()
        .filter(|p| p.need.is_some() && p.ocr.is_none())
        .collect();
    if !skipped.is_empty()
        && skipped.len() == pages.len()
        && unread.is_empty()
        && settings.choice != OcrChoice::Off
    {
        return Err(ocr::no_engine(&format!(
            "the selected page{} need{} OCR ({})",
            if pages.len() == 1 { "" } else { "s" },
            if pages.len() == 1 { "s" } else { "" },
            skipped[0].need.map(OcrReason::as_str).unwrap_or_default()
        )));
    }
    let mut extra = ocr_report(&pages, &settings, total);
    if !skipped.is_empty() {
        warnings.push(format!(
            "page{} {} need{} OCR and {}; their text is missing",
            if skipped.len() == 1 { "" } else { "s" },
            format_pages(&skipped.iter().map(|p| p.number).collect::<Vec<_>>()),
            if skipped.len() == 1 { "s" } else { "" },
            if settings.choice == OcrChoice::Off {
                "ocr is \"none\""
            } else {
                "no OCR engine is installed"
            },
        ));
    }
    // A read with structure whose OCR'd pages had no layout model to run says so.
    if settings.layout && pages.iter().any(|p| p.ocr.is_some()) && !ocr::page_layout::installed() {
        warnings.push(ocr::page_layout::MISSING.to_string());
    }
    // An OCR'd page's Markdown: its lines as they are, its tables (rows read in parts)
    // as pipe tables; made before its furniture is found and left out.
    // The running headers and footers the page layout found on OCR'd pages are left out
    // there (unless kept); counted with the pages the furniture across pages is left out of.
    let mut laid_out_furniture = std::collections::BTreeSet::new();
    if settings.markdown {
        for p in pages.iter_mut() {
            if let Some(o) = &p.ocr {
                let (text, left_out) =
                    crate::extract::markdown::ocr_lines(&o.lines, settings.keep_furniture);
                p.text = text;
                if left_out {
                    laid_out_furniture.insert(p.number);
                }
            }
        }
    }
    // Running headers, footers and page numbers across the pages read: header/footer
    // blocks in the document, left out of Markdown (plain text keeps them).
    let furniture = if (settings.markdown || settings.json) && settings.query.is_none() {
        super::furniture::Furniture::find(
            pages
                .iter()
                .filter(|p| p.ocr.is_some() || p.need != Some(OcrReason::GarbledText))
                .map(|p| p.text.as_str()),
        )
    } else {
        Default::default()
    };
    if settings.markdown && !settings.keep_furniture {
        let mut left_out = laid_out_furniture;
        if !furniture.is_empty() {
            for p in pages.iter_mut() {
                let stripped = furniture.strip(&p.text);
                if stripped.len() != p.text.len() {
                    left_out.insert(p.number);
                    p.text = stripped;
                }
            }
        }
        let left_out = left_out.len();
        if left_out > 0 {
            warnings.push(format!(
                "running headers, footers and page numbers left out of the Markdown of {left_out} page{}; furniture: \"keep\" keeps them",
                if left_out == 1 { "" } else { "s" }
            ));
        }
    }
    // Figures, less the decorations repeated page after page.
    let figures = if settings.json || settings.markdown {
        let found: Vec<&[[f32; 4]]> = pages.iter().map(|p| p.figures.as_slice()).collect();
        super::figures::without_decorations(&found)
    } else {
        vec![Vec::new(); pages.len()]
    };
    // Paragraphs, from the lines' boxes (the furniture left out first): Markdown's lines
    // of a paragraph joined (an OCR'd page's lines stay lines), its figures marked where
    // they stand (not on a garbled layer left unread: what is text there is unknown).
    if settings.markdown {
        for (p, figures) in pages.iter_mut().zip(figures.iter()) {
            if p.ocr.is_none() {
                let figures = match p.need {
                    Some(OcrReason::GarbledText) => &[][..],
                    _ => figures.as_slice(),
                };
                p.text = super::paragraphs::markdown(&p.geometry, &p.text, figures);
            }
        }
    }
    let document = settings.json.then(|| crate::model::Document {
        units: pages
            .iter()
            .zip(figures.iter())
            .map(|(p, figures)| {
                let mut blocks = match &p.ocr {
                    Some(o) => ocr::blocks(&o.lines),
                    None if p.need == Some(OcrReason::GarbledText) => Vec::new(),
                    None => p.blocks.clone(),
                };
                furniture.mark(&mut blocks);
                if p.ocr.is_none() {
                    blocks = super::paragraphs::blocks(&p.geometry, blocks);
                    // Not on a garbled layer left unread: what is text there is unknown.
                    if p.need != Some(OcrReason::GarbledText) {
                        blocks = super::figures::place(blocks, figures);
                    }
                }
                blocks.extend(p.note_blocks.iter().cloned());
                crate::model::UnitBlocks::new(
                    crate::model::Unit::numbered(crate::model::UnitKind::Page, p.number),
                    blocks,
                )
            })
            .collect(),
    });
    let pieces = page_texts(&pages);
    extra.ocr_quality = Some(ocr_quality(&pages, &pieces));
    extra.metadata = Some(metadata(doc));

    let query = settings.query.as_ref();
    let mut ex = assemble(pieces, query, settings.max_chars, &unread, &mut extra);
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
    ex.document = document;
    ex.fresh_ocr = fresh;
    ex.cached = from_memory > 0 && ex.fresh_ocr.is_empty();
    Ok(ex)
}

/// The report's OCR keys: pages in the document, pages OCR'd and by which engine, pages
/// skipped, every page that needed OCR with why and how it went, and (`include_boxes`)
/// the OCR lines of each OCR'd page.
fn ocr_report(pages: &[Page], settings: &Settings, total: u64) -> Report {
    let done: Vec<&Page> = pages.iter().filter(|p| p.ocr.is_some()).collect();
    let mut extra = Report {
        total_pages: Some(total),
        ocr_pages: Some(done.len() as u64),
        ocr_engine: settings
            .engine
            .as_deref()
            .filter(|_| !done.is_empty())
            .map(|e| e.name().to_string()),
        skipped_pages: Some(
            pages
                .iter()
                .filter(|p| p.need.is_some() && p.ocr.is_none())
                .map(|p| p.number)
                .collect(),
        ),
        pages_ocr: Some(
            pages
                .iter()
                .filter(|p| p.need.is_some())
                .map(|p| crate::report::PageOcr {
                    page: p.number,
                    reason: p.need.map(|r| r.as_str().to_string()),
                    confidence: p.ocr.as_ref().and_then(|o| o.confidence),
                    status: if p.ocr.is_some() { "done" } else { "skipped" }.to_string(),
                    reread_lines: p
                        .ocr
                        .as_ref()
                        .and_then(|o| crate::ocr::reread_lines(&o.lines)),
                    other_script_lines: p
                        .ocr
                        .as_ref()
                        .and_then(|o| crate::ocr::other_script_lines(&o.lines)),
                    unsupported_script: p
                        .ocr
                        .as_ref()
                        .and_then(|o| crate::ocr::unread_lines(&o.lines, None)),
                })
                .collect(),
        ),
        ..Default::default()
    };
    if settings.include_boxes {
        extra.boxes = Some(Boxes::Pages(
            done.iter()
                .map(|p| PageBoxes {
                    page: p.number,
                    lines: p.ocr.as_ref().map(|o| o.lines.clone()),
                })
                .collect(),
        ));
    }
    extra
}

/// Each page's text as it is shown. Garbled layers are never passed through as text.
fn page_texts(pages: &[Page]) -> Vec<(u64, String)> {
    pages
        .iter()
        .map(|p| {
            let body = if p.ocr.is_none() && p.need == Some(OcrReason::GarbledText) {
                ""
            } else {
                p.text.trim_end()
            };
            if p.notes.is_empty() {
                return (p.number, body.to_string());
            }
            let sep = if body.is_empty() { "" } else { "\n" };
            (p.number, format!("{body}{sep}{}", p.notes.trim_end()))
        })
        .collect()
}

/// How good the text is: no OCR needed, needed but missing, degraded (an OCR'd page with
/// no lines or a line under 0.8) or good; and visible characters per page.
fn ocr_quality(pages: &[Page], pieces: &[(u64, String)]) -> OcrQuality {
    let done: Vec<&Page> = pages.iter().filter(|p| p.ocr.is_some()).collect();
    let visible_chars: usize = pieces
        .iter()
        .map(|(_, t)| t.chars().filter(|c| !c.is_whitespace()).count())
        .sum();
    let degraded = done.iter().any(|p| {
        p.ocr
            .as_ref()
            .is_none_or(|o| o.lines.is_empty() || crate::ocr::unsure_lines(&o.lines).is_some())
    });
    let unread: Vec<crate::report::UnreadLine> = done
        .iter()
        .filter_map(|p| {
            p.ocr
                .as_ref()
                .and_then(|o| crate::ocr::unread_lines(&o.lines, Some(p.number)))
        })
        .flatten()
        .collect();
    let flag = if pages.iter().all(|p| p.need.is_none()) {
        "no_ocr_needed"
    } else if pages.iter().any(|p| p.need.is_some() && p.ocr.is_none()) {
        "no_ocr_engine"
    } else if !unread.is_empty() {
        "unsupported_script"
    } else if degraded {
        "degraded"
    } else {
        "good"
    };
    OcrQuality {
        quality_flag: flag.to_string(),
        ocr_pages: done.len() as u64,
        text_density: (visible_chars as f64 / pages.len() as f64).round(),
        confidence: None,
        reread_lines: None,
        unsure_lines: done
            .iter()
            .filter_map(|p| {
                p.ocr
                    .as_ref()
                    .and_then(|o| crate::ocr::unsure_lines(&o.lines))
            })
            .reduce(|a, b| a + b),
        other_script_lines: done
            .iter()
            .filter_map(|p| {
                p.ocr
                    .as_ref()
                    .and_then(|o| crate::ocr::other_script_lines(&o.lines))
            })
            .reduce(|a, b| a + b),
        unsupported_script: (!unread.is_empty()).then_some(unread),
    }
}

/// The document's information dictionary (dates as ISO 8601) and its first page's size.
fn metadata(doc: &PdfDocument<'_>) -> crate::report::Metadata {
    let mut m = crate::report::Metadata::default();
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
    // From the page's dictionary (boxes and rotation), without loading and parsing the
    // page's content a second time: a one-page read spent a tenth of its time here.
    if let Ok(first) = doc.pages().page_size(0) {
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
    ex.units = crate::model::block_spans(
        blocks.iter().map(|(n, b)| {
            let marker = format!("--- Page {n} ---\n").len();
            (Unit::numbered(UnitKind::Page, *n), marker, b.len())
        }),
        kept.len(),
    );
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
    use super::*;

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
}
