//! Spreadsheets (xlsx, xlsm, xls, ods) through calamine: a `## Sheets` list first (the
//! end of the output is what gets cut), then each sheet's cells within a cell budget;
//! sheets the budget never reached are `not_read`, the partly read one names its last cell.

use std::fs::File;
use std::io::BufReader;

use calamine::{open_workbook_from_rs, Data, DataRef, Ods, Range, Reader, SheetVisible, Xls, Xlsx};

use super::package::Package;
use super::{Extractor, Input};
use crate::config::Limits;
use crate::detect::Format;
use crate::envelope::{close_truncated, Extraction, Next};
use crate::error::{ApiError, ErrorCode};
use crate::options::{self, ReadRequest};
use crate::report::{Report, SheetInfo};

pub struct ExcelExtractor;

/// A1-style column letters for a 0-based index.
pub fn col_name(mut c: u32) -> String {
    let mut s = Vec::new();
    loop {
        s.push((b'A' + (c % 26) as u8) as char);
        if c < 26 {
            break;
        }
        c = c / 26 - 1;
    }
    s.iter().rev().collect()
}

/// `B12` → (11, 1), 0-based (row, col).
fn parse_cell(s: &str) -> Option<(u32, u32)> {
    let s = s.trim().trim_start_matches('$');
    let split = s.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = s.split_at(split);
    let letters = letters.trim_end_matches('$');
    if letters.is_empty() || letters.len() > 3 || !letters.chars().all(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    let mut col: u32 = 0;
    for ch in letters.to_ascii_uppercase().bytes() {
        col = col * 26 + (ch - b'A' + 1) as u32;
    }
    let row: u32 = digits.parse().ok().filter(|r| *r >= 1)?;
    Some((row - 1, col - 1))
}

/// `A1:D10` → ((r0, c0), (r1, c1)) inclusive, 0-based.
pub fn parse_range(s: &str) -> Result<((u32, u32), (u32, u32)), ApiError> {
    let bad = || {
        ApiError::invalid_option(format!("range {s:?} is not a cell range"))
            .with_hint("Use A1-style corners, e.g. \"A1:D10\" (or a single cell \"B2\").")
    };
    let (a, b) = s.split_once(':').unwrap_or((s, s));
    let (a, b) = (
        parse_cell(a).ok_or_else(bad)?,
        parse_cell(b).ok_or_else(bad)?,
    );
    if a.0 > b.0 || a.1 > b.1 {
        return Err(ApiError::new(
            ErrorCode::InvertedRange,
            format!("range {s:?} runs backwards"),
        )
        .with_hint("Give the top-left corner first, e.g. \"A1:D10\"."));
    }
    Ok((a, b))
}

/// A number as a spreadsheet shows it: no binary float noise (15 significant digits).
pub fn fmt_num(f: f64) -> String {
    if !f.is_finite() {
        return f.to_string();
    }
    if f.fract() == 0.0 && f.abs() < 1e15 {
        return format!("{}", f as i64);
    }
    let rounded: f64 = format!("{f:.14e}").parse().unwrap_or(f);
    format!("{rounded}")
}

/// Append a cell's text as the sheet shows it: strings with tabs and line breaks as
/// spaces (one cell per column, one row per line), whitespace-only strings as empty,
/// numbers without float noise, dates as ISO dates.
fn push_data(out: &mut String, d: &Data) {
    use chrono::{Datelike, Timelike};
    use std::fmt::Write;
    match d {
        Data::Empty => {}
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => push_str_cell(out, s),
        Data::Float(f) => push_num(out, *f),
        Data::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Data::Bool(b) => out.push_str(if *b { "TRUE" } else { "FALSE" }),
        Data::DateTime(dt) => {
            if dt.is_duration() {
                push_num(out, dt.as_f64() * 24.0);
                out.push('h');
                return;
            }
            match dt.as_datetime() {
                Some(t) if (0..=9999).contains(&t.year()) => {
                    push_padded(out, t.year() as u32, 4);
                    out.push('-');
                    push_padded(out, t.month(), 2);
                    out.push('-');
                    push_padded(out, t.day(), 2);
                    if t.time() != chrono::NaiveTime::MIN {
                        out.push('T');
                        push_padded(out, t.hour(), 2);
                        out.push(':');
                        push_padded(out, t.minute(), 2);
                        out.push(':');
                        push_padded(out, t.second(), 2);
                    }
                }
                Some(t) => {
                    let _ = write!(out, "{}", t.format("%Y-%m-%dT%H:%M:%S"));
                }
                None => push_num(out, dt.as_f64()),
            }
        }
        Data::Error(e) => {
            let _ = write!(out, "{e}");
        }
    }
}

fn push_ref(out: &mut String, d: DataRef<'_>) {
    match d {
        DataRef::SharedString(s) => push_str_cell(out, s),
        DataRef::String(s) => push_str_cell(out, &s),
        DataRef::Empty => {}
        other => push_data(out, &Data::from(other)),
    }
}

fn push_str_cell(out: &mut String, s: &str) {
    if s.trim().is_empty() {
        return;
    }
    if s.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
        out.extend(s.chars().map(|c| {
            if matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        }));
    } else {
        out.push_str(s);
    }
}

/// `fmt_num` without a temporary string in the common case: the shortest round-trip form
/// is what the sheet shows whenever it has at most 15 significant digits.
fn push_num(out: &mut String, f: f64) {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        out.push_str(itoa::Buffer::new().format(f as i64));
        return;
    }
    if f.is_finite() {
        let mut buf = ryu::Buffer::new();
        let s = buf.format_finite(f);
        let digits = s
            .bytes()
            .filter(u8::is_ascii_digit)
            .skip_while(|b| *b == b'0')
            .count();
        if digits <= 15 && !s.contains('e') {
            out.push_str(s);
            return;
        }
    }
    out.push_str(&fmt_num(f));
}

/// Two-digit (or four-digit) zero-padded numbers, without the formatting machinery:
/// a date column is a fifth of a big sheet.
fn push_padded(out: &mut String, v: u32, width: usize) {
    let mut b = [b'0'; 4];
    let mut v = v;
    for i in (0..width).rev() {
        b[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.push_str(std::str::from_utf8(&b[..width]).unwrap_or("0"));
}

/// Where a sheet's rendered rows may be kept: only as many as the budgets left could show
/// (the rest of the sheet is still walked for its size and character count).
#[derive(Clone, Copy)]
struct Keep {
    cells: u64,
    chars: usize,
}

/// One sheet, rendered row by row as its cells stream in (row-major order): the size
/// of what holds something (phantom used ranges cost nothing), the character count of
/// every row line, and the lines themselves as far as `Keep` allows.
struct Sheet {
    name: String,
    hidden: bool,
    /// Absolute (row, col) where rows and columns are shown from: A1, or the window's corner.
    origin: (u32, u32),
    window: Option<((u32, u32), (u32, u32))>,
    rows: u32,
    cols: u32,
    /// Kept row lines ("\n"-terminated) and the byte end of each.
    text: String,
    ends: Vec<usize>,
    kept_chars: usize,
    keep: Option<Keep>,
    /// Characters of all row lines, kept or not.
    line_chars: u64,
    last_row: Option<u32>,
    /// The row being assembled: its cells' text in `row_buf`, (col, start, end) each.
    cur_row: Option<u32>,
    row_buf: String,
    row_cells: Vec<(u32, usize, usize)>,
    line: String,
    /// Cells came out of row order: the caller re-reads the sheet sorted.
    unordered: bool,
}

impl Sheet {
    fn new(
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
        }
    }

    /// Take one cell: `write` appends its text (nothing for an empty cell).
    fn cell(&mut self, (r, c): (u32, u32), write: impl FnOnce(&mut String)) {
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
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let mut col = self.origin.1;
        for &(c, a, b) in &self.row_cells {
            // The first cell sits `c - origin` tabs in; each next one `c - previous`.
            line.extend(std::iter::repeat_n('\t', (c - col) as usize));
            line.push_str(&self.row_buf[a..b]);
            col = c;
        }
        line.push('\n');
        let last_col = self.row_cells.last().map(|c| c.0).unwrap_or(col);
        self.row_cells.clear();
        self.row_buf.clear();
        // Rows with nothing between the last line and this one are blank lines.
        let first_row = self.last_row.map_or(self.origin.0, |l| l + 1);
        for _ in first_row..r {
            self.emit("\n");
        }
        self.rows = r - self.origin.0 + 1;
        self.cols = self.cols.max(last_col - self.origin.1 + 1);
        self.last_row = Some(r);
        self.emit(&line);
        self.line = line;
    }

    fn emit(&mut self, line: &str) {
        let n = line.chars().count();
        self.line_chars += n as u64;
        if let Some(k) = self.keep {
            let fits_cells = (self.ends.len() as u64 + 1) * self.cols.max(1) as u64 <= k.cells;
            if fits_cells && self.kept_chars + n <= k.chars {
                self.text.push_str(line);
                self.ends.push(self.text.len());
                self.kept_chars += n;
            } else {
                self.keep = None;
            }
        }
    }

    fn finish(&mut self) {
        self.flush_row();
        self.row_buf = String::new();
        self.line = String::new();
    }

    fn heading(&self) -> String {
        format!(
            "--- Sheet: {} ({} rows × {} cols) ---\n",
            self.name, self.rows, self.cols
        )
    }

    /// Kept line `i` (0-based from the origin row).
    fn line(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.text[start..end])
    }
}

fn feed_range(sheet: &mut Sheet, range: &Range<Data>) {
    let start = range.start().unwrap_or((0, 0));
    for (r, c, v) in range.used_cells() {
        sheet.cell((start.0 + r as u32, start.1 + c as u32), |out| {
            push_data(out, v)
        });
    }
    sheet.finish();
}

/// Most text a workbook could expand to: cells that reference shared strings, times the
/// longest shared string. calamine copies the string into every such cell, so 12,000
/// references to one 1 MB string would take 12 GB; refuse that before it is read.

fn refuse_output_bomb(pkg: &mut Package, max_expanded: u64) -> Result<(), ApiError> {
    let Some(sst) = pkg.read("xl/sharedStrings.xml")? else {
        return Ok(());
    };
    let longest = longest_between(&sst, b"<si>", b"</si>") as u64;
    if longest < 4096 {
        return Ok(());
    }
    let mut refs = 0u64;
    for name in pkg
        .names()
        .into_iter()
        .filter(|n| n.starts_with("xl/worksheets/") && n.ends_with(".xml"))
    {
        if let Some(xml) = pkg.read(&name)? {
            refs += count(&xml, b"t=\"s\"") as u64;
        }
    }
    if refs.saturating_mul(longest) > max_expanded {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("{refs} cells reference a shared string of {longest} bytes: the text would exceed {max_expanded} bytes (an output bomb)"),
        )
        .with_hint("Real workbooks do not repeat megabyte strings in thousands of cells; this one is not read."));
    }
    Ok(())
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

fn longest_between(hay: &[u8], open: &[u8], close: &[u8]) -> usize {
    let mut best = 0;
    let mut i = 0;
    while let Some(a) = hay[i..].windows(open.len()).position(|w| w == open) {
        let start = i + a;
        match hay[start..].windows(close.len()).position(|w| w == close) {
            Some(b) => {
                best = best.max(b);
                i = start + b + close.len();
            }
            None => {
                best = best.max(hay.len() - start);
                break;
            }
        }
    }
    best
}

fn calamine_error(e: calamine::Error) -> ApiError {
    match e {
        calamine::Error::Xls(calamine::XlsError::Password) => {
            ApiError::new(ErrorCode::Encrypted, "the workbook is password-protected").with_hint(
                "Remove the password in Excel (or save an unprotected copy) and upload that.",
            )
        }
        calamine::Error::Io(e) => ApiError::internal(e),
        other => ApiError::new(
            ErrorCode::Corrupt,
            format!("the workbook cannot be read: {other}"),
        ),
    }
}

/// An open workbook of any of the formats calamine reads.
enum Workbook {
    Xlsx(Xlsx<BufReader<File>>),
    Xls(Xls<BufReader<File>>),
    Ods(Ods<BufReader<File>>),
}

impl Workbook {
    fn open(input: &Input) -> Result<Self, ApiError> {
        let f = File::open(&input.path)
            .map(BufReader::new)
            .map_err(ApiError::internal)?;
        let err = |e: calamine::Error| calamine_error(e);
        Ok(match input.format {
            Format::Xls => {
                Self::Xls(open_workbook_from_rs(f).map_err(|e: calamine::XlsError| err(e.into()))?)
            }
            Format::Ods => {
                Self::Ods(open_workbook_from_rs(f).map_err(|e: calamine::OdsError| err(e.into()))?)
            }
            _ => Self::Xlsx(
                open_workbook_from_rs(f).map_err(|e: calamine::XlsxError| err(e.into()))?,
            ),
        })
    }

    /// Worksheets (not chart sheets) in workbook order: (name, hidden).
    fn sheets(&self) -> Vec<(String, bool)> {
        let meta = match self {
            Self::Xlsx(w) => w.sheets_metadata(),
            Self::Xls(w) => w.sheets_metadata(),
            Self::Ods(w) => w.sheets_metadata(),
        };
        meta.iter()
            .filter(|s| s.typ == calamine::SheetType::WorkSheet)
            .map(|s| (s.name.clone(), s.visible != SheetVisible::Visible))
            .collect()
    }

    /// Stream one sheet's cells into `sheet`. xlsx cells come straight from the XML
    /// (no grid, shared strings borrowed); xls and ods are parsed whole by calamine.
    fn read(&mut self, sheet: &mut Sheet) -> Result<(), ApiError> {
        const BATCH: usize = 4096;
        let sheet_name = sheet.name.clone();
        let range = match self {
            Self::Xlsx(w) => {
                // calamine parses on this thread while a second one renders the rows: the
                // XML parse and the text are each about half the work of a big sheet.
                let parsed: Result<(), ApiError> = std::thread::scope(|scope| {
                    type Batch<'a> = Vec<((u32, u32), DataRef<'a>)>;
                    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch<'_>>(4);
                    let render = scope.spawn(|| {
                        for batch in rx {
                            for (pos, v) in batch {
                                sheet.cell(pos, |out| push_ref(out, v));
                            }
                            if sheet.unordered {
                                break; // dropping rx stops the parser
                            }
                        }
                    });
                    let mut cells = w
                        .worksheet_cells_reader(&sheet_name)
                        .map_err(|e| calamine_error(e.into()))?;
                    let mut batch: Batch<'_> = Vec::with_capacity(BATCH);
                    let mut result = Ok(());
                    loop {
                        match cells.next_cell() {
                            Ok(Some(cell)) => {
                                batch.push((cell.get_position(), cell.get_value().clone()));
                                if batch.len() == BATCH
                                    && tx
                                        .send(std::mem::replace(
                                            &mut batch,
                                            Vec::with_capacity(BATCH),
                                        ))
                                        .is_err()
                                {
                                    break;
                                }
                            }
                            Ok(None) => {
                                let _ = tx.send(batch);
                                break;
                            }
                            Err(e) => {
                                result = Err(calamine_error(e.into()));
                                break;
                            }
                        }
                    }
                    drop(tx);
                    if render.join().is_err() {
                        return Err(ApiError::internal("the sheet renderer panicked"));
                    }
                    result
                });
                parsed?;
                if !sheet.unordered {
                    sheet.finish();
                    return Ok(());
                }
                // Rows out of order (rare writers): read the cells again and sort them.
                // Not calamine's grid: that is rows × cols of the used area, so two cells
                // at A1 and XFD1048576 would allocate 17 billion; this holds only the cells
                // the sheet has (bounded by the package's decompression limits).
                *sheet = Sheet::new(
                    std::mem::take(&mut sheet.name),
                    sheet.hidden,
                    sheet.window,
                    sheet.keep,
                );
                let mut cells = w
                    .worksheet_cells_reader(&sheet.name)
                    .map_err(|e| calamine_error(e.into()))?;
                let mut all: Vec<((u32, u32), Data)> = Vec::new();
                while let Some(cell) = cells.next_cell().map_err(|e| calamine_error(e.into()))? {
                    all.push((cell.get_position(), Data::from(cell.get_value().clone())));
                }
                drop(cells);
                all.sort_by_key(|(pos, _)| *pos);
                for (pos, v) in &all {
                    sheet.cell(*pos, |out| push_data(out, v));
                }
                sheet.finish();
                return Ok(());
            }
            Self::Xls(w) => w
                .worksheet_range(&sheet.name)
                .map_err(|e| calamine_error(e.into()))?,
            Self::Ods(w) => w
                .worksheet_range(&sheet.name)
                .map_err(|e| calamine_error(e.into()))?,
        };
        feed_range(sheet, &range);
        Ok(())
    }
}

impl Extractor for ExcelExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &ReadRequest,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars(limits.max_chars)?;
        let budget = options::count("max_cells", req.max_cells, 1)?.unwrap_or(1000);
        let window = req.range.as_deref().map(parse_range).transpose()?;
        // calamine inflates the package itself: prove it is within the caps first. Opening
        // an xlsx reads only the small parts (workbook, shared strings, styles), so the
        // worksheets are checked on a second thread meanwhile; they are read only after.
        let mut wb = match input.format {
            Format::Xls => Workbook::open(input)?,
            Format::Ods => {
                Package::open(&input.path, limits.package)?.check_all()?;
                Workbook::open(input)?
            }
            _ => {
                let mut pkg = Package::open(&input.path, limits.package)?;
                let is_sheet = |n: &str| n.starts_with("xl/worksheets/");
                pkg.check_where(|n| !is_sheet(n))?;
                let (checked, wb) = std::thread::scope(|scope| {
                    let check = scope.spawn(|| pkg.check_where(is_sheet));
                    let wb = Workbook::open(input);
                    (check.join(), wb)
                });
                checked.map_err(|_| ApiError::internal("the package check panicked"))??;
                let wb = wb?;
                pkg.reset_count();
                refuse_output_bomb(&mut pkg, limits.max_expanded_text_bytes)?;
                wb
            }
        };
        let meta = wb.sheets();
        let names: Vec<&str> = meta.iter().map(|(n, _)| n.as_str()).collect();
        let listed = || {
            names
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let chosen: Option<usize> = match &req.sheet {
            Some(s) => Some(names.iter().position(|n| n == s).ok_or_else(|| {
                ApiError::invalid_option(format!("no sheet named {s:?}"))
                    .with_hint(format!("The sheets are: {}.", listed()))
            })?),
            None => None,
        };
        if window.is_some() && chosen.is_none() && meta.len() > 1 {
            return Err(ApiError::invalid_option(format!(
                "range needs sheet: the workbook has {} sheets",
                meta.len()
            ))
            .with_hint(format!("Add `sheet`, one of: {}.", listed())));
        }
        let in_scope = |i: usize| chosen.is_none_or(|c| c == i);

        // Room for the sheet list, with the longest status every sheet could get.
        let reserve: usize = 12
            + meta
                .iter()
                .map(|(n, _)| n.chars().count() + 64)
                .sum::<usize>();
        let char_room = max_chars.saturating_sub(reserve);

        // Each sheet is streamed in workbook order; the rows of a sheet in scope are shown
        // until the cell budget or the character budget runs out, and the sheet list
        // (written first) then states exactly what was read.
        let mut cells_left = budget;
        let mut body = String::new();
        let mut body_chars = 0usize;
        let mut plan: Vec<(usize, u32)> = Vec::new(); // (sheet, rows shown)
        let mut stopped_by = "";
        let mut sheets: Vec<Sheet> = Vec::with_capacity(meta.len());
        // char_count: the whole selection, as if both budgets were unlimited.
        let mut all_chars = 0u64;
        for (i, (name, hidden)) in meta.iter().enumerate() {
            let reading = in_scope(i) && stopped_by.is_empty();
            let keep = reading.then(|| Keep {
                cells: cells_left,
                chars: char_room.saturating_sub(body_chars),
            });
            let w = if in_scope(i) { window } else { None };
            let mut s = Sheet::new(name.clone(), *hidden, w, keep);
            wb.read(&mut s)?;
            let heading = s.heading();
            let hn = heading.chars().count();
            if in_scope(i) {
                all_chars += hn as u64 + s.line_chars;
            }
            if reading {
                if body_chars + hn > char_room || (cells_left == 0 && s.rows > 0) {
                    stopped_by = if cells_left == 0 {
                        "cell budget (max_cells)"
                    } else {
                        "character budget (max_chars)"
                    };
                } else {
                    let mut shown = 0u32;
                    let mut shown_bytes = 0usize;
                    while shown < s.rows {
                        // A line not kept is one the budgets cannot show (`Keep`).
                        let n = s.line(shown as usize).map(|l| l.chars().count());
                        let fits = n.is_some_and(|n| body_chars + hn + n <= char_room);
                        if cells_left < s.cols as u64 || !fits {
                            stopped_by = if cells_left < s.cols as u64 {
                                "cell budget (max_cells)"
                            } else {
                                "character budget (max_chars)"
                            };
                            break;
                        }
                        body_chars += n.unwrap_or(0);
                        cells_left -= s.cols as u64;
                        shown_bytes = s.ends[shown as usize];
                        shown += 1;
                    }
                    body_chars += hn;
                    plan.push((i, shown));
                    // The first sheet's lines become the body in place (no copy of a
                    // text that can be most of max_chars).
                    let mut text = std::mem::take(&mut s.text);
                    text.truncate(shown_bytes);
                    if body.is_empty() {
                        text.insert_str(0, &heading);
                        body = text;
                    } else {
                        body.push_str(&heading);
                        body.push_str(&text);
                    }
                }
            }
            s.text = String::new();
            s.ends = Vec::new();
            sheets.push(s);
        }
        let status = |i: usize| -> (&'static str, Option<String>) {
            match plan.iter().find(|(p, _)| *p == i) {
                Some((_, rows)) if *rows >= sheets[i].rows => ("full", None),
                Some((_, rows)) => {
                    let s = &sheets[i];
                    let last = (*rows > 0).then(|| {
                        format!("{}{}", col_name(s.origin.1 + s.cols - 1), s.origin.0 + rows)
                    });
                    ("partial", last)
                }
                None if in_scope(i) => ("not_read", None),
                None => ("not_selected", None),
            }
        };

        let mut head = String::from("## Sheets\n");
        let mut meta = Vec::new();
        for (i, s) in sheets.iter().enumerate() {
            let (st, last) = status(i);
            head.push_str(&format!(
                "- {} ({} rows × {} cols){}: {}\n",
                s.name,
                s.rows,
                s.cols,
                if s.hidden { ", hidden" } else { "" },
                st.replace('_', " ")
            ));
            meta.push(SheetInfo {
                name: s.name.clone(),
                rows: s.rows as u64,
                cols: s.cols as u64,
                read: st.to_string(),
                hidden: s.hidden,
                last_cell: last,
            });
        }

        let mut ex = Extraction {
            report: Report {
                sheets: Some(meta),
                ..Default::default()
            },
            ..Default::default()
        };
        if sheets.iter().all(|s| s.rows == 0) {
            // No cell holds anything: empty text, said plainly (the sheets are still listed).
            ex.report.note = Some("the workbook has no cell values".into());
            return Ok(ex);
        }
        // Where reading on starts: the partly read sheet, else the first sheet not read.
        let next = (0..sheets.len()).find_map(|i| match status(i).0 {
            "partial" => {
                let s = &sheets[i];
                let rows = plan.iter().find(|(p, _)| *p == i).map(|p| p.1).unwrap_or(0);
                let r0 = s.origin.0 + rows;
                Some(Next {
                    sheet: Some(s.name.clone()),
                    range: Some(format!(
                        "{}{}:{}{}",
                        col_name(s.origin.1),
                        r0 + 1,
                        col_name(s.origin.1 + s.cols - 1),
                        s.origin.0 + s.rows
                    )),
                    ..Default::default()
                })
            }
            "not_read" => Some(Next {
                sheet: Some(sheets[i].name.clone()),
                ..Default::default()
            }),
            _ => None,
        });
        ex.char_count = head.chars().count() as u64 + all_chars;
        body.insert_str(0, &head);
        let text = body;
        match next {
            Some(n) => {
                ex.truncated = true;
                ex.warnings.push(format!(
                    "stopped at the {stopped_by}; the sheet list says what was read and `next` reads on"
                ));
                ex.text = close_truncated(text, ex.char_count);
                ex.next = Some(n);
            }
            None => ex.text = text,
        }
        Ok(ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_without_float_noise() {
        assert_eq!(fmt_num(0.1 + 0.2), "0.3");
        assert_eq!(fmt_num(3.0), "3");
        assert_eq!(fmt_num(-1234567.0), "-1234567");
        assert_eq!(fmt_num(1.5), "1.5");
        assert_eq!(fmt_num(3.14159265358979), "3.14159265358979");
        assert_eq!(fmt_num(1e20), "100000000000000000000");
    }

    #[test]
    fn fast_number_path_agrees_with_fmt_num() {
        let mut x: u64 = 0x9E3779B97F4A7C15;
        let mut values = vec![
            0.1 + 0.2,
            -0.0,
            1e15,
            1e16,
            123456789012345.6,
            1e-7,
            2.5e-300,
            1e300,
            -42.0,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(f64::from_bits(x));
            values.push((x % 10_000_000) as f64 / 100.0);
            values.push((x % 1000) as f64 / 7.0);
        }
        for f in values.into_iter().filter(|f| f.is_finite()) {
            let mut s = String::new();
            push_num(&mut s, f);
            assert_eq!(s, fmt_num(f), "{f:e}");
        }
        let mut s = String::new();
        push_padded(&mut s, 7, 2);
        push_padded(&mut s, 2024, 4);
        assert_eq!(s, "072024");
    }

    #[test]
    fn cells_and_ranges() {
        assert_eq!(col_name(0), "A");
        assert_eq!(col_name(25), "Z");
        assert_eq!(col_name(26), "AA");
        assert_eq!(col_name(701), "ZZ");
        assert_eq!(parse_range("A1:D10").unwrap(), ((0, 0), (9, 3)));
        assert_eq!(parse_range("b2").unwrap(), ((1, 1), (1, 1)));
        assert_eq!(parse_range("$AA$3:$AB$4").unwrap(), ((2, 26), (3, 27)));
        assert_eq!(
            parse_range("D10:A1").unwrap_err().code,
            ErrorCode::InvertedRange
        );
        for bad in ["", "A0", "1A", "A1:", "ABCD1", "A1:B2:C3"] {
            assert!(parse_range(bad).is_err(), "{bad}");
        }
    }
}
