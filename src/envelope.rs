//! The read envelope: one shape for every format (SPEC §3), with format-specific keys
//! flattened beside the common ones.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::sniff::Family;

/// What an extractor hands back; the envelope adds identity and timing.
#[derive(Debug, Default)]
pub struct Extraction {
    /// The text to return (already truncated, with its closing line when cut).
    pub text: String,
    /// Characters of the full selection, before truncation.
    pub char_count: u64,
    pub truncated: bool,
    /// The option values that read on, when truncated or partial.
    pub next: Option<Map<String, Value>>,
    pub warnings: Vec<String>,
    /// Matching lines, for reads with `query`.
    pub matches: Option<u64>,
    /// Format-specific keys (SPEC §3 table).
    pub extra: Map<String, Value>,
    /// Files carried inside the document (e-mail attachments), for the caller to store.
    pub attachments: Vec<Attachment>,
    /// Whether the costly part (OCR) came wholly from the document memory.
    pub cached: bool,
    /// Pages this read recognised, for the caller to remember.
    pub fresh_ocr: Vec<(u64, Vec<crate::ocr::OcrLine>)>,
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
    #[schema(value_type = String, example = "ok")]
    #[serde(skip_deserializing, default = "ok_status")]
    pub status: &'static str,
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
    /// The options that read on from where this read stopped (e.g. `{"offset": 412}`);
    /// absent when the selection was read whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub next: Option<Map<String, Value>>,
    /// Count of matching lines, when `query` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches: Option<u64>,
    pub warnings: Vec<String>,
    pub elapsed_ms: u64,
    /// Whether the result came from the document memory.
    pub cached: bool,
    /// Format-specific keys: text family `encoding`, `encoding_confidence`, `size`,
    /// `total_lines`; pdf `total_pages`, `pages_read`, …
    #[serde(flatten)]
    #[schema(value_type = Object, additional_properties)]
    pub extra: Map<String, Value>,
    /// Attachment bytes on their way to the store (never serialized).
    #[serde(skip)]
    #[schema(ignore)]
    pub attachments: Vec<Attachment>,
    /// OCR results on their way to the document memory (never serialized).
    #[serde(skip)]
    #[schema(ignore)]
    pub fresh_ocr: Vec<(u64, Vec<crate::ocr::OcrLine>)>,
}

fn ok_status() -> &'static str {
    "ok"
}

/// The closing line of a cut text.
pub fn truncation_line(total_chars: u64) -> String {
    format!("... (truncated, total {total_chars} chars)")
}

/// Append the closing line of a cut text: always after a newline of its own, so a
/// client can strip it exactly.
pub fn close_truncated(mut kept: String, total_chars: u64) -> String {
    kept.push('\n');
    kept.push_str(&truncation_line(total_chars));
    kept
}
