//! Decides what a file is from its bytes: `enum Format` and `sniff()`.
//!
//! The file name is only a hint, used where content is ambiguous (the plain-text
//! family, and telling .docm from .docx). Executables and archives are blocked here.

use std::io::{Read, Seek};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The family reported as `format` in the envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Pdf,
    Docx,
    Pptx,
    Odt,
    Odp,
    Rtf,
    Epub,
    Excel,
    Image,
    Email,
    Text,
    Html,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pdf => "pdf",
            Self::Docx => "docx",
            Self::Pptx => "pptx",
            Self::Odt => "odt",
            Self::Odp => "odp",
            Self::Rtf => "rtf",
            Self::Epub => "epub",
            Self::Excel => "excel",
            Self::Image => "image",
            Self::Email => "email",
            Self::Text => "text",
            Self::Html => "html",
        }
    }
}

/// Every readable format, a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Pdf,
    Docx {
        macros: bool,
    },
    Pptx {
        macros: bool,
    },
    Xlsx {
        macros: bool,
    },
    Xls,
    /// Excel's binary workbook (`xl/workbook.bin`).
    Xlsb,
    /// Excel 2003 XML (SpreadsheetML 2003, `<Workbook>` in its namespace): one XML file.
    SpreadsheetMl,
    Ods,
    Odt,
    Odp,
    Rtf,
    /// Word 2003 XML (WordprocessingML 2003, `w:wordDocument`): one XML file, often named
    /// `.xml` or `.doc`.
    WordMl,
    Epub,
    Msg,
    Eml,
    Image(ImageKind),
    Text(TextKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Bmp,
    Webp,
    Tiff,
}

/// The plain-text family: what kind of text, from the name hint and the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextKind {
    Plain,
    Markdown,
    Csv,
    Tsv,
    Json,
    Yaml,
    Toml,
    Ini,
    Html,
    Xml,
    Source,
}

impl Format {
    pub fn family(self) -> Family {
        match self {
            Self::Pdf => Family::Pdf,
            Self::Docx { .. } | Self::WordMl => Family::Docx,
            Self::Pptx { .. } => Family::Pptx,
            Self::Odt => Family::Odt,
            Self::Odp => Family::Odp,
            Self::Rtf => Family::Rtf,
            Self::Epub => Family::Epub,
            Self::Xlsx { .. } | Self::Xls | Self::Xlsb | Self::SpreadsheetMl | Self::Ods => {
                Family::Excel
            }
            Self::Msg | Self::Eml => Family::Email,
            Self::Image(_) => Family::Image,
            Self::Text(TextKind::Html) => Family::Html,
            Self::Text(_) => Family::Text,
        }
    }

    /// The exact media type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Pdf => "application/pdf",
            Self::Docx { macros: false } => {
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            }
            Self::Docx { macros: true } => "application/vnd.ms-word.document.macroEnabled.12",
            Self::Pptx { macros: false } => {
                "application/vnd.openxmlformats-officedocument.presentationml.presentation"
            }
            Self::Pptx { macros: true } => {
                "application/vnd.ms-powerpoint.presentation.macroEnabled.12"
            }
            Self::Xlsx { macros: false } => {
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            }
            Self::Xlsx { macros: true } => "application/vnd.ms-excel.sheet.macroEnabled.12",
            Self::Xls => "application/vnd.ms-excel",
            Self::Xlsb => "application/vnd.ms-excel.sheet.binary.macroEnabled.12",
            Self::SpreadsheetMl => "application/vnd.ms-spreadsheetml",
            Self::Ods => "application/vnd.oasis.opendocument.spreadsheet",
            Self::Odt => "application/vnd.oasis.opendocument.text",
            Self::Odp => "application/vnd.oasis.opendocument.presentation",
            Self::Rtf => "application/rtf",
            Self::WordMl => "application/vnd.ms-wordml",
            Self::Epub => "application/epub+zip",
            Self::Msg => "application/vnd.ms-outlook",
            Self::Eml => "message/rfc822",
            Self::Image(k) => match k {
                ImageKind::Png => "image/png",
                ImageKind::Jpeg => "image/jpeg",
                ImageKind::Gif => "image/gif",
                ImageKind::Bmp => "image/bmp",
                ImageKind::Webp => "image/webp",
                ImageKind::Tiff => "image/tiff",
            },
            Self::Text(k) => match k {
                TextKind::Plain => "text/plain",
                TextKind::Markdown => "text/markdown",
                TextKind::Csv => "text/csv",
                TextKind::Tsv => "text/tab-separated-values",
                TextKind::Json => "application/json",
                TextKind::Yaml => "application/yaml",
                TextKind::Toml => "application/toml",
                TextKind::Ini => "text/plain",
                TextKind::Html => "text/html",
                TextKind::Xml => "application/xml",
                TextKind::Source => "text/plain",
            },
        }
    }

    /// The inverse of `mime()`, for formats read back from the database.
    pub fn from_mime(mime: &str, name: &str) -> Option<Format> {
        if mime == "text/plain" {
            return Some(Format::Text(text_kind_from_name(name)));
        }
        ALL_FORMATS.iter().copied().find(|f| f.mime() == mime)
    }
}

/// Every format, one of each kind (the mime table, and the strict rule's test).
pub const ALL_FORMATS: &[Format] = &[
    Format::Pdf,
    Format::Docx { macros: false },
    Format::Docx { macros: true },
    Format::Pptx { macros: false },
    Format::Pptx { macros: true },
    Format::Xlsx { macros: false },
    Format::Xlsx { macros: true },
    Format::Xls,
    Format::Xlsb,
    Format::SpreadsheetMl,
    Format::Ods,
    Format::Odt,
    Format::Odp,
    Format::Rtf,
    Format::WordMl,
    Format::Epub,
    Format::Msg,
    Format::Eml,
    Format::Image(ImageKind::Png),
    Format::Image(ImageKind::Jpeg),
    Format::Image(ImageKind::Gif),
    Format::Image(ImageKind::Bmp),
    Format::Image(ImageKind::Webp),
    Format::Image(ImageKind::Tiff),
    Format::Text(TextKind::Markdown),
    Format::Text(TextKind::Csv),
    Format::Text(TextKind::Tsv),
    Format::Text(TextKind::Json),
    Format::Text(TextKind::Yaml),
    Format::Text(TextKind::Toml),
    Format::Text(TextKind::Html),
    Format::Text(TextKind::Xml),
];

/// Why a file is refused at the door.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A document kind this service does not read: its media type.
    Unsupported(String),
    /// An executable or library: what was detected.
    Executable(&'static str),
    /// An archive: what was detected.
    Archive(&'static str),
    /// Binary content that is no document (audio, video, a database, …).
    Binary(String),
    /// Binary Office 97-2003 Word or PowerPoint.
    Legacy(&'static str),
    /// An encrypted Office package (OLE2 `EncryptedPackage`) or OpenDocument package
    /// (`manifest:encryption-data`).
    EncryptedOffice,
    /// A document container too damaged to tell what it holds.
    Corrupt(String),
    /// Plain text under the name of a binary document format (the extension).
    Misnamed(String),
}

impl Refusal {
    pub fn into_error(self) -> crate::error::ApiError {
        use crate::error::{ApiError, ErrorCode};
        match self {
            Refusal::Executable(what) => ApiError::new(
                ErrorCode::BlockedType,
                format!("{what} detected: executables and libraries are not accepted"),
            )
            .with_hint("Upload documents only (PDF, Office, e-mail, images, text). A script is accepted as text when it starts with a #! line."),
            Refusal::Unsupported(kind) => ApiError::new(
                ErrorCode::UnsupportedFormat,
                format!("{kind} files are not read by this service"),
            )
            .with_hint("Save it as PDF, or as an OpenDocument or Office text, spreadsheet or presentation (odt, ods, odp, docx, xlsx, pptx), and upload that."),
            Refusal::Archive(what) => ApiError::new(
                ErrorCode::BlockedType,
                format!("{what} archive detected: archives are not accepted"),
            )
            .with_hint("Extract the archive locally and upload the documents inside it one by one."),
            Refusal::Binary(what) => ApiError::new(
                ErrorCode::BinaryContent,
                format!("{what}: no text can be read from it"),
            ),
            Refusal::Legacy(what) => ApiError::new(
                ErrorCode::LegacyFormat,
                format!("{what} detected: the binary Office 97-2003 format is not read"),
            )
            .with_hint(if what.contains("PowerPoint") {
                "Open it in PowerPoint (or LibreOffice) and save it as .pptx, then upload that."
            } else if what.contains("Excel") {
                "Open it in Excel (or LibreOffice) and save it as .xlsx, then upload that."
            } else {
                "Open it in Word (or LibreOffice) and save it as .docx, then upload that."
            }),
            Refusal::Corrupt(what) => ApiError::new(ErrorCode::Corrupt, what),
            Refusal::Misnamed(ext) => ApiError::new(
                ErrorCode::Corrupt,
                format!("the file is named .{ext} but holds plain text, not a .{ext} document"),
            )
            .with_hint("If the text is what you want, rename the file (.txt, .csv, .html) and upload it again; otherwise re-export the document."),
            Refusal::EncryptedOffice => ApiError::new(
                ErrorCode::Encrypted,
                "the document is password-protected (its parts are encrypted)",
            )
            .with_hint("Remove the password in the program that made the file (or save an unprotected copy) and upload that."),
        }
    }
}

/// The lowercased extension of a client-supplied name, if any.
pub fn extension(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let (stem, ext) = base.rsplit_once('.')?;
    if stem.is_empty() && !base.starts_with('.') {
        return None;
    }
    Some(ext.to_ascii_lowercase())
}

/// The text kind a name suggests.
pub fn text_kind_from_name(name: &str) -> TextKind {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    if matches!(
        base,
        "Dockerfile" | "Makefile" | "GNUmakefile" | "CMakeLists.txt"
    ) {
        return TextKind::Source;
    }
    match extension(name).as_deref() {
        Some("md" | "markdown") => TextKind::Markdown,
        Some("csv") => TextKind::Csv,
        Some("tsv" | "tab") => TextKind::Tsv,
        Some("json" | "jsonl" | "ndjson") => TextKind::Json,
        Some("yaml" | "yml") => TextKind::Yaml,
        Some("toml") => TextKind::Toml,
        Some("ini" | "cfg" | "conf" | "env") => TextKind::Ini,
        Some("html" | "htm" | "xhtml") => TextKind::Html,
        Some("xml" | "rss" | "atom" | "svg" | "xsd" | "xsl") => TextKind::Xml,
        Some(
            "py" | "pyi" | "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "go" | "rs" | "java"
            | "kt" | "swift" | "c" | "h" | "cc" | "cpp" | "hpp" | "cxx" | "rb" | "php" | "pl"
            | "lua" | "sh" | "bash" | "zsh" | "ps1" | "bat" | "r" | "m" | "sql" | "cmake" | "cs"
            | "scala" | "dart",
        ) => TextKind::Source,
        _ => TextKind::Plain,
    }
}

/// How many leading bytes `sniff` looks at for signatures.
pub const HEAD_LEN: usize = 64 * 1024;

/// Decide the format of a stored file. `file` is rewound and read as needed:
/// the head for signatures, the central directory of a zip, the directory of an OLE2 file.
pub fn sniff_file(file: &mut std::fs::File, name_hint: &str) -> Result<Format, Refusal> {
    let mut head = Vec::with_capacity(HEAD_LEN);
    file.rewind()
        .map_err(|e| Refusal::Binary(format!("unreadable file ({e})")))?;
    file.by_ref()
        .take(HEAD_LEN as u64)
        .read_to_end(&mut head)
        .map_err(|e| Refusal::Binary(format!("unreadable file ({e})")))?;
    let total = file
        .metadata()
        .map(|m| m.len())
        .unwrap_or(head.len() as u64);
    sniff(&head, total, name_hint, || {
        let _ = file.rewind();
        file
    })
}

/// Decide the format from the head of a file. `open` gives random access to the whole
/// file when the head is not enough (zip and OLE2 containers).
pub fn sniff<R: Read + Seek>(
    head: &[u8],
    total_len: u64,
    name_hint: &str,
    open: impl FnOnce() -> R,
) -> Result<Format, Refusal> {
    // Executables first: a name can never make them acceptable.
    if head.starts_with(b"\x7fELF") {
        return Err(Refusal::Executable("ELF executable or shared library"));
    }
    if head.starts_with(b"MZ") && is_pe(head) {
        return Err(Refusal::Executable("Windows PE/MZ executable"));
    }
    if head.len() >= 4 {
        let m = [head[0], head[1], head[2], head[3]];
        match m {
            [0xFE, 0xED, 0xFA, 0xCE]
            | [0xFE, 0xED, 0xFA, 0xCF]
            | [0xCE, 0xFA, 0xED, 0xFE]
            | [0xCF, 0xFA, 0xED, 0xFE] => return Err(Refusal::Executable("Mach-O executable")),
            [0xCA, 0xFE, 0xBA, 0xBE] => {
                // Java class files and Mach-O fat binaries share this magic.
                return Err(Refusal::Executable(if head.len() >= 8 && head[7] >= 45 {
                    "Java class file"
                } else {
                    "Mach-O universal binary"
                }));
            }
            [0x00, 0x61, 0x73, 0x6D] => return Err(Refusal::Executable("WebAssembly module")),
            _ => {}
        }
    }
    if head.starts_with(b"dex\n") {
        return Err(Refusal::Executable("Android DEX executable"));
    }

    // Archives and compressed streams, before any document signature: their headers carry
    // member names (a tar member, a gzip's file name, a stored zip entry), and a member
    // named `%PDF-1.4` or `GIF89a` must not make the archive a document.
    if let Some(what) = archive_kind(head) {
        return Err(Refusal::Archive(what));
    }
    // Containers that are documents only when their directory says so.
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return sniff_zip(head, open(), total_len, name_hint);
    }
    if head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return sniff_ole(open());
    }
    // RTF, by its header (a BOM or blank lines before it allowed): whatever the name says
    // (Word saves RTF as `.doc` when asked), unless an archive closes the file.
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let body = &body[body
        .iter()
        .take(64)
        .take_while(|b| b.is_ascii_whitespace())
        .count()..];
    if body.starts_with(b"{\\rtf") {
        if zip_at_end(&mut open(), total_len) {
            return Err(Refusal::Archive("zip archive (behind an RTF header)"));
        }
        return Ok(Format::Rtf);
    }
    // Word 2003 XML, by its processing instruction or its root element in its namespace.
    if word_2003_xml(body) {
        if zip_at_end(&mut open(), total_len) {
            return Err(Refusal::Archive("zip archive (behind an XML header)"));
        }
        return Ok(Format::WordMl);
    }
    if excel_2003_xml(body) {
        if zip_at_end(&mut open(), total_len) {
            return Err(Refusal::Archive("zip archive (behind an XML header)"));
        }
        return Ok(Format::SpreadsheetMl);
    }

    // Documents with signatures at offset 0, or a PDF's within its first KiB (PDF allows
    // junk before its header) when the file also ends like a PDF (`startxref` / `%%EOF` in
    // its last KiB). A zip's end of central directory closing the file wins over either:
    // unzip opens such a file from its end whatever its first bytes say, so a document
    // header in front of an archive does not make it a document.
    let pdf_at_start = head.starts_with(b"%PDF-");
    let image = image_kind(head);
    let pdf_later =
        !pdf_at_start && image.is_none() && find(&head[..head.len().min(1024)], b"%PDF-").is_some();
    if pdf_at_start || image.is_some() || pdf_later {
        let mut r = open();
        if zip_at_end(&mut r, total_len) {
            return Err(Refusal::Archive("zip archive (behind a document header)"));
        }
        if pdf_at_start {
            return Ok(Format::Pdf);
        }
        if let Some(img) = image {
            return Ok(Format::Image(img));
        }
        if ends_like_pdf(r, total_len) {
            return Ok(Format::Pdf);
        }
    }
    // Other binary kinds people drop by mistake.
    if let Some(t) = infer::get(head) {
        use infer::MatcherType as M;
        match t.matcher_type() {
            M::Audio | M::Video | M::Font | M::Image => {
                return Err(Refusal::Binary(format!(
                    "{} ({})",
                    t.mime_type(),
                    t.extension()
                )))
            }
            M::App if t.mime_type() == "application/vnd.sqlite3" => {
                return Err(Refusal::Binary("SQLite database".into()))
            }
            _ => {}
        }
    }

    // Excel 2.x–4.x saved a sheet as bare BIFF records (no compound file around them):
    // a BOF record of BIFF2, 3 or 4 first.
    if let [0x09, 0x00 | 0x02 | 0x04, len, 0x00, ..] = head {
        if matches!(len, 4 | 6 | 8) {
            return Err(Refusal::Legacy("Excel 2.x–4.x worksheet (.xls)"));
        }
    }
    // The text family: decided by the bytes, kind by the name.
    if looks_binary(head) {
        return Err(Refusal::Binary("unrecognised binary data".into()));
    }
    // Plain text under a binary document's name is not that document: say so, rather
    // than hand back text the caller believes is a spreadsheet or a PDF.
    if let Some(
        ext @ ("pdf" | "doc" | "docx" | "docm" | "xls" | "xlsx" | "xlsm" | "ppt" | "pptx" | "pptm"
        | "odt" | "ods" | "odp" | "msg"),
    ) = extension(name_hint).as_deref()
    {
        return Err(Refusal::Misnamed(ext.to_string()));
    }
    if matches!(
        extension(name_hint).as_deref(),
        Some("eml" | "mht" | "mhtml")
    ) || looks_like_email(head)
    {
        return Ok(Format::Eml);
    }
    Ok(Format::Text(text_kind_from_name(name_hint)))
}

/// Whether the file ends with a zip's end-of-central-directory record: its signature within
/// the last 64 KiB + 22 bytes, its comment reaching exactly to the end of the file, and the
/// central directory it points at lying inside the file and starting with its signature.
fn zip_at_end<R: Read + Seek>(r: &mut R, total_len: u64) -> bool {
    const EOCD: usize = 22;
    if total_len < EOCD as u64 {
        return false;
    }
    let from = total_len.saturating_sub(EOCD as u64 + 0xFFFF);
    let mut tail = Vec::new();
    if r.seek(std::io::SeekFrom::Start(from)).is_err()
        || r.by_ref()
            .take(EOCD as u64 + 0xFFFF)
            .read_to_end(&mut tail)
            .is_err()
    {
        return false;
    }
    let mut at = tail.len().saturating_sub(EOCD);
    loop {
        if tail[at..].starts_with(b"PK\x05\x06") && at + EOCD <= tail.len() {
            let le16 = |i: usize| u16::from_le_bytes([tail[at + i], tail[at + i + 1]]) as u64;
            let le32 = |i: usize| {
                u32::from_le_bytes([
                    tail[at + i],
                    tail[at + i + 1],
                    tail[at + i + 2],
                    tail[at + i + 3],
                ]) as u64
            };
            let comment = le16(20);
            let (cd_size, cd_offset) = (le32(12), le32(16));
            let eocd_pos = from + at as u64;
            if at as u64 + EOCD as u64 + comment == tail.len() as u64
                && cd_size + cd_offset <= eocd_pos + 1
            {
                // The central directory's first record, read where the record says (a
                // zip with junk in front has its offsets shifted by it: try both).
                let shift = eocd_pos.saturating_sub(cd_size + cd_offset);
                for start in [cd_offset, cd_offset + shift] {
                    let mut sig = [0u8; 4];
                    if cd_size == 0
                        || (r.seek(std::io::SeekFrom::Start(start)).is_ok()
                            && r.read_exact(&mut sig).is_ok()
                            && &sig == b"PK\x01\x02")
                    {
                        return true;
                    }
                }
            }
        }
        if at == 0 {
            return false;
        }
        at -= 1;
    }
}

/// Whether the file's last KiB has a PDF trailer (`startxref` or `%%EOF`).
fn ends_like_pdf<R: Read + Seek>(mut r: R, total_len: u64) -> bool {
    let from = total_len.saturating_sub(1024);
    let mut tail = Vec::with_capacity(1024);
    r.seek(std::io::SeekFrom::Start(from)).is_ok()
        && r.take(1024).read_to_end(&mut tail).is_ok()
        && (find(&tail, b"startxref").is_some() || find(&tail, b"%%EOF").is_some())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn is_pe(head: &[u8]) -> bool {
    // A real DOS/PE header: e_lfanew points at "PE\0\0", or at least the DOS stub is there.
    if head.len() < 64 {
        return head.len() >= 2;
    }
    let off = u32::from_le_bytes([head[60], head[61], head[62], head[63]]) as usize;
    if off + 4 <= head.len() && &head[off..off + 4] == b"PE\0\0" {
        return true;
    }
    // Old DOS executables have no PE header; a text file starting "MZ" has printable bytes here.
    head[2..64].iter().filter(|b| **b == 0).count() > 8
}

fn image_kind(head: &[u8]) -> Option<ImageKind> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageKind::Png)
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageKind::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageKind::Gif)
    } else if head.starts_with(b"BM") && head.len() > 14 && head[6..10] == [0, 0, 0, 0] {
        Some(ImageKind::Bmp)
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some(ImageKind::Webp)
    } else if head.starts_with(b"II*\0") || head.starts_with(b"MM\0*") {
        Some(ImageKind::Tiff)
    } else {
        None
    }
}

fn archive_kind(head: &[u8]) -> Option<&'static str> {
    let starts = |m: &[u8]| head.starts_with(m);
    if starts(&[0x1F, 0x8B]) {
        Some("gzip")
    } else if starts(b"BZh") && head.len() > 3 && head[3].is_ascii_digit() {
        Some("bzip2")
    } else if starts(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
        Some("xz")
    } else if starts(&[0x28, 0xB5, 0x2F, 0xFD]) {
        Some("zstd")
    } else if starts(&[b'7', b'z', 0xBC, 0xAF, 0x27, 0x1C]) {
        Some("7z")
    } else if starts(b"Rar!\x1a\x07") {
        Some("RAR")
    } else if starts(b"MSCF\0\0\0\0") {
        Some("Microsoft cabinet (CAB)")
    } else if starts(b"PK\x07\x08") || starts(b"PK00") {
        Some("zip")
    } else if starts(&[0x04, 0x22, 0x4D, 0x18]) {
        Some("lz4")
    } else if starts(b"\x1f\x9d") || starts(b"\x1f\xa0") {
        Some("compress (.Z)")
    } else if head.len() >= 262 && (&head[257..262] == b"ustar") {
        Some("tar")
    } else if starts(b"!<arch>\n") {
        Some("ar")
    } else if starts(b"xar!") {
        Some("xar")
    } else if head.len() >= 0x8006
        && [0x8001usize, 0x8801, 0x9001]
            .iter()
            .any(|&o| head.len() >= o + 5 && &head[o..o + 5] == b"CD001")
    {
        Some("ISO 9660 disk image")
    } else {
        None
    }
}

/// Binary when the head has NUL bytes (that are not UTF-16 text) or many control bytes.
fn looks_binary(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    if head.starts_with(&[0xFF, 0xFE, 0, 0]) || head.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return false; // UTF-32 with its byte-order mark
    }
    if super::encoding::utf16_kind(head).is_some() {
        return false;
    }
    // Whole units only: the head may end inside one.
    if super::encoding::utf32_kind(&head[..head.len() & !3]).is_some() {
        return false;
    }
    let sample = &head[..head.len().min(8192)];
    let nul = sample.iter().filter(|b| **b == 0).count();
    if nul > 0 {
        return true;
    }
    // ISO-2022-KR shifts in and out of Korean with SO and SI: text, not control codes.
    let shifts = super::encoding::iso2022kr_header(sample);
    let ctrl = sample
        .iter()
        .filter(|b| matches!(**b, 0x01..=0x08 | 0x0E..=0x1A | 0x1C..=0x1F))
        .filter(|b| !(shifts && matches!(**b, 0x0E | 0x0F)))
        .count();
    ctrl * 10 > sample.len()
}

/// An RFC 822 message: the first line is a header and the head carries several
/// headers that only mail has.
fn looks_like_email(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let mut lines = text.lines();
    let Some(first) = lines.next() else {
        return false;
    };
    let is_header = |l: &str| {
        l.split_once(':').is_some_and(|(k, _)| {
            !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
    };
    if !is_header(first) && !first.starts_with("From ") {
        return false;
    }
    let known = [
        "from:",
        "to:",
        "subject:",
        "date:",
        "message-id:",
        "received:",
        "return-path:",
        "mime-version:",
        "delivered-to:",
    ];
    let mut seen = 0;
    for l in text.lines().take(60) {
        if l.is_empty() {
            break;
        }
        let low = l.to_ascii_lowercase();
        if known.iter().any(|k| low.starts_with(k)) {
            seen += 1;
        }
    }
    seen >= 3
}

/// A zip is accepted only as an Office Open XML or OpenDocument package.
fn sniff_zip<R: Read + Seek>(
    head: &[u8],
    mut r: R,
    total_len: u64,
    name_hint: &str,
) -> Result<Format, Refusal> {
    // A truncated package has no central directory: fall back to the local headers in
    // the head, so a damaged .docx is read (and found corrupt), not called an archive.
    let directory = super::zipdir::entry_names(&mut r, total_len, MAX_LISTED);
    let damaged = directory.is_none();
    let names = directory.unwrap_or_else(|| super::zipdir::local_names(head));
    // The zip crate's reader parses the whole directory into memory, in the server: only
    // for a directory of fewer entries than listed here (the attack pass of 2026-12-07:
    // 900,000 entries behind a deflated `mimetype` took 180 MB an upload).
    let openable = !damaged && names.len() < MAX_LISTED;
    let has = |n: &str| names.iter().any(|e| e == n);
    let ext = extension(name_hint);
    if has("[Content_Types].xml") {
        let macros = names.iter().any(|n| n.ends_with("vbaProject.bin"))
            || matches!(ext.as_deref(), Some("docm" | "xlsm" | "pptm"));
        if has("word/document.xml") || names.iter().any(|n| n.starts_with("word/document")) {
            return Ok(Format::Docx { macros });
        }
        if has("xl/workbook.bin") {
            return Ok(Format::Xlsb);
        }
        if has("xl/workbook.xml") {
            return Ok(Format::Xlsx { macros });
        }
        if has("ppt/presentation.xml") {
            return Ok(Format::Pptx { macros });
        }
    }
    if has("mimetype") {
        // ODF and EPUB store `mimetype` first and uncompressed, so its bytes follow the
        // local header; a package that does not is read for it (a few bytes, bounded).
        let mut declared = stored_mimetype(head).unwrap_or_default();
        if declared.is_empty() && openable {
            declared = mimetype_entry(&mut r).unwrap_or_default();
        }
        let declared = declared.trim_start();
        let odf = |kind: &str| {
            declared.starts_with(&format!("application/vnd.oasis.opendocument.{kind}"))
                && !declared[format!("application/vnd.oasis.opendocument.{kind}").len()..]
                    .starts_with('-')
        };
        if has("content.xml") {
            // Encrypted with a password: its parts are ciphertext, its manifest says so.
            if (odf("spreadsheet") || odf("presentation") || odf("text"))
                && openable
                && odf_encrypted(&mut r)
            {
                return Err(Refusal::EncryptedOffice);
            }
            if odf("spreadsheet") {
                return Ok(Format::Ods);
            }
            if odf("presentation") {
                return Ok(Format::Odp);
            }
            if odf("text") {
                return Ok(Format::Odt);
            }
        }
        if declared.starts_with("application/epub+zip") && has("META-INF/container.xml") {
            return Ok(Format::Epub);
        }
        // Other OpenDocument kinds (drawings, formulas, charts, templates, masters) and
        // the OpenOffice 1 formats: a document, but not one this service reads.
        if declared.starts_with("application/vnd.oasis.opendocument.")
            || declared.starts_with("application/vnd.sun.xml.")
        {
            let kind: String = declared
                .chars()
                .take_while(|c| c.is_ascii_graphic())
                .collect();
            return Err(Refusal::Unsupported(kind));
        }
    }
    if damaged && has("[Content_Types].xml") {
        return Err(Refusal::Corrupt(
            "an Office package cut short (its zip directory is missing)".into(),
        ));
    }
    Err(Refusal::Archive("zip"))
}

/// The `mimetype` entry's content when it is the zip's first entry and stored (not
/// compressed), as ODF and EPUB require: its bytes follow the local header.
fn stored_mimetype(head: &[u8]) -> Option<String> {
    let le16 = |o: usize| Some(u16::from_le_bytes([*head.get(o)?, *head.get(o + 1)?]) as usize);
    let le32 = |o: usize| {
        Some(u32::from_le_bytes([
            *head.get(o)?,
            *head.get(o + 1)?,
            *head.get(o + 2)?,
            *head.get(o + 3)?,
        ]) as usize)
    };
    if head.get(30..38)? != b"mimetype" || le16(8)? != 0 {
        return None;
    }
    let start = 30 + le16(26)? + le16(28)?;
    let size = le32(18)?.min(200);
    Some(String::from_utf8_lossy(head.get(start..start + size)?).into_owned())
}

/// Entries of a zip's directory listed at upload, at most.
const MAX_LISTED: usize = 10_000;

/// The first bytes of a package's `mimetype` entry, when it is not stored first.
fn mimetype_entry<R: Read + Seek>(r: R) -> Option<String> {
    let mut z = zip::ZipArchive::new(r).ok()?;
    let entry = z.by_name("mimetype").ok()?;
    let mut buf = Vec::new();
    entry.take(100).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Whether an OpenDocument package's manifest declares encrypted parts
/// (`manifest:encryption-data`); the manifest read at most 4 MiB inflated.
fn odf_encrypted<R: Read + Seek>(r: R) -> bool {
    let Ok(mut z) = zip::ZipArchive::new(r) else {
        return false;
    };
    let Ok(entry) = z.by_name("META-INF/manifest.xml") else {
        return false;
    };
    let mut buf = Vec::new();
    if entry.take(4 << 20).read_to_end(&mut buf).is_err() {
        return false;
    }
    find(&buf, b"encryption-data").is_some()
}

/// OLE2 compound files: Excel 97-2003 is read; Word/PowerPoint 97-2003 are legacy;
/// Outlook messages are mail; an encrypted OOXML package is encrypted. Decided by the
/// streams at the file's root: a Word document holding an embedded workbook (its
/// `ObjectPool`) is a Word document.
fn sniff_ole<R: Read + Seek>(mut r: R) -> Result<Format, Refusal> {
    let names = match cfb::CompoundFile::open(&mut r) {
        Ok(cf) => cf
            .read_root_storage()
            .take(MAX_OLE_ENTRIES)
            .map(|e| e.name().to_string())
            .collect(),
        // Files other writers make that the crate's checks refuse (siblings out of its
        // order, as files written with names in another case have them): their root's
        // names read without those checks.
        Err(_) => ole_root_names(&mut r)
            .ok_or_else(|| Refusal::Binary("damaged OLE2 compound file".into()))?,
    };
    ole_kind(&names)
}

/// Entries of a compound file's directory looked at, at most.
const MAX_OLE_ENTRIES: usize = 10_000;

/// What a compound file is, by the names of the streams and storages at its root.
fn ole_kind(names: &[String]) -> Result<Format, Refusal> {
    // Names compare as the compound file format compares them, without case (a workbook
    // whose stream is `WORKBOOK` is a workbook).
    let has = |n: &str| names.iter().any(|e| e.eq_ignore_ascii_case(n));
    if has("EncryptedPackage") && has("EncryptionInfo") {
        return Err(Refusal::EncryptedOffice);
    }
    if has("WordDocument") {
        return Err(Refusal::Legacy("Word 97-2003 document (.doc)"));
    }
    if has("PowerPoint Document") {
        return Err(Refusal::Legacy("PowerPoint 97-2003 presentation (.ppt)"));
    }
    if has("Workbook") || has("Book") {
        return Ok(Format::Xls);
    }
    if names.iter().any(|n| {
        n.get(..12)
            .is_some_and(|p| p.eq_ignore_ascii_case("__substg1.0_"))
    }) || has("__properties_version1.0")
    {
        return Ok(Format::Msg);
    }
    Err(Refusal::Binary(
        "OLE2 compound file that is no known document".into(),
    ))
}

/// The names at a compound file's root, read from its header, FAT and directory alone
/// (no check of the directory tree's order); `None` when those do not hold together.
/// Bounded: at most `MAX_OLE_ENTRIES` directory entries and 8 MiB of FAT (a file of 1 GiB
/// in 512-byte sectors) are read: this runs in the server, at upload.
fn ole_root_names<R: Read + Seek>(r: &mut R) -> Option<Vec<String>> {
    const FREE: u32 = 0xFFFF_FFFF;
    const END: u32 = 0xFFFF_FFFE;
    let mut header = [0u8; 512];
    r.seek(std::io::SeekFrom::Start(0)).ok()?;
    r.read_exact(&mut header).ok()?;
    let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let shift = u16_at(&header, 30);
    if !(9..=12).contains(&shift) {
        return None;
    }
    let size = 1usize << shift;
    let sector = |r: &mut R, n: u32| -> Option<Vec<u8>> {
        let mut buf = vec![0u8; size];
        r.seek(std::io::SeekFrom::Start((n as u64 + 1) * size as u64))
            .ok()?;
        r.read_exact(&mut buf).ok()?;
        Some(buf)
    };
    // The FAT's sectors: 109 in the header, the rest in the DIFAT chain.
    let fat_sectors = u32_at(&header, 44) as usize;
    let max_fat = (8 << 20) / size;
    if fat_sectors > max_fat {
        return None;
    }
    let mut fat_at: Vec<u32> = (0..109).map(|i| u32_at(&header, 76 + 4 * i)).collect();
    let mut difat = u32_at(&header, 68);
    let mut seen = 0;
    while difat != END && difat != FREE && fat_at.len() < fat_sectors + 109 && seen < max_fat {
        let b = sector(r, difat)?;
        let per = size / 4 - 1;
        fat_at.extend((0..per).map(|i| u32_at(&b, 4 * i)));
        difat = u32_at(&b, 4 * per);
        seen += 1;
    }
    let mut fat: Vec<u32> = Vec::new();
    for &s in fat_at.iter().take(fat_sectors) {
        if s == FREE || s == END {
            continue;
        }
        let b = sector(r, s)?;
        fat.extend((0..size / 4).map(|i| u32_at(&b, 4 * i)));
    }
    // The directory's chain, each entry 128 bytes.
    let mut entries: Vec<u8> = Vec::new();
    let mut at = u32_at(&header, 48);
    let mut visited = std::collections::HashSet::new();
    while at != END && entries.len() / 128 < MAX_OLE_ENTRIES {
        if !visited.insert(at) {
            return None;
        }
        entries.extend(sector(r, at)?);
        at = *fat.get(at as usize)?;
    }
    let count = entries.len() / 128;
    let entry = |i: u32| -> Option<&[u8]> {
        let i = i as usize;
        (i < count).then(|| &entries[i * 128..(i + 1) * 128])
    };
    let name = |e: &[u8]| -> String {
        let len = (u16_at(e, 64) as usize).min(64) / 2;
        let units: Vec<u16> = (0..len.saturating_sub(1))
            .map(|i| u16_at(e, 2 * i))
            .collect();
        String::from_utf16_lossy(&units)
    };
    let root = entry(0)?;
    if root[66] != 5 {
        return None;
    }
    // The root's children: its child and that one's siblings, every way.
    let mut names = Vec::new();
    let mut stack = vec![u32_at(root, 76)];
    let mut visited = std::collections::HashSet::new();
    while let Some(i) = stack.pop() {
        if i == FREE || !visited.insert(i) || names.len() >= MAX_OLE_ENTRIES {
            continue;
        }
        let e = entry(i)?;
        names.push(name(e));
        stack.push(u32_at(e, 68));
        stack.push(u32_at(e, 72));
    }
    Some(names)
}

/// Whether a file's first bytes are Excel 2003 XML: `<?mso-application progid="Excel.Sheet"?>`,
/// or a root `Workbook` element in SpreadsheetML 2003's namespace
/// (`urn:schemas-microsoft-com:office:spreadsheet`).
fn excel_2003_xml(head: &[u8]) -> bool {
    if !head.starts_with(b"<") {
        return false;
    }
    let head = &head[..head.len().min(8192)];
    let ns = find(head, b"urn:schemas-microsoft-com:office:spreadsheet").is_some();
    let pi = find(head, b"progid=\"Excel.Sheet\"").is_some();
    let root =
        find(head, b"Workbook").is_some_and(|at| at > 0 && matches!(head[at - 1], b'<' | b':'));
    ns && (pi || root)
}

/// Whether a file's first bytes are Word 2003 XML: an XML document whose root element is
/// WordprocessingML 2003's `wordDocument` (`<?mso-application progid="Word.Document"?>`
/// says so too, and its namespace is `http://schemas.microsoft.com/office/word/2003/wordml`).
fn word_2003_xml(head: &[u8]) -> bool {
    if !head.starts_with(b"<") {
        return false;
    }
    let head = &head[..head.len().min(8192)];
    let root =
        find(head, b"wordDocument").is_some_and(|at| at > 0 && matches!(head[at - 1], b'<' | b':'));
    root && find(head, b"schemas.microsoft.com/office/word/2003/wordml").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn s(bytes: &[u8], name: &str) -> Result<Format, Refusal> {
        sniff(bytes, bytes.len() as u64, name, || {
            Cursor::new(bytes.to_vec())
        })
    }

    #[test]
    fn content_beats_name() {
        assert!(matches!(
            s(b"\x7fELF\x02\x01\x01", "report.pdf"),
            Err(Refusal::Executable(_))
        ));
        assert_eq!(s(b"%PDF-1.7\n", "notes.txt"), Ok(Format::Pdf));
        assert!(matches!(
            s(&[0x1F, 0x8B, 8, 0], "a.csv"),
            Err(Refusal::Archive("gzip"))
        ));
    }

    /// Every archive kind, and executables, with a member (or stored file) named like a
    /// PDF or an image right after their header: refused, never taken for the document.
    #[test]
    fn archives_with_document_looking_members_are_archives() {
        fn tar(member: &[u8]) -> Vec<u8> {
            let mut h = vec![0u8; 1024];
            h[..member.len()].copy_from_slice(member);
            h[257..263].copy_from_slice(b"ustar\0");
            h
        }
        fn zip(member: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
            use std::io::Write;
            let mut buf = Cursor::new(Vec::new());
            let mut z = zip::ZipWriter::new(&mut buf);
            let o = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            z.start_file(member, o).unwrap();
            z.write_all(b"%PDF-1.4\n%%EOF\n").unwrap();
            for (name, body) in extra {
                z.start_file(*name, o).unwrap();
                z.write_all(body).unwrap();
            }
            z.finish().unwrap();
            buf.into_inner()
        }
        let after = |magic: &[u8], member: &[u8]| {
            let mut v = magic.to_vec();
            v.extend_from_slice(&[0u8; 6]);
            v.extend_from_slice(member);
            v.extend_from_slice(b"\n%%EOF\n");
            v
        };
        let pdfish: &[u8] = b"%PDF-1.4 report.pdf";
        let gif: &[u8] = b"GIF89a.gif";
        let mut cases: Vec<(&str, Vec<u8>)> = vec![
            ("tar/pdf", tar(pdfish)),
            ("tar/gif", tar(gif)),
            ("tar/png", tar(b"\x89PNG\r\n\x1a\n.png")),
            ("tar/tiff", tar(b"II*\0.tif")),
            ("zip/pdf", zip("%PDF-1.4.pdf", &[])),
            ("zip/gif", zip("GIF89a.gif", &[])),
            (
                "jar/pdf",
                zip(
                    "%PDF-1.4.pdf",
                    &[("META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\n")],
                ),
            ),
        ];
        // gzip with the member's name in its header (FNAME), and the other compressed kinds
        // with a PDF-looking or image-looking name right after their magic.
        let mut gz = vec![0x1F, 0x8B, 8, 0x08, 0, 0, 0, 0, 0, 3];
        gz.extend_from_slice(b"%PDF-1.4.pdf\0");
        gz.extend_from_slice(b"\n%%EOF\n");
        cases.push(("gzip/pdf", gz));
        for (kind, magic) in [
            ("bzip2", &b"BZh9"[..]),
            ("xz", &[0xFD, b'7', b'z', b'X', b'Z', 0x00][..]),
            ("zstd", &[0x28, 0xB5, 0x2F, 0xFD][..]),
            ("7z", &[b'7', b'z', 0xBC, 0xAF, 0x27, 0x1C][..]),
            ("rar", &b"Rar!\x1a\x07\x00"[..]),
            ("cab", &b"MSCF\0\0\0\0"[..]),
            ("ar", &b"!<arch>\n"[..]),
            ("lz4", &[0x04, 0x22, 0x4D, 0x18][..]),
        ] {
            cases.push((kind, after(magic, pdfish)));
            cases.push((kind, after(magic, gif)));
        }
        for (kind, bytes) in &cases {
            match s(bytes, "upload.pdf") {
                Err(Refusal::Archive(_)) => {}
                other => panic!("{kind}: {other:?}"),
            }
        }
        // Executables stay executables whatever their first KiB holds.
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.extend_from_slice(b"%PDF-1.4 GIF89a\n%%EOF\n");
        assert!(matches!(s(&elf, "a.pdf"), Err(Refusal::Executable(_))));
    }

    /// A PDF header after junk counts only when the file ends like a PDF.
    #[test]
    fn a_zip_behind_a_document_header_is_an_archive() {
        // Issue #41 item 8: `%PDF-1.4` (or an image's signature) in front of a zip, which
        // unzip still opens from its end.
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        z.start_file("payload.exe", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut z, b"MZ not really").unwrap();
        let zipped = z.finish().unwrap().into_inner();
        for front in [
            &b"%PDF-1.4\n"[..],
            b"GIF89a\x01\x00\x01\x00",
            b"junk %PDF-1.4\n",
        ] {
            let mut f = front.to_vec();
            f.extend_from_slice(&zipped);
            assert!(
                matches!(s(&f, "report.pdf"), Err(Refusal::Archive(_))),
                "{:?}",
                String::from_utf8_lossy(front)
            );
        }
        // A real PDF whose compressed streams happen to hold the signature is still a PDF.
        let pdf = b"%PDF-1.4\n1 0 obj\n<< /Length 30 >>\nstream\nPK\x05\x06xxxxxxxxxxxxxxxxxx\nendstream\nendobj\nstartxref\n9\n%%EOF\n".to_vec();
        assert_eq!(s(&pdf, "a.pdf"), Ok(Format::Pdf));
    }

    #[test]
    fn an_offset_pdf_header_needs_a_trailer() {
        let mut ok = b"junk before the header\n".to_vec();
        ok.extend_from_slice(b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\nstartxref\n9\n%%EOF\n");
        assert_eq!(s(&ok, "x.pdf"), Ok(Format::Pdf));
        let no_trailer = b"notes: %PDF-1.4 is a version\n".to_vec();
        assert_ne!(s(&no_trailer, "notes.txt"), Ok(Format::Pdf));
        // An image signature counts only at offset 0.
        assert_ne!(
            s(b"text then GIF89a\n", "a.txt"),
            Ok(Format::Image(ImageKind::Gif))
        );
    }

    #[test]
    fn scripts_are_text() {
        assert_eq!(
            s(b"#!/bin/sh\necho hi\n", "run.sh"),
            Ok(Format::Text(TextKind::Source))
        );
    }

    #[test]
    fn text_kinds_follow_the_name() {
        assert_eq!(s(b"a,b\n1,2\n", "x.csv"), Ok(Format::Text(TextKind::Csv)));
        assert_eq!(
            s(b"key = 1\n", "Cargo.toml"),
            Ok(Format::Text(TextKind::Toml))
        );
        assert_eq!(
            s(b"FROM debian\n", "Dockerfile"),
            Ok(Format::Text(TextKind::Source))
        );
        assert_eq!(
            s(b"whatever\n", "file.weird"),
            Ok(Format::Text(TextKind::Plain))
        );
        assert_eq!(s(b"", "empty.txt"), Ok(Format::Text(TextKind::Plain)));
    }

    #[test]
    fn binary_is_refused() {
        assert!(matches!(
            s(b"abc\0\x01\x02\x03\0\0\x05", "a.txt"),
            Err(Refusal::Binary(_))
        ));
    }

    #[test]
    fn utf16_is_not_binary() {
        let bytes: Vec<u8> = "hello world, this is text\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(s(&bytes, "a.txt"), Ok(Format::Text(TextKind::Plain)));
    }

    #[test]
    fn email_headers_are_email() {
        let m =
            b"From: a@b.c\nTo: d@e.f\nSubject: hi\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nbody\n";
        assert_eq!(s(m, "message"), Ok(Format::Eml));
        assert_eq!(
            s(b"Subject: notes\nplain text after\n", "n.txt"),
            Ok(Format::Text(TextKind::Plain))
        );
    }

    #[test]
    fn mime_round_trips() {
        for f in ALL_FORMATS {
            assert_eq!(Format::from_mime(f.mime(), "x"), Some(*f), "{f:?}");
        }
        assert_eq!(
            Format::from_mime("text/plain", "a.py"),
            Some(Format::Text(TextKind::Source))
        );
    }

    #[test]
    fn extensions() {
        assert_eq!(extension("a/b.TXT").as_deref(), Some("txt"));
        assert_eq!(extension("noext"), None);
        assert_eq!(extension(".env").as_deref(), Some("env"));
    }

    /// A package with a directory of more entries than are listed at upload is not opened
    /// with the zip crate (which parses all of it into memory) to find a deflated
    /// `mimetype`: without its declared type it is no OpenDocument file, but a zip.
    #[test]
    fn a_huge_directory_behind_a_deflated_mimetype_is_not_parsed() {
        use std::io::Write;
        let build = |entries: usize| {
            let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
            let deflated = zip::write::SimpleFileOptions::default();
            z.start_file("mimetype", deflated).unwrap();
            z.write_all(b"application/vnd.oasis.opendocument.text")
                .unwrap();
            z.start_file("content.xml", deflated).unwrap();
            z.write_all(b"<office:document-content/>").unwrap();
            let stored = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            for i in 0..entries {
                z.start_file(format!("{i}"), stored).unwrap();
            }
            z.finish().unwrap().into_inner()
        };
        assert_eq!(s(&build(10), "a.odt"), Ok(Format::Odt));
        assert!(matches!(
            s(&build(MAX_LISTED), "a.odt"),
            Err(Refusal::Archive(_))
        ));
    }
}
