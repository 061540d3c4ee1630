//! Number formats and charts of a legacy .xls (BIFF8). calamine reads the cells but keeps
//! of a format only whether it is a date, and reads no charts; here one pass over the
//! workbook stream reads the format codes (FORMAT), each cell format's code (XF) and which
//! cells use which (NUMBER, RK, MULRK, FORMULA), for the cells whose format shows numbers
//! other than General does (`1,599.99`, `($1,599.99)`, `2.50%`); and each chart substream
//! (a chart sheet's, or one embedded in a worksheet) into what `chart::render` writes, as
//! an xlsx chart reads: its title, the category axis's title, the series' names and the
//! categories and values the chart caches. Best effort: a stream this cannot follow gives
//! no formats and no charts, and calamine's reading (and its errors) stands.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::numfmt;
use crate::extract::chart;

/// The number format of each formatted number cell of a sheet, by (row, col).
pub(super) type CellFormats = HashMap<(u32, u32), Arc<numfmt::NumFmt>>;

/// By sheet name, its formatted number cells.
pub(super) type Formats = HashMap<String, Arc<CellFormats>>;

/// Formatted cells kept at most, across the workbook (a cell costs about 40 bytes).
pub(super) const MAX_CELLS: usize = 1_000_000;

/// Chart points (a category or a value) kept at most, across the workbook, and series a
/// chart (Excel's own limit is 255).
pub(super) const MAX_POINTS: usize = 1_000_000;
const MAX_SERIES: usize = 1_024;

/// What an .xls holds besides its cells.
#[derive(Default)]
pub(super) struct Legacy {
    /// By sheet, its formatted number cells.
    pub formats: Formats,
    /// By sheet name, each of its charts, in the stream's order.
    pub charts: HashMap<String, Vec<Pending>>,
    /// By sheet name, its cell comments (NOTE records and their objects' text), in the
    /// stream's order.
    pub notes: HashMap<String, Vec<super::comments::Note>>,
    /// By sheet name, the text of its text boxes and other drawn objects with text (TXO).
    pub shapes: HashMap<String, Vec<String>>,
    /// By sheet name, its print header and footer codes (HEADER, FOOTER; `true` for a
    /// header), for `include_headers_footers`.
    pub printed: HashMap<String, Vec<(bool, String)>>,
}

/// A sheet's drawn objects being read: each object's type by its id, the text its TXO
/// gives, the NOTE records naming them.
#[derive(Default)]
struct Objects {
    kinds: HashMap<u16, u16>,
    order: Vec<u16>,
    texts: HashMap<u16, String>,
    /// The object the records read belong to (the last OBJ).
    last: Option<u16>,
    /// A TXO's text being read from its CONTINUE records: (object, characters, so far).
    txo: Option<(u16, usize, String)>,
    /// NOTE records: row, column, object, author.
    notes: Vec<(u32, u32, u16, String)>,
}

/// The most characters of one object's text (Excel's own limit is 32,767).
const MAX_TXO_CHARS: usize = 32_767;

impl Objects {
    /// A sheet's comments and drawn texts, once its substream ends.
    fn finish(
        self,
        sheet: &str,
        notes: &mut HashMap<String, Vec<super::comments::Note>>,
        shapes: &mut HashMap<String, Vec<String>>,
    ) {
        let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut noted = std::collections::HashSet::new();
        for (row, col, id, author) in self.notes {
            let Some(text) = self.texts.get(&id) else {
                continue;
            };
            noted.insert(id);
            notes
                .entry(sheet.to_string())
                .or_default()
                .push(super::comments::Note {
                    row,
                    col,
                    author,
                    text: one_line(text),
                });
        }
        for id in self.order {
            // Comments (0x19) show with their cells; a chart's or a control's own text
            // is not a text box's.
            if noted.contains(&id) || self.kinds.get(&id) == Some(&0x19) {
                continue;
            }
            if let Some(t) = self
                .texts
                .get(&id)
                .map(|t| one_line(t))
                .filter(|t| !t.is_empty())
            {
                shapes.entry(sheet.to_string()).or_default().push(t);
            }
        }
    }
}

/// A chart as its substream holds it: what it caches, and where its series' names,
/// values and categories stand in the workbook (a writer may cache none of them:
/// LibreOffice does not), read from the cells by `Pending::text`.
pub(super) struct Pending {
    pub chart: chart::Chart,
    pub refs: Vec<Ref>,
}

/// What a series takes from the workbook's cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Field {
    Name,
    Values,
    Categories,
}

/// A series' field and the cells it comes from: a sheet's block of cells, its points in
/// row-major order.
#[derive(Debug)]
pub(super) struct Ref {
    pub series: usize,
    pub field: Field,
    pub sheet: String,
    pub rows: (u32, u32),
    pub cols: (u32, u32),
}

impl Pending {
    /// The chart's text, a field the chart does not cache taken from the cells `cell`
    /// gives (sheet, row, column: the cell's text, or `None`), at most `budget` cells
    /// looked at (shared by a workbook's charts: a hostile one may refer to every cell of
    /// every sheet from each of its series).
    pub(super) fn text(
        mut self,
        budget: &mut usize,
        mut cell: impl FnMut(&str, u32, u32) -> Option<String>,
    ) -> String {
        for r in &self.refs {
            let Some(s) = self.chart.series.get_mut(r.series) else {
                continue;
            };
            let cached = match r.field {
                Field::Name => !s.name.is_empty(),
                Field::Values => !s.vals.is_empty(),
                Field::Categories => !s.cats.is_empty(),
            };
            if cached {
                continue;
            }
            let width = (r.cols.1 - r.cols.0 + 1) as usize;
            let mut k = 0usize;
            'cells: for row in r.rows.0..=r.rows.1 {
                for col in r.cols.0..=r.cols.1 {
                    // A name is one cell's text (or a row's, joined); points stop at
                    // the renderer's own bound.
                    if k >= 100_000 || *budget == 0 {
                        break 'cells;
                    }
                    *budget -= 1;
                    let i = (row - r.rows.0) as usize * width + (col - r.cols.0) as usize;
                    k += 1;
                    let Some(t) = cell(&r.sheet, row, col) else {
                        continue;
                    };
                    match r.field {
                        Field::Name => {
                            if !s.name.is_empty() {
                                s.name.push(' ');
                            }
                            s.name.push_str(&t);
                        }
                        Field::Values => s.vals.push((i, t)),
                        Field::Categories => s.cats.push((i, t)),
                    }
                }
            }
        }
        chart::render(&self.chart)
    }
}

/// A BRAI's formula when it names one block of cells of a sheet (PtgRef3d or PtgArea3d):
/// the sheet's index into EXTERNSHEET, its rows and its columns.
fn area(formula: &[u8]) -> Option<(u16, (u32, u32), (u32, u32))> {
    let cce = u16::from_le_bytes([*formula.first()?, *formula.get(1)?]) as usize;
    let rgce = formula.get(2..2 + cce)?;
    let at = |i: usize| rgce.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    match *rgce.first()? {
        0x3A | 0x5A | 0x7A if cce == 7 => {
            let (row, col) = (at(3)? as u32, (at(5)? & 0x3FFF) as u32);
            Some((at(1)?, (row, row), (col, col)))
        }
        0x3B | 0x5B | 0x7B if cce == 11 => {
            let rows = (at(3)? as u32, at(5)? as u32);
            let cols = ((at(7)? & 0x3FFF) as u32, (at(9)? & 0x3FFF) as u32);
            (rows.0 <= rows.1 && cols.0 <= cols.1).then_some((at(1)?, rows, cols))
        }
        _ => None,
    }
}

/// The formatted number cells and the charts of an .xls, by sheet.
pub(super) fn read(path: &Path) -> Legacy {
    read_stream(path).unwrap_or_default()
}

/// A chart substream being read.
struct ChartRead {
    /// The BOF depth of its substream.
    depth: u32,
    /// The sheet it shows on (a chart sheet's own name, or the worksheet it is drawn on).
    owner: Option<String>,
    chart: chart::Chart,
    /// Series' fields by reference: (series, field, EXTERNSHEET index, rows, columns).
    refs: Vec<(usize, Field, u16, (u32, u32), (u32, u32))>,
    /// BEGIN/END nesting inside the substream.
    level: u32,
    /// The level a SERIES's group opened at, while inside it.
    series_at: Option<u32>,
    /// A TEXT's group (a title or a label): its level and the text its SERIESTEXT gave.
    label: Option<(u32, String)>,
    /// The last BRAI's id (0: a name or a title's text, 1: values, 2: categories).
    brai: u8,
    /// The last SIINDEX's kind (1: values, 2: categories) for the cache that follows it.
    cache: u16,
}

impl ChartRead {
    /// A chart substream opened at BOF `depth`, shown on `owner`'s sheet.
    fn new(depth: u32, owner: Option<String>) -> Self {
        Self {
            depth,
            owner,
            chart: chart::Chart::default(),
            refs: Vec::new(),
            level: 0,
            series_at: None,
            label: None,
            brai: 0xFF,
            cache: 0,
        }
    }

    /// One of its records (BOF and EOF aside).
    fn record(&mut self, kind: u16, rec: &[u8], points: &mut usize) {
        let u16_at = |i: usize| rec.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        match kind {
            // BEGIN, END.
            0x1033 => self.level += 1,
            0x1034 => {
                self.level = self.level.saturating_sub(1);
                if self.series_at == Some(self.level) {
                    self.series_at = None;
                }
                if self.label.as_ref().is_some_and(|(at, _)| *at == self.level) {
                    self.label = None;
                }
            }
            // SERIES: a series group opens (its index is its order); one past the cap
            // is not read (its name and references given to none).
            0x1003 => {
                if self.chart.series.len() < MAX_SERIES {
                    self.chart.series.push(chart::Series::default());
                    self.series_at = Some(self.level);
                } else {
                    self.series_at = None;
                }
            }
            // TEXT: a label's group (a title once an OBJECTLINK says whose).
            0x1025 => self.label = Some((self.level, String::new())),
            // BRAI: which of a series' fields (or a label's text) comes next, and from
            // where (`rt` 2: a reference to cells).
            0x1051 => {
                self.brai = rec.first().copied().unwrap_or(0xFF);
                let field = match self.brai {
                    0 => Field::Name,
                    1 => Field::Values,
                    2 => Field::Categories,
                    _ => return,
                };
                if self.series_at.is_some() && self.label.is_none() && rec.get(1) == Some(&2) {
                    if let Some((ixti, rows, cols)) = rec.get(6..).and_then(area) {
                        let series = self.chart.series.len().saturating_sub(1);
                        self.refs.push((series, field, ixti, rows, cols));
                    }
                }
            }
            // SERIESTEXT: a label's text, or the series' name (its BRAI id 0).
            0x100D => {
                let Some(text) = rec.get(2..).and_then(|b| unicode_string(b, false)) else {
                    return;
                };
                if let Some((_, t)) = self.label.as_mut() {
                    *t = text;
                } else if self.series_at.is_some() && self.brai == 0 {
                    if let Some(s) = self.chart.series.last_mut() {
                        s.name = text;
                    }
                }
            }
            // OBJECTLINK: whose label this is (1: the chart's title, 3: the category axis's).
            0x1027 => {
                if let (Some((_, text)), Some(to)) = (self.label.as_ref(), u16_at(0)) {
                    match to {
                        1 => self.chart.title = text.clone(),
                        3 => self.chart.cat_title = text.clone(),
                        _ => {}
                    }
                }
            }
            0x1065 => self.cache = u16_at(0).unwrap_or(0),
            // The cache after SIINDEX: NUMBER and LABEL, a point's index and its series'.
            0x0203 | 0x0204 if matches!(self.cache, 1 | 2) && *points < MAX_POINTS => {
                let (Some(point), Some(col)) = (u16_at(0), u16_at(2)) else {
                    return;
                };
                let value = if kind == 0x0203 {
                    rec.get(6..14)
                        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
                        .filter(|f| f.is_finite())
                        .map(crate::extract::cell::fmt_num)
                } else {
                    rec.get(6..).and_then(|b| unicode_string(b, true))
                };
                let (Some(value), Some(s)) = (value, self.chart.series.get_mut(col as usize))
                else {
                    return;
                };
                *points += 1;
                let to = if self.cache == 1 {
                    &mut s.vals
                } else {
                    &mut s.cats
                };
                to.push((point as usize, value));
            }
            _ => {}
        }
    }
}

fn read_stream(path: &Path) -> Option<Legacy> {
    let mut cf = cfb::open(path).ok()?;
    let name = cf
        .read_root_storage()
        .map(|e| e.name().to_string())
        .find(|n| n.eq_ignore_ascii_case("Workbook") || n.eq_ignore_ascii_case("Book"))?;
    let stream = cf.open_stream(format!("/{name}")).ok()?;
    let mut r = std::io::BufReader::with_capacity(64 * 1024, stream);
    let mut out: HashMap<String, CellFormats> = HashMap::new();
    let mut charts: HashMap<String, Vec<Pending>> = HashMap::new();
    // Sheets in BOUNDSHEET order; EXTERNSHEET's sheet index of each reference (to a
    // sheet of this workbook); which SUPBOOKs are this workbook's own.
    let (mut order, mut externs): (Vec<String>, Vec<Option<u16>>) = (Vec::new(), Vec::new());
    let mut own_books: Vec<bool> = Vec::new();
    let mut chart: Option<ChartRead> = None;
    let mut points = 0usize;
    let mut custom: HashMap<u16, String> = HashMap::new();
    let mut xf_fmt: Vec<u16> = Vec::new();
    // Sheet substreams' offsets (their BOF record) → name.
    let mut sheets: HashMap<u32, String> = HashMap::new();
    // Each XF's code, when it shows numbers (made once the globals are read).
    let mut by_xf: Vec<Option<Arc<numfmt::NumFmt>>> = Vec::new();
    let (mut offset, mut depth, mut kept) = (0u64, 0u32, 0usize);
    let mut current: Option<String> = None;
    let mut objects = Objects::default();
    let (mut notes, mut shapes) = (HashMap::new(), HashMap::new());
    let mut printed: HashMap<String, Vec<(bool, String)>> = HashMap::new();
    let mut buf = vec![0u8; 8224];
    loop {
        let mut head = [0u8; 4];
        if r.read_exact(&mut head).is_err() {
            break;
        }
        let kind = u16::from_le_bytes([head[0], head[1]]);
        let len = u16::from_le_bytes([head[2], head[3]]) as usize;
        if len > buf.len() {
            return None;
        }
        r.read_exact(&mut buf[..len]).ok()?;
        let rec = &buf[..len];
        let at = offset;
        offset += 4 + len as u64;
        let u16_at = |i: usize| rec.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
        if let Some(c) = chart.as_mut().filter(|c| c.depth == depth) {
            if kind != 0x0809 && kind != 0x000A {
                c.record(kind, rec, &mut points);
                continue;
            }
        }
        match kind {
            // BOF: the globals first (BIFF8 only), then each sheet's substream; a chart's
            // substream is a sheet's own (a chart sheet) or inside a worksheet's.
            0x0809 => {
                depth += 1;
                let (version, dt) = (u16_at(0)?, u16_at(2)?);
                if at == 0 && version != 0x0600 {
                    return None;
                }
                if dt == 0x0020 && chart.is_none() {
                    let owner = if depth == 1 {
                        sheets.get(&(at as u32)).cloned()
                    } else {
                        current.clone()
                    };
                    chart = Some(ChartRead::new(depth, owner));
                }
                if depth == 1 && dt == 0x0010 {
                    if by_xf.is_empty() {
                        // One compiled format a format id, however many XFs share it.
                        let mut compiled: HashMap<u16, Option<Arc<numfmt::NumFmt>>> =
                            HashMap::new();
                        by_xf = xf_fmt
                            .iter()
                            .map(|f| {
                                compiled
                                    .entry(*f)
                                    .or_insert_with(|| {
                                        let code = custom
                                            .get(f)
                                            .map(String::as_str)
                                            .or_else(|| numfmt::builtin(*f))?;
                                        numfmt::is_numeric(code)
                                            .then(|| Arc::new(numfmt::NumFmt::new(code)))
                                    })
                                    .clone()
                            })
                            .collect();
                    }
                    current = sheets.get(&(at as u32)).cloned();
                }
            }
            // EOF
            0x000A => {
                if let Some(c) = chart.take_if(|c| c.depth == depth) {
                    let shown = !c.chart.title.is_empty() || !c.chart.series.is_empty();
                    if let (Some(owner), true) = (c.owner, shown) {
                        let refs = c
                            .refs
                            .into_iter()
                            .filter_map(|(series, field, ixti, rows, cols)| {
                                let tab = (*externs.get(ixti as usize)?)?;
                                Some(Ref {
                                    series,
                                    field,
                                    sheet: order.get(tab as usize)?.clone(),
                                    rows,
                                    cols,
                                })
                            })
                            .collect();
                        charts.entry(owner).or_default().push(Pending {
                            chart: c.chart,
                            refs,
                        });
                    }
                }
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some(sheet) = current.take() {
                        std::mem::take(&mut objects).finish(&sheet, &mut notes, &mut shapes);
                    }
                    objects = Objects::default();
                }
            }
            0x041E if current.is_none() => {
                let (id, code) = (u16_at(0)?, unicode_string(&rec[2..], true)?);
                custom.insert(id, code);
            }
            0x00E0 if current.is_none() => xf_fmt.push(u16_at(2)?),
            0x0085 => {
                let pos = u32::from_le_bytes(rec.get(0..4)?.try_into().ok()?);
                let name = unicode_string(rec.get(6..)?, false).unwrap_or_default();
                order.push(name.clone());
                sheets.insert(pos, name);
            }
            // SUPBOOK: a workbook references point into; this one's own says so with
            // 0x0401 after its sheet count.
            0x01AE if current.is_none() && depth == 1 => {
                own_books.push(u16_at(2) == Some(0x0401));
            }
            // EXTERNSHEET: each reference's book and sheet (a sheet index, the first of a
            // range); only a sheet of this workbook is read, never another file's.
            0x0017 if current.is_none() && depth == 1 => {
                let n = u16_at(0)? as usize;
                externs = (0..n)
                    .map(|k| {
                        let book = u16_at(2 + k * 6)? as usize;
                        let own = own_books.get(book).copied().unwrap_or(false);
                        u16_at(2 + k * 6 + 2).filter(|t| own && *t < 0xFFFE)
                    })
                    .collect();
            }
            // NUMBER, RK, FORMULA (a number only when its cached value is one).
            0x0203 | 0x027E | 0x0006 if depth == 1 => {
                let Some(sheet) = current.as_ref() else {
                    continue;
                };
                if kind == 0x0006 && rec.get(12..14) == Some(&[0xFF, 0xFF]) {
                    continue;
                }
                let (row, col, xf) = (u16_at(0)?, u16_at(2)?, u16_at(4)?);
                if let Some(Some(code)) = by_xf.get(xf as usize) {
                    if kept < MAX_CELLS {
                        kept += 1;
                        out.entry(sheet.clone())
                            .or_default()
                            .insert((row as u32, col as u32), code.clone());
                    }
                }
            }
            // HEADER, FOOTER: the sheet's print header and footer (empty: none).
            0x0014 | 0x0015 if depth == 1 && !rec.is_empty() => {
                let (Some(sheet), Some(code)) = (current.as_ref(), unicode_string(rec, true))
                else {
                    continue;
                };
                let codes = printed.entry(sheet.clone()).or_default();
                if codes.len() < 4 {
                    codes.push((kind == 0x0014, code));
                }
            }
            // OBJ: a drawn object; its first subrecord (ftCmo) gives its type and id.
            0x005D if depth == 1 && current.is_some() => {
                if let (Some(0x0015), Some(kind), Some(id)) = (u16_at(0), u16_at(4), u16_at(6)) {
                    if objects.kinds.len() < 65_536 && objects.kinds.insert(id, kind).is_none() {
                        objects.order.push(id);
                    }
                    objects.last = Some(id);
                }
            }
            // TXO: the last object's text, in the CONTINUE records that follow.
            0x01B6 if depth == 1 && current.is_some() => {
                let chars = u16_at(10).unwrap_or(0) as usize;
                objects.txo = match objects.last {
                    Some(id) if chars > 0 => Some((id, chars.min(MAX_TXO_CHARS), String::new())),
                    _ => None,
                };
            }
            // CONTINUE: a TXO's characters, each record with its own flag byte (1: UTF-16).
            0x003C if depth == 1 && objects.txo.is_some() => {
                let Some((id, want, mut text)) = objects.txo.take() else {
                    continue;
                };
                let have = text.chars().count();
                if let Some((&flag, chars)) = rec.split_first() {
                    let left = want.saturating_sub(have);
                    if flag & 1 == 1 {
                        let units: Vec<u16> = chars
                            .chunks_exact(2)
                            .take(left)
                            .map(|b| u16::from_le_bytes([b[0], b[1]]))
                            .collect();
                        text.extend(char::decode_utf16(units).map(|c| c.unwrap_or('\u{FFFD}')));
                    } else {
                        text.extend(chars.iter().take(left).map(|&b| b as char));
                    }
                }
                if text.chars().count() >= want || rec.is_empty() {
                    objects.texts.insert(id, text);
                } else {
                    objects.txo = Some((id, want, text));
                }
            }
            // NOTE: a cell comment, by its object, with its author.
            0x001C if depth == 1 && current.is_some() => {
                let (Some(row), Some(col), Some(id)) = (u16_at(0), u16_at(2), u16_at(6)) else {
                    continue;
                };
                let author = rec
                    .get(8..)
                    .and_then(|b| unicode_string(b, true))
                    .unwrap_or_default();
                if objects.notes.len() < 65_536 {
                    objects.notes.push((row as u32, col as u32, id, author));
                }
            }
            // MULRK: a row's run of RK cells, an XF each.
            0x00BD if depth == 1 => {
                let Some(sheet) = current.as_ref() else {
                    continue;
                };
                let (row, first) = (u16_at(0)?, u16_at(2)?);
                let n = len.saturating_sub(6) / 6;
                for k in 0..n {
                    let xf = u16_at(4 + k * 6)?;
                    if let Some(Some(code)) = by_xf.get(xf as usize) {
                        if kept < MAX_CELLS {
                            kept += 1;
                            out.entry(sheet.clone())
                                .or_default()
                                .insert((row as u32, first as u32 + k as u32), code.clone());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(Legacy {
        formats: out.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
        charts,
        notes,
        shapes,
        printed,
    })
}

/// An XLUnicodeString (`wide_len`: a 16-bit character count) or ShortXLUnicodeString
/// (8-bit count): its flags say whether characters are one byte (Latin-1) or two
/// (UTF-16LE), and whether rich-text runs or phonetic data come before them.
fn unicode_string(b: &[u8], wide_len: bool) -> Option<String> {
    let (cch, mut i) = if wide_len {
        (u16::from_le_bytes([*b.first()?, *b.get(1)?]) as usize, 2)
    } else {
        (*b.first()? as usize, 1)
    };
    let flags = *b.get(i)?;
    i += 1;
    if wide_len {
        if flags & 0x08 != 0 {
            i += 2;
        }
        if flags & 0x04 != 0 {
            i += 4;
        }
    }
    if flags & 0x01 != 0 {
        let bytes = b.get(i..i + cch * 2)?;
        Some(
            char::decode_utf16(
                bytes
                    .chunks_exact(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]])),
            )
            .map(|c| c.unwrap_or('\u{FFFD}'))
            .collect(),
        )
    } else {
        Some(b.get(i..i + cch)?.iter().map(|&c| c as char).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn rec(kind: u16, body: &[u8]) -> Vec<u8> {
        let mut r = kind.to_le_bytes().to_vec();
        r.extend((body.len() as u16).to_le_bytes());
        r.extend(body);
        r
    }

    fn bof(dt: u16) -> Vec<u8> {
        let mut b = 0x0600u16.to_le_bytes().to_vec();
        b.extend(dt.to_le_bytes());
        b.extend([0u8; 12]);
        rec(0x0809, &b)
    }

    /// A ShortXLUnicodeString after SERIESTEXT's reserved id.
    fn series_text(s: &str) -> Vec<u8> {
        let mut b = vec![0, 0, s.len() as u8, 0];
        b.extend(s.as_bytes());
        rec(0x100D, &b)
    }

    fn number(point: u16, series: u16, v: f64) -> Vec<u8> {
        let mut b = point.to_le_bytes().to_vec();
        b.extend(series.to_le_bytes());
        b.extend([0, 0]);
        b.extend(v.to_le_bytes());
        rec(0x0203, &b)
    }

    fn label(point: u16, series: u16, s: &str) -> Vec<u8> {
        let mut b = point.to_le_bytes().to_vec();
        b.extend(series.to_le_bytes());
        b.extend([0, 0]);
        b.extend((s.len() as u16).to_le_bytes());
        b.push(0);
        b.extend(s.as_bytes());
        rec(0x0204, &b)
    }

    /// A BRAI: its id, literal (rt 1) or by reference to nothing here (rt 2, no formula).
    fn brai(id: u8, rt: u8) -> Vec<u8> {
        rec(0x1051, &[id, rt, 0, 0, 0, 0, 0, 0])
    }

    /// A workbook stream of one worksheet `Data` with `chart`'s records drawn on it.
    fn workbook(chart: &[Vec<u8>]) -> tempfile::NamedTempFile {
        workbook_with(&[], chart)
    }

    /// The same, with `extra` records in the globals (after BOUNDSHEET).
    fn workbook_with(extra: &[Vec<u8>], chart: &[Vec<u8>]) -> tempfile::NamedTempFile {
        let sheet_name = b"Data";
        let mut boundsheet = vec![0u8; 6];
        boundsheet.extend([sheet_name.len() as u8, 0]);
        boundsheet.extend(sheet_name);
        let mut globals = bof(0x0005);
        let bs_len = 4 + boundsheet.len();
        let eof = rec(0x000A, &[]);
        let extra_len: usize = extra.iter().map(Vec::len).sum();
        let sheet_at = (globals.len() + bs_len + extra_len + eof.len()) as u32;
        boundsheet[..4].copy_from_slice(&sheet_at.to_le_bytes());
        globals.extend(rec(0x0085, &boundsheet));
        for r in extra {
            globals.extend(r);
        }
        globals.extend(&eof);
        globals.extend(bof(0x0010));
        globals.extend(bof(0x0020));
        for r in chart {
            globals.extend(r);
        }
        globals.extend(&eof);
        globals.extend(&eof);
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut cf = cfb::create(file.path()).unwrap();
        cf.create_stream("/Workbook")
            .unwrap()
            .write_all(&globals)
            .unwrap();
        cf.flush().unwrap();
        file
    }

    #[test]
    fn an_excel_chart_reads_its_cached_title_names_categories_and_values() {
        let (begin, end) = (rec(0x1033, &[]), rec(0x1034, &[]));
        let mut records = vec![rec(0x1002, &[0; 16]), begin.clone()];
        for name in ["North", "South"] {
            records.extend([rec(0x1003, &[0; 12]), begin.clone()]);
            records.extend([brai(0, 1), series_text(name), brai(1, 2), brai(2, 2)]);
            records.push(end.clone());
        }
        // The chart's title and the category axis's, each a TEXT group with its link.
        for (text, link) in [("Units sold", 1u16), ("Quarter", 3), ("Units", 2)] {
            records.extend([rec(0x1025, &[0; 32]), begin.clone(), brai(0, 1)]);
            records.push(series_text(text));
            records.push(rec(0x1027, &[link as u8, 0, 0, 0, 0, 0]));
            records.push(end.clone());
        }
        // A data label of the first series: not the chart's title.
        records.extend([rec(0x1025, &[0; 32]), begin.clone(), brai(0, 1)]);
        records.extend([
            series_text("10!"),
            rec(0x1027, &[4, 0, 0, 0, 0, 0]),
            end.clone(),
        ]);
        records.push(end.clone());
        // The cache: values (1), then categories (2).
        records.push(rec(0x1065, &[1, 0]));
        records.extend([number(0, 0, 10.0), number(1, 0, 12.5), number(1, 1, 0.3)]);
        records.push(rec(0x1065, &[2, 0]));
        records.extend([label(0, 0, "Q1"), label(1, 0, "Q2")]);
        let file = workbook(&records);
        let mut legacy = read(file.path());
        let mut charts = legacy.charts.remove("Data").unwrap();
        assert_eq!(charts.len(), 1);
        let text = charts
            .remove(0)
            .text(&mut 10, |_, _, _| unreachable!("all cached"));
        assert_eq!(
            text,
            "[Chart: Units sold]\nQuarter\tNorth\tSouth\nQ1\t10\t\nQ2\t12.5\t0.3\n"
        );
    }

    #[test]
    fn a_chart_of_references_reads_its_cells_and_a_hostile_one_stays_bounded() {
        // Values by reference (PtgArea3d, Sheet index 0 through EXTERNSHEET): B2:B3.
        let mut area = vec![0x3B, 0, 0];
        for v in [1u16, 2, 1, 1] {
            area.extend(v.to_le_bytes());
        }
        let mut b = vec![1, 2, 0, 0, 0, 0];
        b.extend((area.len() as u16).to_le_bytes());
        b.extend(&area);
        let (begin, end) = (rec(0x1033, &[]), rec(0x1034, &[]));
        let records = vec![
            rec(0x1003, &[0; 12]),
            begin.clone(),
            rec(0x1051, &b),
            end.clone(),
        ];
        let pending = {
            // EXTERNSHEET is in the globals: read through `record` and the stream alike.
            let file = workbook(&records);
            let mut legacy = read(file.path());
            legacy.charts.remove("Data").unwrap().remove(0)
        };
        // No EXTERNSHEET in this stream: the reference has no sheet, nothing is made up.
        assert!(pending.refs.is_empty());
        // This workbook's own SUPBOOK (0x0401 after the sheet count): reference 0 is its
        // first sheet. Another file's SUPBOOK (its path instead): never read here.
        let externsheet = rec(0x0017, &[1, 0, 0, 0, 0, 0, 0, 0]);
        for (book, own) in [([1u8, 0, 1, 4], true), ([1, 0, 3, 0], false)] {
            let file = workbook_with(&[rec(0x01AE, &book), externsheet.clone()], &records);
            let p = read(file.path()).charts.remove("Data").unwrap().remove(0);
            let sheets: Vec<&str> = p.refs.iter().map(|r| r.sheet.as_str()).collect();
            assert_eq!(sheets, if own { vec!["Data"] } else { vec![] }, "{book:?}");
        }
        let mut c = ChartRead::new(1, None);
        let mut points = MAX_POINTS - 1;
        for r in &records {
            let kind = u16::from_le_bytes([r[0], r[1]]);
            c.record(kind, &r[4..], &mut points);
        }
        assert_eq!(c.refs, vec![(0, Field::Values, 0, (1, 2), (1, 1))]);
        // The cache stops at the workbook's bound of points.
        c.record(0x1065, &[1, 0], &mut points);
        for k in 0..5u16 {
            let r = number(k, 0, 1.0);
            c.record(0x0203, &r[4..], &mut points);
        }
        assert_eq!(c.chart.series[0].vals.len(), 1);
        // Series past the cap are not read, nor given to the last one kept.
        while c.chart.series.len() < MAX_SERIES {
            c.record(0x1003, &[0; 12], &mut points);
        }
        c.chart.series[MAX_SERIES - 1].name = "kept".into();
        let refs = c.refs.len();
        c.record(0x1003, &[0; 12], &mut points);
        c.record(0x1051, &b, &mut points);
        c.record(0x100D, &series_text("past the cap")[4..], &mut points);
        assert_eq!(c.chart.series.len(), MAX_SERIES);
        assert_eq!(c.chart.series[MAX_SERIES - 1].name, "kept");
        assert_eq!(c.refs.len(), refs);
        c.chart.series.truncate(1);
        let p = Pending {
            chart: c.chart,
            refs: vec![Ref {
                series: 0,
                field: Field::Categories,
                sheet: "Data".into(),
                rows: (0, 65535),
                cols: (0, 255),
            }],
        };
        // A block of 16 million cells is asked for its first 100,000 at most, and never
        // for more than the workbook's budget.
        let mut asked = 0;
        let mut budget = MAX_POINTS;
        let p2 = Pending {
            chart: chart::Chart::default(),
            refs: vec![],
        };
        let text = p.text(&mut budget, |_, _, _| {
            asked += 1;
            None
        });
        assert_eq!(asked, 100_000);
        assert_eq!(budget, MAX_POINTS - 100_000);
        let mut budget = 3;
        let mut asked = 0;
        let _ = Pending {
            refs: vec![Ref {
                series: 0,
                field: Field::Values,
                sheet: "Data".into(),
                rows: (0, 9),
                cols: (0, 0),
            }],
            chart: chart::Chart {
                series: vec![chart::Series::default()],
                ..Default::default()
            },
        }
        .text(&mut budget, |_, _, _| {
            asked += 1;
            None
        });
        assert_eq!((asked, budget), (3, 0));
        assert_eq!(p2.text(&mut 0, |_, _, _| None), "[Chart]\n");
        assert!(
            text.starts_with("[Chart]\nCategory\tSeries 1\n1\t1\n"),
            "{text}"
        );
    }
}
