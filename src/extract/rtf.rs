//! RTF: the format family (`format: "rtf"`), read into the blocks Word documents are read
//! into (paragraphs, headings by style or outline level, list items with the number
//! `\listtext` shows, tables from `\trowd…\cell…\row`, then headers, footers, footnotes,
//! endnotes and comments), and Outlook's compressed RTF (PR_RTF_COMPRESSED,
//! [MS-OXRTFCP]) for messages whose body exists only as RTF. Encapsulated HTML
//! (`\fromhtml1`, what Outlook writes for HTML mail) is rebuilt as HTML and made text
//! like any HTML body.
//!
//! Text is decoded as RTF readers decode it: `\uN` (negative N, surrogate pairs) with its
//! `\ucN` fallback skipped, `\'hh` bytes in the code page of their font's `\fcharset`
//! (double-byte code pages whole), else the document's `\ansicpg`; field results, not
//! instructions; `\v` hidden text to the hidden-text findings. Groups are a stack on the
//! heap, capped in depth; `\binN` data is stepped over.

use encoding_rs::Encoding;

use super::blocks::Block;
use super::symbols::{symbol_char, SymbolFont};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::{ApiError, ErrorCode};
use crate::options::{HiddenText, Options};

/// The dictionary every LZFu stream starts from ([MS-OXRTFCP] 2.1.3.1.1).
const PREBUF: &[u8] = b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript \\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par \\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx";

fn damaged(why: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Corrupt,
        format!("the message's RTF body is damaged: {why}"),
    )
}

/// Decompress a PR_RTF_COMPRESSED stream (LZFu, or MELA = stored).
/// `max_raw` is the most output the stream may claim (`Limits::max_rtf_bytes`).
pub fn decompress(data: &[u8], max_raw: usize) -> Result<Vec<u8>, ApiError> {
    if data.len() < 16 {
        return Err(damaged("shorter than its header"));
    }
    let u32_at = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let raw_size = u32_at(4) as usize;
    let kind = &data[8..12];
    let body = &data[16..data.len().min(u32_at(0) as usize + 4).max(16)];
    if raw_size > max_raw {
        return Err(damaged(&format!("it claims more than {max_raw} bytes")));
    }
    match kind {
        b"MELA" => Ok(body[..body.len().min(raw_size)].to_vec()),
        b"LZFu" => {
            let mut dict = [0u8; 4096];
            dict[..PREBUF.len()].copy_from_slice(PREBUF);
            let mut write = PREBUF.len();
            let mut out = Vec::with_capacity(raw_size);
            let mut i = 0;
            'stream: while i < body.len() {
                let control = body[i];
                i += 1;
                for bit in 0..8 {
                    if i >= body.len() {
                        break 'stream;
                    }
                    if control & (1 << bit) == 0 {
                        let b = body[i];
                        i += 1;
                        out.push(b);
                        dict[write % 4096] = b;
                        write += 1;
                    } else {
                        if i + 1 >= body.len() {
                            break 'stream;
                        }
                        let word = u16::from_be_bytes([body[i], body[i + 1]]) as usize;
                        i += 2;
                        let offset = word >> 4;
                        let len = (word & 0xF) + 2;
                        if offset == write % 4096 {
                            break 'stream; // the end marker
                        }
                        for k in 0..len {
                            let b = dict[(offset + k) % 4096];
                            out.push(b);
                            dict[write % 4096] = b;
                            write += 1;
                        }
                    }
                    if out.len() > raw_size.max(16) + 18 {
                        return Err(damaged("it inflates past its declared size"));
                    }
                }
            }
            out.truncate(raw_size);
            Ok(out)
        }
        _ => Err(damaged("unknown compression type")),
    }
}

/// What an RTF document says, as text (an e-mail body): `\fromhtml` bodies are rebuilt as
/// HTML and made text; anything else gives its blocks as plain text shows them.
pub fn to_text(rtf: &[u8]) -> Result<String, ApiError> {
    let doc = parse(rtf, HiddenText::Keep, MAX_DEPTH, false)?;
    Ok(match doc.html {
        Some(html) => super::html::to_text(&html),
        None => super::blocks::render(&doc.blocks, 0, true).concat(),
    })
}

/// Groups nested deeper than this are refused (Word writes fewer than 20).
const MAX_DEPTH: usize = 512;

/// Paragraphs and table cells one document may have: each costs a block or a cell, tens of
/// bytes, while `a\par` is five bytes of RTF (a 100 MB file of them would take gigabytes).
const MAX_UNITS: usize = 2_000_000;

/// The RTF family: a standalone `.rtf` (or a `.doc` that is RTF inside), read like Word.
pub struct RtfExtractor;

impl Extractor for RtfExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let bytes = std::fs::read(&input.path).map_err(ApiError::internal)?;
        let mode = req.hidden_text.unwrap_or(HiddenText::Keep);
        let mut doc = parse(
            &bytes,
            mode,
            limits.package.max_xml_depth.min(MAX_DEPTH),
            req.markdown(),
        )?;
        if let Some(html) = doc.html.take() {
            // Outlook's HTML-in-RTF saved as a file: the HTML is the document.
            doc.blocks = super::html::to_text(&html)
                .lines()
                .map(|l| Block::Para(l.to_string()))
                .collect();
            doc.paragraphs = doc.blocks.len();
            doc.tables = 0;
            doc.hidden.clear();
        }
        let mut ex = super::blocks::serve_blocks(&doc.blocks, doc.paragraphs, doc.tables, req)?;
        ex.report.title = doc.title;
        ex.report.metadata = doc.metadata;
        ex.findings = super::blocks::block_findings(
            doc.blocks.len(),
            doc.hidden
                .iter()
                .map(|(at, kind, how, text)| (*at, *kind, *how, text.as_str(), false)),
            req,
            ex.next.as_ref(),
            mode,
        )?;
        Ok(ex)
    }
}

/// An RTF document: the body's blocks, then each side story under its marker
/// (`--- Headers ---`, `--- Footers ---`, `--- Footnotes ---`, `--- Endnotes ---`,
/// `--- Comments ---`), as Word documents are read.
pub struct Document {
    pub blocks: Vec<Block>,
    /// Paragraphs (headings and list items too) of the body.
    pub paragraphs: usize,
    /// Tables of the body.
    pub tables: usize,
    /// Hidden text and comments by block: (block, kind, how, text).
    pub hidden: Vec<(usize, crate::findings::FindingKind, &'static str, String)>,
    /// `{\info{\title …}}`.
    pub title: Option<String>,
    /// `\info`: title, author, subject, `\doccomm` as the description.
    pub metadata: Option<crate::report::Metadata>,
    /// Encapsulated HTML (`\fromhtml1`), rebuilt.
    pub html: Option<String>,
}

/// Where a group's text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    Story(usize),
    /// `\listtext`/`\pntext`: the number or bullet a list paragraph shows.
    ListText,
    FontTable,
    StyleSheet,
    /// `\info`: its `\title`, `\author`, `\subject` and `\doccomm` are read.
    Info,
    /// One of those, by its place in `INFO`.
    InfoField(usize),
    /// `\fldinst` of a field read for Markdown: its code, to `Parser::fields`.
    FieldCode,
    Skip,
}

/// The `\info` fields read, in `Parser::info`'s order.
const INFO: [&str; 4] = ["title", "author", "subject", "doccomm"];

/// The stories, by index: the body and the side stories in their output order.
const BODY: usize = 0;
const SIDES: [&str; 5] = ["Headers", "Footers", "Footnotes", "Endnotes", "Comments"];

/// The state a group carries (RTF scopes character and paragraph formatting by group).
#[derive(Debug, Clone, Copy)]
struct State {
    dest: Dest,
    /// `\v`: hidden text.
    hidden: bool,
    /// `\deleted`: a tracked deletion, left out as Word documents' are.
    deleted: bool,
    /// `\fN`: the font, whose charset decodes `\'hh` bytes.
    font: Option<i32>,
    /// `\ucN`: fallback characters after a `\u`.
    uc: usize,
    /// Paragraph: `\intbl` (or `\itapN`, N ≥ 1).
    intbl: bool,
    /// Paragraph: `\sN`.
    style: i32,
    /// Paragraph: `\outlinelevelN`.
    outline: Option<u32>,
    /// Paragraph: `\ilvlN` (list level, 0-based).
    level: u32,
    /// Inside `\*\htmltag` (encapsulated HTML) / `\htmlrtf` (RTF-only text).
    htmltag: bool,
    htmlrtf: bool,
    /// Where text went before `\upr` (its `\*\ud` half is read there).
    upr_dest: Dest,
    /// Inside `\shptxt`: a text box, its paragraphs apart from the one it stands in.
    textbox: bool,
}

#[derive(Default)]
struct Story {
    blocks: Vec<Block>,
    para: String,
    /// The label `\listtext` gave the open paragraph.
    label: Option<String>,
    cell: String,
    row: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Hidden runs of the open paragraph, then of the open table.
    runs: Vec<String>,
    table_runs: Vec<String>,
    last_hidden: bool,
    /// (block, text) of hidden runs.
    hidden: Vec<(usize, String)>,
}

#[derive(Default, Clone)]
struct Font {
    encoding: Option<&'static Encoding>,
    /// Symbol or Wingdings, by the font's name (decided once, when its entry ends).
    symbol: Option<SymbolFont>,
}

struct Parser {
    mode: HiddenText,
    stories: Vec<Story>,
    fonts: std::collections::HashMap<i32, Font>,
    /// The font a `{\fN …;}` entry of the font table defines.
    defining_font: i32,
    styles: std::collections::HashMap<i32, String>,
    defining_style: i32,
    entry: String,
    default_font: Option<i32>,
    ansi: &'static Encoding,
    listtext: String,
    /// `\info`'s fields, as `INFO` lists them.
    info: [Option<String>; 4],
    from_html: bool,
    html: String,
    /// Bytes of `\'hh` escapes not yet decoded (a double-byte character takes two).
    pending: Vec<u8>,
    pending_encoding: &'static Encoding,
    /// A high surrogate from `\u`, waiting for its low half.
    high: Option<u16>,
    /// Fallback characters still to skip after a `\u`.
    skip: usize,
    /// The paragraph (text, label) a text box interrupted, for after it.
    stash: Vec<(String, Option<String>)>,
    /// Paragraphs and cells so far (`MAX_UNITS`).
    units: usize,
    /// Fields are read for Markdown (a `HYPERLINK` field's result is a link); the open
    /// ones; groups open where the walk stands.
    links: bool,
    fields: Vec<Field>,
    depth: usize,
}

/// Fields open inside each other, at most.
const MAX_FIELDS: usize = 64;

/// An open `{\field …}`: the groups open at its `\field`, its code, and where its result
/// starts (story, byte of the open paragraph).
struct Field {
    depth: usize,
    code: String,
    result: Option<(usize, usize)>,
}

impl Parser {
    fn encoding(&self, s: &State) -> &'static Encoding {
        s.font
            .or(self.default_font)
            .and_then(|f| self.fonts.get(&f))
            .and_then(|f| f.encoding)
            .unwrap_or(self.ansi)
    }

    /// Text for the group's destination.
    fn put(&mut self, s: &State, text: &str) {
        if text.is_empty() || s.deleted {
            return;
        }
        if s.htmltag {
            self.html.push_str(text);
            return;
        }
        match s.dest {
            Dest::Skip | Dest::Info => return,
            Dest::ListText => self.listtext.push_str(text),
            Dest::FontTable | Dest::StyleSheet => {
                // Entries not grouped (`{\fonttbl\f0 Symbol;\f1 Arial;}`) end at their `;`.
                let mut parts = text.split_inclusive(';').peekable();
                while let Some(part) = parts.next() {
                    if self.entry.len() < 4096 {
                        self.entry.push_str(part);
                    }
                    if part.ends_with(';') {
                        self.commit_entry(s.dest);
                    }
                }
            }
            Dest::InfoField(k) => self.info[k].get_or_insert_with(String::new).push_str(text),
            Dest::FieldCode => {
                if let Some(f) = self.fields.last_mut().filter(|f| f.code.len() < 4096) {
                    f.code.push_str(text);
                }
            }
            Dest::Story(i) => {
                if self.from_html && !s.htmlrtf {
                    self.html.push_str(text);
                }
                let st = &mut self.stories[i];
                if s.hidden {
                    match st.runs.last_mut() {
                        Some(r) if st.last_hidden => r.push_str(text),
                        _ => st.runs.push(text.to_string()),
                    }
                    crate::findings::push_hidden(&mut st.para, text, self.mode, st.last_hidden);
                    st.last_hidden = true;
                } else {
                    st.para.push_str(text);
                    st.last_hidden = false;
                }
            }
        }
    }

    /// A field ends: a `HYPERLINK` to a web or mail address makes its result, in the
    /// paragraph it began in, a Markdown link.
    fn close_field(&mut self, f: Field) {
        let Some((k, start)) = f.result else { return };
        let Some(url) = super::markdown::field_link(&f.code) else {
            return;
        };
        super::markdown::link_tail(&mut self.stories[k].para, start, &url);
    }

    /// Story `k`'s open paragraph (or cell) ends: a field whose result began in it and
    /// ends later links nothing (its place is gone).
    fn paragraph_ends(&mut self, k: usize) {
        for f in &mut self.fields {
            if f.result.is_some_and(|(story, _)| story == k) {
                f.result = None;
            }
        }
    }

    /// Decode the `\'hh` bytes waiting.
    fn flush(&mut self, s: &State) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = std::mem::take(&mut self.pending);
        let text = if let Some(sym) = self.symbol_font(s) {
            bytes
                .iter()
                .filter_map(|&b| symbol_char(sym, b))
                .collect::<String>()
        } else {
            // Bytes that are malformed in the font's code page (a lone lead byte of a
            // double-byte one, cut off by a control word: LibreOffice writes a list's
            // bullet `\'96` so in a font it labels Shift-JIS) are read in the document's
            // code page, then in Windows-1252, as Word shows them.
            let strict = |e: &'static Encoding| {
                e.decode_without_bom_handling_and_without_replacement(&bytes)
            };
            strict(self.pending_encoding)
                .or_else(|| strict(self.ansi))
                .unwrap_or_else(|| {
                    encoding_rs::WINDOWS_1252
                        .decode_without_bom_handling(&bytes)
                        .0
                })
                .chars()
                .filter(|c| !c.is_control() || *c == '\t')
                .collect()
        };
        self.put(s, &text);
    }

    /// Symbol and Wingdings fonts (`\fcharset2`, named so) show their own glyphs for bytes.
    fn symbol_font(&self, s: &State) -> Option<SymbolFont> {
        self.fonts.get(&s.font.or(self.default_font)?)?.symbol
    }

    /// The font table's or style sheet's entry ends (its group, or its `;`).
    fn commit_entry(&mut self, dest: Dest) {
        let name = self.entry.trim().trim_end_matches(';').trim().to_string();
        self.entry.clear();
        match dest {
            Dest::FontTable => {
                let lower = name.to_ascii_lowercase();
                self.fonts.entry(self.defining_font).or_default().symbol =
                    SymbolFont::by_name(&name).or_else(|| {
                        // `Symbol;` or a name with a trailing qualifier (`Wingdings,Bold`).
                        let head = lower.split([',', '(']).next().unwrap_or("").trim();
                        SymbolFont::by_name(head)
                    });
            }
            Dest::StyleSheet => {
                self.styles.insert(self.defining_style, name);
                self.defining_style = 0;
            }
            _ => {}
        }
    }

    fn unicode(&mut self, s: &State, n: i64) {
        let unit = (if n < 0 { n + 65536 } else { n }) as u32;
        let ch = match (self.high.take(), unit) {
            (None, 0xD800..=0xDBFF) => {
                self.high = Some(unit as u16);
                return;
            }
            (Some(h), 0xDC00..=0xDFFF) => {
                char::from_u32(0x10000 + ((h as u32 - 0xD800) << 10) + (unit - 0xDC00))
            }
            (_, u) => char::from_u32(u),
        };
        let ch = ch.unwrap_or('\u{FFFD}');
        if !ch.is_control() || ch == '\t' {
            self.put(s, ch.encode_utf8(&mut [0; 4]));
        }
    }

    fn end_paragraph(&mut self, s: &State) {
        if self.from_html && !s.htmlrtf {
            self.html.push('\n');
        }
        let Dest::Story(i) = s.dest else { return };
        self.paragraph_ends(i);
        let heading = s
            .outline
            .filter(|o| *o < 9)
            .map(|o| (o + 2).min(6) as u8)
            .or_else(|| self.styles.get(&s.style).and_then(|n| style_heading(n)));
        self.stories[i].end_paragraph(s.intbl, heading, s.level);
        self.units += 1;
    }
}

impl Story {
    fn end_paragraph(&mut self, intbl: bool, heading: Option<u8>, level: u32) {
        let text = std::mem::take(&mut self.para);
        let label = self.label.take();
        self.last_hidden = false;
        if intbl {
            push_cell_text(&mut self.cell, &text);
            self.table_runs.append(&mut self.runs);
            return;
        }
        self.close_table();
        // Blank lines in a row are one (a run of `\par`s costs a block each otherwise).
        if text.trim().is_empty()
            && label.is_none()
            && self.runs.is_empty()
            && matches!(self.blocks.last(), Some(Block::Para(p)) if p.trim().is_empty())
        {
            return;
        }
        let at = self.blocks.len();
        for r in self.runs.drain(..) {
            if !r.trim().is_empty() {
                self.hidden.push((at, r));
            }
        }
        let label = label
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty() && !text.trim().is_empty());
        let block = match (label, heading) {
            (Some(label), Some(h)) => Block::Heading(h, level, format!("{label} {text}")),
            (None, Some(h)) if !text.trim().is_empty() => Block::Heading(h, 0, text),
            (Some(label), None) => Block::Item {
                level,
                bullet: !label.chars().any(char::is_alphanumeric),
                label,
                text,
            },
            _ => Block::Para(text),
        };
        self.blocks.push(block);
    }

    fn end_cell(&mut self) {
        let text = std::mem::take(&mut self.para);
        self.label = None;
        push_cell_text(&mut self.cell, &text);
        self.table_runs.append(&mut self.runs);
        self.last_hidden = false;
        let cell = std::mem::take(&mut self.cell);
        self.row.push(cell);
    }

    fn end_row(&mut self) {
        if !self.cell.trim().is_empty() {
            let cell = std::mem::take(&mut self.cell);
            self.row.push(cell);
        }
        if !self.row.is_empty() {
            let row = std::mem::take(&mut self.row);
            self.rows.push(row);
        }
    }

    fn close_table(&mut self) {
        if !self.row.is_empty() || !self.cell.trim().is_empty() {
            self.end_row();
        }
        if self.rows.is_empty() {
            return;
        }
        let at = self.blocks.len();
        for r in self.table_runs.drain(..) {
            if !r.trim().is_empty() {
                self.hidden.push((at, r));
            }
        }
        let width = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut rows = std::mem::take(&mut self.rows);
        // Rows made as wide as the widest, unless that would cost more than the cells do
        // (one row of a million cells over a million short rows).
        let cells: usize = rows.iter().map(Vec::len).sum();
        if width.saturating_mul(rows.len()) <= cells.saturating_mul(2).max(1024) {
            for r in rows.iter_mut() {
                r.resize(width, String::new());
            }
        }
        self.blocks.push(Block::Table(rows));
    }

    /// The story's end: an open paragraph or table is closed.
    fn finish(&mut self) {
        if !self.para.trim().is_empty() {
            self.end_paragraph(false, None, 0);
        }
        self.close_table();
    }
}

fn push_cell_text(cell: &mut String, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if !cell.is_empty() {
        cell.push(' ');
    }
    for c in text.chars() {
        cell.push(if matches!(c, '\n' | '\r' | '\t') {
            ' '
        } else {
            c
        });
    }
}

/// The Markdown heading level of a paragraph style's name: 1 for Title, N + 1 for
/// "heading N" (the title is the one level-1 heading, as Word documents are read).
fn style_heading(name: &str) -> Option<u8> {
    let name = name.trim().to_ascii_lowercase();
    if name == "title" {
        return Some(1);
    }
    let n: u8 = name.strip_prefix("heading")?.trim().parse().ok()?;
    (1..=9).contains(&n).then(|| (n + 1).min(6))
}

/// The encoding of a font's `\fcharsetN` (None: the document's code page).
fn charset_encoding(charset: i64) -> Option<&'static Encoding> {
    let cp = match charset {
        // ANSI: Western, whatever `\ansicpg` says (as Word and LibreOffice read it).
        0 => 1252,
        77 => 10000,
        128 => 932,
        129 => 949,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        _ => return None,
    };
    codepage::to_encoding(cp)
}

/// Whether the bytes end inside a double-byte character (its lead byte without its trail).
fn needs_trail(enc: &'static Encoding, bytes: &[u8]) -> bool {
    let lead: fn(u8) -> bool = if enc == encoding_rs::SHIFT_JIS {
        |b| matches!(b, 0x81..=0x9F | 0xE0..=0xFC)
    } else if enc == encoding_rs::GBK || enc == encoding_rs::BIG5 || enc == encoding_rs::EUC_KR {
        |b| matches!(b, 0x81..=0xFE)
    } else {
        return false;
    };
    let mut i = 0;
    while i < bytes.len() {
        i += if lead(bytes[i]) { 2 } else { 1 };
    }
    i > bytes.len()
}

/// Destinations whose text is never shown.
const SKIPPED: &[&str] = &[
    "colortbl",
    "pict",
    "listtable",
    "listoverridetable",
    "revtbl",
    "rsidtbl",
    "generator",
    "xmlnstbl",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "filetbl",
    "pgdsctbl",
    "mmathPr",
    "fldinst",
    "objdata",
    "objclass",
    "objname",
    "nonshppict",
    "sp",
    "shprslt",
    "xe",
    "tc",
    "tcn",
    "txe",
    "rxe",
    "userprops",
    "docvar",
    "template",
    "bkmkstart",
    "bkmkend",
    "pn",
    "atnid",
    "atnauthor",
    "atnref",
    "atndate",
    "atnicn",
    "atntime",
    "fldtype",
    "passwordhash",
    "wgrffmtfilter",
    "defchp",
    "defpap",
    "private",
];

/// `\*` destinations that are read: encapsulated HTML, `\upr`'s Unicode half, shapes'
/// instructions (holding text boxes), text boxes, comments, footnotes (pandoc and
/// LibreOffice write `{\*\footnote …}`).
/// (`\*\nesttableprops` holds no text as the specification writes it, but writers put a
/// nested table's cells there, and readers show them.)
const STARRED_KEPT: &[&str] = &[
    "htmltag",
    "ud",
    "shpinst",
    "shptxt",
    "annotation",
    "footnote",
    "nesttableprops",
];

/// Parse an RTF document (`mode`: what hidden text does in the blocks; `markdown`: a
/// `HYPERLINK` field to a web or mail address is written as a Markdown link).
pub fn parse(
    rtf: &[u8],
    mode: HiddenText,
    max_depth: usize,
    markdown: bool,
) -> Result<Document, ApiError> {
    let mut p = Parser {
        mode,
        stories: (0..=SIDES.len()).map(|_| Story::default()).collect(),
        fonts: Default::default(),
        defining_font: 0,
        styles: Default::default(),
        defining_style: 0,
        entry: String::new(),
        default_font: None,
        ansi: encoding_rs::WINDOWS_1252,
        listtext: String::new(),
        info: Default::default(),
        from_html: false,
        html: String::new(),
        pending: Vec::new(),
        pending_encoding: encoding_rs::WINDOWS_1252,
        high: None,
        skip: 0,
        stash: Vec::new(),
        units: 0,
        links: markdown,
        fields: Vec::new(),
        depth: 0,
    };
    let mut stack: Vec<State> = Vec::new();
    let mut s = State {
        dest: Dest::Story(BODY),
        hidden: false,
        deleted: false,
        font: None,
        uc: 1,
        intbl: false,
        style: 0,
        outline: None,
        level: 0,
        htmltag: false,
        htmlrtf: false,
        upr_dest: Dest::Skip,
        textbox: false,
    };
    let mut starred = false; // the previous token was `\*` opening its group
                             // Nothing but line ends since the last `{`: only there does `\*` make the group a
                             // destination to skip (StarWriter writes `\*\cs7` in the middle of a run of text).
    let mut fresh = false;
    let mut i = 0;
    while i < rtf.len() {
        if p.units > MAX_UNITS {
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                format!("the RTF document has more than {MAX_UNITS} paragraphs and table cells"),
            )
            .with_hint("Split the document, or save it as .docx or PDF and upload that."));
        }
        let b = rtf[i];
        match b {
            b'{' => {
                p.flush(&s);
                if stack.len() >= max_depth {
                    return Err(ApiError::new(
                        ErrorCode::Corrupt,
                        format!("RTF groups nested deeper than {max_depth} levels"),
                    )
                    .with_hint("the file is damaged or built to exhaust a reader; save it again from the program that made it"));
                }
                stack.push(s);
                p.depth = stack.len();
                p.skip = 0;
                starred = false;
                fresh = true;
                i += 1;
            }
            b'}' => {
                p.flush(&s);
                p.skip = 0;
                starred = false;
                fresh = false;
                i += 1;
                let Some(outer) = stack.pop() else { continue };
                p.depth = stack.len();
                while p.fields.last().is_some_and(|f| f.depth > stack.len()) {
                    if let Some(f) = p.fields.pop() {
                        p.close_field(f);
                    }
                }
                if s.textbox && !outer.textbox {
                    if let Dest::Story(k) = s.dest {
                        if let Some((para, label)) = p.stash.pop() {
                            let st = &mut p.stories[k];
                            if !st.para.trim().is_empty() {
                                let text = std::mem::replace(&mut st.para, para);
                                st.blocks.push(Block::Para(text));
                                p.units += 1;
                            } else {
                                st.para = para;
                            }
                            st.label = label;
                        }
                    }
                }
                match s.dest {
                    // An entry of the font table or style sheet ends with its group (or with
                    // the table, where entries are not grouped).
                    Dest::FontTable | Dest::StyleSheet if !p.entry.trim().is_empty() => {
                        p.commit_entry(s.dest);
                    }
                    Dest::ListText if outer.dest != Dest::ListText => {
                        if let Dest::Story(o) = outer.dest {
                            p.stories[o].label = Some(std::mem::take(&mut p.listtext));
                        }
                        p.listtext.clear();
                    }
                    // A footnote, comment or header ends with its group.
                    Dest::Story(k) if k != BODY && outer.dest != s.dest => {
                        p.stories[k].finish();
                    }
                    _ => {}
                }
                s = outer;
            }
            b'\\' => {
                i += 1;
                let Some(&c) = rtf.get(i) else { break };
                let first = std::mem::take(&mut fresh);
                if c.is_ascii_alphabetic() {
                    let start = i;
                    while i < rtf.len() && rtf[i].is_ascii_alphabetic() && i - start < 32 {
                        i += 1;
                    }
                    let word = std::str::from_utf8(&rtf[start..i]).unwrap_or("");
                    let nstart = i;
                    if i < rtf.len() && (rtf[i] == b'-' || rtf[i].is_ascii_digit()) {
                        i += 1;
                        while i < rtf.len() && rtf[i].is_ascii_digit() && i - nstart < 11 {
                            i += 1;
                        }
                    }
                    let param: Option<i64> = std::str::from_utf8(&rtf[nstart..i])
                        .ok()
                        .and_then(|p| p.parse().ok());
                    if i < rtf.len() && rtf[i] == b' ' {
                        i += 1; // the delimiter space belongs to the control word
                    }
                    p.flush(&s);
                    if p.skip > 0 && word != "u" {
                        // A control word counts as one fallback character.
                        p.skip -= 1;
                        continue;
                    }
                    if word != "u" && p.high.take().is_some() {
                        p.put(&s, "\u{FFFD}");
                    }
                    let kept = STARRED_KEPT.contains(&word) || (p.links && word == "fldinst");
                    if std::mem::take(&mut starred) && !kept {
                        s.dest = Dest::Skip;
                        continue;
                    }
                    if word == "bin" {
                        // Binary data of `param` bytes: never text.
                        let n = param.unwrap_or(0).max(0) as usize;
                        i = i.saturating_add(n).min(rtf.len());
                        continue;
                    }
                    control_word(&mut p, &mut s, word, param);
                    continue;
                }
                i += 1;
                match c {
                    b'\'' => {
                        // Two hex digits; a damaged escape takes only what is hex (never a
                        // brace that closes a group).
                        let digits = rtf[i..]
                            .iter()
                            .take(2)
                            .take_while(|b| b.is_ascii_hexdigit())
                            .count();
                        let hex = std::str::from_utf8(&rtf[i..i + digits]).ok();
                        i += digits;
                        if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                            if p.skip > 0 {
                                p.skip -= 1;
                            } else {
                                let enc = p.encoding(&s);
                                if p.pending.is_empty() {
                                    p.pending_encoding = enc;
                                } else if p.pending_encoding != enc {
                                    p.flush(&s);
                                    p.pending_encoding = enc;
                                }
                                p.pending.push(v);
                            }
                        }
                        continue;
                    }
                    b'*' => {
                        starred = first;
                        continue;
                    }
                    _ => {}
                }
                p.flush(&s);
                if p.skip > 0 {
                    p.skip -= 1;
                    continue;
                }
                match c {
                    b'~' => p.put(&s, "\u{a0}"),
                    b'_' => p.put(&s, "-"),
                    b'-' | b':' | b'|' => {}
                    b'\n' | b'\r' => p.end_paragraph(&s),
                    b'\t' => p.put(&s, "\t"),
                    other if other.is_ascii_graphic() => {
                        p.put(&s, (other as char).encode_utf8(&mut [0; 4]))
                    }
                    _ => {}
                }
            }
            b'\r' | b'\n' => i += 1,
            _ => {
                fresh = false;
                // A run of plain bytes, in the font's code page.
                let start = i;
                while i < rtf.len() && !matches!(rtf[i], b'{' | b'}' | b'\\' | b'\r' | b'\n') {
                    i += 1;
                }
                let mut run = &rtf[start..i];
                // A double-byte character whose trail byte is a plain character (`\'83A`).
                if !p.pending.is_empty() && needs_trail(p.pending_encoding, &p.pending) {
                    p.pending.push(run[0]);
                    run = &run[1..];
                }
                p.flush(&s);
                let n = p.skip.min(run.len());
                run = &run[n..];
                p.skip -= n;
                if run.is_empty() {
                    continue;
                }
                if p.high.take().is_some() {
                    p.put(&s, "\u{FFFD}");
                }
                let text = if let Some(sym) = p.symbol_font(&s) {
                    run.iter()
                        .filter_map(|&b| symbol_char(sym, b))
                        .collect::<String>()
                } else {
                    p.encoding(&s)
                        .decode_without_bom_handling(run)
                        .0
                        .into_owned()
                };
                let text: String = text
                    .chars()
                    .filter(|c| !c.is_control() || *c == '\t')
                    .collect();
                p.put(&s, &text);
            }
        }
    }
    p.flush(&s);
    for st in p.stories.iter_mut() {
        st.finish();
    }
    Ok(assemble(p))
}

/// Act on one control word.
fn control_word(p: &mut Parser, s: &mut State, word: &str, param: Option<i64>) {
    let on = param != Some(0);
    // Inside a group that is not shown nothing is shown again, whatever destination a word
    // names there (`{\*\generator{\header …}}`); only `\upr`'s Unicode half returns.
    if s.dest == Dest::Skip && word != "ud" {
        return;
    }
    let story = |k: usize| Dest::Story(1 + k);
    match word {
        // The document.
        "ansicpg" => {
            if let Some(e) = param
                .and_then(|n| u16::try_from(n).ok())
                .and_then(codepage::to_encoding)
            {
                p.ansi = e;
            }
        }
        "mac" => p.ansi = encoding_rs::MACINTOSH,
        "deff" => p.default_font = param.map(|n| n as i32),
        "fromhtml" => p.from_html = true,
        "htmltag" => s.htmltag = true,
        "htmlrtf" => s.htmlrtf = on,
        // Destinations.
        "fonttbl" => s.dest = Dest::FontTable,
        "stylesheet" => s.dest = Dest::StyleSheet,
        "info" => s.dest = Dest::Info,
        w if s.dest == Dest::Info && INFO.contains(&w) => {
            s.dest = Dest::InfoField(INFO.iter().position(|i| *i == w).unwrap_or(0))
        }
        "listtext" | "pntext" => {
            if matches!(s.dest, Dest::Story(_)) {
                p.listtext.clear();
                s.dest = Dest::ListText;
            }
        }
        "header" | "headerl" | "headerr" | "headerf" => s.dest = story(0),
        "footer" | "footerl" | "footerr" | "footerf" => s.dest = story(1),
        "footnote" => s.dest = story(2),
        // `{\footnote\ftnalt …}` is an endnote.
        "ftnalt" if s.dest == story(2) => s.dest = story(3),
        "annotation" => s.dest = story(4),
        "upr" => {
            s.upr_dest = s.dest;
            s.dest = Dest::Skip;
        }
        // `\*\ud`: the Unicode half of `\upr`, read where its fallback would have been.
        "ud" => s.dest = s.upr_dest,
        "shptxt" => {
            if let Dest::Story(k) = s.dest {
                if !s.textbox {
                    s.textbox = true;
                    let st = &mut p.stories[k];
                    p.stash
                        .push((std::mem::take(&mut st.para), st.label.take()));
                }
            }
        }
        // Fields, for Markdown (`Parser::fields`).
        "field" if p.links && p.fields.len() < MAX_FIELDS => p.fields.push(Field {
            depth: p.depth,
            code: String::new(),
            result: None,
        }),
        "fldinst" if p.links && !p.fields.is_empty() => s.dest = Dest::FieldCode,
        "fldrslt" if p.links => {
            if let (Dest::Story(k), Some(f)) = (s.dest, p.fields.last_mut()) {
                f.result = Some((k, p.stories[k].para.len()));
            }
        }
        w if SKIPPED.contains(&w) => s.dest = Dest::Skip,
        // Font and style table entries.
        "f" if s.dest == Dest::FontTable => p.defining_font = param.unwrap_or(0) as i32,
        "fcharset" if s.dest == Dest::FontTable => {
            let enc = param.and_then(charset_encoding);
            p.fonts.entry(p.defining_font).or_default().encoding = enc;
        }
        "cpg" if s.dest == Dest::FontTable => {
            if let Some(e) = param
                .and_then(|n| u16::try_from(n).ok())
                .and_then(codepage::to_encoding)
            {
                p.fonts.entry(p.defining_font).or_default().encoding = Some(e);
            }
        }
        "s" if s.dest == Dest::StyleSheet => p.defining_style = param.unwrap_or(0) as i32,
        // Character formatting.
        "f" => s.font = param.map(|n| n as i32),
        "plain" => {
            s.hidden = false;
            s.deleted = false;
            s.font = None;
        }
        "v" => s.hidden = on,
        "deleted" => s.deleted = on,
        "uc" => s.uc = param.unwrap_or(1).clamp(0, 16) as usize,
        "u" => {
            p.unicode(s, param.unwrap_or(0));
            p.skip = s.uc;
        }
        // Paragraph formatting.
        "pard" => {
            s.intbl = false;
            s.style = 0;
            s.outline = None;
            s.level = 0;
        }
        "intbl" => s.intbl = true,
        "itap" => s.intbl = param.unwrap_or(1) > 0,
        "s" => s.style = param.unwrap_or(0) as i32,
        "outlinelevel" => s.outline = param.and_then(|n| u32::try_from(n).ok()),
        "ilvl" => s.level = param.unwrap_or(0).clamp(0, 8) as u32,
        "pnlvl" => s.level = (param.unwrap_or(1) - 1).clamp(0, 8) as u32,
        // Breaks and characters.
        "par" => p.end_paragraph(s),
        // A section or page break ends the paragraph it stands in (not an empty one).
        "sect" | "page" => {
            if let Dest::Story(k) = s.dest {
                if !p.stories[k].para.trim().is_empty() {
                    p.end_paragraph(s);
                }
            }
        }
        "line" => p.put(s, "\n"),
        "tab" => p.put(s, "\t"),
        "cell" | "nestcell" => {
            if let Dest::Story(k) = s.dest {
                p.paragraph_ends(k);
                p.stories[k].end_cell();
                p.units += 1;
            }
        }
        "row" | "nestrow" => {
            if let Dest::Story(k) = s.dest {
                p.stories[k].end_row();
            }
        }
        "emdash" => p.put(s, "—"),
        "endash" => p.put(s, "–"),
        "emspace" | "enspace" | "qmspace" => p.put(s, " "),
        "bullet" => p.put(s, "•"),
        "lquote" => p.put(s, "‘"),
        "rquote" => p.put(s, "’"),
        "ldblquote" => p.put(s, "“"),
        "rdblquote" => p.put(s, "”"),
        "zwj" => p.put(s, "\u{200d}"),
        "zwnj" => p.put(s, "\u{200c}"),
        _ => {}
    }
}

/// The body's blocks, then each side story under its marker.
fn assemble(p: Parser) -> Document {
    let mut stories = p.stories.into_iter();
    let body = stories.next().unwrap_or_default();
    let paragraphs = body.blocks.iter().filter(|b| b.is_paragraph()).count();
    let tables = body
        .blocks
        .iter()
        .filter(|b| matches!(b, Block::Table(_)))
        .count();
    let mut hidden: Vec<(usize, crate::findings::FindingKind, &'static str, String)> = body
        .hidden
        .into_iter()
        .map(|(at, t)| (at, crate::findings::FindingKind::HiddenRun, HIDDEN_HOW, t))
        .collect();
    let mut blocks = body.blocks;
    for (marker, story) in SIDES.iter().zip(stories) {
        // Empty paragraphs dropped; a header repeated for first/left/right pages is one
        // (notes and comments are kept as they are: "Ibid." twice is two notes).
        let dedupe = matches!(*marker, "Headers" | "Footers");
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        let mut seen: Vec<Block> = Vec::new();
        let mut place: Vec<Option<usize>> = Vec::new();
        for b in story.blocks {
            // A note's text starts after its reference mark and a space.
            let b = match b {
                Block::Para(t) => Block::Para(t.trim().to_string()),
                b => b,
            };
            let key = if dedupe {
                format!("{b:?}")
            } else {
                String::new()
            };
            if b.is_paragraph() && b.plain().trim().is_empty() {
                place.push(None);
            } else if let Some(&k) = index.get(&key).filter(|_| dedupe) {
                place.push(Some(k));
            } else {
                seen.push(b);
                if dedupe {
                    index.insert(key, seen.len() - 1);
                }
                place.push(Some(seen.len() - 1));
            }
        }
        if seen.is_empty() {
            continue;
        }
        let base = blocks.len() + 1;
        for (at, t) in story.hidden {
            let at = place
                .get(at)
                .copied()
                .flatten()
                .map_or(base - 1, |k| base + k);
            hidden.push((at, crate::findings::FindingKind::HiddenRun, HIDDEN_HOW, t));
        }
        blocks.push(Block::Marker(marker.to_string()));
        for b in seen {
            if *marker == "Comments" {
                hidden.push((
                    blocks.len(),
                    crate::findings::FindingKind::Comment,
                    COMMENT_HOW,
                    b.plain(),
                ));
            }
            blocks.push(b);
        }
    }
    hidden.sort_by_key(|h| h.0);
    hidden.dedup();
    let [title, author, subject, description] = p
        .info
        .map(|v| v.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()));
    let metadata =
        (title.is_some() || author.is_some() || subject.is_some() || description.is_some()).then(
            || crate::report::Metadata {
                title: title.clone(),
                author,
                subject,
                description,
                ..Default::default()
            },
        );
    Document {
        blocks,
        paragraphs,
        tables,
        hidden,
        title,
        metadata,
        html: p.from_html.then_some(p.html),
    }
}

const HIDDEN_HOW: &str = "\\v (hidden text)";
const COMMENT_HOW: &str = "an annotation (\\annotation), shown beside the text";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_and_compressed_streams() {
        // The example of [MS-OXRTFCP] 3.1.1: "{\rtf1\ansi\ansicpg1252\pard hello world}\r\n".
        let compressed: &[u8] = &[
            0x2d, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x00, 0x00, 0x4c, 0x5a, 0x46, 0x75, 0xf1, 0xc5,
            0xc7, 0xa7, 0x03, 0x00, 0x0a, 0x00, 0x72, 0x63, 0x70, 0x67, 0x31, 0x32, 0x35, 0x42,
            0x32, 0x0a, 0xf3, 0x20, 0x68, 0x65, 0x6c, 0x09, 0x00, 0x20, 0x62, 0x77, 0x05, 0xb0,
            0x6c, 0x64, 0x7d, 0x0a, 0x80, 0x0f, 0xa0,
        ];
        let raw = decompress(compressed, 1 << 26).unwrap();
        assert_eq!(
            std::str::from_utf8(&raw).unwrap(),
            "{\\rtf1\\ansi\\ansicpg1252\\pard hello world}\r\n"
        );
        assert_eq!(to_text(&raw).unwrap(), "hello world\n");
        assert!(decompress(b"short", 1 << 26).is_err());
    }

    #[test]
    fn rtf_text_and_encapsulated_html() {
        let rtf = br"{\rtf1\ansi\ansicpg1251{\fonttbl{\f0 Arial;}}\pard \'cf\'f0\'e8\'e2\'e5\'f2\par caf\u233?\par}";
        assert_eq!(to_text(rtf).unwrap(), "Привет\ncafé\n");
        let html = br"{\rtf1\ansi\fromhtml1 {\*\htmltag19 <html>}{\*\htmltag64 <p>}\htmlrtf {\b\htmlrtf0 Hello }\htmlrtf0 world{\*\htmltag72 </p>}\htmlrtf \par only in RTF\htmlrtf0}";
        let t = to_text(html).unwrap();
        assert!(t.contains("Hello world"), "{t:?}");
        assert!(!t.contains("only in RTF"), "{t:?}");
    }

    #[test]
    fn starred_footnotes_and_stars_inside_a_run() {
        // pandoc and LibreOffice write `{\*\footnote …}`; StarWriter puts `\*\cs7` in the
        // middle of a group of text, where `\*` makes nothing a destination.
        let rtf = br"{\rtf1\ansi {\pard Body A{\super\chftn}{\*\footnote\chftn\~\pard Note one.\par}.\par}{\loch\f2\*\cs7 The quick brown fox\par}{\*\unknowndest skipped\par}}";
        let t = to_text(rtf).unwrap();
        assert!(t.contains("Body A"), "{t:?}");
        assert!(t.contains("Note one."), "{t:?}");
        assert!(t.contains("The quick brown fox"), "{t:?}");
        assert!(!t.contains("skipped"), "{t:?}");
    }
}
