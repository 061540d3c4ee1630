//! What calamine does not read of a binary workbook (.xlsb, MS-XLSB): the number format
//! of each number cell (`$3.03`, `20%`, `1/4`: from `xl/styles.bin` and the cells' styles),
//! hidden rows and columns (for the hidden-text findings, as an xlsx's), cell comments
//! (`xl/comments*.bin`), and print headers and footers. Its charts and
//! drawings are XML parts, read as an xlsx's are. Also the output-bomb check an xlsx gets:
//! cells that repeat a long shared string.
//!
//! Every part is a run of records: a type and a size, each a little-endian base-128
//! number (at most 2 and 4 bytes), then the payload. A record cut short ends the part.

use std::collections::HashMap;
use std::sync::Arc;

use super::biff::CellFormats;
use super::comments::Note;
use super::numfmt::{self, NumFmt};
use crate::error::{ApiError, ErrorCode};
use crate::extract::package::{self, Package};

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
const CELL_REAL: u32 = 0x0005;
const CELL_ISST: u32 = 0x0007;
const FMLA_NUM: u32 = 0x0009;
const SST_ITEM: u32 = 0x0013;
const FMT: u32 = 0x002C;
const XF: u32 = 0x002F;
const BUNDLE_SH: u32 = 0x009C;
const COL_INFO: u32 = 0x003C;
const HEADER_FOOTER: u32 = 0x01DF;
const BEGIN_CELL_XFS: u32 = 0x0269;
const END_CELL_XFS: u32 = 0x026A;
const COMMENT_AUTHOR: u32 = 0x0278;
const BEGIN_COMMENT: u32 = 0x027B;
const COMMENT_TEXT: u32 = 0x027D;

/// Each worksheet's name and its part (`xl/worksheets/sheet1.bin`), in workbook order.
/// A sheet whose relationship id names no part is left out. Some writers put four more
/// bytes before the id than the format says (Tika's testEXCEL.xlsb): read there too.
pub(super) fn sheet_parts(pkg: &mut Package) -> Result<Vec<(String, String)>, ApiError> {
    let Some(wb) = pkg.read("xl/workbook.bin")? else {
        return Ok(Vec::new());
    };
    let (rels, dir) = package::rels_of("xl/workbook.bin");
    let rels = package::relationships(pkg, &rels, dir)?;
    let mut out = Vec::new();
    for (kind, p) in Records::new(&wb) {
        if kind != BUNDLE_SH {
            continue;
        }
        for at in [8, 12] {
            let Some((id, end)) = wide(p, at) else {
                continue;
            };
            if let (Some((part, _)), Some((name, _))) = (rels.get(&id), wide(p, end)) {
                out.push((name, part.clone()));
                break;
            }
        }
    }
    Ok(out)
}

/// Each cell style's number format where it shows numbers other than General does
/// (`numfmt::is_numeric`), by style index; empty when none does.
fn styles(bin: &[u8]) -> Vec<Option<Arc<NumFmt>>> {
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
    let out: Vec<Option<Arc<NumFmt>>> = xfs
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
    if out.iter().all(Option::is_none) {
        Vec::new()
    } else {
        out
    }
}

/// One worksheet part scanned as it inflates (`Package::check_where_visiting`, so the
/// sheet is not inflated again for this): its number cells in a format of their own
/// ((row, column) → format), its hidden rows (`BrtRowHdr`'s fDyZero) and columns
/// (`BrtColInfo`'s fHidden), 1-based as an xlsx's, and how many cells refer to a shared
/// string. Only a record cut by the end of a piece is carried to the next.
struct SheetScan {
    styles: Arc<Vec<Option<Arc<NumFmt>>>>,
    carry: Vec<u8>,
    row: u32,
    cells: CellFormats,
    lines: super::hidden::HiddenLines,
    shared_refs: u64,
}

impl SheetScan {
    fn new(styles: Arc<Vec<Option<Arc<NumFmt>>>>) -> Self {
        Self {
            styles,
            carry: Vec::new(),
            row: 0,
            cells: CellFormats::new(),
            lines: Default::default(),
            shared_refs: 0,
        }
    }

    fn feed(&mut self, piece: &[u8]) {
        let mut bytes = std::mem::take(&mut self.carry);
        let whole: &[u8] = if bytes.is_empty() {
            piece
        } else {
            bytes.extend_from_slice(piece);
            &bytes
        };
        let mut records = Records::new(whole);
        for (kind, p) in records.by_ref() {
            self.record(kind, p);
        }
        let rest = whole[records.consumed()..].to_vec();
        self.carry = rest;
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
}

/// Prove the package within its caps (every part inflated once), scanning the worksheets
/// as they inflate, and refuse an output bomb (`refuse_output_bomb`).
pub(super) fn check(pkg: &mut Package, max_expanded: u64) -> Result<Checked, ApiError> {
    let is_sheet = |n: &str| n.starts_with("xl/worksheets/") && n.ends_with(".bin");
    pkg.check_where(|n| !is_sheet(n))?;
    // Best effort, as for an xlsx: numbers stay General where the styles cannot be read.
    let styles = Arc::new(match pkg.read("xl/styles.bin") {
        Ok(Some(bin)) => styles(&bin),
        _ => Vec::new(),
    });
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
    Ok(Checked { numbers, hidden })
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
        let st = styles(&styles_bin);
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
            assert!(scan.carry.is_empty());
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
