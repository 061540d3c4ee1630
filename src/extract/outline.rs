//! The outline of a typed document: its headings (a PDF's bookmarks among them: a line a
//! bookmark names is a heading of the bookmark's depth) as a tree, each entry with an id
//! that names it in `section`, its level, title, heading path and unit; and a section's
//! blocks, rendered as the read asked (`section`: one entry, from its heading to the next
//! heading of its level or above).
//!
//! Ids are positions in the tree (`s2.1`: the first entry under the second top-level
//! one), so the entries a read from the document's start shows keep the ids the whole
//! document gives them. A heading's level says where it hangs: under the nearest heading
//! before it of a smaller level.

use crate::error::{ApiError, ErrorCode};
pub use crate::model::OutlineEntry;
use crate::model::{plain_text, Block, Content, Document, Unit, UnitKind};

/// An entry and where its heading block is: (unit index, block index) in the document.
#[derive(Debug, Clone)]
pub struct Located {
    pub entry: OutlineEntry,
    pub at: (usize, usize),
}

/// Whether a block belongs to the main flow a section is made of: not a running header
/// or footer, and not a part gathered at a document's end (comments, footnotes); a page's
/// or slide's own parts (annotations, speaker notes) stay with it.
fn in_flow(b: &Block, unit: &Unit) -> bool {
    match b.part.as_deref() {
        None => true,
        Some("headers" | "footers" | "print_headers_footers") => false,
        Some(_) => matches!(unit.kind, UnitKind::Page | UnitKind::Slide),
    }
}

/// At most this many entries are made (a hostile document may hold a heading a line).
pub const MAX_ENTRIES: usize = 5_000;
/// A title is kept to this many characters (`…` after), in the outline and its paths.
const MAX_TITLE: usize = 200;

/// A heading block's level and title (one line, at most `MAX_TITLE` characters), when it
/// is an outline entry.
fn heading(b: &Block) -> Option<(u8, String)> {
    match &b.content {
        Content::Heading { level, text } if b.part.is_none() => {
            let mut title = String::new();
            for (i, w) in text.split_whitespace().enumerate() {
                if i > 0 {
                    title.push(' ');
                }
                title.push_str(w);
                if title.len() > MAX_TITLE * 4 {
                    break;
                }
            }
            if title.chars().count() > MAX_TITLE {
                title = title.chars().take(MAX_TITLE).collect::<String>() + "…";
            }
            (!title.is_empty()).then(|| ((*level).clamp(1, 9), title))
        }
        _ => None,
    }
}

/// How many headings a document has (`locate` makes at most `MAX_ENTRIES` entries).
pub fn heading_count(doc: &Document) -> usize {
    doc.units
        .iter()
        .flat_map(|u| &u.blocks)
        .filter(|b| {
            b.part.is_none()
                && matches!(&b.content, Content::Heading { text, .. } if !text.trim().is_empty())
        })
        .count()
}

/// The document's outline, in document order, each entry with where its heading is.
pub fn locate(doc: &Document) -> Vec<Located> {
    // The open entries: (level, number, children so far, title).
    let mut stack: Vec<(u8, Vec<u32>, u32, String)> = Vec::new();
    let mut top = 0u32;
    let mut out = Vec::new();
    for (ui, u) in doc.units.iter().enumerate() {
        for (bi, b) in u.blocks.iter().enumerate() {
            if out.len() == MAX_ENTRIES {
                return out;
            }
            let Some((level, title)) = heading(b) else {
                continue;
            };
            while stack.last().is_some_and(|(l, ..)| *l >= level) {
                stack.pop();
            }
            let number = match stack.last_mut() {
                Some((_, n, children, _)) => {
                    *children += 1;
                    let mut n = n.clone();
                    n.push(*children);
                    n
                }
                None => {
                    top += 1;
                    vec![top]
                }
            };
            let id = format!(
                "s{}",
                number
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(".")
            );
            let mut path: Vec<String> = stack.iter().map(|(.., t)| t.clone()).collect();
            path.push(title.clone());
            stack.push((level, number, 0, title.clone()));
            out.push(Located {
                entry: OutlineEntry {
                    id,
                    level,
                    title,
                    path,
                    unit: u.unit.clone(),
                },
                at: (ui, bi),
            });
        }
    }
    out
}

/// The outline's entries.
pub fn outline(doc: &Document) -> Vec<OutlineEntry> {
    locate(doc).into_iter().map(|l| l.entry).collect()
}

/// Text compared loosely: whitespace runs as one space, case folded.
fn loose(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A title without the number it starts with (`2.1 Sample`, `3. Results`, `IV. Scope`).
fn unnumbered(title: &str) -> &str {
    let Some((first, rest)) = title.split_once(' ') else {
        return title;
    };
    let number = first.trim_end_matches(['.', ')']);
    let numeric = !number.is_empty()
        && (number
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            || (number.len() <= 5 && number.bytes().all(|b| b"IVXLC".contains(&b))));
    if numeric {
        rest.trim_start()
    } else {
        title
    }
}

/// The entry `asked` names: its id (`s2.1`), its heading path (titles from the outermost
/// down, apart by ` > `), its title alone, or the number its title starts with (`3.2`).
/// None or several: an error that lists what there is.
pub fn resolve(outline: &[Located], asked: &str) -> Result<usize, ApiError> {
    let want = loose(asked);
    let by = |f: &dyn Fn(&OutlineEntry) -> bool| -> Vec<usize> {
        outline
            .iter()
            .enumerate()
            .filter(|(_, l)| f(&l.entry))
            .map(|(i, _)| i)
            .collect()
    };
    // Blank names nothing (a title of punctuation alone loosens to the same nothing).
    let blank = asked.trim().is_empty();
    let mut found = if blank {
        Vec::new()
    } else {
        by(&|e| e.id.eq_ignore_ascii_case(asked.trim()))
    };
    if found.is_empty() && !blank {
        let parts: Vec<String> = asked.split('>').map(loose).collect();
        found = by(&|e| {
            parts.len() <= e.path.len()
                && e.path[e.path.len() - parts.len()..]
                    .iter()
                    .zip(&parts)
                    .all(|(t, p)| loose(t) == *p)
        });
    }
    if found.is_empty()
        && !want.is_empty()
        && want
            .trim_end_matches('.')
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        // The document's own numbering: `3.2` names `3.2 Results` (or `3.2. Results`).
        let number = want.trim_end_matches('.');
        found = by(&|e| {
            let t = loose(&e.title);
            t.strip_prefix(number).is_some_and(|rest| {
                rest.starts_with(' ') || (rest.starts_with(". ") && !number.ends_with('.'))
            })
        });
    }
    if found.is_empty() && !blank {
        // A title without its numbering: `Results` names `2. Results` (when only one).
        found = by(&|e| loose(unnumbered(&e.title)) == want);
    }
    let list = |ids: &mut dyn Iterator<Item = &Located>| {
        ids.take(12)
            .map(|l| format!("{} \"{}\"", l.entry.id, l.entry.title))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found.as_slice() {
        [one] => Ok(*one),
        [] if outline.is_empty() => Err(ApiError::new(
            ErrorCode::OutOfRange,
            format!("no section \"{asked}\": this document has no headings, so no outline"),
        )
        .with_hint("Read it without section (by pages, lines or budget and next).")),
        [] => Err(ApiError::new(
            ErrorCode::OutOfRange,
            format!(
                "no section \"{asked}\" in this document's outline ({} entries: {}{})",
                outline.len(),
                list(&mut outline.iter()),
                if outline.len() > 12 { ", …" } else { "" }
            ),
        )
        .with_hint(
            "Name an entry by its id (s2.1), its heading path (Methods > Sample) or its title; the outline is in output \"json\" and in MCP's document_info.",
        )),
        many => Err(ApiError::invalid_option(format!(
            "section \"{asked}\" names {} entries: {}",
            many.len(),
            list(&mut many.iter().map(|&i| &outline[i]))
        ))
        .with_hint("Name one by its id (s2.1) or its whole heading path (Methods > Sample).")),
    }
}

/// The blocks of entry `i`: from its heading to the next heading of its level or above
/// (or the document's end), in order, each with its unit's index; the main flow only.
pub fn section_blocks<'d>(
    doc: &'d Document,
    outline: &[Located],
    i: usize,
) -> Vec<(usize, &'d Block)> {
    let start = outline[i].at;
    let level = outline[i].entry.level;
    let end = outline[i + 1..]
        .iter()
        .find(|l| l.entry.level <= level)
        .map(|l| l.at);
    let mut out = Vec::new();
    for (ui, u) in doc.units.iter().enumerate().skip(start.0) {
        for (bi, b) in u.blocks.iter().enumerate() {
            if (ui, bi) < start {
                continue;
            }
            if end.is_some_and(|e| (ui, bi) >= e) {
                return out;
            }
            if in_flow(b, &u.unit) {
                out.push((ui, b));
            }
        }
    }
    out
}

/// The line that marks a unit's start in a read's text, as the extractors write it (none
/// for the document's).
pub fn marker(unit: &Unit) -> Option<String> {
    Some(match (unit.kind, unit.number, unit.name.as_deref()) {
        (UnitKind::Document, ..) => return None,
        (UnitKind::Page, Some(n), _) => format!("--- Page {n} ---\n"),
        (UnitKind::Slide, Some(n), _) => format!("--- Slide {n} ---\n"),
        (UnitKind::Chapter, Some(n), Some(t)) => format!("--- Chapter {n}: {t} ---\n"),
        (UnitKind::Chapter, Some(n), None) => format!("--- Chapter {n} ---\n"),
        (UnitKind::Sheet, _, Some(name)) => format!("--- Sheet: {name} ---\n"),
        _ => return None,
    })
}

/// A block as a section's text shows it: plain (`text`, `json`, `chunks`) or Markdown;
/// and whether it joins the block before it by a line break (a run of list items, lines
/// or fields) rather than a blank line.
pub fn rendered(b: &Block, markdown: bool) -> Option<(String, bool)> {
    if !markdown {
        let text = plain_text(&b.content);
        let line = matches!(
            b.content,
            Content::ListItem { .. } | Content::Line { .. } | Content::Field { .. }
        );
        let text = match &b.content {
            Content::ListItem { label, text, .. } if !label.is_empty() => {
                format!("{label} {}", text.trim())
            }
            _ => text.trim().to_string(),
        };
        return (!text.is_empty()).then_some((text, line));
    }
    crate::extract::chunks::markdown(&b.content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UnitBlocks;

    fn doc() -> Document {
        let h = |level, t: &str| {
            Block::new(Content::Heading {
                level,
                text: t.into(),
            })
        };
        Document {
            units: vec![
                UnitBlocks::new(
                    Unit::numbered(UnitKind::Page, 1),
                    vec![
                        h(1, "Report  title"),
                        Block::paragraph("intro"),
                        h(2, "1 Methods"),
                        Block::paragraph("m"),
                    ],
                ),
                UnitBlocks::new(
                    Unit::numbered(UnitKind::Page, 2),
                    vec![
                        h(3, "1.1 Sample"),
                        Block::paragraph("s"),
                        h(2, "2 Results"),
                        Block::paragraph("r"),
                    ],
                ),
            ],
        }
    }

    #[test]
    fn ids_and_paths_follow_levels() {
        let o = outline(&doc());
        let ids: Vec<&str> = o.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["s1", "s1.1", "s1.1.1", "s1.2"]);
        assert_eq!(o[0].title, "Report title");
        assert_eq!(o[2].path, ["Report title", "1 Methods", "1.1 Sample"]);
        assert_eq!(o[2].unit, Unit::numbered(UnitKind::Page, 2));
    }

    #[test]
    fn sections_resolve_and_end_at_their_level() {
        let d = doc();
        let l = locate(&d);
        assert_eq!(resolve(&l, "s1.1").unwrap(), 1);
        assert_eq!(resolve(&l, "report title > 1 methods").unwrap(), 1);
        assert_eq!(resolve(&l, "2 Results").unwrap(), 3);
        assert_eq!(resolve(&l, "1.1").unwrap(), 2);
        assert_eq!(resolve(&l, "results").unwrap(), 3);
        assert_eq!(resolve(&l, "s9").unwrap_err().code, ErrorCode::OutOfRange);
        let texts = |i| {
            section_blocks(&d, &l, i)
                .iter()
                .map(|(_, b)| plain_text(&b.content))
                .collect::<Vec<_>>()
        };
        // Methods takes its subsection over the page break, and stops at Results.
        assert_eq!(texts(1), ["1 Methods", "m", "1.1 Sample", "s"]);
        assert_eq!(texts(3), ["2 Results", "r"]);
        assert_eq!(texts(0).len(), 8);
    }
}
