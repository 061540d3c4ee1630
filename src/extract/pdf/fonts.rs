//! Text whose font has no Unicode map (issue #16). An embedded TrueType font written with
//! Identity-H and no `/ToUnicode` gives PDFium nothing to map its codes with, so it hands
//! back each code as if it were a character: with an Identity CIDToGIDMap that code is
//! the glyph id, and the page reads as plausible-looking nonsense (shifted Latin, unrelated
//! CJK). The font's own `cmap` table maps characters to those glyph ids; inverted, it
//! gives the text back, as pdfminer does.
//!
//! Verified on fixtures/pdf/font_*.pdf (see docs/notes/pdf-fonts-findings.md): the code is
//! the glyph id with an Identity CIDToGIDMap; a CIDToGIDMap stream (which PDFium does not
//! expose) makes the inversion wrong, so every recovered font is checked against the page:
//! the outlines of the glyphs the inversion names must have the shapes PDFium measured for
//! the characters drawn. Where nothing maps, the page stays as it was, and the garbled
//! check (verdict.rs) sends it to OCR.
//!
//! Only pages whose text looks suspect are examined (`suspect`): ordinary pages pay one
//! pass over their text.

use std::collections::HashMap;

use pdfium_render::prelude::*;

use super::text::Owner;

/// Whether a page's text might come from codes read as characters: C0 control characters
/// (small glyph ids) in at least 1 % of it, or CJK text mixed with characters no CJK text
/// uses that often. U+0002 is PDFium's own mark for a hyphen at a line end, common in
/// ordinary text (tracemonkey.pdf: a few a page), and does not count. Ordinary pages pay
/// this one pass, not the walk over characters and fonts (which cost 25 % of reading them
/// when one stray control character was enough).
pub(super) fn suspect(text: &str) -> bool {
    let (mut visible, mut controls) = (0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        visible += 1;
        if c.is_control() && c != '\u{2}' {
            controls += 1;
        }
    }
    (controls >= 3 && controls * 100 >= visible) || super::verdict::implausible_cjk(text)
}

/// One character of the page, as PDFium gave it.
struct Char {
    /// The hidden finding it belongs to.
    owner: Owner,
    code: u32,
    generated: bool,
    x: f32,
    /// Which font (index into the fonts found), none for generated characters.
    font: Option<usize>,
    /// Tight box width and height, in points.
    size: Option<(f32, f32)>,
    font_size: f32,
}

/// An embedded font's character map, inverted.
struct Inverse {
    /// Glyph id → the character the font's Unicode `cmap` gives for it.
    by_glyph: HashMap<u16, char>,
    /// Glyph id → its outline's width and height, in font units.
    boxes: HashMap<u16, (f32, f32)>,
    /// Characters the font's `cmap` maps (the forward direction).
    mapped: std::collections::HashSet<char>,
}

impl Inverse {
    fn of(data: &[u8]) -> Option<Self> {
        let face = ttf_parser::Face::parse(data, 0).ok()?;
        let cmap = face.tables().cmap?;
        let mut by_glyph: HashMap<u16, char> = HashMap::new();
        let mut mapped = std::collections::HashSet::new();
        for sub in cmap.subtables.into_iter().filter(|s| s.is_unicode()) {
            sub.codepoints(|cp| {
                let (Some(g), Some(c)) = (sub.glyph_index(cp), char::from_u32(cp)) else {
                    return;
                };
                mapped.insert(c);
                // Several characters may share a glyph: keep the one text uses (not a
                // private-use or compatibility code point), the lowest otherwise.
                let rank = |c: char| (is_private_or_compat(c), c as u32);
                by_glyph
                    .entry(g.0)
                    .and_modify(|e| {
                        if rank(c) < rank(*e) {
                            *e = c
                        }
                    })
                    .or_insert(c);
            });
        }
        if by_glyph.is_empty() {
            return None;
        }
        let boxes = by_glyph
            .keys()
            .filter_map(|&g| {
                let r = face.glyph_bounding_box(ttf_parser::GlyphId(g))?;
                let w = (i32::from(r.x_max) - i32::from(r.x_min)) as f32;
                let h = (i32::from(r.y_max) - i32::from(r.y_min)) as f32;
                (w > 0.0 && h > 0.0).then_some((g, (w, h)))
            })
            .collect();
        Some(Self {
            by_glyph,
            boxes,
            mapped,
        })
    }
}

fn is_private_or_compat(c: char) -> bool {
    matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F900}'..='\u{FAFF}' | '\u{FB00}'..='\u{FFFF}')
}

/// The page's text with the codes of fonts that have no Unicode map turned back into
/// characters through each font's own `cmap`; `None` when no font needed it or none could
/// be recovered with confidence.
pub(super) fn recover(layer: &PdfPageText<'_>) -> Option<String> {
    recover_with(layer, &|_| None).map(|chars| chars.into_iter().map(|c| c.0).collect())
}

/// `recover`, each character with its `owner` (the hidden finding it belongs to).
pub(super) fn recover_with(
    layer: &PdfPageText<'_>,
    owner: &dyn Fn(&PdfPageTextChar<'_>) -> Owner,
) -> Option<Vec<(char, Owner)>> {
    let mut fonts: Vec<Option<Inverse>> = Vec::new();
    let mut font_index: HashMap<String, usize> = HashMap::new();
    let mut chars = Vec::new();
    for c in layer.chars().iter() {
        let generated = c.is_generated().unwrap_or(false);
        let x = c.origin_x().map(|p| p.value).unwrap_or(0.0);
        let font = if generated {
            None
        } else {
            let name = c.font_name();
            let i = match font_index.get(&name) {
                Some(&i) => i,
                None => {
                    let inv = c
                        .text_object()
                        .ok()
                        .and_then(|o| o.font().data().ok())
                        .and_then(|d| Inverse::of(&d));
                    fonts.push(inv);
                    font_index.insert(name, fonts.len() - 1);
                    fonts.len() - 1
                }
            };
            Some(i)
        };
        let size = c
            .tight_bounds()
            .ok()
            .map(|r| (r.width().value, r.height().value))
            .filter(|(w, h)| *w > 0.0 && *h > 0.0);
        chars.push(Char {
            owner: owner(&c),
            code: c.unicode_value(),
            generated,
            x,
            font,
            size,
            font_size: c.scaled_font_size().value,
        });
    }
    let recovered: Vec<bool> = (0..fonts.len())
        .map(|f| font_needs_and_allows_recovery(&chars, f, fonts[f].as_ref()))
        .collect();
    if !recovered.iter().any(|r| *r) {
        return None;
    }
    // Characters, and whether each came from a recovered font.
    let mut out: Vec<(char, f32, bool, Owner)> = Vec::with_capacity(chars.len());
    for c in &chars {
        let from = c.font.filter(|f| recovered[*f]);
        let ch = match (from, c.font.and_then(|f| fonts[f].as_ref())) {
            (Some(_), Some(inv)) => u16::try_from(c.code)
                .ok()
                .and_then(|g| inv.by_glyph.get(&g).copied())
                .unwrap_or('\u{FFFD}'),
            _ => char::from_u32(c.code).unwrap_or('\u{FFFD}'),
        };
        let x = if c.generated {
            out.last().map(|p| p.1).unwrap_or(c.x)
        } else {
            c.x
        };
        out.push((ch, x, from.is_some(), c.owner));
    }
    Some(in_reading_order(out))
}

/// Whether a font's characters are codes, not text, and the font's `cmap` inverted turns
/// them into characters whose outlines have the shapes PDFium measured on the page.
fn font_needs_and_allows_recovery(chars: &[Char], font: usize, inv: Option<&Inverse>) -> bool {
    let Some(inv) = inv else { return false };
    let mine: Vec<&Char> = chars
        .iter()
        .filter(|c| c.font == Some(font) && !matches!(c.code, 0x20 | 0xA0))
        .collect();
    if mine.len() < 3 {
        return false;
    }
    // Text the font maps already (its ToUnicode agreed with its cmap): nothing to do.
    let forward = mine
        .iter()
        .filter(|c| char::from_u32(c.code).is_some_and(|ch| inv.mapped.contains(&ch)))
        .count();
    let inverse = mine
        .iter()
        .filter(|c| u16::try_from(c.code).is_ok_and(|g| inv.by_glyph.contains_key(&g)))
        .count();
    if forward * 10 >= mine.len() * 7 || inverse * 10 < mine.len() * 9 {
        return false;
    }
    shapes_agree(&mine, inv)
}

/// Whether the glyphs the inversion names have the shapes PDFium measured: for each
/// character with a box, its width and height over the named glyph's (scaled by the font
/// size) must be nearly the same ratio throughout. With the wrong glyphs (a CIDToGIDMap
/// stream), the ratios scatter.
fn shapes_agree(mine: &[&Char], inv: &Inverse) -> bool {
    let mut rw = Vec::new();
    let mut rh = Vec::new();
    for c in mine {
        let (Some((w, h)), Ok(g)) = (c.size, u16::try_from(c.code)) else {
            continue;
        };
        let Some(&(gw, gh)) = inv.boxes.get(&g) else {
            continue;
        };
        if c.font_size <= 0.0 {
            continue;
        }
        rw.push(w / (gw * c.font_size));
        rh.push(h / (gh * c.font_size));
    }
    if rw.len() < 3 {
        return false;
    }
    consistent(&mut rw) && consistent(&mut rh)
}

/// Whether at least 80 % of the ratios lie within 12 % of their median.
fn consistent(r: &mut [f32]) -> bool {
    r.sort_by(f32::total_cmp);
    let m = r[r.len() / 2];
    let near = r.iter().filter(|v| (**v - m).abs() <= m * 0.12).count();
    near * 10 >= r.len() * 8
}

/// Lines as PDFium broke them, each in left-to-right order where recovered characters
/// stand: PDFium reorders runs of codes that look right-to-left (glyph ids in the Hebrew
/// and Arabic range), which the positions undo.
fn in_reading_order(chars: Vec<(char, f32, bool, Owner)>) -> Vec<(char, Owner)> {
    let mut text = Vec::with_capacity(chars.len());
    let mut line: Vec<(char, f32, bool, Owner)> = Vec::new();
    let flush = |line: &mut Vec<(char, f32, bool, Owner)>, text: &mut Vec<(char, Owner)>| {
        if line.iter().any(|c| c.2) {
            line.sort_by(|a, b| a.1.total_cmp(&b.1));
        }
        text.extend(line.drain(..).map(|c| (c.0, c.3)));
    };
    for c in chars {
        if matches!(c.0, '\r' | '\n') {
            flush(&mut line, &mut text);
            if c.0 == '\n' {
                text.push(('\n', None));
            }
            continue;
        }
        line.push(c);
    }
    flush(&mut line, &mut text);
    text
}
