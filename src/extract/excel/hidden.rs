//! Hidden rows and columns of xlsx worksheets (issue #21): `<row r="5" hidden="1">` and
//! `<col min="5" max="6" hidden="1"/>`. Found while the package check inflates each
//! worksheet anyway (`Package::check_where_visiting`): each piece is searched for
//! `hidden=` and only the tags around a hit are parsed, so finding them costs next to
//! nothing beside the inflating. The cells in them are kept, marked or dropped as they
//! stream in (`sheet::Unseen`), and those of the rows a read showed listed as findings
//! (`hidden_row`, `hidden_column`).

use std::collections::HashMap;

/// A worksheet's hidden rows (1-based) and column ranges (1-based, inclusive).
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct HiddenLines {
    pub(super) rows: Vec<u32>,
    pub(super) cols: Vec<(u32, u32)>,
}

/// At most this many hidden rows are kept per sheet (a sheet hiding a million rows is
/// listed by its first ones; the findings' cap is lower still).
const MAX_ROWS: usize = 100_000;

/// Each style's number format where it is not General (by style index), for the scan to
/// find the cells in one.
pub(super) type NumericStyles = std::sync::Arc<Vec<Option<std::sync::Arc<super::numfmt::NumFmt>>>>;

/// The scan of one part as it inflates: its hidden rows and columns, and (given the
/// workbook's numeric styles) the cells in a number format of their own.
#[derive(Default)]
pub(super) struct Scan {
    carry: Vec<u8>,
    found: HiddenLines,
    numeric: Option<NumericStyles>,
    numbers: super::biff::CellFormats,
}

impl Scan {
    /// Take the next inflated piece of the part. Only an unfinished tag at its end is kept
    /// for the next piece (at most 64 KiB: no row or column tag is that long), and every
    /// byte is looked at a bounded number of times whatever the part holds (a text full
    /// of `hidden=` included).
    pub(super) fn feed(&mut self, mut piece: &[u8]) {
        if !self.carry.is_empty() {
            // The tag carried from the last piece ends at this one's first `>`.
            let Some(end) = memchr::memchr(b'>', piece) else {
                self.carry.extend_from_slice(piece);
                if self.carry.len() > 64 * 1024 {
                    self.carry.clear();
                }
                return;
            };
            self.carry.extend_from_slice(&piece[..=end]);
            scan(&self.carry, &mut self.found);
            if let Some(styles) = &self.numeric {
                numbers(&self.carry, styles, &mut self.numbers);
            }
            self.carry.clear();
            piece = &piece[end + 1..];
        }
        // The piece is scanned where it lies; only an unfinished tag at its end is copied.
        let keep_from = match memchr::memrchr(b'<', piece) {
            Some(p) if memchr::memchr(b'>', &piece[p..]).is_none() => p,
            _ => piece.len(),
        };
        scan(&piece[..keep_from], &mut self.found);
        if let Some(styles) = &self.numeric {
            numbers(&piece[..keep_from], styles, &mut self.numbers);
        }
        self.carry.extend_from_slice(&piece[keep_from..]);
    }

    /// A scan that also finds the cells in `styles`' numeric formats.
    pub(super) fn with_numbers(styles: Option<NumericStyles>) -> Self {
        Self {
            numeric: styles,
            ..Self::default()
        }
    }

    pub(super) fn finish(self) -> (HiddenLines, super::biff::CellFormats) {
        (self.found, self.numbers)
    }
}

/// The cells among whole tags whose style (`s="N"`) has a numeric format: found by their
/// ` s="` (cells without a style cost nothing but the search), each hit's `<c` tag parsed
/// for its `r`. At most `biff::MAX_CELLS` a sheet.
fn numbers(done: &[u8], styles: &NumericStyles, out: &mut super::biff::CellFormats) {
    static STYLE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b" s=\""));
    let mut pos = 0;
    while let Some(h) = STYLE.find(&done[pos..]) {
        let at = pos + h + 4;
        pos = at;
        let digits = done[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 6 || done.get(at + digits) != Some(&b'"') {
            continue;
        }
        let style: usize = std::str::from_utf8(&done[at..at + digits])
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(usize::MAX);
        let Some(Some(format)) = styles.get(style) else {
            continue;
        };
        // The tag around the hit: a cell's (`<c ` or `<x:c `), whose `s` stands within its
        // first bytes; both ends are looked for within 256 bytes of the hit, so text full
        // of ` s="2"` costs each byte a bounded number of looks.
        let floor = at.saturating_sub(256);
        let Some(open) = memchr::memrchr2(b'<', b'>', &done[floor..at])
            .map(|o| floor + o)
            .filter(|&o| done[o] == b'<')
        else {
            continue;
        };
        let ceil = (at + 256).min(done.len());
        let Some(close) = memchr::memchr2(b'>', b'<', &done[at..ceil])
            .map(|c| at + c)
            .filter(|&c| done[c] == b'>')
        else {
            continue;
        };
        let tag = &done[open + 1..close];
        let name_end = tag
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(tag.len());
        if tag[..name_end].rsplit(|&b| b == b':').next() != Some(b"c".as_slice()) {
            continue;
        }
        let Some(r) = memchr::memmem::find(tag, b" r=\"").map(|r| r + 4) else {
            continue;
        };
        let Some(end) = memchr::memchr(b'"', &tag[r..]).map(|e| r + e) else {
            continue;
        };
        let Some(cell) = std::str::from_utf8(&tag[r..end])
            .ok()
            .and_then(super::cells::parse_cell)
        else {
            continue;
        };
        if out.len() >= super::biff::MAX_CELLS {
            return;
        }
        out.insert(cell, format.clone());
        pos = close;
    }
}

/// The hidden rows and columns among whole tags and text: each `hidden=` inside a tag has
/// its tag parsed; one in text moves the search on to the next tag.
fn scan(done: &[u8], found: &mut HiddenLines) {
    // `hidden` (not `hidden=`): the searcher picks its rarest bytes to look for, and `=`
    // is in every attribute of a sheet.
    static HIDDEN: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"hidden"));
    let mut pos = 0;
    while let Some(h) = HIDDEN.find(&done[pos..]) {
        let hit = pos + h;
        if done.get(hit + 6) != Some(&b'=') {
            pos = hit + 6;
            continue;
        }
        // The tag holding the hit starts at or after `pos` (just past a `>`, or at a `<`).
        let open = memchr::memrchr(b'<', &done[pos..hit]).map(|o| pos + o);
        match memchr::memchr2(b'>', b'<', &done[hit..]).map(|c| hit + c) {
            Some(close) if done[close] == b'>' => {
                if let Some(o) = open {
                    tag(&done[o + 1..close], found);
                }
                pos = close + 1;
            }
            Some(next) => pos = next,
            None => break,
        }
    }
}

/// One tag's inside (`row r="5" hidden="1"`): a hidden row or column range, recorded.
fn tag(inside: &[u8], found: &mut HiddenLines) {
    let Ok(inside) = std::str::from_utf8(inside) else {
        return;
    };
    let name_end = inside
        .find(|c: char| c.is_ascii_whitespace())
        .unwrap_or(inside.len());
    let name = inside[..name_end].rsplit(':').next().unwrap_or("");
    if name != "row" && name != "col" {
        return;
    }
    let value = |key: &str| -> Option<&str> {
        let mut rest = &inside[name_end..];
        loop {
            let at = rest.find(key)?;
            let before = rest[..at].chars().next_back();
            let after = &rest[at + key.len()..];
            if before.is_none_or(|c| c.is_ascii_whitespace()) && after.starts_with("=\"") {
                let v = &after[2..];
                return v.find('"').map(|e| &v[..e]);
            }
            rest = after;
        }
    };
    if !matches!(value("hidden"), Some("1" | "true")) {
        return;
    }
    let num = |k: &str| value(k).and_then(|v| v.parse::<u32>().ok());
    match name {
        "row" => {
            if let Some(r) = num("r").filter(|r| *r >= 1) {
                if found.rows.len() < MAX_ROWS {
                    found.rows.push(r);
                }
            }
        }
        _ => {
            if let (Some(lo), Some(hi)) = (num("min"), num("max")) {
                if lo >= 1 && lo <= hi {
                    found.cols.push((lo, hi.min(16_384)));
                }
            }
        }
    }
}

/// What the package check found, by worksheet part (`xl/worksheets/sheet1.xml`).
pub(super) type ByPart = HashMap<String, HiddenLines>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_hidden_rows_and_columns_across_pieces() {
        let xml = br#"<worksheet><cols><col min="2" max="3" width="0" hidden="1"/><col min="4" max="4" hidden="0"/></cols><sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="2" hidden="1" spans="1:3"><c r="A2" t="inlineStr"><is><t>say hidden="1" here</t></is></c></row><x:row r="9" hidden="true"/><rowx r="10" hidden="1"/></sheetData></worksheet>"#;
        // Every split of the part into two pieces finds the same.
        for cut in 0..xml.len() {
            let mut s = Scan::default();
            s.feed(&xml[..cut]);
            s.feed(&xml[cut..]);
            assert_eq!(
                s.finish().0,
                HiddenLines {
                    rows: vec![2, 9],
                    cols: vec![(2, 3)]
                },
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn text_full_of_the_attribute_is_passed_over() {
        // A cell's text of `hidden="1"` repeated across many pieces: nothing found, and the
        // text is not kept between pieces.
        let mut s = Scan::default();
        s.feed(b"<sheetData><row r=\"1\"><c><is><t>");
        for _ in 0..64 {
            s.feed(&b"hidden=\"1\" ".repeat(6000));
            assert!(s.carry.len() < 64 * 1024);
        }
        s.feed(br#"</t></is></c></row><row r="2" hidden="1"/></sheetData>"#);
        assert_eq!(s.finish().0.rows, [2]);
    }

    #[test]
    fn finds_cells_in_numeric_styles_across_pieces() {
        use super::super::numfmt::NumFmt;
        let money = std::sync::Arc::new(NumFmt::new("#,##0.00"));
        // Style 0 General, 1 a date (not numeric: None), 2 money.
        let styles: NumericStyles = std::sync::Arc::new(vec![None, None, Some(money)]);
        let xml = br#"<sheetData><row r="1"><c r="A1" s="2"><v>1234.5</v></c><c r="B1" s="1"><v>45000</v></c><x:c r="C1" s="2" t="n"><v>7</v></x:c><c r="D1"><v>2</v></c><c r="E1" t="inlineStr"><is><t>a s="2" b</t></is></c><cell r="F1" s="2"/><c r="G12" s="20"><v>1</v></c></row></sheetData>"#;
        for cut in 0..xml.len() {
            let mut s = Scan::with_numbers(Some(styles.clone()));
            s.feed(&xml[..cut]);
            s.feed(&xml[cut..]);
            let (_, cells) = s.finish();
            let mut got: Vec<(u32, u32)> = cells.keys().copied().collect();
            got.sort();
            assert_eq!(got, [(0, 0), (0, 2)], "cut at {cut}");
            assert_eq!(cells[&(0, 0)].apply(1234.5).as_deref(), Some("1,234.50"));
        }
    }
}
