//! The text family (plain, CSV/TSV, config, markup, source): raw text, byte-exact after
//! decoding, with line and byte windows, queries, and truncation with exact `next` cursors.

use super::{Extractor, Input};
use crate::config::Limits;
use crate::detect::encoding::{self, Detected, TextEncoding};
use crate::detect::{Format, TextKind};
use crate::envelope::{close_truncated, first_chars, fit_blocks, Extraction, Next};
use crate::error::ApiError;
use crate::model::{Block, Content, Document, Unit, UnitBlocks};
use crate::options::{grep_lines, GrepLine, Hits, Options};
use crate::report::Report;

pub struct TextExtractor;

impl Extractor for TextExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let bytes = std::fs::read(&input.path).map_err(ApiError::internal)?;
        let markup = matches!(input.format, Format::Text(TextKind::Html | TextKind::Xml));
        let table = match input.format {
            Format::Text(k @ (TextKind::Csv | TextKind::Tsv)) => Some(k),
            _ => None,
        };
        let mark = match req.hidden_text {
            Some(crate::options::HiddenText::Mark) => true,
            Some(crate::options::HiddenText::Drop) => false,
            _ => {
                let mut ex = match table {
                    Some(kind) if req.markdown() => table_markdown(&bytes, kind, req, limits)?,
                    _ => extract_bytes(&bytes, markup, table, req, limits)?,
                };
                if req.json() {
                    ex.document = Some(text_document(&ex, table, req.offset.unwrap_or(0) == 0));
                }
                return Ok(ex);
            }
        };
        // `mark`/`drop`: what the characters hide (tag messages, zero-width characters
        // inside words, bidi overrides) marked or left out of the decoded text, which is
        // then read as any text is — its lines, budgets, `char_count` and `next` are the
        // text returned's. Byte windows read the file's own bytes.
        if req.byte_offset.is_some() || req.byte_length.is_some() {
            return Err(ApiError::new(
                crate::error::ErrorCode::UnsupportedOption,
                "hidden_text `mark` and `drop` change the text; byte_offset/byte_length read the file's own bytes",
            )
            .with_hint("Read by lines (offset/limit) to mark or drop hidden characters, or leave hidden_text out to read bytes."));
        }
        let det = encoding::detect(&bytes, markup);
        let (shown, hidden) =
            crate::findings::hide_invisible(&det.encoding.decode(&bytes[det.bom_len..]), mark);
        let mut ex = match table {
            Some(kind) if req.markdown() => {
                let mut ex = table_markdown(shown.as_bytes(), kind, req, limits)?;
                // The table's lines are its records: the findings keep the page's line only
                // in their place, not as a line of the table.
                ex.findings = hidden
                    .into_iter()
                    .map(|mut f| {
                        f.line = 0;
                        f
                    })
                    .collect();
                ex
            }
            _ => {
                let mut ex = extract_bytes(shown.as_bytes(), false, table, req, limits)?;
                ex.findings = lines_shown(hidden, req, &ex)?;
                ex
            }
        };
        ex.report.encoding = Some(det.encoding.name().to_string());
        ex.report.encoding_confidence = Some(det.confidence.as_str().to_string());
        ex.report.size = Some(bytes.len() as u64);
        if req.json() {
            ex.document = Some(text_document(&ex, table, req.offset.unwrap_or(0) == 0));
        }
        Ok(ex)
    }
}

/// The typed blocks of what a text read shows (`output: "json"`): a table's (CSV/TSV)
/// records as one table, its first record the header when the read starts at it; any other
/// text's paragraphs (runs of lines between blank lines), as the file writes them.
fn text_document(ex: &Extraction, table: Option<TextKind>, from_start: bool) -> Document {
    let shown = if ex.truncated {
        crate::envelope::without_truncation_line(&ex.text)
    } else {
        ex.text.as_str()
    };
    let mut blocks = Vec::new();
    match table {
        Some(kind) => {
            let delim = match kind {
                TextKind::Tsv => b'\t',
                _ => super::profile::csv_delimiter(shown),
            };
            let mut rows: Vec<Vec<String>> = Vec::new();
            super::profile::delimited_rows(shown, delim, |row| {
                rows.push(row.iter().map(|c| c.to_string()).collect())
            });
            rows.retain(|r| r.iter().any(|c| !c.trim().is_empty()));
            if !rows.is_empty() {
                blocks.push(Block::new(Content::Table {
                    header_rows: u32::from(from_start && rows.len() > 1),
                    rows,
                    spans: Vec::new(),
                }));
            }
        }
        None => {
            blocks = crate::model::paragraphs(shown.lines());
        }
    }
    // A line `next` reads again whole: its part shown is no block of this read.
    if ex.next.as_ref().is_some_and(|n| n.max_chars.is_some()) {
        blocks.pop();
    }
    Document {
        units: vec![UnitBlocks::new(Unit::document(), blocks)],
    }
}

/// The blocks of a rendered page (HTML, an e-mail's HTML body) on the lines a read shows,
/// as one document unit (a query is not read with blocks; a byte window is refused).
pub(crate) fn rendered_document(
    blocks: Vec<(usize, Block)>,
    req: &Options,
    ex: &Extraction,
) -> Result<Document, ApiError> {
    let first = req.offset.unwrap_or(0) as usize + 1;
    let shown = match ex.text.rfind(crate::envelope::TRUNCATION_LINE) {
        Some(cut) if ex.truncated => ex.text[..cut].lines().count(),
        _ => ex.text.lines().count(),
    };
    // Each block whose first line is shown (whole: the next read starts after it); a
    // line `next` reads again whole starts none of this read's.
    let shown = if ex.next.as_ref().is_some_and(|n| n.max_chars.is_some()) {
        shown.saturating_sub(1)
    } else {
        shown
    };
    Ok(Document {
        units: vec![UnitBlocks::new(
            Unit::document(),
            blocks
                .into_iter()
                .filter(|(line, _)| (first..first + shown).contains(line))
                .map(|(_, b)| b)
                .collect(),
        )],
    })
}

/// Findings placed by the line of a whole text, for the lines a read returned: those on
/// the lines shown, renumbered as the text returned is (a query searched the whole text:
/// every finding, by the text's lines).
fn lines_shown(
    found: Vec<crate::findings::Finding>,
    req: &Options,
    ex: &Extraction,
) -> Result<Vec<crate::findings::Finding>, ApiError> {
    if req.query.is_some() || req.byte_offset.is_some() || req.byte_length.is_some() {
        return Ok(found);
    }
    let first = req.offset.unwrap_or(0) + 1;
    let shown = match ex.text.rfind(crate::envelope::TRUNCATION_LINE) {
        Some(cut) => ex.text[..cut].lines().count(),
        None => ex.text.lines().count(),
    } as u64;
    Ok(found
        .into_iter()
        .filter(|f| (first..first + shown).contains(&f.line))
        .map(|mut f| {
            f.line -= first - 1;
            f
        })
        .collect())
}

/// CSV/TSV as Markdown: one GFM pipe table, the first record its header, one line per
/// record (line breaks inside a quoted field become spaces), read like a text file — its
/// lines, queries, budgets and byte windows are the Markdown's. A profile is of the source.
fn table_markdown(
    bytes: &[u8],
    kind: TextKind,
    req: &Options,
    limits: &Limits,
) -> Result<Extraction, ApiError> {
    let det = encoding::detect(bytes, false);
    let source = det.encoding.decode(&bytes[det.bom_len..]);
    let delim = match kind {
        TextKind::Tsv => b'\t',
        _ => super::profile::csv_delimiter(&source),
    };
    let profile = (req.profile == Some(true))
        .then(|| super::profile::profile_delimited(&source, delim))
        .flatten();
    let mut cols = 0;
    super::profile::delimited_rows(&source, delim, |row| cols = cols.max(row.len()));
    let mut md = String::with_capacity(source.len() + source.len() / 4);
    let mut first = true;
    super::profile::delimited_rows(&source, delim, |row| {
        md.push('|');
        for c in 0..cols.max(1) {
            md.push(' ');
            if let Some(cell) = row.get(c) {
                md.push_str(&super::markdown::cell_text(cell));
            }
            md.push_str(" |");
        }
        md.push('\n');
        if std::mem::take(&mut first) {
            md.push_str(&super::markdown::separator(cols));
        }
    });
    drop(source);
    let mut ex = extract_bytes(md.as_bytes(), false, None, req, limits)?;
    ex.report.encoding = Some(det.encoding.name().to_string());
    ex.report.encoding_confidence = Some(det.confidence.as_str().to_string());
    ex.report.size = Some(bytes.len() as u64);
    ex.report.profile = profile;
    Ok(ex)
}

/// HTML files: the text a browser shows (`html::render`), read like a text file (lines,
/// `offset`/`limit`, `query`, `max_chars`, and byte windows over its UTF-8 — where `next`
/// goes for a line longer than the budget — all on that text), elements a browser hides
/// left out and said in a warning; `raw: true` reads the source as the text family does.
pub struct HtmlExtractor;

impl Extractor for HtmlExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let bytes = std::fs::read(&input.path).map_err(ApiError::internal)?;
        if req.raw == Some(true) {
            let mut ex = extract_bytes(&bytes, true, None, req, limits)?;
            if let Some(next) = ex.next.as_mut() {
                next.raw = Some(true);
            }
            if req.json() {
                ex.document = Some(text_document(&ex, None, true));
            }
            return Ok(ex);
        }
        let det = encoding::detect(&bytes, true);
        let source = det.encoding.decode(&bytes[det.bom_len..]);
        use super::html::HiddenMode;
        let mode = match req.hidden_text {
            Some(crate::options::HiddenText::Keep) => HiddenMode::Keep,
            Some(crate::options::HiddenText::Mark) => HiddenMode::Mark,
            _ => HiddenMode::Drop,
        };
        let mut rendered = if req.json() {
            super::html::render_blocks(&source, mode)
        } else {
            super::html::render_as(&source, req.markdown(), mode)
        };
        drop(source);
        // The title (the tab's text, in the head) is the first line, as readers show it
        // (a paragraph of its own in Markdown, unless the first heading says it).
        if let Some(t) = &rendered.title {
            let first = rendered.text.trim_start_matches(['#', ' ', '\n']);
            if !first.starts_with(t.as_str()) {
                let gap = if req.markdown() { "\n\n" } else { "\n" };
                rendered.text = format!("{t}{gap}{}", rendered.text.trim_start_matches('\n'));
                for h in rendered.hidden.iter_mut() {
                    h.line += gap.len();
                }
                for b in rendered.blocks.iter_mut() {
                    b.0 += gap.len();
                }
                if req.json() {
                    let title = Block::new(Content::Heading {
                        level: 1,
                        text: t.clone(),
                    });
                    rendered.blocks.insert(0, (1, title));
                }
            }
        }
        let findings =
            super::html::hidden_findings(rendered.hidden.iter().map(|h| (h, h.line as u64)), mode);
        let mut ex = extract_bytes(rendered.text.as_bytes(), false, None, req, limits)?;
        ex.report.encoding = Some(det.encoding.name().to_string());
        ex.report.encoding_confidence = Some(det.confidence.as_str().to_string());
        ex.report.size = Some(bytes.len() as u64);
        // Counted over the lines returned, numbered as the text returned is (a query or a
        // byte window searched or read the whole page: every finding, by the page's lines).
        ex.findings = lines_shown(findings, req, &ex)?;
        if req.json() {
            ex.document = Some(rendered_document(
                std::mem::take(&mut rendered.blocks),
                req,
                &ex,
            )?);
        }
        ex.warnings.extend(super::html::left_out_warning(
            &rendered.hidden,
            mode,
            "a browser does not show",
            "`raw: true` reads the source",
        ));
        Ok(ex)
    }
}

pub use crate::model::split_lines;

/// The number of lines `split_lines` would give for the decoded bytes, counted on the
/// bytes themselves: `\n`, `\r\n` and a lone `\r` end lines. In every ASCII-compatible
/// encoding here those bytes are never part of a multi-byte character; UTF-16 is counted
/// in code units; EBCDIC is decoded (its line ends are other bytes).
pub fn line_count(bytes: &[u8], enc: TextEncoding) -> usize {
    if let TextEncoding::Rs(e) = enc {
        if e.is_ascii_compatible() {
            return ByteLines { bytes, pos: 0 }.count();
        }
    }
    let units: Box<dyn Iterator<Item = u16> + '_> = match enc {
        TextEncoding::Rs(e) if e == encoding_rs::UTF_16LE => Box::new(
            bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]])),
        ),
        TextEncoding::Rs(e) if e == encoding_rs::UTF_16BE => Box::new(
            bytes
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]])),
        ),
        // ASCII-compatible: line ends are bytes.
        TextEncoding::Rs(_) | TextEncoding::Ibm855 | TextEncoding::Johab | TextEncoding::EucTw => {
            Box::new(bytes.iter().map(|b| *b as u16))
        }
        TextEncoding::Ebcdic(_) | TextEncoding::Utf32 { .. } | TextEncoding::Iso2022Kr => {
            return split_lines(&enc.decode(bytes)).len()
        }
    };
    let (mut lines, mut open, mut after_cr) = (0usize, false, false);
    for u in units {
        match u {
            0x0A if after_cr => after_cr = false, // the \n of a \r\n: already counted
            0x0A => {
                lines += 1;
                open = false;
            }
            0x0D => {
                lines += 1;
                open = false;
                after_cr = true;
            }
            _ => {
                open = true;
                after_cr = false;
            }
        }
    }
    lines + open as usize
}

fn strip_eol(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// Extract from bytes already in memory (the whole file).
pub fn extract_bytes(
    bytes: &[u8],
    markup: bool,
    table: Option<TextKind>,
    req: &Options,
    limits: &Limits,
) -> Result<Extraction, ApiError> {
    let max_chars = req.max_chars;
    let query = req.query.clone();
    let offset = req.offset;
    let limit = req.limit;
    let byte_offset = req.byte_offset;
    let byte_length = req.byte_length;
    let byte_mode = byte_offset.is_some() || byte_length.is_some();
    if byte_mode && (offset.is_some() || limit.is_some()) {
        return Err(ApiError::invalid_option(
            "byte_offset/byte_length and offset/limit exclude each other",
        )
        .with_hint("Use offset/limit for lines, or byte_offset/byte_length for bytes, not both."));
    }
    let profile = req.profile == Some(true);
    if byte_mode && profile {
        return Err(ApiError::invalid_option(
            "profile reads the whole table and cannot be combined with byte_offset/byte_length",
        )
        .with_hint("Ask for the profile without a byte window (offset/limit may still pick the lines shown)."));
    }
    if byte_mode && query.is_some() {
        return Err(ApiError::invalid_option(
            "query searches lines and cannot be combined with byte_offset/byte_length",
        )
        .with_hint("Use query with offset/limit, or drop the query."));
    }

    // A read of the whole file may take the text detection decoded anyway: kept only when
    // the text may fit the budget (GBK, Big5, Shift_JIS and EUC-KR write a character in at
    // most two bytes: a file of more than twice the budget's bytes does not fit, and its
    // decoded text would be made only to be dropped).
    let whole_read = !byte_mode
        && offset.unwrap_or(0) == 0
        && limit.is_none()
        && bytes.len() <= max_chars.saturating_mul(2);
    let (det, mut decoded) = if whole_read {
        encoding::detect_decoded(bytes, markup)
    } else {
        (encoding::detect(bytes, markup), None)
    };
    let mut extra = Report {
        encoding: Some(det.encoding.name().to_string()),
        encoding_confidence: Some(det.confidence.as_str().to_string()),
        size: Some(bytes.len() as u64),
        ..Default::default()
    };

    if byte_mode {
        // A byte window is for huge files: count lines without decoding the whole file.
        let full_lines = line_count(&bytes[det.bom_len..], det.encoding);
        extra.total_lines = Some(full_lines as u64);
        return byte_window(
            bytes,
            det,
            byte_offset.unwrap_or(0),
            byte_length,
            max_chars,
            limits,
            extra,
        );
    }

    let body = &bytes[det.bom_len..];
    let total = line_count(body, det.encoding) as u64;
    extra.total_lines = Some(total);
    if let Some(off) = offset {
        if off >= total {
            return Err(ApiError::out_of_range(format!(
                "offset {off} but the file has {total} line{}",
                if total == 1 { "" } else { "s" }
            ))
            .with_hint(if total == 0 {
                "The file is empty; read it without offset.".to_string()
            } else {
                format!("Use an offset from 0 to {}.", total - 1)
            }));
        }
    }
    let start = offset.unwrap_or(0) as usize;
    let end = match limit {
        Some(l) => (start as u64).saturating_add(l).min(total) as usize,
        None => total as usize,
    };

    // A query and a profile need the whole text; a plain read decodes only what it shows.
    let whole = (query.is_some() || (profile && table.is_some())).then(|| match decoded.take() {
        Some(text) => std::borrow::Cow::Owned(text),
        None => det.encoding.decode(body),
    });
    if let (true, Some(kind), Some(text)) = (profile, table, &whole) {
        // The whole table, whatever part of it is shown (a Markdown read's caller profiles
        // the source itself).
        let delim = match kind {
            TextKind::Tsv => b'\t',
            _ => super::profile::csv_delimiter(text),
        };
        extra.profile = super::profile::profile_delimited(&text, delim);
    }
    if let (Some(q), Some(text)) = (query, &whole) {
        let lines = split_lines(text);
        let bare: Vec<&str> = lines[start..end].iter().map(|l| strip_eol(l)).collect();
        let hits = grep_lines(&bare, start as u64 + 1, &q);
        let mut ex = cut_grep(&hits, max_chars, limit.map(|_| end as u64));
        ex.matches = Some(hits.count as u64);
        ex.report = extra;
        return Ok(ex);
    }
    if start == 0 && end == total as usize {
        if let Some((text, chars)) = whole_text(body, det, decoded, max_chars) {
            return Ok(Extraction {
                text,
                char_count: chars as u64,
                report: extra,
                ..Default::default()
            });
        }
    }
    let window = Window {
        start,
        end,
        total: total as usize,
        max_chars,
        line_window: limit.is_some(),
        by_lines: req.json(),
    };
    let mut ex = window.read_text(body, det);
    ex.report = extra;
    Ok(ex)
}

/// The whole text of `body` and its characters, when all of it fits in `max_chars`: the
/// text detection decoded (`decoded`), else the bytes decoded at once when there are no more
/// of them than the budget (in every ASCII-compatible encoding a byte makes at most one
/// character). The same text as `Window::read` gives line by line, since lines end in an
/// ASCII byte that no character spans; `None` sends the read there.
fn whole_text(
    body: &[u8],
    det: Detected,
    decoded: Option<String>,
    max_chars: usize,
) -> Option<(String, usize)> {
    let TextEncoding::Rs(enc) = det.encoding else {
        return None;
    };
    if !enc.is_ascii_compatible() {
        return None;
    }
    let text = match decoded {
        Some(text) => text,
        None if body.len() <= max_chars => enc.decode_without_bom_handling(body).0.into_owned(),
        None => return None,
    };
    let chars = text.chars().count();
    (chars <= max_chars).then_some((text, chars))
}

/// Lines `start..end` of a text (of `total`), as many whole lines as `max_chars` shows.
struct Window {
    start: usize,
    end: usize,
    total: usize,
    max_chars: usize,
    /// Whether `limit` set `end` (then `next` stays inside it).
    line_window: bool,
    /// `output: "json"`: a line longer than the budget is read again whole by `next`
    /// (blocks are by lines; byte windows are not read with them).
    by_lines: bool,
}

impl Window {
    /// Read the window from the file's bytes after the BOM.
    fn read_text(&self, body: &[u8], det: Detected) -> Extraction {
        match det.encoding {
            TextEncoding::Rs(enc) if enc.is_ascii_compatible() => {
                self.read(body, enc, &|at, prefix| {
                    det.bom_len + at + source_len(enc, &body[at..], prefix.len())
                })
            }
            // UTF-16, UTF-32, EBCDIC and ISO-2022-JP (stateful): decoded whole, and the
            // window read on the UTF-8, its positions mapped back to the file's bytes.
            _ => {
                let text = det.encoding.decode(body);
                self.read(text.as_bytes(), encoding_rs::UTF_8, &|at, prefix| {
                    if det.encoding.stateful() {
                        // Re-encoding would close the shift the file leaves open: count
                        // characters through the file's own bytes instead.
                        let chars = text[..at].chars().count() + prefix.chars().count();
                        return det.bom_len
                            + det.encoding.walk_state(body, 0, body.len(), Some(chars)).0;
                    }
                    let chars = || text[..at].chars().count() + prefix.chars().count();
                    if let Some(n) = det.encoding.bytes_of_chars(body, chars()) {
                        return det.bom_len + n;
                    }
                    det.bom_len
                        + det.encoding.encoded_len(&text[..at])
                        + det.encoding.encoded_len(prefix)
                })
            }
        }
    }

    /// Read the window from `body`, bytes in `enc` (ASCII-compatible, so `\n` and `\r`
    /// are never inside a character and lines are found on the bytes). Only the lines shown
    /// are decoded into text; the rest of the window is counted for `char_count` through a
    /// small buffer, never built. `source_pos(at, prefix)`: the file's byte offset of the
    /// text `prefix` decoded from `body[at..]` ends at (for `next.byte_offset`).
    fn read(
        &self,
        body: &[u8],
        enc: &'static encoding_rs::Encoding,
        source_pos: &dyn Fn(usize, &str) -> usize,
    ) -> Extraction {
        let mut lines = ByteLines {
            bytes: body,
            pos: 0,
        };
        for _ in 0..self.start {
            lines.next();
        }
        let mut dec = enc.new_decoder_without_bom_handling();
        let mut shown = String::new();
        // Each line is decoded into this, then appended (decoding into `shown`'s spare
        // room would touch a byte of every page of it for every line).
        let mut scratch: Vec<u8> = Vec::new();
        let (mut shown_chars, mut k) = (0usize, 0usize);
        // The first line that does not fit: where it starts, and its text.
        let mut over: Option<(usize, String)> = None;
        for _ in self.start..self.end {
            let Some(r) = lines.next() else { break };
            let src = &body[r.clone()];
            let line: &str = match std::str::from_utf8(src) {
                // UTF-8 (or ASCII in any of these encodings) is its own text.
                Ok(s) if enc == encoding_rs::UTF_8 || s.is_ascii() => s,
                _ => {
                    let need = dec
                        .max_utf8_buffer_length(src.len())
                        .unwrap_or(src.len() * 3 + 16);
                    if scratch.len() < need {
                        scratch.resize(need, 0);
                    }
                    // Lines end in an ASCII byte, so no character spans two of them; only
                    // the last line of the file may end inside one.
                    let (result, _, written, _) =
                        dec.decode_to_utf8(src, &mut scratch[..need], r.end == body.len());
                    debug_assert_eq!(result, encoding_rs::CoderResult::InputEmpty);
                    std::str::from_utf8(&scratch[..written]).expect("the decoder writes UTF-8")
                }
            };
            let n = line.chars().count();
            if shown_chars + n > self.max_chars {
                over = Some((r.start, line.to_string()));
                break;
            }
            shown.push_str(line);
            shown_chars += n;
            k += 1;
        }
        let Some((line_start, line)) = over else {
            return Extraction {
                text: shown,
                char_count: shown_chars as u64,
                ..Default::default()
            };
        };
        // Count the rest of the window: the line that did not fit and the lines after it.
        let window_end = if self.end == self.total {
            body.len()
        } else {
            for _ in self.start + k + 1..self.end {
                lines.next();
            }
            lines.pos
        };
        let char_count = (shown_chars + count_chars(enc, &body[line_start..window_end])) as u64;
        let mut ex = Extraction {
            char_count,
            truncated: true,
            ..Default::default()
        };
        let mut next = Next::default();
        if k > 0 {
            ex.text = close_truncated(shown, char_count);
            next.offset = Some((self.start + k) as u64);
            if self.line_window {
                next.limit = Some((self.end - self.start - k) as u64);
            }
        } else if self.by_lines {
            // One line longer than the whole budget: its start, and `next` reads it whole.
            let cut = crate::envelope::cut_within(&line, self.max_chars);
            next.offset = Some(self.start as u64);
            if self.line_window {
                next.limit = Some((self.end - self.start) as u64);
            }
            next.max_chars =
                Some((line.chars().count() as u64 + 64).min(crate::options::MAX_CHARS as u64));
            ex.text = close_truncated(cut.to_string(), char_count);
            ex.warnings.push(format!(
                "line {} alone is longer than max_chars ({}); `next` reads it whole",
                self.start + 1,
                self.max_chars
            ));
        } else {
            // One line longer than the whole budget: return its start and read on by bytes.
            let cut = crate::envelope::cut_within(&line, self.max_chars);
            let pos = source_pos(line_start, cut);
            if self.end < self.total {
                // Stay inside the line window: stop where its last line ends.
                next.byte_length = Some((source_pos(window_end, "") - pos) as u64);
            }
            next.byte_offset = Some(pos as u64);
            ex.text = close_truncated(cut.to_string(), char_count);
            ex.warnings.push(format!(
                "line {} alone is longer than max_chars ({}); `next` continues by bytes",
                self.start + 1,
                self.max_chars
            ));
        }
        ex.next = Some(next);
        ex
    }
}

/// The byte ranges of the lines `split_lines` gives (terminators included), found on the
/// bytes of an ASCII-compatible encoding.
struct ByteLines<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Iterator for ByteLines<'_> {
    type Item = std::ops::Range<usize>;

    fn next(&mut self) -> Option<Self::Item> {
        let (b, a) = (self.bytes, self.pos);
        if a >= b.len() {
            return None;
        }
        let end = match memchr::memchr2(b'\n', b'\r', &b[a..]) {
            Some(i) if b[a + i] == b'\r' && b.get(a + i + 1) == Some(&b'\n') => a + i + 2,
            Some(i) => a + i + 1,
            None => b.len(),
        };
        self.pos = end;
        Some(a..end)
    }
}

/// How many bytes of `src` decode to its first `utf8_len` bytes of text (which end where a
/// character does): found by decoding, not by encoding the text again (a malformed byte
/// became U+FFFD, which no legacy encoding writes back as that byte).
fn source_len(enc: &'static encoding_rs::Encoding, src: &[u8], utf8_len: usize) -> usize {
    let mut dec = enc.new_decoder_without_bom_handling();
    let mut out = String::with_capacity(utf8_len + 16);
    let mut read = 0usize;
    while out.len() < utf8_len && read < src.len() {
        // A piece whose worst-case text cannot pass the boundary, down to single bytes.
        let room = utf8_len - out.len();
        let mut n = (room / 3).clamp(1, src.len() - read);
        while n > 1 && dec.max_utf8_buffer_length(n).is_none_or(|m| m > room) {
            n /= 2;
        }
        out.reserve(dec.max_utf8_buffer_length(n).unwrap_or(4 * n + 16));
        let (_, r, _) = dec.decode_to_string(&src[read..read + n], &mut out, false);
        read += r;
        if out.len() > utf8_len {
            // One byte gave a malformed sequence's U+FFFD and its own character: the
            // boundary is before that byte.
            return read - 1;
        }
    }
    read
}

/// The characters `bytes` decode to in `enc`, decoded through a small buffer.
fn count_chars(enc: &'static encoding_rs::Encoding, bytes: &[u8]) -> usize {
    if enc.is_single_byte() {
        return bytes.len(); // every byte one character (an unmapped one U+FFFD)
    }
    if enc == encoding_rs::UTF_8 {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return s.chars().count();
        }
    }
    let mut dec = enc.new_decoder_without_bom_handling();
    let mut buf = String::with_capacity(64 * 1024);
    let (mut n, mut rest) = (0usize, bytes);
    loop {
        buf.clear();
        let (result, read, _) = dec.decode_to_string(rest, &mut buf, true);
        n += buf.chars().count();
        rest = &rest[read..];
        if result == encoding_rs::CoderResult::InputEmpty {
            return n;
        }
    }
}

/// Cut a query's output at a whole output line; `next.offset` restarts the search after
/// the last line shown (its number comes from the hits, not from re-reading the text).
fn cut_grep(hits: &Hits<'_>, max_chars: usize, window_end: Option<u64>) -> Extraction {
    let out = hits.text();
    let char_count = out.chars().count() as u64;
    if char_count as usize <= max_chars {
        return Extraction {
            text: out,
            char_count,
            ..Default::default()
        };
    }
    let rendered: Vec<String> = hits.lines.iter().map(GrepLine::render).collect();
    let taken = fit_blocks(&rendered, max_chars);
    let last_shown = hits.lines[..taken.count]
        .iter()
        .rev()
        .find_map(GrepLine::number);
    // Even the first output line does not fit: cut inside it, and restart on that line.
    let (kept, resume) = match last_shown {
        Some(n) => (rendered[..taken.count].concat(), n),
        None => {
            let first = hits.lines.iter().find_map(GrepLine::number).unwrap_or(1);
            (first_chars(&out, max_chars).to_string(), first)
        }
    };
    // Line numbers are 1-based; `resume` is the 0-based offset of the line after it.
    let next = Next {
        offset: Some(resume),
        limit: window_end.map(|end| end.saturating_sub(resume).max(1)),
        ..Default::default()
    };
    Extraction {
        text: close_truncated(kept, char_count),
        char_count,
        truncated: true,
        next: Some(next),
        ..Default::default()
    }
}

/// A byte window `[byte_offset, byte_offset + length)` of the file, snapped to character
/// boundaries of its encoding.
fn byte_window(
    bytes: &[u8],
    det: Detected,
    byte_offset: u64,
    byte_length: Option<u64>,
    max_chars: usize,
    limits: &Limits,
    mut extra: Report,
) -> Result<Extraction, ApiError> {
    let size = bytes.len() as u64;
    if byte_offset >= size {
        return Err(ApiError::out_of_range(format!(
            "byte_offset {byte_offset} but the file has {size} bytes"
        ))
        .with_hint(if size == 0 {
            "The file is empty; read it without byte_offset.".to_string()
        } else {
            format!("Use a byte_offset from 0 to {}.", size - 1)
        }));
    }
    let enc = det.encoding;
    let unit = enc.unit();
    let bom = det.bom_len;
    let mut start = (byte_offset as usize).max(bom);
    start = bom + (start - bom).div_ceil(unit) * unit;
    let want_end = byte_length
        .map(|l| byte_offset.saturating_add(l))
        .unwrap_or(byte_offset.saturating_add(limits.default_byte_length))
        .min(size) as usize;
    let mut end = if want_end == bytes.len() {
        want_end
    } else {
        bom + (want_end.max(start) - bom) / unit * unit
    };
    end = end.max(start);
    let mut warnings = Vec::new();
    // Snap to character boundaries: move the start forward and the end back by at most
    // three bytes until the window decodes cleanly. A stateful encoding's window starts
    // in the state in force there, found from the line's start (where ASCII is).
    let line_start = |at: usize| {
        bytes[bom..at]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(bom, |p| bom + p + 1)
    };
    let (s2, e2, restore) = if enc.stateful() {
        let from = line_start(start);
        let (reached, restore, inside) = enc.walk_state(bytes, from, start, None);
        // Past an escape sequence the start fell into, or the trail of a character.
        let s = reached.max(start + usize::from(inside)).min(end);
        let (_, _, inside) = enc.walk_state(bytes, line_start(end), end, None);
        let mut e = end - usize::from(inside && end > s);
        // Not inside an escape sequence.
        if let Some(p) = bytes[e.saturating_sub(3).max(s)..e]
            .iter()
            .rposition(|b| *b == 0x1B)
        {
            let p = e.saturating_sub(3).max(s) + p;
            let len = crate::detect::encoding::iso2022_escape_len(&bytes[p..]);
            if p + len > e && e < bytes.len() {
                e = p;
            }
        }
        (s, e, restore)
    } else {
        let walked = boundary(bytes, enc, bom, start, true).zip(if end == bytes.len() {
            Some(end)
        } else {
            boundary(bytes, enc, bom, end, false)
        });
        let (s, e) = walked.unwrap_or_else(|| snap(bytes, enc, start, end));
        (s, e, Vec::new())
    };
    if s2 != start {
        warnings.push(format!(
            "byte_offset {byte_offset} falls inside a character; reading from byte {s2}"
        ));
    }
    let (start, end) = (s2, e2.max(s2));
    // A window that starts with its own escape sequence needs none before it (two in a
    // row are an error to the decoder).
    let text = if restore.is_empty() || bytes.get(start) == Some(&0x1B) {
        enc.decode(&bytes[start..end]).into_owned()
    } else {
        enc.decode(&[restore.as_slice(), &bytes[start..end]].concat())
            .into_owned()
    };
    let char_count = text.chars().count() as u64;
    let mut ex = Extraction {
        char_count,
        ..Default::default()
    };
    let mut next = Next::default();
    if char_count as usize > max_chars {
        let cut = first_chars(&text, max_chars).len();
        let resume = if enc.stateful() {
            // Where that many characters end in the file, counted from the line's start.
            let from = line_start(start);
            let chars_before = text_chars_between(enc, bytes, from, start);
            enc.walk_state(
                bytes,
                from,
                end,
                Some(chars_before + text[..cut].chars().count()),
            )
            .0
        } else if let Some(n) = enc.bytes_of_chars(&bytes[start..end], text[..cut].chars().count())
        {
            start + n
        } else {
            start + enc.encoded_len(&text[..cut])
        };
        // Past the window's start, never past its end: re-encoding may count a U+FFFD
        // (a malformed byte) as more bytes than it came from.
        let resume = resume.clamp((start + 1).min(end), end);
        ex.truncated = true;
        ex.text = close_truncated(text[..cut].to_string(), char_count);
        next.byte_offset = Some(resume as u64);
        if byte_length.is_some() {
            next.byte_length = Some(end.saturating_sub(resume) as u64);
        }
    } else {
        ex.text = text;
        if byte_length.is_none() && end < bytes.len() {
            // The default window stopped before the end of the file: say how to read on.
            next.byte_offset = Some(end as u64);
            warnings.push(format!(
                "read bytes {start}..{end} of {size}; `next` continues with the following bytes"
            ));
        }
    }
    if !next.is_empty() {
        ex.next = Some(next);
    }
    extra.byte_range = Some(vec![start as u64, end as u64]);
    ex.warnings = warnings;
    ex.report = extra;
    Ok(ex)
}

/// Characters a stateful encoding decodes from `bytes[from..to]`, `from` a line start.
fn text_chars_between(enc: TextEncoding, bytes: &[u8], from: usize, to: usize) -> usize {
    enc.decode(&bytes[from..to]).chars().count()
}

/// A multi-byte encoding's character boundary at or after `at` (`forward`), or at or
/// before it, found by walking whole characters from the start of `at`'s line (a line end
/// is a boundary in every encoding `char_len` knows; `bom`: where the text starts). `None`
/// for other encodings, or when `at`'s line starts more than `WALK_MAX` bytes before it
/// (then `snap` decides).
fn boundary(
    bytes: &[u8],
    enc: TextEncoding,
    bom: usize,
    at: usize,
    forward: bool,
) -> Option<usize> {
    const WALK_MAX: usize = 4 << 20;
    enc.char_len(b"a")?;
    let lo = at.saturating_sub(WALK_MAX).max(bom);
    let from = match bytes[lo..at].iter().rposition(|b| *b == b'\n') {
        Some(p) => lo + p + 1,
        None if lo == bom => bom,
        None => return None,
    };
    let (mut i, mut before) = (from, from);
    while i < at {
        before = i;
        i += enc.char_len(&bytes[i..])?;
    }
    Some(if i == at || forward {
        i.min(bytes.len())
    } else {
        before
    })
}

fn snap(bytes: &[u8], enc: TextEncoding, start: usize, end: usize) -> (usize, usize) {
    if enc.unit() != 1 || start >= end {
        return (start, end);
    }
    for ds in 0..4usize {
        let s = start + ds;
        if s > end {
            break;
        }
        for de in 0..4usize {
            let e = end.saturating_sub(de);
            if e < s {
                break;
            }
            if enc.decode_strict(&bytes[s..e]).is_some() {
                return (s, e);
            }
        }
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole text at once is the text line by line: every line end (`\n`, `\r\n`, a lone
    /// `\r`), malformed bytes (a lone lead byte before a line end, at the very end), a BOM's
    /// UTF-8, single-byte and multi-byte encodings, with and without detection's own text.
    #[test]
    fn the_whole_text_at_once_is_the_text_line_by_line() {
        let mut gbk = encoding_rs::GBK
            .encode("代码,名称\r\n600519,贵州茅台\r1700.00\n")
            .0
            .into_owned();
        let clean_gbk = gbk.repeat(400);
        gbk.extend_from_slice(b"\x81\nlast \x81");
        let sjis = encoding_rs::SHIFT_JIS
            .encode("日本語のテキスト\n東京都\n")
            .0
            .repeat(500);
        let cases: Vec<Vec<u8>> = vec![
            gbk,
            clean_gbk,
            sjis,
            b"caf\xe9 cr\xe8me\r\nna\xefve\rend".to_vec(),
            b"\xef\xbb\xbfUTF-8 \xe4\xb8\xad\n\xff bad\r\n\xe4\xb8 tail".to_vec(),
            b"".to_vec(),
        ];
        let mut kept = 0;
        for bytes in cases {
            let (det, decoded) = encoding::detect_decoded(&bytes, false);
            kept += usize::from(decoded.is_some());
            let body = &bytes[det.bom_len..];
            let total = line_count(body, det.encoding);
            let window = Window {
                start: 0,
                end: total,
                total,
                max_chars: usize::MAX,
                line_window: false,
                by_lines: false,
            };
            let by_lines = window.read_text(body, det);
            for decoded in [decoded.clone(), None] {
                let (text, chars) =
                    whole_text(body, det, decoded, usize::MAX).expect("it all fits");
                assert_eq!(text, by_lines.text, "{:?}", det.encoding.name());
                assert_eq!(chars as u64, by_lines.char_count);
            }
        }
        assert_eq!(
            kept, 2,
            "the two clean multi-byte files past 8 KiB keep their text"
        );
    }

    /// A byte offset inside a two-byte character moves to a whole character, found from
    /// the line's start: the second byte alone may decode cleanly (an ASCII letter in
    /// Johab and GBK, a first byte in EUC-TW and EUC-KR).
    #[test]
    fn multi_byte_windows_start_on_whole_characters() {
        let gbk = encoding_rs::GBK.encode("中文中文").0.into_owned();
        for (enc, bytes) in [
            (TextEncoding::Johab, b"\x88\x61\x88\x61\x88\x61".to_vec()),
            (TextEncoding::EucTw, b"\xc4\xa1\xc4\xa1\xc4\xa1".to_vec()),
            (TextEncoding::Rs(encoding_rs::GBK), gbk),
        ] {
            assert_eq!(boundary(&bytes, enc, 0, 1, true), Some(2), "{}", enc.name());
            assert_eq!(
                boundary(&bytes, enc, 0, 3, false),
                Some(2),
                "{}",
                enc.name()
            );
            assert_eq!(boundary(&bytes, enc, 0, 4, true), Some(4), "{}", enc.name());
            let mut lines = b"ab\n".to_vec();
            lines.extend_from_slice(&bytes);
            assert_eq!(boundary(&lines, enc, 0, 4, true), Some(5), "{}", enc.name());
        }
        assert_eq!(
            boundary(b"abc", TextEncoding::Rs(encoding_rs::UTF_8), 0, 1, true),
            None
        );
    }

    #[test]
    fn line_count_matches_split_lines_in_every_encoding() {
        let texts = [
            "",
            "a",
            "a\n",
            "a\r\nb\rc\n\nd",
            "\r\n\r\n",
            "中文\n第二行\r第三",
            "x\r",
        ];
        for t in texts {
            let want = split_lines(t).len();
            for enc in [
                encoding_rs::UTF_8,
                encoding_rs::GBK,
                encoding_rs::SHIFT_JIS,
                encoding_rs::BIG5,
            ] {
                let (bytes, _, _) = enc.encode(t);
                assert_eq!(
                    line_count(&bytes, TextEncoding::Rs(enc)),
                    want,
                    "{t:?} in {}",
                    enc.name()
                );
            }
            let le: Vec<u8> = t.encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
            let be: Vec<u8> = t.encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
            assert_eq!(
                line_count(&le, TextEncoding::Rs(encoding_rs::UTF_16LE)),
                want,
                "{t:?} LE"
            );
            assert_eq!(
                line_count(&be, TextEncoding::Rs(encoding_rs::UTF_16BE)),
                want,
                "{t:?} BE"
            );
        }
    }

    #[test]
    fn lines_keep_their_terminators() {
        assert_eq!(
            split_lines("a\nb\r\nc\rd"),
            vec!["a\n", "b\r\n", "c\r", "d"]
        );
        assert_eq!(split_lines("a\n"), vec!["a\n"]);
        assert!(split_lines("").is_empty());
        assert_eq!(split_lines("\n\n"), vec!["\n", "\n"]);
    }

    /// The window as the whole decode gives it: lines `start..end` of the decoded text,
    /// whole lines within the budget, the window's characters, the byte offset `next` gives
    /// for a first line longer than the budget.
    fn reference(
        body: &[u8],
        enc: TextEncoding,
        bom: usize,
        start: usize,
        end: usize,
        max: usize,
    ) -> (String, u64, Option<(u64, Option<u64>)>) {
        let text = enc.decode(body);
        let lines = split_lines(&text);
        let window = &lines[start..end];
        let chars: usize = window.iter().map(|l| l.chars().count()).sum();
        if chars <= max {
            return (window.concat(), chars as u64, None);
        }
        let k = fit_blocks(window, max).count;
        if k > 0 {
            return (
                close_truncated(window[..k].concat(), chars as u64),
                chars as u64,
                None,
            );
        }
        let cut = crate::envelope::cut_within(window[0], max);
        let at = |prefix: &str| {
            (bom..=body.len() + bom)
                .find(|&n| enc.decode(&body[..n - bom]) == prefix)
                .expect("a prefix of the bytes decodes to it") as u64
        };
        let pos = at(&(lines[..start].concat() + cut));
        let length = (end < lines.len()).then(|| at(&lines[..end].concat()) - pos);
        (
            close_truncated(cut.to_string(), chars as u64),
            chars as u64,
            Some((pos, length)),
        )
    }

    /// The window read on the bytes (only the lines shown decoded) returns what decoding
    /// the whole file and cutting its lines returns, in every kind of encoding: ASCII-
    /// compatible multi-byte, single-byte, UTF-16 and UTF-32 (decoded whole), with
    /// malformed bytes, BOMs, every line ending, and every offset, limit and budget.
    #[test]
    fn window_matches_a_whole_decode() {
        let text = "第一行 中文\r\nplain ascii line\n\nGrüße aus Köln\rlast 最后一行 without end";
        let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
        for enc in [
            encoding_rs::GBK,
            encoding_rs::SHIFT_JIS,
            encoding_rs::BIG5,
            encoding_rs::UTF_8,
        ] {
            let (b, _, _) = enc.encode(text);
            cases.push((b.into_owned(), enc.name()));
        }
        let (latin, _, _) = encoding_rs::WINDOWS_1252.encode("Grüße\r\ncafé crème\nà la carte\n");
        cases.push((latin.into_owned(), "windows-1252"));
        // GBK with a lone lead byte before a line end, and one at the very end.
        let mut broken = encoding_rs::GBK.encode("中文\n").0.into_owned();
        broken.extend_from_slice(b"ab\x81\ncd\x81");
        cases.push((broken, "GBK"));
        let mut bom = vec![0xEF, 0xBB, 0xBF];
        bom.extend_from_slice(text.as_bytes());
        cases.push((bom, "UTF-8"));
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(|u| u.to_le_bytes()));
        cases.push((le, "UTF-16LE"));
        let mut utf32 = vec![0xFF, 0xFE, 0, 0];
        utf32.extend(text.chars().flat_map(|c| (c as u32).to_le_bytes()));
        cases.push((utf32, "UTF-32LE"));
        for (bytes, name) in &cases {
            let det = encoding::detect(bytes, false);
            let det = Detected {
                encoding: if det.encoding.name() == *name {
                    det.encoding
                } else {
                    TextEncoding::Rs(encoding_rs::Encoding::for_label(name.as_bytes()).unwrap())
                },
                ..det
            };
            let decoded = det.encoding.decode(&bytes[det.bom_len..]);
            let total = split_lines(&decoded).len();
            for start in 0..total {
                for limit in [None, Some(1), Some(2)] {
                    let end = limit.map_or(total, |l| (start + l).min(total));
                    for max in [1, 3, 8, 17, 40, 1000] {
                        let want = reference(
                            &bytes[det.bom_len..],
                            det.encoding,
                            det.bom_len,
                            start,
                            end,
                            max,
                        );
                        let w = Window {
                            start,
                            end,
                            total,
                            max_chars: max,
                            line_window: limit.is_some(),
                            by_lines: false,
                        };
                        let got = w.read_text(&bytes[det.bom_len..], det);
                        let at = format!("{name} start {start} limit {limit:?} max {max}");
                        assert_eq!(got.text, want.0, "{at}");
                        assert_eq!(got.char_count, want.1, "{at}");
                        let by_bytes = got
                            .next
                            .as_ref()
                            .and_then(|n| Some((n.byte_offset?, n.byte_length)));
                        assert_eq!(by_bytes, want.2, "{at}");
                    }
                }
            }
            assert_eq!(
                line_count(&bytes[det.bom_len..], det.encoding),
                total,
                "{name}"
            );
        }
    }
}
