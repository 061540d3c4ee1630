//! Spreadsheets (xlsx, xlsm, xls, ods) through calamine: a `## Sheets` list first (the
//! end of the output is what gets cut), then each sheet's cells within a cell budget;
//! sheets the budget never reached are `not_read`, the partly read one names its last cell.

use std::fs::File;
use std::io::BufReader;

use calamine::{open_workbook_from_rs, Data, Ods, Range, Reader, SheetVisible, Xls, Xlsx};
use serde_json::{json, Map, Value};

use super::package::{Package, PackageLimits};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{close_truncated, Extraction};
use crate::error::{ApiError, ErrorCode};
use crate::options::{self, ReadRequest};
use crate::sniff::Format;

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

fn cell_text(d: &Data) -> String {
    match d {
        Data::Empty => String::new(),
        Data::String(s) => s.replace(['\t', '\n', '\r'], " "),
        Data::Float(f) => fmt_num(*f),
        Data::Int(i) => i.to_string(),
        Data::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
        Data::DateTime(dt) => {
            if dt.is_duration() {
                return fmt_num(dt.as_f64() * 24.0) + "h";
            }
            match dt.as_datetime() {
                Some(t) if t.time() == chrono::NaiveTime::MIN => t.format("%Y-%m-%d").to_string(),
                Some(t) => t.format("%Y-%m-%dT%H:%M:%S").to_string(),
                None => fmt_num(dt.as_f64()),
            }
        }
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Error(e) => e.to_string(),
    }
}

/// A sheet's cells, trimmed to the cells that hold something (phantom used ranges cost nothing).
struct Sheet {
    name: String,
    hidden: bool,
    /// Absolute (row, col) of the top-left kept cell and the size kept.
    origin: (u32, u32),
    rows: u32,
    cols: u32,
    range: Range<Data>,
}

fn trimmed(
    name: String,
    hidden: bool,
    range: Range<Data>,
    window: Option<((u32, u32), (u32, u32))>,
) -> Sheet {
    let start = range.start().unwrap_or((0, 0));
    let (mut r1, mut c1) = (0u32, 0u32);
    let mut any = false;
    for (r, c, v) in range.used_cells() {
        if matches!(v, Data::String(s) if s.trim().is_empty()) {
            continue;
        }
        let (r, c) = (start.0 + r as u32, start.1 + c as u32);
        if let Some(((wr0, wc0), (wr1, wc1))) = window {
            if r < wr0 || r > wr1 || c < wc0 || c > wc1 {
                continue;
            }
        }
        any = true;
        r1 = r1.max(r);
        c1 = c1.max(c);
    }
    // Rows and columns are shown from A1 (or the window's corner) so cell positions read true.
    let (origin, rows, cols) = if !any {
        ((0, 0), 0, 0)
    } else {
        let (o_r, o_c) = window.map(|w| w.0).unwrap_or((0, 0));
        ((o_r, o_c), r1 - o_r + 1, c1 - o_c + 1)
    };
    Sheet {
        name,
        hidden,
        origin,
        rows,
        cols,
        range,
    }
}

/// Most text a workbook could expand to: cells that reference shared strings, times the
/// longest shared string. calamine copies the string into every such cell, so 12,000
/// references to one 1 MB string would take 12 GB; refuse that before it is read.
const MAX_EXPANDED_TEXT: u64 = 512 * 1024 * 1024;

fn refuse_output_bomb(pkg: &mut Package) -> Result<(), ApiError> {
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
    if refs.saturating_mul(longest) > MAX_EXPANDED_TEXT {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!("{refs} cells reference a shared string of {longest} bytes: the text would exceed {MAX_EXPANDED_TEXT} bytes (an output bomb)"),
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

fn load(input: &Input) -> Result<Vec<(String, bool, Range<Data>)>, ApiError> {
    let open = || {
        File::open(&input.path)
            .map(BufReader::new)
            .map_err(ApiError::internal)
    };
    fn all<R: Reader<BufReader<File>>>(
        mut wb: R,
    ) -> Result<Vec<(String, bool, Range<Data>)>, ApiError>
    where
        calamine::Error: From<R::Error>,
    {
        let meta: Vec<(String, bool)> = wb
            .sheets_metadata()
            .iter()
            .filter(|s| s.typ == calamine::SheetType::WorkSheet)
            .map(|s| (s.name.clone(), s.visible != SheetVisible::Visible))
            .collect();
        let mut out = Vec::with_capacity(meta.len());
        for (name, hidden) in meta {
            let range = wb
                .worksheet_range(&name)
                .map_err(|e| calamine_error(e.into()))?;
            out.push((name, hidden, range));
        }
        Ok(out)
    }
    match input.format {
        Format::Xls => {
            all(open_workbook_from_rs::<Xls<_>, _>(open()?)
                .map_err(|e| calamine_error(e.into()))?)
        }
        Format::Ods => {
            all(open_workbook_from_rs::<Ods<_>, _>(open()?)
                .map_err(|e| calamine_error(e.into()))?)
        }
        _ => {
            all(open_workbook_from_rs::<Xlsx<_>, _>(open()?)
                .map_err(|e| calamine_error(e.into()))?)
        }
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
        if !matches!(input.format, Format::Xls) {
            // calamine inflates the package itself: prove it is within the caps first.
            let mut pkg = Package::open(&input.path, PackageLimits::default())?;
            pkg.check_all()?;
            if !matches!(input.format, Format::Ods) {
                refuse_output_bomb(&mut pkg)?;
            }
        }
        let loaded = load(input)?;
        let names: Vec<&str> = loaded.iter().map(|(n, _, _)| n.as_str()).collect();
        let chosen: Option<usize> = match &req.sheet {
            Some(s) => Some(names.iter().position(|n| n == s).ok_or_else(|| {
                ApiError::invalid_option(format!("no sheet named {s:?}")).with_hint(format!(
                    "The sheets are: {}.",
                    names
                        .iter()
                        .map(|n| format!("{n:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?),
            None => None,
        };
        if window.is_some() && chosen.is_none() && loaded.len() > 1 {
            return Err(ApiError::invalid_option(format!(
                "range needs sheet: the workbook has {} sheets",
                loaded.len()
            ))
            .with_hint(format!(
                "Add `sheet`, one of: {}.",
                names
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let sheets: Vec<Sheet> = loaded
            .into_iter()
            .enumerate()
            .map(|(i, (name, hidden, range))| {
                let w = if chosen.is_none() || chosen == Some(i) {
                    window
                } else {
                    None
                };
                trimmed(name, hidden, range, w)
            })
            .collect();
        let in_scope: Vec<usize> = match chosen {
            Some(i) => vec![i],
            None => (0..sheets.len()).collect(),
        };

        // Render rows in order until the cell budget or the character budget runs out;
        // the sheet list (written first) then states exactly what was read.
        let render_row = |s: &Sheet, r: u32| -> String {
            let start = s.range.start().unwrap_or((0, 0));
            let mut line = Vec::with_capacity(s.cols as usize);
            for c in s.origin.1..s.origin.1 + s.cols {
                let v = if r >= start.0 && c >= start.1 {
                    s.range
                        .get(((r - start.0) as usize, (c - start.1) as usize))
                        .map(cell_text)
                        .unwrap_or_default()
                } else {
                    String::new()
                };
                line.push(v);
            }
            let mut l = line.join("\t").trim_end_matches('\t').to_string();
            l.push('\n');
            l
        };
        // Room for the sheet list, with the longest status every sheet could get.
        let reserve: usize = 12
            + sheets
                .iter()
                .map(|s| s.name.chars().count() + 64)
                .sum::<usize>();
        let char_room = max_chars.saturating_sub(reserve);
        let mut cells_left = budget;
        let mut body = String::new();
        let mut body_chars = 0usize;
        let mut plan: Vec<(usize, u32)> = Vec::new(); // (sheet, rows shown)
        let mut stopped_by = "";
        // Characters of the rows shown, per sheet: char_count renders only the rest.
        let mut shown_chars: std::collections::HashMap<usize, usize> = Default::default();
        'sheets: for &i in &in_scope {
            let s = &sheets[i];
            let heading = format!(
                "--- Sheet: {} ({} rows × {} cols) ---\n",
                s.name, s.rows, s.cols
            );
            let hn = heading.chars().count();
            if body_chars + hn > char_room || (cells_left == 0 && s.rows > 0) {
                stopped_by = if cells_left == 0 {
                    "cell budget (max_cells)"
                } else {
                    "character budget (max_chars)"
                };
                break;
            }
            body.push_str(&heading);
            body_chars += hn;
            plan.push((i, 0));
            for r in s.origin.0..s.origin.0 + s.rows {
                let line = render_row(s, r);
                let n = line.chars().count();
                if cells_left < s.cols as u64 || body_chars + n > char_room {
                    stopped_by = if cells_left < s.cols as u64 {
                        "cell budget (max_cells)"
                    } else {
                        "character budget (max_chars)"
                    };
                    break 'sheets;
                }
                body.push_str(&line);
                body_chars += n;
                *shown_chars.entry(i).or_default() += n;
                cells_left -= s.cols as u64;
                plan.last_mut().expect("pushed").1 += 1;
            }
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
                None if in_scope.contains(&i) => ("not_read", None),
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
            let mut m = json!({"name": s.name, "rows": s.rows, "cols": s.cols, "read": st, "hidden": s.hidden});
            if let Some(l) = last {
                m["last_cell"] = json!(l);
            }
            meta.push(m);
        }

        let mut extra = Map::new();
        extra.insert("sheets".into(), Value::Array(meta));
        let mut ex = Extraction {
            extra,
            ..Default::default()
        };
        if sheets.iter().all(|s| s.rows == 0) {
            // No cell holds anything: empty text, said plainly (the sheets are still listed).
            ex.extra
                .insert("note".into(), json!("the workbook has no cell values"));
            return Ok(ex);
        }
        // Where reading on starts: the partly read sheet, else the first sheet not read.
        let next = in_scope.iter().find_map(|&i| match status(i).0 {
            "partial" => {
                let s = &sheets[i];
                let rows = plan.iter().find(|(p, _)| *p == i).map(|p| p.1).unwrap_or(0);
                let r0 = s.origin.0 + rows;
                Some(json!({"sheet": s.name, "range": format!("{}{}:{}{}", col_name(s.origin.1), r0 + 1, col_name(s.origin.1 + s.cols - 1), s.origin.0 + s.rows)}))
            }
            "not_read" => Some(json!({"sheet": sheets[i].name})),
            _ => None,
        });
        // char_count: the whole selection, as if both budgets were unlimited.
        let all_rows: usize = in_scope
            .iter()
            .map(|&i| {
                let s = &sheets[i];
                let shown = plan.iter().find(|(p, _)| *p == i).map_or(0, |p| p.1);
                format!(
                    "--- Sheet: {} ({} rows × {} cols) ---\n",
                    s.name, s.rows, s.cols
                )
                .chars()
                .count()
                    + shown_chars.get(&i).copied().unwrap_or(0)
                    + (s.origin.0 + shown..s.origin.0 + s.rows)
                        .map(|r| render_row(s, r).chars().count())
                        .sum::<usize>()
            })
            .sum();
        ex.char_count = (head.chars().count() + all_rows) as u64;
        let text = format!("{head}{body}");
        match next {
            Some(Value::Object(n)) => {
                ex.truncated = true;
                ex.warnings.push(format!(
                    "stopped at the {stopped_by}; the sheet list says what was read and `next` reads on"
                ));
                ex.text = close_truncated(text, ex.char_count);
                ex.next = Some(n);
            }
            _ => ex.text = text,
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
