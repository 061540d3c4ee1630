//! The document's units as structure, not as text: which page, slide, sheet or chapter
//! each part of a read's text is, recorded by the extractor where it writes the part.
//! Search, findings and `include_units` take their places from here; nothing splits the
//! rendered text at lines that look like `--- Page N ---` (a document may hold such a line
//! itself). A leaf: it uses nothing else of the crate.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// What a unit of a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// The whole text of a format without pages (text, HTML, Word, RTF, e-mail, a single
    /// image, an answer to a query).
    Document,
    /// A PDF page, a TIFF page.
    Page,
    /// A PowerPoint or OpenDocument slide.
    Slide,
    /// A worksheet or chart sheet.
    Sheet,
    /// An EPUB chapter.
    Chapter,
}

impl UnitKind {
    /// The kind's name, as search stores it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Document => "document",
            Self::Page => "page",
            Self::Slide => "slide",
            Self::Sheet => "sheet",
            Self::Chapter => "chapter",
        }
    }
}

/// Which unit: its kind, its number (pages, slides, chapters) or name (sheets; a
/// chapter's title).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Unit {
    pub kind: UnitKind,
    /// The page, slide or chapter number (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// The sheet's name, the chapter's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Unit {
    pub fn document() -> Self {
        Self {
            kind: UnitKind::Document,
            number: None,
            name: None,
        }
    }

    pub fn numbered(kind: UnitKind, number: u64) -> Self {
        Self {
            kind,
            number: Some(number),
            name: None,
        }
    }

    pub fn named(kind: UnitKind, name: impl Into<String>) -> Self {
        Self {
            kind,
            number: None,
            name: Some(name.into()),
        }
    }

    /// A unit as search stored it (`kind`, `key`).
    pub fn stored(kind: &str, key: &str) -> Self {
        let kind = match kind {
            "page" => UnitKind::Page,
            "slide" => UnitKind::Slide,
            "sheet" => return Self::named(UnitKind::Sheet, key),
            "chapter" => UnitKind::Chapter,
            _ => return Self::document(),
        };
        match key.parse() {
            Ok(n) => Self::numbered(kind, n),
            Err(_) => Self::document(),
        }
    }

    /// Its key as search stores it: the number, the sheet's name, or `""`.
    pub fn key(&self) -> String {
        match (self.kind, self.number, &self.name) {
            (UnitKind::Sheet, _, Some(name)) => name.clone(),
            (_, Some(n), _) => n.to_string(),
            _ => String::new(),
        }
    }
}

/// One block of a unit's content, typed (`output: "json"`): what it is, its text, and
/// where the format says it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Block {
    #[serde(flatten)]
    pub content: Content,
    /// The part of the document outside its main flow the block comes from, where it
    /// does (`headers`, `footers`, `footnotes`, `endnotes`, `comments`, `notes`,
    /// `annotations`, `links`, `form_fields`, `attachments`, `layout_and_master`,
    /// `print_headers_footers`); absent in the main flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Where the block stands on its page, where the format knows it (a PDF's text
    /// layer): in points from the page's top-left corner, `[left, top, right, bottom]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bbox: Option<[f32; 4]>,
}

/// A table cell over more than one row or column: its top-left place (0-based, in
/// `rows`) and how many rows and columns it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CellSpan {
    pub row: u32,
    pub column: u32,
    pub rows: u32,
    pub columns: u32,
}

/// A block's kind and what that kind holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Content {
    /// A heading: its level (1 for a title) and text.
    Heading {
        level: u8,
        text: String,
    },
    /// A paragraph of the text (its lines joined by `\n` where the format keeps them).
    Paragraph {
        text: String,
    },
    /// A list item: its level (0-based), its label (`2.3.1.`, `b)`, `•`: the number an
    /// ordered list gives it, as Markdown shows it; empty when its level has none) and its
    /// text.
    ListItem {
        level: u32,
        label: String,
        text: String,
    },
    /// A table: rows of cells as shown, the first `header_rows` of them its header (0
    /// where the document marks none). A cell over several rows or columns has its text in
    /// its top-left place (the places it covers are empty) and is listed in `spans`.
    Table {
        rows: Vec<Vec<String>>,
        header_rows: u32,
        /// The cells over more than one row or column (absent when there are none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        spans: Vec<CellSpan>,
    },
    /// A picture: its description (alt text) and caption where the document gives them.
    Figure {
        #[serde(skip_serializing_if = "Option::is_none")]
        alt: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        caption: Option<String>,
    },
    /// A comment, footnote, speaker note or annotation: its text and author where known.
    Note {
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        author: Option<String>,
    },
    /// A running header or footer's text.
    Header {
        text: String,
    },
    Footer {
        text: String,
    },
    /// Preformatted text (a code block), its lines as written.
    Code {
        text: String,
    },
    /// A chart, as its series and values read.
    Chart {
        text: String,
    },
    /// A named value: an e-mail's header (`From`, `Subject`), a form field.
    Field {
        name: String,
        value: String,
    },
    /// A physical line of a page as OCR read it: its box (pixels of the image read, a PDF
    /// page as rendered for OCR: left, top, right, bottom) and confidence (0–1).
    Line {
        text: String,
        #[serde(rename = "box", skip_serializing_if = "Option::is_none")]
        bbox: Option<[f32; 4]>,
        #[serde(skip_serializing_if = "Option::is_none")]
        confidence: Option<f32>,
    },
}

impl Block {
    pub fn new(content: Content) -> Self {
        Self {
            content,
            part: None,
            bbox: None,
        }
    }

    pub fn in_part(content: Content, part: Option<&str>) -> Self {
        Self {
            content,
            part: part.map(str::to_string),
            bbox: None,
        }
    }

    /// The block, placed on its page (`bbox`).
    pub fn at(mut self, bbox: Option<[f32; 4]>) -> Self {
        self.bbox = bbox;
        self
    }

    pub fn paragraph(text: impl Into<String>) -> Self {
        Self::new(Content::Paragraph { text: text.into() })
    }

    pub fn line(text: impl Into<String>) -> Self {
        Self::new(Content::Line {
            text: text.into(),
            bbox: None,
            confidence: None,
        })
    }
}

/// The paragraphs of text lines: runs of lines between blank lines, each line's end
/// (and trailing spaces) left out, its lines joined by `\n`.
pub fn paragraphs<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Block> {
    let mut out = Vec::new();
    let mut para: Vec<&str> = Vec::new();
    for line in lines.into_iter().chain([""]) {
        let line = line.trim_end();
        if line.is_empty() {
            if !para.is_empty() {
                out.push(Block::paragraph(para.join("\n")));
                para.clear();
            }
        } else {
            para.push(line);
        }
    }
    out
}

/// A block's text on its own (a table's rows a line each, cells apart by ` | `; a
/// field's `name: value`).
pub fn plain_text(content: &Content) -> String {
    match content {
        Content::Heading { text, .. }
        | Content::Paragraph { text }
        | Content::ListItem { text, .. }
        | Content::Note { text, .. }
        | Content::Header { text }
        | Content::Footer { text }
        | Content::Code { text }
        | Content::Chart { text }
        | Content::Line { text, .. } => text.clone(),
        Content::Table { rows, .. } => rows
            .iter()
            .map(|r| r.join(" | "))
            .collect::<Vec<_>>()
            .join("\n"),
        Content::Figure { alt, caption } => {
            caption.clone().or_else(|| alt.clone()).unwrap_or_default()
        }
        Content::Field { name, value } => format!("{name}: {value}"),
    }
}

/// A unit's blocks, as `output: "json"` returns them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UnitBlocks {
    #[serde(flatten)]
    pub unit: Unit,
    /// Whether every block of the unit is here. False when the read stopped in it: a
    /// page, slide or chapter `next` reads again whole has no blocks here; a document or
    /// sheet `next` reads on in has the blocks shown so far.
    pub complete: bool,
    pub blocks: Vec<Block>,
}

impl UnitBlocks {
    pub fn new(unit: Unit, blocks: Vec<Block>) -> Self {
        Self {
            unit,
            complete: true,
            blocks,
        }
    }
}

/// The typed document (`output: "json"`): the units the read's text shows, each with its
/// blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Document {
    pub units: Vec<UnitBlocks>,
}

impl Document {
    /// Only what the text shows: units without a span in it left out; a unit `next`
    /// reads again whole (a page, slide or chapter the budget cut) without blocks, not
    /// complete; the document a cut text ends in not complete (`next` reads on in it).
    /// Each extractor gives the blocks its text shows, none twice across `next` reads.
    pub fn shown(
        self,
        spans: &[Span],
        truncated: bool,
        read_again: impl Fn(&Unit) -> bool,
    ) -> Self {
        let mut out = Vec::with_capacity(self.units.len());
        for mut u in self.units {
            let Some(i) = spans.iter().position(|s| s.unit == u.unit) else {
                continue;
            };
            if read_again(&u.unit) {
                u.blocks.clear();
                u.complete = false;
            } else if truncated && i + 1 == spans.len() && u.unit.kind == UnitKind::Document {
                u.complete = false;
            }
            out.push(u);
        }
        Self { units: out }
    }
}

/// One entry of a document's outline (`extract::outline` makes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OutlineEntry {
    /// Names the entry in `section` (`s2.1`: the first entry under the second top-level
    /// entry).
    pub id: String,
    /// The heading's level (1 for a title; a bookmark's depth).
    pub level: u8,
    pub title: String,
    /// The titles of the entries it stands under, outermost first, then its own.
    pub path: Vec<String>,
    /// The page, slide, sheet or chapter its heading is on.
    pub unit: Unit,
}

/// A piece of the typed document for retrieval (`output: "chunks"`): blocks under one
/// heading path, at most `chunk_tokens` (a table row is never split).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Chunk {
    /// Its blocks as Markdown: headings `#`, list items with their labels, tables as pipe
    /// tables (a table cut over chunks repeats its header rows in each), notes and fields
    /// on lines of their own.
    pub text: String,
    /// The headings it stands under, outermost first (the last one its own, when it
    /// starts with a heading); empty before the first heading.
    pub heading_path: Vec<String>,
    /// The units (page, slide, sheet, chapter) its blocks come from, in order.
    pub units: Vec<Unit>,
    /// Where its blocks start and end in the envelope's `text`, in characters (as
    /// `units` counts them); absent when its text could not be found there (a block
    /// `text` does not show, such as an e-mail's header fields rendered otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
    /// The estimated token count of `text` (the `max_tokens` estimator).
    pub tokens: u64,
}

/// Where in a document something stands: the page, slide, sheet or chapter of a unit
/// (none for a format without them). Search hits and hidden-text findings carry it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct Place {
    /// The page (pdf, image).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// The slide (pptx, odp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slide: Option<u64>,
    /// The sheet (spreadsheets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// The chapter (epub).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapter: Option<u64>,
    /// The block (Word: paragraph or table, 0-based, as `paragraph_offset` counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paragraph: Option<u64>,
}

impl Place {
    /// The place of a unit (none for the document's).
    pub fn of(unit: &Unit) -> Self {
        let number = |k: UnitKind| unit.number.filter(|_| unit.kind == k);
        Self {
            page: number(UnitKind::Page),
            slide: number(UnitKind::Slide),
            chapter: number(UnitKind::Chapter),
            sheet: (unit.kind == UnitKind::Sheet)
                .then(|| unit.name.clone())
                .flatten(),
            paragraph: None,
        }
    }
}

/// Where a unit stands in a read's text, in bytes: its marker line from `head`, its own
/// text from `body` to `end`. An extractor records it as it writes the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub unit: Unit,
    /// Where its marker line starts (`body` when it has none).
    pub head: usize,
    pub body: usize,
    pub end: usize,
}

impl Span {
    pub fn text<'a>(&self, text: &'a str) -> &'a str {
        &text[self.body..self.end]
    }
}

/// A unit of a read's text, as the envelope's `units` gives it (`include_units`): where its
/// own text (after its marker line) starts and ends in `text`, counted in characters as
/// `char_count` counts them (Unicode scalar values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UnitRange {
    #[serde(flatten)]
    pub unit: Unit,
    /// The first character of the unit's text in `text` (0-based).
    pub start: u64,
    /// One past its last character.
    pub end: u64,
}

/// The spans of units written as blocks (each its marker line of `marker` bytes, then its
/// text) that `text` starts with, in order: the blocks taken whole, then one cut short (the
/// cut texts' budgets keep a prefix of the blocks). What stands past `text_end` (the
/// closing line of a cut text) is in none.
pub fn block_spans(
    blocks: impl IntoIterator<Item = (Unit, usize, usize)>,
    text_end: usize,
) -> Vec<Span> {
    let mut out = Vec::new();
    let mut at = 0usize;
    for (unit, marker, len) in blocks {
        if at >= text_end {
            break;
        }
        let end = (at + len).min(text_end);
        let body = (at + marker).min(end);
        out.push(Span {
            unit,
            head: at,
            body,
            end,
        });
        at += len;
    }
    out
}

/// Spans cut at `text_end` (a text kept to a budget); those wholly past it left out.
pub fn clip(spans: Vec<Span>, text_end: usize) -> Vec<Span> {
    spans
        .into_iter()
        .filter(|s| s.head < text_end)
        .map(|s| Span {
            body: s.body.min(text_end),
            end: s.end.min(text_end),
            ..s
        })
        .collect()
}

/// The spans in characters, for the envelope (one pass over the text).
pub fn char_ranges(text: &str, spans: &[Span]) -> Vec<UnitRange> {
    let mut points: Vec<usize> = spans.iter().flat_map(|s| [s.body, s.end]).collect();
    points.sort_unstable();
    points.dedup();
    let chars = to_chars(text, &points);
    let at = |b: usize| chars[points.binary_search(&b).unwrap_or(0)];
    spans
        .iter()
        .map(|s| UnitRange {
            unit: s.unit.clone(),
            start: at(s.body),
            end: at(s.end),
        })
        .collect()
}

/// Byte offsets (sorted, on character boundaries) as character offsets.
pub fn to_chars(text: &str, sorted_bytes: &[usize]) -> Vec<u64> {
    let mut out = Vec::with_capacity(sorted_bytes.len());
    let (mut byte, mut chars) = (0usize, 0u64);
    for &b in sorted_bytes {
        let b = b.min(text.len());
        if b > byte {
            chars += text[byte..b].chars().count() as u64;
            byte = b;
        }
        out.push(chars);
    }
    out
}

/// The parts of a text by its spans: what stands before the first unit's marker (a
/// workbook's sheet list) as the document's, then each unit's own text. A text without
/// spans is one document part.
pub fn parts<'a>(text: &'a str, spans: &[Span]) -> Vec<(Unit, &'a str)> {
    let mut out = Vec::with_capacity(spans.len() + 1);
    let first = spans.first().map_or(text.len(), |s| s.head);
    let before = &text[..first.min(text.len())];
    if !before.trim().is_empty() {
        out.push((Unit::document(), before));
    }
    for s in spans {
        out.push((s.unit.clone(), &text[s.body..s.end]));
    }
    out
}

/// The one span of a text that has no units of its own.
pub fn whole(range: Range<usize>) -> Vec<Span> {
    if range.is_empty() {
        return Vec::new();
    }
    vec![Span {
        unit: Unit::document(),
        head: range.start,
        body: range.start,
        end: range.end,
    }]
}

/// Split text into lines, each keeping its terminator (`\n`, `\r\n` or a lone `\r`), so
/// that concatenating any run of lines gives back the text exactly.
pub fn split_lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                lines.push(&text[start..=i]);
                start = i + 1;
            }
            b'\r' => {
                let end = if b.get(i + 1) == Some(&b'\n') {
                    i + 1
                } else {
                    i
                };
                lines.push(&text[start..=end]);
                i = end;
                start = end + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < b.len() {
        lines.push(&text[start..]);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_make_spans_up_to_the_cut() {
        let blocks = ["--- Page 1 ---\nalpha\n", "--- Page 2 ---\nbé\n"];
        let text = format!("{}{}", blocks[0], &blocks[1][..16]);
        let spans = block_spans(
            blocks
                .iter()
                .enumerate()
                .map(|(i, b)| (Unit::numbered(UnitKind::Page, i as u64 + 1), 15, b.len())),
            text.len(),
        );
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].text(&text), "alpha\n");
        assert_eq!(spans[1].text(&text), "b");
        let ranges = char_ranges(&text, &spans);
        assert_eq!((ranges[1].start, ranges[1].end), (36, 37));
    }

    #[test]
    fn characters_are_counted_past_multibyte_text() {
        let text = "日本語\nabc\n";
        let spans = vec![
            Span {
                unit: Unit::numbered(UnitKind::Page, 1),
                head: 0,
                body: 0,
                end: 10,
            },
            Span {
                unit: Unit::numbered(UnitKind::Page, 2),
                head: 10,
                body: 10,
                end: 14,
            },
        ];
        let r = char_ranges(text, &spans);
        assert_eq!((r[0].start, r[0].end, r[1].end), (0, 4, 8));
    }
}
