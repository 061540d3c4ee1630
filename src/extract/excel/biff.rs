//! Number formats of a legacy .xls (BIFF8). calamine reads the cells but keeps of a
//! format only whether it is a date; here one pass over the workbook stream reads the
//! format codes (FORMAT), each cell format's code (XF) and which cells use which (NUMBER,
//! RK, MULRK, FORMULA), for the cells whose format shows numbers other than General does
//! (`1,599.99`, `($1,599.99)`, `2.50%`). Best effort: a stream this cannot follow gives no
//! formats, and calamine's reading (and its errors) stands.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::numfmt;

/// The number format of each formatted number cell of a sheet, by (row, col).
pub(super) type CellFormats = HashMap<(u32, u32), Arc<numfmt::NumFmt>>;

/// By sheet name, its formatted number cells.
pub(super) type Formats = HashMap<String, Arc<CellFormats>>;

/// Formatted cells kept at most, across the workbook (a cell costs about 40 bytes).
pub(super) const MAX_CELLS: usize = 1_000_000;

/// The formatted number cells of an .xls, by sheet.
pub(super) fn cell_formats(path: &Path) -> Formats {
    read(path).unwrap_or_default()
}

fn read(path: &Path) -> Option<Formats> {
    read_cells(path).map(|m| m.into_iter().map(|(k, v)| (k, Arc::new(v))).collect())
}

fn read_cells(path: &Path) -> Option<HashMap<String, CellFormats>> {
    let mut cf = cfb::open(path).ok()?;
    let name = cf
        .read_root_storage()
        .map(|e| e.name().to_string())
        .find(|n| n.eq_ignore_ascii_case("Workbook") || n.eq_ignore_ascii_case("Book"))?;
    let stream = cf.open_stream(format!("/{name}")).ok()?;
    let mut r = std::io::BufReader::with_capacity(64 * 1024, stream);
    let mut out: HashMap<String, CellFormats> = HashMap::new();
    let mut custom: HashMap<u16, String> = HashMap::new();
    let mut xf_fmt: Vec<u16> = Vec::new();
    // Sheet substreams' offsets (their BOF record) → name.
    let mut sheets: HashMap<u32, String> = HashMap::new();
    // Each XF's code, when it shows numbers (made once the globals are read).
    let mut by_xf: Vec<Option<Arc<numfmt::NumFmt>>> = Vec::new();
    let (mut offset, mut depth, mut kept) = (0u64, 0u32, 0usize);
    let mut current: Option<String> = None;
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
        match kind {
            // BOF: the globals first (BIFF8 only), then each sheet's substream.
            0x0809 => {
                depth += 1;
                let (version, dt) = (u16_at(0)?, u16_at(2)?);
                if at == 0 && version != 0x0600 {
                    return None;
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
                        if by_xf.iter().all(Option::is_none) {
                            return Some(out);
                        }
                    }
                    current = sheets.get(&(at as u32)).cloned();
                }
            }
            // EOF
            0x000A => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    current = None;
                }
            }
            0x041E if current.is_none() => {
                let (id, code) = (u16_at(0)?, unicode_string(&rec[2..], true)?);
                custom.insert(id, code);
            }
            0x00E0 if current.is_none() => xf_fmt.push(u16_at(2)?),
            0x0085 => {
                let pos = u32::from_le_bytes(rec.get(0..4)?.try_into().ok()?);
                if let Some(name) = unicode_string(rec.get(6..)?, false) {
                    sheets.insert(pos, name);
                }
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
    Some(out)
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
