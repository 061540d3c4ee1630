//! EPUB (2 and 3): the chapters in spine order, each under `--- Chapter N: TITLE ---`.
//! The package document is found through `META-INF/container.xml`; titles come from the
//! table of contents (EPUB 3 navigation document, else the EPUB 2 NCX), else the
//! chapter's first heading. `chapters` selects chapters as `pages` selects pages;
//! `query` searches the selected chapters; `max_chars` stops between chapters, with `next`.

use std::collections::HashMap;

use super::package::Package;
use super::xml::{attr, walk, Node};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{close_truncated, take_blocks, Extraction, Next, Taken};
use crate::error::{ApiError, ErrorCode};
use crate::model::{Unit, UnitKind};
use crate::options::{format_pages, Options};
use crate::report::Report;

pub struct EpubExtractor;

/// A path inside the package: `href` relative to `base_dir`, percent-decoded, without its
/// fragment.
fn resolve(base_dir: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or("");
    let decoded = percent_decode(href);
    super::package::resolve(base_dir, &decoded)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// What the package document says: title, chapters in spine order, where the table of
/// contents is.
struct Book {
    title: Option<String>,
    /// The package's Dublin Core metadata.
    meta: crate::report::Metadata,
    spine: Vec<String>,
    nav: Option<String>,
    ncx: Option<String>,
}

fn read_opf(pkg: &mut Package) -> Result<Book, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let corrupt = |what: &str| ApiError::new(ErrorCode::Corrupt, format!("the EPUB {what}"));
    let container = pkg
        .read("META-INF/container.xml")?
        .ok_or_else(|| corrupt("has no META-INF/container.xml"))?;
    let mut opf_path = None;
    walk(&container, depth, |n| {
        if let Node::Open("rootfile", a) = n {
            if opf_path.is_none() {
                opf_path = attr(a, "full-path").map(str::to_string);
            }
        }
    })?;
    let opf_path = opf_path.ok_or_else(|| corrupt("names no package document"))?;
    let opf = pkg
        .read(&opf_path)?
        .ok_or_else(|| corrupt(&format!("package document {opf_path} is missing")))?;
    let base = dir_of(&opf_path).to_string();
    let mut manifest: HashMap<String, (String, String, String)> = HashMap::new();
    let mut spine_ids = Vec::new();
    let mut toc_id = None;
    let (mut title, mut in_title) = (None::<String>, false);
    // Dublin Core elements of `<metadata>`: (element, its text) in order.
    let mut dc: Vec<(&'static str, String)> = Vec::new();
    let (mut in_meta, mut field) = (false, None::<&'static str>);
    const DC: [&str; 7] = [
        "creator",
        "subject",
        "description",
        "language",
        "publisher",
        "date",
        "identifier",
    ];
    walk(&opf, depth, |n| match n {
        Node::Open("metadata", _) => in_meta = true,
        Node::Close("metadata") => in_meta = false,
        Node::Open(name, _) if in_meta && DC.contains(&name) => {
            if let Some(d) = DC.iter().copied().find(|d| *d == name) {
                field = Some(d);
                dc.push((d, String::new()));
            }
        }
        Node::Close(name) if field == Some(name) => field = None,
        Node::Text(t) if field.is_some() => {
            if let Some((_, s)) = dc.last_mut() {
                s.push_str(t);
            }
        }
        Node::Open("title", _) if title.is_none() => {
            in_title = true;
            title = Some(String::new());
        }
        Node::Close("title") => in_title = false,
        Node::Text(t) if in_title => {
            if let Some(s) = title.as_mut() {
                s.push_str(t);
            }
        }
        Node::Open("item", a) => {
            if let (Some(id), Some(href)) = (attr(a, "id"), attr(a, "href")) {
                manifest.insert(
                    id.to_string(),
                    (
                        resolve(&base, href),
                        attr(a, "media-type").unwrap_or("").to_string(),
                        attr(a, "properties").unwrap_or("").to_string(),
                    ),
                );
            }
        }
        Node::Open("spine", a) => toc_id = attr(a, "toc").map(str::to_string),
        Node::Open("itemref", a) => {
            if let Some(id) = attr(a, "idref") {
                spine_ids.push(id.to_string());
            }
        }
        _ => {}
    })?;
    // Each document once: a spine that names one again (hostile, or broken) would read it
    // again and again.
    let mut listed = std::collections::HashSet::new();
    let spine = spine_ids
        .iter()
        .filter_map(|id| manifest.get(id))
        .filter(|(_, mt, _)| mt.contains("html") || mt.is_empty())
        .map(|(p, _, _)| p.clone())
        .filter(|p| listed.insert(p.clone()))
        .collect();
    let nav = manifest
        .values()
        .find(|(_, _, props)| props.split_whitespace().any(|p| p == "nav"))
        .map(|(p, _, _)| p.clone());
    let ncx = toc_id
        .and_then(|id| manifest.get(&id).map(|(p, _, _)| p.clone()))
        .or_else(|| {
            manifest
                .values()
                .find(|(_, mt, _)| mt == "application/x-dtbncx+xml")
                .map(|(p, _, _)| p.clone())
        });
    let title = title
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    let all = |name: &str, sep: &str| {
        let v: Vec<&str> = dc
            .iter()
            .filter(|(n, v)| *n == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim())
            .collect();
        (!v.is_empty()).then(|| v.join(sep))
    };
    let first = |name: &str| {
        dc.iter()
            .find(|(n, v)| *n == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string())
    };
    let meta = crate::report::Metadata {
        title: title.clone(),
        author: all("creator", "; "),
        subject: all("subject", ", "),
        description: first("description"),
        language: first("language"),
        publisher: first("publisher"),
        identifier: first("identifier"),
        created: first("date"),
        ..Default::default()
    };
    Ok(Book {
        title,
        meta,
        spine,
        nav,
        ncx,
    })
}

/// Chapter titles by file, from the table of contents: the first entry pointing into each.
fn toc_titles(pkg: &mut Package, book: &Book) -> Result<HashMap<String, String>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut titles = HashMap::new();
    if let Some(nav) = &book.nav {
        if let Some(x) = pkg.read(nav)? {
            let base = dir_of(nav).to_string();
            // Links inside <nav epub:type="toc">.
            let (mut in_toc, mut nav_depth) = (false, 0usize);
            let mut link: Option<(String, String)> = None;
            walk(&x, depth, |n| match n {
                Node::Open("nav", a) => {
                    nav_depth += 1;
                    if attr(a, "type").is_some_and(|t| t.split_whitespace().any(|t| t == "toc")) {
                        in_toc = true;
                    }
                }
                Node::Close("nav") => {
                    nav_depth = nav_depth.saturating_sub(1);
                    if nav_depth == 0 {
                        in_toc = false;
                    }
                }
                Node::Open("a", a) if in_toc => {
                    link = attr(a, "href").map(|h| (resolve(&base, h), String::new()))
                }
                Node::Text(t) => {
                    if let Some((_, s)) = link.as_mut() {
                        s.push_str(t);
                    }
                }
                Node::Close("a") => {
                    if let Some((href, s)) = link.take() {
                        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
                        if !s.is_empty() {
                            titles.entry(href).or_insert(s);
                        }
                    }
                }
                _ => {}
            })?;
        }
    }
    if titles.is_empty() {
        if let Some(ncx) = &book.ncx {
            if let Some(x) = pkg.read(ncx)? {
                let base = dir_of(ncx).to_string();
                let (mut label, mut in_text) = (None::<String>, false);
                walk(&x, depth, |n| match n {
                    Node::Open("navLabel", _) => label = Some(String::new()),
                    Node::Open("text", _) => in_text = true,
                    Node::Close("text") => in_text = false,
                    Node::Text(t) if in_text => {
                        if let Some(l) = label.as_mut() {
                            l.push_str(t);
                        }
                    }
                    Node::Open("content", a) => {
                        if let (Some(src), Some(l)) = (attr(a, "src"), label.take()) {
                            let l = l.split_whitespace().collect::<Vec<_>>().join(" ");
                            if !l.is_empty() {
                                titles.entry(resolve(&base, src)).or_insert(l);
                            }
                        }
                    }
                    _ => {}
                })?;
            }
        }
    }
    Ok(titles)
}

/// The text of the first h1–h3 of an XHTML chapter, for a title the contents do not give.
fn first_heading(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let start = ["<h1", "<h2", "<h3"]
        .iter()
        .filter_map(|h| lower.find(h))
        .min()?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</h")?;
    let text = super::html::to_text(&html[open_end..close]);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

impl Extractor for EpubExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars;
        let query = req.query.clone();
        let mut pkg = Package::open(&input.path, limits.package)?;
        let book = read_opf(&mut pkg)?;
        let titles = toc_titles(&mut pkg, &book)?;
        let total = book.spine.len() as u64;
        let mut warnings = Vec::new();
        let selected = req.select_chapters(total, "book", &mut warnings)?;
        // What a reader hides (`display:none`, …): left out as a browser does, unless
        // `hidden_text` keeps or marks it; listed by chapter and line either way.
        use super::html::HiddenMode;
        let mode = match req.hidden_text {
            Some(crate::options::HiddenText::Keep) => HiddenMode::Keep,
            Some(crate::options::HiddenText::Mark) => HiddenMode::Mark,
            _ => HiddenMode::Drop,
        };
        let mut hidden: Vec<(u64, super::html::Hidden)> = Vec::new();
        let mut blocks: Vec<(u64, String)> = Vec::with_capacity(selected.len());
        let mut units: Vec<(Unit, usize)> = Vec::with_capacity(selected.len());
        let mut typed_units: Vec<crate::model::UnitBlocks> = Vec::new();
        // Chapters the deadline left unread (`next` reads them).
        let mut unread: Vec<u64> = Vec::new();
        for (i, &n) in selected.iter().enumerate() {
            if !blocks.is_empty() && input.deadline.passed() {
                unread = selected[i..].to_vec();
                break;
            }
            let path = &book.spine[(n - 1) as usize];
            let Some(bytes) = pkg.read(path)? else {
                warnings.push(format!("chapter {n} ({path}) is missing from the package"));
                continue;
            };
            let html = String::from_utf8_lossy(&bytes);
            let title = titles.get(path).cloned().or_else(|| first_heading(&html));
            let mut block = match &title {
                Some(t) => format!("--- Chapter {n}: {t} ---\n"),
                None => format!("--- Chapter {n} ---\n"),
            };
            let unit = Unit {
                kind: UnitKind::Chapter,
                number: Some(n),
                name: title,
            };
            let marker = block.len();
            let mut rendered = if req.json() {
                super::html::render_blocks(&html, mode)
            } else {
                super::html::render_as(&html, false, mode)
            };
            if req.json() {
                let typed = std::mem::take(&mut rendered.blocks)
                    .into_iter()
                    .map(|(_, b)| b)
                    .collect();
                typed_units.push(crate::model::UnitBlocks::new(unit.clone(), typed));
            }
            if !rendered.text.trim().is_empty() {
                block.push_str(&rendered.text);
            }
            hidden.extend(rendered.hidden.into_iter().map(|h| (n, h)));
            blocks.push((n, block));
            units.push((unit, marker));
        }
        let report = |shown: &[u64]| Report {
            total_chapters: Some(total),
            chapter_range_read: Some(format_pages(shown)),
            title: book.title.clone(),
            metadata: Some(book.meta.clone()),
            ..Default::default()
        };
        // The hidden elements of the chapters read, placed by chapter and line (after the
        // chapter's marker line, as the text's units count).
        let findings_of = |chapters: &[u64]| -> Vec<crate::findings::Finding> {
            let of_read: Vec<(&super::html::Hidden, u64, u64)> = hidden
                .iter()
                .filter(|(n, _)| chapters.contains(n))
                .map(|(n, h)| (h, *n, h.line as u64))
                .collect();
            let mut out = Vec::new();
            for (h, n, line) in of_read {
                for mut f in super::html::hidden_findings([(h, line)], mode) {
                    f.place.chapter = Some(n);
                    out.push(f);
                }
            }
            out
        };
        let all_hidden: Vec<super::html::Hidden> = hidden.iter().map(|(_, h)| h.clone()).collect();
        warnings.extend(super::html::left_out_warning(
            &all_hidden,
            mode,
            "a reader does not show",
            "`hidden_text: \"keep\"` or `\"mark\"` brings them back",
        ));
        if !unread.is_empty() {
            warnings.push(format!(
                "the deadline passed after {} of {} chapters; `next` reads the rest",
                blocks.len(),
                selected.len()
            ));
        }
        if let Some(q) = query {
            let all: String = blocks.iter().map(|(_, b)| b.as_str()).collect();
            let read: Vec<u64> = blocks.iter().map(|(n, _)| *n).collect();
            let mut ex = crate::envelope::query_answer(&all, &q, max_chars, report(&read));
            if !unread.is_empty() {
                ex.report.partial = Some(true);
                ex.next.get_or_insert_with(Next::default).chapters = Some(format_pages(&unread));
            }
            ex.warnings.splice(0..0, warnings);
            ex.findings = findings_of(&selected);
            return Ok(ex);
        }
        let char_count: usize = blocks.iter().map(|(_, b)| b.chars().count()).sum();
        let texts: Vec<&str> = blocks.iter().map(|(_, b)| b.as_str()).collect();
        let Taken {
            text,
            count,
            oversize,
        } = take_blocks(&texts, max_chars, usize::MAX);
        let shown: Vec<u64> = blocks[..count].iter().map(|(n, _)| *n).collect();
        let mut rest: Vec<u64> = blocks[count..].iter().map(|(n, _)| *n).collect();
        let cut_by_time = rest.is_empty() && !unread.is_empty();
        rest.extend(&unread);
        let mut ex = Extraction {
            char_count: char_count as u64,
            report: report(&shown),
            findings: findings_of(&shown),
            units: crate::model::block_spans(
                units
                    .into_iter()
                    .zip(&blocks)
                    .map(|((unit, marker), (_, b))| (unit, marker, b.len())),
                text.len(),
            ),
            ..Default::default()
        };
        if rest.is_empty() {
            ex.text = text;
        } else {
            let mut next = Next::default();
            next.chapters = Some(format_pages(&rest));
            if cut_by_time {
                ex.report.partial = Some(true);
            } else if let Some(needed) = oversize {
                next.max_chars = Some(needed as u64);
                warnings.push(format!(
                    "chapter {} alone is longer than max_chars; `next` reads it whole",
                    rest[0]
                ));
            } else {
                warnings.push("stopped between chapters at max_chars; `next` reads on".into());
            }
            ex.truncated = true;
            ex.text = close_truncated(text, char_count as u64);
            ex.next = Some(next);
        }
        ex.warnings = warnings;
        if req.json() {
            ex.document = Some(crate::model::Document { units: typed_units });
        }
        Ok(ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_resolve_inside_the_package() {
        assert_eq!(
            resolve("OEBPS", "Text/ch%201.xhtml#p3"),
            "OEBPS/Text/ch 1.xhtml"
        );
        assert_eq!(
            resolve("OEBPS/Text", "../Styles/a.css"),
            "OEBPS/Styles/a.css"
        );
        assert_eq!(resolve("", "ch1.xhtml"), "ch1.xhtml");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%e4%b8%ad%zz"), "中%zz");
    }

    #[test]
    fn first_heading_of_a_chapter() {
        let h = "<html><head><title>x</title></head><body><h2 class=\"c\">The <i>Second</i> Part</h2><p>t</p></body></html>";
        assert_eq!(first_heading(h).as_deref(), Some("The Second Part"));
        assert_eq!(first_heading("<p>none</p>"), None);
    }
}
