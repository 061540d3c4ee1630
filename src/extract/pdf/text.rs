//! A page's native text: its whole text layer (rebuilt character by character when a lone
//! surrogate blanks it; right-to-left runs in logical order), its filled-in form fields,
//! and whether it draws images.

use pdfium_render::prelude::*;

use super::fonts;
use crate::error::{ApiError, ErrorCode};

/// A page's text layer, loaded once a page for its text and for the hidden-text checks.
pub(super) fn layer<'a>(page: &'a PdfPage<'_>) -> Result<PdfPageText<'a>, ApiError> {
    page.text().map_err(|e| {
        ApiError::new(ErrorCode::Corrupt, "a page's text cannot be read").with_cause(e)
    })
}

/// A page's native text: its text layer, then its filled-in form fields under
/// `[Form fields]`.
pub(super) fn native_text(page: &PdfPage<'_>, layer: &PdfPageText<'_>) -> String {
    with_fields(page, page_text(layer))
}

/// The text, then the page's filled-in form fields under `[Form fields]`.
fn with_fields(page: &PdfPage<'_>, text: String) -> String {
    let fields = form_values(page);
    if fields.is_empty() {
        return text;
    }
    format!(
        "{}\n[Form fields]\n{}\n",
        text.trim_end(),
        fields.join("\n")
    )
}

/// A page's native text with the characters of `hidden` text objects (known by their
/// bounds, which PDFium gives alike for the object and for its characters' object)
/// between `⟦hidden: …⟧` (`mark`) or left out (`drop`; a line that held only hidden text
/// goes with it). Built from the characters one by one: on such a page the repairs of
/// `page_text` (right-to-left runs put in logical order, fonts without a Unicode map read
/// through their cmap) are not made.
pub(super) fn native_text_hiding(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    hidden: &[[f32; 4]],
    mark: bool,
) -> String {
    // By their bits: one lookup a character, however many objects are hidden.
    let bits = |b: [f32; 4]| b.map(f32::to_bits);
    let hidden: std::collections::HashSet<[u32; 4]> = hidden.iter().map(|&b| bits(b)).collect();
    let is_hidden = |c: &PdfPageTextChar<'_>| {
        c.text_object()
            .ok()
            .and_then(|o| o.bounds().ok())
            .is_some_and(|q| {
                let b = [
                    q.left().value,
                    q.bottom().value,
                    q.right().value,
                    q.top().value,
                ];
                hidden.contains(&bits(b))
            })
    };
    // UTF-16 units with whether each is hidden, then characters (a pair takes its first
    // unit's flag; a lone surrogate becomes U+FFFD).
    let units: Vec<(u32, bool)> = layer
        .chars()
        .iter()
        .map(|c| (c.unicode_value(), is_hidden(&c)))
        .collect();
    let mut chars: Vec<(char, bool)> = Vec::with_capacity(units.len());
    let mut k = 0;
    while k < units.len() {
        let (u, h) = units[k];
        let c = match u {
            0xD800..=0xDBFF
                if k + 1 < units.len() && (0xDC00..=0xDFFF).contains(&units[k + 1].0) =>
            {
                k += 1;
                char::from_u32(0x10000 + ((u - 0xD800) << 10) + (units[k].0 - 0xDC00))
            }
            _ => char::from_u32(u),
        };
        chars.push((c.unwrap_or('\u{FFFD}'), h));
        k += 1;
    }
    let mut out = String::with_capacity(chars.len());
    let mut span = String::new();
    // Whitespace PDFium put after a hidden span: part of it when more hidden text follows.
    let mut gap = String::new();
    let close = |out: &mut String, span: &mut String, gap: &mut String| {
        if span.is_empty() {
            return;
        }
        let line_start = out.is_empty() || out.ends_with('\n');
        if mark {
            out.push_str("⟦hidden: ");
            out.push_str(span.trim_end());
            out.push('⟧');
        } else if line_start && gap.contains('\n') {
            // The line held only hidden text: it goes, with its break.
            gap.clear();
        }
        span.clear();
    };
    for (c, h) in chars {
        if h {
            // A span ends with its line: each line's hidden text is marked on its own.
            if gap.contains('\n') {
                close(&mut out, &mut span, &mut gap);
                out.push_str(&gap);
                gap.clear();
            }
            span.push_str(&gap);
            gap.clear();
            span.push(c);
        } else if !span.is_empty() && c.is_whitespace() {
            gap.push(c);
        } else {
            close(&mut out, &mut span, &mut gap);
            out.push_str(&gap);
            gap.clear();
            out.push(c);
        }
    }
    close(&mut out, &mut span, &mut gap);
    out.push_str(&gap);
    with_fields(page, out.replace("\r\n", "\n").replace(['\r', '\0'], "\n"))
}

/// The page's text layer, all of it, with `\n` line breaks.
fn page_text(layer: &PdfPageText<'_>) -> String {
    // `all()` keeps only text inside the page-size rectangle anchored at the origin, which
    // drops whole pages whose MediaBox starts elsewhere; ask for everything instead.
    let everywhere = PdfRect::new_from_values(-1.0e7, -1.0e7, 1.0e7, 1.0e7);
    let mut text = layer.inside_rect(everywhere);
    if text.is_empty() && layer.len() > 0 {
        // pdfium-render turns the whole page into "" when PDFium's UTF-16 holds one lone
        // surrogate; rebuild it character by character instead.
        text = char_by_char(layer);
    }
    if fonts::suspect(&text) {
        if let Some(recovered) = fonts::recover(layer) {
            tracing::debug!("text of a font without a Unicode map recovered from its cmap");
            return recovered.replace('\0', "\n");
        }
    }
    if text.chars().any(is_rtl) {
        text = logical_order(layer);
    }
    // PDFium separates lines with CRLF; NULs can appear from broken fonts.
    text.replace("\r\n", "\n").replace(['\r', '\0'], "\n")
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

/// Whether a page draws an image (directly or inside a form XObject).
pub(super) fn has_images(page: &PdfPage<'_>) -> bool {
    page.objects().iter().any(|o| {
        matches!(o.object_type(), PdfPageObjectType::Image)
            || o.as_x_object_form_object().is_some_and(|f| {
                f.iter()
                    .any(|i| i.object_type() == PdfPageObjectType::Image)
            })
    })
}
