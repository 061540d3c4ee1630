//! Numbers as a cell's number format shows them (`1,599.99`, `($1,599.99)`, `2.50%`,
//! `2 1/2`, `1.23E+04`, `000-00-0000`): Excel's format codes — sections for positive,
//! negative, zero and text, conditions, quoted and escaped literals, `0` `#` `?`
//! placeholders, thousands separators and scaling commas, percent, scientific notation and
//! fractions. Colours, locales and fill/width marks change no character. Date and time
//! codes are left to the reader (calamine gives those cells as dates); a code this does
//! not understand gives `None`, and the number is shown as General shows it.

use super::cells::fmt_num;

/// Excel's built-in number formats by id (the ones that are not dates or General).
pub fn builtin(id: u16) -> Option<&'static str> {
    Some(match id {
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        5 => "\"$\"#,##0_);(\"$\"#,##0)",
        6 => "\"$\"#,##0_);[Red](\"$\"#,##0)",
        7 => "\"$\"#,##0.00_);(\"$\"#,##0.00)",
        8 => "\"$\"#,##0.00_);[Red](\"$\"#,##0.00)",
        9 => "0%",
        10 => "0.00%",
        11 => "0.00E+00",
        12 => "# ?/?",
        13 => "# ??/??",
        37 => "#,##0_);(#,##0)",
        38 => "#,##0_);[Red](#,##0)",
        39 => "#,##0.00_);(#,##0.00)",
        40 => "#,##0.00_);[Red](#,##0.00)",
        41 => "_(* #,##0_);_(* (#,##0);_(* \"-\"_);_(@_)",
        42 => "_(\"$\"* #,##0_);_(\"$\"* (#,##0);_(\"$\"* \"-\"_);_(@_)",
        43 => "_(* #,##0.00_);_(* (#,##0.00);_(* \"-\"??_);_(@_)",
        44 => "_(\"$\"* #,##0.00_);_(\"$\"* (#,##0.00);_(\"$\"* \"-\"??_);_(@_)",
        48 => "##0.0E+0",
        _ => return None,
    })
}

/// Whether a format code shows numbers other than as General does (not General, not a
/// date or time: those cells the reader already shows as dates).
pub fn is_numeric(code: &str) -> bool {
    let c = code.trim();
    !c.is_empty() && !c.eq_ignore_ascii_case("general") && !c.eq_ignore_ascii_case("@") && {
        let (mut quoted, mut bracket, mut escaped) = (false, false, false);
        let mut date = false;
        for ch in c.chars() {
            match ch {
                _ if escaped => escaped = false,
                '\\' | '_' | '*' => escaped = true,
                '"' => quoted = !quoted,
                _ if quoted => {}
                '[' => bracket = true,
                ']' => bracket = false,
                _ if bracket => {}
                'y' | 'Y' | 'd' | 'D' | 'h' | 'H' | 's' | 'S' | 'm' | 'M' => date = true,
                ';' => break,
                _ => {}
            }
        }
        !date
    }
}

/// Whether a format code makes a number a date (or a time) or a duration (`[h]:mm`), as
/// calamine decides it for the workbooks it reads (its first section only): a date or time
/// letter outside quotes, escapes and brackets, or an elapsed-time bracket.
pub fn date_kind(code: &str) -> Option<calamine::ExcelDateTimeType> {
    use calamine::ExcelDateTimeType::{DateTime, TimeDelta};
    let (mut escaped, mut quoted, mut brackets) = (false, false, 0u8);
    let (mut prev, mut elapsed, mut am) = (' ', false, false);
    for ch in code.chars() {
        match ch {
            _ if escaped => escaped = false,
            '_' | '\\' | '*' if !quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if quoted => {}
            ';' => return None,
            '[' => brackets = brackets.saturating_add(1),
            ']' if brackets == 1 && elapsed => return Some(TimeDelta),
            ']' => brackets = brackets.saturating_sub(1),
            'a' | 'A' if brackets == 0 && !am => am = true,
            'p' | 'P' | 'm' | 'M' | '/' if brackets == 0 && am => return Some(DateTime),
            'd' | 'D' | 'm' | 'M' | 'h' | 'H' | 'y' | 'Y' | 's' | 'S' if brackets == 0 && !am => {
                return Some(DateTime)
            }
            _ => {
                if !(elapsed && ch.eq_ignore_ascii_case(&prev)) {
                    elapsed = prev == '[' && matches!(ch, 'h' | 'H' | 'm' | 'M' | 's' | 'S');
                }
            }
        }
        prev = ch;
    }
    None
}

/// `date_kind` of Excel's built-in formats by id.
pub fn builtin_date_kind(id: u16) -> Option<calamine::ExcelDateTimeType> {
    match id {
        14..=22 | 27..=36 | 45 | 47 | 50..=58 => Some(calamine::ExcelDateTimeType::DateTime),
        46 => Some(calamine::ExcelDateTimeType::TimeDelta),
        _ => None,
    }
}

/// A format code read once, to be applied to many cells.
#[derive(Debug)]
pub struct NumFmt {
    /// Each section's condition and pieces (`None`: a section this does not understand).
    sections: Vec<(Option<(String, f64)>, Option<Vec<Tok>>)>,
}

impl NumFmt {
    pub fn new(code: &str) -> Self {
        // Excel's own limit is 255 characters; longer codes (a hostile file's) are not
        // applied, so no cell pays for them.
        if code.len() > 255 {
            return Self {
                sections: Vec::new(),
            };
        }
        Self {
            sections: split_sections(code)
                .into_iter()
                .map(|s| (condition(s).map(|(op, x)| (op.to_string(), x)), tokens(s)))
                .collect(),
        }
    }

    /// `v` as the code shows it (without the spaces it pads with), or `None` when its
    /// section is not one this understands.
    pub fn apply(&self, v: f64) -> Option<String> {
        if !v.is_finite() || self.sections.is_empty() {
            return None;
        }
        let (k, negated) = choose(&self.sections, v)?;
        let toks = self.sections[k].1.as_deref()?;
        let v = if negated { v.abs() } else { v };
        // The spaces `_)` and `?` leave for alignment are no part of the value.
        render(v, toks).map(|s| s.trim().to_string())
    }
}

/// The code's sections (`;` outside quotes, escapes and brackets).
fn split_sections(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted, mut bracket, mut escaped) = (0, false, false, false);
    for (i, ch) in code.char_indices() {
        match ch {
            _ if escaped => escaped = false,
            '\\' | '_' | '*' if !quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' if !quoted => bracket = true,
            ']' if !quoted => bracket = false,
            ';' if !quoted && !bracket => {
                out.push(&code[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&code[start..]);
    out
}

/// A section's condition (`[>=100]`), if it has one.
fn condition(section: &str) -> Option<(&str, f64)> {
    // Any bracket of the section may hold it (`[Red][<=100]0`).
    let mut rest = section;
    while let Some(at) = rest.find('[') {
        let end = rest[at..].find(']')? + at;
        let inner = &rest[at + 1..end];
        let op_len = inner
            .find(|c: char| !matches!(c, '<' | '>' | '='))
            .unwrap_or(inner.len());
        if op_len > 0 {
            return Some((&inner[..op_len], inner[op_len..].trim().parse().ok()?));
        }
        rest = &rest[end + 1..];
    }
    None
}

fn holds(op: &str, v: f64, x: f64) -> bool {
    match op {
        "<" => v < x,
        "<=" | "=<" => v <= x,
        ">" => v > x,
        ">=" | "=>" => v >= x,
        "=" => v == x,
        "<>" => v != x,
        _ => false,
    }
}

/// The section for `v` (its index), and whether its sign is the section's to show (the
/// negative section, and any section chosen by a condition other than the first for a
/// negative).
type Sections = [(Option<(String, f64)>, Option<Vec<Tok>>)];

fn choose(sections: &Sections, v: f64) -> Option<(usize, bool)> {
    if sections.iter().take(2).any(|s| s.0.is_some()) {
        for (k, s) in sections.iter().take(3).enumerate() {
            match &s.0 {
                Some((op, x)) if holds(op, v, *x) => return Some((k, k > 0 && v < 0.0)),
                Some(_) => continue,
                None => return Some((k, v < 0.0)),
            }
        }
        return None;
    }
    Some(match (sections.len(), v) {
        (_, v) if v > 0.0 => (0, false),
        (1, v) if v < 0.0 => (0, false),
        (_, v) if v < 0.0 => (1, true),
        (n, _) if n >= 3 => (2, false),
        _ => (0, false),
    })
}

/// One piece of a section.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Lit(String),
    /// A digit placeholder: `0`, `#` or `?`.
    Digit(char),
    Point,
    Percent,
    /// `E+`/`E-` (whether the sign shows when positive).
    Exp(bool),
    Slash,
    /// A comma between placeholders or after them (thousands or scaling).
    Comma,
    /// `@`: the text.
    At,
    General,
}

fn tokens(section: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut chars = section.chars().peekable();
    let lit = |out: &mut Vec<Tok>, s: &str| match out.last_mut() {
        Some(Tok::Lit(l)) => l.push_str(s),
        _ => out.push(Tok::Lit(s.to_string())),
    };
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut s = String::new();
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    s.push(q);
                }
                lit(&mut out, &s);
            }
            '\\' => {
                if let Some(n) = chars.next() {
                    lit(&mut out, n.encode_utf8(&mut [0; 4]));
                }
            }
            // A space as wide as the next character; a fill: nothing.
            '_' => {
                chars.next();
                lit(&mut out, " ");
            }
            '*' => {
                chars.next();
            }
            '[' => {
                let mut inner = String::new();
                for q in chars.by_ref() {
                    if q == ']' {
                        break;
                    }
                    inner.push(q);
                }
                // `[$€-407]`: the currency symbol; colours and conditions show nothing.
                if let Some(cur) = inner.strip_prefix('$') {
                    let sym = cur.split('-').next().unwrap_or("");
                    lit(&mut out, sym);
                }
            }
            '0' | '#' | '?' => out.push(Tok::Digit(c)),
            '.' => out.push(Tok::Point),
            '%' => out.push(Tok::Percent),
            ',' => out.push(Tok::Comma),
            '/' => out.push(Tok::Slash),
            '@' => out.push(Tok::At),
            'E' | 'e' if matches!(chars.peek(), Some('+' | '-')) => {
                let plus = chars.next() == Some('+');
                out.push(Tok::Exp(plus));
            }
            'G' | 'g' => {
                let rest: String = chars.clone().take(6).collect();
                if !rest.eq_ignore_ascii_case("eneral") {
                    return None;
                }
                for _ in 0..6 {
                    chars.next();
                }
                out.push(Tok::General);
            }
            // Date and time letters and anything else unquoted that Excel would read as a
            // code: not understood here.
            c if c.is_ascii_alphabetic() => return None,
            c => lit(&mut out, c.encode_utf8(&mut [0; 4])),
        }
    }
    Some(out)
}

fn render(v: f64, toks: &[Tok]) -> Option<String> {
    if toks.contains(&Tok::At) && !toks.iter().any(|t| matches!(t, Tok::Digit(_))) {
        // A text section chosen for a number: the number as General, with its literals.
        return Some(
            toks.iter()
                .map(|t| match t {
                    Tok::Lit(s) => s.clone(),
                    _ => fmt_num(v),
                })
                .collect(),
        );
    }
    if let Some(at) = toks.iter().position(|t| *t == Tok::General) {
        let mut s = String::new();
        for (i, t) in toks.iter().enumerate() {
            match t {
                Tok::Lit(l) => s.push_str(l),
                _ if i == at => s.push_str(&fmt_num(v)),
                _ => {}
            }
        }
        return Some(s);
    }
    if !toks.iter().any(|t| matches!(t, Tok::Digit(_))) {
        // Only literals (`"-"` for zero in accounting formats).
        return Some(literals(toks));
    }
    if toks.contains(&Tok::Slash) {
        return fraction(v, &toks);
    }
    let mut v = v;
    for t in toks {
        if *t == Tok::Percent {
            v *= 100.0;
        }
    }
    if let Some(e) = toks.iter().position(|t| matches!(t, Tok::Exp(_))) {
        return scientific(v, &toks, e);
    }
    // Integer placeholders, then decimals; commas between integer placeholders group by
    // thousands, commas right after the last placeholder scale by 1000 each.
    let point = toks.iter().position(|t| *t == Tok::Point);
    let first_int = toks.iter().position(|t| matches!(t, Tok::Digit(_)));
    let int_end = point.unwrap_or(toks.len());
    let last_int = toks[..int_end]
        .iter()
        .rposition(|t| matches!(t, Tok::Digit(_)));
    let mut grouped = false;
    let mut scale = 0;
    for (i, t) in toks[..int_end].iter().enumerate() {
        if *t == Tok::Comma {
            match last_int {
                Some(l) if i < l && first_int.is_some_and(|f| f < i) => grouped = true,
                Some(l) if i > l => scale += 1,
                _ => {}
            }
        }
    }
    // Commas after the decimals scale too (`0.0,,`).
    if let Some(p) = point {
        let last = toks.iter().rposition(|t| matches!(t, Tok::Digit(_)))?;
        scale += toks[p..]
            .iter()
            .enumerate()
            .filter(|(k, t)| **t == Tok::Comma && p + k > last)
            .count();
    }
    v /= 1000f64.powi(scale as i32);
    let decimals: Vec<char> = match point {
        Some(p) => toks[p + 1..]
            .iter()
            .filter_map(|t| match t {
                Tok::Digit(c) => Some(*c),
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    };
    let fixed = fixed(v.abs(), decimals.len());
    let (int_digits, frac_digits) = fixed.split_once('.').unwrap_or((&fixed, ""));
    let int_digits = if int_digits == "0" { "" } else { int_digits };
    let int_digits_grouped = group(int_digits);
    let negative = v < 0.0 && fixed.bytes().any(|b| b.is_ascii_digit() && b != b'0');
    // Integer digits right to left over the integer placeholders; what is left over goes
    // before the first.
    let places: Vec<(usize, char)> = toks[..int_end]
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Tok::Digit(c) => Some((i, *c)),
            _ => None,
        })
        .collect();
    let mut fill: Vec<String> = vec![String::new(); toks.len()];
    let digits: Vec<char> = int_digits.chars().collect();
    let mut k = digits.len();
    for (n, &(i, c)) in places.iter().enumerate().rev() {
        if n == 0 {
            fill[i] = digits[..k].iter().collect();
            if fill[i].is_empty() {
                fill[i] = placeholder(c);
            }
            k = 0;
        } else if k > 0 {
            k -= 1;
            fill[i] = digits[k].to_string();
        } else {
            fill[i] = placeholder(c);
        }
    }
    let mut int_text: String = String::new();
    let mut out = String::new();
    let mut in_int = false;
    // The integer part is written, grouped, at the place of its last placeholder; the
    // literals inside it (`000-00-0000`) stay where they stand.
    let literal_inside = places.len() > 1
        && toks[places[0].0..=places[places.len() - 1].0]
            .iter()
            .any(|t| matches!(t, Tok::Lit(_)));
    let mut dec = decimals.iter().zip(frac_digits.chars()).collect::<Vec<_>>();
    // Trailing `#` and `?` decimals drop (or blank) their zeros.
    while let Some((c, d)) = dec.last() {
        if **c != '0' && *d == '0' {
            let c = **c;
            dec.pop();
            if c == '?' {
                dec.push((&'?', ' '));
                break;
            }
        } else {
            break;
        }
    }
    let mut dec = dec.into_iter().map(|(_, d)| d);
    for (i, t) in toks.iter().enumerate() {
        let before_point = point.is_none_or(|p| i < p);
        match t {
            Tok::Digit(_) if before_point => {
                if literal_inside {
                    out.push_str(&fill[i]);
                } else {
                    in_int = true;
                    int_text.push_str(&fill[i]);
                    if Some(i) == last_int {
                        out.push_str(&if grouped {
                            group(&int_text)
                        } else {
                            int_text.clone()
                        });
                        in_int = false;
                    }
                }
            }
            Tok::Digit(_) => {
                if let Some(d) = dec.next() {
                    out.push(d);
                }
            }
            Tok::Point => {
                // No integer placeholder (`.00`): the integer digits still show.
                if places.is_empty() {
                    out.push_str(if grouped {
                        &int_digits_grouped
                    } else {
                        int_digits
                    });
                }
                out.push('.')
            }
            Tok::Percent => out.push('%'),
            Tok::Comma => {}
            Tok::Lit(l) if in_int && !literal_inside => int_text.push_str(l),
            Tok::Lit(l) => out.push_str(l),
            _ => {}
        }
    }
    if negative {
        out.insert(0, '-');
    }
    Some(out)
}

/// `v` (not negative) with `d` decimals, rounded half away from zero on its 15
/// significant digits, as Excel rounds what it shows (`0.025` at `0%` is `3%`, `1.005` at
/// `0.00` is `1.01`).
fn fixed(v: f64, d: usize) -> String {
    if v == 0.0 {
        return format!("{:.*}", d, 0.0);
    }
    let sci = format!("{v:.14e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // The value is digits × 10^(exp − 14); shown with d decimals it is N × 10^−d.
    let shift = exp - 14 + d as i32;
    if shift >= 0 {
        digits.extend(std::iter::repeat_n(0, shift as usize));
    } else {
        let cut = (-shift) as usize;
        if cut > digits.len() {
            digits.clear();
        } else {
            let up = digits[digits.len() - cut] >= 5;
            digits.truncate(digits.len() - cut);
            if up {
                let mut k = digits.len();
                loop {
                    if k == 0 {
                        digits.insert(0, 1);
                        break;
                    }
                    k -= 1;
                    if digits[k] == 9 {
                        digits[k] = 0;
                    } else {
                        digits[k] += 1;
                        break;
                    }
                }
            }
        }
    }
    while digits.len() < d + 1 {
        digits.insert(0, 0);
    }
    while digits.len() > d + 1 && digits[0] == 0 {
        digits.remove(0);
    }
    let mut s: String = digits.iter().map(|&x| (b'0' + x) as char).collect();
    if d > 0 {
        s.insert(s.len() - d, '.');
    }
    s
}

/// The literal text among pieces, in order.
fn literals<'a>(toks: impl IntoIterator<Item = &'a Tok>) -> String {
    toks.into_iter()
        .filter_map(|t| match t {
            Tok::Lit(l) => Some(l.as_str()),
            _ => None,
        })
        .collect()
}

/// What an unfilled placeholder shows: `0` a zero, `?` a space, `#` nothing.
fn placeholder(c: char) -> String {
    match c {
        '0' => "0".into(),
        '?' => " ".into(),
        _ => String::new(),
    }
}

/// Digits (possibly led by spaces or other marks) with `,` every three from the right.
fn group(s: &str) -> String {
    let digits: Vec<char> = s.chars().collect();
    let n = digits.iter().filter(|c| c.is_ascii_digit()).count();
    let mut out = String::new();
    let mut seen = 0;
    for c in digits {
        out.push(c);
        if c.is_ascii_digit() {
            seen += 1;
            if seen < n && (n - seen) % 3 == 0 {
                out.push(',');
            }
        }
    }
    out
}

/// `0.00E+00`, `##0.0E+0` (engineering: the exponent a multiple of the integer
/// placeholders).
fn scientific(v: f64, toks: &[Tok], e: usize) -> Option<String> {
    let plus = matches!(toks[e], Tok::Exp(true));
    let mant_toks = &toks[..e];
    let point = mant_toks.iter().position(|t| *t == Tok::Point);
    let ints = mant_toks[..point.unwrap_or(mant_toks.len())]
        .iter()
        .filter(|t| matches!(t, Tok::Digit(_)))
        .count()
        .max(1);
    let decs = point.map_or(0, |p| {
        mant_toks[p..]
            .iter()
            .filter(|t| matches!(t, Tok::Digit(_)))
            .count()
    });
    let exp_digits = toks[e + 1..]
        .iter()
        .take_while(|t| matches!(t, Tok::Digit(_)))
        .count()
        .max(1);
    let step = if ints > 1 && mant_toks.first() == Some(&Tok::Digit('#')) {
        ints as i32
    } else {
        1
    };
    let mut exp = if v == 0.0 {
        0
    } else {
        v.abs().log10().floor() as i32
    };
    exp -= exp.rem_euclid(step);
    let mut mant = v / 10f64.powi(exp);
    let mut m = fixed(mant.abs(), decs);
    if m.split('.').next().map(str::len).unwrap_or(0) > ints.max(step as usize) && step == 1 {
        exp += 1;
        mant = v / 10f64.powi(exp);
        m = fixed(mant.abs(), decs);
    }
    let lead = literals(mant_toks.iter().take_while(|t| matches!(t, Tok::Lit(_))));
    let tail = literals(&toks[e + 1..]);
    let sign = if exp < 0 {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    Some(format!(
        "{}{lead}{m}E{sign}{:0w$}{tail}",
        if v < 0.0 { "-" } else { "" },
        exp.abs(),
        w = exp_digits
    ))
}

/// `# ?/?`, `# ??/??`, `?/8`: a whole part (when the code has one) and the nearest
/// fraction with a denominator of as many digits as the code gives, or the one it names.
fn fraction(v: f64, toks: &[Tok]) -> Option<String> {
    let slash = toks.iter().position(|t| *t == Tok::Slash)?;
    // The numerator's placeholders run back from the slash; before them (after a
    // literal) the whole part's.
    let num_start = toks[..slash]
        .iter()
        .rposition(|t| !matches!(t, Tok::Digit(_)))
        .map_or(0, |i| i + 1);
    let has_whole = toks[..num_start].iter().any(|t| matches!(t, Tok::Digit(_)));
    let den_toks: Vec<&Tok> = toks[slash + 1..]
        .iter()
        .take_while(|t| {
            matches!(t, Tok::Digit(_))
                || matches!(t, Tok::Lit(l) if l.chars().all(|c| c.is_ascii_digit()))
        })
        .collect();
    // A denominator written with a digit 1–9 is fixed (`?/8`, `?/10`, `??/100`: its `0`s
    // are digits then, not placeholders).
    let fixed_den: Option<u64> = if den_toks.iter().any(|t| matches!(t, Tok::Lit(_))) {
        let s: String = den_toks
            .iter()
            .filter_map(|t| match t {
                Tok::Lit(l) => Some(l.clone()),
                Tok::Digit('0') => Some("0".to_string()),
                _ => None,
            })
            .collect();
        s.parse().ok().filter(|d| *d > 0)
    } else {
        None
    };
    let den_places = den_toks
        .iter()
        .filter(|t| matches!(t, Tok::Digit(_)))
        .count()
        .clamp(1, 3);
    let a = v.abs();
    let (whole, part) = if has_whole {
        (a.trunc(), a.fract())
    } else {
        (0.0, a)
    };
    let (mut n, d) = match fixed_den {
        Some(d) => ((part * d as f64).round() as u64, d),
        None => {
            let max = 10u64.pow(den_places as u32) - 1;
            let mut best = (0u64, 1u64, f64::MAX);
            for d in 1..=max {
                let n = (part * d as f64).round();
                let err = (part - n / d as f64).abs();
                if err < best.2 - 1e-12 {
                    best = (n as u64, d, err);
                }
            }
            (best.0, best.1)
        }
    };
    let mut whole = whole as u64;
    if has_whole && n == d {
        whole += 1;
        n = 0;
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let lead = literals(toks.iter().take_while(|t| matches!(t, Tok::Lit(_))));
    let tail = literals(&toks[slash + 1 + den_toks.len()..]);
    let body = match (has_whole, whole, n) {
        (true, w, 0) => format!("{w}"),
        (true, 0, n) => format!("{n}/{d}"),
        (true, w, n) => format!("{w} {n}/{d}"),
        (false, _, n) => format!("{n}/{d}"),
    };
    Some(format!("{sign}{lead}{body}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::{builtin, builtin_date_kind, date_kind, is_numeric, NumFmt};
    use calamine::ExcelDateTimeType::{DateTime, TimeDelta};

    #[test]
    fn date_codes_are_told_from_number_codes_as_calamine_tells_them() {
        for code in [
            "m/d/yy",
            "yyyy-mm-dd",
            "h:mm AM/PM",
            "[$-409]d-mmm-yy",
            "mmm",
        ] {
            assert_eq!(date_kind(code), Some(DateTime), "{code}");
        }
        for code in ["[h]:mm:ss", "[mm]:ss", "[hh]"] {
            assert_eq!(date_kind(code), Some(TimeDelta), "{code}");
        }
        for code in [
            "0.00",
            "\"$\"#,##0.00",
            "0.0 \"days\"",
            "General",
            "# ?/?",
            "0;[Red]-0",
            "@",
        ] {
            assert_eq!(date_kind(code), None, "{code}");
        }
        assert_eq!(builtin_date_kind(14), Some(DateTime));
        assert_eq!(builtin_date_kind(46), Some(TimeDelta));
        assert_eq!(builtin_date_kind(9), None);
    }

    fn format(v: f64, code: &str) -> Option<String> {
        NumFmt::new(code).apply(v)
    }

    fn f(v: f64, code: &str) -> String {
        format(v, code).unwrap_or_else(|| panic!("{code} not understood"))
    }

    #[test]
    fn formats_as_excel_shows_them() {
        assert_eq!(f(1599.99, "#,##0.00"), "1,599.99");
        assert_eq!(f(1234567.0, "#,##0"), "1,234,567");
        assert_eq!(f(-1599.99, builtin(7).unwrap()), "($1,599.99)");
        assert_eq!(f(1599.99, builtin(7).unwrap()), "$1,599.99");
        assert_eq!(f(0.025, "0.00%"), "2.50%");
        assert_eq!(f(0.5, "0%"), "50%");
        assert_eq!(f(0.025, "0%"), "3%");
        assert_eq!(f(1.005, "0.00"), "1.01");
        assert_eq!(f(0.0001, "0.00"), "0.00");
        assert_eq!(f(999.996, "#,##0.00"), "1,000.00");
        assert_eq!(f(198356388.0, "0.00E+00"), "1.98E+08");
        assert_eq!(f(-198356388.0, "0.00E+00"), "-1.98E+08");
        assert_eq!(f(2.5, "# ?/?"), "2 1/2");
        assert_eq!(f(0.75, "# ??/??"), "3/4");
        assert_eq!(f(3.0, "# ?/?"), "3");
        assert_eq!(f(0.3, "?/8"), "2/8");
        assert_eq!(f(0.3, "# ?/10"), "3/10");
        assert_eq!(f(2.25, "# ??/100"), "2 25/100");
        assert_eq!(f(12.5, ".00"), "12.50");
        assert_eq!(f(1234.5, "#,###.00"), "1,234.50");
        assert_eq!(f(50.0, "[Red][<=100]\"low\" 0;\"high\" 0"), "low 50");
        assert_eq!(f(500.0, "[Red][<=100]\"low\" 0;\"high\" 0"), "high 500");
        assert!(format(1.0, &"0,".repeat(200)).is_none());
        assert_eq!(f(12345.0, "0.00E+00"), "1.23E+04");
        assert_eq!(f(0.00012, "0.0E+00"), "1.2E-04");
        assert_eq!(f(123456789.0, "000-00-0000"), "123-45-6789");
        assert_eq!(f(5.0, "000"), "005");
        assert_eq!(f(0.5, "#.##"), ".5");
        assert_eq!(f(2.0, "0.0#"), "2.0");
        assert_eq!(f(-3.0, "0.00"), "-3.00");
        assert_eq!(f(-3.0, "0.00;(0.00)"), "(3.00)");
        assert_eq!(f(0.0, "0.00;(0.00);\"zero\""), "zero");
        assert_eq!(f(12.0, "0 \"kg\""), "12 kg");
        assert_eq!(f(1500000.0, "#,##0.0,,\"M\""), "1.5M");
        assert_eq!(f(1234.5, "[$€-407] #,##0.00"), "€ 1,234.50");
        assert_eq!(f(1234.5, "#,##0.00 [$€-407]"), "1,234.50 €");
        assert_eq!(f(150.0, "[>=100]\"big\" 0;\"small\" 0"), "big 150");
        assert_eq!(f(5.0, "[>=100]\"big\" 0;\"small\" 0"), "small 5");
        assert_eq!(f(0.0, builtin(44).unwrap()), "$-");
        assert_eq!(f(1234.5, builtin(44).unwrap()), "$1,234.50");
        assert_eq!(f(-1234.5, builtin(43).unwrap()), "(1,234.50)");
        assert_eq!(f(42.0, "General \"pcs\""), "42 pcs");
        assert_eq!(f(3.0, "[Red]0.0"), "3.0");
        assert!(format(45000.0, "yyyy-mm-dd").is_none());
        assert!(is_numeric("#,##0.00"));
        assert!(!is_numeric("General"));
        assert!(!is_numeric("d-mmm-yy"));
        assert!(!is_numeric("[h]:mm:ss"));
        assert!(is_numeric("\"Day\" 0"));
    }
}
