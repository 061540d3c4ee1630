//! A spreadsheet's ways of writing what it holds, shared by workbooks (`excel`), the
//! charts drawn from them (`chart`) and table profiles (`profile`): A1 column letters, and
//! numbers without binary float noise.

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
