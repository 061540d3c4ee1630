//! The strict rule (SPEC §5): which options fit which format, and a read that gives an
//! option its format does not take reads nothing. Also the checks of single options
//! (`max_chars`, counts, the query with its mode and context).

use super::{Query, QueryMode, ReadRequest, DEFAULT_CHUNK_TOKENS};
use crate::detect::{Format, TextKind};
use crate::error::{ApiError, ErrorCode};

/// The largest `max_chars` (the schema's maximum).
pub const MAX_CHARS: usize = 50_000_000;

/// Options every format accepts.
const UNIVERSAL: &[&str] = &[
    "deadline_ms",
    "max_chars",
    "max_tokens",
    "output",
    "chunk_tokens",
    "furniture",
    "include_units",
    "section",
    "section_block",
];

/// What names the file, and how the read is run, rather than how to read it.
const IDENTITY: &[&str] = &[
    "file_id",
    "path",
    "file_ids",
    "url",
    "async",
    "callback_url",
];

/// The text family's options, and what a kind of text file takes besides them.
macro_rules! text_options {
    ($($extra:literal),*) => {
        &[
            "offset",
            "limit",
            "byte_offset",
            "byte_length",
            "query",
            "query_mode",
            "context_lines"
            $(, $extra)*
        ]
    };
}

const TEXT: &[&str] = text_options!("hidden_text");
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
    "include_annotations",
    "hidden_text",
];
const SLIDES: &[&str] = &["pages", "hidden_text"];
const PPTX: &[&str] = &["pages", "hidden_text"];
/// The options of documents read by paragraphs (OpenDocument text, Word), plus `extra`.
macro_rules! paragraph_options {
    ($($extra:literal),*) => {
        &[
            "mode",
            "max_paragraphs",
            "paragraph_offset",
            "query",
            "query_mode",
            "context_lines"
            $(, $extra)*
        ]
    };
}
const ODT: &[&str] = paragraph_options!("hidden_text");
const WORD: &[&str] = paragraph_options!("hidden_text");
const RTF: &[&str] = paragraph_options!("hidden_text");
const EPUB: &[&str] = &[
    "chapters",
    "query",
    "query_mode",
    "context_lines",
    "hidden_text",
];
const TABLE_TEXT: &[&str] = text_options!("profile", "hidden_text");
const HTML: &[&str] = text_options!("raw", "hidden_text");
const SHEETS: &[&str] = &[
    "sheet",
    "sheets_after",
    "range",
    "max_cells",
    "profile",
    "hidden_text",
];
const XLSX: &[&str] = &[
    "sheet",
    "sheets_after",
    "range",
    "max_cells",
    "include_styles",
    "include_headers_footers",
    "profile",
    "hidden_text",
];
/// Workbooks whose print headers and footers are read (ods, xlsb, xls), without xlsx's
/// styles.
const PRINTED_SHEETS: &[&str] = &[
    "sheet",
    "sheets_after",
    "range",
    "max_cells",
    "include_headers_footers",
    "profile",
    "hidden_text",
];
const IMAGE: &[&str] = &["min_text_per_page", "ocr", "ocr_lang", "include_boxes"];
const MAIL: &[&str] = &["offset", "limit", "hidden_text"];

/// Every option a read of `format` accepts: the universal ones, then the format's own, in
/// the order of the lists above (forms offer these and no others).
pub fn accepted(format: Format) -> Vec<&'static str> {
    UNIVERSAL
        .iter()
        .chain(options_for(format))
        .copied()
        .collect()
}

/// The options that fit each format (besides `deadline_ms` and `max_chars`). One arm per
/// format, not per family, so an option that fits only csv, xlsx or html can be said so.
pub fn options_for(format: Format) -> &'static [&'static str] {
    match format {
        Format::Pdf => PDF,
        Format::Docx { .. } | Format::WordMl => WORD,
        Format::Odt => ODT,
        Format::Rtf => RTF,
        Format::Pptx { .. } => PPTX,
        Format::Odp => SLIDES,
        Format::Epub => EPUB,
        Format::Xlsx { .. } => XLSX,
        Format::SpreadsheetMl => SHEETS,
        Format::Ods | Format::Xlsb | Format::Xls => PRINTED_SHEETS,
        Format::Msg | Format::Eml => MAIL,
        Format::Image(_) => IMAGE,
        Format::Text(TextKind::Csv | TextKind::Tsv) => TABLE_TEXT,
        Format::Text(TextKind::Html) => HTML,
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
        // Named by format where a family's formats take different options.
        let family = match format {
            Format::Xls => "xls (Excel 97-2003)",
            Format::Xlsb => "xlsb (Excel binary workbook)",
            Format::SpreadsheetMl => "Excel 2003 XML",
            Format::Ods => "ods",
            _ => format.family().as_str(),
        };
        let misfits: Vec<String> = self
            .given()
            .into_iter()
            .filter(|o| !fits.contains(&o.as_str()) && !UNIVERSAL.contains(&o.as_str()))
            .collect();
        if misfits.is_empty() {
            let output = if self.chunks() { "chunks" } else { "json" };
            if self.json() && self.query.is_some() {
                return Err(ApiError::new(
                    ErrorCode::UnsupportedOption,
                    format!("`output: \"{output}\"` returns a document's blocks; a `query` read returns matching lines"),
                )
                .with_hint("Leave out query to read the blocks, or output to search the text."));
            }
            if self.json() && (self.byte_offset.is_some() || self.byte_length.is_some()) {
                return Err(ApiError::new(
                    ErrorCode::UnsupportedOption,
                    format!("`output: \"{output}\"` returns blocks by lines; byte_offset/byte_length read the file's own bytes"),
                )
                .with_hint("Read by lines (offset/limit) for blocks; a line longer than max_chars needs a larger max_chars."));
            }
            if let Some(e) = self.section_misfit() {
                return Err(e);
            }
            // The HTML source is read as text: nothing in it is hidden, shown or Markdown.
            let rendered = [
                ("hidden_text", self.hidden_text.is_some()),
                ("output", self.markdown()),
            ];
            if let (Some(true), Some((name, _))) =
                (self.raw, rendered.iter().find(|(_, given)| *given))
            {
                return Err(ApiError::new(
                    ErrorCode::UnsupportedOption,
                    format!("`{name}` applies to the page a browser shows; `raw: true` reads the HTML source"),
                )
                .with_hint(format!("Leave out raw to use {name}, or {name} to read the source.")));
            }
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
                family
            ),
        )
        .with_hint(format!("Options for {} files: {}.", family, ok.join(", "))))
    }

    /// What a `section` read cannot take: another selection (a range, a query), or
    /// `section_block` without a section.
    fn section_misfit(&self) -> Option<ApiError> {
        if let Some(s) = &self.section {
            if s.is_empty() || s.chars().count() > 2000 {
                return Some(
                    ApiError::invalid_option(
                        "section must name an outline entry in 1 to 2000 characters",
                    )
                    .with_hint("Give an entry's id (s2.1), its heading path or its title."),
                );
            }
        }
        if self.section.is_none() {
            // Refused as an option this read does not take (as `section` beside `pages`
            // is): the OpenAPI description cannot state the rule in a shape its fuzzers
            // still generate reads for.
            return self.section_block.is_some().then(|| {
                ApiError::new(
                    ErrorCode::UnsupportedOption,
                    "section_block reads on in a section: it needs `section`",
                )
                .with_hint("Send section_block with the section `next` names, or leave it out.")
            });
        }
        let others = [
            ("pages", self.pages.is_some()),
            ("chapters", self.chapters.is_some()),
            ("offset", self.offset.is_some()),
            ("limit", self.limit.is_some()),
            ("byte_offset", self.byte_offset.is_some()),
            ("byte_length", self.byte_length.is_some()),
            ("sheet", self.sheet.is_some()),
            ("sheets_after", self.sheets_after.is_some()),
            ("range", self.range.is_some()),
            ("paragraph_offset", self.paragraph_offset.is_some()),
            ("max_paragraphs", self.max_paragraphs.is_some()),
            ("max_cells", self.max_cells.is_some()),
            ("query", self.query.is_some()),
            ("raw", self.raw == Some(true)),
        ];
        let given: Vec<&str> = others.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect();
        (!given.is_empty()).then(|| {
            ApiError::new(
                ErrorCode::UnsupportedOption,
                format!(
                    "`section` reads one outline entry; {} select{} another part of the document",
                    given.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(", "),
                    if given.len() == 1 { "s" } else { "" }
                ),
            )
            .with_hint("Leave out section, or the other selection (a section is read whole, with budgets and next).")
        })
    }

    /// The token budget, validated (and never beside `max_chars`).
    pub(super) fn max_tokens(&self) -> Result<Option<u64>, ApiError> {
        if self.max_tokens.is_some() && self.max_chars.is_some() {
            return Err(
                ApiError::invalid_option("give max_chars or max_tokens, not both").with_hint(
                    "max_tokens budgets in estimated LLM tokens, max_chars in characters: keep one.",
                ),
            );
        }
        super::parsed::MAX_TOKENS.check(self.max_tokens)
    }

    /// The chunk size in estimated tokens, validated (only with `output: "chunks"`;
    /// `furniture` only with chunks or Markdown).
    pub(super) fn chunk_tokens(&self) -> Result<u64, ApiError> {
        if self.furniture.is_some() && !(self.chunks() || self.markdown()) {
            return Err(ApiError::new(
                ErrorCode::UnsupportedOption,
                "`furniture` says whether running headers and footers go into `output: \"chunks\"` or `\"markdown\"`",
            )
            .with_hint("Add output: \"chunks\" or \"markdown\", or leave out furniture (text and json keep them)."));
        }
        if self.chunk_tokens.is_some() && !self.chunks() {
            return Err(ApiError::new(
                ErrorCode::UnsupportedOption,
                "`chunk_tokens` sizes the chunks of `output: \"chunks\"`",
            )
            .with_hint("Add output: \"chunks\", or leave out chunk_tokens."));
        }
        Ok(super::parsed::CHUNK_TOKENS
            .check(self.chunk_tokens)?
            .unwrap_or(DEFAULT_CHUNK_TOKENS))
    }

    /// The query, when one was asked for, validated with its mode and context.
    pub(super) fn query(&self) -> Result<Option<Query>, ApiError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{DocxMode, Ocr};

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
            } else if reference.contains("schemas/HiddenText") {
                serde_json::to_value(crate::options::HiddenText::Keep).unwrap()
            } else if reference.contains("schemas/Furniture") {
                serde_json::to_value(crate::options::Furniture::Keep).unwrap()
            } else if reference.contains("schemas/Output") {
                serde_json::to_value(crate::options::Output::Markdown).unwrap()
            } else {
                assert!(
                    !reference.contains("$ref"),
                    "{name}: a new option type: {p}"
                );
                match ty.as_str() {
                    "integer" => serde_json::json!(1),
                    "boolean" => serde_json::json!(true),
                    "array" => serde_json::json!(["1"]),
                    _ => serde_json::json!("1"),
                }
            };
            body.insert(name.clone(), v);
        }
        let req: ReadRequest = serde_json::from_value(serde_json::Value::Object(body)).unwrap();
        let given = req.given();
        assert_eq!(given.len() + IDENTITY.len(), props.len(), "{given:?}");
        for key in &given {
            let placed = UNIVERSAL.contains(&key.as_str())
                || crate::detect::ALL_FORMATS
                    .iter()
                    .any(|f| options_for(*f).contains(&key.as_str()));
            assert!(placed, "option {key} fits no format");
        }
    }
}
