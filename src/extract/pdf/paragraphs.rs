//! Paragraphs of a PDF page's text layer (Markdown and `output: "json"`; plain text stays
//! line-faithful). PDFium gives lines; each line's place and size come from its characters'
//! boxes, and two lines that follow each other are one paragraph when they are of one size,
//! the second right under the first (no more than ordinary line spacing), starting where
//! the paragraph's lines start (not indented, not in another column), the first running on
//! to near the column's right edge, and the second not a list item. A word broken over the
//! line end by a hyphen is joined again (`infor-` + `mation`).

use pdfium_render::prelude::*;

/// A line of the text layer: its letters (as `squash` gives them) and its box.
#[derive(Debug, Clone)]
struct LineBox {
    key: String,
    left: f32,
    right: f32,
    /// The bottom of its characters' loose boxes (the baseline less the font's descent):
    /// the same for every line of one font and size.
    bottom: f32,
    /// The height of its characters' loose boxes (the font's size, about).
    height: f32,
}

/// The lines of a page's text layer with their boxes, in the layer's order.
#[derive(Debug, Default)]
pub(super) struct Geometry {
    lines: Vec<LineBox>,
    /// Each line's index by its letters, in order (where a text line is looked for).
    by_key: std::collections::HashMap<String, Vec<usize>>,
    /// Each line's column's right edge: the furthest right any line starting where it
    /// starts (within its height) reaches, or its block's own where that is far short.
    column_right: Vec<f32>,
    /// The most line pitch (baseline to baseline, in line heights) that is still one
    /// paragraph's: ordinary spacing, or the page's own where it sets its lines wider.
    spacing: f32,
    /// The page as it is shown (boxes are given from its top-left).
    frame: Frame,
}

/// A page as it is shown: its crop box in the page's own space and its rotation, to turn
/// a point of the page's space into one from the top-left of the page as displayed.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Frame {
    l: f32,
    b: f32,
    r: f32,
    t: f32,
    /// Clockwise quarter turns (`/Rotate` ÷ 90).
    quarters: u8,
}

impl Frame {
    /// The crop box's area, in square points.
    pub(super) fn area(&self) -> f32 {
        (self.r - self.l).abs() * (self.t - self.b).abs()
    }

    pub(super) fn of(page: &PdfPage<'_>) -> Self {
        let quarters = match page.rotation() {
            Ok(PdfPageRenderRotation::Degrees90) => 1,
            Ok(PdfPageRenderRotation::Degrees180) => 2,
            Ok(PdfPageRenderRotation::Degrees270) => 3,
            _ => 0,
        };
        let crop = super::geometry::crop_box(page, page.width().value, page.height().value);
        Self {
            l: crop.l,
            b: crop.b,
            r: crop.r,
            t: crop.t,
            quarters,
        }
    }

    /// A point of the page's space (origin bottom-left, y up) from the top-left of the
    /// page as shown (y down), rotation and crop box applied.
    pub(super) fn shown(&self, x: f32, y: f32) -> (f32, f32) {
        match self.quarters {
            1 => (y - self.b, x - self.l),
            2 => (self.r - x, y - self.b),
            3 => (self.t - y, self.r - x),
            _ => (x - self.l, self.t - y),
        }
    }
}

impl Frame {
    /// A box of the page's own space (left, bottom, right, top) as blocks give it: from the
    /// top-left of the page as shown, `[left, top, right, bottom]`, to a tenth of a point.
    pub(super) fn bbox(&self, (l, bottom, r, top): (f32, f32, f32, f32)) -> [f32; 4] {
        let (p, q) = (self.shown(l, bottom), self.shown(r, top));
        let tenth = |v: f32| (v * 10.0).round() / 10.0;
        [
            tenth(p.0.min(q.0)),
            tenth(p.1.min(q.1)),
            tenth(p.0.max(q.0)),
            tenth(p.1.max(q.1)),
        ]
    }
}

/// How far past the cursor a heading, header or footer's own line may be found.
const NEAR: usize = 8;

/// Ordinary line spacing at most, in line heights (a loose box's height is about the
/// font's size and a fifth).
const SPACING: f32 = 1.45;
/// A page's own spacing is taken from this pitch on (a LaTeX page's ordinary 1.4 is not:
/// its displayed formulas stand at 1.5 and are lines of their own).
const WIDE_SPACING: f32 = 1.5;
/// The widest spacing a page's own may make one paragraph's (CJK text is often set at
/// 160–180 % of its size: 1.5–1.6 loose heights).
const MAX_SPACING: f32 = 2.0;

/// At most this many characters are measured on a page (a hostile page can hold millions).
const MAX_CHARS: usize = 200_000;

impl Geometry {
    /// The page's lines with their boxes: `mended`'s where `lines::mend` made the page's
    /// text, else the layer's own.
    pub(super) fn read(
        layer: &PdfPageText<'_>,
        frame: Frame,
        mended: Option<Vec<super::lines::Line>>,
    ) -> Self {
        let mut lines = Vec::new();
        let mut cur = Builder::new();
        if let Some(mended) = mended {
            for line in mended {
                for g in line {
                    cur.add(g.ch, (g.l, g.r, g.b, g.t));
                }
                cur.finish(&mut lines);
            }
        } else {
            let chars = layer.chars();
            if chars.len() > MAX_CHARS {
                return Self::default();
            }
            for c in chars.iter() {
                let u = c.unicode_value();
                if u == '\n' as u32 || u == '\r' as u32 {
                    cur.finish(&mut lines);
                    continue;
                }
                let Some(ch) = char::from_u32(u) else {
                    continue;
                };
                if ch.is_whitespace() {
                    continue;
                }
                let b = c.loose_bounds().map(|b| {
                    (
                        b.left().value,
                        b.right().value,
                        b.bottom().value,
                        b.top().value,
                    )
                });
                cur.add(ch, b.unwrap_or((0.0, 0.0, 0.0, 0.0)));
            }
            cur.finish(&mut lines);
        }
        let spacing = Self::spacing(&lines);
        let mut by_key: std::collections::HashMap<String, Vec<usize>> = Default::default();
        for (i, l) in lines.iter().enumerate() {
            by_key.entry(l.key.clone()).or_default().push(i);
        }
        // Lines by where they start (2 pt buckets): a line's column is the lines within
        // its height of its left edge, a dozen buckets (never every line of the page).
        let bucket = |x: f32| (x / 2.0).floor() as i64;
        let mut right_by_left: std::collections::HashMap<i64, f32> = Default::default();
        for l in &lines {
            let r = right_by_left.entry(bucket(l.left)).or_insert(l.right);
            *r = r.max(l.right);
        }
        let mut column_right: Vec<f32> = lines
            .iter()
            .map(|l| {
                let reach = l.height.clamp(0.0, 40.0);
                (bucket(l.left - reach)..=bucket(l.left + reach))
                    .filter_map(|b| right_by_left.get(&b))
                    .fold(l.right, |a, &r| a.max(r))
            })
            .collect();
        // But a block of four lines or more (one after another right under each other in
        // one size) whose lines mostly end at one edge, far left of the edge found above,
        // is a column of its own: a column of a two-column page whose title or closing
        // line runs across the page from the same left edge. Its edge is the furthest
        // right its own lines reach.
        let mut start = 0;
        for i in 0..=lines.len() {
            let ends =
                i == lines.len() || i > start && !Self::under(&lines[i - 1], &lines[i], spacing);
            if !ends {
                continue;
            }
            let block = &lines[start..i];
            let right = block.iter().fold(f32::NEG_INFINITY, |a, l| a.max(l.right));
            // Set as a column is (most lines but the last end at its edge), not a listing
            // or a form's labels (ragged ends).
            let at_edge = block[..block.len().saturating_sub(1)]
                .iter()
                .filter(|l| l.right >= right - l.height)
                .count();
            let left = block.iter().fold(f32::INFINITY, |a, l| a.min(l.left));
            if block.len() >= 4 && at_edge >= 3 && 3 * at_edge >= 2 * (block.len() - 1) {
                for (k, l) in block.iter().enumerate() {
                    // A column of prose is some thirty characters wide at least (a form's
                    // labels, an index, key-value lines of one length are not).
                    if column_right[start + k] - right > 8.0 * l.height
                        && right - left >= 15.0 * l.height
                    {
                        column_right[start + k] = right;
                    }
                }
            }
            start = i;
        }
        Self {
            lines,
            by_key,
            column_right,
            spacing,
            frame,
        }
    }

    /// The page's line spacing where it sets its lines wider than `SPACING` (the pitch,
    /// in line heights, that more than half of the pairs of lines one under the other in
    /// one size keep, and a third of the page's lines) where it is `WIDE_SPACING` or more:
    /// a tenth above it; else `SPACING`.
    fn spacing(lines: &[LineBox]) -> f32 {
        // Pitches in twentieths of a line height, from 1.0 to MAX_SPACING.
        let mut counts = [0usize; 21];
        let mut pairs = 0;
        for w in lines.windows(2) {
            let (prev, next) = (&w[0], &w[1]);
            let h = prev.height.max(next.height);
            if h <= 0.0 || (prev.height - next.height).abs() > 0.15 * h {
                continue;
            }
            let pitch = (prev.bottom - next.bottom) / h;
            if !(1.0..=MAX_SPACING).contains(&pitch) {
                continue;
            }
            pairs += 1;
            counts[((pitch - 1.0) * 20.0).round() as usize] += 1;
        }
        // The most common pitch, with its neighbours (a pitch on a bucket's edge).
        let (best, held) = (1..counts.len() - 1)
            .map(|i| (i, counts[i - 1] + counts[i] + counts[i + 1]))
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
            .unwrap_or((0, 0));
        let pitch = 1.0 + best as f32 / 20.0;
        // Most of the page is set so (a page with a few displayed formulas far apart is
        // not).
        if held >= 5 && 2 * held > pairs && 3 * held >= lines.len() && pitch >= WIDE_SPACING {
            (pitch + 0.1).min(MAX_SPACING)
        } else {
            SPACING
        }
    }

    /// The box of physical lines `a..=b` from the top-left corner of the page as shown
    /// (its crop box, rotated as it says), in points (`[left, top, right, bottom]`, to a
    /// tenth of a point).
    fn bbox(&self, a: usize, b: usize) -> [f32; 4] {
        let (mut l, mut r, mut bottom, mut top) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
        for line in &self.lines[a..=b] {
            l = l.min(line.left);
            r = r.max(line.right);
            bottom = bottom.min(line.bottom);
            top = top.max(line.bottom + line.height);
        }
        self.frame.bbox((l, bottom, r, top))
    }

    /// Whether `next` is right under `prev` in its size: no more than ordinary line
    /// spacing below it (not a gap, not another column or place).
    fn under(prev: &LineBox, next: &LineBox, spacing: f32) -> bool {
        let h = prev.height.max(next.height);
        if h <= 0.0 || (prev.height - next.height).abs() > 0.15 * h {
            return false;
        }
        let pitch = prev.bottom - next.bottom;
        pitch > 0.3 * h && pitch <= spacing * h
    }

    /// A line's box when its own line stands no more than `NEAR` lines past `cursor`, and
    /// the cursor after it.
    fn near(&self, line: &str, cursor: usize) -> Option<([f32; 4], usize)> {
        let mut to = cursor;
        match self.find(line, &mut to) {
            Some((a, z)) if a < cursor + NEAR => Some((self.bbox(a, z), to)),
            _ => None,
        }
    }

    /// The boxes of a text line's first and last physical lines, looked for from `cursor`
    /// on (a word broken at a line's end makes two lines of the layer one line of its
    /// text; a line the text writes otherwise, or a table's row, has none).
    fn find(&self, line: &str, cursor: &mut usize) -> Option<(usize, usize)> {
        // Hyphens left out: PDFium joins a word broken at a line's end in its text, its
        // characters keep the hyphen.
        let key: String = super::headings::squash(line)
            .chars()
            .filter(|c| *c != '-')
            .collect();
        if key.is_empty() {
            return None;
        }
        // The line itself, at or after the cursor (anywhere further on the page).
        if let Some(at) = self.by_key.get(&key) {
            if let Some(&i) = at.iter().find(|&&i| i >= *cursor) {
                *cursor = i + 1;
                return Some((i, i));
            }
        }
        // Two lines the text writes as one (a word broken at the line's end), near.
        let end = (*cursor + 8).min(self.lines.len());
        for i in *cursor..end {
            let k = &self.lines[i].key;
            if let (Some(rest), Some(next)) = (key.strip_prefix(k.as_str()), self.lines.get(i + 1))
            {
                if !k.is_empty() && next.key == rest {
                    *cursor = i + 2;
                    return Some((i, i + 1));
                }
            }
        }
        None
    }

    /// Whether `next` goes on the paragraph whose first line is `first` (a list item's
    /// when `item`) and last is `prev` (the `prev`-th line of the page).
    fn continues(
        &self,
        first: usize,
        item: bool,
        prev_index: usize,
        next: usize,
        next_text: &str,
    ) -> bool {
        let (prev, next) = (&self.lines[prev_index], &self.lines[next]);
        if !Self::under(prev, next, self.spacing) {
            return false; // another size, or not right under it: a gap, another column
        }
        let h = prev.height.max(next.height);
        // Where the paragraph's lines start: its second line's left (its first may be
        // indented).
        let body_left = if first == prev_index {
            None
        } else {
            Some(prev.left)
        };
        // A list item's next lines hang under its text, right of its bullet.
        let indent = if item { 3.0 * h } else { 0.8 * h };
        match body_left {
            Some(left) if (next.left - left).abs() > 0.8 * h => return false,
            None if next.left > prev.left + indent || next.left < prev.left - 3.0 * h => {
                return false
            }
            _ => {}
        }
        // The line before ended short of its column's right edge by more than the next
        // line's first word: that word would have fit, so the paragraph ended there.
        let column_right = self.column_right[prev_index];
        let word: f32 = next_text
            .split_whitespace()
            .next()
            .unwrap_or("")
            .chars()
            .map(|c| if c.len_utf8() >= 3 { 0.9 } else { 0.45 })
            .sum();
        if column_right - prev.right > (word + 0.45) * h {
            return false;
        }
        // A formula's next step (`= …`, `≤ …`) is a line of its own.
        !list_item(next_text) && !next_text.starts_with(['=', '≤', '≥', '≠', '≈', '≡'])
    }
}

#[derive(Default)]
struct Builder {
    key: String,
    left: f32,
    right: f32,
    bottoms: Vec<f32>,
    heights: Vec<f32>,
}

impl Builder {
    fn new() -> Self {
        Builder {
            left: f32::INFINITY,
            right: f32::NEG_INFINITY,
            ..Default::default()
        }
    }

    /// One character of the line and its loose box (left, right, bottom, top).
    fn add(&mut self, ch: char, (l, r, bt, t): (f32, f32, f32, f32)) {
        if !super::headings::keyed(ch) {
            return;
        }
        // PDFium marks a hyphen at a line's end it joins as U+0002.
        if ch != '-' && !ch.is_control() {
            self.key.extend(ch.to_lowercase());
        }
        if [l, r, bt, t].iter().all(|v| v.is_finite()) && t > bt {
            self.left = self.left.min(l);
            self.right = self.right.max(r);
            self.bottoms.push(bt);
            self.heights.push(t - bt);
        }
    }

    fn finish(&mut self, out: &mut Vec<LineBox>) {
        let b = std::mem::replace(self, Builder::new());
        if b.key.is_empty() || b.heights.is_empty() {
            return;
        }
        out.push(LineBox {
            key: b.key,
            left: b.left,
            right: b.right,
            bottom: median(b.bottoms),
            height: median(b.heights),
        });
    }
}

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(f32::total_cmp);
    v[v.len() / 2]
}

/// Whether a line starts a list item (a bullet, or a number or letter and `.` or `)`).
pub(super) fn list_item(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with(['•', '◦', '▪', '‣', '·', '●', '○', '■', '□']) {
        return true;
    }
    // A dash or star only before a space (`--- x`, `-5` are not items).
    if ["- ", "– ", "* "].iter().any(|b| t.starts_with(b)) {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("");
    let label = first.trim_start_matches('(');
    let Some(inner) = label.strip_suffix('.').or_else(|| label.strip_suffix(')')) else {
        return false;
    };
    // `2.`, `3.1.`, `a)`, `(iv)`: digits and dots, one letter, or a small roman number.
    (inner.chars().any(|c| c.is_ascii_digit())
        && inner.chars().all(|c| c.is_ascii_digit() || c == '.')
        && inner.len() <= 6)
        || (inner.chars().count() == 1 && inner.chars().all(|c| c.is_ascii_lowercase()))
        || (!inner.is_empty()
            && inner.len() <= 4
            && inner.chars().all(|c| matches!(c, 'i' | 'v' | 'x')))
}

/// A list item's label and text.
fn label(p: &str) -> Option<(&str, &str)> {
    if !list_item(p) {
        return None;
    }
    let t = p.trim_start();
    let first = t.chars().next()?;
    let end = if first.is_alphanumeric() || first == '(' {
        t.find(char::is_whitespace).unwrap_or(t.len())
    } else {
        first.len_utf8()
    };
    Some((&t[..end], t[end..].trim_start()))
}

/// Whether a line holds a leader: dots spaced (`. . .`) or four in a row, as forms and
/// tables of contents lead from an entry to its number.
fn leader(line: &str) -> bool {
    line.contains(". . .") || line.contains("....")
}

/// Whether a line ends in a short number and the next starts with one (`… here ▶ 13`
/// over `14 Other gains …`, `… 8a` over `b Tax-exempt …` is not: letters).
fn numbered_rows(prev: &str, next: &str) -> bool {
    let number = |w: Option<&str>| {
        w.is_some_and(|w| {
            w.len() <= 4
                && w.starts_with(|c: char| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_alphanumeric())
        })
    };
    number(prev.split_whitespace().next_back()) && number(next.split_whitespace().next())
}

/// Join the next line of a paragraph: a word broken by a hyphen at the line's end is one
/// word again; Chinese or Japanese text going on from one line to the next gets no space
/// (it is written without; Korean is spaced); otherwise a space between.
fn join(para: &mut String, next: &str) {
    use crate::ocr::tesseract::is_cjk;
    let next = next.trim();
    let broken = para.ends_with('-')
        && para[..para.len() - 1]
            .chars()
            .next_back()
            .is_some_and(char::is_alphabetic)
        && next.chars().next().is_some_and(char::is_lowercase);
    let unspaced =
        para.chars().next_back().is_some_and(is_cjk) && next.chars().next().is_some_and(is_cjk);
    if broken {
        para.pop();
    } else if !unspaced {
        para.push(' ');
    }
    para.push_str(next);
}

/// The paragraphs of a run of text lines, in order, each with the box of the physical
/// lines it was found on (none when none was). Lines without a box are paragraphs of
/// their own.
pub(super) fn group(
    geometry: &Geometry,
    lines: &[&str],
    cursor: &mut usize,
) -> Vec<(String, Option<[f32; 4]>)> {
    let boxes: Vec<Option<(usize, usize)>> =
        lines.iter().map(|l| geometry.find(l, cursor)).collect();
    let mut out: Vec<String> = Vec::new();
    // The physical lines each paragraph spans.
    let mut spans: Vec<Option<(usize, usize)>> = Vec::new();
    let mut first: Option<usize> = None;
    // Whether the paragraph being made is a list item (known from its first line).
    let mut item = false;
    for (i, line) in lines.iter().enumerate() {
        let text = line.trim();
        if text.is_empty() {
            first = None;
            continue;
        }
        // The line before's last physical line, and this one's first.
        let prev = i.checked_sub(1).and_then(|p| boxes[p]).map(|b| b.1);
        let goes_on = match (first, prev, boxes[i]) {
            // A line with a leader (a form's or a contents' entry), or a line ending in a
            // number before one starting with one (a form's numbered lines: `… 13` over
            // `14 Other gains …`), ends where it ends.
            (Some(f), Some(prev), Some((next, _)))
                if !out.is_empty()
                    && !leader(lines[i - 1])
                    && !numbered_rows(lines[i - 1], text) =>
            {
                geometry.continues(f, item, prev, next, text)
            }
            _ => false,
        };
        if goes_on {
            join(out.last_mut().unwrap(), text);
            if let (Some(span), Some((_, b))) = (spans.last_mut().unwrap(), boxes[i]) {
                span.1 = span.1.max(b);
            }
        } else {
            out.push(text.to_string());
            spans.push(boxes[i]);
            first = boxes[i].map(|b| b.0);
            item = list_item(text);
        }
    }
    out.into_iter()
        .zip(spans)
        .map(|(p, span)| (p, span.map(|(a, b)| geometry.bbox(a.min(b), a.max(b)))))
        .collect()
}

/// A piece of a page's Markdown as `markdown` makes it: a paragraph (its lines joined)
/// with the box of its lines, a heading line, another line kept as it is (a table's), a
/// blank line, or a figure the page draws (with its caption, which stood over or under
/// it).
enum Piece<'a> {
    Paragraph(String, Option<[f32; 4]>),
    Heading(&'a str, Option<[f32; 4]>),
    Kept(&'a str),
    Blank,
    Figure(Option<String>, bool),
}

impl super::figures::Placed for Piece<'_> {
    fn flow_box(&self) -> Option<[f32; 4]> {
        match self {
            Piece::Paragraph(_, b) | Piece::Heading(_, b) => *b,
            _ => None,
        }
    }

    fn flow_chars(&self) -> usize {
        match self {
            Piece::Paragraph(t, _) => t.chars().count(),
            Piece::Heading(t, _) => t.trim_start_matches('#').trim().chars().count(),
            _ => 0,
        }
    }

    fn paragraph(&self) -> Option<&str> {
        match self {
            Piece::Paragraph(t, _) => Some(t),
            _ => None,
        }
    }

    fn into_paragraph(self) -> Option<String> {
        match self {
            Piece::Paragraph(t, _) => Some(t),
            _ => None,
        }
    }

    fn figure(_bbox: [f32; 4], caption: Option<String>, above: bool) -> Self {
        Piece::Figure(caption, above)
    }
}

/// How a figure shows in Markdown (as docling writes it: a comment, its caption as the
/// paragraph next to it).
pub(super) const FIGURE_MARK: &str = "<!-- image -->";

/// A page's Markdown with the lines of each paragraph joined, paragraphs apart by a blank
/// line; headings, table rows (pipe or HTML) and blank lines stay as they are; each of
/// `figures` (boxes of the page as shown) a `FIGURE_MARK` where `figures::place` puts it
/// in `json`, with its caption beside it.
pub(super) fn markdown(geometry: &Geometry, text: &str, figures: &[[f32; 4]]) -> String {
    if geometry.lines.is_empty() {
        return text.to_string();
    }
    let mut pieces: Vec<Piece<'_>> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    // One cursor over the page's lines for all its runs of lines.
    let mut cursor = 0;
    // The run of lines so far as paragraphs.
    let paragraphs = |pieces: &mut Vec<Piece<'_>>, run: &mut Vec<&str>, cursor: &mut usize| {
        let found = group(geometry, run, cursor);
        pieces.extend(found.into_iter().map(|(p, bbox)| Piece::Paragraph(p, bbox)));
        run.clear();
    };
    for line in text.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        let html = ["<table>", "<tr>", "</table>"]
            .iter()
            .any(|h| t.starts_with(h));
        if t.trim().is_empty() || t.starts_with('#') || t.starts_with('|') || html {
            paragraphs(&mut pieces, &mut run, &mut cursor);
            pieces.push(if t.trim().is_empty() {
                Piece::Blank
            } else if t.starts_with('#') {
                // Placed by its own line when it is near, for the figures (the cursor does
                // not move: the paragraphs are found as they are without figures).
                let words = t.trim_start_matches('#').trim();
                let bbox = (!figures.is_empty())
                    .then(|| geometry.near(words, cursor))
                    .flatten()
                    .map(|(bbox, _)| bbox);
                Piece::Heading(line, bbox)
            } else {
                Piece::Kept(line)
            });
            continue;
        }
        run.push(t);
    }
    paragraphs(&mut pieces, &mut run, &mut cursor);
    if !figures.is_empty() {
        pieces = super::figures::place(pieces, figures);
    }
    let mut out = String::with_capacity(text.len());
    // Whether the paragraph before, in the same run of lines, was a list item.
    let mut item_before = false;
    fn paragraph(p: &str, out: &mut String, item_before: &mut bool) {
        let item = list_item(p);
        if item && *item_before && out.ends_with("\n\n") {
            out.pop(); // a list's items one a line
        }
        if !out.is_empty() && !out.ends_with("\n\n") && !(item && *item_before) {
            out.push('\n');
        }
        out.push_str(p);
        out.push_str("\n\n");
        *item_before = item;
    }
    for piece in pieces {
        match piece {
            Piece::Paragraph(p, _) => paragraph(&p, &mut out, &mut item_before),
            Piece::Heading(line, _) | Piece::Kept(line) => {
                out.push_str(line);
                item_before = false;
            }
            Piece::Blank => {
                if !out.is_empty() && !out.ends_with("\n\n") {
                    out.push('\n');
                }
                item_before = false;
            }
            Piece::Figure(caption, above) => {
                item_before = false;
                if let (Some(c), true) = (&caption, above) {
                    paragraph(c, &mut out, &mut item_before);
                }
                paragraph(FIGURE_MARK, &mut out, &mut item_before);
                if let (Some(c), false) = (&caption, above) {
                    paragraph(c, &mut out, &mut item_before);
                }
                item_before = false;
            }
        }
    }
    if !text.ends_with('\n') {
        while out.ends_with('\n') {
            out.pop();
        }
    }
    out
}

/// A page's blocks with each run of main-flow lines made paragraphs (a line without a box
/// a paragraph of its own), each paragraph, heading, header and footer placed on the page
/// (`bbox`) where its lines were found.
pub(super) fn blocks(
    geometry: &Geometry,
    blocks: Vec<crate::model::Block>,
) -> Vec<crate::model::Block> {
    use crate::model::{Block, Content};
    let mut out = Vec::with_capacity(blocks.len());
    let mut run: Vec<String> = Vec::new();
    let mut cursor = 0;
    let flush = |run: &mut Vec<String>, out: &mut Vec<Block>, cursor: &mut usize| {
        let lines: Vec<&str> = run.iter().map(String::as_str).collect();
        out.extend(
            group(geometry, &lines, cursor)
                .into_iter()
                .map(|(p, bbox)| {
                    match label(&p) {
                        Some((label, text)) => Block::new(Content::ListItem {
                            level: 0,
                            label: label.to_string(),
                            text: text.to_string(),
                        }),
                        None => Block::paragraph(p),
                    }
                    .at(bbox)
                }),
        );
        run.clear();
    };
    for b in blocks {
        match (&b.content, &b.part) {
            (
                Content::Line {
                    text, bbox: None, ..
                },
                None,
            ) => run.push(text.clone()),
            (
                Content::Heading { text, .. } | Content::Header { text } | Content::Footer { text },
                _,
            ) if b.bbox.is_none() => {
                flush(&mut run, &mut out, &mut cursor);
                // Only near the cursor: a heading whose own line is not found must not carry
                // the cursor to the same words further down (the paragraphs between would
                // lose their boxes).
                let bbox = geometry.near(text, cursor).map(|(bbox, to)| {
                    cursor = to;
                    bbox
                });
                out.push(b.at(bbox));
            }
            _ => {
                flush(&mut run, &mut out, &mut cursor);
                out.push(b);
            }
        }
    }
    flush(&mut run, &mut out, &mut cursor);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaders_and_numbered_rows_end_their_lines() {
        assert!(leader("1.1 Topologische Räume . . . . . . . 2"));
        assert!(leader("Preface.......... xi"));
        assert!(!leader("It ends here... and goes on."));
        assert!(numbered_rows(
            "check here ▶ 13",
            "14 Other gains or (losses)"
        ));
        assert!(numbered_rows(
            "Form 2106-EZ 24",
            "25 Health savings account"
        ));
        assert!(!numbered_rows("grew by 15 percent", "over the year"));
        assert!(!numbered_rows("the year 2019 and", "2020 after it"));
        assert!(!numbered_rows(
            "Attach Schedule B . . 8a",
            "b Tax-exempt interest"
        ));
    }

    /// A point of the page's space from the top-left of the page as shown, for each
    /// rotation, through a crop box away from the origin (x 30–565, y 40–822).
    #[test]
    fn points_are_given_from_the_top_left_of_the_page_as_shown() {
        let frame = |quarters| Frame {
            l: 30.0,
            b: 40.0,
            r: 565.0,
            t: 822.0,
            quarters,
        };
        // The crop box's top-left corner, and a point 10 right of and 20 below it.
        assert_eq!(frame(0).shown(30.0, 822.0), (0.0, 0.0));
        assert_eq!(frame(0).shown(40.0, 802.0), (10.0, 20.0));
        // A quarter turn clockwise: the page's left edge is on top, its bottom on the left.
        assert_eq!(frame(1).shown(30.0, 40.0), (0.0, 0.0));
        assert_eq!(frame(1).shown(30.0, 822.0), (782.0, 0.0));
        assert_eq!(frame(1).shown(565.0, 40.0), (0.0, 535.0));
        // Upside down, and three quarters.
        assert_eq!(frame(2).shown(565.0, 40.0), (0.0, 0.0));
        assert_eq!(frame(3).shown(565.0, 822.0), (0.0, 0.0));
        assert_eq!(frame(3).shown(30.0, 822.0), (0.0, 535.0));
    }

    #[test]
    fn hyphens_and_list_items() {
        // (line, next line, joined): a hyphen at a line's end joins a broken word; Chinese
        // and Japanese go on without a space; Korean, and CJK beside Latin, with one.
        for (line, next, joined) in [
            ("the infor-", "mation age", "the information age"),
            ("well-", "Known", "well- Known"),
            (
                "本报告讨论了新的",
                "保险条款。",
                "本报告讨论了新的保险条款。",
            ),
            ("これは日本語の", "文章です。", "これは日本語の文章です。"),
            ("국내 확진자는", "9,661명으로", "국내 확진자는 9,661명으로"),
            ("코로나바이러스", "감염증", "코로나바이러스 감염증"),
            ("使用 PDFium 的", "text layer", "使用 PDFium 的 text layer"),
        ] {
            let mut p = line.to_string();
            join(&mut p, next);
            assert_eq!(p, joined);
        }
        assert!(list_item("• one") && list_item("2. two") && list_item("(a) three"));
        assert!(!list_item("2025 was a year") && !list_item("Results.") && !list_item("e.g. this"));
        assert!(list_item("- item") && !list_item("--- Page 3 ---") && !list_item("-5 degrees"));
    }
}
