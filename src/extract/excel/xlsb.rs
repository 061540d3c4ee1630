//! Binary workbooks (.xlsb, MS-XLSB), read here rather than by calamine, which panics on
//! writers' variations (Tika's testEXCEL.xlsb puts four bytes more before a sheet's
//! relationship id than the format says) and leaves out formula errors and rich-text
//! cells. The sheets and their states, the shared strings and each cell's value (numbers
//! in their cells' number formats, dates by their styles, errors as Excel shows them); cell
//! comments (`xl/comments*.bin`), print headers and footers, hidden rows and columns (for
//! the hidden-text findings, as an xlsx's), and the output-bomb check an xlsx gets. Its
//! charts and drawings are XML parts, read as an xlsx's are.
//!
//! Every part is a run of records: a type and a size, each a little-endian base-128
//! number (at most 2 and 4 bytes), then the payload. A record cut short ends the part.

use std::collections::HashMap;
use std::sync::Arc;

use calamine::{CellErrorType, Data, ExcelDateTime, ExcelDateTimeType, SheetType, SheetVisible};

use super::biff::CellFormats;
use super::comments::Note;
use super::numfmt::{self, NumFmt};
use crate::error::{ApiError, ErrorCode};
use crate::extract::package::{self, Package};
use crate::findings::FindingKind;

/// The records of a part: (type, payload), until the bytes end or a record is cut short.
pub(super) struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Records<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    fn number(&mut self, max_bytes: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..max_bytes {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            v |= u32::from(b & 0x7F) << (7 * k);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        Some(v)
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = (u32, &'a [u8]);

    /// The next whole record; at one cut short, `None`, and `consumed` stays before it.
    fn next(&mut self) -> Option<Self::Item> {
        let start = self.at;
        let record = (|| {
            let kind = self.number(2)?;
            let len = self.number(4)? as usize;
            let payload = self.bytes.get(self.at..self.at.checked_add(len)?)?;
            self.at += len;
            Some((kind, payload))
        })();
        if record.is_none() {
            self.at = start;
        }
        record
    }
}

impl Records<'_> {
    /// The bytes of the whole records read so far.
    fn consumed(&self) -> usize {
        self.at
    }
}

/// The records of a part that comes in pieces (as it inflates): a record cut by the end of
/// a piece is carried to the next.
#[derive(Default)]
struct Stream {
    carry: Vec<u8>,
}

impl Stream {
    fn feed(&mut self, piece: &[u8], mut each: impl FnMut(u32, &[u8])) {
        let mut bytes = std::mem::take(&mut self.carry);
        let whole: &[u8] = if bytes.is_empty() {
            piece
        } else {
            bytes.extend_from_slice(piece);
            &bytes
        };
        let mut records = Records::new(whole);
        for (kind, p) in records.by_ref() {
            each(kind, p);
        }
        self.carry = whole[records.consumed()..].to_vec();
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// An `XLWideString` (a count of UTF-16 units, then the units) at `at`: the text and where
/// it ends. The nullable kind's null (count 0xFFFFFFFF) is an empty string.
fn wide(b: &[u8], at: usize) -> Option<(String, usize)> {
    let n = u32_at(b, at)?;
    if n == u32::MAX {
        return Some((String::new(), at + 4));
    }
    let end = (at + 4).checked_add(n as usize * 2)?;
    let units: Vec<u16> = b
        .get(at + 4..end)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    Some((String::from_utf16_lossy(&units), end))
}

// Record types (MS-XLSB 2.3).
const ROW_HDR: u32 = 0x0000;
const CELL_RK: u32 = 0x0002;
const CELL_ERROR: u32 = 0x0003;
const CELL_BOOL: u32 = 0x0004;
const CELL_REAL: u32 = 0x0005;
const CELL_ST: u32 = 0x0006;
const CELL_ISST: u32 = 0x0007;
const FMLA_STRING: u32 = 0x0008;
const FMLA_NUM: u32 = 0x0009;
const FMLA_BOOL: u32 = 0x000A;
const FMLA_ERROR: u32 = 0x000B;
const SST_ITEM: u32 = 0x0013;
const CELL_RSTRING: u32 = 0x003E;
const WB_PROP: u32 = 0x0099;
const FONT: u32 = 0x002B;
const FMT: u32 = 0x002C;
const FILL: u32 = 0x002D;
const XF: u32 = 0x002F;
const BUNDLE_SH: u32 = 0x009C;
const COL_INFO: u32 = 0x003C;
const HEADER_FOOTER: u32 = 0x01DF;
const HLINK: u32 = 0x01EE;
const BEGIN_CELL_XFS: u32 = 0x0269;
const END_CELL_XFS: u32 = 0x026A;
const COMMENT_AUTHOR: u32 = 0x0278;
const BEGIN_COMMENT: u32 = 0x027B;
const COMMENT_TEXT: u32 = 0x027D;

/// The records of a cell with a value (not `BrtCellBlank`).
const VALUE_CELLS: [u32; 11] = [
    CELL_RK,
    CELL_ERROR,
    CELL_BOOL,
    CELL_REAL,
    CELL_ST,
    CELL_ISST,
    FMLA_STRING,
    FMLA_NUM,
    FMLA_BOOL,
    FMLA_ERROR,
    CELL_RSTRING,
];

/// A sheet as the workbook lists it (`BrtBundleSh`): its part, and its name, state and
/// kind.
struct Bundle {
    part: String,
    meta: calamine::Sheet,
}

/// The workbook part's sheets, in workbook order, and whether its dates count from 1904
/// (`BrtWbProp`). A sheet whose relationship id names no part is left out. Some writers put
/// four more bytes before the id than the format says (Tika's testEXCEL.xlsb): read there
/// too.
fn bundles(pkg: &mut Package) -> Result<Option<(Vec<Bundle>, bool)>, ApiError> {
    let Some(wb) = pkg.read("xl/workbook.bin")? else {
        return Ok(None);
    };
    let (rels, dir) = package::rels_of("xl/workbook.bin");
    let rels = package::relationships(pkg, &rels, dir)?;
    let mut out = Vec::new();
    let mut is_1904 = false;
    for (kind, p) in Records::new(&wb) {
        if kind == WB_PROP {
            is_1904 = p.first().is_some_and(|f| f & 0x01 != 0);
            continue;
        }
        if kind != BUNDLE_SH {
            continue;
        }
        for at in [8, 12] {
            let Some((id, end)) = wide(p, at) else {
                continue;
            };
            let (Some((part, rel)), Some((name, _))) = (rels.get(&id), wide(p, end)) else {
                continue;
            };
            let folder = part.split('/').nth(1).unwrap_or("");
            let typ = match (rel.as_str(), folder) {
                ("worksheet", _) | (_, "worksheets") => SheetType::WorkSheet,
                ("chartsheet", _) | (_, "chartsheets") => SheetType::ChartSheet,
                ("dialogsheet", _) | (_, "dialogsheets") => SheetType::DialogSheet,
                _ => SheetType::MacroSheet,
            };
            let visible = match u32_at(p, 0) {
                Some(0) => SheetVisible::Visible,
                Some(2) => SheetVisible::VeryHidden,
                _ => SheetVisible::Hidden,
            };
            out.push(Bundle {
                meta: calamine::Sheet { name, typ, visible },
                part: part.clone(),
            });
            break;
        }
    }
    Ok(Some((out, is_1904)))
}

/// What a cell style does to a number: shown in a number format of its own
/// (`numfmt::is_numeric`), or read as a date or a duration (as calamine decides for an
/// xlsx: `numfmt::date_kind`), by style index.
#[derive(Default)]
struct Styles {
    /// Empty when no style has a number format of its own.
    numbers: Vec<Option<Arc<NumFmt>>>,
    /// Empty when no style is a date's.
    dates: Vec<Option<ExcelDateTimeType>>,
}

fn styles(bin: &[u8]) -> Styles {
    let mut custom: HashMap<u16, String> = HashMap::new();
    let mut xfs: Vec<u16> = Vec::new();
    let mut in_cell_xfs = false;
    for (kind, p) in Records::new(bin) {
        match kind {
            FMT => {
                if let (Some(id), Some((code, _))) = (u16_at(p, 0), wide(p, 2)) {
                    custom.insert(id, code);
                }
            }
            BEGIN_CELL_XFS => in_cell_xfs = true,
            END_CELL_XFS => in_cell_xfs = false,
            XF if in_cell_xfs => xfs.push(u16_at(p, 2).unwrap_or(0)),
            _ => {}
        }
    }
    let mut compiled: HashMap<u16, Arc<NumFmt>> = HashMap::new();
    let numbers: Vec<Option<Arc<NumFmt>>> = xfs
        .iter()
        .map(|&id| {
            let code = custom
                .get(&id)
                .map(String::as_str)
                .or(numfmt::builtin(id))?;
            numfmt::is_numeric(code).then(|| {
                compiled
                    .entry(id)
                    .or_insert_with(|| Arc::new(NumFmt::new(code)))
                    .clone()
            })
        })
        .collect();
    let dates: Vec<Option<ExcelDateTimeType>> = xfs
        .iter()
        .map(|&id| match custom.get(&id) {
            Some(code) => numfmt::date_kind(code),
            None => numfmt::builtin_date_kind(id),
        })
        .collect();
    Styles {
        numbers: if numbers.iter().all(Option::is_none) {
            Vec::new()
        } else {
            numbers
        },
        dates: if dates.iter().all(Option::is_none) {
            Vec::new()
        } else {
            dates
        },
    }
}

/// Cell styles whose text no one sees (issue #21), by style index, as an xlsx's are found
/// (`styles::unseen_formats`): a white font (RGB, the palette's whites, or a theme colour,
/// with its tint) on no fill (`white_text`), or a font under 1.5 pt (`tiny_text`).
pub(super) fn unseen_formats(pkg: &mut Package) -> Result<HashMap<usize, FindingKind>, ApiError> {
    let Some(bin) = pkg.read("xl/styles.bin")? else {
        return Ok(HashMap::new());
    };
    let theme = match pkg.read("xl/theme/theme1.xml")? {
        Some(t) => super::styles::theme_colors(&t, pkg.limits().max_xml_depth)?,
        None => Vec::new(),
    };
    let mut fonts: Vec<(bool, bool)> = Vec::new();
    let mut fills: Vec<bool> = Vec::new();
    let mut xfs: Vec<(usize, usize)> = Vec::new();
    let mut in_cell_xfs = false;
    for (kind, p) in Records::new(&bin) {
        match kind {
            // dyHeight in twips (a point is 20), then the font's colour (a BrtColor) at 12.
            FONT => fonts.push((
                p.get(12..20).is_some_and(|c| color_is_white(c, &theme)),
                u16_at(p, 0).is_some_and(|h| h < 30),
            )),
            // Its pattern (`fls`): 0 paints nothing.
            FILL => fills.push(u32_at(p, 0).is_some_and(|f| f != 0)),
            BEGIN_CELL_XFS => in_cell_xfs = true,
            END_CELL_XFS => in_cell_xfs = false,
            XF if in_cell_xfs => xfs.push((
                usize::from(u16_at(p, 4).unwrap_or(0)),
                usize::from(u16_at(p, 6).unwrap_or(0)),
            )),
            _ => {}
        }
    }
    Ok(super::styles::unseen_styles(&xfs, &fonts, &fills))
}

/// Whether a `BrtColor` draws white: its kind (bits 1-7 of the first byte: 1 the palette, 2
/// RGB, 3 the theme), its index, its tint (a signed 16-bit fraction of 32767), then red,
/// green and blue.
fn color_is_white(c: &[u8], theme: &[[u8; 3]]) -> bool {
    let index = usize::from(c[1]);
    let base = match (c[0] >> 1) & 0x7F {
        1 => matches!(index, 1 | 9).then_some([255, 255, 255]),
        2 => Some([c[4], c[5], c[6]]),
        // No theme part: Office's default theme, whose `lt1` (0) is white.
        3 => theme
            .get(index)
            .copied()
            .or((index == 0).then_some([255, 255, 255])),
        _ => None,
    };
    let tint = f64::from(i16::from_le_bytes([c[2], c[3]])) / 32767.0;
    base.is_some_and(|rgb| super::styles::is_white(rgb, tint))
}

/// The cells of a worksheet part in one of `unseen` styles, with a value: (row, column,
/// kind), 0-based, at most 10,000.
pub(super) fn unseen_cells(
    pkg: &mut Package,
    part: &str,
    unseen: &HashMap<usize, FindingKind>,
) -> Result<Vec<(u32, u32, FindingKind)>, ApiError> {
    let mut out = Vec::new();
    let mut row = 0u32;
    let mut stream = Stream::default();
    pkg.visit(part, |piece| {
        stream.feed(piece, |kind, p| {
            if kind == ROW_HDR {
                row = u32_at(p, 0).unwrap_or(row);
            } else if VALUE_CELLS.contains(&kind) && out.len() < 10_000 {
                if let (Some(col), Some(style)) = (u32_at(p, 0), u32_at(p, 4)) {
                    if let Some(found) = unseen.get(&((style & 0x00FF_FFFF) as usize)) {
                        out.push((row, col, *found));
                    }
                }
            }
        })
    })?;
    Ok(out)
}

/// One worksheet part scanned as it inflates (`Package::check_where_visiting`, so the
/// sheet is not inflated again for this): its number cells in a format of their own
/// ((row, column) → format), its hidden rows (`BrtRowHdr`'s fDyZero) and columns
/// (`BrtColInfo`'s fHidden), 1-based as an xlsx's, and how many cells refer to a shared
/// string. Only a record cut by the end of a piece is carried to the next.
struct SheetScan {
    styles: Arc<Vec<Option<Arc<NumFmt>>>>,
    stream: Stream,
    row: u32,
    cells: CellFormats,
    lines: super::hidden::HiddenLines,
    shared_refs: u64,
}

impl SheetScan {
    fn new(styles: Arc<Vec<Option<Arc<NumFmt>>>>) -> Self {
        Self {
            styles,
            stream: Stream::default(),
            row: 0,
            cells: CellFormats::new(),
            lines: Default::default(),
            shared_refs: 0,
        }
    }

    fn feed(&mut self, piece: &[u8]) {
        let mut stream = std::mem::take(&mut self.stream);
        stream.feed(piece, |kind, p| self.record(kind, p));
        self.stream = stream;
    }

    fn record(&mut self, kind: u32, p: &[u8]) {
        match kind {
            ROW_HDR => {
                self.row = u32_at(p, 0).unwrap_or(self.row);
                if p.get(11).is_some_and(|f| f & 0x10 != 0) && self.lines.rows.len() < 100_000 {
                    self.lines.rows.push(self.row.saturating_add(1));
                }
            }
            COL_INFO => {
                if let (Some(first), Some(last), Some(flags)) =
                    (u32_at(p, 0), u32_at(p, 4), p.get(16))
                {
                    if flags & 0x01 != 0 && first <= last && self.lines.cols.len() < 16_384 {
                        self.lines
                            .cols
                            .push((first.saturating_add(1), last.saturating_add(1)));
                    }
                }
            }
            CELL_ISST => self.shared_refs += 1,
            CELL_RK | CELL_REAL | FMLA_NUM => {
                let (Some(col), Some(style)) = (u32_at(p, 0), u32_at(p, 4)) else {
                    return;
                };
                if let Some(Some(f)) = self.styles.get((style & 0x00FF_FFFF) as usize) {
                    self.cells.insert((self.row, col), f.clone());
                }
            }
            _ => {}
        }
    }
}

/// What the check of a binary workbook finds on its way: by worksheet part, its number
/// cells in a format of their own and its hidden rows and columns.
pub(super) struct Checked {
    pub(super) numbers: super::workbook::Numbers,
    pub(super) hidden: super::hidden::ByPart,
    /// By style index: the styles that make a number a date or a duration.
    dates: Vec<Option<ExcelDateTimeType>>,
}

/// Prove the package within its caps (every part inflated once), scanning the worksheets
/// as they inflate, and refuse an output bomb (`refuse_output_bomb`).
pub(super) fn check(pkg: &mut Package, max_expanded: u64) -> Result<Checked, ApiError> {
    let is_sheet = |n: &str| n.starts_with("xl/worksheets/") && n.ends_with(".bin");
    pkg.check_where(|n| !is_sheet(n))?;
    // Best effort, as for an xlsx: numbers stay General where the styles cannot be read.
    let Styles { numbers, dates } = match pkg.read("xl/styles.bin") {
        Ok(Some(bin)) => styles(&bin),
        _ => Styles::default(),
    };
    let styles = Arc::new(numbers);
    let mut scans: HashMap<String, SheetScan> = HashMap::new();
    pkg.check_where_visiting(is_sheet, |name, piece| {
        scans
            .entry(name.to_string())
            .or_insert_with(|| SheetScan::new(styles.clone()))
            .feed(piece)
    })?;
    pkg.reset_count();
    let refs = scans.values().map(|s| s.shared_refs).sum();
    refuse_output_bomb(pkg, refs, max_expanded)?;
    let (mut numbers, mut hidden) = (
        super::workbook::Numbers::new(),
        super::hidden::ByPart::new(),
    );
    for (part, scan) in scans {
        if !scan.cells.is_empty() {
            numbers.insert(part.clone(), Arc::new(scan.cells));
        }
        if !scan.lines.rows.is_empty() || !scan.lines.cols.is_empty() {
            hidden.insert(part, scan.lines);
        }
    }
    Ok(Checked {
        numbers,
        hidden,
        dates,
    })
}

/// A binary workbook opened once its package is proven within the caps (`check`): its
/// sheets as the workbook lists them, its shared strings, and its cells read a sheet at a
/// time as the part inflates.
pub(super) struct Book {
    pkg: Package,
    /// The sheets as calamine lists a workbook's, and each one's part.
    meta: Vec<calamine::Sheet>,
    parts: Vec<String>,
    strings: Vec<String>,
    dates: Vec<Option<ExcelDateTimeType>>,
    is_1904: bool,
}

impl Book {
    pub(super) fn open(mut pkg: Package, checked: &mut Checked) -> Result<Self, ApiError> {
        pkg.reset_count();
        let Some((sheets, is_1904)) = bundles(&mut pkg)? else {
            return Err(ApiError::new(
                ErrorCode::Corrupt,
                "the workbook cannot be read: it has no workbook part (xl/workbook.bin)",
            )
            .with_hint(
                "Open it in Excel and save it again (as .xlsb or .xlsx), then upload that.",
            ));
        };
        let mut strings = Vec::new();
        if let Some(sst) = pkg.read("xl/sharedStrings.bin")? {
            for (kind, p) in Records::new(&sst) {
                // A RichStr: a flags byte, then the text (its runs and phonetics after).
                if kind == SST_ITEM {
                    strings.push(wide(p, 1).map(|(s, _)| s).unwrap_or_default());
                }
            }
        }
        let (meta, parts) = sheets.into_iter().map(|b| (b.meta, b.part)).unzip();
        Ok(Self {
            meta,
            parts,
            pkg,
            strings,
            dates: std::mem::take(&mut checked.dates),
            is_1904,
        })
    }

    pub(super) fn metadata(&self) -> &[calamine::Sheet] {
        &self.meta
    }

    /// Each sheet's name and its part (`xl/worksheets/sheet1.bin`), in workbook order.
    pub(super) fn sheet_parts(&self) -> Vec<(String, String)> {
        self.meta
            .iter()
            .map(|s| s.name.clone())
            .zip(self.parts.iter().cloned())
            .collect()
    }

    /// The cells of the sheet named `name` in the order its part holds them; none for a
    /// sheet with no part. Formula cells give their last computed value.
    pub(super) fn cells(&mut self, name: &str) -> Result<Vec<((u32, u32), Data)>, ApiError> {
        let Some(part) = self
            .meta
            .iter()
            .position(|s| s.name == name)
            .map(|i| self.parts[i].clone())
        else {
            return Ok(Vec::new());
        };
        let values = Values {
            strings: &self.strings,
            dates: &self.dates,
            is_1904: self.is_1904,
        };
        let mut out = Vec::new();
        let mut row = 0u32;
        let mut stream = Stream::default();
        self.pkg.visit(&part, |piece| {
            stream.feed(piece, |kind, p| {
                if kind == ROW_HDR {
                    row = u32_at(p, 0).unwrap_or(row);
                } else if let Some((col, v)) = values.cell(kind, p) {
                    // Past Excel's last row or column: not a cell any sheet shows.
                    if row < 1 << 20 && col < 1 << 14 {
                        out.push(((row, col), v));
                    }
                }
            })
        })?;
        Ok(out)
    }
}

/// What a cell record's value needs besides the record.
struct Values<'a> {
    strings: &'a [String],
    dates: &'a [Option<ExcelDateTimeType>],
    is_1904: bool,
}

impl Values<'_> {
    /// A cell record's column and value (`None`: not a cell with a value, or cut short).
    /// Every cell record starts with its column and its style (24 bits, then flags).
    fn cell(&self, kind: u32, p: &[u8]) -> Option<(u32, Data)> {
        let col = u32_at(p, 0)?;
        let style = u32_at(p, 4)? & 0x00FF_FFFF;
        let date = self.dates.get(style as usize).copied().flatten();
        let number = |v: f64| match date {
            Some(kind) => Data::DateTime(ExcelDateTime::new(v, kind, self.is_1904)),
            None => Data::Float(v),
        };
        let value = match kind {
            CELL_RK => match rk_value(u32_at(p, 8)?) {
                (v, true) if date.is_none() => Data::Int(v as i64),
                (v, _) => number(v),
            },
            CELL_REAL | FMLA_NUM => number(f64::from_le_bytes(p.get(8..16)?.try_into().ok()?)),
            CELL_BOOL | FMLA_BOOL => Data::Bool(*p.get(8)? != 0),
            CELL_ERROR | FMLA_ERROR => Data::Error(cell_error(*p.get(8)?)?),
            CELL_ST | FMLA_STRING => Data::String(wide(p, 8)?.0),
            // A RichStr: a flags byte, then the text.
            CELL_RSTRING => Data::String(wide(p, 9)?.0),
            CELL_ISST => Data::String(self.strings.get(u32_at(p, 8)? as usize)?.clone()),
            _ => return None,
        };
        Some((col, value))
    }
}

/// An `RkNumber`: the number, and whether it is a whole number stored as one (an integer
/// not divided by 100).
fn rk_value(rk: u32) -> (f64, bool) {
    let (d100, int) = (rk & 0x01 != 0, rk & 0x02 != 0);
    let v = if int {
        f64::from((rk as i32) >> 2)
    } else {
        f64::from_bits(u64::from(rk & 0xFFFF_FFFC) << 32)
    };
    if d100 {
        (v / 100.0, false)
    } else {
        (v, int)
    }
}

/// An error cell's value as Excel shows it (`BErr`); an unknown code reads as no value.
fn cell_error(code: u8) -> Option<CellErrorType> {
    Some(match code {
        0x00 => CellErrorType::Null,
        0x07 => CellErrorType::Div0,
        0x0F => CellErrorType::Value,
        0x17 => CellErrorType::Ref,
        0x1D => CellErrorType::Name,
        0x24 => CellErrorType::Num,
        0x2A => CellErrorType::NA,
        0x2B => CellErrorType::GettingData,
        _ => return None,
    })
}

/// The notes of a comments part (`xl/comments1.bin`), in order: each at its range's first
/// cell, with its author (`Note::new`, as for an xlsx).
pub(super) fn notes(bin: &[u8]) -> Vec<Note> {
    let mut authors: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut at: Option<(u32, u32, String)> = None;
    for (kind, p) in Records::new(bin) {
        match kind {
            COMMENT_AUTHOR => authors.push(wide(p, 0).map(|(s, _)| s).unwrap_or_default()),
            BEGIN_COMMENT => {
                let author = u32_at(p, 0)
                    .and_then(|i| authors.get(i as usize).cloned())
                    .unwrap_or_default();
                at = match (u32_at(p, 4), u32_at(p, 12)) {
                    (Some(row), Some(col)) => Some((row, col, author)),
                    _ => None,
                };
            }
            // A RichStr: a flags byte, then the text.
            COMMENT_TEXT => {
                if let (Some((row, col, author)), Some((text, _))) = (at.take(), wide(p, 1)) {
                    out.push(Note::new(row, col, &author, &text));
                }
            }
            _ => {}
        }
    }
    out
}

/// A worksheet's print headers and footers as `[Headers]`/`[Footers]` blocks (empty when
/// it has none): the six codes of its header-footer record (odd, even and first pages).
pub(super) fn headers_footers(
    pkg: &mut Package,
    part: &str,
    sheet: &str,
) -> Result<String, ApiError> {
    let Some(bin) = pkg.read(part)? else {
        return Ok(String::new());
    };
    let Some((_, p)) = Records::new(&bin).find(|(k, _)| *k == HEADER_FOOTER) else {
        return Ok(String::new());
    };
    // Flags (2 bytes), then header, footer, even header, even footer, first header, first
    // footer.
    let mut codes = Vec::new();
    let mut at = 2;
    for k in 0..6 {
        let Some((code, end)) = wide(p, at) else {
            break;
        };
        codes.push((k % 2 == 0, code));
        at = end;
    }
    Ok(super::print::blocks(codes, sheet))
}

/// A worksheet part's hyperlinks (`BrtHLink`), read as the part inflates: the first cell of
/// each one's range, and its relationship id (none: a link inside the workbook, left out).
/// At most 4,000.
pub(super) fn hyperlinks(
    pkg: &mut Package,
    part: &str,
) -> Result<Vec<((u32, u32), String)>, ApiError> {
    let mut out = Vec::new();
    let mut stream = Stream::default();
    pkg.visit(part, |piece| {
        stream.feed(piece, |kind, p| {
            if kind != HLINK || out.len() >= 4000 {
                return;
            }
            let link = (|| {
                let (row, col) = (u32_at(p, 0)?, u32_at(p, 8)?);
                let (id, _) = wide(p, 16)?;
                (!id.is_empty()).then_some(((row, col), id))
            })();
            out.extend(link);
        })
    })?;
    Ok(out)
}

/// The check an xlsx gets against an output bomb (`workbook::refuse_output_bomb`): calamine
/// copies a shared string into every cell that refers to it, so `refs` cells referring to
/// the longest one are counted against `max_expanded` before the workbook is read.
fn refuse_output_bomb(pkg: &mut Package, refs: u64, max_expanded: u64) -> Result<(), ApiError> {
    let Some(sst) = pkg.read("xl/sharedStrings.bin")? else {
        return Ok(());
    };
    let longest = Records::new(&sst)
        .filter(|(k, _)| *k == SST_ITEM)
        .map(|(_, p)| p.len() as u64)
        .max()
        .unwrap_or(0);
    if longest >= 4096 && refs.saturating_mul(longest) > max_expanded {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("{refs} cells reference a shared string of {longest} bytes: the text would exceed {max_expanded} bytes (an output bomb)"),
        )
        .with_hint("Real workbooks do not repeat megabyte strings in thousands of cells; this one is not read."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as Excel writes it: type and size as base-128 numbers.
    fn record(kind: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for (mut v, max) in [(kind, 2), (payload.len() as u32, 4)] {
            for _ in 0..max {
                let b = (v & 0x7F) as u8;
                v >>= 7;
                if v == 0 {
                    out.push(b);
                    break;
                }
                out.push(b | 0x80);
            }
        }
        out.extend_from_slice(payload);
        out
    }

    fn wide_bytes(s: &str) -> Vec<u8> {
        let units: Vec<u16> = s.encode_utf16().collect();
        let mut out = (units.len() as u32).to_le_bytes().to_vec();
        for u in units {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out
    }

    #[test]
    fn cell_records_give_their_values_and_a_record_cut_short_gives_none() {
        let dates = [None, Some(ExcelDateTimeType::DateTime)];
        let strings = ["shared".to_string()];
        let values = Values {
            strings: &strings,
            dates: &dates,
            is_1904: false,
        };
        let cell = |kind: u32, col: u32, style: u32, value: &[u8]| {
            let mut p = col.to_le_bytes().to_vec();
            p.extend(style.to_le_bytes());
            p.extend_from_slice(value);
            values.cell(kind, &p)
        };
        // RkNumbers: an integer, an integer divided by 100, the high half of a double.
        assert_eq!(
            cell(CELL_RK, 2, 0, &((13 << 2) | 2u32).to_le_bytes()),
            Some((2, Data::Int(13)))
        );
        assert_eq!(
            cell(CELL_RK, 0, 0, &((1234 << 2) | 3u32).to_le_bytes()),
            Some((0, Data::Float(12.34)))
        );
        let half = (0.5f64.to_bits() >> 32) as u32;
        assert_eq!(
            cell(CELL_RK, 0, 0, &half.to_le_bytes()),
            Some((0, Data::Float(0.5)))
        );
        // A number in a date's style is a date (2017-03-09 is 42803).
        match cell(CELL_REAL, 1, 1, &42803f64.to_le_bytes()) {
            Some((1, Data::DateTime(d))) => assert_eq!(d.as_f64(), 42803.0),
            other => panic!("{other:?}"),
        }
        assert_eq!(cell(FMLA_BOOL, 0, 0, &[1]), Some((0, Data::Bool(true))));
        assert_eq!(
            cell(FMLA_ERROR, 0, 0, &[0x1D]),
            Some((0, Data::Error(CellErrorType::Name)))
        );
        assert_eq!(cell(CELL_ERROR, 0, 0, &[0x99]), None);
        assert_eq!(
            cell(CELL_ST, 0, 0, &wide_bytes("inline")),
            Some((0, Data::String("inline".into())))
        );
        let mut rich = vec![0u8];
        rich.extend(wide_bytes("rich"));
        assert_eq!(
            cell(CELL_RSTRING, 0, 0, &rich),
            Some((0, Data::String("rich".into())))
        );
        assert_eq!(
            cell(CELL_ISST, 0, 0, &0u32.to_le_bytes()),
            Some((0, Data::String("shared".into())))
        );
        // A shared string that does not exist, a record cut short, a string longer than
        // its record: no value (calamine panicked on the first two).
        assert_eq!(cell(CELL_ISST, 0, 0, &7u32.to_le_bytes()), None);
        assert_eq!(cell(CELL_REAL, 0, 0, &[0, 0, 0]), None);
        assert_eq!(cell(CELL_ST, 0, 0, &[200, 0, 0, 0, b'a', 0]), None);
        assert_eq!(values.cell(CELL_REAL, &[1, 0]), None);
    }

    #[test]
    fn records_read_their_base_128_headers_and_stop_where_one_is_cut_short() {
        let mut bytes = record(0x0269, &[1, 2, 3]);
        bytes.extend(record(0x13, &[0; 200]));
        let all: Vec<_> = Records::new(&bytes).map(|(k, p)| (k, p.len())).collect();
        assert_eq!(all, [(0x0269, 3), (0x13, 200)]);
        bytes.extend(record(0x2C, &[9; 10]));
        bytes.truncate(bytes.len() - 1);
        assert_eq!(Records::new(&bytes).count(), 2);
    }

    #[test]
    fn number_cells_take_their_styles_format_and_hidden_lines_are_found() {
        // Styles: xf 0 General, xf 1 percent (built-in 9), xf 2 a custom currency.
        let mut styles_bin = Vec::new();
        let mut fmt = 164u16.to_le_bytes().to_vec();
        fmt.extend(wide_bytes("\"$\"#,##0.00"));
        styles_bin.extend(record(FMT, &fmt));
        // A cell-style XF first (not a cell's), then the cell XFs.
        styles_bin.extend(record(XF, &[0, 0, 9, 0]));
        styles_bin.extend(record(BEGIN_CELL_XFS, &[3, 0, 0, 0]));
        for id in [0u16, 9, 164] {
            let mut xf = 0u16.to_le_bytes().to_vec();
            xf.extend(id.to_le_bytes());
            styles_bin.extend(record(XF, &xf));
        }
        styles_bin.extend(record(END_CELL_XFS, &[]));
        let st = styles(&styles_bin).numbers;
        assert_eq!(st.len(), 3);
        assert!(st[0].is_none());

        let cell = |col: u32, style: u32, value: &[u8]| {
            let mut p = col.to_le_bytes().to_vec();
            p.extend(style.to_le_bytes());
            p.extend_from_slice(value);
            p
        };
        let mut sheet = record(ROW_HDR, &4u32.to_le_bytes());
        sheet.extend(record(CELL_REAL, &cell(1, 1, &0.2f64.to_le_bytes())));
        sheet.extend(record(CELL_REAL, &cell(2, 0, &1.5f64.to_le_bytes())));
        sheet.extend(record(ROW_HDR, &7u32.to_le_bytes()));
        sheet.extend(record(FMLA_NUM, &cell(0, 2, &1599.99f64.to_le_bytes())));
        // Row 7 hidden (fDyZero), columns B–C hidden (fHidden).
        let mut hdr = 7u32.to_le_bytes().to_vec();
        hdr.extend([0u8; 6]);
        hdr.extend([0, 0x10]);
        sheet.extend(record(ROW_HDR, &hdr));
        let mut cols = 1u32.to_le_bytes().to_vec();
        cols.extend(2u32.to_le_bytes());
        cols.extend([0u8; 8]);
        cols.extend([1, 0]);
        sheet.extend(record(COL_INFO, &cols));
        // Fed in pieces of every size: a record cut between pieces is carried.
        for size in [1, 2, 3, 7, 1000] {
            let mut scan = SheetScan::new(Arc::new(st.clone()));
            for piece in sheet.chunks(size) {
                scan.feed(piece);
            }
            assert!(scan.stream.carry.is_empty());
            assert_eq!(scan.lines.rows, [8]);
            assert_eq!(scan.lines.cols, [(2, 3)]);
            assert_eq!(scan.cells.len(), 2, "pieces of {size}");
        }
        let mut scan = SheetScan::new(Arc::new(st));
        scan.feed(&sheet);
        let cells = scan.cells;
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[&(4, 1)].apply(0.2).as_deref(), Some("20%"));
        assert_eq!(cells[&(7, 0)].apply(1599.99).as_deref(), Some("$1,599.99"));
    }

    #[test]
    fn comments_are_notes_at_their_first_cell() {
        let mut bin = record(COMMENT_AUTHOR, &wide_bytes("Ann"));
        let mut begin = 0u32.to_le_bytes().to_vec();
        for v in [2u32, 2, 3, 3] {
            begin.extend(v.to_le_bytes());
        }
        begin.extend([0u8; 16]);
        bin.extend(record(BEGIN_COMMENT, &begin));
        let mut text = vec![0u8];
        text.extend(wide_bytes("Ann:\nCheck   this"));
        bin.extend(record(COMMENT_TEXT, &text));
        assert_eq!(
            notes(&bin),
            [Note {
                row: 2,
                col: 3,
                author: "Ann".into(),
                text: "Check this".into()
            }]
        );
    }
}
