//! One sheet rendered as it streams in: rows of tab-separated cells, its size counted from
//! the cells that hold something, and only as many row lines kept as the budgets can show.

use std::collections::{HashMap, HashSet};

use calamine::{Data, Range};

use super::cells::push_data;
use crate::options::HiddenText;

/// Cells a person opening the workbook does not see (xlsx, issue #21): in a hidden row or
/// column, or in a white or tiny font (four letters or digits or more: a stray symbol hides
/// nothing). Each is kept, marked or dropped as it streams in, so the lines, the budgets,
/// `char_count` and `next` all count the text as returned; a dropped cell still counts for
/// the sheet's size (rows and ranges mean the same whatever `hidden_text` says). What such
/// cells held is remembered for the rows that may be shown, for the findings.
pub(super) struct Unseen {
    /// Hidden rows and column ranges, 0-based (inclusive).
    pub(super) rows: HashSet<u32>,
    pub(super) cols: Vec<(u32, u32)>,
    /// Cells in a white font on no fill or a font under 1.5 pt: their kind.
    pub(super) cells: HashMap<(u32, u32), crate::findings::FindingKind>,
    pub(super) mode: HiddenText,
    /// The cells met while lines were still kept, in sheet order.
    pub(super) met: Vec<UnseenCell>,
}

/// One unseen cell's text, as the workbook holds it.
pub(super) struct UnseenCell {
    pub(super) row: u32,
    pub(super) col: u32,
    /// In a hidden row; in hidden column range `cols[i]`; in a white or tiny font.
    pub(super) in_row: bool,
    pub(super) in_cols: Option<usize>,
    pub(super) font: Option<crate::findings::FindingKind>,
    pub(super) text: String,
}

/// Cells remembered per sheet, at most (the findings' own cap is lower).
const MAX_MET: usize = 10_000;
/// Characters of a cell's text remembered, at most.
const MAX_MET_CHARS: usize = 4000;

impl Unseen {
    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.cols.is_empty() && self.cells.is_empty()
    }

    /// Cell (r, c), whose text is `buf[start..]`: kept, wrapped in `⟦hidden: …⟧` or emptied
    /// when a person does not see it; remembered when `remember`.
    fn take(&mut self, (r, c): (u32, u32), buf: &mut String, start: usize, remember: bool) {
        let in_row = self.rows.contains(&r);
        let in_cols = self
            .cols
            .iter()
            .position(|&(lo, hi)| (lo..=hi).contains(&c));
        let font = self.cells.get(&(r, c)).copied().filter(|_| {
            buf[start..]
                .chars()
                .filter(|ch| ch.is_alphanumeric())
                .count()
                >= 4
        });
        if !in_row && in_cols.is_none() && font.is_none() {
            return;
        }
        if remember && self.met.len() < MAX_MET {
            let text = &buf[start..];
            let end = text
                .char_indices()
                .nth(MAX_MET_CHARS)
                .map_or(text.len(), |(i, _)| i);
            self.met.push(UnseenCell {
                row: r,
                col: c,
                in_row,
                in_cols,
                font,
                text: text[..end].to_string(),
            });
        }
        match self.mode {
            HiddenText::Keep => {}
            HiddenText::Drop => buf.truncate(start),
            HiddenText::Mark => {
                buf.insert_str(start, "⟦hidden: ");
                buf.push('⟧');
            }
        }
    }
}

/// Where a sheet's rendered rows may be kept: only as many as the budgets left could show
/// (the rest of the sheet is still walked for its size and character count).
#[derive(Clone, Copy)]
pub(super) struct Keep {
    pub(super) cells: u64,
    pub(super) chars: usize,
}

/// One sheet, rendered row by row as its cells stream in (row-major order): the size
/// of what holds something (phantom used ranges cost nothing), the character count of
/// every row line, and the lines themselves as far as `Keep` allows.
pub(super) struct Sheet {
    pub(super) name: String,
    pub(super) hidden: bool,
    /// Absolute (row, col) where rows and columns are shown from: A1, or the window's corner.
    pub(super) origin: (u32, u32),
    pub(super) window: Option<((u32, u32), (u32, u32))>,
    pub(super) rows: u32,
    pub(super) cols: u32,
    /// Kept row lines ("\n"-terminated) and the byte end of each.
    pub(super) text: String,
    pub(super) ends: Vec<usize>,
    kept_chars: usize,
    pub(super) keep: Option<Keep>,
    /// Characters of all row lines, kept or not.
    pub(super) line_chars: u64,
    last_row: Option<u32>,
    /// The row being assembled: its cells' text in `row_buf`, (col, start, end) each.
    cur_row: Option<u32>,
    row_buf: String,
    row_cells: Vec<(u32, usize, usize)>,
    line: String,
    /// Cells came out of row order: the caller re-reads the sheet sorted.
    pub(super) unordered: bool,
    /// A chart sheet: no cells, its chart is its content.
    pub(super) chart: bool,
    /// A hidden sheet read with `hidden_text: "mark"`: `⟦hidden⟧` in its heading.
    pub(super) marked: bool,
    /// Rows as Markdown table rows (`| a | | c |`) instead of tab-separated lines.
    pub(super) markdown: bool,
    /// `output: "json"`: the cells of each row kept (as `text` keeps its lines), every
    /// column from the sheet's first.
    pub(super) typed: Option<Vec<Vec<String>>>,
    /// `profile`: every row of the sheet (or window) goes through it, shown or not.
    pub(super) profiler: Option<crate::extract::profile::Profiler>,
    /// The number formats of its formatted number cells (.xls), by absolute (row, col).
    pub(super) formats: Option<std::sync::Arc<super::biff::CellFormats>>,
    /// Its number cells as the spreadsheet wrote them, where that differs from their value
    /// (ods: the text ODF keeps beside the value), by absolute (row, col).
    pub(super) shown: Option<std::sync::Arc<super::ods::Shown>>,
    /// Hidden rows and columns, white and tiny cells: `None` when the sheet has none, or
    /// is hidden itself (then the sheet is what is marked or dropped).
    pub(super) unseen: Option<Unseen>,
}

impl Sheet {
    pub(super) fn new(
        name: String,
        hidden: bool,
        window: Option<((u32, u32), (u32, u32))>,
        keep: Option<Keep>,
    ) -> Self {
        Self {
            name,
            hidden,
            origin: window.map(|w| w.0).unwrap_or((0, 0)),
            window,
            rows: 0,
            cols: 0,
            text: String::new(),
            ends: Vec::new(),
            kept_chars: 0,
            keep,
            line_chars: 0,
            last_row: None,
            cur_row: None,
            row_buf: String::new(),
            row_cells: Vec::new(),
            line: String::new(),
            unordered: false,
            chart: false,
            marked: false,
            markdown: false,
            typed: None,
            profiler: None,
            unseen: None,
            formats: None,
            shown: None,
        }
    }

    /// The same sheet, to be fed again from its first cell (rows came out of order): what
    /// it was fed is forgotten, how it renders is kept (and a profile starts over).
    pub(super) fn restart(&mut self) {
        let mut fresh = Sheet::new(
            std::mem::take(&mut self.name),
            self.hidden,
            self.window,
            self.keep,
        );
        fresh.chart = self.chart;
        fresh.marked = self.marked;
        fresh.markdown = self.markdown;
        fresh.typed = self.typed.as_ref().map(|_| Vec::new());
        fresh.profiler = self
            .profiler
            .is_some()
            .then(|| crate::extract::profile::Profiler::new(true));
        fresh.formats = self.formats.take();
        fresh.unseen = self.unseen.take().map(|mut u| {
            u.met.clear();
            u
        });
        *self = fresh;
    }

    /// Take one cell: `write` appends its text (nothing for an empty cell).
    pub(super) fn cell(&mut self, (r, c): (u32, u32), write: impl FnOnce(&mut String)) {
        if let Some(((r0, c0), (r1, c1))) = self.window {
            if r < r0 || r > r1 || c < c0 || c > c1 {
                return;
            }
        }
        if self.cur_row != Some(r) {
            if self.cur_row.is_some_and(|cur| r < cur) {
                self.unordered = true;
                return;
            }
            self.flush_row();
            self.cur_row = Some(r);
        }
        let start = self.row_buf.len();
        write(&mut self.row_buf);
        if self.row_buf.len() > start {
            if let Some(u) = self.unseen.as_mut() {
                // A dropped cell stays in the row, empty: the sheet keeps its size.
                u.take((r, c), &mut self.row_buf, start, self.keep.is_some());
            }
            self.row_cells.push((c, start, self.row_buf.len()));
        }
    }

    fn flush_row(&mut self) {
        let Some(r) = self.cur_row.take() else {
            return;
        };
        if self.row_cells.is_empty() {
            self.row_buf.clear();
            return;
        }
        if !self.row_cells.windows(2).all(|w| w[0].0 < w[1].0) {
            // Out of column order or repeated: the last value of a cell wins.
            self.row_cells.sort_by_key(|c| c.0);
            let mut dedup: Vec<(u32, usize, usize)> = Vec::with_capacity(self.row_cells.len());
            for c in self.row_cells.drain(..) {
                match dedup.last_mut() {
                    Some(last) if last.0 == c.0 => *last = c,
                    _ => dedup.push(c),
                }
            }
            self.row_cells = dedup;
        }
        if let Some(p) = self.profiler.as_mut() {
            let (origin, buf) = (self.origin.1, &self.row_buf);
            p.row(
                self.row_cells
                    .iter()
                    .filter(|&&(_, a, b)| a < b)
                    .map(|&(c, a, b)| ((c - origin) as usize, &buf[a..b])),
            );
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let mut col = self.origin.1;
        if self.markdown {
            // `| a | | c |`: an empty cell for each column between, pipes escaped.
            line.push('|');
            for &(c, a, b) in &self.row_cells {
                line.push_str(&" |".repeat((c - col) as usize));
                line.push(' ');
                line.push_str(&self.row_buf[a..b].replace('|', "\\|"));
                line.push_str(" |");
                col = c + 1;
            }
        } else {
            for &(c, a, b) in self.row_cells.iter().filter(|&&(_, a, b)| a < b) {
                // The first cell sits `c - origin` tabs in; each next one `c - previous`.
                line.extend(std::iter::repeat_n('\t', (c - col) as usize));
                line.push_str(&self.row_buf[a..b]);
                col = c;
            }
        }
        line.push('\n');
        let last_col = self.row_cells.last().map(|c| c.0).unwrap_or(col);
        let cells: Option<Vec<String>> = self.typed.is_some().then(|| {
            let mut row = Vec::new();
            for &(c, a, b) in &self.row_cells {
                let at = (c - self.origin.1) as usize;
                if row.len() < at {
                    row.resize(at, String::new());
                }
                row.push(self.row_buf[a..b].to_string());
            }
            row
        });
        self.row_cells.clear();
        self.row_buf.clear();
        // Rows with nothing between the last line and this one are blank lines: counted
        // at once, kept only while the budgets keep lines (a row numbered 4,294,967,295
        // once meant four billion calls here, 17 s past the read's deadline).
        let first_row = self.last_row.map_or(self.origin.0, |l| l + 1);
        let mut gap = r.saturating_sub(first_row) as u64;
        let blank = if self.markdown { "| |\n" } else { "\n" };
        while gap > 0 && self.keep.is_some() {
            if self.emit(blank) {
                if let Some(t) = self.typed.as_mut() {
                    t.push(Vec::new());
                }
            }
            gap -= 1;
        }
        self.line_chars += gap * blank.len() as u64;
        self.rows = r - self.origin.0 + 1;
        self.cols = self.cols.max(last_col - self.origin.1 + 1);
        self.last_row = Some(r);
        if self.emit(&line) {
            if let (Some(t), Some(cells)) = (self.typed.as_mut(), cells) {
                t.push(cells);
            }
        }
        self.line = line;
    }

    /// Count a line, and keep it while the budgets do; whether it was kept.
    fn emit(&mut self, line: &str) -> bool {
        let n = line.chars().count();
        self.line_chars += n as u64;
        if let Some(k) = self.keep {
            let fits_cells = (self.ends.len() as u64 + 1) * self.cols.max(1) as u64 <= k.cells;
            if fits_cells && self.kept_chars + n <= k.chars {
                self.text.push_str(line);
                self.ends.push(self.text.len());
                self.kept_chars += n;
                return true;
            }
            self.keep = None;
        }
        false
    }

    pub(super) fn finish(&mut self) {
        self.flush_row();
        self.row_buf = String::new();
        self.line = String::new();
    }

    pub(super) fn heading(&self) -> String {
        // Markdown: a paragraph of its own, after the blank line that ends a table.
        let (before, after) = if self.markdown {
            ("\n", "\n\n")
        } else {
            ("", "\n")
        };
        let mark = if self.marked { " ⟦hidden⟧" } else { "" };
        if self.chart {
            return format!("{before}--- Chart sheet: {}{mark} ---{after}", self.name);
        }
        format!(
            "{before}--- Sheet: {} ({} rows × {} cols){mark} ---{after}",
            self.name, self.rows, self.cols
        )
    }

    /// Markdown: the table's first row (`line`) padded to the sheet's columns, with the
    /// separator row after it; and what that adds. A window that starts below the sheet's
    /// first row (a `range`, or a continuation from `next`) shows data rows only: its
    /// table gets an empty header row, so its first row is not taken for column names.
    pub(super) fn table_head(&self, line: &str) -> (String, String) {
        let row = line.trim_end_matches('\n');
        // Every cell ends with ` |`; an escaped pipe in a cell is `\|`, never ` |`.
        let cells = row.matches(" |").count();
        let cols = (self.cols as usize).max(1);
        let pad = " |".repeat(cols.saturating_sub(cells));
        let sep = crate::extract::markdown::separator(cols);
        if self.origin.0 > 0 {
            let empty = format!("|{}\n{sep}", " |".repeat(cols));
            return (format!("{empty}{row}{pad}\n"), format!("{empty}{pad}"));
        }
        let added = format!("{pad}{sep}");
        (format!("{row}{pad}\n{sep}"), added)
    }

    /// A number at `pos` as its cell's own number format shows it (None: as General).
    pub(super) fn formatted(&self, pos: (u32, u32), v: f64) -> Option<String> {
        if self.formats.is_none() && self.shown.is_none() {
            return None;
        }
        // A cell outside the window is not shown: not formatted either.
        if let Some(((r0, c0), (r1, c1))) = self.window {
            if pos.0 < r0 || pos.0 > r1 || pos.1 < c0 || pos.1 > c1 {
                return None;
            }
        }
        if let Some(text) = self.shown.as_ref().and_then(|s| s.get(&pos)) {
            return Some(text.to_string());
        }
        self.formats.as_ref()?.get(&pos)?.apply(v)
    }

    /// Kept line `i` (0-based from the origin row).
    pub(super) fn line(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.text[start..end])
    }
}

/// Feed a sheet calamine parsed whole (xls, ods, re-sorted xlsx).
pub(super) fn feed_range(sheet: &mut Sheet, range: &Range<Data>) {
    let start = range.start().unwrap_or((0, 0));
    for (r, c, v) in range.used_cells() {
        let pos = (start.0 + r as u32, start.1 + c as u32);
        // A number in a format of its own: as that format shows it.
        feed_cell(sheet, pos, v);
    }
    sheet.finish();
}

/// One cell of a sheet parsed whole: a number in a format of its own as that format shows
/// it, any other value as `push_data` writes it.
pub(super) fn feed_cell(sheet: &mut Sheet, pos: (u32, u32), v: &Data) {
    let number = match v {
        Data::Float(f) => Some(*f),
        Data::Int(i) => Some(*i as f64),
        _ => None,
    };
    match number.and_then(|f| sheet.formatted(pos, f)) {
        Some(s) => sheet.cell(pos, |out| out.push_str(&s)),
        None => sheet.cell(pos, |out| push_data(out, v)),
    }
}
