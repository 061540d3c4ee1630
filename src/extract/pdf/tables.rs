//! A PDF page's ruled tables, found where their rules draw them: every straight piece of a
//! path (a line, a thin filled bar, a rectangle's edge, a grid drawn as one path), joined
//! where rules meet into groups; a group's rule positions are its rows and columns, and a
//! missing rule between two cells (a header over three columns, a value over two rows)
//! makes them one cell. The page's characters are sorted into the cells by their boxes,
//! the rest of the page stays its lines in order, and the table stands where its first
//! character did. Only where that is certain: the page's text is its plain text layer (its
//! characters read one by one give it exactly), every cell is a rectangle, at least two
//! rows and two columns hold text, no cell holds a page of prose. Tables without any rule
//! are found where three lines or more stand in clear columns (`without_rules`). Anything
//! else — a grid of boxes drawn apart, a table of two lines — stays lines (the read's
//! warnings say so).

use pdfium_render::prelude::*;

use super::lines::{self, Line};
use crate::extract::markdown;

/// How far apart two rules' positions may be and still be one (points).
const SNAP: f32 = 2.0;
/// How far a rule may stop short of another and still meet it (points).
const MEET: f32 = 3.0;
/// A rule is at most this thick, and at least `MIN_LEN` long (points).
const THIN: f32 = 2.0;
const MIN_LEN: f32 = 10.0;
/// Path segments read on one page at most (a page of vector art is no table).
const MAX_SEGMENTS: usize = 20_000;
/// A grid's size at most, and how many lines one cell may hold before it is prose.
const MAX_COLUMNS: usize = 64;
const MAX_ROWS: usize = 1_000;
const MAX_CELL_LINES: usize = 16;
/// Across × down rules tried on a page, and grid cells × rules in a group, at most.
const MAX_PAIRS: usize = 4_000_000;
/// Rules across only that may bound tables on one page, at most (`paired`).
const MAX_PAIRED: usize = 200;

/// Pictures and drawings kept per page at most, to tell a figure's labels from a table.
const MAX_ART: usize = 1_000;

/// Runs of lines read as tables without rules on one page at most.
const MAX_RUNS: usize = 64;

/// Text objects' boxes kept per page at most.
const MAX_TEXTS: usize = 20_000;

/// A box on the page: left, bottom, right, top (points).
pub(super) type Bounds = (f32, f32, f32, f32);

/// A rule: its position across, and the span along it.
#[derive(Debug, Clone, Copy)]
struct Rule {
    at: f32,
    from: f32,
    to: f32,
}

/// A table: its rows of cells (top first; a merged cell's text in its top-left cell, the
/// others empty) and how many rows head it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Grid {
    pub rows: Vec<Vec<String>>,
    pub header_rows: u32,
    /// The cells over more than one row or column.
    pub spans: Vec<crate::model::CellSpan>,
    /// Where the table stands, in the page's own space: left, bottom, right, top.
    pub bounds: (f32, f32, f32, f32),
}

/// A page's text cut at its tables.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    Text(String),
    Table(Grid),
}

/// What `find` makes of a page: its text cut at its tables, and its lines when two prose
/// columns drawn row by row were read column after column (`columns`; the paragraphs
/// measure these lines, not the layer's).
pub(super) struct Found {
    pub pieces: Vec<Piece>,
    pub lines: Option<Vec<Line>>,
}

/// The page's text with its ruled tables as GFM pipe tables (and two prose columns drawn
/// row by row read in order), with the lines it was cut from when columns were; `None`
/// when the page has neither. `text` is the page's text as read. Beside it, the page's
/// pictures and drawings (`find_with_art`: its figures are made of them).
pub(super) fn mark(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    text: &str,
) -> (Option<(String, Option<Vec<Line>>)>, Vec<Bounds>) {
    let (found, art) = find_with_art(page, layer, text);
    (found.map(|found| marked(found, text)), art)
}

fn marked(Found { pieces, lines }: Found, text: &str) -> (String, Option<Vec<Line>>) {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(&t),
            Piece::Table(g) => {
                if !out.is_empty() && !out.ends_with("\n\n") {
                    out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
                }
                if g.spans.is_empty() {
                    out.push_str(&markdown::pipe_table_of(&g.rows));
                } else {
                    // Cells over rows or columns: a pipe table cannot say so.
                    out.push_str(&markdown::html_table(
                        &g.rows,
                        g.header_rows as usize,
                        &g.spans,
                    ));
                }
                out.push('\n');
            }
        }
    }
    if text.ends_with('\n') && !out.ends_with('\n') {
        out.push('\n');
    }
    (out, lines)
}

/// The page's text cut at its tables, or `None` when it has none that is certain and no
/// prose columns drawn row by row (every character of `text` is in a piece exactly once:
/// the text pieces and the cells together hold all of its ink); and the page's pictures
/// and drawings with a curve or a slanted line (in the page's space: its figures are made
/// of them), from the same pass over the page's objects. Neither for a turned page or one
/// of more path pieces than `MAX_SEGMENTS`.
pub(super) fn find_with_art(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    text: &str,
) -> (Option<Found>, Vec<Bounds>) {
    if page.rotation().ok() != Some(PdfPageRenderRotation::None) {
        return (None, Vec::new());
    }
    let Some(marks) = marks(page) else {
        return (None, Vec::new());
    };
    let art = marks.art.clone();
    (find_in(page, layer, text, marks), art)
}

fn find_in(page: &PdfPage<'_>, layer: &PdfPageText<'_>, text: &str, marks: Marks) -> Option<Found> {
    let Marks {
        across,
        down,
        art,
        texts,
    } = marks;
    let (groups, lone) = groups(across, down);
    let lone = paired(lone, page.height().value);
    // Tables without rules are looked for only where the page's text objects already
    // stand apart in columns on three lines, or three lines are mostly figures (a look at
    // their boxes and at the text: reading every character's place costs a third of a
    // Markdown read).
    let (table_like, prose_columns) = columns_likely(&texts, page.width().value);
    let apart = table_like || figures(text);
    if groups.is_empty() && lone.is_empty() && !apart && !prose_columns {
        return None;
    }
    // The page's lines, character by character, exactly as its text reads (mended where
    // the text was).
    let read = lines::read(layer)?;
    let body = text.trim_end_matches('\n');
    let read = if super::text::lf_only(&lines::text(&read)).trim_end_matches('\n') == body {
        read
    } else {
        // As `text::page_text` mended them: all of it where its text was suspect, else
        // only glyphs drawn over themselves.
        let all = lines::suspect(&super::text::lf_only(&lines::text(&read)));
        let (mended, changed) = lines::mend(read, all);
        if !changed || super::text::lf_only(&lines::text(&mended)).trim_end_matches('\n') != body {
            return None;
        }
        mended
    };
    // Two prose columns drawn row by row, read column after column (never where rules
    // may make a table: a ruled table's long cells are not columns of prose).
    let in_order = (groups.is_empty() && lone.is_empty() && prose_columns)
        .then(|| super::columns::in_order(&read, page.width().value))
        .flatten();
    let mut reordered = in_order.is_some();
    let mut read = in_order.unwrap_or(read);
    let mut tables: Vec<Table> = Vec::new();
    for g in groups {
        if let Some(t) = Table::new(g) {
            if tables.iter().all(|o| o.apart(&t)) {
                tables.push(t);
            }
        }
    }
    for t in rows_between_rules(lone, &read, page.height().value) {
        if tables.iter().all(|o| o.apart(&t)) {
            tables.push(t);
        }
    }
    if apart {
        for t in without_rules(&read, page.width().value, &tables, &art) {
            if tables.iter().all(|o| o.apart(&t)) {
                tables.push(t);
            }
        }
    }
    // Columns drawn before what stands above them, read as they stand; only on a page
    // without tables (tables are found in the stream's order: a figure's labels moved
    // into their places' order may line up as a table's rows).
    if tables.is_empty() && !reordered && prose_columns {
        if let Some(flows) = super::columns::flows_in_order(&read) {
            (read, reordered) = (flows, true);
        }
    }
    if tables.is_empty() && !reordered {
        return None;
    }
    // Place the tables; one whose text says it is no table after all is left out and the
    // others placed again (its characters go back to the text).
    let mut pieces = loop {
        match place(&read, &mut tables) {
            Ok(pieces) => break pieces,
            Err(failed) => {
                for i in failed.into_iter().rev() {
                    tables.remove(i);
                }
                if tables.is_empty() && !reordered {
                    return None;
                }
            }
        }
    };
    if !reordered && !pieces.iter().any(|p| matches!(p, Piece::Table(_))) {
        return None;
    }
    // Text pieces start on a line of their own, and nothing but blank lines is lost.
    for p in pieces.iter_mut() {
        if let Piece::Text(t) = p {
            let trimmed = t.trim_start_matches([' ', '\t', '\n']);
            if trimmed.len() != t.len() {
                *t = trimmed.to_string();
            }
        }
    }
    pieces.retain(|p| !matches!(p, Piece::Text(t) if t.trim().is_empty()));
    // Ink: what is drawn (a control character, as a soft hyphen's U+0002, is a blank in a
    // cell and is taken out of text later).
    let ink = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace() && !c.is_control())
            .count()
    };
    let held: usize = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => ink(t),
            Piece::Table(g) => g.rows.iter().flatten().map(|c| ink(c)).sum(),
        })
        .sum();
    (held == ink(text)).then_some(Found {
        pieces,
        lines: reordered.then_some(read),
    })
}

/// The page's lines cut at the tables: the text around them in order, each table where
/// its first character stands; `Err` with the tables that are none after all (`finish`).
fn place(read: &[Line], tables: &mut [Table]) -> Result<Vec<Piece>, Vec<usize>> {
    for t in tables.iter_mut() {
        t.clear();
    }
    let owner = owners(read, tables);
    let mut pieces: Vec<Piece> = Vec::new();
    let mut cur = String::new();
    let mut placed = vec![None; tables.len()];
    // Whether the last line gave the text around the tables anything.
    let mut gave = false;
    for (li, line) in read.iter().enumerate() {
        if li > 0 {
            // A line break stays in the text unless both sides are one table's and the
            // line before gave the text nothing (side text on two lines stays two lines).
            let before = owner[li - 1].last().copied().flatten().map(|o| o.0);
            let after = owner[li].first().copied().flatten().map(|o| o.0);
            if !(before.is_some() && before == after) || gave {
                cur.push('\n');
            }
        }
        gave = owner[li].iter().any(Option::is_none);
        for (gi, g) in line.iter().enumerate() {
            match owner[li][gi] {
                None => cur.push(if g.ch == '\r' || g.ch == '\0' {
                    '\n'
                } else {
                    g.ch
                }),
                Some((t, c)) => {
                    if placed[t].is_none() {
                        let keep = cur.trim_end_matches([' ', '\t']).len();
                        cur.truncate(keep);
                        pieces.push(Piece::Text(std::mem::take(&mut cur)));
                        placed[t] = Some(pieces.len());
                        pieces.push(Piece::Text(String::new()));
                    }
                    tables[t].take(c, g.ch, li);
                }
            }
        }
    }
    pieces.push(Piece::Text(cur));
    let mut failed = Vec::new();
    for (i, (t, at)) in tables.iter().zip(placed).enumerate() {
        let Some(at) = at else { continue };
        match t.finish() {
            Some(grid) => pieces[at] = Piece::Table(grid),
            None => failed.push(i),
        }
    }
    if failed.is_empty() {
        Ok(pieces)
    } else {
        Err(failed)
    }
}

/// What a page draws that tells where its tables are (`marks`).
struct Marks {
    /// Every straight, upright piece of its paths at least `MIN_LEN` long, across and
    /// down (none when it has too few to make a table).
    across: Vec<Rule>,
    down: Vec<Rule>,
    /// Pictures, and drawings with a curve or a slanted line: labels over them are no
    /// table.
    art: Vec<Bounds>,
    /// Its text objects' boxes (`columns_likely`).
    texts: Vec<Bounds>,
}

/// The page's `Marks`, from one pass over its objects; `None` when the page has more path
/// pieces than `MAX_SEGMENTS` (a page of vector art holds no table).
fn marks(page: &PdfPage<'_>) -> Option<Marks> {
    let (pw, ph) = (page.width().value, page.height().value);
    let (mut across, mut down) = (Vec::new(), Vec::new());
    let mut texts: Vec<Bounds> = Vec::new();
    let mut art: Vec<Bounds> = Vec::new();
    let mut budget = MAX_SEGMENTS;
    let mut add = |(x0, y0): (f32, f32), (x1, y1): (f32, f32)| {
        let (w, h) = ((x1 - x0).abs(), (y1 - y0).abs());
        if !(w.is_finite() && h.is_finite()) {
            return;
        }
        if h <= 0.5 && w >= MIN_LEN {
            across.push(Rule {
                at: (y0 + y1) / 2.0,
                from: x0.min(x1),
                to: x0.max(x1),
            });
        } else if w <= 0.5 && h >= MIN_LEN {
            down.push(Rule {
                at: (x0 + x1) / 2.0,
                from: y0.min(y1),
                to: y0.max(y1),
            });
        }
    };
    let mut paths = 0;
    for o in page.objects().iter() {
        if o.object_type() == PdfPageObjectType::Image && art.len() < MAX_ART {
            if let Ok(b) = o.bounds() {
                let (l, bo, r, t) = (
                    b.left().value,
                    b.bottom().value,
                    b.right().value,
                    b.top().value,
                );
                // Not a page's background (a scan under its text layer).
                if (r - l) * (t - bo) <= 0.5 * pw * ph {
                    art.push((l, bo, r, t));
                }
            }
        }
        if o.object_type() == PdfPageObjectType::Text {
            if texts.len() < MAX_TEXTS {
                if let Ok(b) = o.bounds() {
                    texts.push((
                        b.left().value,
                        b.bottom().value,
                        b.right().value,
                        b.top().value,
                    ));
                }
            }
            continue;
        }
        if o.object_type() != PdfPageObjectType::Path {
            continue;
        }
        paths += 1;
        // Every rule counts against the page's budget, its box's as much as a segment's:
        // a page of a million dashes is no table.
        if budget == 0 {
            return None;
        }
        budget -= 1;
        let Ok(b) = o.bounds() else { continue };
        let (l, bo, r, t) = (
            b.left().value,
            b.bottom().value,
            b.right().value,
            b.top().value,
        );
        let (w, h) = (r - l, t - bo);
        // A line or a thin bar: its box is the rule (no segments to read).
        if h <= THIN && w >= MIN_LEN {
            add((l, (bo + t) / 2.0), (r, (bo + t) / 2.0));
            continue;
        }
        if w <= THIN && h >= MIN_LEN {
            add(((l + r) / 2.0, bo), ((l + r) / 2.0, t));
            continue;
        }
        // Too small to hold a cell, or the page's background.
        if (w < MIN_LEN && h < MIN_LEN) || w * h > 0.5 * pw * ph {
            continue;
        }
        let Some(p) = o.as_path_object() else {
            continue;
        };
        let segments = p.segments();
        let n = segments.len() as usize;
        if n < 2 || n > budget {
            continue;
        }
        budget -= n;
        let Ok(m) = p.matrix() else { continue };
        // Rotated or skewed: its pieces are not upright.
        if m.b().abs() > 1e-4 * m.a().abs().max(1e-6) || m.c().abs() > 1e-4 * m.d().abs().max(1e-6)
        {
            continue;
        }
        let place = |s: &PdfPathSegment| {
            let (x, y) = (s.x().value, s.y().value);
            (m.a() * x + m.c() * y + m.e(), m.b() * x + m.d() * y + m.f())
        };
        let (mut start, mut cur) = ((0.0, 0.0), (0.0, 0.0));
        let mut drawing = false;
        for s in segments.raw().iter() {
            let to = place(&s);
            match s.segment_type() {
                PdfPathSegmentType::MoveTo => start = to,
                PdfPathSegmentType::LineTo => {
                    let (dx, dy) = ((to.0 - cur.0).abs(), (to.1 - cur.1).abs());
                    drawing |= dx > 0.5 && dy > 0.5;
                    add(cur, to)
                }
                _ => drawing = true,
            }
            cur = to;
            if s.is_close() {
                add(cur, start);
                cur = start;
            }
        }
        if drawing && art.len() < MAX_ART {
            art.push((l, bo, r, t));
        }
    }
    if paths < 2 || across.len() < 2 {
        across.clear();
        down.clear();
    }
    Some(Marks {
        across,
        down,
        art,
        texts,
    })
}

/// Whether three lines of the text or more are mostly figures: three words or more, half
/// of them with a digit or a lone sign (`-`, `–`, `%`) — a table's row set as one text
/// object, which `columns_likely` cannot see into.
fn figures(text: &str) -> bool {
    let mut n = 0;
    for line in text.lines() {
        let (mut words, mut numbers) = (0, 0);
        for w in line.split_whitespace() {
            words += 1;
            if w.bytes().any(|b| b.is_ascii_digit()) || matches!(w, "-" | "–" | "—" | "%" | "*")
            {
                numbers += 1;
            }
        }
        if words >= 3 && 2 * numbers >= words {
            n += 1;
            if n >= 3 {
                return true;
            }
        }
    }
    false
}

/// Whether three lines of the page or more have text objects standing apart in columns:
/// boxes on one band, in pieces a text height apart, none wider than 30 % of the page
/// (the cheap look before `without_rules` reads the characters); and whether three lines
/// or more stand in two wide pieces (prose columns drawn row by row may, the cheap look
/// before `columns::in_order`).
fn columns_likely(texts: &[Bounds], page_width: f32) -> (bool, bool) {
    let mut boxes: Vec<&Bounds> = texts
        .iter()
        .filter(|b| b.3 > b.1 && b.2 > b.0 && (b.2 - b.0).is_finite())
        .collect();
    boxes.sort_by(|a, b| b.3.total_cmp(&a.3));
    let narrow = 0.3 * page_width;
    let wide = super::columns::WIDE * page_width;
    let (mut lines, mut prose) = (0, 0);
    let mut used = vec![false; boxes.len()];
    for k in 0..boxes.len() {
        if used[k] {
            continue;
        }
        // A band: the boxes below whose middles lie within this one's height (the next
        // 200 at most: a hostile page of stacked boxes costs no more).
        let (b0, t0) = (boxes[k].1, boxes[k].3);
        let mut band: Vec<&Bounds> = vec![boxes[k]];
        for z in k + 1..boxes.len().min(k + 200) {
            if boxes[z].3 <= b0 {
                break;
            }
            let mid = (boxes[z].1 + boxes[z].3) / 2.0;
            if !used[z] && mid > b0 && mid < t0 {
                used[z] = true;
                band.push(boxes[z]);
            }
        }
        if band.len() < 2 {
            continue;
        }
        band.sort_by(|a, b| a.0.total_cmp(&b.0));
        let h = (t0 - b0).max(6.0);
        let (mut pieces, mut widest, mut start, mut reach) = (1, 0.0f32, band[0].0, band[0].2);
        let mut narrowest = f32::INFINITY;
        for b in &band[1..] {
            if b.0 - reach >= h {
                widest = widest.max(reach - start);
                narrowest = narrowest.min(reach - start);
                pieces += 1;
                start = b.0;
            }
            reach = reach.max(b.2);
        }
        widest = widest.max(reach - start);
        narrowest = narrowest.min(reach - start);
        if pieces >= 2 && widest <= narrow {
            lines += 1;
        }
        if pieces == 2 && narrowest >= wide {
            prose += 1;
        }
        if lines >= 3 && prose >= 3 {
            break;
        }
    }
    (lines >= 3, prose >= 3)
}

/// Rules at one position joined where they touch or overlap (a row's rule is often drawn
/// cell by cell, a bar as its two edges); pieces with a gap between stay apart.
fn join(mut rules: Vec<Rule>) -> Vec<Rule> {
    rules.sort_by(|a, b| a.at.total_cmp(&b.at).then(a.from.total_cmp(&b.from)));
    let mut out: Vec<Rule> = Vec::new();
    'next: for r in rules {
        // Among the rules at this position (the last few pushed), one this one meets; at
        // most 64 looked at (dashes at one height that never meet would make it quadratic).
        for last in out.iter_mut().rev().take(64) {
            if r.at - last.at > SNAP {
                break;
            }
            if r.from <= last.to + SNAP && r.to >= last.from - SNAP {
                last.to = last.to.max(r.to);
                last.from = last.from.min(r.from);
                last.at = (last.at + r.at) / 2.0;
                continue 'next;
            }
        }
        out.push(r);
    }
    out
}

/// One group of rules that meet: those across and those down.
struct Group {
    across: Vec<Rule>,
    down: Vec<Rule>,
}

/// The rules joined, then grouped where an across rule and a down rule meet: the groups
/// with two across rules or more and a down rule, and the across rules no down rule meets.
fn groups(across: Vec<Rule>, down: Vec<Rule>) -> (Vec<Group>, Vec<Rule>) {
    let (across, down) = (join(across), join(down));
    let n = across.len() + down.len();
    // Every across rule is tried against every down rule: a page of hatching is no table.
    if across.len() * down.len() > MAX_PAIRS || across.len() > MAX_SEGMENTS / 4 {
        return (Vec::new(), Vec::new());
    }
    let mut parent: Vec<usize> = (0..n).collect();
    for (i, a) in across.iter().enumerate() {
        for (j, d) in down.iter().enumerate() {
            let meet = d.at >= a.from - MEET
                && d.at <= a.to + MEET
                && a.at >= d.from - MEET
                && a.at <= d.to + MEET;
            if meet {
                let (x, y) = (root(&mut parent, i), root(&mut parent, across.len() + j));
                parent[x] = y;
            }
        }
    }
    let mut by_root: std::collections::BTreeMap<usize, Group> = Default::default();
    for (i, a) in across.iter().enumerate() {
        let r = root(&mut parent, i);
        by_root
            .entry(r)
            .or_insert_with(|| Group {
                across: Vec::new(),
                down: Vec::new(),
            })
            .across
            .push(*a);
    }
    for (j, d) in down.iter().enumerate() {
        let r = root(&mut parent, across.len() + j);
        if let Some(g) = by_root.get_mut(&r) {
            g.down.push(*d);
        }
    }
    let mut lone = Vec::new();
    let mut out = Vec::new();
    for g in by_root.into_values() {
        if g.down.is_empty() {
            lone.extend(g.across);
        } else if g.across.len() >= 2 {
            out.push(g);
        }
    }
    (out, lone)
}

/// The across rules no down rule meets that could bound a table (`rows_between_rules`),
/// top first: at least 60 points wide, with another of their width below them within 70 %
/// of the page's height (a page's header and footer rules are not). Checked before the
/// page's characters are read, so that most pages read none.
fn paired(mut lone: Vec<Rule>, page_height: f32) -> Vec<Rule> {
    lone.retain(|r| r.to - r.from >= 60.0);
    lone.sort_by(|a, b| b.at.total_cmp(&a.at));
    let near = |a: &Rule, b: &Rule| {
        (a.from - b.from).abs() <= 3.0
            && (a.to - b.to).abs() <= 3.0
            && (a.at - b.at).abs() <= 0.7 * page_height
            && (a.at - b.at).abs() > SNAP
    };
    let keep: Vec<bool> = lone
        .iter()
        .map(|a| lone.iter().any(|b| near(a, b)))
        .collect();
    let out: Vec<Rule> = lone
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(r, _)| r)
        .collect();
    // Each window reads the page's characters: a page of hundreds of long rules (lined
    // paper, a form) is not read this way.
    if out.len() > MAX_PAIRED {
        return Vec::new();
    }
    out
}

/// Tables ruled only across, as papers draw them (a rule above, one under the header, one
/// below; no rule down): rules of one width (at least 60 points) taken two to four at a
/// time, top first (the window with the most columns); between the outer two, the characters' rows (a row a line, or more
/// where the lines below the first have nothing in the first column; the rows
/// above the first inner rule are one header row) and columns where every row of the body
/// leaves a gap (at least 6 points, and 0.8 of the text's height). Only where that reads
/// as a table: two columns or more, two body rows or more with two cells of text, at most
/// 60 rows, short cells (half of them at most 40 characters), no taller than 70 % of the
/// page. Otherwise nothing (prose between two rules stays prose).
fn rows_between_rules(lone: Vec<Rule>, read: &[Line], page_height: f32) -> Vec<Table> {
    let mut out: Vec<Table> = Vec::new();
    let mut used = vec![false; lone.len()];
    for k in 0..lone.len() {
        if used[k] {
            continue;
        }
        let a = lone[k];
        // The rules of this one's width below it, in order.
        let same: Vec<usize> = (k..lone.len())
            .filter(|&j| {
                !used[j] && (lone[j].from - a.from).abs() <= 3.0 && (lone[j].to - a.to).abs() <= 3.0
            })
            .collect();
        // Of the windows of two to four rules from this one, the one with the most
        // columns (a line of prose taken in closes the gaps between them), the smallest of
        // those.
        let mut best: Option<(usize, Table)> = None;
        for n in 2..=same.len().min(4) {
            let window: Vec<Rule> = same[..n].iter().map(|&j| lone[j]).collect();
            if a.at - window[n - 1].at > 0.7 * page_height {
                break;
            }
            if let Some(t) = Table::between(&window, read) {
                let more = best.as_ref().is_none_or(|(_, b)| t.xs.len() > b.xs.len());
                if more && out.iter().all(|o| o.apart(&t)) {
                    best = Some((n, t));
                }
            }
        }
        if let Some((n, t)) = best {
            out.push(t);
            for &j in &same[..n] {
                used[j] = true;
            }
        }
    }
    out
}

/// Tables without rules (issue #44 item 5): runs of at least three lines, one below the
/// other, whose words stand apart in columns — each line's drawn characters fall into
/// two or more pieces at least a text height apart, none of them wider than `NARROW` of
/// the page (prose, and a column of prose beside another, has long pieces). A line of one
/// short piece between two such lines stays in the run (a sparse row). Each run's box
/// is then read as the table between two rules would be (`Table::between`): columns
/// where every body row leaves a gap, and only where that reads as a table (short cells,
/// two filled cells in most rows).
fn without_rules(read: &[Line], page_width: f32, taken: &[Table], art: &[Bounds]) -> Vec<Table> {
    /// A piece of a tabular line is at most this share of the page's width.
    const NARROW: f32 = 0.3;
    // Each line: its drawn characters' box, text height and pieces (`None`: nothing
    // drawn).
    struct Row {
        l: f32,
        r: f32,
        b: f32,
        t: f32,
        h: f32,
        pieces: usize,
        widest: f32,
        /// A piece of dots only (a leader: a form's or a contents' line, not a cell), or
        /// text of two sizes: no row of a table.
        no_row: bool,
        /// Its characters all of one width (a listing in a fixed-width font).
        fixed: bool,
    }
    let rows: Vec<Option<Row>> = read
        .iter()
        .map(|line| {
            let mut g: Vec<(f32, f32, f32, f32, char)> = line
                .iter()
                .filter(|g| !g.ch.is_whitespace() && g.r > g.l && g.t > g.b)
                .map(|g| (g.l, g.r, g.b, g.t, g.ch))
                .collect();
            if g.is_empty() {
                return None;
            }
            let mut hs: Vec<f32> = g.iter().map(|g| g.3 - g.2).collect();
            hs.sort_by(f32::total_cmp);
            let h = hs[hs.len() / 2];
            // Text of two sizes (a title with a note beside it) is no row.
            let mixed = hs[hs.len() * 9 / 10] > 1.5 * h;
            g.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (mut pieces, mut widest, mut start, mut reach) = (1, 0.0f32, g[0].0, g[0].1);
            // A gap is a text height wide at least, of the larger text beside it (a
            // title's word space is no column).
            let mut prev_h = g[0].3 - g[0].2;
            let mut leader = false;
            let is_dot = |c: char| matches!(c, '.' | '…' | '·' | '_');
            let mut dots = is_dot(g[0].4);
            for x in &g[1..] {
                let gap = h.max(6.0).max(prev_h).max(x.3 - x.2);
                prev_h = x.3 - x.2;
                if x.0 - reach >= gap {
                    leader |= dots;
                    dots = true;
                    // The first piece's characters: a list's marker is no column.
                    if pieces == 1 {
                        let first: String =
                            g.iter().take_while(|y| y.0 < x.0).map(|y| y.4).collect();
                        if list_marker(&first) {
                            pieces -= 1;
                        }
                    }
                    widest = widest.max(reach - start);
                    pieces += 1;
                    start = x.0;
                }
                dots &= is_dot(x.4);
                reach = reach.max(x.1);
            }
            widest = widest.max(reach - start);
            let mut widths: Vec<f32> = g.iter().map(|x| x.1 - x.0).collect();
            widths.sort_by(f32::total_cmp);
            let w = widths[widths.len() / 2];
            // (Letters among them: figures are one width in most fonts.)
            let fixed = widths.len() >= 8
                && g.iter().filter(|x| x.4.is_alphabetic()).count() >= 4
                && widths
                    .iter()
                    .filter(|&&x| (x - w).abs() <= 0.03 * w)
                    .count()
                    * 20
                    >= widths.len() * 17;
            Some(Row {
                no_row: leader || (pieces > 1 && dots) || mixed,
                fixed,
                l: g[0].0,
                r: reach,
                b: g.iter().map(|x| x.2).fold(f32::MAX, f32::min),
                t: g.iter().map(|x| x.3).fold(f32::MIN, f32::max),
                h,
                pieces,
                widest,
            })
        })
        .collect();
    let narrow = NARROW * page_width;
    let tabular = |r: &Row| r.pieces >= 2 && r.widest <= narrow && !r.no_row;
    let lone = |r: &Row| r.pieces == 1 && r.widest <= narrow;
    let mut out: Vec<Table> = Vec::new();
    let drawn: Vec<(usize, &Row)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
        .collect();
    let mut k = 0;
    // Runs read as tables on one page at most (each reads the page's characters).
    let mut tried = 0;
    while k < drawn.len() && tried < MAX_RUNS {
        if !tabular(drawn[k].1) {
            k += 1;
            continue;
        }
        // The run from here: each next line below the one before, not far below.
        let mut end = k + 1;
        let mut last_tabular = k;
        let mut left = drawn[k].1.l;
        while end < drawn.len() {
            let (prev, next) = (drawn[end - 1].1, drawn[end].1);
            // A line of one piece at the run's left edge is a heading between two tables
            // (or under one), not a sparse row.
            let lone = |r: &Row| lone(r) && r.l > left + prev.h;
            // ... in text of about one size (a title above a table is no row of it).
            let below = next.t <= prev.b + 0.5 * prev.h
                && prev.b - next.t <= 3.0 * prev.h
                && next.h <= 1.4 * prev.h
                && prev.h <= 1.4 * next.h;
            if !below || !(tabular(next) || lone(next)) {
                break;
            }
            if tabular(next) {
                last_tabular = end;
                left = left.min(next.l);
            }
            end += 1;
        }
        let run = &drawn[k..=last_tabular];
        k = last_tabular + 1;
        // Three lines at least; a run of two pieces a line (a term and its value, code
        // with a keyword apart) four.
        let lines = run.iter().filter(|(_, r)| tabular(r)).count();
        let wide = run.iter().any(|(_, r)| r.pieces >= 3);
        if lines < 3 || (!wide && lines < 4) {
            continue;
        }
        // A listing in a fixed-width font lines up as it was typed: no table.
        if run.iter().filter(|(_, r)| r.fixed).count() * 2 > run.len() {
            continue;
        }
        let l = run.iter().map(|(_, r)| r.l).fold(f32::MAX, f32::min);
        let r = run.iter().map(|(_, r)| r.r).fold(f32::MIN, f32::max);
        let t = run.iter().map(|(_, r)| r.t).fold(f32::MIN, f32::max) + 0.5;
        let b = run.iter().map(|(_, r)| r.b).fold(f32::MAX, f32::min) - 0.5;
        // Over a picture or a drawing (a tenth of its box or more), the labels of a figure.
        let area = (r - l) * (t - b);
        let under: f32 = art
            .iter()
            .map(|a| ((a.2.min(r) - a.0.max(l)).max(0.0)) * ((a.3.min(t) - a.1.max(b)).max(0.0)))
            .sum();
        if under >= 0.1 * area {
            continue;
        }
        tried += 1;
        let edges = [
            Rule {
                at: t,
                from: l,
                to: r,
            },
            Rule {
                at: b,
                from: l,
                to: r,
            },
        ];
        if let Some(table) = Table::between(&edges, read) {
            if taken.iter().chain(&out).all(|o| o.apart(&table)) {
                out.push(table);
            }
        }
    }
    out
}

/// A list item's marker set apart from its text: what starts a list item in a paragraph
/// (`paragraphs::list_item`: a bullet, a dash, `3.`, `b)`, `iv.`), or a symbol font's
/// bullet PDFium gives as a private-use character.
fn list_marker(s: &str) -> bool {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(ch), None) if ('\u{e000}'..='\u{f8ff}').contains(&ch) => true,
        _ => super::paragraphs::list_item(&format!("{s} x")),
    }
}

/// The set `i` belongs to in a union-find forest (paths halved on the way).
fn root(p: &mut [usize], mut i: usize) -> usize {
    while p[i] != i {
        p[i] = p[p[i]];
        i = p[i];
    }
    i
}

/// Positions within `SNAP` of each other made one (sorted, ascending).
fn positions(mut at: Vec<f32>) -> Vec<f32> {
    at.sort_by(f32::total_cmp);
    let mut out: Vec<f32> = Vec::new();
    for a in at {
        match out.last() {
            Some(&l) if a - l <= SNAP => {}
            _ => out.push(a),
        }
    }
    out
}

/// How much of `[a0, a1]` the span `[b0, b1]` covers, as a share of `[a0, a1]`.
fn covers(a0: f32, a1: f32, b0: f32, b1: f32) -> f32 {
    ((a1.min(b1) - a0.max(b0)).max(0.0)) / (a1 - a0).max(1e-3)
}

/// A group of rules as a grid: its column edges (left to right), its row edges (bottom to
/// top), which grid cells are one cell, and the characters each cell took so far.
struct Table {
    xs: Vec<f32>,
    ys: Vec<f32>,
    /// For each grid cell (row from the bottom × column), the cell it belongs to (its
    /// top-left grid cell's index).
    cell: Vec<usize>,
    /// Each grid cell's text, and the last line a character came from.
    text: Vec<String>,
    last_line: Vec<Option<usize>>,
    lines: Vec<usize>,
    /// Each merged cell's grid rows (from the bottom) and columns, first to last, at its
    /// top-left grid cell.
    extent: Vec<(usize, usize, usize, usize)>,
    /// Its columns come from gaps in the text, not rules: a word goes whole to one cell.
    by_gaps: bool,
}

impl Table {
    /// The grid the rules draw, or `None` when it is too small, too large, or a merged
    /// cell is not a rectangle.
    fn new(g: Group) -> Option<Table> {
        let l = g
            .across
            .iter()
            .map(|a| a.from)
            .chain(g.down.iter().map(|d| d.at))
            .fold(f32::MAX, f32::min);
        let r = g
            .across
            .iter()
            .map(|a| a.to)
            .chain(g.down.iter().map(|d| d.at))
            .fold(f32::MIN, f32::max);
        let b = g
            .across
            .iter()
            .map(|a| a.at)
            .chain(g.down.iter().map(|d| d.from))
            .fold(f32::MAX, f32::min);
        let t = g
            .across
            .iter()
            .map(|a| a.at)
            .chain(g.down.iter().map(|d| d.to))
            .fold(f32::MIN, f32::max);
        let xs = positions(g.down.iter().map(|d| d.at).chain([l, r]).collect());
        let ys = positions(g.across.iter().map(|a| a.at).chain([b, t]).collect());
        let (nc, nr) = (xs.len().checked_sub(1)?, ys.len().checked_sub(1)?);
        if nc < 2
            || nr < 2
            || nc > MAX_COLUMNS
            || nr > MAX_ROWS
            || nr * nc * (g.across.len() + g.down.len()) > MAX_PAIRS
        {
            return None;
        }
        // Which edges are drawn: between columns `j-1` and `j` in row `i`, a down rule
        // over most of the row's height; between rows `i-1` and `i` in column `j`, an
        // across rule over most of the column's width.
        let wall = |j: usize, i: usize| {
            g.down.iter().any(|d| {
                (d.at - xs[j]).abs() <= SNAP && covers(ys[i], ys[i + 1], d.from, d.to) >= 0.6
            })
        };
        let floor = |i: usize, j: usize| {
            g.across.iter().any(|a| {
                (a.at - ys[i]).abs() <= SNAP && covers(xs[j], xs[j + 1], a.from, a.to) >= 0.6
            })
        };
        let at = |i: usize, j: usize| i * nc + j;
        let mut parent: Vec<usize> = (0..nr * nc).collect();
        for i in 0..nr {
            for j in 0..nc {
                if j > 0 && !wall(j, i) {
                    let (a, z) = (root(&mut parent, at(i, j - 1)), root(&mut parent, at(i, j)));
                    parent[a] = z;
                }
                if i > 0 && !floor(i, j) {
                    let (a, z) = (root(&mut parent, at(i - 1, j)), root(&mut parent, at(i, j)));
                    parent[a] = z;
                }
            }
        }
        // Each merged cell a rectangle, named by its top-left grid cell.
        let mut span: std::collections::HashMap<usize, (usize, usize, usize, usize, usize)> =
            Default::default();
        for i in 0..nr {
            for j in 0..nc {
                let r = root(&mut parent, at(i, j));
                let e = span.entry(r).or_insert((i, i, j, j, 0));
                *e = (e.0.min(i), e.1.max(i), e.2.min(j), e.3.max(j), e.4 + 1);
            }
        }
        let mut cell = vec![0; nr * nc];
        let mut extent = vec![(0, 0, 0, 0); nr * nc];
        for i in 0..nr {
            for j in 0..nc {
                let (i0, i1, j0, j1, n) = span[&root(&mut parent, at(i, j))];
                if (i1 - i0 + 1) * (j1 - j0 + 1) != n {
                    return None;
                }
                cell[at(i, j)] = at(i1, j0); // rows count from the bottom: i1 is the top
                extent[at(i1, j0)] = (i0, i1, j0, j1);
            }
        }
        if span.len() < 4 {
            return None;
        }
        Some(Table {
            text: vec![String::new(); nr * nc],
            last_line: vec![None; nr * nc],
            lines: vec![0; nr * nc],
            extent,
            by_gaps: false,
            xs,
            ys,
            cell,
        })
    }

    /// A table between rules across only (`rows_between_rules`, top rule first), or
    /// `None` when the characters between them do not read as one.
    fn between(rules: &[Rule], read: &[Line]) -> Option<Table> {
        let (top, bottom) = (rules[0].at, rules[rules.len() - 1].at);
        let (l, r) = (
            rules.iter().map(|x| x.from).fold(f32::MAX, f32::min) - SNAP,
            rules.iter().map(|x| x.to).fold(f32::MIN, f32::max) + SNAP,
        );
        // The drawn characters between the rules: (left, right, middle y, height).
        let mut glyphs: Vec<(f32, f32, f32, f32, char)> = Vec::new();
        for line in read {
            for g in line {
                if g.ch.is_whitespace() || g.r <= g.l || g.t <= g.b {
                    continue;
                }
                let (x, y) = ((g.l + g.r) / 2.0, (g.b + g.t) / 2.0);
                if x > l && x < r && y < top && y > bottom {
                    glyphs.push((g.l, g.r, y, g.t - g.b, g.ch));
                }
            }
        }
        if glyphs.len() < 4 || glyphs.len() > 20_000 {
            return None;
        }
        let mut heights: Vec<f32> = glyphs.iter().map(|g| g.3).collect();
        heights.sort_by(f32::total_cmp);
        let height = heights[heights.len() / 2];
        // Rows: characters whose middles are within half a text height, top first.
        glyphs.sort_by(|a, b| b.2.total_cmp(&a.2));
        let mut rows: Vec<(f32, f32)> = Vec::new(); // (top middle, bottom middle)
        for g in &glyphs {
            match rows.last_mut() {
                Some(row) if row.1 - g.2 <= 0.5 * height => row.1 = row.1.min(g.2),
                _ => rows.push((g.2, g.2)),
            }
        }
        if rows.len() > 60 {
            return None;
        }
        // The header: rows above the first inner rule (or the first row).
        let head_end = match rules.get(1) {
            Some(mid) if rules.len() > 2 => mid.at,
            _ => rows.first().map_or(top, |h| h.1 - 0.5 * height),
        };
        let body: Vec<&(f32, f32, f32, f32, char)> =
            glyphs.iter().filter(|g| g.2 < head_end).collect();
        // Columns: gaps every body row leaves, wide enough.
        let gap = (0.8 * height).max(6.0);
        let mut spans: Vec<(f32, f32)> = body.iter().map(|g| (g.0, g.1)).collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        // The header's words (characters less than a third of the text's height apart),
        // which an edge should not cut where the gap leaves room.
        let mut head: Vec<(f32, f32, f32)> = glyphs
            .iter()
            .filter(|g| g.2 >= head_end)
            .map(|g| (g.0, g.1, g.2))
            .collect();
        head.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.total_cmp(&b.0)));
        let mut words: Vec<(f32, f32, f32)> = Vec::new();
        for g in head {
            match words.last_mut() {
                Some(w) if (w.2 - g.2).abs() <= 0.5 * height && g.0 - w.1 <= height / 3.0 => {
                    w.1 = w.1.max(g.1)
                }
                _ => words.push(g),
            }
        }
        if words.len() > 2_000 {
            return None;
        }
        // Sorted by left edge and merged where they overlap: a point is looked up by a
        // binary search.
        let mut spans_h: Vec<(f32, f32)> = words.iter().map(|w| (w.0, w.1)).collect();
        spans_h.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f32, f32)> = Vec::new();
        for (a, z) in spans_h {
            match merged.last_mut() {
                Some(m) if a <= m.1 => m.1 = m.1.max(z),
                _ => merged.push((a, z)),
            }
        }
        let inside = |x: f32| {
            let k = merged.partition_point(|m| m.0 < x);
            k > 0 && x < merged[k - 1].1
        };
        let mut edges = vec![l];
        let mut reach = f32::MIN;
        for (a, z) in spans {
            if reach > f32::MIN && a - reach >= gap {
                let mid = (a + reach) / 2.0;
                // The middle of the gap, or else a point in it between header words.
                let at = if inside(mid) {
                    merged
                        .iter()
                        .flat_map(|w| [w.0 - 0.5, w.1 + 0.5])
                        .filter(|&x| x > reach && x < a && !inside(x))
                        .min_by(|p, q| (p - mid).abs().total_cmp(&(q - mid).abs()))
                        .unwrap_or(mid)
                } else {
                    mid
                };
                edges.push(at);
                if edges.len() > MAX_COLUMNS + 1 {
                    return None;
                }
            }
            reach = reach.max(z);
        }
        edges.push(r);
        let nc = edges.len() - 1;
        if !(2..=MAX_COLUMNS).contains(&nc) {
            return None;
        }
        // Row edges, bottom to top: the bottom rule, between body rows, the header's
        // bottom, the top rule.
        let mut ys = vec![bottom];
        let mut body_rows: Vec<&(f32, f32)> = rows.iter().filter(|row| row.0 < head_end).collect();
        // A row with nothing in the first column and text in at most half the columns goes
        // on the row above (a cell's text wrapped onto a second line; a statement's
        // continuation in a listing); a row of a group, whose first column is left blank
        // under the group's name, has its other cells and stays a row.
        let filled = |row: &(f32, f32)| {
            let mut cols = vec![false; nc];
            for g in &body {
                if g.2 <= row.0 + 0.5 * height && g.2 >= row.1 - 0.5 * height {
                    let j = edges[1..]
                        .partition_point(|&e| e < (g.0 + g.1) / 2.0)
                        .min(nc - 1);
                    cols[j] = true;
                }
            }
            cols
        };
        let goes_on = |row: &(f32, f32)| {
            let cols = filled(row);
            !cols[0] && cols.iter().filter(|c| **c).count() <= nc / 2
        };
        // Without a rule under the header, the header's own wrapped lines are its own.
        let mut head_end = head_end;
        if rules.len() <= 2 {
            while body_rows.first().is_some_and(|row| {
                goes_on(row)
                    && rows
                        .iter()
                        .any(|r| r.1 > row.0 && r.1 - row.0 <= 1.7 * height)
            }) {
                head_end = body_rows[0].1 - 0.5 * height;
                body_rows.remove(0);
            }
        }
        // ... and only at a cell's own line spacing: a row further below the one before
        // (1.7 text heights, middle to middle) is a row of a sparse table, not a
        // wrapped line.
        let cont: Vec<bool> = body_rows
            .iter()
            .enumerate()
            .map(|(i, row)| i > 0 && body_rows[i - 1].1 - row.0 <= 1.7 * height && goes_on(row))
            .collect();
        for (i, w) in body_rows.windows(2).enumerate().rev() {
            if !cont[i + 1] {
                ys.push((w[0].1 + w[1].0) / 2.0);
            }
        }
        if body_rows.len() < 2 || body_rows.len() == rows.len() && rules.len() > 2 {
            return None;
        }
        if body_rows.len() < rows.len() {
            ys.push(head_end);
        }
        ys.push(top);
        let nr = ys.len() - 1;
        // Each cell's text, to judge it: short cells, two of them in most body rows.
        let mut cells = vec![0usize; nr * nc];
        for g in &glyphs {
            let j = edges[1..]
                .partition_point(|&e| e < (g.0 + g.1) / 2.0)
                .min(nc - 1);
            let i = ys[1..].partition_point(|&e| e < g.2).min(nr - 1);
            cells[i * nc + j] += 1;
        }
        let body_n = cont.iter().filter(|c| !**c).count();
        let full = (0..body_n)
            .filter(|&i| (0..nc).filter(|&j| cells[i * nc + j] > 0).count() >= 2)
            .count();
        let mut lens: Vec<usize> = cells.iter().copied().filter(|&n| n > 0).collect();
        lens.sort_unstable();
        if full < 2 || 2 * full < body_n || lens.is_empty() || lens[lens.len() / 2] > 40 {
            return None;
        }
        Some(Table {
            text: vec![String::new(); nr * nc],
            last_line: vec![None; nr * nc],
            lines: vec![0; nr * nc],
            extent: (0..nr * nc)
                .map(|k| (k / nc, k / nc, k % nc, k % nc))
                .collect(),
            cell: (0..nr * nc).collect(),
            by_gaps: true,
            xs: edges,
            ys,
        })
    }

    fn bounds(&self) -> (f32, f32, f32, f32) {
        (
            self.xs[0],
            self.ys[0],
            self.xs[self.xs.len() - 1],
            self.ys[self.ys.len() - 1],
        )
    }

    /// Whether the two grids do not overlap.
    fn apart(&self, o: &Table) -> bool {
        let (l, b, r, t) = self.bounds();
        let (ol, ob, or, ot) = o.bounds();
        or <= l || ol >= r || ot <= b || ob >= t
    }

    /// The grid cell a point falls in, if inside the grid.
    fn cell_at(&self, x: f32, y: f32) -> Option<usize> {
        let (l, b, r, t) = self.bounds();
        if x < l || x > r || y < b || y > t {
            return None;
        }
        let j = self.xs[1..]
            .partition_point(|&e| e < x)
            .min(self.xs.len() - 2);
        let i = self.ys[1..]
            .partition_point(|&e| e < y)
            .min(self.ys.len() - 2);
        Some(self.cell[i * (self.xs.len() - 1) + j])
    }

    /// Its cells emptied, to be filled again.
    fn clear(&mut self) {
        self.text.iter_mut().for_each(String::clear);
        self.last_line.iter_mut().for_each(|l| *l = None);
        self.lines.iter_mut().for_each(|n| *n = 0);
    }

    /// A character of the page into grid cell `c`'s cell (a space first where its line
    /// changed).
    fn take(&mut self, c: usize, ch: char, line: usize) {
        if self.last_line[c].is_some_and(|l| l != line) {
            self.text[c].push(' ');
            self.lines[c] += 1;
        }
        self.last_line[c] = Some(line);
        // A control character stays (a soft hyphen's U+0002 or a bullet PDFium gives so is
        // turned into text with the rest of the page's, `text::without_controls`).
        self.text[c].push(if ch.is_whitespace() { ' ' } else { ch });
    }

    /// The table's rows, top first, without rows or columns that hold nothing; `None`
    /// when that is no table: fewer than two rows and two columns, fewer than two rows
    /// with two cells of text, or a cell of prose.
    fn finish(&self) -> Option<Grid> {
        let nc = self.xs.len() - 1;
        let nr = self.ys.len() - 1;
        if self.lines.iter().any(|&n| n >= MAX_CELL_LINES) {
            return None;
        }
        let text = |k: usize| {
            if self.cell[k] == k {
                self.text[k]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                String::new()
            }
        };
        // Grid rows top first; rows and columns where no cell has text are left out.
        let grid: Vec<Vec<String>> = (0..nr)
            .rev()
            .map(|i| (0..nc).map(|j| text(i * nc + j)).collect())
            .collect();
        let keep_row: Vec<bool> = grid
            .iter()
            .map(|r| r.iter().any(|c| !c.is_empty()))
            .collect();
        let keep_col: Vec<bool> = (0..nc)
            .map(|j| grid.iter().any(|r| !r[j].is_empty()))
            .collect();
        let kept_before = |keep: &[bool], k: usize| keep[..k].iter().filter(|x| **x).count();
        let mut spans = Vec::new();
        for (k, &(i0, i1, j0, j1)) in self.extent.iter().enumerate() {
            if self.cell[k] != k || (i0 == i1 && j0 == j1) {
                continue;
            }
            // Grid rows from the top: the top row `i1` is `nr - 1 - i1`.
            let (top, bottom) = (nr - 1 - i1, nr - 1 - i0);
            if !keep_row[top] || !keep_col[j0] {
                continue;
            }
            let rows = keep_row[top..=bottom].iter().filter(|x| **x).count() as u32;
            let columns = keep_col[j0..=j1].iter().filter(|x| **x).count() as u32;
            if rows > 1 || columns > 1 {
                spans.push(crate::model::CellSpan {
                    row: kept_before(&keep_row, top) as u32,
                    column: kept_before(&keep_col, j0) as u32,
                    rows,
                    columns,
                });
            }
        }
        spans.sort_by_key(|s| (s.row, s.column));
        let out: Vec<Vec<String>> = grid
            .into_iter()
            .zip(&keep_row)
            .filter(|(_, k)| **k)
            .map(|(row, _)| {
                row.into_iter()
                    .zip(&keep_col)
                    .filter(|(_, k)| **k)
                    .map(|(c, _)| c)
                    .collect()
            })
            .collect();
        let cols = keep_col.iter().filter(|k| **k).count();
        let full = out
            .iter()
            .filter(|r| r.iter().filter(|c| !c.is_empty()).count() >= 2)
            .count();
        if out.len() < 2 || cols < 2 || full < 2 {
            return None;
        }
        // The header: the top row, and the rows its cells reach down over where it is a
        // grouped header (a cell over several columns in it); a label down the first
        // column of a table without one heads nothing.
        let grouped = spans.iter().any(|s| s.row == 0 && s.columns > 1);
        let header_rows = if grouped {
            spans
                .iter()
                .filter(|s| s.row == 0)
                .map(|s| s.rows)
                .max()
                .unwrap_or(1)
                .min(out.len() as u32 - 1)
                .max(1)
        } else {
            1
        };
        Some(Grid {
            header_rows,
            rows: out,
            spans,
            bounds: self.bounds(),
        })
    }
}

/// Where each character of the page's lines goes: `(table, grid cell)`, or `None` for the
/// text around the tables. A drawn character by the middle of its box; a blank (or a
/// character without a box) goes with its neighbours on its line when they are one
/// table's (the first's cell), else stays text.
fn owners(read: &[Line], tables: &[Table]) -> Vec<Vec<Option<(usize, usize)>>> {
    read.iter()
        .map(|line| {
            let drawn: Vec<Option<Option<(usize, usize)>>> = line
                .iter()
                .map(|g| {
                    let shown = !g.ch.is_whitespace() && g.r > g.l && g.t > g.b;
                    shown.then(|| {
                        let (x, y) = ((g.l + g.r) / 2.0, (g.b + g.t) / 2.0);
                        tables
                            .iter()
                            .enumerate()
                            .find_map(|(t, tb)| tb.cell_at(x, y).map(|c| (t, c)))
                    })
                })
                .collect();
            // In a table whose columns are gaps in the text, a word is not cut between
            // cells: the characters of a run without a blank or a gap (half the text's
            // height) go where its middle character goes. (A drawn rule between two
            // characters is evidence enough: ruled tables keep each where it is.)
            let mut drawn = drawn;
            let mut k = 0;
            while k < line.len() {
                let Some(Some((t, _))) = drawn[k] else {
                    k += 1;
                    continue;
                };
                if !tables[t].by_gaps {
                    k += 1;
                    continue;
                }
                let mut z = k + 1;
                while z < line.len()
                    && matches!(drawn[z], Some(Some((u, _))) if u == t)
                    && line[z].l - line[z - 1].r <= 0.5 * (line[z - 1].t - line[z - 1].b)
                {
                    z += 1;
                }
                let mid = drawn[(k + z - 1) / 2];
                for d in &mut drawn[k..z] {
                    *d = mid;
                }
                k = z;
            }
            // The nearest drawn character before and after each one (two passes, not a
            // search for each blank).
            let mut before = vec![None; line.len()];
            let mut last = None;
            for k in 0..line.len() {
                before[k] = last;
                if let Some(o) = drawn[k] {
                    last = Some(o);
                }
            }
            let mut after = vec![None; line.len()];
            let mut next = None;
            for k in (0..line.len()).rev() {
                after[k] = next;
                if let Some(o) = drawn[k] {
                    next = Some(o);
                }
            }
            (0..line.len())
                .map(|k| match drawn[k] {
                    Some(o) => o,
                    None => match (before[k], after[k]) {
                        (Some(Some(a)), Some(Some(z))) if a.0 == z.0 => Some(a),
                        (Some(Some(a)), None) => Some(a),
                        (None, Some(Some(z))) => Some(z),
                        _ => None,
                    },
                })
                .collect()
        })
        .collect()
}
