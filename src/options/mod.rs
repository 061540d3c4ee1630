//! Read options: the request body, which options fit which format (the strict rule of
//! SPEC §5), the page-range parser, and the in-document query matcher.
//!
//! This file holds the body of `POST /read` (`ReadRequest`) and its option types; the
//! strict rule and the validation of single options are in `rule`, page and slide ranges
//! in `pages`, and the query matcher in `query`. Everything is re-exported here, so callers
//! name it `crate::options::X`.

mod pages;
mod parsed;
mod query;
mod rule;

pub use pages::{format_pages, parse_spans, resolve_pages, Selection};
pub use parsed::{Int, Options, Spans, INTS};
pub use query::{grep, grep_lines, GrepLine, Hits, Query};
pub use rule::{accepted, options_for, MAX_CHARS};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /read`. Give `file_id` (or `path`, when the operator allows server paths),
/// plus the options that fit the file's format. An option that does not fit is an error.
#[derive(
    Debug, Default, Clone, Serialize, Deserialize, ToSchema, schemars::JsonSchema, clap::Args,
)]
#[serde(deny_unknown_fields)]
pub struct ReadRequest {
    /// Id returned by `POST /upload`.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    /// A server-side path; only when `DOCREADER_ALLOWED_ROOTS` is set.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A document to fetch and read (`http`/`https`, hosts the operator lists in
    /// `DOCREADER_URL_ALLOWLIST`), instead of `file_id`. It becomes an upload of the
    /// tenant: the envelope's `file_id` reads it again without fetching.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Several uploads in one read (1 to 10, instead of `file_id`): the answer is
    /// `{"status":"ok","results":[…]}`, one envelope or error per file, in order; the budget
    /// is used up in file order.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 1, max_items = 10)]
    #[schemars(length(min = 1, max = 10))]
    pub file_ids: Option<Vec<String>>,
    /// Run the read as a job (the same as the header `Prefer: respond-async`): the answer
    /// is 202 with the job at once; `GET /jobs/{id}` gives its state and, once done, the
    /// envelope; `GET /jobs/{id}/events` streams its progress; any replica answers. Not
    /// with `file_ids`.
    #[arg(skip)]
    #[serde(rename = "async", skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub run_async: Option<bool>,
    /// A URL POSTed when the job ends (`done`, `failed`, `cancelled`), signed with the
    /// tenant's secret (`GET /callbacks/secret`); it makes the read a job whatever `async`
    /// says (a read answered at once has nothing to call back). Only hosts the operator
    /// lists (`DOCREADER_CALLBACK_ALLOWLIST`); retried with backoff.
    #[arg(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub callback_url: Option<String>,
    /// Pages (pdf) or slides (pptx): `"5"`, `"1-10"`, `"1,3,5-8"`. Alias: `page_range`.
    #[serde(alias = "page_range")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        pattern = r"^\s*[1-9][0-9]{0,15}\s*([-\u2010\u2011\u2013\u2014\u2212]\s*[1-9][0-9]{0,15}\s*)?(,\s*[1-9][0-9]{0,15}\s*([-\u2010\u2011\u2013\u2014\u2212]\s*[1-9][0-9]{0,15}\s*)?)*$"
    )]
    #[arg(long, alias = "page-range")]
    pub pages: Option<String>,
    /// EPUB: chapters to read, `1-3,7` (1-based, in reading order).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        pattern = r"^\s*[1-9][0-9]{0,15}\s*([-\u2010\u2011\u2013\u2014\u2212]\s*[1-9][0-9]{0,15}\s*)?(,\s*[1-9][0-9]{0,15}\s*([-\u2010\u2011\u2013\u2014\u2212]\s*[1-9][0-9]{0,15}\s*)?)*$"
    )]
    #[arg(long)]
    pub chapters: Option<String>,
    /// Text family, e-mail body: 0-based line offset.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 0)]
    #[arg(long, allow_negative_numbers = true)]
    pub offset: Option<i64>,
    /// Text family, e-mail body: number of lines.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 1)]
    #[arg(long, allow_negative_numbers = true)]
    pub limit: Option<i64>,
    /// Text family: 0-based byte offset into the file (exclusive with offset/limit).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 0)]
    #[arg(long, allow_negative_numbers = true)]
    pub byte_offset: Option<i64>,
    /// Text family: number of bytes to read from `byte_offset` (default 1 MiB).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 1)]
    #[arg(long, allow_negative_numbers = true)]
    pub byte_length: Option<i64>,
    /// Excel: sheet name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub sheet: Option<String>,
    /// Excel, with `sheet`: also read the sheets after it. In workbook order; what `next`
    /// of a read of several sheets says.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub sheets_after: Option<bool>,
    /// Excel: cell range such as `A1:D10`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        pattern = r"^\s*\$?[A-Za-z]{1,3}\$?[1-9][0-9]{0,8}\s*(:\s*\$?[A-Za-z]{1,3}\$?[1-9][0-9]{0,8}\s*)?$"
    )]
    #[arg(long)]
    pub range: Option<String>,
    /// Excel: cell budget across the workbook (default 1000).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 1)]
    #[arg(long, allow_negative_numbers = true)]
    pub max_cells: Option<i64>,
    /// Word: `text` or `text+tables` (default).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub mode: Option<DocxMode>,
    /// Word: paragraph budget (default 200).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 1)]
    #[arg(long, allow_negative_numbers = true)]
    pub max_paragraphs: Option<i64>,
    /// Word: 0-based block (paragraph or table) to start from; `next` gives it.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 0)]
    #[arg(long, allow_negative_numbers = true)]
    pub paragraph_offset: Option<i64>,
    /// Return only lines that match (pdf, text family, docx).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1)]
    #[arg(long)]
    pub query: Option<String>,
    /// `substring` (default, case-insensitive), `regex` or `iregex`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub query_mode: Option<QueryMode>,
    /// Lines of context around each hit (default 2, at most 20).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 0, maximum = 20)]
    #[arg(long, allow_negative_numbers = true)]
    pub context_lines: Option<i64>,
    /// PDF, image: pages with fewer characters are OCR'd (default 50).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 0)]
    #[arg(long, allow_negative_numbers = true)]
    pub min_text_per_page: Option<i64>,
    /// PDF, image: `auto` (default, local engines only), `force` (OCR every selected page),
    /// an engine name (`ppocr`, `tesseract`), or `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub ocr: Option<Ocr>,
    /// PDF, image: languages to expect, e.g. `en,zh`, `de`, `ko`, `ja`, `ja-vert`. Chinese
    /// and the Latin-script languages whose letters PP-OCR's dictionary has (`en`, `de`,
    /// `fr`, `es`, `it`, `pt`, `nl`, `pl`, `cs`, `sk`, `sv`, `da`, `no`, `fi`, `hu`, `ca`,
    /// `hr`, `sl`, `is`, `et`, `lv`, `lt`, `tr`) are read by PP-OCR; any other language by
    /// Tesseract (English is added to it); `GET /readyz` lists Tesseract's installed
    /// languages.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub ocr_lang: Option<String>,
    /// PDF: password for an encrypted file.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub password: Option<String>,
    /// Image, PDF: also return OCR lines with boxes and confidences.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub include_boxes: Option<bool>,
    /// PDF: the page's annotations after its text (default `true`): the text FreeText boxes
    /// draw on the page under `[Annotations]`, and the comments of sticky notes,
    /// highlights, stamps and other markup with their author (`author: text`) under
    /// `[Comments]` (each also a `comment` finding), and where a web or mail link leads when
    /// the page does not show its address (`here → https://…`) under `[Links]`; an
    /// annotation flagged never to show is a `hidden_annotation` finding, its text kept,
    /// marked or dropped as `hidden_text` says. `false` leaves them out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub include_annotations: Option<bool>,
    /// Any format: add `units`, where each page, slide, sheet or chapter stands in `text`.
    /// Each unit the text shows (one `document` unit for a format without them) with where
    /// its own text (after its marker line) starts and ends in `text`, in characters. The text's `--- Page N
    /// ---` lines are rendering; `units` is the structure.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub include_units: Option<bool>,
    /// HTML: `true` reads the source as text (byte windows count its bytes); by default
    /// the text a browser shows (byte windows count its UTF-8 bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub raw: Option<bool>,
    /// CSV/TSV and workbooks: add a `profile` of each table. Per column: type, nulls,
    /// distinct values, range of numbers and dates — of the whole file, or of each sheet or
    /// `range` in scope, whatever part of the text is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub profile: Option<bool>,
    /// xlsx: add each read sheet's `styles` to `sheets`. Merged ranges, hidden rows and
    /// columns, number formats, header bold/fill.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub include_styles: Option<bool>,
    /// xlsx, xlsb, xls, ods: add each sheet's print headers and footers after its rows. Under
    /// `[Headers]` and `[Footers]` (left, centre and right sections a line each; page numbers, dates
    /// and the file name as `[Page]`, `[Pages]`, `[Date]`, `[File]`, the sheet's name as it
    /// is; an ods sheet's from its table style's master page).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub include_headers_footers: Option<bool>,
    /// HTML, e-mail, EPUB, Word, OpenDocument, workbooks, PowerPoint, PDF, the text family:
    /// what becomes of text
    /// a person does not see (HTML's hidden elements, Word's hidden runs, hidden sheets, rows,
    /// columns and slides, PDF text drawn invisible, tiny, off the page, covered or in its
    /// background's colour; in text files, tag characters, zero-width characters inside
    /// words and bidi overrides — not with byte windows):
    /// `keep` (in the text, as if shown), `mark` (kept between `⟦hidden: …⟧` markers) or
    /// `drop` (left out). The default is what each shows: HTML, an e-mail's HTML body and
    /// EPUB chapters `drop` (what a browser shows), the others `keep`. Either way `security.findings`
    /// lists what was hidden.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub hidden_text: Option<HiddenText>,
    /// All formats: `text` (the default), `markdown` — headings, lists with their numbers
    /// and tables as GFM pipe tables where the format has them (Word, OpenDocument text,
    /// PowerPoint, workbooks, CSV/TSV, HTML); other formats' text is returned as it is —
    /// `json`: the plain text and, in `document`, the units it shows with their typed
    /// blocks — or `chunks`: the plain text and, in `chunks`, those blocks cut into pieces
    /// for retrieval (see `chunk_tokens`). Budgets, ranges, queries and `next` apply to the
    /// Markdown returned; with `json` and `chunks`, to the text, and `document` or `chunks`
    /// hold what the text shows (not with `query`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub output: Option<Output>,
    /// Chunk size in estimated tokens (default 512), with `output: "chunks"`. The
    /// `max_tokens` estimator counts; a table row is never split: a row larger than this
    /// is a chunk of its own.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 32, maximum = 8192)]
    #[arg(long, allow_negative_numbers = true)]
    pub chunk_tokens: Option<i64>,
    /// Running headers and footers in chunks and Markdown: `drop` (default) or `keep`.
    /// With `output: "chunks"` or `"markdown"`, `drop` leaves out Word's, OpenDocument's
    /// and RTF's headers and footers, and a PDF's lines that stand at the top or bottom of
    /// its pages read again and again (numbers aside: `Page 3 of 9`), and on OCR'd pages
    /// and images the running headers and footers the page layout model finds (with a
    /// number); chunks also leave out a sheet's print headers. `keep` keeps them (in chunks each in a chunk of its own).
    /// `text` keeps them either way, and `json` gives them as `header`/`footer` blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub furniture: Option<Furniture>,
    /// All formats: one outline entry to read (`s2.1`, `Methods > Sample`, a title). The
    /// entry is its heading and what stands under it, up to the next heading of its level
    /// or above; it is named by its id (as the outline in `output: "json"` and MCP's
    /// `document_info` give it), its heading path (titles apart by ` > `), its title (with
    /// or without its number), or the number its title starts with (`3.2`). Every output
    /// renders the section's blocks; budgets cut between blocks and `next` reads on in the
    /// section. Not with page, line, byte, sheet, chapter or paragraph ranges, nor `query`.
    /// The whole document is read to find it (scanned pages OCR'd, as any read).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1, max_length = 2000)]
    #[arg(long)]
    pub section: Option<String>,
    /// With `section`: its block to read on from (`next` gives it). 0-based.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 0)]
    #[arg(long, allow_negative_numbers = true)]
    pub section_block: Option<i64>,
    /// All formats: stop work after this many milliseconds.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 1)]
    #[arg(long, allow_negative_numbers = true)]
    pub deadline_ms: Option<i64>,
    /// All formats: truncation budget in characters (default 15000).
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 1, maximum = 50000000)]
    #[arg(long, allow_negative_numbers = true)]
    pub max_chars: Option<i64>,
    /// All formats: truncation budget in estimated tokens, instead of `max_chars` (never
    /// both). The estimate is an upper bound of common LLM tokenizers (cl100k, o200k); the
    /// envelope's `tokens` gives it for the text returned, and `next` carries the budget.
    #[serde(
        default,
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(minimum = 50, maximum = 12500000)]
    #[arg(long, allow_negative_numbers = true)]
    pub max_tokens: Option<i64>,
}

/// `mode` of a Word read.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
pub enum DocxMode {
    /// Paragraphs only.
    #[serde(rename = "text")]
    #[value(name = "text")]
    Text,
    /// Paragraphs and each table where it stands (the default).
    #[serde(rename = "text+tables")]
    #[value(name = "text+tables")]
    TextTables,
}

/// `output`: plain text, Markdown, or the typed document beside the text.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// Plain text (the default).
    #[default]
    Text,
    /// Markdown: headings, lists, GFM pipe tables.
    Markdown,
    /// The typed document: `text` as plain text, and `document` with the units it shows,
    /// each with its blocks (headings, paragraphs, list items, tables with their cells,
    /// figures with their captions, notes, lines with their boxes).
    Json,
    /// The typed document cut into chunks for retrieval: `text` as plain text, and in
    /// `chunks` pieces of at most `chunk_tokens` that follow headings, each with its heading
    /// path, units, character range in `text` and token count.
    Chunks,
}

/// The default size of a chunk (`chunk_tokens`), and its bounds.
pub const DEFAULT_CHUNK_TOKENS: u64 = 512;
pub const MIN_CHUNK_TOKENS: u64 = 32;
pub const MAX_CHUNK_TOKENS: u64 = 8192;

/// `furniture`: what becomes of running headers and footers (a document's headers and
/// footers, a sheet's print headers, a PDF's repeated page ends) in chunks and Markdown.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Furniture {
    /// In the chunks, each its own.
    Keep,
    /// Left out (the default).
    Drop,
}

/// `hidden_text`: what becomes of text a person does not see.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum HiddenText {
    /// In the text as if shown.
    Keep,
    /// In the text between `⟦hidden: …⟧` markers.
    Mark,
    /// Left out.
    Drop,
}

impl ReadRequest {
    /// Whether the read returns Markdown.
    pub fn markdown(&self) -> bool {
        self.output == Some(Output::Markdown)
    }

    /// Whether the read builds the typed document beside its text (`json`, and `chunks`
    /// which are cut from it).
    pub fn json(&self) -> bool {
        matches!(self.output, Some(Output::Json | Output::Chunks))
    }

    /// Whether the read's output has structure (Markdown, `json`, chunks, a `section`):
    /// what OCR'd pages run their layout model for, and what the document memory keeps
    /// such pages under (`ocr::page_layout::LAYOUT_VARIANT`).
    pub fn structured(&self) -> bool {
        self.markdown() || self.json() || self.section.is_some()
    }

    /// Whether the read returns chunks.
    pub fn chunks(&self) -> bool {
        self.output == Some(Output::Chunks)
    }

    /// Whether running headers and footers are kept where the output leaves them out by
    /// default (chunks, a PDF's Markdown).
    pub fn keep_furniture(&self) -> bool {
        self.furniture == Some(Furniture::Keep)
    }
}

/// How `query` matches a line.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum QueryMode {
    /// Literal text, case-insensitive (the default).
    Substring,
    /// A regular expression, case-sensitive.
    Regex,
    /// A regular expression, case-insensitive.
    Iregex,
}

impl QueryMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Substring => "substring",
            Self::Regex => "regex",
            Self::Iregex => "iregex",
        }
    }
}

/// `ocr`: which engine reads pages without usable text.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    ToSchema,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
pub enum Ocr {
    /// Local engines only, on pages that need it (the default).
    #[serde(rename = "auto")]
    #[value(name = "auto")]
    Auto,
    /// OCR every selected page, even those with a text layer.
    #[serde(rename = "force")]
    #[value(name = "force")]
    Force,
    /// Never OCR.
    #[serde(rename = "none")]
    #[value(name = "none")]
    None,
    /// The built-in PP-OCR engine (Chinese and Latin scripts).
    #[serde(rename = "ppocr")]
    #[value(name = "ppocr")]
    Ppocr,
    /// The engine's former name, still accepted.
    #[serde(rename = "ppocr-v4")]
    #[value(name = "ppocr-v4")]
    PpocrV4,
    /// Tesseract, for the languages whose data is installed.
    #[serde(rename = "tesseract")]
    #[value(name = "tesseract")]
    Tesseract,
}

impl Ocr {
    /// The name on the wire (what the OCR module matches).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Force => "force",
            Self::None => "none",
            Self::Ppocr => "ppocr",
            Self::PpocrV4 => "ppocr-v4",
            Self::Tesseract => "tesseract",
        }
    }
}

/// An integer option that also accepts a whole-number float (`7.0`): JSON Schema calls it
/// an integer, so a client generated from the schema may send it.
pub(crate) fn whole_number<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<i64>, D::Error> {
    use serde::de::Error;
    let Some(n) = Option::<serde_json::Number>::deserialize(d)? else {
        return Ok(None);
    };
    if let Some(i) = n.as_i64() {
        return Ok(Some(i));
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 => {
            Ok(Some(f as i64))
        }
        _ => Err(D::Error::custom(format!(
            "expected a whole number, got {n}"
        ))),
    }
}

#[cfg(test)]
mod schema_tests {
    use super::*;

    /// The JSON Schema MCP tools will take their input schema from (schemars, the version
    /// rmcp 3 uses) names the same options as the OpenAPI description (but `async`), with
    /// the same enums.
    #[test]
    fn json_schema_matches_the_openapi_schema() {
        use utoipa::PartialSchema;
        let mcp = serde_json::to_value(schemars::schema_for!(ReadRequest)).unwrap();
        let openapi = serde_json::to_value(ReadRequest::schema()).unwrap();
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            k.sort();
            k
        };
        // `async` makes an HTTP read a job (202 + /jobs/{id}), and `callback_url` calls back
        // when the job ends; an MCP tool call answers with the read itself, so its schema
        // leaves them out.
        let http_only = ["async", "callback_url"];
        let mut expected = keys(&openapi);
        expected.retain(|k| !http_only.contains(&k.as_str()));
        assert_eq!(keys(&mcp), expected);
        let text = mcp.to_string();
        for v in ["ppocr-v4", "text+tables", "iregex"] {
            assert!(text.contains(v), "{v} missing from {text}");
        }
    }
}
