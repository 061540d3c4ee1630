//! A sheet's print headers and footers (`include_headers_footers`, xlsx): the
//! `headerFooter` element at the end of its part, each header or footer's left, centre
//! and right sections as lines, Excel's codes read as the printed page shows them.

use super::super::package::Package;
use super::super::xml::{walk, Node};
use crate::error::ApiError;

/// The lines over a sheet's headers and its footers.
pub(super) const HEADERS_HEAD: &str = "[Headers]";
pub(super) const FOOTERS_HEAD: &str = "[Footers]";

/// The sheet's headers and footers as `[Headers]`/`[Footers]` blocks (empty when it has
/// none). Only the `headerFooter` element is parsed, found by a byte search.
pub(super) fn read(pkg: &mut Package, part: &str, sheet: &str) -> Result<String, ApiError> {
    let Some(element) = read_last_element(pkg, part, "headerFooter")? else {
        return Ok(String::new());
    };
    let element = &element[..];
    let depth = pkg.limits().max_xml_depth;
    let mut codes: Vec<(bool, String)> = Vec::new();
    let mut open: Option<(bool, String)> = None;
    walk(element, depth, |n| match n {
        Node::Open("oddHeader" | "evenHeader" | "firstHeader", _) => {
            open = Some((true, String::new()))
        }
        Node::Open("oddFooter" | "evenFooter" | "firstFooter", _) => {
            open = Some((false, String::new()))
        }
        Node::Text(t) => {
            if let Some((_, s)) = open.as_mut() {
                s.push_str(t);
            }
        }
        Node::Close(
            "oddHeader" | "evenHeader" | "firstHeader" | "oddFooter" | "evenFooter" | "firstFooter",
        ) => codes.extend(open.take()),
        _ => {}
    })
    // A damaged tail is no reason to fail the sheet's read.
    .ok();
    Ok(blocks(codes, sheet))
}

/// Where the last start tag of an element named `name` (with any prefix) begins: a `<name`
/// or `<prefix:name` followed by the end of the name.
fn last_start(xml: &[u8], name: &str) -> Option<usize> {
    memchr::memmem::rfind_iter(xml, name.as_bytes()).find_map(|at| {
        let after = xml.get(at + name.len())?;
        if !matches!(after, b' ' | b'>' | b'/' | b'\t' | b'\r' | b'\n') {
            return None;
        }
        match xml[..at].last()? {
            b'<' => Some(at - 1),
            b':' => {
                let lt = xml[..at - 1].iter().rposition(|&c| c == b'<')?;
                xml[lt + 1..at - 1]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
                    .then_some(lt)
            }
            _ => None,
        }
    })
}

/// The last element named `name` of a part (with any prefix), from its start tag to the
/// last `name>` after it (its end tag, or the start tag itself when it is empty): found by
/// a byte search, so that an element at a sheet's end is parsed without the sheet's cells.
pub(super) fn last_element<'x>(xml: &'x [u8], name: &str) -> Option<&'x [u8]> {
    let at = last_start(xml, name)?;
    let close = format!("{name}>");
    let end = memchr::memmem::rfind(&xml[at..], close.as_bytes())
        .map(|e| at + e + close.len())
        .unwrap_or(xml.len());
    Some(&xml[at..end])
}

/// `last_element` of a part as it inflates, holding only what follows the last start tag
/// found so far (an element at a sheet's end: the sheet's cells are never held whole).
pub(super) fn read_last_element(
    pkg: &mut Package,
    part: &str,
    name: &str,
) -> Result<Option<Vec<u8>>, ApiError> {
    // Enough of the bytes before a piece to find a start tag cut between pieces.
    let overlap = name.len() + 64;
    let mut tail: Vec<u8> = Vec::new();
    let mut found = false;
    pkg.visit(part, |piece| {
        let from = tail.len().saturating_sub(overlap);
        tail.extend_from_slice(piece);
        match last_start(&tail[from..], name) {
            Some(at) => {
                tail.drain(..from + at);
                found = true;
            }
            None if !found && tail.len() > overlap => {
                tail.drain(..tail.len() - overlap);
            }
            None => {}
        }
    })?;
    Ok(found.then(|| last_element(&tail, name).unwrap_or(&tail).to_vec()))
}

/// Headers and footers as `[Headers]`/`[Footers]` blocks (empty when there are none), from
/// their codes in order (`true` for a header): each section a line, each line once.
pub(super) fn blocks(codes: impl IntoIterator<Item = (bool, String)>, sheet: &str) -> String {
    let (mut headers, mut footers) = (Vec::<String>::new(), Vec::<String>::new());
    let mut seen: std::collections::HashSet<(bool, String)> = std::collections::HashSet::new();
    for (header, code) in codes {
        let list = if header { &mut headers } else { &mut footers };
        for line in sections(&code, sheet) {
            if seen.insert((header, line.clone())) {
                list.push(line);
            }
        }
    }
    let mut out = String::new();
    for (head, lines) in [(HEADERS_HEAD, headers), (FOOTERS_HEAD, footers)] {
        if lines.is_empty() {
            continue;
        }
        out.push_str(head);
        out.push('\n');
        for l in lines {
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}

/// A header or footer's sections (`&L`, `&C`, `&R`), each a line, with Excel's codes read:
/// `&P`/`&N` as `[Page]`/`[Pages]`, `&D`/`&T` as `[Date]`/`[Time]`, `&F`/`&Z` as
/// `[File]`/`[Path]`, `&A` as the sheet's name, `&G` as `[Picture]`, `&&` as `&`;
/// formatting codes (fonts, sizes, colours, underline and the like) left out.
fn sections(code: &str, sheet: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut chars = code.chars().peekable();
    let mut flush = |cur: &mut String| {
        let s = cur.split_whitespace().collect::<Vec<_>>().join(" ");
        if !s.is_empty() {
            out.push(s);
        }
        cur.clear();
    };
    while let Some(c) = chars.next() {
        if c != '&' {
            cur.push(c);
            continue;
        }
        match chars.next() {
            Some('L' | 'C' | 'R') => flush(&mut cur),
            Some('&') => cur.push('&'),
            Some('P') => cur.push_str("[Page]"),
            Some('N') => cur.push_str("[Pages]"),
            Some('D') => cur.push_str("[Date]"),
            Some('T') => cur.push_str("[Time]"),
            Some('F') => cur.push_str("[File]"),
            Some('Z') => cur.push_str("[Path]"),
            Some('A') => cur.push_str(sheet),
            Some('G') => cur.push_str("[Picture]"),
            // `&"font,style"`.
            Some('"') => {
                for c in chars.by_ref() {
                    if c == '"' {
                        break;
                    }
                }
            }
            // `&KRRGGBB` or `&KTT+SSS` (a theme colour and shade).
            Some('K') => {
                for _ in 0..6 {
                    if chars
                        .next_if(|c| c.is_ascii_alphanumeric() || *c == '+' || *c == '-')
                        .is_none()
                    {
                        break;
                    }
                }
            }
            // A font size: its digits.
            Some(d) if d.is_ascii_digit() => while chars.next_if(char::is_ascii_digit).is_some() {},
            // `&B`, `&I`, `&U`, `&E`, `&S`, `&X`, `&Y`, `&O`, `&H`: formatting.
            _ => {}
        }
    }
    flush(&mut cur);
    out
}

#[cfg(test)]
mod tests {
    use super::{last_element, read_last_element, sections};

    #[test]
    fn the_last_element_is_found_as_the_part_inflates_whatever_its_pieces() {
        // A sheet of 200,000 rows (several of the reader's 64 KiB pieces), then its links.
        let mut xml = String::from("<worksheet><sheetData>");
        for r in 1..=200_000 {
            xml.push_str(&format!("<row r=\"{r}\"/>"));
        }
        xml.push_str(r#"</sheetData><x:hyperlinks><x:hyperlink ref="A1" r:id="rId1"/></x:hyperlinks><pageMargins/></worksheet>"#);
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut z = zip::ZipWriter::new(file.reopen().unwrap());
        z.start_file(
            "xl/worksheets/sheet1.xml",
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        std::io::Write::write_all(&mut z, xml.as_bytes()).unwrap();
        z.finish().unwrap();
        let mut pkg =
            crate::extract::package::Package::open(file.path(), Default::default()).unwrap();
        assert_eq!(
            read_last_element(&mut pkg, "xl/worksheets/sheet1.xml", "hyperlinks")
                .unwrap()
                .unwrap(),
            br#"<x:hyperlinks><x:hyperlink ref="A1" r:id="rId1"/></x:hyperlinks>"#
        );
        assert_eq!(
            read_last_element(&mut pkg, "xl/worksheets/sheet1.xml", "headerFooter").unwrap(),
            None
        );
    }

    #[test]
    fn the_last_element_of_a_name_with_or_without_a_prefix() {
        let xml = br#"<worksheet><sheetData><row/></sheetData><hyperlinks><hyperlink ref="B1" r:id="rId1"/></hyperlinks><headerFooter/></worksheet>"#;
        assert_eq!(
            last_element(xml, "hyperlinks").unwrap(),
            br#"<hyperlinks><hyperlink ref="B1" r:id="rId1"/></hyperlinks>"#
        );
        // `hyperlink` is not `hyperlinks`: the last `<hyperlink ` is found.
        assert!(last_element(xml, "hyperlink")
            .unwrap()
            .starts_with(br#"<hyperlink ref="B1""#));
        let xml = br#"<x:worksheet><x:sheetData/><x:hyperlinks><x:hyperlink ref="C3"/></x:hyperlinks></x:worksheet>"#;
        assert_eq!(
            last_element(xml, "hyperlinks").unwrap(),
            br#"<x:hyperlinks><x:hyperlink ref="C3"/></x:hyperlinks>"#
        );
        assert!(last_element(
            b"<a>text about hyperlinks and :hyperlinks </a>",
            "hyperlinks"
        )
        .is_none());
    }

    #[test]
    fn codes_as_the_page_shows_them() {
        assert_eq!(
            sections(
                "&LHeader - Corporate&C&\"Arial,Bold\"&14&KFF0000Page &P of &N&R&A &&  Co",
                "Q1"
            ),
            ["Header - Corporate", "Page [Page] of [Pages]", "Q1 & Co"]
        );
        assert_eq!(sections("&K01+000&BPlain&B &D", "s"), ["Plain [Date]"]);
        assert!(sections("&L&C&R", "s").is_empty());
    }
}
