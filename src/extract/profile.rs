//! Table profiles (`profile: true`, CSV/TSV and sheets): per column the inferred type, nulls,
//! distinct values, the range of numbers and dates, in one streaming pass with bounded
//! memory: distinct values are counted exactly up to 10,000 per column (as 64-bit hashes),
//! then estimated (HyperLogLog, 4,096 registers: about 1.6 % error); at most 1,000 columns
//! are profiled.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

/// Distinct values counted exactly up to this many per column.
const EXACT_DISTINCT: usize = 10_000;
/// Columns profiled at most (the rest are counted in `column_count`).
pub const MAX_COLUMNS: usize = 1_000;
/// One-cell rows above a table taken for its title, at most.
const MAX_TITLE_ROWS: usize = 3;
const HLL_BITS: u32 = 12;

pub use crate::report::{ColumnProfile, TableProfile};

/// Builds a profile from rows of cells given one at a time.
pub struct Profiler {
    columns: Vec<Column>,
    width: usize,
    rows: u64,
    /// The first row's cells, kept aside until `finish` decides whether it is a header.
    first: Option<Vec<String>>,
    /// Rows of one filled cell before `first` (title rows, if the table is wider).
    leading: Vec<Vec<String>>,
    hasher: foldhash::fast::FixedState,
    letters: bool,
}

#[derive(Default)]
struct Column {
    values: u64,
    ints: u64,
    decimals: u64,
    dates: u64,
    bools: u64,
    min: f64,
    max: f64,
    sum: f64,
    earliest: Option<(u64, String)>,
    latest: Option<(u64, String)>,
    distinct: Distinct,
}

enum Distinct {
    Exact(HashSet<u64, std::hash::BuildHasherDefault<IdHasher>>),
    Sketch(Box<[u8; 1 << HLL_BITS]>),
}

impl Default for Distinct {
    fn default() -> Self {
        Self::Exact(HashSet::default())
    }
}

/// The values are hashes already.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

impl Distinct {
    fn add(&mut self, h: u64) {
        match self {
            Self::Exact(set) => {
                set.insert(h);
                if set.len() > EXACT_DISTINCT {
                    let mut regs = Box::new([0u8; 1 << HLL_BITS]);
                    for &v in set.iter() {
                        hll_add(&mut regs, v);
                    }
                    *self = Self::Sketch(regs);
                }
            }
            Self::Sketch(regs) => hll_add(regs, h),
        }
    }

    fn count(&self) -> (u64, bool) {
        match self {
            Self::Exact(set) => (set.len() as u64, true),
            Self::Sketch(regs) => {
                let m = regs.len() as f64;
                let sum: f64 = regs.iter().map(|&r| 2f64.powi(-(r as i32))).sum();
                let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
                let zeros = regs.iter().filter(|&&r| r == 0).count();
                let est = if raw <= 2.5 * m && zeros > 0 {
                    m * (m / zeros as f64).ln()
                } else {
                    raw
                };
                (est.round() as u64, false)
            }
        }
    }

    fn contains(&self, h: u64) -> bool {
        match self {
            Self::Exact(set) => set.contains(&h),
            Self::Sketch(_) => false,
        }
    }
}

fn hll_add(regs: &mut [u8; 1 << HLL_BITS], h: u64) {
    let idx = (h >> (64 - HLL_BITS)) as usize;
    let rank = ((h << HLL_BITS) | (1 << (HLL_BITS - 1))).leading_zeros() as u8 + 1;
    if regs[idx] < rank {
        regs[idx] = rank;
    }
}

/// What one cell holds.
enum Cell {
    Null,
    Int(f64),
    Decimal(f64),
    Bool,
    /// A date: its sort key (yyyymmdd × 10⁶ + hhmmss).
    Date(u64),
    Text,
}

impl Profiler {
    /// `letters`: name unnamed columns A, B, … (sheets) rather than `column 1`, … (CSV).
    pub fn new(letters: bool) -> Self {
        Self {
            columns: Vec::new(),
            width: 0,
            rows: 0,
            first: None,
            leading: Vec::new(),
            hasher: foldhash::fast::FixedState::with_seed(0x646f_6372),
            letters,
        }
    }

    /// One row: its cells by 0-based column, in order (gaps are empty cells). Blank rows
    /// are skipped.
    pub fn row<'a>(&mut self, cells: impl IntoIterator<Item = (usize, &'a str)>) {
        let mut cells = cells
            .into_iter()
            .map(|(c, v)| (c, v.trim()))
            .filter(|(_, v)| !v.is_empty())
            .peekable();
        if cells.peek().is_none() {
            return;
        }
        if self.first.is_none() {
            let mut first = Vec::new();
            for (c, v) in cells {
                if first.len() <= c {
                    first.resize(c + 1, String::new());
                }
                first[c] = v.to_string();
            }
            // One filled cell of text (a number or a date alone is a sparse row of data):
            // a title, if the row after it is a header of a wider table (`finish`
            // decides); held apart, it does not widen the table.
            let mut filled = first.iter().filter(|v| !v.is_empty());
            let single = matches!((filled.next(), filled.next()), (Some(v), None) if matches!(classify(v), Cell::Text));
            if single && self.leading.len() < MAX_TITLE_ROWS {
                self.leading.push(first);
            } else {
                self.width = self.width.max(first.len());
                self.first = Some(first);
            }
            return;
        }
        self.rows += 1;
        for (c, v) in cells {
            self.width = self.width.max(c + 1);
            if c < MAX_COLUMNS {
                self.add(c, v);
            }
        }
    }

    fn add(&mut self, c: usize, v: &str) {
        if self.columns.len() <= c {
            self.columns.resize_with(c + 1, Column::default);
        }
        let cell = classify(v);
        let col = &mut self.columns[c];
        match cell {
            Cell::Null => return,
            Cell::Int(f) | Cell::Decimal(f) => {
                if col.ints + col.decimals == 0 {
                    (col.min, col.max) = (f, f);
                } else {
                    col.min = col.min.min(f);
                    col.max = col.max.max(f);
                }
                col.sum += f;
                if matches!(cell, Cell::Int(_)) {
                    col.ints += 1;
                } else {
                    col.decimals += 1;
                }
            }
            Cell::Bool => col.bools += 1,
            Cell::Date(key) => {
                col.dates += 1;
                if col.earliest.as_ref().is_none_or(|(k, _)| key < *k) {
                    col.earliest = Some((key, v.to_string()));
                }
                if col.latest.as_ref().is_none_or(|(k, _)| key > *k) {
                    col.latest = Some((key, v.to_string()));
                }
            }
            Cell::Text => {}
        }
        col.values += 1;
        col.distinct.add(self.hasher.hash_one(v));
    }

    pub fn finish(mut self) -> Option<TableProfile> {
        let leading = std::mem::take(&mut self.leading);
        let title_text = |rows: &[Vec<String>]| {
            rows.iter()
                .filter_map(|r| r.iter().find(|v| !v.is_empty()).cloned())
                .collect::<Vec<_>>()
                .join(" / ")
        };
        // A title only over a header that is sure: besides looking like one, it names a
        // column of numbers, dates or booleans (text over unique text proves nothing).
        let sure_header = |f: &Vec<String>| {
            self.looks_like_header(f)
                && f.iter().enumerate().any(|(c, v)| {
                    !v.trim().is_empty()
                        && self.columns.get(c).is_some_and(|col| {
                            col.values > 0
                                && col.ints + col.decimals + col.dates + col.bools == col.values
                        })
                })
        };
        let titled =
            !leading.is_empty() && self.width >= 2 && self.first.as_ref().is_some_and(sure_header);
        let (first, title) = if leading.is_empty() || titled {
            // Rows of one cell over a wider table's header: its title.
            (self.first.take()?, titled.then(|| title_text(&leading)))
        } else {
            // Otherwise those rows are the table's (a one-column table, a first column
            // filled alone, a header naming only its first column): the first of them the
            // header candidate, the rest (and `first`) data.
            for row in &leading {
                self.width = self.width.max(row.len());
            }
            let mut rows = leading.into_iter().chain(self.first.take());
            let head = rows.next()?;
            for row in rows {
                self.rows += 1;
                for (c, v) in row.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                    if c < MAX_COLUMNS {
                        self.add(c, v);
                    }
                }
            }
            (head, None)
        };
        let header = self.looks_like_header(&first);
        if !header {
            self.rows += 1;
            for (c, v) in first.iter().enumerate().filter(|(_, v)| !v.is_empty()) {
                if c < MAX_COLUMNS {
                    self.add(c, v);
                }
            }
        }
        let width = self.width.min(MAX_COLUMNS);
        self.columns.resize_with(width, Column::default);
        let rows = self.rows;
        let columns = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, col)| {
                let name = match first.get(i).filter(|h| header && !h.trim().is_empty()) {
                    Some(h) => h.trim().to_string(),
                    None if self.letters => crate::extract::cell::col_name(i as u32),
                    None => format!("column {}", i + 1),
                };
                col.profile(name, rows)
            })
            .collect();
        Some(TableProfile {
            rows,
            column_count: self.width as u64,
            header,
            title,
            columns,
        })
    }

    /// A header: its filled cells two or more and at least half the table's columns (an
    /// empty cell over row labels is common), distinct, none a number, date or boolean, and
    /// each either over a column whose data is typed or a value its column's data never
    /// has. (A one-column table's header is its one cell.)
    fn looks_like_header(&self, first: &[String]) -> bool {
        let filled = first.iter().filter(|v| !v.trim().is_empty()).count();
        // Every cell filled up to the row's last (`Name,` over two columns names one), or
        // two or more filled and at least half the table's columns.
        let no_gaps = filled > 0 && filled == first.len();
        let enough = no_gaps || (filled >= 2 && 2 * filled >= self.width);
        if self.rows == 0 || !enough {
            return false;
        }
        let mut seen = HashSet::new();
        if !first
            .iter()
            .filter(|v| !v.trim().is_empty())
            .all(|v| seen.insert(v.trim()))
        {
            return false;
        }
        first
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.trim().is_empty())
            .all(|(c, v)| {
                let v = v.trim();
                if !matches!(classify(v), Cell::Text) {
                    return false;
                }
                let Some(col) = self.columns.get(c) else {
                    return true;
                };
                let typed =
                    col.values > 0 && col.ints + col.decimals + col.dates + col.bools == col.values;
                typed || !col.distinct.contains(self.hasher.hash_one(v))
            })
    }
}

impl Column {
    fn profile(&self, name: String, rows: u64) -> ColumnProfile {
        let numbers = self.ints + self.decimals;
        let kind = if self.values == 0 {
            "empty"
        } else if self.ints == self.values {
            "integer"
        } else if numbers == self.values {
            "decimal"
        } else if self.dates == self.values {
            "date"
        } else if self.bools == self.values {
            "boolean"
        } else {
            "text"
        };
        let (distinct, distinct_exact) = self.distinct.count();
        let is_number = matches!(kind, "integer" | "decimal");
        ColumnProfile {
            name,
            kind: kind.to_string(),
            nulls: rows.saturating_sub(self.values),
            distinct,
            distinct_exact,
            min: is_number.then_some(self.min),
            max: is_number.then_some(self.max),
            mean: is_number.then(|| self.sum / numbers as f64),
            earliest: (kind == "date")
                .then(|| self.earliest.clone().map(|e| e.1))
                .flatten(),
            latest: (kind == "date")
                .then(|| self.latest.clone().map(|e| e.1))
                .flatten(),
        }
    }
}

fn classify(v: &str) -> Cell {
    let b = v.as_bytes();
    let Some(&first) = b.first() else {
        return Cell::Null;
    };
    if first.is_ascii_digit() || ((first == b'-' || first == b'+' || first == b'.') && b.len() > 1)
    {
        if let Some(key) = date_key(b) {
            return Cell::Date(key);
        }
        if b[1..].iter().all(u8::is_ascii_digit) && b.len() <= 18 {
            if let Ok(i) = v.parse::<i64>() {
                return Cell::Int(i as f64);
            }
        }
        if let Some(f) = plain_decimal(b) {
            return Cell::Decimal(f);
        }
        if b.iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+' | b'e' | b'E'))
        {
            if let Ok(f) = v.parse::<f64>() {
                if f.is_finite() {
                    return Cell::Decimal(f);
                }
            }
        }
        return formatted_number(v).map_or(Cell::Text, Cell::Decimal);
    }
    if matches!(first, b'(' | b'$') || v.starts_with(['€', '£', '¥']) {
        return formatted_number(v).map_or(Cell::Text, Cell::Decimal);
    }
    if b.len() <= 5 {
        match v {
            "NA" | "N/A" | "n/a" | "null" | "NULL" | "None" | "NaN" | "nan" => return Cell::Null,
            _ if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") => {
                return Cell::Bool
            }
            _ => {}
        }
    }
    Cell::Text
}

/// A number as a format shows it: thousands grouped by commas (`1,599.99`), a currency
/// sign (`$`, `€`, `£`, `¥`) before it, a negative in parentheses (`($1,599.99)`) or with a
/// minus, or a percentage (`2.50%`, the value 0.025). Digits grouped any other way are
/// text.
fn formatted_number(v: &str) -> Option<f64> {
    let (mut s, mut neg) = (v.trim(), false);
    if let Some(inner) = s.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        (s, neg) = (inner, true);
    }
    if let Some(rest) = s.strip_prefix('-') {
        (s, neg) = (rest, !neg);
    }
    s = s.trim_start_matches(['$', '€', '£', '¥']).trim_start();
    if let Some(rest) = s.strip_prefix('-') {
        (s, neg) = (rest, !neg);
    }
    let (s, scale) = match s.strip_suffix('%') {
        Some(rest) => (rest, 0.01),
        None => (s, 1.0),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let groups: Vec<&str> = int.split(',').collect();
    let grouped = groups.len() > 1;
    let ok = !int.is_empty()
        && groups[0].len() <= if grouped { 3 } else { 15 }
        && !groups[0].is_empty()
        && groups[1..].iter().all(|g| g.len() == 3)
        && groups.iter().all(|g| g.bytes().all(|c| c.is_ascii_digit()))
        && frac.bytes().all(|c| c.is_ascii_digit())
        && (grouped || scale != 1.0 || v.trim() != s);
    if !ok {
        return None;
    }
    let n: f64 = format!(
        "{}.{}",
        groups.concat(),
        if frac.is_empty() { "0" } else { frac }
    )
    .parse()
    .ok()?;
    Some(if neg { -n } else { n } * scale)
}

/// `[-]digits.digits` with at most 15 digits: the value, exactly as `str::parse` gives it
/// (both the digits as an integer and the power of ten are exact in an f64, so the one
/// division rounds correctly), without the general parser's cost.
fn plain_decimal(b: &[u8]) -> Option<f64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let dot = digits.iter().position(|&c| c == b'.')?;
    let frac = digits.len() - dot - 1;
    if digits.len() - 1 > 15 || frac == 0 {
        return None;
    }
    let mut n: u64 = 0;
    for (i, &c) in digits.iter().enumerate() {
        if i == dot {
            continue;
        }
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    let v = n as f64 / 10f64.powi(frac as i32);
    Some(if neg { -v } else { v })
}

/// `YYYY-MM-DD`, `YYYY/MM/DD` or `DD.MM.YYYY`, optionally followed by a time
/// (`T` or a space, then `hh:mm` and more): its sort key, when the date is a real one.
fn date_key(b: &[u8]) -> Option<u64> {
    let num = |s: &[u8]| -> Option<u32> {
        s.iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + (c - b'0') as u32)
        })
    };
    if b.len() < 10 {
        return None;
    }
    let (y, m, d) = match (b[4], b[7], b[2], b[5]) {
        (b'-', b'-', _, _) | (b'/', b'/', _, _) => {
            (num(&b[0..4])?, num(&b[5..7])?, num(&b[8..10])?)
        }
        (_, _, b'.', b'.') => (num(&b[6..10])?, num(&b[3..5])?, num(&b[0..2])?),
        _ => return None,
    };
    let days = [
        31,
        28 + u32::from(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&m) || d == 0 || d > days[m as usize - 1] {
        return None;
    }
    let rest = &b[10..];
    let time = match rest.first() {
        None => 0,
        Some(b'T' | b' ') if rest.len() >= 6 && rest[3] == b':' => {
            let hh = num(&rest[1..3])?;
            let mm = num(&rest[4..6])?;
            let ss = if rest.len() >= 9 && rest[6] == b':' {
                num(&rest[7..9])?
            } else {
                0
            };
            if hh > 23 || mm > 59 || ss > 60 {
                return None;
            }
            hh * 10_000 + mm * 100 + ss
        }
        _ => return None,
    };
    Some((y as u64 * 10_000 + m as u64 * 100 + d as u64) * 1_000_000 + time as u64)
}

/// The rows of delimited text (RFC 4180: quoted fields with `""` for a quote, line breaks
/// inside quotes), handed to `each` one at a time.
pub fn delimited_rows(text: &str, delim: u8, mut each: impl FnMut(&[std::borrow::Cow<'_, str>])) {
    use std::borrow::Cow;
    let b = text.as_bytes();
    let mut row: Vec<Cow<'_, str>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // One field.
        if b[i] == b'"' {
            let mut val = String::new();
            let mut j = i + 1;
            let mut start = j;
            loop {
                match memchr::memchr(b'"', &b[j..]) {
                    None => {
                        val.push_str(&text[start..]);
                        j = b.len();
                        break;
                    }
                    Some(k) => {
                        val.push_str(&text[start..j + k]);
                        j += k + 1;
                        if b.get(j) == Some(&b'"') {
                            val.push('"');
                            j += 1;
                            start = j;
                        } else {
                            break;
                        }
                    }
                }
            }
            // Anything between the closing quote and the delimiter belongs to the field.
            let end = memchr::memchr3(delim, b'\n', b'\r', &b[j..]).map_or(b.len(), |k| j + k);
            val.push_str(&text[j..end]);
            row.push(Cow::Owned(val));
            i = end;
        } else {
            let end = memchr::memchr3(delim, b'\n', b'\r', &b[i..]).map_or(b.len(), |k| i + k);
            row.push(Cow::Borrowed(&text[i..end]));
            i = end;
        }
        match b.get(i) {
            Some(&c) if c == delim => {
                i += 1;
                if i == b.len() {
                    row.push(Cow::Borrowed(""));
                }
            }
            Some(b'\r') | Some(b'\n') => {
                i += if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                each(&row);
                row.clear();
            }
            _ => {}
        }
    }
    if !row.is_empty() {
        each(&row);
    }
}

/// The delimiter of a CSV file: the one of `,` `;` tab `|` its first line has most of
/// (`;` is the European spreadsheet export's), `,` when none or tied with it.
pub fn csv_delimiter(text: &str) -> u8 {
    let first = text.lines().next().unwrap_or("");
    let count = |c: u8| first.bytes().filter(|&x| x == c).count();
    let mut best = (count(b','), b',');
    for d in [b';', b'\t', b'|'] {
        let n = count(d);
        if n > best.0 {
            best = (n, d);
        }
    }
    best.1
}

/// Profile delimited text whole.
pub fn profile_delimited(text: &str, delim: u8) -> Option<TableProfile> {
    let mut p = Profiler::new(false);
    delimited_rows(text, delim, |row| {
        p.row(row.iter().enumerate().map(|(i, v)| (i, v.as_ref())));
    });
    p.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, delim: u8) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        delimited_rows(text, delim, |r| {
            out.push(r.iter().map(|c| c.to_string()).collect())
        });
        out
    }

    #[test]
    fn delimited_rows_follow_rfc_4180() {
        assert_eq!(
            rows("a,b,c\n1,\"x, \"\"y\"\"\",3\r\n\"two\nlines\",,\n", b','),
            vec![
                vec!["a", "b", "c"],
                vec!["1", "x, \"y\"", "3"],
                vec!["two\nlines", "", ""],
            ]
        );
        assert_eq!(rows("a\tb", b'\t'), vec![vec!["a", "b"]]);
        assert_eq!(rows("\"open", b','), vec![vec!["open"]]);
    }

    #[test]
    fn cells_are_typed() {
        assert!(matches!(classify("42"), Cell::Int(_)));
        assert!(matches!(classify("-7"), Cell::Int(_)));
        assert!(matches!(classify("1.5e3"), Cell::Decimal(_)));
        assert!(matches!(classify(".5"), Cell::Decimal(_)));
        assert!(matches!(classify("2024-02-29"), Cell::Date(_)));
        assert!(matches!(classify("2023-02-29"), Cell::Text));
        assert!(matches!(classify("31.12.1999"), Cell::Date(_)));
        assert!(matches!(classify("2024-01-03T10:20:30Z"), Cell::Date(_)));
        assert!(matches!(classify("TRUE"), Cell::Bool));
        assert!(matches!(classify("N/A"), Cell::Null));
        assert!(matches!(classify("12 apples"), Cell::Text));
        assert!(matches!(classify("inf"), Cell::Text));
        assert!(matches!(classify("-"), Cell::Text));
        // As a number format shows them.
        let num = |v: &str| match classify(v) {
            Cell::Decimal(f) => Some(f),
            _ => None,
        };
        assert_eq!(num("1,599.99"), Some(1599.99));
        assert_eq!(num("-1,599.99"), Some(-1599.99));
        assert_eq!(num("$1,599.99"), Some(1599.99));
        assert_eq!(num("($1,599.99)"), Some(-1599.99));
        assert_eq!(num("€12"), Some(12.0));
        assert_eq!(num("2.50%"), Some(0.025));
        assert_eq!(num("15,042,699"), Some(15042699.0));
        assert!(matches!(classify("1,5"), Cell::Text));
        assert!(matches!(classify("12,34,567"), Cell::Text));
        assert!(matches!(classify("(note)"), Cell::Text));
        assert!(matches!(classify("$"), Cell::Text));
    }

    #[test]
    fn the_decimal_fast_path_agrees_with_the_parser() {
        for v in [
            "0.1",
            "1234.56",
            "-0.3",
            "999999999999.999",
            "1.000",
            "00.5",
            "12345678901234.5",
            "0.00000000000001",
        ] {
            assert_eq!(
                plain_decimal(v.as_bytes()),
                Some(v.parse::<f64>().unwrap()),
                "{v}"
            );
        }
        for v in [
            "1",
            "1.",
            ".",
            "1.2.3",
            "1e5",
            "123456789012345.6",
            "+1.5",
            "1,5",
        ] {
            assert_eq!(plain_decimal(v.as_bytes()), None, "{v}");
        }
    }

    #[test]
    fn a_table_is_profiled_column_by_column() {
        let p = profile_delimited(
            "id,price,day,ok,note,blank\n1,1.5,2024-01-03,true,a,\n2,2,2023-12-31,false,,\n3,NA,2024-02-01,TRUE,b,\n",
            b',',
        )
        .unwrap();
        assert!(p.header);
        assert_eq!((p.rows, p.column_count), (3, 6));
        let c = |n: usize| &p.columns[n];
        assert_eq!((c(0).name.as_str(), c(0).kind.as_str()), ("id", "integer"));
        assert_eq!(
            (c(0).min, c(0).max, c(0).mean),
            (Some(1.0), Some(3.0), Some(2.0))
        );
        assert_eq!(
            (c(1).kind.as_str(), c(1).nulls, c(1).mean),
            ("decimal", 1, Some(1.75))
        );
        assert_eq!(c(2).kind, "date");
        assert_eq!(c(2).earliest.as_deref(), Some("2023-12-31"));
        assert_eq!(c(2).latest.as_deref(), Some("2024-02-01"));
        assert_eq!((c(3).kind.as_str(), c(3).distinct), ("boolean", 3));
        assert_eq!(
            (c(4).kind.as_str(), c(4).nulls, c(4).distinct),
            ("text", 1, 2)
        );
        assert_eq!((c(5).kind.as_str(), c(5).nulls), ("empty", 3));
        assert!(c(0).distinct_exact);
    }

    #[test]
    fn headers_are_guessed_not_assumed() {
        // Numbers in the first row: data.
        let p = profile_delimited("1,2\n3,4\n", b',').unwrap();
        assert!(!p.header);
        assert_eq!(p.rows, 2);
        assert_eq!(p.columns[0].name, "column 1");
        // Text over text: a header when its values are not among the column's.
        assert!(
            profile_delimited("name,city\nAnna,Tartu\nBen,Riga\n", b',')
                .unwrap()
                .header
        );
        assert!(
            !profile_delimited("Anna,Tartu\nBen,Riga\nAnna,Tartu\n", b',')
                .unwrap()
                .header
        );
        // A repeated name is no header.
        assert!(!profile_delimited("a,a\n1,2\n", b',').unwrap().header);
    }

    #[test]
    fn a_title_row_is_not_the_header_and_empty_header_cells_are_named() {
        let p = profile_delimited(
            "Quarterly sales 2024,,\nregion,,amount\nNorth,a,10\nSouth,b,12\n",
            b',',
        )
        .unwrap();
        assert_eq!(p.title.as_deref(), Some("Quarterly sales 2024"));
        assert!(p.header);
        assert_eq!(p.rows, 2);
        let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["region", "column 2", "amount"]);
        assert_eq!(p.columns[2].kind, "integer");
        // Sheets name the empty one by its letter.
        let mut sheet = Profiler::new(true);
        for row in [
            vec!["Report"],
            vec!["region", "", "amount"],
            vec!["North", "a", "10"],
        ] {
            sheet.row(row.into_iter().enumerate());
        }
        let p = sheet.finish().unwrap();
        let names: Vec<&str> = p.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            (p.title.as_deref(), names),
            (Some("Report"), vec!["region", "B", "amount"])
        );
        // A header naming only its first column stays the header; a first column filled
        // alone in the first rows of a table without a header stays data.
        let p = profile_delimited("Name,\nAnna,10\nBen,12\n", b',').unwrap();
        assert_eq!((p.title.clone(), p.header, p.rows), (None, true, 2));
        assert_eq!(p.columns[0].name, "Name");
        // (Its first row is taken for a header as before — text over unique text — but
        // nothing of it becomes a title.)
        let p = profile_delimited("Alice,\nBob,\nCarol,x\nDan,y\n", b',').unwrap();
        assert_eq!((p.title.clone(), p.rows, p.column_count), (None, 3, 2));
        // A title far to the right does not widen the table.
        let p = profile_delimited(",,,,Report\nregion,amount\nNorth,10\n", b',').unwrap();
        assert_eq!((p.title.as_deref(), p.column_count), (Some("Report"), 2));
        // A number alone in the first row is a sparse row of data, not a title.
        let p = profile_delimited("1,,\n2,3,4\n5,6,7\n", b',').unwrap();
        assert_eq!((p.title, p.rows), (None, 3));
        // A one-column table: its one-cell rows are the table, not a title.
        let p = profile_delimited("name\nAnna\nBen\n", b',').unwrap();
        assert_eq!((p.title, p.header, p.rows), (None, true, 2));
        assert_eq!(p.columns[0].name, "name");
    }

    #[test]
    fn many_distinct_values_are_estimated_closely() {
        let mut p = Profiler::new(false);
        p.row([(0, "n")]);
        let values: Vec<String> = (0..100_000).map(|i| format!("v{i}")).collect();
        for v in &values {
            p.row([(0, v.as_str())]);
        }
        let c = &p.finish().unwrap().columns[0];
        assert!(!c.distinct_exact);
        let err = (c.distinct as f64 - 100_000.0).abs() / 100_000.0;
        assert!(err < 0.05, "{} for 100000", c.distinct);
    }
}
