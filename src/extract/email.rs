//! E-mail: Outlook .msg (OLE2 property streams, honouring the message codepage) and RFC 822
//! .eml (via mail-parser). Headers first, then the body (plain text, or HTML made text),
//! with `offset`/`limit` over the body's lines. Attachments are handed back as bytes for
//! the HTTP layer to store as uploads of the same tenant.

use std::io::Read;

use mail_parser::{MessageParser, MimeHeaders};

use super::html::{Hidden, HiddenMode};
use super::text::split_lines;
use super::{Extractor, Input};
use crate::config::Limits;
use crate::detect::Format;
use crate::envelope::{close_truncated, fit_blocks, Attachment, Extraction, Next};
use crate::error::{ApiError, ErrorCode};
use crate::options::{HiddenText, Options};
use crate::report::{AttachmentInfo, Report};

pub struct EmailExtractor;

/// What both kinds of mail come down to.
#[derive(Debug, Default)]
pub struct Mail {
    pub subject: Option<String>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub cc: Option<String>,
    pub date: Option<String>,
    pub body: String,
    pub attachments: Vec<Attachment>,
    /// Attachments listed but not extracted (embedded Outlook items).
    pub unextracted: Vec<String>,
    /// Hidden elements of an HTML body (issue #21), with their 1-based lines in `body`.
    pub hidden: Vec<Hidden>,
    /// With `output: "json"`: the typed blocks of the body's HTML parts (see `HtmlBlocks`).
    pub blocks: Option<HtmlBlocks>,
}

/// The blocks the HTML reader recorded for a body's HTML parts, each with the 1-based line
/// of `body` it starts on, and the lines (1-based, inclusive) each HTML part fills. The
/// other lines (text parts, a forwarded message's title) are read as paragraphs of the
/// lines a read shows.
#[derive(Debug, Default)]
pub struct HtmlBlocks {
    pub parts: Vec<(usize, usize)>,
    pub blocks: Vec<(usize, crate::model::Block)>,
}

impl HtmlBlocks {
    /// The blocks of body lines `first..first + lines.len()` (1-based): an HTML part's
    /// blocks that start on them, and the paragraphs of the other lines among them.
    fn shown(&self, lines: &[&str], first: usize) -> Vec<crate::model::Block> {
        let mut out = Vec::new();
        let mut para: Vec<&str> = Vec::new();
        let flush = |para: &mut Vec<&str>, out: &mut Vec<crate::model::Block>| {
            out.extend(crate::model::paragraphs(para.drain(..)));
        };
        let mut next = self.blocks.partition_point(|(at, _)| *at < first);
        for (i, line) in lines.iter().enumerate() {
            let n = first + i;
            if self.parts.iter().any(|&(a, z)| (a..=z).contains(&n)) {
                flush(&mut para, &mut out);
                while next < self.blocks.len() && self.blocks[next].0 == n {
                    out.push(self.blocks[next].1.clone());
                    next += 1;
                }
            } else {
                para.push(line);
            }
        }
        flush(&mut para, &mut out);
        out
    }
}

/// How many line ends a text holds, counted as `split_lines` counts them (`\n`, `\r\n` or
/// a lone `\r`): the line a part appended after it starts on, less one.
fn line_ends(text: &str) -> usize {
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .filter(|&(i, &c)| c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')))
        .count()
}

/// How a body is read: hidden elements kept, marked or left out; blocks recorded or not.
#[derive(Clone, Copy)]
struct BodyRead {
    mode: HiddenMode,
    blocks: bool,
}

impl BodyRead {
    /// An HTML body as text, its hidden elements and (when recorded) its blocks.
    fn html(self, html: &str) -> super::html::Rendered {
        if self.blocks {
            super::html::render_blocks(html, self.mode)
        } else {
            super::html::render_as(html, false, self.mode)
        }
    }
}

// ----------------------------------------------------------------------------------------
// .msg
// ----------------------------------------------------------------------------------------

type Ole = cfb::CompoundFile<std::fs::File>;

fn stream(cf: &mut Ole, path: &str) -> Option<Vec<u8>> {
    let mut s = cf.open_stream(path).ok()?;
    let mut buf = Vec::new();
    // Streams are bounded by the file, which is bounded by the upload limit.
    s.read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// A string property of the storage at `base`: Unicode (001F) or 8-bit (001E) in `codepage`.
fn prop_string(
    cf: &mut Ole,
    base: &str,
    id: u16,
    codepage: &'static encoding_rs::Encoding,
) -> Option<String> {
    if let Some(b) = stream(cf, &format!("{base}__substg1.0_{id:04X}001F")) {
        let (s, _) = encoding_rs::UTF_16LE.decode_without_bom_handling(&b);
        return Some(s.trim_end_matches('\0').to_string());
    }
    let b = stream(cf, &format!("{base}__substg1.0_{id:04X}001E"))?;
    // Outlook writes some 8-bit strings in UTF-8 whatever the codepage says; valid
    // multi-byte UTF-8 is very unlikely to be a legacy-codepage string by accident.
    if let Ok(s) = std::str::from_utf8(&b) {
        return Some(s.trim_end_matches('\0').to_string());
    }
    // The declared codepage may be the HTML body's (UTF-8) rather than the strings'.
    let (s, _, bad) = codepage.decode(&b);
    let s = if bad {
        encoding_rs::WINDOWS_1252.decode(&b).0
    } else {
        s
    };
    Some(s.trim_end_matches('\0').to_string())
}

/// The code page of a message's 8-bit string properties: PR_MESSAGE_CODEPAGE when it is
/// set. Else the ANSI code page of the message's locale (PR_MESSAGE_LOCALE_ID) or the
/// internet code page (PR_INTERNET_CPID, the body's as sent, not the strings'): when the
/// two differ, the one chardetng finds in the 8-bit strings themselves (subject, sender,
/// plain body), else the locale's. A German message whose HTML body went out in
/// windows-1251 keeps its windows-1252 subject (`öäü`, not `цдь`).
fn strings_codepage(
    cf: &mut Ole,
    message: Option<u32>,
    locale: Option<u32>,
    internet: Option<u32>,
) -> &'static encoding_rs::Encoding {
    let enc = |cp: u32| u16::try_from(cp).ok().and_then(codepage::to_encoding);
    if let Some(e) = message.and_then(enc) {
        return e;
    }
    // UTF-8, UTF-16 and US-ASCII say nothing about 8-bit strings.
    let internet = internet
        .filter(|cp| !matches!(cp, 65001 | 1200 | 1201 | 20127))
        .and_then(enc);
    let locale = locale.and_then(ansi_codepage).and_then(enc);
    match (locale, internet) {
        (Some(l), Some(i)) if l != i => {
            let mut d = chardetng::EncodingDetector::new();
            for id in [0x0037u16, 0x0C1A, 0x0042, 0x1000] {
                if let Some(b) = stream(cf, &format!("/__substg1.0_{id:04X}001E")) {
                    d.feed(&b[..b.len().min(64 * 1024)], false);
                }
            }
            d.feed(b"", true);
            let guess = d.guess(None, false);
            if guess == i {
                i
            } else {
                l
            }
        }
        (l, i) => l.or(i).unwrap_or(encoding_rs::WINDOWS_1252),
    }
}

/// The ANSI code page of a Windows locale id (LCID), by its language (and, for Chinese and
/// Serbian, its script or region).
fn ansi_codepage(lcid: u32) -> Option<u32> {
    if lcid == 0 {
        return None;
    }
    let lang = lcid & 0x3FF;
    Some(match lang {
        // Chinese: Taiwan, Hong Kong and Macao traditional; the rest simplified.
        0x04 => match lcid {
            0x0404 | 0x0C04 | 0x1404 | 0x7C04 => 950,
            _ => 936,
        },
        0x11 => 932,
        0x12 => 949,
        0x1E => 874,
        0x2A => 1258,
        0x19 | 0x22 | 0x23 | 0x02 | 0x2F | 0x3F | 0x40 | 0x44 | 0x50 | 0x28 => 1251,
        0x43 if lcid == 0x0843 => 1251,
        // Serbian and Bosnian in Cyrillic; Croatian, Serbian and Bosnian in Latin.
        0x1A => match lcid {
            0x0C1A | 0x1C1A | 0x201A | 0x281A | 0x301A | 0x6C1A | 0x7C1A => 1251,
            _ => 1250,
        },
        0x05 | 0x0E | 0x15 | 0x18 | 0x1B | 0x24 | 0x1C => 1250,
        0x08 => 1253,
        0x1F => 1254,
        0x2C | 0x43 if lcid == 0x082C => 1251,
        0x2C | 0x43 => 1254,
        0x0D => 1255,
        0x01 | 0x29 | 0x20 => 1256,
        0x25 | 0x26 | 0x27 => 1257,
        _ => 1252,
    })
}

/// Fixed-size properties of the storage at `base` (id → 8-byte value).
fn fixed_props(cf: &mut Ole, base: &str, header: usize) -> Vec<(u16, u16, [u8; 8])> {
    let Some(b) = stream(cf, &format!("{base}__properties_version1.0")) else {
        return vec![];
    };
    b.get(header..)
        .unwrap_or_default()
        .chunks_exact(16)
        .map(|e| {
            let tag = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
            let mut v = [0u8; 8];
            v.copy_from_slice(&e[8..16]);
            ((tag >> 16) as u16, (tag & 0xFFFF) as u16, v)
        })
        .collect()
}

fn filetime(v: [u8; 8]) -> Option<String> {
    let ticks = u64::from_le_bytes(v);
    if ticks == 0 {
        return None;
    }
    let secs = (ticks / 10_000_000) as i64 - 11_644_473_600;
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

/// The To and Cc recipients of a message's recipient table (`__recip_version1.0_#N`), each
/// `Name <address>` (the SMTP address, else the e-mail address when it is one), in table
/// order; Bcc recipients are not listed.
fn recipients(
    cf: &mut Ole,
    codepage: &'static encoding_rs::Encoding,
) -> (Vec<String>, Vec<String>) {
    let mut storages: Vec<String> = cf
        .read_root_storage()
        .filter(|e| e.is_storage() && e.name().starts_with("__recip_version1.0_"))
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    storages.sort();
    let (mut to, mut cc) = (Vec::new(), Vec::new());
    for s in storages.iter().take(10_000) {
        let base = format!("{s}/");
        let name = prop_string(cf, &base, 0x3001, codepage).filter(|n| !n.trim().is_empty());
        let addr = prop_string(cf, &base, 0x39FE, codepage)
            .or_else(|| prop_string(cf, &base, 0x3003, codepage))
            .filter(|a| a.contains('@'));
        let kind = fixed_props(cf, &base, 8)
            .iter()
            .find(|p| p.0 == 0x0C15 && p.1 == 0x0003)
            .map(|p| u32::from_le_bytes([p.2[0], p.2[1], p.2[2], p.2[3]]) & 0x0F);
        // A name that is the address again (`'a@b.c'`) adds nothing.
        let name = name.map(|n| n.trim().trim_matches(['\'', '"']).trim().to_string());
        let shown = match (name, addr) {
            (Some(n), Some(a)) if !n.eq_ignore_ascii_case(a.trim()) => {
                format!("{n} <{}>", a.trim())
            }
            (n, a) => match a.or(n) {
                Some(v) => v.trim().to_string(),
                None => continue,
            },
        };
        match kind {
            Some(2) => cc.push(shown),
            Some(3) => {}
            _ => to.push(shown),
        }
    }
    (to, cc)
}

fn parse_msg(input: &Input, limits: &Limits, how: BodyRead) -> Result<Mail, ApiError> {
    let f = std::fs::File::open(&input.path).map_err(ApiError::internal)?;
    let mut cf = cfb::CompoundFile::open(f).map_err(|e| {
        ApiError::new(ErrorCode::Corrupt, "the Outlook message cannot be opened").with_cause(e)
    })?;
    let props = fixed_props(&mut cf, "/", 32);
    let int = |id: u16| {
        props
            .iter()
            .find(|p| p.0 == id && p.1 == 0x0003)
            .map(|p| u32::from_le_bytes([p.2[0], p.2[1], p.2[2], p.2[3]]))
    };
    let codepage = strings_codepage(&mut cf, int(0x3FFD), int(0x3FF1), int(0x3FDE));
    let mut m = Mail {
        subject: prop_string(&mut cf, "/", 0x0037, codepage),
        to: prop_string(&mut cf, "/", 0x0E04, codepage).filter(|s| !s.is_empty()),
        cc: prop_string(&mut cf, "/", 0x0E03, codepage).filter(|s| !s.is_empty()),
        ..Default::default()
    };
    // The recipient table names each recipient with an address; the display strings
    // above have names only.
    let (to, cc) = recipients(&mut cf, codepage);
    if !to.is_empty() {
        m.to = Some(to.join(", "));
    }
    if !cc.is_empty() {
        m.cc = Some(cc.join(", "));
    }
    let sender_name = prop_string(&mut cf, "/", 0x0C1A, codepage)
        .or_else(|| prop_string(&mut cf, "/", 0x0042, codepage));
    let sender_addr = prop_string(&mut cf, "/", 0x5D01, codepage)
        .or_else(|| prop_string(&mut cf, "/", 0x0C1F, codepage))
        .filter(|a| a.contains('@'));
    m.from = match (sender_name, sender_addr) {
        (Some(n), Some(a)) if n != a => Some(format!("{n} <{a}>")),
        (n, a) => n.or(a),
    };
    // PR_CLIENT_SUBMIT_TIME, else PR_MESSAGE_DELIVERY_TIME, else the creation time.
    m.date = [0x0039u16, 0x0E06, 0x3007].iter().find_map(|id| {
        props
            .iter()
            .find(|p| p.0 == *id && p.1 == 0x0040)
            .and_then(|p| filetime(p.2))
    });
    m.body = match prop_string(&mut cf, "/", 0x1000, codepage).filter(|b| !b.trim().is_empty()) {
        Some(b) => b.replace("\r\n", "\n"),
        None => {
            // HTML body: binary (in the message codepage or its own charset) or string.
            let html = stream(&mut cf, "/__substg1.0_10130102")
                .map(|b| decode_html_bytes(&b, codepage))
                .or_else(|| prop_string(&mut cf, "/", 0x1013, codepage));
            match html {
                Some(h) => {
                    let r = how.html(&h);
                    m.hidden = r.hidden;
                    if how.blocks {
                        m.blocks = Some(HtmlBlocks {
                            parts: vec![(1, split_lines(&r.text).len().max(1))],
                            blocks: r.blocks,
                        });
                    }
                    r.text
                }
                // Only compressed RTF (PR_RTF_COMPRESSED): Outlook's own body format.
                None => match stream(&mut cf, "/__substg1.0_10090102") {
                    Some(c) => super::rtf::to_text(&super::rtf::decompress(
                        &c,
                        limits.max_rtf_bytes as usize,
                    )?)?,
                    None => String::new(),
                },
            }
        }
    };
    // Attachments: one storage each.
    let storages: Vec<String> = cf
        .read_root_storage()
        .filter(|e| e.is_storage() && e.name().starts_with("__attach_version1.0_"))
        .map(|e| e.path().to_string_lossy().into_owned())
        .collect();
    for s in storages {
        let base = format!("{s}/");
        let name = prop_string(&mut cf, &base, 0x3707, codepage)
            .or_else(|| prop_string(&mut cf, &base, 0x3704, codepage))
            .or_else(|| prop_string(&mut cf, &base, 0x3001, codepage))
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| "attachment".to_string());
        match stream(&mut cf, &format!("{base}__substg1.0_37010102")) {
            Some(bytes) => m.attachments.push(Attachment { name, bytes }),
            None => m.unextracted.push(name),
        }
    }
    Ok(m)
}

/// HTML bytes: the charset the document declares, else the message codepage.
fn decode_html_bytes(b: &[u8], fallback: &'static encoding_rs::Encoding) -> String {
    if let Ok(s) = std::str::from_utf8(b) {
        return s.to_string();
    }
    let head = String::from_utf8_lossy(&b[..b.len().min(2048)]).to_ascii_lowercase();
    let declared = head
        .split("charset=")
        .nth(1)
        .map(|r| {
            r.trim_start_matches(['"', '\''])
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .next()
                .unwrap_or("")
        })
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()));
    declared.unwrap_or(fallback).decode(b).0.into_owned()
}

// ----------------------------------------------------------------------------------------
// .eml
// ----------------------------------------------------------------------------------------

fn addresses(a: Option<&mail_parser::Address<'_>>) -> Option<String> {
    let list: Vec<String> = a?
        .iter()
        .map(|x| match (x.name(), x.address()) {
            (Some(n), Some(a)) => format!("{n} <{a}>"),
            (Some(n), None) => n.to_string(),
            (None, Some(a)) => a.to_string(),
            (None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    (!list.is_empty()).then(|| list.join(", "))
}

fn parse_eml(input: &Input, how: BodyRead) -> Result<Mail, ApiError> {
    let raw = utf16_as_utf8(std::fs::read(&input.path).map_err(ApiError::internal)?);
    let msg = MessageParser::default()
        .parse(&raw)
        .ok_or_else(|| ApiError::new(ErrorCode::Corrupt, "the message has no readable headers"))?;
    let mut m = Mail {
        subject: msg.subject().map(str::to_string),
        from: addresses(msg.from()),
        to: addresses(msg.to()),
        cc: addresses(msg.cc()),
        date: msg.date().map(|d| d.to_rfc3339()),
        ..Default::default()
    };
    let mut blocks = HtmlBlocks::default();
    m.body = body_of(&msg, how, &mut m.hidden, &mut blocks, 0);
    for part in msg.attachments() {
        let name = part.attachment_name().unwrap_or("attachment").to_string();
        if let Some(inner) = part.message() {
            // A forwarded message: its text belongs to this one.
            // Its first line comes after this body's lines and the separator's.
            let line0 = line_ends(&m.body) + 2;
            let inner_body = body_of(inner, how, &mut m.hidden, &mut blocks, line0);
            m.body.push_str(&format!(
                "\n--- Attached message: {} ---\n{}",
                inner.subject().unwrap_or(""),
                inner_body
            ));
            m.attachments.push(Attachment {
                name: format!("{name}.eml").replace(".eml.eml", ".eml"),
                bytes: part.contents().to_vec(),
            });
        } else {
            m.attachments.push(Attachment {
                name,
                bytes: part.contents().to_vec(),
            });
        }
    }
    if how.blocks {
        m.blocks = Some(blocks);
    }
    Ok(m)
}

/// A message saved as UTF-16 (by its byte-order mark, or, without one, by its first
/// characters all being ASCII with a zero byte beside each), as UTF-8: the headers a
/// message starts with are ASCII, so nothing else looks like that. Anything else as it is.
fn utf16_as_utf8(raw: Vec<u8>) -> Vec<u8> {
    let (enc, bom) = match raw.get(..2) {
        Some([0xFF, 0xFE]) => (encoding_rs::UTF_16LE, 2),
        Some([0xFE, 0xFF]) => (encoding_rs::UTF_16BE, 2),
        _ => {
            let head = &raw[..raw.len().min(64) & !1];
            let ascii = |c: u8| c == b'\t' || c == b'\n' || c == b'\r' || (0x20..0x7F).contains(&c);
            let pairs = || head.chunks_exact(2);
            if head.len() < 16 {
                return raw;
            } else if pairs().all(|p| ascii(p[0]) && p[1] == 0) {
                (encoding_rs::UTF_16LE, 0)
            } else if pairs().all(|p| p[0] == 0 && ascii(p[1])) {
                (encoding_rs::UTF_16BE, 0)
            } else {
                return raw;
            }
        }
    };
    let (text, _) = enc.decode_without_bom_handling(&raw[bom..]);
    text.into_owned().into_bytes()
}

/// A message's body: its text parts, or else its HTML parts as a browser shows them (hidden
/// elements kept, marked or left out as `mode` says, and added to `hidden` with their lines
/// counted from `line0`, the lines before where the body goes).
fn body_of(
    msg: &mail_parser::Message<'_>,
    how: BodyRead,
    hidden: &mut Vec<Hidden>,
    blocks: &mut HtmlBlocks,
    line0: usize,
) -> String {
    // mail-parser lists an HTML part among the text parts where there is no plain text
    // for it, and would make it text itself, hidden elements and all: such parts go
    // through the HTML reader instead, in their place.
    let part = |id: &u32| msg.parts.get(*id as usize);
    let (first, first_part, first_block) = (hidden.len(), blocks.parts.len(), blocks.blocks.len());
    let mut out = String::new();
    for id in &msg.text_body {
        add_part(&mut out, part(id), how, hidden, blocks, line0);
    }
    if out.trim().is_empty() {
        out.clear();
        hidden.truncate(first);
        blocks.parts.truncate(first_part);
        blocks.blocks.truncate(first_block);
        for id in &msg.html_body {
            if let Some(p) = part(id).filter(|p| matches!(p.body, mail_parser::PartType::Html(_))) {
                add_part(&mut out, Some(p), how, hidden, blocks, line0);
            }
        }
    }
    out
}

/// A part labelled Latin-1, Windows-1252 or ASCII (or not labelled) whose bytes are UTF-8:
/// clients that label every message `iso-8859-1` send such parts, and read as labelled
/// they come out `cafÃ©`. Put back into the labelled charset's bytes, such a text is valid
/// UTF-8 with multi-byte sequences (which Latin-1 prose next to never is): that reading is
/// the text.
fn mislabelled_utf8<'a>(text: &'a str, charset: Option<&str>) -> std::borrow::Cow<'a, str> {
    use std::borrow::Cow;
    let latin = charset.is_none_or(|c| {
        let c = c.trim().to_ascii_lowercase();
        matches!(
            c.as_str(),
            "iso-8859-1"
                | "iso8859-1"
                | "latin1"
                | "latin-1"
                | "l1"
                | "us-ascii"
                | "ascii"
                | "windows-1252"
                | "cp1252"
                | "iso-8859-15"
                | "iso8859-15"
        )
    });
    if !latin || text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let bytes: Vec<u8> = if text.chars().all(|c| (c as u32) < 0x100) {
        text.chars().map(|c| c as u32 as u8).collect()
    } else {
        let (b, _, failed) = encoding_rs::WINDOWS_1252.encode(text);
        if failed {
            return Cow::Borrowed(text);
        }
        b.into_owned()
    };
    match String::from_utf8(bytes) {
        Ok(utf8) => Cow::Owned(utf8),
        Err(_) => Cow::Borrowed(text),
    }
}

/// Add one text or HTML part to a body (a line apart), its hidden elements to `hidden` at
/// their lines (counted from `line0`, the lines before the body).
fn add_part(
    out: &mut String,
    part: Option<&mail_parser::MessagePart<'_>>,
    how: BodyRead,
    hidden: &mut Vec<Hidden>,
    blocks: &mut HtmlBlocks,
    line0: usize,
) {
    let Some(part) = part else { return };
    let charset = part.content_type().and_then(|ct| ct.attribute("charset"));
    let (text, found, made) = match &part.body {
        mail_parser::PartType::Text(t) => (
            mislabelled_utf8(t, charset).replace("\r\n", "\n"),
            Vec::new(),
            None,
        ),
        mail_parser::PartType::Html(h) => {
            let r = how.html(&mislabelled_utf8(h, charset));
            (r.text, r.hidden, Some(r.blocks))
        }
        _ => return,
    };
    if !out.is_empty() {
        out.push('\n');
    }
    let before = line0 + line_ends(out);
    hidden.extend(found.into_iter().map(|mut x| {
        x.line += before;
        x
    }));
    if let Some(made) = made.filter(|_| how.blocks) {
        blocks
            .parts
            .push((before + 1, before + split_lines(&text).len().max(1)));
        blocks
            .blocks
            .extend(made.into_iter().map(|(line, b)| (line + before, b)));
    }
    out.push_str(&text);
}

// ----------------------------------------------------------------------------------------

impl Extractor for EmailExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars;
        let offset = req.offset;
        let limit = req.limit;
        // An HTML body reads as a browser shows it: hidden elements left out unless
        // `hidden_text` says keep or mark (issue #21), and listed as findings either way.
        let mode = match req.hidden_text {
            Some(HiddenText::Keep) => HiddenMode::Keep,
            Some(HiddenText::Mark) => HiddenMode::Mark,
            _ => HiddenMode::Drop,
        };
        let how = BodyRead {
            mode,
            blocks: req.json(),
        };
        let mail = match input.format {
            Format::Msg => parse_msg(input, limits, how)?,
            _ => parse_eml(input, how)?,
        };
        let mut head = String::new();
        for (k, v) in [
            ("Subject", &mail.subject),
            ("From", &mail.from),
            ("To", &mail.to),
            ("Cc", &mail.cc),
            ("Date", &mail.date),
        ] {
            if let Some(v) = v {
                head.push_str(&format!("{k}: {v}\n"));
            }
        }
        let mut listed: Vec<String> = mail
            .attachments
            .iter()
            .map(|a| format!("{} ({} bytes)", a.name, a.bytes.len()))
            .collect();
        listed.extend(
            mail.unextracted
                .iter()
                .map(|n| format!("{n} (embedded item, not extracted)")),
        );
        if !listed.is_empty() {
            head.push_str(&format!("Attachments: {}\n", listed.join(", ")));
        }
        head.push('\n');

        let body = mail.body.trim_end().to_string() + "\n";
        let lines = split_lines(&body);
        let total = lines.len() as u64;
        if let Some(off) = offset {
            if off >= total {
                return Err(ApiError::out_of_range(format!(
                    "offset {off} but the body has {total} lines"
                ))
                .with_hint(format!(
                    "Use an offset from 0 to {}.",
                    total.saturating_sub(1)
                )));
            }
        }
        let start = offset.unwrap_or(0) as usize;
        let end = limit
            .map(|l| (start as u64 + l).min(total) as usize)
            .unwrap_or(lines.len());
        let window = &lines[start..end];
        let char_count =
            (head.chars().count() + window.iter().map(|l| l.chars().count()).sum::<usize>()) as u64;

        let attachment = |name: &str, size: Option<u64>, note: Option<&str>| AttachmentInfo {
            name: name.to_string(),
            size,
            file_id: None,
            format: None,
            note: note.map(str::to_string),
            error: None,
        };
        let mut atts: Vec<AttachmentInfo> = mail
            .attachments
            .iter()
            .map(|a| attachment(&a.name, Some(a.bytes.len() as u64), None))
            .collect();
        atts.extend(
            mail.unextracted
                .iter()
                .map(|n| attachment(n, None, Some("embedded Outlook item; not extracted"))),
        );
        let report = Report {
            subject: mail.subject.clone(),
            from: mail.from.clone(),
            to: mail.to.clone(),
            cc: mail.cc.clone(),
            date: mail.date.clone(),
            total_lines: Some(total as u64),
            attachments: Some(atts),
            ..Default::default()
        };

        let mut ex = Extraction {
            char_count,
            report,
            attachments: mail.attachments,
            ..Default::default()
        };
        let mut text = head.clone();
        let k = fit_blocks(window, max_chars.saturating_sub(head.chars().count())).count;
        // Hidden elements of the body lines returned, at their lines in the text returned
        // (after the header lines).
        let head_lines = head.matches('\n').count();
        ex.findings = super::html::hidden_findings(
            mail.hidden
                .iter()
                .filter(|h| h.line > start && h.line <= start + k.max(1))
                .map(|h| (h, (head_lines + h.line - start) as u64)),
            mode,
        );
        ex.warnings.extend(super::html::left_out_warning(
            &mail.hidden,
            mode,
            "of the HTML body a mail reader does not show",
            "`hidden_text: \"keep\"` reads them",
        ));
        text.push_str(&window[..k].concat());
        if req.json() {
            let body = match &mail.blocks {
                Some(html) => html.shown(&window[..k], start + 1),
                None => crate::model::paragraphs(window[..k].iter().copied()),
            };
            ex.document = Some(mail_document(&ex.report, &listed, body));
        }
        if k < window.len() {
            let mut next = Next::default();
            next.offset = Some((start + k) as u64);
            if limit.is_some() {
                next.limit = Some((end - start - k) as u64);
            }
            if k == 0 {
                // The headers and the first line already pass the budget: show what fits
                // (the headers are in the envelope's own keys too), and say how large a
                // budget reads the selection whole.
                text.push_str(window[0]);
                let cut = crate::envelope::cut_within(&text, max_chars).len();
                text.truncate(cut);
                next.max_chars = Some(char_count as u64);
                ex.warnings.push("the headers and first body line pass max_chars; `next` reads the selection whole".into());
            }
            ex.next = Some(next);
            ex.truncated = true;
            ex.text = close_truncated(text, char_count);
        } else {
            ex.text = text;
        }
        Ok(ex)
    }
}

/// A message as typed blocks (`output: "json"`): its headers as fields, its attachments
/// as a list (part `attachments`), then the blocks of the body lines shown (an HTML body's
/// headings, lists and tables; a text body's paragraphs).
fn mail_document(
    report: &Report,
    listed: &[String],
    body: Vec<crate::model::Block>,
) -> crate::model::Document {
    use crate::model::{Block, Content};
    let mut blocks = Vec::new();
    for (k, v) in [
        ("Subject", &report.subject),
        ("From", &report.from),
        ("To", &report.to),
        ("Cc", &report.cc),
        ("Date", &report.date),
    ] {
        if let Some(v) = v {
            blocks.push(Block::new(Content::Field {
                name: k.to_string(),
                value: v.clone(),
            }));
        }
    }
    for a in listed {
        blocks.push(Block::in_part(
            Content::ListItem {
                level: 0,
                label: "•".into(),
                text: a.clone(),
            },
            Some("attachments"),
        ));
    }
    blocks.extend(body);
    crate::model::Document {
        units: vec![crate::model::UnitBlocks::new(
            crate::model::Unit::document(),
            blocks,
        )],
    }
}

#[cfg(test)]
mod mislabelled {
    use super::mislabelled_utf8;

    #[test]
    fn utf8_bytes_labelled_latin1_read_as_utf8() {
        // `I’m café` sent as UTF-8, decoded as Latin-1 by its label.
        let as_latin1: String = "I’m café".bytes().map(|b| b as char).collect();
        assert_eq!(mislabelled_utf8(&as_latin1, Some("ISO-8859-1")), "I’m café");
        assert_eq!(mislabelled_utf8(&as_latin1, None), "I’m café");
        // Decoded as Windows-1252 (`â€™`).
        let (cp1252, _, _) = encoding_rs::WINDOWS_1252.decode("I’m".as_bytes());
        assert_eq!(mislabelled_utf8(&cp1252, Some("windows-1252")), "I’m");
        // Real Latin-1 stays: its bytes are no UTF-8.
        assert_eq!(
            mislabelled_utf8("café über", Some("iso-8859-1")),
            "café über"
        );
        // Another label is trusted.
        assert_eq!(mislabelled_utf8(&as_latin1, Some("koi8-r")), as_latin1);
    }
}
