//! Two columns of prose that a content stream draws row by row (a line of the left column,
//! then the line beside it in the right one): PDFium's text reads them across, each line of
//! the page holding a line of each column. Markdown and `json` read such a run column after
//! column (#44 item 3); plain text stays line-faithful, as PDFium gives it.
//!
//! Only certain runs are taken apart: three lines or more split by one gap of the same
//! gutter, each side at least a quarter of the page wide and mostly letters (prose, not a
//! table's figures), lines of one column alone beside a blank in the other continuing the
//! run; no glyph crossing the gutter.
//!
//! A page whose stream draws its columns first and what stands above them last (a
//! newsletter's masthead, title and abstract drawn after its two columns) is read as it
//! stands (`flows_in_order`): its lines are cut into flows where the stream goes up, sideways
//! or down over a gap, and a flow drawn later is read just before the first earlier one that
//! it stands wholly above with their widths overlapping; the stream's order holds everywhere
//! else.

use super::lines::{Glyph, Line};

/// A column of prose is at least this share of the page's width.
pub(super) const WIDE: f32 = 0.25;
/// Lines split by the gutter, both sides prose, to make a run.
const MIN_LINES: usize = 3;
/// A gutter is at least this many text heights wide (a word space is a third of one).
const GUTTER: f32 = 1.2;

/// How one line stands against a gutter.
enum Split {
    /// One gap of `GUTTER` or more: its left and right edges, and whether both sides are
    /// wide prose.
    Gap { l: f32, r: f32, prose: bool },
    /// No such gap: the line's drawn extent.
    Whole { l: f32, r: f32 },
    /// Nothing drawn.
    Empty,
}

fn drawn(g: &Glyph) -> bool {
    !g.ch.is_whitespace() && g.r > g.l && g.t > g.b
}

fn split(line: &Line, page_width: f32) -> Split {
    let glyphs: Vec<&Glyph> = line.iter().filter(|g| drawn(g)).collect();
    let (Some(first), Some(last)) = (glyphs.first(), glyphs.last()) else {
        return Split::Empty;
    };
    let mut heights: Vec<f32> = glyphs.iter().map(|g| g.t - g.b).collect();
    heights.sort_by(f32::total_cmp);
    let h = heights[heights.len() / 2];
    let mut gaps = glyphs
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[1].l - w[0].r >= GUTTER * h);
    let Some((at, w)) = gaps.next() else {
        return Split::Whole {
            l: first.l,
            r: last.r,
        };
    };
    if gaps.next().is_some() || glyphs.windows(2).any(|w| w[1].l < w[0].l - h) {
        // Three pieces or more (a table, a form), or glyphs out of order: no two columns.
        return Split::Whole {
            l: first.l,
            r: last.r,
        };
    }
    let (left, right) = glyphs.split_at(at + 1);
    let prose = |side: &[&Glyph]| {
        let width = side.last().map_or(0.0, |g| g.r) - side.first().map_or(0.0, |g| g.l);
        let letters = side.iter().filter(|g| g.ch.is_alphabetic()).count();
        width >= WIDE * page_width && side.len() >= 20 && letters * 4 >= side.len() * 3
    };
    Split::Gap {
        l: w[0].r,
        r: w[1].l,
        prose: prose(left) && prose(right),
    }
}

/// The page's lines with each run of two prose columns read column after column (its
/// lines cut at the gutter, the left column's first); `None` when the page has no such
/// run.
pub(super) fn in_order(read: &[Line], page_width: f32) -> Option<Vec<Line>> {
    let splits: Vec<Split> = read.iter().map(|l| split(l, page_width)).collect();
    // Runs: (first line, last line, gutter's left and right edges).
    let mut runs: Vec<(usize, usize, f32, f32)> = Vec::new();
    let mut i = 0;
    while i < read.len() {
        let Split::Gap {
            l: mut gl,
            r: mut gr,
            prose: true,
        } = splits[i]
        else {
            i += 1;
            continue;
        };
        let (start, mut end, mut prose_lines) = (i, i, 1);
        for (j, s) in splits.iter().enumerate().skip(i + 1) {
            match *s {
                // The same gutter (the gaps overlap).
                Split::Gap { l, r, prose } if l.max(gl) < r.min(gr) => {
                    (gl, gr) = (l.max(gl), r.min(gr));
                    prose_lines += usize::from(prose);
                }
                // One column's line beside a blank in the other.
                Split::Whole { l, r } if r <= gl || l >= gr => {}
                _ => break,
            }
            end = j;
        }
        if prose_lines >= MIN_LINES {
            runs.push((start, end, gl, gr));
        }
        i = end + 1;
    }
    if runs.is_empty() {
        return None;
    }
    let mut out: Vec<Line> = Vec::with_capacity(read.len() + 16);
    let mut next = 0;
    for (start, end, gl, gr) in runs {
        out.extend(read[next..start].iter().cloned());
        let mid = (gl + gr) / 2.0;
        let (mut left, mut right): (Vec<Line>, Vec<Line>) = (Vec::new(), Vec::new());
        for line in &read[start..=end] {
            // Each glyph to the side its middle is on; a space goes with the glyph before.
            let mut side_right = false;
            let (mut l, mut r): (Line, Line) = (Vec::new(), Vec::new());
            for g in line {
                if drawn(g) {
                    side_right = (g.l + g.r) / 2.0 > mid;
                }
                if side_right {
                    r.push(*g);
                } else {
                    l.push(*g);
                }
            }
            for (part, to) in [(l, &mut left), (r, &mut right)] {
                let part = trimmed(part);
                if !part.is_empty() {
                    to.push(part);
                }
            }
        }
        out.extend(left);
        out.extend(right);
        next = end + 1;
    }
    out.extend(read[next..].iter().cloned());
    Some(out)
}

/// A flow at most this many times the line before's height below it goes on its flow.
const FLOW_GAP: f32 = 2.0;
/// A page cut into more flows than this keeps its order (a table drawn cell by cell, a
/// hostile page: the order is quadratic in flows).
const MAX_FLOWS: usize = 200;

/// The page's lines with flows drawn out of their places' order put back in it (see the
/// module's doc); `None` when the stream's order is already the page's.
pub(super) fn flows_in_order(read: &[Line]) -> Option<Vec<Line>> {
    // Each line's drawn extent (left, bottom, right, top).
    let extent = |line: &Line| {
        line.iter().filter(|g| drawn(g)).fold(None, |e, g| {
            let (l, b, r, t) = e.unwrap_or((g.l, g.b, g.r, g.t));
            Some((l.min(g.l), b.min(g.b), r.max(g.r), t.max(g.t)))
        })
    };
    // Flows: (first line, extent); a line without ink goes with the flow it is in.
    let mut flows: Vec<(usize, (f32, f32, f32, f32))> = Vec::new();
    let mut last: Option<(f32, f32, f32, f32)> = None;
    for (i, line) in read.iter().enumerate() {
        let Some(e) = extent(line) else { continue };
        let new = match last {
            None => true,
            Some(p) => {
                let h = (p.3 - p.1).max(e.3 - e.1);
                e.3 > p.3 + 0.5 * h || p.1 - e.3 > FLOW_GAP * h || e.2 < p.0 || e.0 > p.2
            }
        };
        match flows.last_mut() {
            Some((_, f)) if !new => *f = (f.0.min(e.0), f.1.min(e.1), f.2.max(e.2), f.3.max(e.3)),
            _ => flows.push((if flows.is_empty() { 0 } else { i }, e)),
        }
        last = Some(e);
        if flows.len() > MAX_FLOWS {
            return None;
        }
    }
    if flows.len() < 2 {
        return None;
    }
    // `above[a][b]`: flow a stands wholly above flow b, their widths overlapping.
    let n = flows.len();
    let above = |a: usize, b: usize| {
        let ((_, fa), (_, fb)) = (flows[a], flows[b]);
        let h = (fa.3 - fa.1).min(fb.3 - fb.1).min(12.0);
        fa.0.max(fb.0) < fa.2.min(fb.2) && fa.1 >= fb.3 - 0.25 * h
    };
    let before: Vec<Vec<usize>> = (0..n)
        .map(|b| (0..n).filter(|&a| a != b && above(a, b)).collect())
        .collect();
    // In the stream's order, each flow after the flows above it (each of those after the
    // ones above it first, in the stream's order); a cycle, which overlapping boxes can
    // make, is broken where it closes.
    fn place(f: usize, before: &[Vec<usize>], state: &mut [u8], order: &mut Vec<usize>) {
        if state[f] != 0 {
            return; // placed, or being placed (a cycle)
        }
        state[f] = 1;
        for &a in &before[f] {
            place(a, before, state, order);
        }
        state[f] = 2;
        order.push(f);
    }
    let mut order = Vec::with_capacity(n);
    let mut state = vec![0u8; n];
    for f in 0..n {
        place(f, &before, &mut state, &mut order);
    }
    if order.iter().enumerate().all(|(i, &f)| i == f) {
        return None;
    }
    let end = |f: usize| flows.get(f + 1).map_or(read.len(), |g| g.0);
    Some(
        order
            .into_iter()
            .flat_map(|f| read[flows[f].0..end(f)].iter().cloned())
            .collect(),
    )
}

/// A line part without whitespace at either end (the space PDFium put between the two
/// columns' lines).
fn trimmed(mut part: Line) -> Line {
    while part.last().is_some_and(|g| g.ch.is_whitespace()) {
        part.pop();
    }
    let lead = part.iter().take_while(|g| g.ch.is_whitespace()).count();
    part.drain(..lead);
    part
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of text set at `x` on baseline `y`, 5 pt a character at 10 pt.
    fn set(out: &mut Line, text: &str, x: f32, y: f32) {
        for (i, ch) in text.chars().enumerate() {
            let l = x + 5.0 * i as f32;
            out.push(Glyph::test(ch, l, l + 5.0, y, y + 10.0));
        }
    }

    fn row(left: &str, right: &str, y: f32) -> Line {
        let mut line = Vec::new();
        set(&mut line, left, 50.0, y);
        if !right.is_empty() {
            if !left.is_empty() {
                line.push(Glyph::test(' ', 0.0, 0.0, 0.0, 0.0));
            }
            set(&mut line, right, 320.0, y);
        }
        line
    }

    fn texts(lines: &[Line]) -> Vec<String> {
        lines
            .iter()
            .map(|l| l.iter().map(|g| g.ch).collect())
            .collect()
    }

    #[test]
    fn prose_columns_drawn_row_by_row_are_read_column_after_column() {
        let read = vec![
            row("A title across the whole page of the report", "", 800.0),
            row(
                "The left column starts here and it",
                "The right column begins at the top",
                780.0,
            ),
            row(
                "runs down the left side of the page",
                "and continues down the right side",
                766.0,
            ),
            row(
                "and keeps going for a line or two",
                "of the page in the same manner as",
                752.0,
            ),
            row(
                "until it ends.",
                "the first one, and then it ends too.",
                738.0,
            ),
            row("", "A last line of the right column only", 724.0),
            row(
                "A line across the page at its foot, below both of them",
                "",
                700.0,
            ),
        ];
        let out = in_order(&read, 612.0).expect("a run of two columns");
        assert_eq!(
            texts(&out),
            [
                "A title across the whole page of the report",
                "The left column starts here and it",
                "runs down the left side of the page",
                "and keeps going for a line or two",
                "until it ends.",
                "The right column begins at the top",
                "and continues down the right side",
                "of the page in the same manner as",
                "the first one, and then it ends too.",
                "A last line of the right column only",
                "A line across the page at its foot, below both of them",
            ]
        );
    }

    /// `n` lines of the same two sides, one under another.
    fn rows(left: &str, right: &str, n: usize) -> Vec<Line> {
        (0..n)
            .map(|i| row(left, right, 780.0 - 14.0 * i as f32))
            .collect()
    }

    #[test]
    fn tables_and_short_pieces_are_no_columns() {
        // Figures in two columns: not prose.
        let figures = rows(
            "1,234.56 2,345.67 3,456.78 4,567.89 5,678.90",
            "9,876.54 8,765.43 7,654.32 6,543.21 5,432.10",
            5,
        );
        assert!(in_order(&figures, 612.0).is_none());
        // Two lines only.
        let two = rows(
            "The left column starts here and it",
            "The right column begins at the top",
            2,
        );
        assert!(in_order(&two, 612.0).is_none());
        // A term and its long description: the term's side is narrow.
        let glossary = rows("Term", "a description of the term that runs long", 4);
        assert!(in_order(&glossary, 612.0).is_none());
        // The same two sides on three lines are columns (the cases above fail for the
        // reason they say, not for another).
        let prose = rows(
            "The left column starts here and it runs on",
            "The right column begins at the top and goes",
            3,
        );
        assert!(in_order(&prose, 612.0).is_some());
    }

    #[test]
    fn what_stands_above_the_columns_but_is_drawn_after_them_is_read_first() {
        let one = |text: &str, x: f32, y: f32| {
            let mut l = Vec::new();
            set(&mut l, text, x, y);
            l
        };
        let mut read = Vec::new();
        // The left column, then the right one, as the stream draws them.
        for i in 0..4 {
            read.push(one(
                &format!("left column line {i} of its prose"),
                50.0,
                600.0 - 14.0 * i as f32,
            ));
        }
        for i in 0..4 {
            read.push(one(
                &format!("right column line {i} of its prose"),
                320.0,
                600.0 - 14.0 * i as f32,
            ));
        }
        // Then the title and abstract above both, and a footer below both.
        read.push(one(
            "A title drawn after the columns it stands over",
            50.0,
            700.0,
        ));
        read.push(one(
            "its abstract, as wide as the page, under the title",
            50.0,
            680.0,
        ));
        read.push(one(
            "a footer at the foot of the page, across it all",
            50.0,
            80.0,
        ));
        let out = flows_in_order(&read).expect("the title and abstract go first");
        let t = texts(&out);
        assert_eq!(t[0], "A title drawn after the columns it stands over");
        assert_eq!(t[1], "its abstract, as wide as the page, under the title");
        assert_eq!(t[2], "left column line 0 of its prose");
        assert_eq!(t[6], "right column line 0 of its prose");
        assert_eq!(t[10], "a footer at the foot of the page, across it all");
        // Read in the order they stand already: nothing to change.
        assert!(flows_in_order(&out).is_none());
        // Two columns side by side, whatever the order they are drawn in, are not moved.
        assert!(flows_in_order(&read[..8]).is_none());
        let swapped: Vec<Line> = read[4..8].iter().chain(&read[..4]).cloned().collect();
        assert!(flows_in_order(&swapped).is_none());
    }
}
