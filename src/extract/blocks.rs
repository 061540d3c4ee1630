//! Documents read by blocks (Word, OpenDocument text, RTF): the `Block`s their parsers
//! make, rendered as text or Markdown and served with Word's options (`mode`,
//! `max_paragraphs`, `paragraph_offset`, `query`, `max_chars`, `next`), the hidden text found
//! in them as findings placed by block, and the list labels they number with.

use crate::envelope::{close_truncated, take_blocks, Extraction, Next, Taken};
use crate::error::ApiError;
use crate::options::{HiddenText, Options};
use crate::report::Report;

/// One unit of output, counted by `max_paragraphs`.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Para(String),
    /// A heading: its Markdown level (1 for the title), the list level of its number
    /// (plain text indents it like a list item), and its text with that number.
    Heading(u8, u32, String),
    /// A list item: its level (0-based), its label (`2.3.1.`, `b)`, `•`; empty for a
    /// level without one), whether that is a bullet, and its text.
    Item {
        level: u32,
        label: String,
        bullet: bool,
        text: String,
    },
    Table(Vec<Vec<String>>),
    /// `--- Headers ---` and the like.
    Marker(String),
    /// A chart, as `chart::read` writes it (a block, like a table).
    Chart(String),
}

pub fn letters(mut n: u32) -> String {
    let mut s = Vec::new();
    while n > 0 {
        n -= 1;
        s.push((b'A' + (n % 26) as u8) as char);
        n /= 26;
    }
    s.iter().rev().collect()
}

/// Roman numerals up to 3999 (past that, Word writes the number in digits too: a damaged
/// `start` of four billion once meant four million M's per list item).
pub fn roman(mut n: u32) -> String {
    if n >= 4000 {
        return n.to_string();
    }
    let table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut s = String::new();
    for (v, r) in table {
        while n >= v {
            s.push_str(r);
            n -= v;
        }
    }
    s
}

/// A list label before its text (nothing for an empty label).
pub fn join_label(label: &str, text: &str) -> String {
    if label.is_empty() {
        text.to_string()
    } else {
        format!("{label} {text}")
    }
}

impl Block {
    /// The text of a paragraph-like block as plain text shows it (list items indented two
    /// spaces a level, with their label).
    pub fn plain(&self) -> String {
        match self {
            Block::Para(p) => p.clone(),
            Block::Heading(_, indent, p) => format!("{}{p}", "  ".repeat(*indent as usize)),
            Block::Item {
                level, label, text, ..
            } => format!(
                "{}{}",
                "  ".repeat(*level as usize),
                join_label(label, text)
            ),
            Block::Marker(m) | Block::Chart(m) => m.clone(),
            Block::Table(rows) => rows
                .iter()
                .map(|r| r.join(" | "))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// Whether it is a paragraph of the text (a heading and a list item are).
    pub fn is_paragraph(&self) -> bool {
        matches!(
            self,
            Block::Para(_) | Block::Heading(..) | Block::Item { .. }
        )
    }
}

/// Render blocks as Markdown: a heading's level in `#`s, list items as `-` or their
/// number (a label Markdown has no list for — `b)`, `2.3.1.` — stays in the item's
/// text), tables as GFM pipe tables; blocks apart by a blank line, list items by a line.
pub fn render_markdown(blocks: &[Block], with_tables: bool) -> Vec<String> {
    let mut out = Vec::with_capacity(blocks.len());
    for (i, b) in blocks.iter().enumerate() {
        let item = |b: Option<&Block>| matches!(b, Some(Block::Item { .. }));
        let gap = if item(Some(b)) && item(blocks.get(i + 1)) {
            "\n"
        } else {
            "\n\n"
        };
        let s = match b {
            Block::Para(p) if p.trim().is_empty() => String::new(),
            Block::Para(p) => format!("{}{gap}", p.trim_end()),
            Block::Heading(h, _, t) => format!("{} {}{gap}", "#".repeat(*h as usize), t.trim()),
            Block::Item {
                level,
                label,
                bullet,
                text,
            } => {
                let indent = "    ".repeat(*level as usize);
                let number = label
                    .strip_suffix(['.', ')'])
                    .filter(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
                match number {
                    Some(n) if !bullet => format!("{indent}{n}. {}{gap}", text.trim()),
                    _ if *bullet || label.is_empty() => format!("{indent}- {}{gap}", text.trim()),
                    _ => format!("{indent}- {label} {}{gap}", text.trim()),
                }
            }
            Block::Marker(m) => format!("--- {m} ---{gap}"),
            Block::Chart(c) if with_tables => format!("{}{gap}", c.trim_end()),
            Block::Table(rows) if with_tables => {
                format!("{}{gap}", super::markdown::pipe_table_of(rows).trim_end())
            }
            Block::Chart(_) | Block::Table(_) => String::new(),
        };
        out.push(s);
    }
    out
}

/// Which blocks are running headers or footers: a `Headers` or `Footers` marker and what
/// stands after it, up to the next marker.
fn furniture(blocks: &[Block]) -> Vec<bool> {
    let mut inside = false;
    blocks
        .iter()
        .map(|b| {
            if let Block::Marker(m) = b {
                inside = matches!(m.trim(), "Headers" | "Footers");
            }
            inside
        })
        .collect()
}

/// The typed blocks of `blocks[range]`: what stands after a `Headers`, `Footnotes` or
/// `Comments` marker is of that part (a header's paragraph a header block, a note's a
/// note), the part named by the last marker before it, even one before the range.
pub fn to_model(blocks: &[Block], range: std::ops::Range<usize>) -> Vec<crate::model::Block> {
    use crate::model::{Block as B, Content as C};
    let part_of = |m: &str| m.trim().to_lowercase().replace(' ', "_");
    let mut part: Option<String> = blocks[..range.start].iter().rev().find_map(|b| match b {
        Block::Marker(m) => Some(part_of(m)),
        _ => None,
    });
    let mut out = Vec::with_capacity(range.len());
    for b in &blocks[range] {
        let p = part.as_deref();
        let text = || match b {
            Block::Para(t) | Block::Heading(_, _, t) => t.trim().to_string(),
            Block::Item { text, .. } => text.trim().to_string(),
            _ => String::new(),
        };
        let content = match b {
            Block::Marker(m) => {
                part = Some(part_of(m));
                continue;
            }
            Block::Para(t) if t.trim().is_empty() => continue,
            Block::Para(_) | Block::Heading(..) | Block::Item { .. }
                if matches!(p, Some("headers")) =>
            {
                C::Header { text: text() }
            }
            Block::Para(_) | Block::Heading(..) | Block::Item { .. }
                if matches!(p, Some("footers")) =>
            {
                C::Footer { text: text() }
            }
            Block::Para(_) | Block::Heading(..) | Block::Item { .. }
                if matches!(p, Some("footnotes" | "endnotes" | "comments")) =>
            {
                C::Note {
                    text: text(),
                    author: None,
                }
            }
            Block::Para(_) => C::Paragraph { text: text() },
            Block::Heading(level, _, _) => C::Heading {
                level: *level,
                text: text(),
            },
            Block::Item { level, label, .. } => C::ListItem {
                level: *level,
                label: label.clone(),
                text: text(),
            },
            Block::Table(rows) => C::Table {
                rows: rows.clone(),
                // Word's repeated header rows are not read yet: none marked.
                header_rows: 0,
                spans: Vec::new(),
            },
            Block::Chart(c) => C::Chart {
                text: c.trim_end().to_string(),
            },
        };
        out.push(B::in_part(content, p));
    }
    out
}

/// Render blocks; table numbering continues from `first_table`.
pub fn render(blocks: &[Block], first_table: usize, with_tables: bool) -> Vec<String> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut t = first_table;
    for b in blocks {
        match b {
            Block::Para(_) | Block::Heading(..) | Block::Item { .. } => {
                out.push(format!("{}\n", b.plain()))
            }
            Block::Marker(m) => out.push(format!("--- {m} ---\n")),
            Block::Chart(c) => out.push(if with_tables {
                c.clone()
            } else {
                String::new()
            }),
            Block::Table(rows) => {
                t += 1;
                if with_tables {
                    let mut s = format!("--- Table {t} ---\n");
                    for r in rows {
                        s.push_str(&r.join(" | "));
                        s.push('\n');
                    }
                    out.push(s);
                } else {
                    out.push(String::new());
                }
            }
        }
    }
    out
}

/// Hidden text of a document read by blocks (Word, OpenDocument text) in the blocks the
/// read returned, as findings placed by block: (block, kind, how, text, never in the
/// text). A comment stays in the text whatever `mode` says; the rest is left out by `drop`.
pub fn block_findings<'a>(
    blocks: usize,
    hidden: impl Iterator<
        Item = (
            usize,
            crate::findings::FindingKind,
            &'static str,
            &'a str,
            bool,
        ),
    >,
    req: &Options,
    next: Option<&Next>,
    mode: HiddenText,
) -> Result<Vec<crate::findings::Finding>, ApiError> {
    let start = req.paragraph_offset;
    // A block longer than max_chars is shown only in part: `next` reads it again.
    let end = next
        .and_then(|n| n.paragraph_offset)
        .map_or(blocks, |n| n as usize)
        .max(start + usize::from(next.is_some_and(|n| n.max_chars.is_some())));
    let mut out = Vec::new();
    for (at, kind, how, text, outside) in hidden.filter(|h| (start..end).contains(&h.0)) {
        for mut f in crate::findings::hidden(
            kind,
            Some(how),
            crate::findings::Severity::Low,
            text,
            0,
            // Not in the text returned: a picture's description, or what `drop` left out.
            outside || (mode == HiddenText::Drop && kind != crate::findings::FindingKind::Comment),
        ) {
            f.place.paragraph = Some(at as u64);
            out.push(f);
        }
    }
    Ok(out)
}

/// A read of a document's blocks (Word, OpenDocument text): `mode`, `max_paragraphs` and
/// `paragraph_offset`, `query`, `max_chars`, with `next` where it stops.
pub fn serve_blocks(
    blocks: &[Block],
    paragraphs: usize,
    tables: usize,
    req: &Options,
) -> Result<Extraction, ApiError> {
    {
        let max_chars = req.max_chars;
        let query = req.query.clone();
        let with_tables = req.mode != Some(crate::options::DocxMode::Text);
        let budget = req.max_paragraphs;
        let start = req.paragraph_offset;
        if start > 0 && start >= blocks.len() {
            return Err(ApiError::out_of_range(format!(
                "paragraph_offset {start} but the document has {} blocks",
                blocks.len()
            )));
        }
        let tables_before = blocks[..start]
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        let mut rendered = if req.markdown() {
            render_markdown(&blocks[start..], with_tables)
        } else {
            render(&blocks[start..], tables_before, with_tables)
        };
        // Markdown leaves the running headers and footers out unless `furniture: "keep"`
        // (their blocks render empty, so block offsets keep their meaning).
        let mut furniture_left_out = false;
        if req.markdown() && !req.keep_furniture() {
            for (r, furniture) in rendered.iter_mut().zip(&furniture(blocks)[start..]) {
                if *furniture && !r.is_empty() {
                    r.clear();
                    furniture_left_out = true;
                }
            }
        }
        let extra = Report {
            paragraphs: Some(paragraphs as u64),
            tables: Some(tables as u64),
            blocks: Some(blocks.len() as u64),
            ..Default::default()
        };

        if let Some(q) = query {
            // Search everything from the offset; line numbers are the output's lines.
            return Ok(crate::envelope::query_answer(
                &rendered.concat(),
                &q,
                max_chars,
                extra,
            ));
        }

        // Whole blocks, within both budgets.
        let full: u64 = rendered.iter().map(|r| r.chars().count() as u64).sum();
        let mut ex = Extraction {
            char_count: full,
            report: extra,
            ..Default::default()
        };
        if furniture_left_out {
            ex.warnings.push(
                "running headers and footers left out of the Markdown; furniture: \"keep\" keeps them"
                    .into(),
            );
        }
        let Taken {
            text,
            count: taken,
            oversize,
        } = take_blocks(&rendered, max_chars, budget);
        if req.json() {
            // The blocks taken whole (one shown only in part is read again by `next`).
            let mut typed = to_model(blocks, start..start + taken);
            if !with_tables {
                typed.retain(|b| {
                    !matches!(
                        b.content,
                        crate::model::Content::Table { .. } | crate::model::Content::Chart { .. }
                    )
                });
            }
            ex.document = Some(crate::model::Document {
                units: vec![crate::model::UnitBlocks::new(
                    crate::model::Unit::document(),
                    typed,
                )],
            });
        }
        if taken == rendered.len() {
            ex.text = text;
            return Ok(ex);
        }
        let mut next = Next::default();
        next.paragraph_offset = Some((start + taken) as u64);
        if let Some(needed) = oversize {
            // One block longer than max_chars: its start is shown; `next` reads it whole.
            next.max_chars = Some(needed as u64);
            ex.warnings
                .push("a single block is longer than max_chars; `next` reads it whole".into());
        } else if taken >= budget {
            ex.warnings.push(format!(
                "stopped after max_paragraphs ({budget}); `next` reads on"
            ));
        }
        ex.truncated = true;
        ex.text = close_truncated(text, full);
        ex.next = Some(next);
        Ok(ex)
    }
}
