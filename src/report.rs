//! The format-specific keys of the envelope (SPEC §3), typed: one `Report` flattened beside
//! the common keys. Each key is present only for the formats that give it, so the OpenAPI
//! description lists every key a client can receive, with its type.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::ocr::OcrLine;

/// Format-specific keys. Text family: `encoding`, `encoding_confidence`, `size`,
/// `total_lines` (`byte_range` for byte windows); pdf: `total_pages`, `pages_read`,
/// `page_range_read`, `ocr_pages`, `ocr_engine`, `skipped_pages`, `pages_ocr`,
/// `ocr_quality`, `metadata`; docx: `paragraphs`, `tables`, `blocks`; pptx: `slides`,
/// `total_slides`, `slide_range_read`; excel: `sheets`; image: `width`, `height`,
/// `ocr_engine`, `ocr_quality`; e-mail: `subject`, `from`, `to`, `cc`, `date`,
/// `total_lines`, `attachments`.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Report {
    /// CSV/TSV with `profile`: the table, column by column (the whole file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<TableProfile>,
    /// Text family: the encoding the bytes were decoded with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// Text family: how sure that choice is (`bom`, `certain`, `declared`, `guessed`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding_confidence: Option<String>,
    /// Text family: the file's size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Text family, e-mail body: lines in the whole text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// Text family, byte reads: the `[start, end)` bytes read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub byte_range: Option<Vec<u64>>,

    /// PDF: pages in the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// PDF: pages whose text is in this answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_read: Option<u64>,
    /// PDF: those pages as a range spec (`"1-3,7"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_range_read: Option<String>,
    /// PDF: pages recognised by OCR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr_pages: Option<u64>,
    /// PDF, image: the OCR engine that read pages (absent when none did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr_engine: Option<String>,
    /// PDF: pages that needed OCR and did not get it (no engine, or `ocr: none`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_pages: Option<Vec<u64>>,
    /// PDF: every page that needed OCR, why, and how it went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages_ocr: Option<Vec<PageOcr>>,
    /// PDF, image: how good the OCR'd text is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr_quality: Option<OcrQuality>,
    /// PDF, EPUB, RTF: what the document states about itself (a PDF's information
    /// dictionary and page size, an EPUB's package metadata, an RTF's `\info`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// PDF, image, with `include_boxes`: the OCR lines with boxes and confidences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boxes: Option<Boxes>,
    /// PDF pages served from the document memory instead of OCR'd again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ocr_pages_from_memory: Option<u64>,

    /// Word, OpenDocument text, RTF: paragraphs in the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paragraphs: Option<u64>,
    /// Word, OpenDocument text, RTF: tables in the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tables: Option<u64>,
    /// Word, OpenDocument text, RTF: blocks (paragraphs and tables) in the body;
    /// `paragraph_offset` counts these.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,

    /// PowerPoint: slides in this answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slides: Option<u64>,
    /// PowerPoint: slides in the presentation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_slides: Option<u64>,
    /// PowerPoint: the slides read as a range spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slide_range_read: Option<String>,

    /// EPUB: chapters (spine documents) in the book.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_chapters: Option<u64>,
    /// EPUB: the chapters read as a range spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapter_range_read: Option<String>,
    /// EPUB: the book's title (its package metadata); RTF: `{\info{\title}}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,

    /// Excel: every sheet, its size and how much of it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheets: Option<Vec<SheetInfo>>,

    /// Image: width in pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Image: height in pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,

    /// E-mail: the subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// E-mail: the sender.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// E-mail: the recipients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// E-mail: the copied recipients.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// E-mail: when it was sent (ISO 8601 where the message says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// E-mail: the files attached, each stored as an upload of the same tenant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attachments: Option<Vec<AttachmentInfo>>,

    /// Whether the deadline passed before the selection was read (then `next` reads on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<bool>,
    /// A plain remark about an empty or unusual result (never instead of an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A PDF page that needed OCR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PageOcr {
    pub page: u64,
    /// `no_text_layer`, `sparse_text`, `garbled_text` or `forced`.
    pub reason: Option<String>,
    /// Mean confidence of its recognised lines.
    pub confidence: Option<f32>,
    /// `done` or `skipped`.
    pub status: String,
    /// Lines read a second time from a 2× enlargement because a punctuation mark or symbol
    /// in them was unsure (`include_boxes` marks each with `reread`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reread_lines: Option<u64>,
    /// Lines in a script the read's engine has no letters for, read by an engine that has
    /// (`include_boxes` gives each line's `script` and `engine`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_script_lines: Option<u64>,
    /// Lines left out of the text: their script has no recognition model installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported_script: Option<Vec<UnreadLine>>,
}

pub use crate::ocr::UnreadLine;

/// How good the OCR'd text is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OcrQuality {
    /// `no_ocr_needed`, `good` (every OCR'd line at 0.8 or more, none looking read in the
    /// wrong script), `degraded`, `unsupported_script` (lines in a script no installed
    /// engine reads were left out: `unsupported_script` lists them) or `no_ocr_engine`.
    pub quality_flag: String,
    /// Pages (or image frames) recognised.
    pub ocr_pages: u64,
    /// Visible characters per page read.
    pub text_density: f64,
    /// Image: mean confidence of the lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
    /// Image: lines read a second time from a 2× enlargement because a punctuation mark
    /// or symbol in them was unsure (`include_boxes` marks each with `reread`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reread_lines: Option<u64>,
    /// OCR'd lines under 0.8 confidence or looking read in the wrong script (`good` needs
    /// none; `include_boxes` gives each line's confidence).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsure_lines: Option<u64>,
    /// Lines in a script the engine has no letters for, read by one that has (Korean by
    /// Tesseract's `kor` on a page PP-OCR read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_script_lines: Option<u64>,
    /// Lines left out of the text, their script having no engine installed, with the
    /// script and where they are (`quality_flag` is then `unsupported_script`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported_script: Option<Vec<UnreadLine>>,
}

/// What a document states about itself: a PDF's information dictionary and its first
/// page's size; an EPUB's package metadata (Dublin Core: its creators as `author`, `date`
/// as `created`); an RTF's `\info` (`title`, `author`, `subject`, `doccomm` as
/// `description`). Only what the file says; nothing guessed.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The authors (several joined by `; `).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The subject (an EPUB's several joined by `, `).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// EPUB, RTF: the description or summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// EPUB: the language (BCP 47, as the book gives it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// EPUB: the publisher.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    /// EPUB: the identifier (ISBN, UUID, URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// PDF: the program that made the original document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creator: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer: Option<String>,
    /// ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// ISO 8601.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_size: Option<PageSize>,
}

/// A page's size in points (1/72 inch).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PageSize {
    pub width_pt: f64,
    pub height_pt: f64,
}

/// OCR lines with boxes: per page for a PDF, one list for an image.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Boxes {
    /// PDF: the lines of each OCR'd page.
    Pages(Vec<PageBoxes>),
    /// Image: the lines of the image (all frames of a TIFF).
    Lines(Vec<OcrLine>),
}

impl PartialEq for Boxes {
    fn eq(&self, other: &Self) -> bool {
        serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

/// The OCR lines of one PDF page.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct PageBoxes {
    pub page: u64,
    pub lines: Option<Vec<OcrLine>>,
}

/// A sheet of a workbook as listed in `sheets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SheetInfo {
    pub name: String,
    pub rows: u64,
    pub cols: u64,
    /// `full`, `partial`, `not_read`, `not_selected`, or `hidden_left_out` (a hidden sheet
    /// read with `hidden_text: "drop"`).
    pub read: String,
    pub hidden: bool,
    /// Of a partly read sheet: the last cell read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_cell: Option<String>,
    /// `chart` for a chart sheet (no cells; its chart is read); absent for a worksheet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// With `profile`: the sheet's (or the range's) table, column by column, all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<TableProfile>,
    /// With `include_styles` (xlsx): the look of the cells read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub styles: Option<SheetStyles>,
}

/// What a sheet's formatting says about the cells read (`include_styles`). Its empty lists
/// are left out, and read back as empty (a worker's envelope is read back by the server).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct SheetStyles {
    /// Merged ranges that touch the cells read, `A1:D1`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// Hidden rows among those read (1-based).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden_rows: Vec<u64>,
    /// Hidden columns among those read, `C` or `E:F`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hidden_cols: Vec<String>,
    /// Number formats other than General, each over a column's run of cells.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub number_formats: Vec<NumberFormatRange>,
    /// The header: among the first three rows read, the first run of rows whose every
    /// cell is bold or filled alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<HeaderStyle>,
    /// Some lists were cut at the entry bound (`max_cells`, at most 1000 each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// A number format over a range of cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct NumberFormatRange {
    pub range: String,
    /// The format code, as Excel stores it (`yyyy-mm-dd`, `#,##0.00`, `0%`).
    pub format: String,
}

/// The header row(s) of a sheet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HeaderStyle {
    /// Its first row (1-based).
    pub row: u64,
    pub rows: u64,
    pub bold: bool,
    /// The fill colour shared by its cells (`FFFFFF00`, or `theme 4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill: Option<String>,
}

/// A file attached to an e-mail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AttachmentInfo {
    pub name: String,
    /// Bytes (absent for embedded items that are not extracted).
    pub size: Option<u64>,
    /// The upload it was stored as (null when it was not stored).
    pub file_id: Option<String>,
    /// Its format family, once stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Why it was not stored or extracted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The upload's refusal (blocked type, too large), when it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<AttachmentError>,
}

/// Why an attachment was refused as an upload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AttachmentError {
    pub code: crate::error::ErrorCode,
    pub message: String,
}

/// What a table (a CSV/TSV file, a sheet or a range) holds, column by column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TableProfile {
    /// Rows of data: blank rows and the header (when there is one) are not counted.
    pub rows: u64,
    /// Columns of the widest row.
    pub column_count: u64,
    /// Whether the first row looks like a header (names, not data): its cells are then
    /// the columns' names and not counted as data.
    pub header: bool,
    /// Title rows above the table: up to three first rows with one filled cell of text
    /// each, over the header of a table of two columns or more (a header naming a column
    /// of numbers, dates or booleans: `Quarterly sales 2024` over `region,amount`), joined
    /// by ` / `; neither header nor data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// One entry per column, the first 1,000.
    pub columns: Vec<ColumnProfile>,
}

/// One column of a table profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ColumnProfile {
    /// The header cell; where there is no header, or its cell over this column is empty,
    /// the column's letter (sheets) or `column N` (CSV/TSV).
    pub name: String,
    /// `integer`, `decimal`, `date`, `boolean`, `text` (any other value, or a mix), or
    /// `empty` (no value at all).
    #[serde(rename = "type")]
    pub kind: String,
    /// Rows with no value here (empty, `NA`, `N/A`, `null`, `NULL`, `None`, `NaN`, or a row
    /// too short to reach the column).
    pub nulls: u64,
    /// Different values (exact up to 10,000, then estimated: see `distinct_exact`).
    pub distinct: u64,
    pub distinct_exact: bool,
    /// Numbers (integer and decimal columns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// Dates (date columns), as written in the table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earliest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest: Option<String>,
}
