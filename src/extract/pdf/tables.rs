//! Markdown tables of a PDF page, only where they are certain: one full grid of ruling
//! lines (every vertical rule spans the grid's height, every horizontal rule inside it its
//! width; at least two rows and two columns), and the text of its cells together with the
//! text above and below it is all of the page's text, character for character. Anything
//! else — a table without rules, merged cells, two tables on a page, text beside the grid —
//! stays plain lines (the read's warnings say tables come as lines).

use pdfium_render::prelude::*;

/// How far apart two rules' positions may be and still be one (points).
const SNAP: f32 = 2.0;
/// A rule is at most this thick, and at least `MIN_LEN` long (points).
const THIN: f32 = 2.0;
const MIN_LEN: f32 = 10.0;

/// A rule: its position across, and the span along it.
#[derive(Debug, Clone, Copy)]
struct Rule {
    at: f32,
    from: f32,
    to: f32,
}

/// Rules at the same position joined into one (a row's rule is often drawn cell by cell):
/// `None` when the pieces at a position leave a gap.
fn join(mut rules: Vec<Rule>) -> Option<Vec<Rule>> {
    rules.sort_by(|a, b| a.at.total_cmp(&b.at).then(a.from.total_cmp(&b.from)));
    let mut out: Vec<Rule> = Vec::new();
    for r in rules {
        match out.last_mut() {
            Some(last) if (r.at - last.at).abs() <= SNAP => {
                if r.from > last.to + SNAP {
                    return None; // a gap: merged cells, or two tables
                }
                last.to = last.to.max(r.to);
                last.from = last.from.min(r.from);
            }
            _ => out.push(r),
        }
    }
    Some(out)
}

/// A page's one ruled table: the text above it, its rows of cells (top first), the text
/// below it.
pub(super) struct Found {
    pub above: String,
    pub rows: Vec<Vec<String>>,
    pub below: String,
}

/// The page's text with its one ruled table as a GFM pipe table, or `None` when that is
/// not certain. `text` is the page's text as read (only a page whose text is its plain
/// text layer is considered).
pub(super) fn mark(page: &PdfPage<'_>, text: &str) -> Option<String> {
    let Found { above, rows, below } = find(page, text)?;
    let cols = rows.iter().map(Vec::len).max().unwrap_or(1);
    let mut out = String::new();
    if !above.trim().is_empty() {
        out.push_str(above.trim_end());
        out.push_str("\n\n");
    }
    for (k, row) in rows.iter().enumerate() {
        out.push('|');
        for c in row {
            out.push(' ');
            out.push_str(&c.replace('|', "\\|"));
            out.push_str(" |");
        }
        out.push('\n');
        if k == 0 {
            out.push_str(&crate::extract::markdown::separator(cols));
        }
    }
    if !below.trim().is_empty() {
        out.push('\n');
        out.push_str(below.trim_start());
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Some(out)
}

/// The page's one ruled table, or `None` when that is not certain: every character of the
/// page above it, in a cell or below it (only a page whose text is its plain text layer).
pub(super) fn find(page: &PdfPage<'_>, text: &str) -> Option<Found> {
    let (mut across, mut down) = (Vec::new(), Vec::new());
    for o in page.objects().iter() {
        if o.object_type() != PdfPageObjectType::Path {
            continue;
        }
        let Ok(b) = o.bounds() else { continue };
        let (l, bo, r, t) = (
            b.left().value,
            b.bottom().value,
            b.right().value,
            b.top().value,
        );
        let (w, h) = (r - l, t - bo);
        if h <= THIN && w >= MIN_LEN {
            across.push(Rule {
                at: (bo + t) / 2.0,
                from: l,
                to: r,
            });
        } else if w <= THIN && h >= MIN_LEN {
            down.push(Rule {
                at: (l + r) / 2.0,
                from: bo,
                to: t,
            });
        }
    }
    if down.len() < 3 || across.len() < 3 {
        return None;
    }
    let down = join(down)?;
    // Every vertical rule spans the same height: one grid.
    let (y0, y1) = (down[0].from, down[0].to);
    if down.len() < 3
        || down
            .iter()
            .any(|d| (d.from - y0).abs() > SNAP || (d.to - y1).abs() > SNAP)
    {
        return None;
    }
    let (x0, x1) = (down[0].at, down[down.len() - 1].at);
    // The horizontal rules inside the grid's height, each across its whole width.
    let across: Vec<Rule> = join(
        across
            .into_iter()
            .filter(|a| a.at >= y0 - SNAP && a.at <= y1 + SNAP)
            .collect(),
    )?;
    if across.len() < 3
        || across
            .iter()
            .any(|a| a.from > x0 + SNAP || a.to < x1 - SNAP)
        || (across[0].at - y0).abs() > SNAP
        || (across[across.len() - 1].at - y1).abs() > SNAP
    {
        return None;
    }
    let layer = page.text().ok()?;
    let grab = |bottom: f32, left: f32, top: f32, right: f32| {
        layer
            .inside_rect(PdfRect::new_from_values(bottom, left, top, right))
            .replace("\r\n", "\n")
            .replace(['\r', '\0'], "\n")
    };
    const FAR: f32 = 1.0e7;
    // Only a page whose text is its plain text layer (no recovered font, no reordered
    // right-to-left run, no form fields added).
    if grab(-FAR, -FAR, FAR, FAR) != text {
        return None;
    }
    let (above, below) = (grab(y1, -FAR, FAR, FAR), grab(-FAR, -FAR, y0, FAR));
    let (left, right) = (grab(y0, -FAR, y1, x0), grab(y0, x1, y1, FAR));
    let ink = |s: &str| s.chars().filter(|c| !c.is_whitespace()).count();
    if ink(&left) + ink(&right) > 0 {
        return None;
    }
    let mut rows: Vec<Vec<String>> = Vec::new();
    for i in (1..across.len()).rev() {
        let (top, bottom) = (across[i].at, across[i - 1].at);
        rows.push(
            down.windows(2)
                .map(|c| {
                    let cell = grab(bottom, c[0].at, top, c[1].at);
                    cell.split_whitespace().collect::<Vec<_>>().join(" ")
                })
                .collect(),
        );
    }
    let cells: usize = rows.iter().flatten().map(|c| ink(c)).sum::<usize>();
    // Every character of the page is above, in a cell, or below: nothing lost, nothing
    // counted twice (a character on a boundary would be).
    if ink(&above) + cells + ink(&below) != ink(text) || cells == 0 {
        return None;
    }
    Some(Found { above, rows, below })
}
