//! Text a person does not see on a PDF page (issue #21), from the page's text objects —
//! their render mode, font size and bounds, one walk over the objects, no per-character
//! calls: `invisible_render_mode` (render mode 3, but not the invisible text layer of an
//! OCR'd scan, which lies over a page-sized image), `tiny_text` (under 1.5 pt as drawn) and
//! `off_page` (wholly outside the crop box). Text objects inside form XObjects are not
//! walked yet, nor colours (`low_contrast`) or drawing order (`covered`).

use pdfium_render::prelude::*;

/// What a page hides: kind, its text, and characters.
#[derive(Debug, Clone)]
pub struct PageHidden {
    pub kind: &'static str,
    pub text: String,
}

/// Smaller than this (points, as drawn) no one reads it.
const TINY_PT: f32 = 1.5;

pub(super) fn scan(page: &PdfPage<'_>) -> Vec<PageHidden> {
    let objects = page.objects();
    let (w, h) = (page.width().value, page.height().value);
    // In the page's own (unrotated) space, as object bounds are: the crop box, else the
    // media box (width and height are the rotated page's).
    let crop = page
        .boundaries()
        .crop()
        .or_else(|_| page.boundaries().media())
        .map(|b| b.bounds)
        .ok()
        .map(|r| {
            (
                r.left().value,
                r.bottom().value,
                r.right().value,
                r.top().value,
            )
        })
        .unwrap_or((0.0, 0.0, w.max(h), w.max(h)));
    let mut suspects: Vec<(&'static str, usize)> = Vec::new();
    let mut page_image = false;
    for (i, o) in objects.iter().enumerate() {
        match o.object_type() {
            PdfPageObjectType::Image => {
                // An image over most of the page: a scan, whose OCR layer is invisible text.
                if let Ok(b) = o.bounds() {
                    let area = b.width().value * b.height().value;
                    page_image |= area >= 0.5 * w * h;
                }
            }
            PdfPageObjectType::Text => {
                let Some(t) = o.as_text_object() else {
                    continue;
                };
                let bounds = o.bounds().ok().map(|b| {
                    (
                        b.left().value,
                        b.bottom().value,
                        b.right().value,
                        b.top().value,
                    )
                });
                // The font size times the text matrix; the bounds add the page's transform
                // (figures scale their labels), so both must be small.
                let tiny = t.scaled_font_size().value < TINY_PT
                    && bounds.is_none_or(|(_, b, _, t)| (t - b).abs() < TINY_PT);
                let kind = if t.render_mode() == PdfPageTextRenderMode::Invisible {
                    Some("invisible_render_mode")
                } else if tiny {
                    Some("tiny_text")
                } else {
                    bounds.and_then(|(l, b, r, t)| {
                        let outside = r < crop.0 || l > crop.2 || t < crop.1 || b > crop.3;
                        outside.then_some("off_page")
                    })
                };
                if let Some(k) = kind {
                    suspects.push((k, i));
                }
            }
            _ => {}
        }
    }
    if suspects.is_empty() {
        return Vec::new();
    }
    // Their text, through one text page (each object's own call would load one).
    let Ok(text_page) = page.text() else {
        return Vec::new();
    };
    let mut out: Vec<PageHidden> = Vec::new();
    for (kind, i) in suspects {
        if kind == "invisible_render_mode" && page_image {
            continue;
        }
        let Ok(o) = objects.get(i) else { continue };
        let Some(t) = o.as_text_object() else {
            continue;
        };
        let text = text_page.for_object(t);
        if text.trim().is_empty() {
            continue;
        }
        match out.iter_mut().find(|p| p.kind == kind) {
            Some(p) => {
                if !p.text.ends_with(' ') && !text.starts_with(' ') {
                    p.text.push(' ');
                }
                p.text.push_str(&text);
            }
            None => out.push(PageHidden { kind, text }),
        }
    }
    // A stray letter or two (a figure's label, a glyph drawn for kerning) hides nothing.
    out.retain(|p| p.text.chars().filter(|c| c.is_alphanumeric()).count() >= 4);
    out
}
