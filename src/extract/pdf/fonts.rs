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

use super::differences::{CodeMap, PageFonts};
use super::text::Owner;

/// Whether a page's text might come from codes read as characters: C0 control characters
/// (small glyph ids) in at least 1 % of it, or CJK text mixed with characters no CJK text
/// uses that often. U+0002 is PDFium's own mark for a hyphen at a line end, common in
/// ordinary text (tracemonkey.pdf: a few a page), and does not count. Ordinary pages pay
/// this one pass, not the walk over characters and fonts (which cost 25 % of reading them
/// when one stray control character was enough). Also a page whose text is mostly ASCII
/// punctuation a text seldom uses (`!"#$%&'()+/:;<>?@[]^{|}~`: a Type3 font's codes from
/// 32 up read as characters, `! !` for `AA A`); dots, dashes, commas and the like fill
/// contents pages and tables and do not count.
pub(super) fn suspect(text: &str) -> bool {
    let (mut visible, mut controls, mut codes) = (0usize, 0usize, 0usize);
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        visible += 1;
        if c.is_control() && c != '\u{2}' {
            controls += 1;
        } else if c.is_ascii_punctuation() && !matches!(c, '.' | ',' | '-' | '_' | '=' | '*') {
            codes += 1;
        }
    }
    (controls >= 3 && controls * 100 >= visible)
        || (codes >= 2 && codes * 2 > visible)
        || super::verdict::implausible_cjk(text)
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
    /// Its text object's box (by its bits), for the characters of a Type3 font: one text
    /// object draws with one font.
    object: Option<[u32; 4]>,
    /// Its advance for a font size of 1 (PDFium's loose box), for a Type3 font's.
    advance: Option<f32>,
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
pub(super) fn recover(layer: &PdfPageText<'_>, type3: PageFonts<'_>) -> Option<String> {
    recover_with(layer, &|_| None, type3).map(|chars| chars.into_iter().map(|c| c.0).collect())
}

/// A font of the page, as far as recovery goes.
struct Font {
    /// Its embedded program's `cmap`, inverted.
    inverse: Option<Inverse>,
    /// Embedded without a program: a Type3 font (its glyphs are drawings in the PDF).
    type3: bool,
}

/// `recover`, each character with its `owner` (the hidden finding it belongs to); the
/// codes of Type3 fonts through the glyph names of the page's Type3 fonts (`type3`).
pub(super) fn recover_with(
    layer: &PdfPageText<'_>,
    owner: &dyn Fn(&PdfPageTextChar<'_>) -> Owner,
    type3: PageFonts<'_>,
) -> Option<Vec<(char, Owner)>> {
    let mut fonts: Vec<Font> = Vec::new();
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
                    let (data, embedded) = c
                        .text_object()
                        .ok()
                        .map(|o| {
                            let font = o.font();
                            (font.data().ok(), font.is_embedded().unwrap_or(false))
                        })
                        .unwrap_or((None, false));
                    let program = data.filter(|d| !d.is_empty());
                    fonts.push(Font {
                        type3: embedded && program.is_none(),
                        inverse: program.and_then(|d| Inverse::of(&d)),
                    });
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
        let font_size = c.scaled_font_size().value;
        let (object, advance) = match font {
            Some(f) if fonts[f].type3 => (
                c.text_object()
                    .ok()
                    .and_then(|o| o.bounds().ok())
                    .map(|q| [q.left(), q.bottom(), q.right(), q.top()].map(|v| v.value.to_bits())),
                c.loose_bounds()
                    .ok()
                    .filter(|_| font_size > 0.0)
                    .map(|r| r.width().value / font_size),
            ),
            _ => (None, None),
        };
        chars.push(Char {
            owner: owner(&c),
            code: c.unicode_value(),
            generated,
            x,
            font,
            object,
            advance,
            size,
            font_size,
        });
    }
    let maps = if fonts.iter().any(|f| f.type3) {
        type3.type3()
    } else {
        Default::default()
    };
    let named = named_codes(&chars, &maps);
    let recovered: Vec<bool> = (0..fonts.len())
        .map(|f| {
            if fonts[f].type3 {
                type3_recovered(&chars, f, &named)
            } else {
                font_needs_and_allows_recovery(&chars, f, fonts[f].inverse.as_ref())
            }
        })
        .collect();
    if !recovered.iter().any(|r| *r) {
        return None;
    }
    // Characters, and whether each came from a recovered font.
    let mut out: Vec<(char, f32, bool, Owner)> = Vec::with_capacity(chars.len());
    // Where the Type3 glyph before ended on its line, and its font size: a gap after it of
    // a quarter of that size or more is a space (a code 32 that is a letter, and the word
    // spacing `Tw` adds after it: PDFium saw the space in the code, not in the gap).
    let mut type3_end: Option<(f32, f32)> = None;
    for (k, c) in chars.iter().enumerate() {
        let from = c.font.filter(|f| recovered[*f]);
        if from.is_some_and(|f| fonts[f].type3) {
            if let Some((end, size)) = type3_end {
                let gap = c.x - end;
                let spaced = out.last().is_some_and(|p| p.0.is_whitespace());
                if !spaced && gap >= 0.25 * size && gap < 50.0 * size {
                    out.push((' ', end, false, c.owner));
                }
            }
            type3_end = c
                .advance
                .filter(|a| a.is_finite() && c.font_size > 0.0)
                .map(|a| (c.x + a * c.font_size, c.font_size));
            // A glyph name's text (one or more characters), kept in PDFium's order.
            match named.get(k).copied().flatten() {
                Some(text) => out.extend(text.chars().map(|ch| (ch, c.x, false, c.owner))),
                None => out.push(('\u{FFFD}', c.x, false, c.owner)),
            }
            continue;
        }
        type3_end = None;
        let ch = match (from, c.font.and_then(|f| fonts[f].inverse.as_ref())) {
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

/// Each character's text through the glyph names of the Type3 font its text object draws
/// with (indexed as `chars`): for each text object, of the page's Type3 fonts, the one
/// whose names give text for most of its codes and whose advances agree with the ones
/// PDFium measured for most of them.
fn named_codes<'m>(chars: &[Char], maps: &'m [CodeMap]) -> Vec<Option<&'m str>> {
    let mut named = vec![None; chars.len()];
    if maps.is_empty() {
        return named;
    }
    let mut objects: HashMap<[u32; 4], Vec<usize>> = HashMap::new();
    for (k, c) in chars.iter().enumerate() {
        if let Some(o) = c.object {
            objects.entry(o).or_default().push(k);
        }
    }
    for members in objects.values() {
        let score = |m: &CodeMap| {
            members
                .iter()
                .map(|&k| {
                    let c = &chars[k];
                    let text = usize::from(m.text(c.code).is_some());
                    let width = match (m.width(c.code), c.advance) {
                        (Some(w), Some(a)) => usize::from((w - a).abs() <= 0.02 * w.max(0.05)),
                        _ => 0,
                    };
                    2 * text + width
                })
                .sum::<usize>()
        };
        let Some(best) = maps.iter().max_by_key(|m| score(m)) else {
            continue;
        };
        for &k in members {
            named[k] = best.text(chars[k].code);
        }
    }
    named
}

/// Whether a Type3 font's characters read through glyph names: at least 80 % of them
/// have a name that gives text.
fn type3_recovered(chars: &[Char], font: usize, named: &[Option<&str>]) -> bool {
    let (mut all, mut read) = (0usize, 0usize);
    for (k, _) in chars
        .iter()
        .enumerate()
        .filter(|(_, c)| c.font == Some(font))
    {
        all += 1;
        read += usize::from(named.get(k).copied().flatten().is_some());
    }
    all > 0 && read * 10 >= all * 8
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
