//! Glyph names as text, as the Adobe Glyph List specification reads them: a name's part
//! before its first `.` (`a.sc` is `a`), its components joined by `_` (`f_f_i`), each one
//! from the Adobe Glyph List (`quotedblleft`), `uniXXXX…` (groups of four hex digits) or
//! `uXXXX` to `uXXXXXX`. A name none of these explains (`g33`, `cid1234`, `a65`: a
//! producer's own numbering) gives no text, never a guess.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The Adobe Glyph List 2.0, `name;hex code points` a line (see the file's header).
static LIST: &str = include_str!("glyphlist.txt");

fn list() -> &'static HashMap<&'static str, &'static str> {
    static MAP: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    MAP.get_or_init(|| {
        LIST.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once(';'))
            .collect()
    })
}

/// The text a glyph name stands for; `None` for a name no rule explains (and `.notdef`).
pub(super) fn to_text(name: &[u8]) -> Option<String> {
    let name = std::str::from_utf8(name).ok()?;
    let base = name.split('.').next().unwrap_or("");
    if base.is_empty() {
        return None;
    }
    let mut text = String::new();
    for part in base.split('_') {
        component(part, &mut text)?;
    }
    (!text.is_empty()).then_some(text)
}

fn component(part: &str, text: &mut String) -> Option<()> {
    if let Some(hex) = list().get(part) {
        for cp in hex.split(' ') {
            text.push(char::from_u32(u32::from_str_radix(cp, 16).ok()?)?);
        }
        return Some(());
    }
    let scalar = |h: &str| {
        let v = u32::from_str_radix(h, 16).ok()?;
        // Surrogates name nothing; char::from_u32 refuses them and anything past U+10FFFF.
        char::from_u32(v)
    };
    let upper_hex = |h: &str| {
        h.bytes()
            .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
    };
    if let Some(h) = part.strip_prefix("uni") {
        if !h.is_empty() && h.len() % 4 == 0 && upper_hex(h) {
            for k in (0..h.len()).step_by(4) {
                text.push(scalar(&h[k..k + 4])?);
            }
            return Some(());
        }
    }
    if let Some(h) = part.strip_prefix('u') {
        if (4..=6).contains(&h.len()) && upper_hex(h) {
            text.push(scalar(h)?);
            return Some(());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::to_text;

    #[test]
    fn names_read_as_the_glyph_list_says() {
        let t = |n: &str| to_text(n.as_bytes());
        assert_eq!(t("A").as_deref(), Some("A"));
        assert_eq!(t("space").as_deref(), Some(" "));
        assert_eq!(t("quotedblleft").as_deref(), Some("\u{201C}"));
        assert_eq!(t("fi").as_deref(), Some("\u{FB01}"));
        assert_eq!(t("f_f_i").as_deref(), Some("ffi"));
        assert_eq!(t("a.sc").as_deref(), Some("a"));
        assert_eq!(t("uni00E9").as_deref(), Some("é"));
        assert_eq!(t("uni00660069").as_deref(), Some("fi"));
        assert_eq!(t("u1D400").as_deref(), Some("\u{1D400}"));
        assert_eq!(t("dalethatafpatah").as_deref(), Some("\u{05D3}\u{05B2}"));
        // A producer's own numbering, a surrogate, lower-case hex, nothing: no text.
        for n in [
            "g33", "cid1234", "a65", ".notdef", "uniD800", "uni00e9", "", "uni", "f_g33",
        ] {
            assert_eq!(t(n), None, "{n}");
        }
    }
}
