//! Cells as the sheet shows them: A1-style addresses and ranges, and a cell's value as
//! text — numbers without float noise, dates as ISO dates, strings on one line.

use calamine::{Data, DataRef};

use crate::error::{ApiError, ErrorCode};
pub use crate::extract::cell::{col_name, fmt_num};

/// `B12` → (11, 1), 0-based (row, col).
pub(super) fn parse_cell(s: &str) -> Option<(u32, u32)> {
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

/// Append a cell's text as the sheet shows it: strings with tabs and line breaks as
/// spaces (one cell per column, one row per line), whitespace-only strings as empty,
/// numbers without float noise, dates as ISO dates (a time without a date as `hh:mm:ss`).
pub(super) fn push_data(out: &mut String, d: &Data) {
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
                // A time of day without a date (under one day from the epoch): the time
                // alone, as the sheet shows it, not a date of 1899.
                Some(t) if (0.0..1.0).contains(&dt.as_f64()) => {
                    push_padded(out, t.hour(), 2);
                    out.push(':');
                    push_padded(out, t.minute(), 2);
                    out.push(':');
                    push_padded(out, t.second(), 2);
                }
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

pub(super) fn push_ref(out: &mut String, d: DataRef<'_>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_references() {
        assert_eq!(parse_cell("A1"), Some((0, 0)));
        assert_eq!(parse_cell("AB12"), Some((11, 27)));
        assert_eq!(parse_cell("12"), None);
        assert_eq!(parse_cell("A0"), None);
    }

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
