//! Names: `random_hex` for ids and temp names, and `clean_name`, a client's file name
//! reduced to a label that never touches a path.

/// Random hex from the OS generator (file ids, temp names, request ids).
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random generator is available");
    hex::encode(buf)
}

/// The client's name reduced to a safe label: last path component, no control
/// characters, at most 255 characters. Used as metadata only.
pub fn clean_name(raw: &str) -> String {
    let base = raw
        .rsplit(['/', '\\'])
        .find(|s| !s.is_empty())
        .unwrap_or("");
    // Control characters, and the invisible format characters that make a name display as
    // another (U+202E turns "gpj.exe" around; zero-width and tag characters hide text).
    let cleaned: String = base
        .chars()
        .filter(|c| !c.is_control() && !is_invisible_format(*c))
        .take(255)
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "upload".to_string()
    } else {
        cleaned.to_string()
    }
}

/// Bidi controls, zero-width characters, the BOM and Unicode tag characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061C}'
        | '\u{FEFF}'
        | '\u{E0000}'..='\u{E007F}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_labels_not_paths() {
        assert_eq!(clean_name("../../etc/passwd"), "passwd");
        assert_eq!(clean_name("C:\\Users\\x\\report.pdf"), "report.pdf");
        assert_eq!(clean_name(".."), "upload");
        assert_eq!(clean_name("a\u{0}b.txt"), "ab.txt");
        assert_eq!(clean_name("dir/"), "dir");
        // Bidi overrides and invisible characters are not kept in the display name.
        assert_eq!(clean_name("invoice\u{202E}fdp.exe"), "invoicefdp.exe");
        assert_eq!(clean_name("a\u{200B}b\u{2066}c\u{E0041}.txt"), "abc.txt");
    }
}
