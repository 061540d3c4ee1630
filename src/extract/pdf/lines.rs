//! A page's lines mended where PDFium's text layer gets them wrong, from its characters'
//! places: text after a superscript put on a line of its own (`mc²` / ` is`), spaces
//! PDFium invents between the glyphs of letter-spaced text (`H e re i s`), and glyphs a
//! content stream draws right to left in one line (a table row's cells in stream order,
//! `SecondFirst`) put in order by x, and glyphs drawn again over themselves (a bold faked
//! by overprinting, `MMuunniicc`; a shadow, `LTD. LTD.`) shown once. Only pages whose text
//! shows a sign of one of these are read glyph by glyph (`suspect`, a scan of the text):
//! the rest keep PDFium's text as it is, at no cost.

use pdfium_render::prelude::*;

/// One character of the text layer with its place (points, the page's own space).
#[derive(Debug, Clone, Copy)]
pub(super) struct Glyph {
    pub(super) ch: char,
    /// A space PDFium put in (none is drawn there).
    pub(super) generated: bool,
    /// The glyph's origin on its baseline.
    x: f32,
    y: f32,
    /// Its loose box (advance width by the font's ascent and descent); zero-sized when
    /// PDFium has none.
    pub(super) l: f32,
    pub(super) r: f32,
    pub(super) b: f32,
    pub(super) t: f32,
}

impl Glyph {
    fn height(&self) -> f32 {
        self.t - self.b
    }

    /// A drawn glyph with a box to measure.
    fn measured(&self) -> bool {
        !self.generated && !self.ch.is_whitespace() && self.height() > 0.0
    }

    /// How much of the two glyphs' heights is shared.
    fn band_overlap(&self, o: &Glyph) -> f32 {
        self.t.min(o.t) - self.b.max(o.b)
    }

    fn space_between(a: &Glyph, b: &Glyph) -> Glyph {
        Glyph {
            ch: ' ',
            generated: true,
            x: a.r,
            y: a.y,
            l: a.r,
            r: b.l,
            b: a.b,
            t: a.b,
        }
    }
}

#[cfg(test)]
impl Glyph {
    /// A drawn glyph with its box (left, right, bottom, top), for tests.
    pub(super) fn test(ch: char, l: f32, r: f32, b: f32, t: f32) -> Self {
        Glyph {
            ch,
            generated: false,
            x: l,
            y: b,
            l,
            r,
            b,
            t,
        }
    }
}

/// A line of the text layer: its glyphs, spaces included, without its line break.
pub(super) type Line = Vec<Glyph>;

/// At most this many characters are read one by one on a page (a hostile page can hold
/// millions); a page with more keeps PDFium's text.
const MAX_CHARS: usize = 200_000;

/// Whether a page's text shows a sign of a fault `mend` mends: a line after the first that
/// starts with a space or with `,.;:)` (text after a superscript), a line where single
/// letters are three words and a third of them at least, or two single letters in a row
/// (invented spaces), or a word with a capital
/// after a small letter, or with two capitals before two small ones (`SecondFirst`,
/// `BRow`: a line's pieces in stream order). A scan of the text; a sign is no fault,
/// `mend` decides. (Glyphs drawn over themselves have their own sign, `overprinted`.)
pub(super) fn suspect(text: &str) -> bool {
    // Every page's text pays this: one pass over its bytes, words cut at ASCII whitespace.
    let b = text.as_bytes();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    let (mut words, mut singles, mut last_single) = (0usize, 0usize, false);
    let mut i = 0;
    let mut line_start = false;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            if singles >= 3 && singles * 3 >= words {
                return true;
            }
            (words, singles, last_single) = (0, 0, false);
            line_start = true;
            i += 1;
            continue;
        }
        if std::mem::take(&mut line_start)
            && matches!(c, b' ' | b',' | b'.' | b';' | b':' | b')')
            && b[i..]
                .iter()
                .take_while(|&&c| c != b'\n')
                .any(|&c| !space(c))
        {
            return true;
        }
        if space(c) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !space(b[i]) {
            i += 1;
        }
        let w = &text[start..i];
        words += 1;
        let mut cs = w.chars();
        let single = matches!((cs.next(), cs.next()), (Some(c), None) if c.is_alphabetic());
        if single {
            if last_single {
                return true;
            }
            singles += 1;
        }
        last_single = single;
        if joined(w) {
            return true;
        }
    }
    singles >= 3 && singles * 3 >= words
}

/// Whether a page's text shows a sign of glyphs drawn over themselves: a word of each
/// letter twice (`MMuunniicc`), a word of six characters or more twice in a row, a line
/// that is one text twice (`LTD. LTD.`). Such a page has only those mended
/// (`mend(…, false)`): its other lines read as PDFium gives them.
pub(super) fn overprinted(text: &str) -> bool {
    text.lines().any(|line| {
        if twice(line) {
            return true;
        }
        let mut before = "";
        line.split_ascii_whitespace().any(|w| {
            let sign = doubled(w) || (w == before && w.len() >= 6);
            before = w;
            sign
        })
    })
}

/// A word of six characters or more with each one twice in a row (`MMuunniicc`: glyphs
/// drawn twice over, a bold faked by overprinting).
fn doubled(w: &str) -> bool {
    if w.len() < 6 {
        return false;
    }
    let mut cs = w.chars();
    let mut n = 0;
    while let Some(a) = cs.next() {
        if cs.next() != Some(a) {
            return false;
        }
        n += 2;
    }
    n >= 6
}

/// A line that is the same text twice, a space between (`CO.,LTD. CO.,LTD.`: a line drawn
/// twice over, as a shadow).
fn twice(line: &str) -> bool {
    let line = line.trim_matches([' ', '\r']);
    let half = line.len() / 2;
    line.len() >= 13
        && line.len() % 2 == 1
        && line.is_char_boundary(half)
        && line.as_bytes()[half] == b' '
        && line[..half] == line[half + 1..]
}

/// A word that reads like two glued together: a capital after a small letter, or a
/// capital and a word that starts with one (`BRow`; not a plural like `VMs`).
fn joined(w: &str) -> bool {
    let b = w.as_bytes();
    (1..b.len()).any(|i| {
        let (p, c) = (b[i - 1], b[i]);
        (p.is_ascii_lowercase() && c.is_ascii_uppercase())
            || (i >= 2
                && p.is_ascii_uppercase()
                && c.is_ascii_lowercase()
                && b[i - 2].is_ascii_uppercase()
                && b.get(i + 1).is_some_and(u8::is_ascii_lowercase))
    })
}

/// The page's lines as PDFium's text of a rectangle holding the page gives them (what
/// `text::page_text` reads), each character with its place; `None` past `MAX_CHARS`.
/// That text is not the characters' own stream: PDFium leaves out its generated line
/// breaks and characters without a box, and breaks a line only where the baseline moved
/// since the last break (`CPDF_TextPage::GetTextByPredicate`), which is followed here
/// step by step so that a page with nothing to mend reads exactly as before.
pub(super) fn read(layer: &PdfPageText<'_>) -> Option<Vec<Line>> {
    let chars = layer.chars();
    if chars.len() > MAX_CHARS {
        return None;
    }
    let mut lines: Vec<Line> = vec![Vec::new()];
    let mut high: Option<u32> = None;
    let (mut line_y, mut after_char, mut break_due) = (0.0f32, false, false);
    let mut empty = true;
    for c in chars.iter() {
        let u = c.unicode_value();
        let (x, y) = c
            .origin()
            .map(|(x, y)| (x.value, y.value))
            .unwrap_or((0.0, 0.0));
        let loose = c.loose_bounds().ok().map(|q| {
            (
                q.left().value,
                q.right().value,
                q.bottom().value,
                q.top().value,
            )
        });
        // PDFium asks whether the character's own box meets the rectangle; the loose box
        // stands in for it (a call a character less), and the text compared after `read`
        // says whether the stand-in held on the page.
        let shown = loose.is_some_and(|(l, r, b, t)| r > l && t > b);
        if !shown {
            if u == ' ' as u32 {
                if after_char {
                    // A space without a box: never measured, only its flag counts.
                    lines.last_mut().expect("a line").push(Glyph {
                        generated: c.is_generated().unwrap_or(true),
                        ..ZERO
                    });
                    after_char = false;
                    break_due = false;
                }
            } else {
                after_char = false;
                break_due = true;
            }
            continue;
        }
        if (line_y - y).abs() > 0.0 && !after_char && break_due {
            line_y = y;
            if !empty {
                lines.push(Vec::new());
            }
        }
        after_char = true;
        break_due = false;
        if u == 0 {
            continue;
        }
        // UTF-16 units: a pair is one character, a lone surrogate U+FFFD.
        let ch = match u {
            0xD800..=0xDBFF => {
                high = Some(u);
                continue;
            }
            0xDC00..=0xDFFF => match high.take() {
                Some(h) => char::from_u32(0x10000 + ((h - 0xD800) << 10) + (u - 0xDC00)),
                None => None,
            },
            _ => char::from_u32(u),
        };
        if high.take().is_some() {
            lines.last_mut().expect("a line").push(Glyph {
                ch: '\u{FFFD}',
                ..ZERO
            });
        }
        let (l, r, b, t) = loose.unwrap_or((x, x, y, y));
        let finite = [x, y, l, r, b, t].iter().all(|v| v.is_finite());
        let (x, y, l, r, b, t) = if finite {
            (x, y, l, r, b, t)
        } else {
            (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        };
        empty = false;
        lines.last_mut().expect("a line").push(Glyph {
            ch: ch.unwrap_or('\u{FFFD}'),
            generated: false,
            x,
            y,
            l,
            r,
            b,
            t,
        });
    }
    Some(lines)
}

/// A glyph of no size at the origin.
const ZERO: Glyph = Glyph {
    ch: ' ',
    generated: true,
    x: 0.0,
    y: 0.0,
    l: 0.0,
    r: 0.0,
    b: 0.0,
    t: 0.0,
};

/// The lines' text as PDFium writes it: a line `\r\n` apart, the characters as they are
/// (a glyph may be a `\r`).
pub(super) fn text(lines: &[Line]) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        out.extend(line.iter().map(|g| g.ch));
    }
    out
}

/// The lines mended (see the module), and whether anything changed; with `all` false
/// only the glyphs drawn over themselves (`overprinted`).
pub(super) fn mend(mut lines: Vec<Line>, all: bool) -> (Vec<Line>, bool) {
    let mut changed = without_overprints(&mut lines);
    if !all {
        return (lines, changed);
    }
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for line in lines {
        if let Some(prev) = out.last_mut() {
            if let Some(space) = continues(prev, &line) {
                if let Some(s) = space {
                    prev.push(s);
                }
                prev.extend(line);
                changed = true;
                continue;
            }
        }
        out.push(line);
    }
    for line in out.iter_mut() {
        changed |= in_order(line);
        changed |= without_invented_spaces(line);
    }
    (out, changed)
}

/// Whether `next` is the rest of `prev`'s line, PDFium having broken it where the
/// baseline moved (after a superscript, or before one): its first glyph goes on right
/// after `prev`'s last (no further on than the taller one's loose box is high), the two
/// glyphs sharing at least half the smaller one's height, on baselines apart.
/// `Some(space)` says so, with the space to put between them when neither side has one
/// and they stand apart.
fn continues(prev: &Line, next: &Line) -> Option<Option<Glyph>> {
    let a = prev.iter().rev().find(|g| g.measured())?;
    let b = next.iter().find(|g| g.measured())?;
    let (ha, hb) = (a.height(), b.height());
    let (lo, hi) = (ha.min(hb), ha.max(hb));
    let gap = b.l - a.r;
    let apart = (a.y - b.y).abs() > 0.1 * lo;
    if !(apart && gap >= -0.3 * lo && gap <= hi && a.band_overlap(b) > 0.5 * lo) {
        return None;
    }
    let spaced = prev.last().is_some_and(|g| g.ch.is_whitespace())
        || next.first().is_some_and(|g| g.ch.is_whitespace());
    Some((!spaced && gap > 0.2 * lo).then(|| Glyph::space_between(a, b)))
}

/// Puts a left-to-right line's pieces in order by x where the content stream drew them
/// otherwise: the line is cut where a glyph starts more than half an em left of the one
/// before it on the same band, the pieces ordered by where they start, a space between
/// two that stand apart. Lines with right-to-left text are left alone (their order is
/// `text::logical_order_with`'s).
fn in_order(line: &mut Line) -> bool {
    if line.iter().any(|g| super::text::is_rtl(g.ch)) {
        return false;
    }
    let mut cuts = Vec::new();
    let mut last: Option<&Glyph> = None;
    for (i, g) in line.iter().enumerate() {
        if !g.measured() {
            continue;
        }
        if let Some(p) = last {
            let h = p.height().max(g.height());
            let same_band = p.band_overlap(g) > 0.3 * p.height().min(g.height());
            if same_band && g.x < p.l - 0.5 * h {
                cuts.push(i);
            }
        }
        last = Some(g);
    }
    if cuts.is_empty() {
        return false;
    }
    let original = line.clone();
    let mut pieces: Vec<Line> = Vec::with_capacity(cuts.len() + 1);
    let mut rest = std::mem::take(line);
    for &at in cuts.iter().rev() {
        pieces.push(rest.split_off(at));
    }
    pieces.push(rest);
    pieces.reverse();
    // Pieces keep their own glyphs; the spaces PDFium put at their ends go.
    for p in pieces.iter_mut() {
        while p.last().is_some_and(|g| g.generated) {
            p.pop();
        }
        while p.first().is_some_and(|g| g.generated) {
            p.remove(0);
        }
    }
    pieces.retain(|p| !p.is_empty());
    let start = |p: &Line| {
        p.iter()
            .filter(|g| g.measured())
            .map(|g| g.l)
            .fold(f32::INFINITY, f32::min)
    };
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    order.sort_by(|&a, &b| start(&pieces[a]).total_cmp(&start(&pieces[b])));
    if order.windows(2).all(|w| w[0] < w[1]) {
        // In order already (a piece drawn over another): the line stays as PDFium made it.
        *line = original;
        return false;
    }
    let mut pieces: Vec<Option<Line>> = pieces.into_iter().map(Some).collect();
    for p in order.into_iter().filter_map(|k| pieces[k].take()) {
        if let (Some(a), Some(b)) = (
            line.iter().rev().find(|g| g.measured()).copied(),
            p.iter().find(|g| g.measured()),
        ) {
            let spaced = line.last().is_some_and(|g| g.ch.is_whitespace())
                || p.first().is_some_and(|g| g.ch.is_whitespace());
            if !spaced && b.l - a.r > 0.15 * a.height().min(b.height()) {
                line.push(Glyph::space_between(&a, b));
            }
        }
        line.extend(p);
    }
    true
}

/// Takes out glyphs drawn again over themselves: the same character whose box stands
/// within a tenth of its height (a point at least) of one kept before it on the page — a
/// bold faked by drawing each glyph twice a little apart (`MMuunniicc`), a line drawn twice
/// as a shadow (`LTD. LTD.`). Only on a line where such glyphs are three at least and a
/// third of its glyphs: a ligature PDFium splits into letters in one box (`ﬀ` as `f`, `f`)
/// is no overprint. Spaces left doubled or at a line's end by that go too, and lines left
/// empty. A glyph drawn twice in one place is ink on ink: it shows once.
fn without_overprints(lines: &mut Vec<Line>) -> bool {
    // Kept glyphs by character and a grid of cells as large as the tolerance.
    let mut seen: std::collections::HashMap<(char, i32, i32), Vec<(f32, f32)>> =
        std::collections::HashMap::new();
    let mut changed = false;
    for line in lines.iter_mut() {
        let mut again = vec![false; line.len()];
        let mut measured = 0usize;
        // A drawn glyph with a box of its own to compare.
        let boxed = |g: &Glyph| g.measured() && g.r > g.l;
        for (k, g) in line.iter().enumerate() {
            if !boxed(g) {
                continue;
            }
            measured += 1;
            let tol = (0.1 * g.height()).max(1.0);
            let (cx, cy) = ((g.l / tol).floor() as i32, (g.b / tol).floor() as i32);
            again[k] = (-1..=1).any(|dx| {
                (-1..=1).any(|dy| {
                    seen.get(&(g.ch, cx + dx, cy + dy)).is_some_and(|v| {
                        v.iter()
                            .any(|(x, y)| (x - g.l).abs() <= tol && (y - g.b).abs() <= tol)
                    })
                })
            });
            if !again[k] {
                seen.entry((g.ch, cx, cy)).or_default().push((g.l, g.b));
            }
        }
        // Only a pattern of overprinting goes: a glyph right after its own twin (a faked
        // bold), or three glyphs again in a row (a shadow) — never letters here and there
        // that happen to stand where the same letter stood (two texts over each other).
        let mut drop = vec![false; line.len()];
        let (mut run, mut last): (Vec<usize>, Option<usize>) = (Vec::new(), None);
        for k in 0..line.len() {
            if !boxed(&line[k]) {
                continue;
            }
            if again[k] {
                if last.is_some_and(|p| line[p].ch == line[k].ch && !again[p]) {
                    drop[k] = true;
                }
                run.push(k);
            } else {
                if run.len() >= 3 {
                    run.iter().for_each(|&r| drop[r] = true);
                }
                run.clear();
            }
            last = Some(k);
        }
        if run.len() >= 3 {
            run.iter().for_each(|&r| drop[r] = true);
        }
        let twice = drop.iter().filter(|d| **d).count();
        if twice < 3 || twice * 3 < measured {
            continue;
        }
        changed = true;
        let mut k = 0;
        line.retain(|_| {
            k += 1;
            !drop[k - 1]
        });
        // Spaces left side by side, or at the line's end, go.
        let mut space_before = true;
        line.retain(|g| {
            let space = g.ch == ' ';
            let keep = !(space && space_before);
            space_before = space;
            keep
        });
        while line.last().is_some_and(|g| g.ch == ' ') {
            line.pop();
        }
    }
    if changed {
        lines.retain(|l| !l.is_empty());
    }
    changed
}

/// Takes out the spaces PDFium put between the letters of a letter-spaced line: where
/// the glyphs of a line that PDFium left together (three pairs at least) stand apart by a
/// typical gap of more than 6 % of their height (tracking, not kerning), a space PDFium
/// put in stays only where the gap is that typical gap and 15 % of the height more (a
/// word space on top of the tracking). Ordinary lines (letters about touching) are left
/// as PDFium made them.
fn without_invented_spaces(line: &mut Line) -> bool {
    // Each drawn glyph's gap to the next, unless a drawn space stands between them.
    let mut gaps: Vec<(usize, f32, f32)> = Vec::new(); // (index of a generated space or MAX, gap, height)
    let mut prev: Option<usize> = None;
    let mut between: Option<usize> = None;
    let mut literal = false;
    for (i, g) in line.iter().enumerate() {
        if g.measured() {
            if let Some(p) = prev {
                let a = &line[p];
                let h = a.height().min(g.height());
                if !literal && a.band_overlap(g) > 0.5 * h && g.l >= a.l {
                    gaps.push((between.unwrap_or(usize::MAX), g.l - a.r, h));
                }
            }
            prev = Some(i);
            between = None;
            literal = false;
        } else if g.generated && g.ch == ' ' {
            between = Some(i);
        } else {
            literal = true;
        }
    }
    // The typical gap between letters: of the glyphs with nothing between them.
    let mut sorted: Vec<f32> = gaps
        .iter()
        .filter(|g| g.0 == usize::MAX)
        .map(|g| g.1)
        .collect();
    if sorted.len() < 3 || sorted.len() == gaps.len() {
        return false;
    }
    sorted.sort_by(f32::total_cmp);
    let typical = sorted[sorted.len() / 2];
    let mut heights: Vec<f32> = gaps.iter().map(|g| g.2).collect();
    heights.sort_by(f32::total_cmp);
    let h = heights[heights.len() / 2];
    if !(typical > 0.06 * h) {
        return false;
    }
    let drop: std::collections::HashSet<usize> = gaps
        .iter()
        .filter(|(at, gap, h)| *at != usize::MAX && *gap < typical + 0.15 * h)
        .map(|g| g.0)
        .collect();
    if drop.is_empty() {
        return false;
    }
    let mut k = 0;
    line.retain(|_| {
        let keep = !drop.contains(&k);
        k += 1;
        keep
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_of_a_fault() {
        assert!(suspect("Energy E = mc2\n is famous"));
        assert!(suspect("E = mc2\n, which"));
        assert!(suspect("H e re i s so me text"));
        assert!(suspect("SecondFirst"));
        assert!(suspect("Row two BRow two A"));
        assert!(!suspect(
            "An ordinary line of text.\nAnd another one, in a PDF."
        ));
        assert!(suspect("Here i s some text"));
        assert!(!suspect("NASA and PDF are capitals; I have a dog"));
        assert!(!suspect("VMs and ISAs are plurals"));
        assert!(!suspect("Total\n\n12"));
        // Overprinted: each glyph twice, a word twice, a line twice.
        assert!(overprinted("MMuunniicciippaalliittéé ddee"));
        assert!(overprinted("股票代码 ：300218 ：300218"));
        assert!(overprinted("ANHUI ANLI CO.,LTD. ANHUI ANLI CO.,LTD.\nnext"));
        assert!(!overprinted(
            "Balloon committee: see the coffee.\nIt had had effects."
        ));
    }

    #[test]
    fn glyphs_drawn_again_over_themselves_show_once() {
        let g = |ch, x: f32, y: f32| Glyph::test(ch, x, x + 6.0, y, y + 10.0);
        let space = |x: f32, y: f32| Glyph {
            ch: ' ',
            generated: true,
            ..Glyph::test(' ', x, x, y, y)
        };
        // A faked bold (each glyph twice, 0.3 pt apart), then a shadow line drawn again.
        let mut lines = vec![
            vec![
                g('B', 0.0, 0.0),
                g('B', 0.3, 0.0),
                g('e', 6.0, 0.0),
                g('e', 6.3, 0.0),
                g('d', 12.0, 0.0),
                g('d', 12.3, 0.0),
            ],
            vec![
                g('L', 0.0, 20.0),
                g('T', 6.0, 20.0),
                g('A', 12.0, 20.0),
                space(18.0, 20.0),
                g('L', 0.5, 20.2),
                g('T', 6.5, 20.2),
                g('A', 12.5, 20.2),
            ],
            vec![g('L', 0.2, 20.1), g('T', 6.2, 20.1), g('A', 12.2, 20.1)],
            // The same letters a line further down are text of their own.
            vec![g('L', 0.0, 40.0), g('T', 6.0, 40.0), g('A', 12.0, 40.0)],
        ];
        assert!(without_overprints(&mut lines));
        let texts: Vec<String> = lines
            .iter()
            .map(|l| l.iter().map(|g| g.ch).collect())
            .collect();
        assert_eq!(texts, ["Bed", "LTA", "LTA"]);
        let mut plain = vec![vec![g('a', 0.0, 0.0), g('a', 6.0, 0.0)]];
        assert!(!without_overprints(&mut plain));
        // A ligature split into letters in one box (`di` `f` `f` `icult`) stays.
        let mut ligature = vec![vec![
            g('d', 0.0, 0.0),
            g('i', 6.0, 0.0),
            g('f', 12.0, 0.0),
            g('f', 12.0, 0.0),
            g('i', 18.0, 0.0),
            g('c', 24.0, 0.0),
        ]];
        assert!(!without_overprints(&mut ligature));
        assert_eq!(ligature[0].len(), 6);
    }
}
