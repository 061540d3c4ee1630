//! Markdown pieces every format renders with: GFM pipe tables and their cells.

/// A cell's text on one line, its pipes escaped.
pub(crate) fn cell_text(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A GFM pipe table: the first row is the header, every row as wide as the widest.
pub(crate) fn pipe_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out.push_str(&pipe_row(r, cols));
        if i == 0 {
            out.push_str(&separator(cols));
        }
    }
    out
}

/// A GFM pipe table of cells as read: each cell on one line, its pipes escaped
/// (`cell_text`).
pub(crate) fn pipe_table_of(rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| cell_text(c)).collect())
        .collect();
    pipe_table(&rows)
}

/// One row of a pipe table `cols` wide, line end included.
pub(crate) fn pipe_row(r: &[String], cols: usize) -> String {
    let mut out = String::from("|");
    for c in 0..cols {
        out.push(' ');
        out.push_str(r.get(c).map_or("", String::as_str));
        out.push_str(" |");
    }
    out.push('\n');
    out
}

/// A pipe table's separator row for `cols` columns, line end included.
pub(crate) fn separator(cols: usize) -> String {
    format!("|{}\n", "---|".repeat(cols.max(1)))
}

/// An HTML table, for a table whose cells span rows or columns (a pipe table cannot say
/// so): the first `header_rows` rows as `<th>`, each spanning cell once with its
/// `rowspan`/`colspan`, the places it covers left out; one row a line, text escaped.
pub(crate) fn html_table(
    rows: &[Vec<String>],
    header_rows: usize,
    spans: &[crate::model::CellSpan],
) -> String {
    // Which places a spanning cell covers (not its own), and where each one starts.
    let mut covered: std::collections::HashSet<(usize, usize)> = Default::default();
    let mut starts: std::collections::HashMap<(usize, usize), (u32, u32)> = Default::default();
    for s in spans {
        let (r0, c0) = (s.row as usize, s.column as usize);
        starts.insert((r0, c0), (s.rows, s.columns));
        for r in r0..(r0 + s.rows as usize).min(rows.len()) {
            for c in c0..c0 + s.columns as usize {
                if (r, c) != (r0, c0) {
                    covered.insert((r, c));
                }
            }
        }
    }
    let esc = |t: &str| {
        t.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut out = String::from("<table>\n");
    for (r, row) in rows.iter().enumerate() {
        out.push_str("<tr>");
        let tag = if r < header_rows { "th" } else { "td" };
        for (c, text) in row.iter().enumerate() {
            if covered.contains(&(r, c)) {
                continue;
            }
            out.push('<');
            out.push_str(tag);
            if let Some(&(down, across)) = starts.get(&(r, c)) {
                if down > 1 {
                    out.push_str(&format!(" rowspan=\"{down}\""));
                }
                if across > 1 {
                    out.push_str(&format!(" colspan=\"{across}\""));
                }
            }
            out.push('>');
            out.push_str(&esc(text));
            out.push_str("</");
            out.push_str(tag);
            out.push('>');
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// Whether a link's target is written as a Markdown link: web and mail addresses only (a
/// `javascript:` or `file:` target stays text, whatever renders the Markdown).
pub(crate) fn linkable(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    ["http://", "https://", "mailto:", "ftp://"]
        .iter()
        .any(|s| lower.starts_with(s))
}

/// `[text](url)`: the text's brackets escaped, the URL's spaces, parentheses and angle
/// brackets percent-encoded. Text that is only space, or the URL itself, stays as it is.
pub(crate) fn link(text: &str, url: &str) -> String {
    let shown = text.trim();
    if shown.is_empty() || shown == url.trim() {
        return text.to_string();
    }
    let lead = &text[..text.len() - text.trim_start().len()];
    let trail = &text[text.trim_end().len()..];
    let shown = shown.replace('[', "\\[").replace(']', "\\]");
    let mut dest = String::with_capacity(url.len());
    for c in url.trim().chars() {
        match c {
            ' ' => dest.push_str("%20"),
            '(' => dest.push_str("%28"),
            ')' => dest.push_str("%29"),
            '<' => dest.push_str("%3C"),
            '>' => dest.push_str("%3E"),
            c => dest.push(c),
        }
    }
    format!("{lead}[{shown}]({dest}){trail}")
}

/// Linked spans of a paragraph's text (byte start, end, URL; in order, apart) written as
/// Markdown links.
pub(crate) fn apply_links(text: &mut String, spans: &[(usize, usize, String)]) {
    for (start, end, url) in spans.iter().rev() {
        let (start, end) = (*start, (*end).min(text.len()));
        if start >= end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        let linked = link(&text[start..end], url);
        text.replace_range(start..end, &linked);
    }
}

/// A `HYPERLINK` field code's address (Word's `w:instrText`/`w:fldSimple`, RTF's
/// `\fldinst`) (`HYPERLINK "https://…" \o "tip"`); `None` for
/// another field, or a link inside the document (`\l "bookmark"` alone).
pub(crate) fn hyperlink_field(code: &str) -> Option<String> {
    let mut words = field_words(code).into_iter();
    if !words.next()?.eq_ignore_ascii_case("HYPERLINK") {
        return None;
    }
    let (mut url, mut place) = (None, None);
    while let Some(w) = words.next() {
        match w.as_str() {
            // A place in the target (`\l "bookmark"`): alone, a link inside the document.
            "\\l" => place = words.next(),
            // Switches with an argument: a tooltip, a target frame.
            "\\o" | "\\t" => {
                words.next();
            }
            w if w.starts_with('\\') => {}
            _ if url.is_none() => url = Some(w),
            _ => {}
        }
    }
    match (url, place) {
        (Some(u), Some(p)) if !p.is_empty() && !u.contains('#') => Some(format!("{u}#{p}")),
        (u, _) => u,
    }
}

/// A `HYPERLINK` field's address when it is one written as a Markdown link (`linkable`).
pub(crate) fn field_link(code: &str) -> Option<String> {
    hyperlink_field(code).filter(|u| linkable(u))
}

/// The open paragraph `p`'s text from byte `start` on, written as a link to `url` (see
/// `link`); nothing when that text is empty, `start` is not where a character starts, or it
/// already holds a link (a field inside a hyperlink, or the other way round).
pub(crate) fn link_tail(p: &mut String, start: usize, url: &str) {
    if p.len() > start && p.is_char_boundary(start) && !p[start..].contains("](") {
        let text = p.split_off(start);
        p.push_str(&link(&text, url));
    }
}

/// A field code's words: quoted ones whole (their quotes off, `\"` a quote).
fn field_words(code: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let mut w = String::new();
        if c == '"' {
            while let Some(c) = chars.next() {
                match c {
                    '\\' if chars.peek() == Some(&'"') => w.push(chars.next().unwrap_or('"')),
                    '"' => break,
                    c => w.push(c),
                }
            }
        } else {
            w.push(c);
            while let Some(c) = chars.peek().copied().filter(|c| !c.is_whitespace()) {
                w.push(c);
                chars.next();
            }
        }
        words.push(w);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CellSpan;

    #[test]
    fn html_tables_span_and_escape() {
        let rows = vec![
            vec!["A <b>".to_string(), String::new()],
            vec!["x & y".to_string(), "z".to_string()],
            vec![String::new(), "w".to_string()],
        ];
        let spans = [
            CellSpan {
                row: 0,
                column: 0,
                rows: 1,
                columns: 2,
            },
            CellSpan {
                row: 1,
                column: 0,
                rows: 2,
                columns: 1,
            },
        ];
        assert_eq!(
            html_table(&rows, 1, &spans),
            "<table>\n<tr><th colspan=\"2\">A &lt;b&gt;</th></tr>\n\
             <tr><td rowspan=\"2\">x &amp; y</td><td>z</td></tr>\n<tr><td>w</td></tr>\n</table>\n"
        );
    }
}

/// OCR'd lines as Markdown: each line as it is, a title the page's layout found a heading
/// (its lines one), each table (`ocr::tables::find`) a pipe table apart by blank lines;
/// running headers and footers the layout found left out unless `keep_furniture`. And
/// whether any were left out.
pub(crate) fn ocr_lines(lines: &[crate::ocr::OcrLine], keep_furniture: bool) -> (String, bool) {
    use crate::ocr::page_layout::{laid_out, Laid};
    let mut s = String::new();
    let mut left_out = false;
    let apart = |s: &mut String| {
        if !s.is_empty() && !s.ends_with("\n\n") {
            s.push('\n');
        }
    };
    for p in laid_out(lines) {
        match p {
            Laid::Line(i) => {
                s.push_str(&lines[i].text);
                s.push('\n');
            }
            Laid::Header(i) | Laid::Footer(i) => {
                if keep_furniture {
                    s.push_str(&lines[i].text);
                    s.push('\n');
                } else {
                    left_out = true;
                }
            }
            Laid::Heading { level, text } => {
                apart(&mut s);
                s.push_str(&"#".repeat(level as usize));
                s.push(' ');
                s.push_str(&text);
                s.push_str("\n\n");
            }
            Laid::Table(rows) => {
                apart(&mut s);
                s.push_str(&pipe_table_of(&rows));
                if !s.ends_with('\n') {
                    s.push('\n');
                }
                s.push('\n');
            }
        }
    }
    (s, left_out)
}

#[cfg(test)]
mod link_tests {
    use super::*;

    #[test]
    fn links_are_written_for_web_and_mail_addresses_only() {
        assert!(linkable("https://example.com") && linkable("MAILTO:a@b.c"));
        assert!(!linkable("javascript:alert(1)") && !linkable("file:///etc/passwd"));
        assert!(!linkable("#_ftn1"));
        assert_eq!(
            link(" the [x] ", "http://a.b/c d(e)"),
            r" [the \[x\]](http://a.b/c%20d%28e%29) "
        );
        // The address as its own text, or no text: nothing to link.
        assert_eq!(link("http://a.b", "http://a.b"), "http://a.b");
        assert_eq!(link("  ", "http://a.b"), "  ");
        let mut t = String::from("go here or there");
        apply_links(
            &mut t,
            &[(3, 7, "http://h".into()), (11, 16, "http://t".into())],
        );
        assert_eq!(t, "go [here](http://h) or [there](http://t)");
    }
}

#[cfg(test)]
mod field_tests {
    use super::hyperlink_field;

    #[test]
    fn hyperlink_fields_give_their_address() {
        assert_eq!(
            hyperlink_field(r#" HYPERLINK "https://example.com/a b" \o "Tip" "#).as_deref(),
            Some("https://example.com/a b")
        );
        assert_eq!(
            hyperlink_field(r#"hyperlink \t "_blank" http://x.org/"#).as_deref(),
            Some("http://x.org/")
        );
        assert_eq!(hyperlink_field(r#" HYPERLINK \l "_Toc123" "#), None);
        assert_eq!(
            hyperlink_field(r#"HYPERLINK "http://x.org/a" \l "part2""#).as_deref(),
            Some("http://x.org/a#part2")
        );
        assert_eq!(hyperlink_field(r#" PAGEREF _Toc123 \h "#), None);
        assert_eq!(
            hyperlink_field(r#"HYPERLINK "say \"hi\"""#).as_deref(),
            Some(r#"say "hi""#)
        );
    }
}
