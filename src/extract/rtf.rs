//! Outlook's compressed RTF (PR_RTF_COMPRESSED, [MS-OXRTFCP]) and RTF to text, for
//! messages whose body exists only as RTF. Encapsulated HTML (`\fromhtml1`, what Outlook
//! writes for HTML mail) is rebuilt as HTML and made text like any HTML body; other RTF
//! gives its visible text.

use crate::error::{ApiError, ErrorCode};

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

/// What an RTF document says, as text: `\fromhtml` bodies are rebuilt as HTML and made
/// text; anything else gives its visible characters with paragraphs as lines.
pub fn to_text(rtf: &[u8]) -> String {
    let parsed = parse(rtf);
    if parsed.from_html {
        super::html::to_text(&parsed.html)
    } else {
        parsed.text
    }
}

struct Parsed {
    from_html: bool,
    /// Visible text (what RTF readers show).
    text: String,
    /// Encapsulated HTML: `\*\htmltag` contents plus text outside `\htmlrtf` runs.
    html: String,
}

#[derive(Clone, Copy)]
struct Group {
    /// A destination whose text is not shown (font table, pictures, `\*` groups…).
    skip: bool,
    /// Inside `\*\htmltag`: the text is HTML, shown in the HTML rebuild.
    htmltag: bool,
    /// Inside `\htmlrtf` … `\htmlrtf0`: RTF-only text, dropped from the HTML rebuild.
    htmlrtf: bool,
    /// `\ucN`: characters that follow a `\u` as its fallback.
    uc: usize,
}

fn parse(rtf: &[u8]) -> Parsed {
    const SKIP: &[&str] = &[
        "fonttbl",
        "colortbl",
        "stylesheet",
        "info",
        "pict",
        "object",
        "header",
        "footer",
        "headerl",
        "headerr",
        "headerf",
        "footerl",
        "footerr",
        "footerf",
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
    ];
    let mut out = Parsed {
        from_html: false,
        text: String::new(),
        html: String::new(),
    };
    let mut encoding = encoding_rs::WINDOWS_1252;
    let mut stack: Vec<Group> = Vec::new();
    let mut g = Group {
        skip: false,
        htmltag: false,
        htmlrtf: false,
        uc: 1,
    };
    // Bytes from `\'hh` escapes, decoded together (double-byte codepages).
    let mut pending: Vec<u8> = Vec::new();
    let mut skip_chars = 0usize; // fallback characters after \u
    let mut new_group = false; // the previous token was `{`
    let mut i = 0;

    fn put(out: &mut Parsed, g: &Group, s: &str) {
        if g.skip {
            return;
        }
        if g.htmltag {
            out.html.push_str(s);
            return;
        }
        out.text.push_str(s);
        if !g.htmlrtf {
            out.html.push_str(s);
        }
    }
    let flush = |pending: &mut Vec<u8>,
                 out: &mut Parsed,
                 g: &Group,
                 enc: &'static encoding_rs::Encoding| {
        if !pending.is_empty() {
            let s = enc.decode_without_bom_handling(pending).0.into_owned();
            put(out, g, &s);
            pending.clear();
        }
    };

    while i < rtf.len() {
        let b = rtf[i];
        match b {
            b'{' => {
                flush(&mut pending, &mut out, &g, encoding);
                stack.push(g);
                new_group = true;
                i += 1;
                continue;
            }
            b'}' => {
                flush(&mut pending, &mut out, &g, encoding);
                g = stack.pop().unwrap_or(g);
                i += 1;
            }
            b'\\' => {
                i += 1;
                let Some(&c) = rtf.get(i) else { break };
                if c.is_ascii_alphabetic() {
                    let start = i;
                    while i < rtf.len() && rtf[i].is_ascii_alphabetic() {
                        i += 1;
                    }
                    let word = std::str::from_utf8(&rtf[start..i]).unwrap_or("");
                    let nstart = i;
                    if i < rtf.len() && (rtf[i] == b'-' || rtf[i].is_ascii_digit()) {
                        i += 1;
                        while i < rtf.len() && rtf[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                    let param: Option<i64> = std::str::from_utf8(&rtf[nstart..i])
                        .ok()
                        .and_then(|p| p.parse().ok());
                    if i < rtf.len() && rtf[i] == b' ' {
                        i += 1; // the delimiter space belongs to the control word
                    }
                    flush(&mut pending, &mut out, &g, encoding);
                    if skip_chars > 0 && word != "u" {
                        // A control word counts as one fallback character.
                        skip_chars -= 1;
                        new_group = false;
                        continue;
                    }
                    match word {
                        "fromhtml" => out.from_html = true,
                        "ansicpg" => {
                            if let Some(e) = param.and_then(|p| codepage::to_encoding(p as u16)) {
                                encoding = e;
                            }
                        }
                        "htmltag" => g.htmltag = true,
                        "htmlrtf" => g.htmlrtf = param != Some(0),
                        "uc" => g.uc = param.unwrap_or(1).max(0) as usize,
                        "u" => {
                            let mut n = param.unwrap_or(0);
                            if n < 0 {
                                n += 65536;
                            }
                            let ch = char::from_u32(n as u32).unwrap_or('\u{FFFD}');
                            put(&mut out, &g, ch.encode_utf8(&mut [0; 4]));
                            skip_chars = g.uc;
                        }
                        "par" | "line" | "sect" | "page" => put(&mut out, &g, "\n"),
                        "row" => put(&mut out, &g, "\n"),
                        "tab" | "cell" => put(&mut out, &g, "\t"),
                        "emdash" => put(&mut out, &g, "—"),
                        "endash" => put(&mut out, &g, "–"),
                        "bullet" => put(&mut out, &g, "•"),
                        "lquote" => put(&mut out, &g, "‘"),
                        "rquote" => put(&mut out, &g, "’"),
                        "ldblquote" => put(&mut out, &g, "“"),
                        "rdblquote" => put(&mut out, &g, "”"),
                        "bin" => {
                            // Binary data of `param` bytes: never text.
                            i = i.saturating_add(param.unwrap_or(0).max(0) as usize);
                        }
                        w if new_group && SKIP.contains(&w) => g.skip = true,
                        _ => {}
                    }
                    new_group = false;
                    continue;
                }
                match c {
                    b'\'' => {
                        let hex = rtf
                            .get(i + 1..i + 3)
                            .and_then(|h| std::str::from_utf8(h).ok());
                        i += 3;
                        if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                            if skip_chars > 0 {
                                skip_chars -= 1;
                            } else {
                                pending.push(v);
                            }
                        }
                        new_group = false;
                        continue;
                    }
                    b'*' => {
                        i += 1;
                        // `{\*\htmltag…}` is encapsulated HTML; other `\*` groups are unknown
                        // destinations a reader ignores.
                        let is_htmltag = rtf[i..].starts_with(b"\\htmltag");
                        if !is_htmltag {
                            g.skip = true;
                        }
                        continue;
                    }
                    b'~' => put(&mut out, &g, "\u{a0}"),
                    b'-' => {}
                    b'_' => put(&mut out, &g, "-"),
                    b'\n' | b'\r' => put(&mut out, &g, "\n"),
                    other => {
                        flush(&mut pending, &mut out, &g, encoding);
                        put(&mut out, &g, (other as char).encode_utf8(&mut [0; 4]));
                    }
                }
                i += 1;
            }
            b'\r' | b'\n' => i += 1,
            _ => {
                flush(&mut pending, &mut out, &g, encoding);
                // A run of plain bytes (in the document codepage).
                let start = i;
                while i < rtf.len() && !matches!(rtf[i], b'{' | b'}' | b'\\' | b'\r' | b'\n') {
                    i += 1;
                }
                let mut run = &rtf[start..i];
                while skip_chars > 0 && !run.is_empty() {
                    run = &run[1..];
                    skip_chars -= 1;
                }
                if !run.is_empty() {
                    let s = encoding.decode_without_bom_handling(run).0;
                    put(&mut out, &g, &s);
                }
            }
        }
        new_group = false;
    }
    flush(&mut pending, &mut out, &g, encoding);
    out
}

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
        assert_eq!(to_text(&raw), "hello world");
        assert!(decompress(b"short", 1 << 26).is_err());
    }

    #[test]
    fn rtf_text_and_encapsulated_html() {
        let rtf = br"{\rtf1\ansi\ansicpg1251{\fonttbl{\f0 Arial;}}\pard \'cf\'f0\'e8\'e2\'e5\'f2\par caf\u233?\par}";
        assert_eq!(to_text(rtf), "Привет\ncafé\n");
        let html = br"{\rtf1\ansi\fromhtml1 {\*\htmltag19 <html>}{\*\htmltag64 <p>}\htmlrtf {\b\htmlrtf0 Hello }\htmlrtf0 world{\*\htmltag72 </p>}\htmlrtf \par only in RTF\htmlrtf0}";
        let t = to_text(html);
        assert!(t.contains("Hello world"), "{t:?}");
        assert!(!t.contains("only in RTF"), "{t:?}");
    }
}
