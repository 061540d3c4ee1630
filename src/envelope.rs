//! The read envelope: one shape for every format (SPEC §3), with format-specific keys
//! flattened beside the common ones.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::detect::Family;
pub use crate::model::Place;
use crate::report::Report;

/// What an extractor hands back; the envelope adds identity and timing.
#[derive(Debug, Default)]
pub struct Extraction {
    /// The text to return (already truncated, with its closing line when cut).
    pub text: String,
    /// Characters of the full selection, before truncation.
    pub char_count: u64,
    pub truncated: bool,
    /// The option values that read on, when truncated or partial.
    pub next: Option<Next>,
    pub warnings: Vec<String>,
    /// Matching lines, for reads with `query`.
    pub matches: Option<u64>,
    /// Format-specific keys (SPEC §3 table).
    pub report: Report,
    /// Files carried inside the document (e-mail attachments), for the caller to store.
    pub attachments: Vec<Attachment>,
    /// Whether the costly part (OCR) came wholly from the document memory.
    pub cached: bool,
    /// Pages this read recognised, for the caller to remember.
    pub fresh_ocr: Vec<(u64, Vec<crate::ocr::OcrLine>)>,
    /// What the extractor found hidden (elements, runs), beside what the text shows.
    pub findings: Vec<crate::findings::Finding>,
    /// Where each page, slide, sheet or chapter stands in `text` (none: the text is the
    /// document's, one unit).
    pub units: Vec<crate::model::Span>,
    /// With `output: "json"`: the units read with their blocks (kept to what the text
    /// shows when the envelope is made).
    pub document: Option<crate::model::Document>,
}

/// A file found inside a document.
#[derive(Debug, Clone)]
pub struct Attachment {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The successful answer to a read.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Envelope {
    /// Always `ok`.
    pub status: Ok,
    /// The uploaded file's id; null for server-path reads and the CLI.
    pub file_id: Option<String>,
    /// The file's name as the client gave it.
    pub file: String,
    /// The format family.
    pub format: Family,
    /// The exact media type.
    pub mime: String,
    /// Characters of the full selection, before truncation.
    pub char_count: u64,
    /// Whether `text` was cut at `max_chars`.
    pub truncated: bool,
    pub text: String,
    /// Estimated tokens of `text` (an upper bound of common LLM tokenizers), for reads
    /// with `max_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The options that read on from where this read stopped (e.g. `{"offset": 412}`);
    /// absent when the selection was read whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<Next>,
    /// Count of matching lines, when `query` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<u64>,
    pub warnings: Vec<String>,
    pub elapsed_ms: u64,
    /// Whether the result came from the document memory.
    pub cached: bool,
    /// Text in `text` a person would not see (hidden characters, look-alike letters);
    /// absent when nothing was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security: Option<crate::findings::Security>,
    /// With `include_units`: each page, slide, sheet or chapter the text shows (or the
    /// document, for a format without them), with where its own text (after its marker
    /// line) starts and ends in `text`, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub units: Option<Vec<crate::model::UnitRange>>,
    /// With `output: "json"`: the typed document — each unit `text` shows (its kind,
    /// number or name), with its blocks in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<crate::model::Document>,
    /// With `output: "chunks"`: the document `text` shows, cut into chunks in reading order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<Vec<crate::model::Chunk>>,
    /// With `output: "json"` or `"chunks"` on a read from the document's start (no page or
    /// other range): the outline of the headings `text` shows, each with the id `section`
    /// takes. On a `section` read: that entry and the entries under it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<crate::model::OutlineEntry>>,
    /// Format-specific keys (see `Report`), beside the common ones.
    #[serde(flatten)]
    pub report: Report,
    /// Attachment bytes on their way to the store (never serialized).
    #[serde(skip)]
    #[schema(ignore)]
    pub attachments: Vec<Attachment>,
    /// OCR results on their way to the document memory (never serialized).
    #[serde(skip)]
    #[schema(ignore)]
    pub fresh_ocr: Vec<(u64, Vec<crate::ocr::OcrLine>)>,
    /// Where each unit stands in `text`, in bytes, as the extractor recorded it: search
    /// indexes by them, and `units` is made from them on request (never serialized).
    #[serde(skip)]
    #[schema(ignore)]
    pub spans: Vec<crate::model::Span>,
}

/// How to read on: the option values that continue from where a read stopped. Send them
/// with the same `file_id` and the read's other options; only the keys present change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Next {
    /// Pages (pdf) or slides (pptx, odp) still to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<String>,
    /// EPUB: chapters still to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapters: Option<String>,
    /// Text family, e-mail body: the 0-based line to continue from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Lines left of the window that was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Text family: the byte to continue from (a line longer than the budget, or a byte window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_offset: Option<u64>,
    /// Bytes left of the window that was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_length: Option<u64>,
    /// Excel: the sheet to read next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// Excel: the sheets after that one are still to read too (a read of several sheets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheets_after: Option<bool>,
    /// Excel: the cells of that sheet still to read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// Word: the block (paragraph or table) to continue from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paragraph_offset: Option<u64>,
    /// Excel: the cell budget that shows the next row, when not even one row fitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cells: Option<u64>,
    /// The budget that reads the next block whole, when even one block did not fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<u64>,
    /// The token budget to read on with (a read by `max_tokens` continues by it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// HTML read as its source (`raw: true`) reads on as its source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<bool>,
    /// Hidden text kept, marked or dropped as the read asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hidden_text: Option<crate::options::HiddenText>,
    /// A Markdown read (`output: "markdown"`) reads on as Markdown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<crate::options::Output>,
    /// A chunks read reads on in chunks of the same size, with running headers and footers
    /// as it had them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub furniture: Option<crate::options::Furniture>,
    /// PDF: a read without annotations (`include_annotations: false`) reads on without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_annotations: Option<bool>,
    /// xlsx: a read with print headers and footers reads on with them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_headers_footers: Option<bool>,
    /// The section a `section` read reads on in (its id), and its block to read on from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_block: Option<u64>,
}

impl Next {
    /// Whether it says nothing (then no `next` is sent).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The status of a successful answer: always `ok`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum Ok {
    #[default]
    #[serde(rename = "ok")]
    Ok,
}

/// How the closing line of a cut text starts, newline included (clients strip from here).
pub const TRUNCATION_LINE: &str = "\n... (truncated, total ";

/// The closing line of a cut text.
pub fn truncation_line(total_chars: u64) -> String {
    format!("... (truncated, total {total_chars} chars)")
}

/// Append the closing line of a cut text: always after a newline of its own, so a
/// client can strip it exactly.
/// A text without the line `close_truncated` ends a cut text with (the text as the
/// document has it, for counting or joining parts).
pub fn without_truncation_line(text: &str) -> &str {
    text.rfind(TRUNCATION_LINE).map_or(text, |at| &text[..at])
}

pub fn close_truncated(mut kept: String, total_chars: u64) -> String {
    kept.push('\n');
    kept.push_str(&truncation_line(total_chars));
    kept
}

/// The first `n` characters of `s` (all of it when shorter).
pub fn first_chars(s: &str, n: usize) -> &str {
    &s[..s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)]
}

/// The longest run of whole lines of `s` within `n` characters; when not even one line
/// fits, the longest run of whole words (through the last whitespace); when not even one
/// word fits (CJK has no spaces), the first `n` characters. Never cuts inside a character.
pub fn cut_within(s: &str, n: usize) -> &str {
    let head = first_chars(s, n);
    if head.len() == s.len() {
        return s;
    }
    if let Some(i) = head.rfind('\n') {
        return &s[..=i];
    }
    match head.char_indices().rev().find(|(_, c)| c.is_whitespace()) {
        Some((i, c)) if i > 0 => &s[..i + c.len_utf8()],
        _ => head,
    }
}

/// The longest run of whole lines of `s` within `n` characters (see `cut_within` for a
/// first line longer than that).
pub fn whole_lines_within(s: &str, n: usize) -> &str {
    cut_within(s, n)
}

/// How many whole blocks from the start fit a budget, and their characters.
#[derive(Debug, PartialEq, Eq)]
pub struct Fit {
    pub count: usize,
    pub chars: usize,
}

/// The whole blocks (lines, pages, output lines) from the start that fit `max_chars`: the
/// one loop every cut by blocks uses.
pub fn fit_blocks<S: AsRef<str>>(blocks: &[S], max_chars: usize) -> Fit {
    let (mut chars, mut count) = (0usize, 0usize);
    for b in blocks {
        let n = b.as_ref().chars().count();
        if chars + n > max_chars {
            break;
        }
        chars += n;
        count += 1;
    }
    Fit { count, chars }
}

/// What `take_blocks` kept.
#[derive(Debug, PartialEq)]
pub struct Taken {
    pub text: String,
    /// Whole blocks kept.
    pub count: usize,
    /// When not even the first block fits: its length in characters (its start is in
    /// `text`), the `max_chars` that reads it whole.
    pub oversize: Option<usize>,
}

/// The answer to a `query` over a document's rendered text: the matching lines (with their
/// context, as `grep` gives them), cut at whole lines within `max_chars` with `next`
/// asking for the budget that reads them all.
pub fn query_answer(
    text: &str,
    q: &crate::options::Query,
    max_chars: usize,
    report: Report,
) -> Extraction {
    let lines: Vec<&str> = text.lines().collect();
    let (hits, count) = crate::options::grep(&lines, 1, q);
    let char_count = hits.chars().count() as u64;
    let mut ex = Extraction {
        char_count,
        matches: Some(count as u64),
        report,
        ..Default::default()
    };
    if char_count as usize > max_chars {
        ex.text = close_truncated(whole_lines_within(&hits, max_chars).to_string(), char_count);
        ex.truncated = true;
        let mut next = Next::default();
        next.max_chars = Some(char_count);
        ex.next = Some(next);
        ex.warnings
            .push("the matches are cut at max_chars; `next` reads them all".into());
    } else {
        ex.text = hits;
    }
    ex
}

/// Whole blocks (pages, slides, paragraphs) while they fit `max_chars`, at most
/// `max_blocks` of them. Cuts fall between blocks; only a first block longer than the whole
/// budget is cut inside, and then `oversize` says how large a budget reads it whole.
pub fn take_blocks<S: AsRef<str>>(blocks: &[S], max_chars: usize, max_blocks: usize) -> Taken {
    let count = fit_blocks(&blocks[..blocks.len().min(max_blocks)], max_chars).count;
    let mut text: String = blocks[..count].iter().map(AsRef::as_ref).collect();
    let oversize = match blocks.first() {
        Some(first) if count == 0 && max_blocks > 0 => {
            let first = first.as_ref();
            text.push_str(cut_within(first, max_chars));
            Some(first.chars().count())
        }
        _ => None,
    };
    Taken {
        text,
        count,
        oversize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_helpers() {
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(first_chars("hé", 9), "hé");
        assert_eq!(whole_lines_within("ab\ncd\nef", 7), "ab\ncd\n");
        assert_eq!(whole_lines_within("abcdef\ng", 3), "abc");
        // A page longer than the budget is cut after a whole word, not inside one.
        assert_eq!(cut_within("it can be difficult to read", 17), "it can be ");
        assert_eq!(cut_within("汉字汉字汉字", 4), "汉字汉字");
        assert_eq!(cut_within("one two\nthree four", 12), "one two\n");
        assert_eq!(
            take_blocks(&["a page that can be difficult"], 22, 9).text,
            "a page that can be "
        );
        assert_eq!(whole_lines_within("ab\n", 9), "ab\n");
        let blocks = ["aaa", "bb", "c"];
        assert_eq!(
            take_blocks(&blocks, 5, 9),
            Taken {
                text: "aaabb".into(),
                count: 2,
                oversize: None
            }
        );
        assert_eq!(
            take_blocks(&blocks, 9, 1),
            Taken {
                text: "aaa".into(),
                count: 1,
                oversize: None
            }
        );
        assert_eq!(
            take_blocks(&blocks, 2, 9),
            Taken {
                text: "aa".into(),
                count: 0,
                oversize: Some(3)
            }
        );
        assert_eq!(
            take_blocks(&blocks, 6, 9),
            Taken {
                text: "aaabbc".into(),
                count: 3,
                oversize: None
            }
        );
    }
}
