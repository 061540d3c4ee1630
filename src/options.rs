//! Read options: the request body, which options fit which format (the strict rule of
//! SPEC §5), the page-range parser, and the in-document query matcher.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::detect::Format;
use crate::error::{ApiError, ErrorCode};

/// Body of `POST /read`. Give `file_id` (or `path`, when the operator allows server paths),
/// plus the options that fit the file's format. An option that does not fit is an error.
#[derive(Debug, Default, Clone, Serialize, Deserialize, ToSchema, clap::Args)]
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
    /// Pages (pdf) or slides (pptx): `"5"`, `"1-10"`, `"1,3,5-8"`. Alias: `page_range`.
    #[serde(alias = "page_range")]
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(
        pattern = r"^\s*[1-9][0-9]{0,15}\s*([-\u2010\u2011\u2013\u2014\u2212]\s*[1-9][0-9]{0,15}\s*)?(,\s*[1-9][0-9]{0,15}\s*([-\u2010\u2011\u2013\u2014\u2212]\s*[1-9][0-9]{0,15}\s*)?)*$"
    )]
    #[arg(long, alias = "page-range")]
    pub pages: Option<String>,
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
    #[arg(long)]
    pub include_boxes: Option<bool>,
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
}

/// `mode` of a Word read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, clap::ValueEnum)]
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

/// How `query` matches a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, clap::ValueEnum)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, clap::ValueEnum)]
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
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
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

/// Options every format accepts.
const UNIVERSAL: &[&str] = &["deadline_ms", "max_chars"];

/// What names the file rather than how to read it.
const IDENTITY: &[&str] = &["file_id", "path"];

const TEXT: &[&str] = &[
    "offset",
    "limit",
    "byte_offset",
    "byte_length",
    "query",
    "query_mode",
    "context_lines",
];
const PDF: &[&str] = &[
    "pages",
    "query",
    "query_mode",
    "context_lines",
    "min_text_per_page",
    "ocr",
    "ocr_lang",
    "password",
    "include_boxes",
];
const SLIDES: &[&str] = &["pages"];
const WORD: &[&str] = &[
    "mode",
    "max_paragraphs",
    "paragraph_offset",
    "query",
    "query_mode",
    "context_lines",
];
const SHEETS: &[&str] = &["sheet", "range", "max_cells"];
const IMAGE: &[&str] = &["min_text_per_page", "ocr", "ocr_lang", "include_boxes"];
const MAIL: &[&str] = &["offset", "limit"];
/// Formats detected but not read by this build: only the universal options.
const NONE: &[&str] = &[];

/// The options that fit each format (besides `deadline_ms` and `max_chars`). One arm per
/// format, not per family, so an option that fits only csv, xlsx or html can be said so.
pub fn options_for(format: Format) -> &'static [&'static str] {
    match format {
        Format::Pdf => PDF,
        Format::Docx { .. } => WORD,
        Format::Odt => NONE,
        Format::Pptx { .. } => SLIDES,
        Format::Odp => NONE,
        Format::Xlsx { .. } | Format::Xls | Format::Ods => SHEETS,
        Format::Msg | Format::Eml => MAIL,
        Format::Image(_) => IMAGE,
        Format::Text(_) => TEXT,
    }
}

impl ReadRequest {
    /// Names of the options that were given (not `file_id`/`path`): the keys of its own
    /// serialisation, so a new field can never escape the strict rule.
    pub fn given(&self) -> Vec<String> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map
                .into_iter()
                .filter(|(k, v)| !v.is_null() && !IDENTITY.contains(&k.as_str()))
                .map(|(k, _)| k)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The strict rule: every given option must fit the format, or nothing is read.
    pub fn check_fit(&self, format: Format) -> Result<(), ApiError> {
        let fits = options_for(format);
        let family = format.family();
        let misfits: Vec<String> = self
            .given()
            .into_iter()
            .filter(|o| !fits.contains(&o.as_str()) && !UNIVERSAL.contains(&o.as_str()))
            .collect();
        if misfits.is_empty() {
            return Ok(());
        }
        let mut ok: Vec<&str> = fits.to_vec();
        ok.extend_from_slice(UNIVERSAL);
        Err(ApiError::new(
            ErrorCode::UnsupportedOption,
            format!(
                "option{} {} do{} not apply to {} files",
                if misfits.len() > 1 { "s" } else { "" },
                misfits
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if misfits.len() > 1 { "" } else { "es" },
                family.as_str()
            ),
        )
        .with_hint(format!(
            "Options for {} files: {}.",
            family.as_str(),
            ok.join(", ")
        )))
    }

    /// The truncation budget, validated.
    pub fn max_chars(&self, default: usize) -> Result<usize, ApiError> {
        match self.max_chars {
            None => Ok(default),
            Some(n) if n >= 1 && n <= 50_000_000 => Ok(n as usize),
            Some(n) => Err(ApiError::invalid_option(format!(
                "max_chars must be between 1 and 50000000, got {n}"
            ))),
        }
    }

    /// The query, when one was asked for, validated with its mode and context.
    pub fn query(&self) -> Result<Option<Query>, ApiError> {
        let Some(q) = &self.query else {
            if self.query_mode.is_some() || self.context_lines.is_some() {
                return Err(
                    ApiError::invalid_option("query_mode and context_lines need a query")
                        .with_hint("Add `query`, or drop query_mode/context_lines."),
                );
            }
            return Ok(None);
        };
        Query::new(
            q,
            self.query_mode.map(QueryMode::as_str),
            self.context_lines,
        )
        .map(Some)
    }
}

/// Check an optional count option: a non-negative integer (`min` is the smallest allowed).
pub fn count(name: &str, v: Option<i64>, min: i64) -> Result<Option<u64>, ApiError> {
    match v {
        None => Ok(None),
        Some(n) if n >= min => Ok(Some(n as u64)),
        Some(n) => Err(ApiError::invalid_option(format!(
            "{name} must be an integer ≥ {min}, got {n}"
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// Page ranges
// ---------------------------------------------------------------------------------------

/// Parse a page/slide spec into inclusive 1-based spans, checking only its syntax.
pub fn parse_spans(spec: &str) -> Result<Vec<(u64, u64)>, ApiError> {
    let invalid = |why: &str| {
        ApiError::new(
            ErrorCode::InvalidRange,
            format!("invalid page range {spec:?}: {why}"),
        )
    };
    let norm: String = spec
        .chars()
        .map(|c| match c {
            '\u{2013}' | '\u{2014}' | '\u{2212}' | '\u{2010}' | '\u{2011}' => '-',
            c => c,
        })
        .collect();
    if norm.trim().is_empty() {
        return Err(invalid("it is empty"));
    }
    let num = |s: &str| -> Result<u64, ApiError> {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("expected page numbers such as 5, 1-10 or 1,3,5-8"));
        }
        let n: u64 = s.parse().map_err(|_| invalid("page number too large"))?;
        if n == 0 {
            return Err(invalid("pages are numbered from 1"));
        }
        Ok(n)
    };
    let mut spans = Vec::new();
    for part in norm.split(',') {
        let span = match part.split_once('-') {
            None => {
                let n = num(part)?;
                (n, n)
            }
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(ApiError::new(
                        ErrorCode::InvertedRange,
                        format!("page range {spec:?} runs backwards ({a} > {b})"),
                    )
                    .with_hint(format!("Write it from low to high: \"{b}-{a}\".")));
                }
                (a, b)
            }
        };
        spans.push(span);
    }
    Ok(spans)
}

/// A resolved selection: sorted, deduplicated page numbers, plus a warning when clipped.
#[derive(Debug, PartialEq, Eq)]
pub struct Selection {
    pub pages: Vec<u64>,
    pub warning: Option<String>,
}

/// Resolve a spec against a document of `total` pages (`unit` is "page" or "slide").
pub fn resolve_pages(
    spec: &str,
    total: u64,
    unit: &str,
    container: &str,
) -> Result<Selection, ApiError> {
    let spans = parse_spans(spec)?;
    let mut pages = Vec::new();
    let mut clipped = false;
    for (a, b) in spans {
        if b > total {
            clipped = true;
        }
        if a <= total {
            pages.extend(a..=b.min(total));
        }
    }
    pages.sort_unstable();
    pages.dedup();
    if pages.is_empty() {
        return Err(ApiError::out_of_range(format!(
            "{unit}s {spec} are past the end: the {container} has {total} {unit}{}",
            if total == 1 { "" } else { "s" }
        ))
        .with_hint(if total == 0 {
            format!("The {container} has no {unit}s to read.")
        } else {
            format!("Ask for {unit}s 1-{total}.")
        }));
    }
    let warning = clipped
        .then(|| format!("{unit} range {spec} clipped to the {container}'s {total} {unit}s"));
    Ok(Selection { pages, warning })
}

/// The pages a read selects: all of them without a spec; clipping warnings go to `warnings`.
pub fn select_pages(
    spec: Option<&str>,
    total: u64,
    unit: &str,
    container: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<u64>, ApiError> {
    match spec {
        Some(spec) => {
            let sel = resolve_pages(spec, total, unit, container)?;
            warnings.extend(sel.warning);
            Ok(sel.pages)
        }
        None => Ok((1..=total).collect()),
    }
}

/// Write page numbers back as a compact spec: `[1,2,3,5,7,8]` → `"1-3,5,7-8"`.
pub fn format_pages(pages: &[u64]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pages.len() {
        let start = pages[i];
        let mut end = start;
        while i + 1 < pages.len() && pages[i + 1] == end + 1 {
            i += 1;
            end = pages[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

// ---------------------------------------------------------------------------------------
// Query
// ---------------------------------------------------------------------------------------

/// A validated in-document query.
#[derive(Debug, Clone)]
pub struct Query {
    pub re: regex::Regex,
    pub context: usize,
}

impl Query {
    pub fn new(text: &str, mode: Option<&str>, context: Option<i64>) -> Result<Self, ApiError> {
        if text.is_empty() {
            return Err(
                ApiError::invalid_option("query is empty").with_hint("Give the text to look for.")
            );
        }
        let context = match context {
            None => 2,
            Some(n @ 0..=20) => n as usize,
            Some(n) => {
                return Err(ApiError::invalid_option(format!(
                    "context_lines must be between 0 and 20, got {n}"
                )))
            }
        };
        let (pattern, ci) = match mode.unwrap_or("substring") {
            "substring" => (regex::escape(text), true),
            "regex" => (text.to_string(), false),
            "iregex" => (text.to_string(), true),
            other => {
                return Err(
                    ApiError::invalid_option(format!("unknown query_mode {other:?}"))
                        .with_hint("Use substring (default), regex or iregex."),
                )
            }
        };
        let re = regex::RegexBuilder::new(&pattern)
            .case_insensitive(ci)
            .size_limit(2 * 1024 * 1024)
            .build()
            .map_err(|e| {
                ApiError::invalid_option(format!("query is not a valid regular expression: {e}"))
                    .with_hint(
                        "Fix the pattern, or use query_mode \"substring\" to match it literally.",
                    )
            })?;
        Ok(Self { re, context })
    }
}

/// One output line of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrepLine<'a> {
    /// A matching line and its 1-based number (`N:line`).
    Hit(u64, &'a str),
    /// A line of context around a hit (`N-line`).
    Context(u64, &'a str),
    /// Between two groups (`--`).
    Break,
}

impl GrepLine<'_> {
    /// The line's number, for hits and context.
    pub fn number(&self) -> Option<u64> {
        match self {
            Self::Hit(n, _) | Self::Context(n, _) => Some(*n),
            Self::Break => None,
        }
    }

    /// The line as it is shown, with its newline.
    pub fn render(&self) -> String {
        match self {
            Self::Hit(n, l) => format!("{n}:{l}\n"),
            Self::Context(n, l) => format!("{n}-{l}\n"),
            Self::Break => "--\n".to_string(),
        }
    }
}

/// What a query found: the output lines (hits with their context, groups apart) and the
/// number of matching lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits<'a> {
    pub lines: Vec<GrepLine<'a>>,
    pub count: usize,
}

impl Hits<'_> {
    /// The output as text, grep -n style.
    pub fn text(&self) -> String {
        self.lines.iter().map(GrepLine::render).collect()
    }
}

/// Lines that match, with `q.context` lines around each and overlapping or touching groups
/// merged. `first_line` is the number of `lines[0]` (1-based).
pub fn grep_lines<'a>(lines: &[&'a str], first_line: u64, q: &Query) -> Hits<'a> {
    let hits: Vec<usize> = (0..lines.len())
        .filter(|&i| q.re.is_match(lines[i]))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < hits.len() {
        let start = hits[i].saturating_sub(q.context);
        let mut end = (hits[i] + q.context).min(lines.len() - 1);
        while i + 1 < hits.len() && hits[i + 1].saturating_sub(q.context) <= end + 1 {
            i += 1;
            end = (hits[i] + q.context).min(lines.len() - 1);
        }
        if !out.is_empty() {
            out.push(GrepLine::Break);
        }
        for (j, line) in lines.iter().enumerate().take(end + 1).skip(start) {
            let n = first_line + j as u64;
            out.push(if q.re.is_match(line) {
                GrepLine::Hit(n, line)
            } else {
                GrepLine::Context(n, line)
            });
        }
        i += 1;
    }
    Hits {
        lines: out,
        count: hits.len(),
    }
}

/// Lines that match, grep -n style: `N:line` for hits, `N-line` for context, `--` between
/// groups. `first_line` is the number of `lines[0]` (1-based). Returns the text and the hit count.
pub fn grep(lines: &[&str], first_line: u64, q: &Query) -> (String, usize) {
    let hits = grep_lines(lines, first_line, q);
    (hits.text(), hits.count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_table() {
        let ok = |spec: &str, total: u64| {
            resolve_pages(spec, total, "page", "document").map(|s| s.pages)
        };
        let code = |spec: &str, total: u64| {
            resolve_pages(spec, total, "page", "document")
                .unwrap_err()
                .code
        };
        assert_eq!(ok("5", 10).unwrap(), vec![5]);
        assert_eq!(ok("1-3", 10).unwrap(), vec![1, 2, 3]);
        assert_eq!(ok("1,3,5-8", 10).unwrap(), vec![1, 3, 5, 6, 7, 8]);
        assert_eq!(
            ok("8-6,1", 10).map_err(|e| e.code),
            Err(ErrorCode::InvertedRange)
        );
        assert_eq!(ok("2\u{2013}3", 10).unwrap(), vec![2, 3]);
        assert_eq!(ok("2\u{2014}3", 10).unwrap(), vec![2, 3]);
        assert_eq!(ok("2\u{2212}3", 10).unwrap(), vec![2, 3]);
        assert_eq!(ok(" 3 , 1-2 ,2", 10).unwrap(), vec![1, 2, 3]);
        assert_eq!(code("5-1", 10), ErrorCode::InvertedRange);
        for bad in [
            "abc", "2-", "-2", "", " ", "1,,2", "0", "1-0", "1.5", "1-2-3",
        ] {
            assert!(
                matches!(
                    code(bad, 10),
                    ErrorCode::InvalidRange | ErrorCode::InvertedRange
                ),
                "{bad:?}"
            );
        }
        assert_eq!(code("11-20", 10), ErrorCode::OutOfRange);
        let e = resolve_pages("11", 10, "page", "document").unwrap_err();
        assert!(e.message.contains("has 10 pages"), "{}", e.message);
        let s = resolve_pages("8-12", 10, "page", "document").unwrap();
        assert_eq!(s.pages, vec![8, 9, 10]);
        assert!(s.warning.is_some());
        // A huge span does not allocate past the document.
        assert_eq!(ok("1-99999999999", 3).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn pages_format_back() {
        assert_eq!(format_pages(&[1, 2, 3, 5, 7, 8]), "1-3,5,7-8");
        assert_eq!(format_pages(&[4]), "4");
        for spec in ["1-3,5,7-8", "2", "1,3"] {
            let s = resolve_pages(spec, 10, "page", "document").unwrap();
            assert_eq!(format_pages(&s.pages), spec);
        }
    }

    #[test]
    fn grep_groups_with_context() {
        let lines = ["a", "hit one", "b", "c", "d", "e", "f", "HIT two", "g"];
        let q = Query::new("hit", None, Some(1)).unwrap();
        let (out, n) = grep(&lines, 1, &q);
        assert_eq!(n, 2);
        assert_eq!(out, "1-a\n2:hit one\n3-b\n--\n7-f\n8:HIT two\n9-g\n");
        // The same hits, structured: numbers come from the lines, not from the text.
        let hits = grep_lines(&lines, 1, &q);
        assert_eq!(hits.count, 2);
        assert_eq!(hits.lines[1], GrepLine::Hit(2, "hit one"));
        assert_eq!(hits.lines[3], GrepLine::Break);
        assert_eq!(
            hits.lines
                .iter()
                .filter_map(GrepLine::number)
                .collect::<Vec<_>>(),
            vec![1, 2, 3, 7, 8, 9]
        );
        assert!(Query::new("(", Some("regex"), None).is_err());
        assert!(Query::new("x", Some("fuzzy"), None).is_err());
        assert!(Query::new("x", None, Some(21)).is_err());
    }

    #[test]
    fn fit_is_strict() {
        let r = ReadRequest {
            pages: Some("1".into()),
            ..Default::default()
        };
        let e = r
            .check_fit(Format::Text(crate::detect::TextKind::Csv))
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedOption);
        assert!(e.hint.contains("offset"));
        assert!(r.check_fit(Format::Pdf).is_ok());
    }

    /// Every field of `ReadRequest` is classified: it names the file, fits every format,
    /// or fits some format. Built from the type's own schema, so a new field without a
    /// place in `options_for` fails here (and would otherwise be refused everywhere).
    #[test]
    fn every_option_is_classified() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(ReadRequest::schema()).unwrap();
        let props = schema["properties"].as_object().expect("properties");
        let mut body = serde_json::Map::new();
        for (name, p) in props {
            let ty = match &p["type"] {
                serde_json::Value::Array(a) => a[0].as_str().unwrap().to_string(),
                t => t.as_str().unwrap_or("").to_string(),
            };
            let reference = p.to_string();
            let v = if reference.contains("schemas/Ocr") {
                serde_json::to_value(Ocr::Auto).unwrap()
            } else if reference.contains("schemas/QueryMode") {
                serde_json::to_value(QueryMode::Regex).unwrap()
            } else if reference.contains("schemas/DocxMode") {
                serde_json::to_value(DocxMode::Text).unwrap()
            } else {
                assert!(
                    !reference.contains("$ref"),
                    "{name}: a new option type: {p}"
                );
                match ty.as_str() {
                    "integer" => serde_json::json!(1),
                    "boolean" => serde_json::json!(true),
                    _ => serde_json::json!("1"),
                }
            };
            body.insert(name.clone(), v);
        }
        let req: ReadRequest = serde_json::from_value(serde_json::Value::Object(body)).unwrap();
        let given = req.given();
        assert_eq!(given.len() + IDENTITY.len(), props.len(), "{given:?}");
        let all_formats = [
            Format::Pdf,
            Format::Docx { macros: false },
            Format::Pptx { macros: false },
            Format::Xlsx { macros: false },
            Format::Xls,
            Format::Ods,
            Format::Odt,
            Format::Odp,
            Format::Msg,
            Format::Eml,
            Format::Image(crate::detect::ImageKind::Png),
            Format::Text(crate::detect::TextKind::Plain),
        ];
        for key in &given {
            let placed = UNIVERSAL.contains(&key.as_str())
                || all_formats
                    .iter()
                    .any(|f| options_for(*f).contains(&key.as_str()));
            assert!(placed, "option {key} fits no format");
        }
    }
}
