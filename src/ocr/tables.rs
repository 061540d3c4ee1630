//! Tables on OCR'd pages and images (issue #44 item 5): runs of recognised lines set in
//! parts a text height apart, as a scanned table's rows are — the detector's regions of
//! one row (`OcrLine::parts`) are its cells. The parts of a run are sorted into columns
//! where they overlap across the rows, each part whole into the column its middle falls
//! in. Only where that reads as a table: three rows or more (four where each has two
//! parts only), two columns or more, two filled cells in most rows, short cells. Every
//! other line stays a line; plain text keeps every line as it was read. Columns of prose
//! side by side, which the row grouping reads across, are put back in reading order
//! (`columns_in_order`, run by the engine on every page it reads).

use super::OcrLine;

/// A line of the page, or a table made of several lines.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Line(usize),
    /// Its rows of cells (the first one heads it), and the lines it was made of.
    Table {
        rows: Vec<Vec<String>>,
        lines: std::ops::Range<usize>,
    },
}

/// A line's pieces: parts less than a text height apart joined, as (left, right, text).
fn pieces(l: &OcrLine) -> Vec<(u32, u32, String)> {
    joined(l, l.bbox[3].saturating_sub(l.bbox[1]).max(1))
}

/// A line's parts, those less than `h` apart joined.
fn joined(l: &OcrLine, h: u32) -> Vec<(u32, u32, String)> {
    let mut out: Vec<(u32, u32, String)> = Vec::new();
    let mut start = 0;
    // The parts as recorded, where they still fit the text (each end on a character
    // boundary, the last at the text's end); else the line as one part.
    let fits = l.parts.len() >= 2
        && l.parts
            .last()
            .is_some_and(|p| p[2] as usize == l.text.len())
        && l.parts
            .iter()
            .all(|p| l.text.is_char_boundary(p[2] as usize))
        && l.parts.windows(2).all(|w| w[0][2] <= w[1][2]);
    let parts: Vec<[u32; 3]> = if fits {
        l.parts.clone()
    } else {
        vec![[l.bbox[0], l.bbox[2], l.text.len() as u32]]
    };
    for p in parts {
        // Left before right, whatever was recorded.
        let p = [p[0].min(p[1]), p[0].max(p[1]), p[2]];
        let end = (p[2] as usize).min(l.text.len());
        let text = l.text.get(start..end).unwrap_or("").trim().to_string();
        start = end;
        match out.last_mut() {
            Some(last) if p[0] < last.1 + h => {
                last.1 = last.1.max(p[1]);
                if !text.is_empty() {
                    if !last.2.is_empty() {
                        last.2.push(' ');
                    }
                    last.2.push_str(&text);
                }
            }
            _ => out.push((p[0], p[1], text)),
        }
    }
    out
}

/// The lines as lines and tables, in order.
pub fn find(lines: &[OcrLine]) -> Vec<Piece> {
    let shown: Vec<bool> = lines
        .iter()
        .map(|l| !l.is_unread() && !l.text.trim().is_empty())
        .collect();
    let left = lines.iter().map(|l| l.bbox[0]).min().unwrap_or(0);
    let right = lines.iter().map(|l| l.bbox[2]).max().unwrap_or(0);
    // A piece of a table's row is at most a third of the text's width.
    let narrow = right.saturating_sub(left) as f32 * 0.35;
    let split: Vec<Vec<(u32, u32, String)>> = lines.iter().map(pieces).collect();
    let tabular = |i: usize| {
        shown[i]
            && split[i].len() >= 2
            && split[i]
                .iter()
                .all(|p| (p.1.saturating_sub(p.0)) as f32 <= narrow)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !tabular(i) {
            out.push(Piece::Line(i));
            i += 1;
            continue;
        }
        // The run: each next line right below the one before, in text of about one size.
        let mut end = i + 1;
        while end < lines.len() && tabular(end) {
            let (a, b) = (&lines[end - 1].bbox, &lines[end].bbox);
            let (ha, hb) = (
                a[3].saturating_sub(a[1]) as f32,
                b[3].saturating_sub(b[1]) as f32,
            );
            let gap = b[1] as f32 - a[3] as f32;
            if gap > 2.5 * ha || hb > 1.5 * ha || ha > 1.5 * hb {
                break;
            }
            end += 1;
        }
        match table(&split[i..end]) {
            Some(rows) => {
                out.push(Piece::Table {
                    rows,
                    lines: i..end,
                });
                i = end;
            }
            None => {
                out.push(Piece::Line(i));
                i += 1;
            }
        }
    }
    out
}

/// Columns of prose side by side, read across by the row grouping (a magazine's page:
/// `The patient was seen in the visit ended. A fol-`), put in reading order: a run of three
/// lines or more, each in two parts or more with the same gutters between them, whose
/// parts are prose (words broken at their ends, or long), becomes each column's lines in
/// turn, top to bottom. A table's rows (short cells) are never taken apart.
pub fn columns_in_order(lines: Vec<OcrLine>) -> Vec<OcrLine> {
    // Every region apart (a gutter can be narrower than a text height).
    let split: Vec<Vec<(u32, u32, String)>> = lines.iter().map(|l| joined(l, 1)).collect();
    let mut out: Vec<OcrLine> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let apart = |k: usize| split[k].len() >= 2 && !lines[k].is_unread();
        if !apart(i) {
            out.push(lines[i].clone());
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < lines.len() && apart(end) {
            let (a, b) = (&lines[end - 1].bbox, &lines[end].bbox);
            let ha = a[3].saturating_sub(a[1]) as f32;
            if b[1] as f32 - a[3] as f32 > 2.5 * ha {
                break;
            }
            end += 1;
        }
        let run = &split[i..end];
        let cols = gutters(&lines[i..end], run);
        // Each part's column: the one its middle falls in, else the nearest.
        let column = |p: &(u32, u32, String)| {
            let mid = (p.0 + p.1) / 2;
            (0..cols.len())
                .min_by_key(|&j| {
                    let c = cols[j];
                    if mid < c.0 {
                        c.0 - mid
                    } else {
                        mid.saturating_sub(c.1)
                    }
                })
                .unwrap_or(0)
        };
        // Prose in every column (a glossary's terms beside long descriptions is a table):
        // each column's parts 15 characters long or more (the median), and words broken
        // at the ends, or 30 characters or more.
        let prose = !cols.is_empty() && {
            let broken = run.iter().flatten().filter(|p| broken_word(&p.2)).count();
            (0..cols.len()).all(|j| {
                let mut lens: Vec<usize> = run
                    .iter()
                    .flatten()
                    .filter(|p| column(p) == j)
                    .map(|p| p.2.chars().count())
                    .collect();
                lens.sort_unstable();
                let median = lens.get(lens.len() / 2).copied().unwrap_or(0);
                (broken >= 2 && median >= 15) || median >= 30
            })
        };
        if run.len() < 3 || !(2..=4).contains(&cols.len()) || !prose {
            out.extend(lines[i..end].iter().cloned());
            i = end;
            continue;
        }
        // Each column's lines, top to bottom, column after column.
        for j in 0..cols.len() {
            for (k, r) in run.iter().enumerate() {
                let inside: Vec<&(u32, u32, String)> =
                    r.iter().filter(|p| column(p) == j).collect();
                if inside.is_empty() {
                    continue;
                }
                let l = &lines[i + k];
                let text = inside
                    .iter()
                    .map(|p| p.2.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                out.push(OcrLine {
                    text,
                    bbox: [
                        inside.iter().map(|p| p.0).min().unwrap_or(l.bbox[0]),
                        l.bbox[1],
                        inside.iter().map(|p| p.1).max().unwrap_or(l.bbox[2]),
                        l.bbox[3],
                    ],
                    parts: Vec::new(),
                    ..l.clone()
                });
            }
        }
        i = end;
    }
    out
}

/// The columns of a run of lines set in parts: the spans between gutters — x ranges at
/// least a third of a text height wide that at most a tenth of the lines' parts cover (a
/// region the detector ran across a narrow gutter does not hide it) — each covered by
/// parts of most lines.
fn gutters(lines: &[OcrLine], run: &[Vec<(u32, u32, String)>]) -> Vec<(u32, u32)> {
    const BIN: u32 = 4;
    let (Some(l), Some(r)) = (
        run.iter().flatten().map(|p| p.0).min(),
        run.iter().flatten().map(|p| p.1).max(),
    ) else {
        return Vec::new();
    };
    let n = (r.saturating_sub(l) / BIN + 1) as usize;
    if n > 100_000 {
        return Vec::new();
    }
    let mut cover = vec![0usize; n];
    for row in run {
        let mut seen = vec![false; n];
        for p in row {
            for b in (p.0.saturating_sub(l) / BIN) as usize..=(p.1.saturating_sub(l) / BIN) as usize
            {
                seen[b.min(n - 1)] = true;
            }
        }
        for (c, s) in cover.iter_mut().zip(seen) {
            *c += s as usize;
        }
    }
    let mut hs: Vec<u32> = lines
        .iter()
        .map(|x| x.bbox[3].saturating_sub(x.bbox[1]))
        .collect();
    hs.sort_unstable();
    let h = hs.get(hs.len() / 2).copied().unwrap_or(1).max(1);
    let low = (run.len() / 10).max(0);
    let mut cols = Vec::new();
    let mut start: Option<usize> = None; // a column's first bin
    let mut gap = 0usize; // bins of the gap running now
    for (b, &c) in cover.iter().enumerate() {
        if c <= low {
            gap += 1;
            continue;
        }
        match start {
            None => start = Some(b),
            Some(s0) if gap as u32 * BIN * 3 >= h => {
                cols.push((l + s0 as u32 * BIN, l + (b - gap) as u32 * BIN));
                start = Some(b);
            }
            Some(_) => {}
        }
        gap = 0;
    }
    if let Some(s0) = start {
        cols.push((l + s0 as u32 * BIN, r));
    }
    // Each column holds parts of most lines (two tenths of a column's text at least).
    let most = |c: &(u32, u32)| {
        run.iter()
            .filter(|row| {
                row.iter()
                    .any(|p| (p.0 + p.1) / 2 >= c.0 && (p.0 + p.1) / 2 <= c.1)
            })
            .count()
            * 2
            >= run.len()
    };
    if cols.iter().all(most) {
        cols
    } else {
        Vec::new()
    }
}

/// A word broken at a line's end: a letter, then `-`.
fn broken_word(c: &str) -> bool {
    let mut end = c.chars().rev();
    end.next() == Some('-') && end.next().is_some_and(char::is_alphabetic)
}

/// The pieces' spans across, joined where they overlap: a run's columns.
fn spans(run: &[Vec<(u32, u32, String)>]) -> Vec<(u32, u32)> {
    let mut spans: Vec<(u32, u32)> = run.iter().flatten().map(|p| (p.0, p.1)).collect();
    spans.sort_unstable();
    let mut cols: Vec<(u32, u32)> = Vec::new();
    for (a, z) in spans {
        match cols.last_mut() {
            Some(c) if a <= c.1 => c.1 = c.1.max(z),
            _ => cols.push((a, z)),
        }
    }
    cols
}

/// A run's rows as a table's, or `None` when they do not read as one.
fn table(run: &[Vec<(u32, u32, String)>]) -> Option<Vec<Vec<String>>> {
    let wide = run.iter().any(|r| r.len() >= 3);
    if run.len() < 3 || (!wide && run.len() < 4) {
        return None;
    }
    // Columns: the pieces' spans across, joined where they overlap.
    let cols = spans(run);
    let nc = cols.len();
    if !(2..=64).contains(&nc) {
        return None;
    }
    let rows: Vec<Vec<String>> = run
        .iter()
        .map(|r| {
            let mut row = vec![String::new(); nc];
            for p in r {
                let mid = (p.0 + p.1) / 2;
                let j = cols.partition_point(|c| c.1 < mid).min(nc - 1);
                if !row[j].is_empty() {
                    row[j].push(' ');
                }
                row[j].push_str(&p.2);
            }
            row
        })
        .collect();
    let full = rows
        .iter()
        .filter(|r| r.iter().filter(|c| !c.is_empty()).count() >= 2)
        .count();
    let mut lens: Vec<usize> = rows
        .iter()
        .flatten()
        .filter(|c| !c.is_empty())
        .map(|c| c.chars().count())
        .collect();
    lens.sort_unstable();
    // Short cells, and no words broken at a cell's end: columns of prose side by side
    // (a magazine's page read across) are no table.
    let broken = rows.iter().flatten().filter(|c| broken_word(c)).count();
    if 2 * full < rows.len() || lens.is_empty() || lens[lens.len() / 2] > 24 || broken >= 2 {
        return None;
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row of cells at `y` (20 px high), each `(left, text)`, 10 px a character.
    fn row(y: u32, cells: &[(u32, &str)]) -> OcrLine {
        let mut text = String::new();
        let mut parts = Vec::new();
        for (x, t) in cells {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(t);
            parts.push([*x, x + 10 * t.len() as u32, text.len() as u32]);
        }
        let right = parts.last().map_or(0, |p| p[1]);
        OcrLine {
            text,
            bbox: [cells[0].0, y, right, y + 20],
            confidence: 0.95,
            parts: if parts.len() >= 2 { parts } else { Vec::new() },
            ..Default::default()
        }
    }

    fn texts(lines: &[OcrLine]) -> Vec<String> {
        lines.iter().map(|l| l.text.clone()).collect()
    }

    /// The lines' texts once `columns_in_order` has put them in order.
    fn texts_in_order(lines: Vec<OcrLine>) -> Vec<String> {
        texts(&columns_in_order(lines))
    }

    #[test]
    fn rows_in_parts_make_a_table_and_prose_stays_lines() {
        let lines = vec![
            row(10, &[(100, "LABORATORY RESULTS")]),
            row(40, &[(100, "Test"), (400, "Result"), (600, "Flag")]),
            row(70, &[(100, "Glucose"), (400, "118 mg/dL"), (600, "HIGH")]),
            row(100, &[(100, "HbA1c"), (400, "6.8%")]),
            row(130, &[(100, "Creatinine"), (400, "1.1 mg/dL")]),
            row(
                170,
                &[(100, "The results were read by the laboratory on the day.")],
            ),
        ];
        let found = find(&lines);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(found[0], Piece::Line(0));
        assert_eq!(
            found[1],
            Piece::Table {
                rows: vec![
                    vec!["Test".into(), "Result".into(), "Flag".into()],
                    vec!["Glucose".into(), "118 mg/dL".into(), "HIGH".into()],
                    vec!["HbA1c".into(), "6.8%".into(), "".into()],
                    vec!["Creatinine".into(), "1.1 mg/dL".into(), "".into()],
                ],
                lines: 1..5,
            }
        );
        assert_eq!(found[2], Piece::Line(5));
    }

    #[test]
    fn too_few_rows_words_close_together_or_long_pieces_stay_lines() {
        // Two rows only.
        let two = vec![
            row(40, &[(100, "Test"), (400, "Result"), (600, "Flag")]),
            row(70, &[(100, "Glucose"), (400, "118"), (600, "HIGH")]),
        ];
        assert!(find(&two).iter().all(|p| matches!(p, Piece::Line(_))));
        // Parts a word space apart: one piece a line.
        let close: Vec<OcrLine> = (0..5)
            .map(|k| row(40 + 30 * k, &[(100, "one"), (135, "two"), (170, "three")]))
            .collect();
        assert!(find(&close).iter().all(|p| matches!(p, Piece::Line(_))));
        // Three rows of two parts each: a term and its value, not yet a table.
        let pairs: Vec<OcrLine> = (0..3)
            .map(|k| row(40 + 30 * k, &[(100, "Name:"), (400, "Value")]))
            .collect();
        assert!(find(&pairs).iter().all(|p| matches!(p, Piece::Line(_))));
        // Two columns of prose read across (a magazine page): words broken at the ends.
        let prose: Vec<OcrLine> = [
            ("that historians igno-", "have become avail-"),
            ("rant of its origins.", "able in other hotels"),
            ("They believe it may", "and homes. A few"),
            ("have grown out of", "travel companies"),
        ]
        .iter()
        .enumerate()
        .map(|(k, (a, b))| row(40 + 30 * k as u32, &[(100, a), (600, b)]))
        .collect();
        assert!(find(&prose).iter().all(|p| matches!(p, Piece::Line(_))));
        // ... and read column after column.
        assert_eq!(
            texts_in_order(prose),
            [
                "that historians igno-",
                "rant of its origins.",
                "They believe it may",
                "have grown out of",
                "have become avail-",
                "able in other hotels",
                "and homes. A few",
                "travel companies"
            ]
        );
    }

    #[test]
    fn a_glossary_with_long_descriptions_stays_rows() {
        let lines: Vec<OcrLine> = [
            ("Latency", "time from the request to the first byte"),
            ("Throughput", "requests answered in one second, on average"),
            ("Footprint", "memory held by one worker while it is idle"),
            ("Warm-up", "the first read, which loads the models"),
        ]
        .iter()
        .enumerate()
        .map(|(k, (a, b))| row(40 + 30 * k as u32, &[(100, a), (300, b)]))
        .collect();
        assert_eq!(texts_in_order(lines.clone()), texts(&lines));
    }

    #[test]
    fn parts_that_no_longer_fit_the_text_make_one_piece() {
        // Another engine read the line again: the recorded ends are past its text.
        let mut l = row(40, &[(100, "Glucose"), (400, "118 mg/dL"), (600, "HIGH")]);
        l.text = "\u{d55c}\u{ad6d}".to_string();
        assert_eq!(pieces(&l), vec![(100, 640, "\u{d55c}\u{ad6d}".to_string())]);
    }

    #[test]
    fn a_table_is_never_read_column_after_column() {
        let lines = vec![
            row(40, &[(100, "Test"), (400, "Result"), (600, "Flag")]),
            row(70, &[(100, "Glucose"), (400, "118 mg/dL"), (600, "HIGH")]),
            row(100, &[(100, "HbA1c"), (400, "6.8%"), (600, "HIGH")]),
            row(
                130,
                &[(100, "Creatinine"), (400, "1.1 mg/dL"), (600, "LOW")],
            ),
        ];
        assert_eq!(texts_in_order(lines.clone()), texts(&lines));
    }
}
