//! Text decoding, decided on the whole file (SPEC §4): BOM, BOM-less UTF-32 and UTF-16, UTF-8,
//! declared HTML/XML charsets, EBCDIC, then a statistical choice among legacy encodings.
//!
//! encoding_rs decodes; chardetng (Firefox's detector) makes the statistical choice; a
//! Cyrillic tie-breaker and EBCDIC tables cover what chardetng does not.

use std::borrow::Cow;

use encoding_rs::Encoding;

use super::cjk;

/// How a file's bytes become text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    Rs(&'static Encoding),
    Ebcdic(Ebcdic),
    /// UTF-32 (encoding_rs has none: it implements the WHATWG encodings); `be` for
    /// big-endian.
    Utf32 {
        be: bool,
    },
    /// ISO-2022-KR (RFC 1557; WHATWG maps it to "replacement", so encoding_rs cannot):
    /// ASCII, with KS X 1001 between SO and SI. Its `ESC $ ) C` header is skipped as a BOM.
    Iso2022Kr,
    /// IBM855, DOS's Cyrillic with box drawing (not a WHATWG encoding, so not encoding_rs's,
    /// nor a chardetng guess): ASCII, then `CP855_HIGH` for 0x80–0xFF.
    Ibm855,
    /// Johab, Korean (KS X 1001:1992 annex 3; `cjk`).
    Johab,
    /// EUC-TW, Chinese in CNS 11643 (`cjk`; planes 1 and 2).
    EucTw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ebcdic {
    Cp500,
    Cp037,
}

/// How the encoding was chosen, reported as `encoding_confidence`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confidence {
    /// A byte-order mark said so.
    Bom,
    /// The bytes are valid in an encoding that has no rival (UTF-8, UTF-16 by its NUL pattern, ASCII).
    Certain,
    /// An HTML/XML declaration said so and the bytes agree.
    Declared,
    /// The statistical detector is confident.
    High,
    /// The statistical detector's best guess.
    Low,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Bom => "bom",
            Self::Certain => "certain",
            Self::Declared => "declared",
            Self::High => "high",
            Self::Low => "low",
        }
    }
}

/// The result of detection: which encoding, how sure, and how many BOM bytes to skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    pub encoding: TextEncoding,
    pub confidence: Confidence,
    pub bom_len: usize,
}

impl TextEncoding {
    pub fn name(self) -> &'static str {
        match self {
            Self::Rs(e) => e.name(),
            Self::Ebcdic(Ebcdic::Cp500) => "IBM500",
            Self::Ebcdic(Ebcdic::Cp037) => "IBM037",
            Self::Utf32 { be: false } => "UTF-32LE",
            Self::Utf32 { be: true } => "UTF-32BE",
            Self::Iso2022Kr => "ISO-2022-KR",
            Self::Ibm855 => "IBM855",
            Self::Johab => "Johab",
            Self::EucTw => "EUC-TW",
        }
    }

    /// Decode bytes (no BOM) to text; malformed sequences become U+FFFD.
    pub fn decode<'a>(self, bytes: &'a [u8]) -> Cow<'a, str> {
        match self {
            Self::Rs(e) => e.decode_without_bom_handling(bytes).0,
            Self::Ebcdic(t) => {
                let table = t.table();
                Cow::Owned(bytes.iter().map(|b| table[*b as usize]).collect())
            }
            Self::Utf32 { be } => Cow::Owned(
                utf32_units(bytes, be)
                    .map(|u| char::from_u32(u).unwrap_or('\u{FFFD}'))
                    .chain((bytes.len() % 4 != 0).then_some('\u{FFFD}'))
                    .collect(),
            ),
            Self::Iso2022Kr => Cow::Owned(iso2022kr(bytes, false).unwrap_or_default()),
            Self::Johab => Cow::Owned(cjk::decode_johab(bytes, false).unwrap_or_default()),
            Self::EucTw => Cow::Owned(cjk::decode_euc_tw(bytes, false).unwrap_or_default()),
            Self::Ibm855 => Cow::Owned(
                bytes
                    .iter()
                    .map(|&b| match b {
                        0..=0x7F => b as char,
                        _ => CP855_HIGH[(b - 0x80) as usize],
                    })
                    .collect(),
            ),
        }
    }

    /// Decode strictly: `None` when the bytes are malformed in this encoding.
    pub fn decode_strict(self, bytes: &[u8]) -> Option<Cow<'_, str>> {
        match self {
            Self::Rs(e) => e.decode_without_bom_handling_and_without_replacement(bytes),
            // Every byte has a character.
            Self::Ebcdic(_) | Self::Ibm855 => Some(self.decode(bytes)),
            Self::Utf32 { be } => {
                if bytes.len() % 4 != 0 {
                    return None;
                }
                utf32_units(bytes, be)
                    .map(char::from_u32)
                    .collect::<Option<String>>()
                    .map(Cow::Owned)
            }
            Self::Iso2022Kr => iso2022kr(bytes, true).map(Cow::Owned),
            Self::Johab => cjk::decode_johab(bytes, true).map(Cow::Owned),
            Self::EucTw => cjk::decode_euc_tw(bytes, true).map(Cow::Owned),
        }
    }

    /// How many bytes `text` takes in this encoding (for byte cursors).
    pub fn encoded_len(self, text: &str) -> usize {
        match self {
            Self::Rs(e) if e == encoding_rs::UTF_8 => text.len(),
            Self::Rs(e) if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE => {
                text.chars().map(|c| c.len_utf16() * 2).sum()
            }
            Self::Rs(e) if e.is_single_byte() => text.chars().count(),
            Self::Rs(e) => e.encode(text).0.len(),
            Self::Ebcdic(_) | Self::Ibm855 => text.chars().count(),
            Self::Utf32 { .. } => text.chars().count() * 4,
            Self::Johab => text.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum(),
            Self::EucTw => text.chars().map(cjk::euc_tw_len).sum(),
            Self::Iso2022Kr => {
                // From ASCII state (a line starts in it): a shift at each change of set.
                let (mut n, mut korean) = (0, false);
                for c in text.chars() {
                    let k = !c.is_ascii();
                    n += usize::from(k != korean) + if k { 2 } else { 1 };
                    korean = k;
                }
                n + usize::from(korean)
            }
        }
    }

    /// Whether bytes mean what the escape sequences or shifts before them say (ISO-2022):
    /// a window can start only where the state is known, at a line start (RFC 1468 and
    /// RFC 1557 return to ASCII before each line break).
    pub fn stateful(self) -> bool {
        matches!(self, Self::Iso2022Kr) || self == Self::Rs(encoding_rs::ISO_2022_JP)
    }

    /// For a stateful encoding: walk `bytes[from..to]` from `from`, a line start (ASCII
    /// in force), until `to` or until `chars` characters have been decoded. Returns the
    /// position reached, the bytes that restore the state in force there (the last escape
    /// sequence, or SO), and whether the position falls inside a two-byte character.
    pub fn walk_state(
        self,
        bytes: &[u8],
        from: usize,
        to: usize,
        chars: Option<usize>,
    ) -> (usize, Vec<u8>, bool) {
        let kr = self == Self::Iso2022Kr;
        let (mut restore, mut two, mut inside, mut n) = (Vec::new(), false, false, 0usize);
        let mut i = from;
        let to = to.min(bytes.len());
        while i < to {
            if chars.is_some_and(|c| n >= c) && !inside {
                break;
            }
            let b = bytes[i];
            match b {
                0x1B if kr && !bytes[i..].starts_with(b"\x1b$)C") => {
                    // A stray ESC: a character to the decoder.
                    n += 1;
                    inside = false;
                }
                0x1B => {
                    let len = iso2022_escape_len(&bytes[i..]);
                    if !kr {
                        let seq = &bytes[i..(i + len).min(bytes.len())];
                        two = seq.get(1) == Some(&b'$');
                        restore = if seq == b"\x1b(B" {
                            Vec::new()
                        } else {
                            seq.to_vec()
                        };
                    }
                    inside = false;
                    i += len;
                    continue;
                }
                0x0E if kr => {
                    (two, inside, restore) = (true, false, vec![0x0E]);
                }
                0x0F if kr => {
                    (two, inside) = (false, false);
                    restore.clear();
                }
                b'\n' | b'\r' => {
                    // Lines start in ASCII (RFC 1468, RFC 1557; the KR decoder resets on both).
                    if b == b'\n' || kr {
                        two = false;
                        restore.clear();
                    }
                    inside = false;
                    n += 1;
                }
                0x21..=0x7E if two => {
                    if inside {
                        n += 1;
                    }
                    inside = !inside;
                }
                _ => {
                    n += 1;
                    inside = false;
                }
            }
            i += 1;
        }
        (i, restore, inside)
    }

    /// For a multi-byte encoding whose trail bytes look like lead bytes or ASCII (GBK,
    /// GB18030, Big5, Shift_JIS, EUC-JP, EUC-KR, Johab, EUC-TW): how many bytes the
    /// character starting at `bytes[0]` takes (1 for a byte that starts none). A window
    /// cut inside such a character may decode cleanly from the wrong byte, so boundaries
    /// are found by walking whole characters from a line start. `None` for the others:
    /// UTF-8 finds its own boundaries, single bytes and UTF-16/32 units are boundaries,
    /// and ISO-2022 walks its own state.
    pub fn char_len(self, bytes: &[u8]) -> Option<usize> {
        use encoding_rs::*;
        let b = *bytes.first()?;
        let next = bytes.get(1).copied().unwrap_or(0);
        let len = match self {
            Self::Rs(e) if e == GBK || e == GB18030 => match b {
                0x81..=0xFE
                    if (0x30..=0x39).contains(&next)
                        && bytes.get(2).is_some_and(|x| (0x81..=0xFE).contains(x))
                        && bytes.get(3).is_some_and(|x| (0x30..=0x39).contains(x)) =>
                {
                    4
                }
                0x81..=0xFE => 2,
                _ => 1,
            },
            Self::Rs(e) if e == BIG5 || e == EUC_KR => 1 + usize::from(b >= 0x81 && b != 0xFF),
            Self::Rs(e) if e == SHIFT_JIS => {
                1 + usize::from(matches!(b, 0x81..=0x9F | 0xE0..=0xFC))
            }
            Self::Rs(e) if e == EUC_JP => match b {
                0x8F if next >= 0xA1 && bytes.get(2).is_some_and(|x| *x >= 0xA1) => 3,
                0x8F => 1,
                0x8E | 0xA1..=0xFE => 2,
                _ => 1,
            },
            Self::Johab => cjk::johab_len(bytes),
            Self::EucTw => cjk::euc_tw_char_len(bytes),
            _ => return None,
        };
        Some(len)
    }

    /// The bytes the first `chars` characters decoded from `bytes` take, for the encodings
    /// whose text does not re-encode to the same bytes (Johab, EUC-TW: see
    /// `cjk::bytes_of_chars`); `None` for the others (`encoded_len` is exact for them).
    pub fn bytes_of_chars(self, bytes: &[u8], chars: usize) -> Option<usize> {
        match self {
            Self::Johab => Some(cjk::bytes_of_chars(bytes, chars, cjk::johab_len)),
            Self::EucTw => Some(cjk::bytes_of_chars(bytes, chars, cjk::euc_tw_char_len)),
            _ => None,
        }
    }

    /// Code-unit size: byte positions must be multiples of it (after the BOM).
    pub fn unit(self) -> usize {
        match self {
            Self::Rs(e) if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE => 2,
            Self::Utf32 { .. } => 4,
            _ => 1,
        }
    }
}

impl Ebcdic {
    fn table(self) -> &'static [char; 256] {
        match self {
            Self::Cp500 => &CP500,
            Self::Cp037 => &CP037,
        }
    }
}

/// The 32-bit code units of UTF-32 bytes (a trailing partial unit is left out).
pub fn utf32_units(bytes: &[u8], be: bool) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(move |c| {
        let b = [c[0], c[1], c[2], c[3]];
        if be {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    })
}

/// UTF-32 without a BOM (`Some(true)` big-endian), when the NUL pattern leaves no doubt:
/// every 4-byte unit of the head is a Unicode scalar value (so two of every four bytes are
/// zero, in the same places), and what they spell is text, not control codes — an array
/// of small 32-bit integers is valid UTF-32 too. UTF-16 text never is: its units pair an
/// ASCII letter with the next one (`A\0B\0` is U+420041, past Unicode).
pub fn utf32_kind(bytes: &[u8]) -> Option<bool> {
    let sample = &bytes[..bytes.len().min(64 * 1024) & !3];
    if sample.len() < 8 || bytes.len() % 4 != 0 {
        return None;
    }
    [false, true].into_iter().find(|&be| {
        let (mut chars, mut text) = (0usize, 0usize);
        for u in utf32_units(sample, be) {
            let Some(c) = char::from_u32(u) else {
                return false;
            };
            chars += 1;
            text += usize::from(!c.is_control() || matches!(c, '\n' | '\r' | '\t'));
        }
        text * 100 >= chars * 95
    })
}

/// UTF-16 without a BOM, recognised by where the NUL bytes fall: ASCII-range characters
/// have a zero high byte, so LE text has NULs at odd offsets and BE at even ones.
pub fn utf16_kind(bytes: &[u8]) -> Option<&'static Encoding> {
    let sample = &bytes[..bytes.len().min(64 * 1024) & !1];
    if sample.len() < 4 {
        return None;
    }
    let pairs = sample.len() / 2;
    let (mut even, mut odd) = (0usize, 0usize);
    for pair in sample.chunks_exact(2) {
        even += (pair[0] == 0) as usize;
        odd += (pair[1] == 0) as usize;
    }
    let enc = if odd * 10 >= pairs && even * 20 <= odd {
        encoding_rs::UTF_16LE
    } else if even * 10 >= pairs && odd * 20 <= even {
        encoding_rs::UTF_16BE
    } else {
        return None;
    };
    // The whole of it must be well-formed UTF-16 (no lone surrogates).
    let whole = &bytes[..bytes.len() & !1];
    enc.decode_without_bom_handling_and_without_replacement(whole)
        .map(|_| enc)
}

/// Misread Cyrillic comes out as words made only of accented Latin letters, where real
/// Western text has an accent here and there among ASCII letters.
fn mostly_non_ascii_letters(bytes: &[u8], enc: &'static Encoding) -> bool {
    let (text, _, _) = enc.decode(&bytes[..bytes.len().min(256 * 1024)]);
    let (mut ascii, mut other) = (0usize, 0usize);
    // Words with a letter beyond ASCII: all of them beyond it (`pure`, three letters or
    // more), or mixed with ASCII letters. Latin-script languages mix (`été`, `für`, `żółw`);
    // another script read through a Latin code page makes whole words of accented letters,
    // however much ASCII markup stands around them (an RSS feed, an HTML page).
    let (mut pure, mut mixed) = (0usize, 0usize);
    let (mut word_ascii, mut word_other) = (0usize, 0usize);
    let mut end_word = |a: &mut usize, o: &mut usize| {
        if *o > 0 {
            if *a == 0 && *o >= 3 {
                pure += 1;
            } else if *a > 0 {
                mixed += 1;
            }
        }
        (*a, *o) = (0, 0);
    };
    for c in text.chars() {
        if !c.is_alphabetic() {
            end_word(&mut word_ascii, &mut word_other);
            continue;
        }
        if c.is_ascii() {
            ascii += 1;
            word_ascii += 1;
        } else {
            other += 1;
            word_other += 1;
        }
    }
    end_word(&mut word_ascii, &mut word_other);
    other > 20 && (other > ascii || (pure >= 10 && pure > 2 * mixed))
}

/// The length of the ISO-2022 escape sequence at the start of `seq`: `ESC $ ( D` and
/// KR's `ESC $ ) C` take four bytes, the others three.
pub fn iso2022_escape_len(seq: &[u8]) -> usize {
    if seq.starts_with(b"\x1b$(") || seq.starts_with(b"\x1b$)") {
        4
    } else {
        3
    }
}

/// ISO-2022-KR's designation, `ESC $ ) C`, which RFC 1557 puts once at the start of the
/// text (before the first line that uses Korean): anywhere in the first KiB.
pub fn iso2022kr_header(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(1024)]
        .windows(4)
        .any(|w| w == b"\x1b$)C")
}

/// Decode ISO-2022-KR: ASCII, and KS X 1001 byte pairs (EUC-KR's, less their high bits)
/// between SO and SI; a line break returns to ASCII. `strict`: `None` on a byte the
/// encoding has no place for (else U+FFFD).
fn iso2022kr(bytes: &[u8], strict: bool) -> Option<String> {
    let mut out = String::with_capacity(bytes.len());
    let mut korean = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if bytes[i..].starts_with(b"\x1b$)C") {
            i += 4;
            continue;
        }
        match b {
            0x0E => korean = true,
            0x0F => korean = false,
            b'\n' | b'\r' => {
                korean = false;
                out.push(b as char);
            }
            0x21..=0x7E if korean => {
                let pair = bytes.get(i + 1).filter(|t| (0x21..=0x7E).contains(*t));
                let decoded = pair.and_then(|&t| {
                    encoding_rs::EUC_KR
                        .decode_without_bom_handling_and_without_replacement(&[b | 0x80, t | 0x80])
                        .map(|s| s.into_owned())
                });
                match decoded {
                    Some(s) => {
                        out.push_str(&s);
                        i += 2;
                        continue;
                    }
                    None if strict => return None,
                    None => out.push('\u{FFFD}'),
                }
            }
            0x80.. if strict => return None,
            0x80.. => out.push('\u{FFFD}'),
            _ => out.push(b as char),
        }
        i += 1;
    }
    Some(out)
}

/// ISO-2022-JP or ISO-2022-KR: 7-bit bytes that switch character sets with escape
/// sequences (they pass the UTF-8 check as ASCII), decoded cleanly in the one they name.
fn iso2022(bytes: &[u8]) -> Option<Detected> {
    if !bytes.is_ascii() || !bytes.contains(&0x1B) {
        return None;
    }
    let has = |seq: &[u8]| bytes.windows(seq.len()).any(|w| w == seq);
    if iso2022kr_header(bytes) && bytes.contains(&0x0E) {
        let bom_len = if bytes.starts_with(b"\x1b$)C") { 4 } else { 0 };
        return iso2022kr(&bytes[bom_len..], true).map(|_| Detected {
            encoding: TextEncoding::Iso2022Kr,
            confidence: Confidence::Certain,
            bom_len,
        });
    }
    let jp = encoding_rs::ISO_2022_JP;
    if (has(b"\x1b$B") || has(b"\x1b$@") || has(b"\x1b(J") || has(b"\x1b(I"))
        && jp
            .decode_without_bom_handling_and_without_replacement(bytes)
            .is_some()
    {
        return Some(Detected {
            encoding: TextEncoding::Rs(jp),
            confidence: Confidence::Certain,
            bom_len: 0,
        });
    }
    None
}

/// Decide the encoding of a whole file. `markup` says whether to honour HTML/XML declarations.
pub fn detect(bytes: &[u8], markup: bool) -> Detected {
    detect_inner(bytes, markup, false).0
}

/// Files up to this size keep the text detection decoded (`detect_decoded`).
const KEEP_MAX: usize = 32 * 1024 * 1024;

/// `detect`, and the whole file's text when detection decoded all of it anyway (a
/// multi-byte legacy guess is confirmed by a strict decode of every byte): a read that
/// shows the whole file takes it instead of decoding the bytes a second time. Up to
/// 32 MiB; `None` otherwise (and for every other kind of file).
pub fn detect_decoded(bytes: &[u8], markup: bool) -> (Detected, Option<String>) {
    detect_inner(bytes, markup, bytes.len() <= KEEP_MAX)
}

/// `detect`, keeping a legacy guess's strict decode as the text when `keep` (only a
/// multi-byte guess has one; no BOM comes before it).
fn detect_inner(bytes: &[u8], markup: bool, keep: bool) -> (Detected, Option<String>) {
    let det = |encoding, confidence, bom_len| Detected {
        encoding,
        confidence,
        bom_len,
    };
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return (
            det(TextEncoding::Rs(encoding_rs::UTF_8), Confidence::Bom, 3),
            None,
        );
    }
    // Before UTF-16's: UTF-32LE's BOM starts with UTF-16LE's.
    if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) {
        return (
            det(TextEncoding::Utf32 { be: false }, Confidence::Bom, 4),
            None,
        );
    }
    if bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return (
            det(TextEncoding::Utf32 { be: true }, Confidence::Bom, 4),
            None,
        );
    }
    if bytes.starts_with(&[0xFF, 0xFE]) {
        return (
            det(TextEncoding::Rs(encoding_rs::UTF_16LE), Confidence::Bom, 2),
            None,
        );
    }
    if bytes.starts_with(&[0xFE, 0xFF]) {
        return (
            det(TextEncoding::Rs(encoding_rs::UTF_16BE), Confidence::Bom, 2),
            None,
        );
    }
    if let Some(be) = utf32_kind(bytes) {
        return (
            det(TextEncoding::Utf32 { be }, Confidence::Certain, 0),
            None,
        );
    }
    if let Some(enc) = utf16_kind(bytes) {
        return (det(TextEncoding::Rs(enc), Confidence::Certain, 0), None);
    }
    if let Some(d) = iso2022(bytes) {
        return (d, None);
    }
    if std::str::from_utf8(bytes).is_ok() {
        return (
            det(TextEncoding::Rs(encoding_rs::UTF_8), Confidence::Certain, 0),
            None,
        );
    }
    if markup || looks_like_markup(bytes) {
        if let Some(te) = declared_charset(bytes) {
            // Honoured unless the bytes contradict it.
            if te != TextEncoding::Rs(encoding_rs::UTF_8) && te.decode_strict(bytes).is_some() {
                return (det(te, Confidence::Declared, 0), None);
            }
        }
    }
    if let Some(e) = ebcdic(bytes) {
        return (det(TextEncoding::Ebcdic(e), Confidence::High, 0), None);
    }
    // Before chardetng, which has neither (it reads them as windows-125x or GBK): each is
    // malformed in other encodings' text within a few characters, so this costs little.
    if cjk::is_johab(bytes) {
        return (det(TextEncoding::Johab, Confidence::High, 0), None);
    }
    if cjk::is_euc_tw(bytes) {
        return (det(TextEncoding::EucTw, Confidence::High, 0), None);
    }
    let (guess, sure, text) = guess_legacy(bytes, keep);
    let refined = refine_currency(
        bytes,
        refine_mac_roman(bytes, refine_cyrillic(bytes, guess)),
    );
    // The text is the final encoding's: the refinements never change a multi-byte guess,
    // and should one ever, its text is dropped.
    let text = text.filter(|_| refined == TextEncoding::Rs(guess));
    (
        det(
            refined,
            if sure {
                Confidence::High
            } else {
                Confidence::Low
            },
            0,
        ),
        text,
    )
}

/// Files up to this size are given to chardetng whole.
const WHOLE_FEED: usize = 8 * 1024;

/// chardetng's guess for legacy-encoded bytes, decided on the whole file.
///
/// chardetng runs every candidate decoder over every byte it is fed (about 1,600
/// instructions a byte: 6–10 MB/s), so a file past 8 KiB is not fed whole. It is fed its
/// head (1/64 of it, 1–32 KiB), 16 windows (1/1024 of it each, 64 B–2 KiB) spread through
/// it, and a window around the first occurrence of every
/// byte value above 0x7F that those did not contain — every kind of non-ASCII evidence the
/// file holds, with its context. Windows are cut at line ends, so no multi-byte character is
/// split. A multi-byte guess (GBK, Big5, Shift_JIS, EUC-*) must then decode the *whole* file
/// without an error, or the whole file is fed after all: the fast path only stands when the
/// complete bytes agree with it.
///
/// `keep`: a multi-byte guess's strict decode is kept and returned as the file's text (else
/// it is decoded in pieces into a small buffer, and `None`).
fn guess_legacy(bytes: &[u8], keep: bool) -> (&'static Encoding, bool, Option<String>) {
    let whole = |bytes: &[u8]| {
        let mut d = chardetng::EncodingDetector::new();
        d.feed(bytes, true);
        let (guess, sure) = d.guess_assess(None, false);
        (guess, sure, None)
    };
    if bytes.len() <= WHOLE_FEED {
        return whole(bytes);
    }
    let n = bytes.len();
    // The samples grow with the file, about 1/32 of it, up to a 32 KiB head and 2 KiB
    // windows (a 50 KB file is judged on ~2.5 KB, a 5 MB one on ~70 KB): what chardetng is fed
    // costs ~0.17 µs a byte, the rest of detection and decoding ~1 ns. Every byte value
    // still comes with its context, and a multi-byte guess must still hold for every byte.
    let head = (n / 64).clamp(1024, 32 * 1024);
    let window = (n / 1024).clamp(64, 2 * 1024);
    let edge = (window * 2).min(EDGE);
    // Whole lines (or words, when a line is long) around each point of interest.
    let lines = |a: usize, b: usize| line_start(bytes, a, edge)..line_end(bytes, b.min(n), edge);
    let mut ranges = vec![lines(0, head)];
    for k in 1..=16 {
        let at = n / 17 * k;
        ranges.push(lines(at, at + window));
    }
    // Every non-ASCII byte value those missed, with its context.
    let mut seen = [false; 256];
    for r in &ranges {
        for &x in &bytes[r.clone()] {
            seen[x as usize] = true;
        }
    }
    let mut first = [usize::MAX; 256];
    let mut missing = (0x80..256).filter(|&x| !seen[x]).count();
    for (i, &x) in bytes.iter().enumerate() {
        if missing == 0 {
            break;
        }
        if !seen[x as usize] && x >= 0x80 {
            seen[x as usize] = true;
            first[x as usize] = i;
            missing -= 1;
        }
    }
    for x in 0x80..256 {
        if first[x] != usize::MAX {
            let at = first[x];
            ranges.push(lines(at.saturating_sub(window / 2), at + window / 2));
        }
    }
    // Fed in file order, overlaps once.
    ranges.sort_by_key(|r| r.start);
    let mut d = chardetng::EncodingDetector::new();
    let mut fed = 0usize;
    for r in ranges {
        let a = r.start.max(fed);
        if a < r.end {
            d.feed(&bytes[a..r.end], false);
            fed = r.end;
        }
    }
    d.feed(&[], true);
    let (guess, sure) = d.guess_assess(None, false);
    let multi_byte = [
        encoding_rs::GBK,
        encoding_rs::GB18030,
        encoding_rs::BIG5,
        encoding_rs::SHIFT_JIS,
        encoding_rs::EUC_JP,
        encoding_rs::EUC_KR,
    ];
    if !multi_byte.contains(&guess) {
        return (guess, sure, None);
    }
    if keep {
        return match guess.decode_without_bom_handling_and_without_replacement(bytes) {
            Some(text) => (guess, sure, Some(text.into_owned())),
            None => whole(bytes),
        };
    }
    if !decodes_cleanly(guess, bytes) {
        return whole(bytes);
    }
    (guess, sure, None)
}

/// How far a window's edge may move to reach a clean place to cut.
const EDGE: usize = 4096;

/// Whether a character starts right after `b`: after a byte below 0x30 (controls, space,
/// punctuation) it always does, in every encoding chardetng weighs (trail bytes of GBK,
/// Big5, Shift_JIS and EUC are 0x40 and up; GB18030's four-byte digits are 0x30–0x39).
fn cut_after(b: u8) -> bool {
    b < 0x30
}

/// A clean place to start a window at or before `i`: after a line end within `edge` bytes,
/// else after any byte `cut_after` allows; failing both, the same within `EDGE` (a long run
/// of multi-byte text is not cut inside a character); else `i` itself.
fn line_start(bytes: &[u8], i: usize, edge: usize) -> usize {
    let i = i.min(bytes.len());
    let within = |edge: usize| {
        let lo = i.saturating_sub(edge);
        let near = &bytes[lo..i];
        near.iter()
            .rposition(|&b| b == b'\n')
            .or_else(|| near.iter().rposition(|&b| cut_after(b)))
            .map(|p| lo + p + 1)
            .or((lo == 0).then_some(0))
    };
    within(edge)
        .or_else(|| (edge < EDGE).then(|| within(EDGE)).flatten())
        .unwrap_or(i)
}

/// A clean place to end a window at or after `i` (see `line_start`).
fn line_end(bytes: &[u8], i: usize, edge: usize) -> usize {
    let i = i.min(bytes.len());
    let within = |edge: usize| {
        let hi = (i + edge).min(bytes.len());
        let near = &bytes[i..hi];
        near.iter()
            .position(|&b| b == b'\n')
            .or_else(|| near.iter().position(|&b| cut_after(b)))
            .map(|p| i + p + 1)
            .or((hi == bytes.len()).then_some(hi))
    };
    within(edge)
        .or_else(|| (edge < EDGE).then(|| within(EDGE)).flatten())
        .unwrap_or(i)
}

/// Whether the whole of `bytes` decodes in `enc` without a malformed sequence, decoded in
/// pieces into one small buffer (nothing the size of the file is allocated).
fn decodes_cleanly(enc: &'static Encoding, bytes: &[u8]) -> bool {
    use encoding_rs::DecoderResult;
    let mut dec = enc.new_decoder_without_bom_handling();
    let mut out = vec![0u8; 64 * 1024];
    let mut rest = bytes;
    loop {
        let (result, read, _) = dec.decode_to_utf8_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match result {
            DecoderResult::InputEmpty => return true,
            DecoderResult::OutputFull => continue,
            DecoderResult::Malformed(_, _) => return false,
        }
    }
}

fn looks_like_markup(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1024)];
    let trimmed = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &head[i..]);
    trimmed.is_some_and(|t| t.starts_with(b"<"))
}

/// The charset an HTML `<meta>` or an XML declaration names, anywhere in the file.
fn declared_charset(bytes: &[u8]) -> Option<TextEncoding> {
    use std::sync::OnceLock;
    static RE: OnceLock<regex::bytes::Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        regex::bytes::Regex::new(
            r#"(?i-u)<\?xml[^>]*?encoding\s*=\s*["']?([A-Za-z0-9._:-]+)|<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)"#,
        )
        .expect("static regex")
    });
    // Only the markup before the body matters; cap the scan so a huge file stays cheap.
    let scan = &bytes[..bytes.len().min(4 * 1024 * 1024)];
    for caps in re.captures_iter(scan) {
        let label = caps.get(1).or_else(|| caps.get(2))?.as_bytes();
        // IBM855, Johab and EUC-TW are no WHATWG labels (encoding_rs knows none of their names).
        let named = |names: &[&[u8]]| names.iter().any(|l| label.eq_ignore_ascii_case(l));
        if named(&[b"ibm855", b"cp855", b"855", b"csibm855"]) {
            return Some(TextEncoding::Ibm855);
        }
        if named(&[b"johab", b"cp1361", b"ms1361", b"x-johab"]) {
            return Some(TextEncoding::Johab);
        }
        if named(&[b"euc-tw", b"euctw", b"x-euc-tw", b"cns11643"]) {
            return Some(TextEncoding::EucTw);
        }
        if let Some(enc) = Encoding::for_label(label) {
            // A UTF-16 declaration in bytes that are not UTF-16 is a lie by construction.
            if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                continue;
            }
            return Some(TextEncoding::Rs(enc));
        }
    }
    None
}

/// EBCDIC text: spaces are 0x40, letters and digits live above 0x80, lines end in 0x25
/// or 0x15, so ASCII letters are rare and the EBCDIC "text bytes" are nearly everything.
fn ebcdic(bytes: &[u8]) -> Option<Ebcdic> {
    if bytes.len() < 16 {
        return None;
    }
    let n = bytes.len();
    // One pass, three counts (from a table: this runs on every legacy-encoded file).
    const TEXTY: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0usize;
        while b < 256 {
            t[b] = matches!(b as u8, 0x81..=0x89 | 0x91..=0x99 | 0xA2..=0xA9 | 0xC1..=0xC9 | 0xD1..=0xD9 | 0xE2..=0xE9
                | 0xF0..=0xF9 | 0x40 | 0x4B | 0x6B | 0x7D | 0x4D | 0x5D | 0x60 | 0x61 | 0x7A | 0x5E
                | 0x25 | 0x15 | 0x0D | 0x05);
            b += 1;
        }
        t
    };
    let (mut spaces, mut ascii_letters, mut texty) = (0usize, 0usize, 0usize);
    const PIECE: usize = 4 * 1024;
    for (i, chunk) in bytes.chunks(PIECE).enumerate() {
        for &b in chunk {
            spaces += (b == 0x40) as usize;
            ascii_letters += b.is_ascii_alphabetic() as usize;
            texty += TEXTY[b as usize] as usize;
        }
        // The counts only grow: once too many bytes are not EBCDIC text, no rest can
        // make up for it (most files are ruled out in their first pieces).
        let read = (i * PIECE + chunk.len()).min(n);
        if (read - texty) * 10 > n || ascii_letters * 5 > n {
            return None;
        }
    }
    if spaces * 20 < n || texty * 10 < n * 9 {
        return None;
    }
    // cp037 and cp500 differ only in a few punctuation bytes; pick the one whose brackets pair.
    let text500: String = bytes.iter().map(|b| CP500[*b as usize]).collect();
    let text037: String = bytes.iter().map(|b| CP037[*b as usize]).collect();
    let balance = |t: &str| {
        let o = t.matches(['[', '(']).count() as i64;
        let c = t.matches([']', ')']).count() as i64;
        (o - c).abs()
    };
    Some(if balance(&text037) < balance(&text500) {
        Ebcdic::Cp037
    } else {
        Ebcdic::Cp500
    })
}

/// chardetng mixes up the Cyrillic single-byte encodings (and has no Mac Cyrillic, nor
/// IBM855). They share lowercase letters in places but not capitals, so score each
/// candidate by how word-like its Cyrillic comes out: capitals inside words and stray
/// symbols lose.
fn refine_cyrillic(bytes: &[u8], guess: &'static Encoding) -> TextEncoding {
    use encoding_rs::*;
    // Order matters on ties: KOI8-R before KOI8-U (they differ only in Ukrainian letters);
    // IBM855 last (it wins only by a clearer reading).
    let cyrillic = [
        TextEncoding::Rs(WINDOWS_1251),
        TextEncoding::Rs(KOI8_R),
        TextEncoding::Rs(IBM866),
        TextEncoding::Rs(X_MAC_CYRILLIC),
        TextEncoding::Rs(ISO_8859_5),
        TextEncoding::Rs(KOI8_U),
        TextEncoding::Ibm855,
    ];
    let latin = [
        WINDOWS_1252,
        WINDOWS_1250,
        WINDOWS_1254,
        WINDOWS_1257,
        ISO_8859_2,
        ISO_8859_4,
        ISO_8859_13,
    ];
    let guessed = TextEncoding::Rs(guess);
    if !cyrillic.contains(&guessed)
        && !(latin.contains(&guess) && mostly_non_ascii_letters(bytes, guess))
    {
        return guessed;
    }
    let sample = &bytes[..bytes.len().min(256 * 1024)];
    let score = |enc: TextEncoding| -> i64 {
        let text = enc.decode(sample);
        let mut s = 0i64;
        let mut prev_lower = false;
        for c in text.chars() {
            let is_cyr = ('\u{0400}'..='\u{04FF}').contains(&c);
            if is_cyr {
                s += 1;
                if c.is_uppercase() && prev_lower {
                    s -= 4;
                }
            } else if !c.is_ascii()
                && !c.is_alphabetic()
                && c != '\u{00A0}'
                && c != '«'
                && c != '»'
                && c != '—'
                && c != '–'
                && c != '№'
            {
                s -= 3;
            }
            prev_lower = is_cyr && c.is_lowercase();
        }
        s
    };
    let mut best = (guessed, score(guessed));
    if cyrillic.contains(&guessed) {
        best = (cyrillic[0], score(cyrillic[0]));
    }
    for enc in cyrillic {
        let sc = score(enc);
        if sc > best.1 {
            best = (enc, sc);
        }
    }
    best.0
}

/// chardetng has no Mac Roman: Western text from a Mac comes back as windows-1252, its
/// curly quotes and accents as capitals inside words (`Blanchard’s` → `BlanchardÕs`, `été`
/// → `ŽtŽ`). Each byte above 0x7F (in the first 256 KiB, as the Cyrillic tie-breaker
/// reads) is read both ways, and a reading that
/// puts a capital right after a small letter, a control character, or a symbol between two
/// letters counts against its encoding; Mac Roman is taken only when it has fewer such
/// readings than windows-1252 and half as many at most. Real windows-1252 text read as
/// Mac Roman does the same the other way (`été` → `ÈtÈ`), so it stays.
/// English (or any Latin-script) text whose only bytes above 0x7F are currency signs before
/// amounts (`£825`, `¥300`): with that little evidence chardetng may pick a Central European
/// or Baltic encoding, where the same byte is a letter (0xA3 is `Ł` in windows-1250), and a
/// letter glued to a number is no word. When every such byte reads as a currency sign in
/// windows-1252, and as none in the guess, right before a digit, the file is windows-1252.
/// A file with one byte elsewhere (a real `Łódź`) keeps its guess.
fn refine_currency(bytes: &[u8], guess: TextEncoding) -> TextEncoding {
    use encoding_rs::WINDOWS_1252;
    let TextEncoding::Rs(enc) = guess else {
        return guess;
    };
    if enc == WINDOWS_1252 || !enc.is_single_byte() {
        return guess;
    }
    let currency = |enc: &'static Encoding, b: u8| {
        let byte = [b];
        let (text, _) = enc.decode_without_bom_handling(&byte);
        matches!(text.chars().next(), Some('£' | '¥' | '¢' | '€' | '¤'))
    };
    let sample = &bytes[..bytes.len().min(256 * 1024)];
    let mut amounts = 0usize;
    for (i, &b) in sample.iter().enumerate() {
        if b < 0x80 {
            continue;
        }
        let before_digit = sample.get(i + 1).is_some_and(u8::is_ascii_digit);
        if !before_digit || !currency(WINDOWS_1252, b) || currency(enc, b) {
            return guess;
        }
        amounts += 1;
    }
    if amounts > 0 {
        TextEncoding::Rs(WINDOWS_1252)
    } else {
        guess
    }
}

fn refine_mac_roman(bytes: &[u8], guess: TextEncoding) -> TextEncoding {
    use encoding_rs::{MACINTOSH, WINDOWS_1252};
    if guess != TextEncoding::Rs(WINDOWS_1252) {
        return guess;
    }
    // Per byte above 0x7F, what its character is: 1 a control, 2 a capital, 4 a symbol
    // (neither letter nor digit, nor the quotes and dashes words hold). Made once.
    fn classes(enc: &'static Encoding) -> [u8; 128] {
        let mut t = [0u8; 128];
        for (i, class) in t.iter_mut().enumerate() {
            let byte = [0x80 + i as u8];
            let (text, _) = enc.decode_without_bom_handling(&byte);
            let c = text.chars().next().unwrap_or('\u{FFFD}');
            let symbol = !c.is_alphanumeric()
                && !matches!(c, '’' | '‘' | '\u{00AD}' | '-' | '–' | '·' | '\u{00A0}');
            *class =
                u8::from(c.is_control()) | u8::from(c.is_uppercase()) << 1 | u8::from(symbol) << 2;
        }
        t
    }
    static CLASSES: std::sync::OnceLock<([u8; 128], [u8; 128])> = std::sync::OnceLock::new();
    let (win, mac) = CLASSES.get_or_init(|| (classes(WINDOWS_1252), classes(MACINTOSH)));
    let odd = |class: u8, prev: u8, next: u8| -> i64 {
        let between = prev.is_ascii_alphabetic() && next.is_ascii_alphabetic();
        i64::from(
            class & 1 != 0
                || (class & 2 != 0 && prev.is_ascii_lowercase())
                || (class & 4 != 0 && between),
        )
    };
    let sample = &bytes[..bytes.len().min(256 * 1024)];
    let (mut w, mut m) = (0i64, 0i64);
    for (i, &b) in sample.iter().enumerate() {
        if b < 0x80 {
            continue;
        }
        let prev = if i > 0 { sample[i - 1] } else { b' ' };
        let next = sample.get(i + 1).copied().unwrap_or(b' ');
        w += odd(win[(b - 0x80) as usize], prev, next);
        m += odd(mac[(b - 0x80) as usize], prev, next);
    }
    if m < w && m * 2 <= w {
        TextEncoding::Rs(MACINTOSH)
    } else {
        guess
    }
}

/// IBM855's characters for bytes 0x80–0xFF (generated from Python's codecs.cp855).
pub const CP855_HIGH: [char; 128] = [
    '\u{0452}', '\u{0402}', '\u{0453}', '\u{0403}', '\u{0451}', '\u{0401}', '\u{0454}', '\u{0404}',
    '\u{0455}', '\u{0405}', '\u{0456}', '\u{0406}', '\u{0457}', '\u{0407}', '\u{0458}', '\u{0408}',
    '\u{0459}', '\u{0409}', '\u{045A}', '\u{040A}', '\u{045B}', '\u{040B}', '\u{045C}', '\u{040C}',
    '\u{045E}', '\u{040E}', '\u{045F}', '\u{040F}', '\u{044E}', '\u{042E}', '\u{044A}', '\u{042A}',
    '\u{0430}', '\u{0410}', '\u{0431}', '\u{0411}', '\u{0446}', '\u{0426}', '\u{0434}', '\u{0414}',
    '\u{0435}', '\u{0415}', '\u{0444}', '\u{0424}', '\u{0433}', '\u{0413}', '\u{00AB}', '\u{00BB}',
    '\u{2591}', '\u{2592}', '\u{2593}', '\u{2502}', '\u{2524}', '\u{0445}', '\u{0425}', '\u{0438}',
    '\u{0418}', '\u{2563}', '\u{2551}', '\u{2557}', '\u{255D}', '\u{0439}', '\u{0419}', '\u{2510}',
    '\u{2514}', '\u{2534}', '\u{252C}', '\u{251C}', '\u{2500}', '\u{253C}', '\u{043A}', '\u{041A}',
    '\u{255A}', '\u{2554}', '\u{2569}', '\u{2566}', '\u{2560}', '\u{2550}', '\u{256C}', '\u{00A4}',
    '\u{043B}', '\u{041B}', '\u{043C}', '\u{041C}', '\u{043D}', '\u{041D}', '\u{043E}', '\u{041E}',
    '\u{043F}', '\u{2518}', '\u{250C}', '\u{2588}', '\u{2584}', '\u{041F}', '\u{044F}', '\u{2580}',
    '\u{042F}', '\u{0440}', '\u{0420}', '\u{0441}', '\u{0421}', '\u{0442}', '\u{0422}', '\u{0443}',
    '\u{0423}', '\u{0436}', '\u{0416}', '\u{0432}', '\u{0412}', '\u{044C}', '\u{042C}', '\u{2116}',
    '\u{00AD}', '\u{044B}', '\u{042B}', '\u{0437}', '\u{0417}', '\u{0448}', '\u{0428}', '\u{044D}',
    '\u{042D}', '\u{0449}', '\u{0429}', '\u{0447}', '\u{0427}', '\u{00A7}', '\u{25A0}', '\u{00A0}',
];

/// cp500 byte → char, generated from Python's codecs.cp500.
pub const CP500: [char; 256] = [
    '\u{0000}', '\u{0001}', '\u{0002}', '\u{0003}', '\u{009c}', '\u{0009}', '\u{0086}', '\u{007f}',
    '\u{0097}', '\u{008d}', '\u{008e}', '\u{000b}', '\u{000c}', '\u{000d}', '\u{000e}', '\u{000f}',
    '\u{0010}', '\u{0011}', '\u{0012}', '\u{0013}', '\u{009d}', '\u{0085}', '\u{0008}', '\u{0087}',
    '\u{0018}', '\u{0019}', '\u{0092}', '\u{008f}', '\u{001c}', '\u{001d}', '\u{001e}', '\u{001f}',
    '\u{0080}', '\u{0081}', '\u{0082}', '\u{0083}', '\u{0084}', '\u{000a}', '\u{0017}', '\u{001b}',
    '\u{0088}', '\u{0089}', '\u{008a}', '\u{008b}', '\u{008c}', '\u{0005}', '\u{0006}', '\u{0007}',
    '\u{0090}', '\u{0091}', '\u{0016}', '\u{0093}', '\u{0094}', '\u{0095}', '\u{0096}', '\u{0004}',
    '\u{0098}', '\u{0099}', '\u{009a}', '\u{009b}', '\u{0014}', '\u{0015}', '\u{009e}', '\u{001a}',
    '\u{0020}', '\u{00a0}', '\u{00e2}', '\u{00e4}', '\u{00e0}', '\u{00e1}', '\u{00e3}', '\u{00e5}',
    '\u{00e7}', '\u{00f1}', '\u{005b}', '\u{002e}', '\u{003c}', '\u{0028}', '\u{002b}', '\u{0021}',
    '\u{0026}', '\u{00e9}', '\u{00ea}', '\u{00eb}', '\u{00e8}', '\u{00ed}', '\u{00ee}', '\u{00ef}',
    '\u{00ec}', '\u{00df}', '\u{005d}', '\u{0024}', '\u{002a}', '\u{0029}', '\u{003b}', '\u{005e}',
    '\u{002d}', '\u{002f}', '\u{00c2}', '\u{00c4}', '\u{00c0}', '\u{00c1}', '\u{00c3}', '\u{00c5}',
    '\u{00c7}', '\u{00d1}', '\u{00a6}', '\u{002c}', '\u{0025}', '\u{005f}', '\u{003e}', '\u{003f}',
    '\u{00f8}', '\u{00c9}', '\u{00ca}', '\u{00cb}', '\u{00c8}', '\u{00cd}', '\u{00ce}', '\u{00cf}',
    '\u{00cc}', '\u{0060}', '\u{003a}', '\u{0023}', '\u{0040}', '\u{0027}', '\u{003d}', '\u{0022}',
    '\u{00d8}', '\u{0061}', '\u{0062}', '\u{0063}', '\u{0064}', '\u{0065}', '\u{0066}', '\u{0067}',
    '\u{0068}', '\u{0069}', '\u{00ab}', '\u{00bb}', '\u{00f0}', '\u{00fd}', '\u{00fe}', '\u{00b1}',
    '\u{00b0}', '\u{006a}', '\u{006b}', '\u{006c}', '\u{006d}', '\u{006e}', '\u{006f}', '\u{0070}',
    '\u{0071}', '\u{0072}', '\u{00aa}', '\u{00ba}', '\u{00e6}', '\u{00b8}', '\u{00c6}', '\u{00a4}',
    '\u{00b5}', '\u{007e}', '\u{0073}', '\u{0074}', '\u{0075}', '\u{0076}', '\u{0077}', '\u{0078}',
    '\u{0079}', '\u{007a}', '\u{00a1}', '\u{00bf}', '\u{00d0}', '\u{00dd}', '\u{00de}', '\u{00ae}',
    '\u{00a2}', '\u{00a3}', '\u{00a5}', '\u{00b7}', '\u{00a9}', '\u{00a7}', '\u{00b6}', '\u{00bc}',
    '\u{00bd}', '\u{00be}', '\u{00ac}', '\u{007c}', '\u{00af}', '\u{00a8}', '\u{00b4}', '\u{00d7}',
    '\u{007b}', '\u{0041}', '\u{0042}', '\u{0043}', '\u{0044}', '\u{0045}', '\u{0046}', '\u{0047}',
    '\u{0048}', '\u{0049}', '\u{00ad}', '\u{00f4}', '\u{00f6}', '\u{00f2}', '\u{00f3}', '\u{00f5}',
    '\u{007d}', '\u{004a}', '\u{004b}', '\u{004c}', '\u{004d}', '\u{004e}', '\u{004f}', '\u{0050}',
    '\u{0051}', '\u{0052}', '\u{00b9}', '\u{00fb}', '\u{00fc}', '\u{00f9}', '\u{00fa}', '\u{00ff}',
    '\u{005c}', '\u{00f7}', '\u{0053}', '\u{0054}', '\u{0055}', '\u{0056}', '\u{0057}', '\u{0058}',
    '\u{0059}', '\u{005a}', '\u{00b2}', '\u{00d4}', '\u{00d6}', '\u{00d2}', '\u{00d3}', '\u{00d5}',
    '\u{0030}', '\u{0031}', '\u{0032}', '\u{0033}', '\u{0034}', '\u{0035}', '\u{0036}', '\u{0037}',
    '\u{0038}', '\u{0039}', '\u{00b3}', '\u{00db}', '\u{00dc}', '\u{00d9}', '\u{00da}', '\u{009f}',
];
/// cp037 byte → char, generated from Python's codecs.cp037.
pub const CP037: [char; 256] = [
    '\u{0000}', '\u{0001}', '\u{0002}', '\u{0003}', '\u{009c}', '\u{0009}', '\u{0086}', '\u{007f}',
    '\u{0097}', '\u{008d}', '\u{008e}', '\u{000b}', '\u{000c}', '\u{000d}', '\u{000e}', '\u{000f}',
    '\u{0010}', '\u{0011}', '\u{0012}', '\u{0013}', '\u{009d}', '\u{0085}', '\u{0008}', '\u{0087}',
    '\u{0018}', '\u{0019}', '\u{0092}', '\u{008f}', '\u{001c}', '\u{001d}', '\u{001e}', '\u{001f}',
    '\u{0080}', '\u{0081}', '\u{0082}', '\u{0083}', '\u{0084}', '\u{000a}', '\u{0017}', '\u{001b}',
    '\u{0088}', '\u{0089}', '\u{008a}', '\u{008b}', '\u{008c}', '\u{0005}', '\u{0006}', '\u{0007}',
    '\u{0090}', '\u{0091}', '\u{0016}', '\u{0093}', '\u{0094}', '\u{0095}', '\u{0096}', '\u{0004}',
    '\u{0098}', '\u{0099}', '\u{009a}', '\u{009b}', '\u{0014}', '\u{0015}', '\u{009e}', '\u{001a}',
    '\u{0020}', '\u{00a0}', '\u{00e2}', '\u{00e4}', '\u{00e0}', '\u{00e1}', '\u{00e3}', '\u{00e5}',
    '\u{00e7}', '\u{00f1}', '\u{00a2}', '\u{002e}', '\u{003c}', '\u{0028}', '\u{002b}', '\u{007c}',
    '\u{0026}', '\u{00e9}', '\u{00ea}', '\u{00eb}', '\u{00e8}', '\u{00ed}', '\u{00ee}', '\u{00ef}',
    '\u{00ec}', '\u{00df}', '\u{0021}', '\u{0024}', '\u{002a}', '\u{0029}', '\u{003b}', '\u{00ac}',
    '\u{002d}', '\u{002f}', '\u{00c2}', '\u{00c4}', '\u{00c0}', '\u{00c1}', '\u{00c3}', '\u{00c5}',
    '\u{00c7}', '\u{00d1}', '\u{00a6}', '\u{002c}', '\u{0025}', '\u{005f}', '\u{003e}', '\u{003f}',
    '\u{00f8}', '\u{00c9}', '\u{00ca}', '\u{00cb}', '\u{00c8}', '\u{00cd}', '\u{00ce}', '\u{00cf}',
    '\u{00cc}', '\u{0060}', '\u{003a}', '\u{0023}', '\u{0040}', '\u{0027}', '\u{003d}', '\u{0022}',
    '\u{00d8}', '\u{0061}', '\u{0062}', '\u{0063}', '\u{0064}', '\u{0065}', '\u{0066}', '\u{0067}',
    '\u{0068}', '\u{0069}', '\u{00ab}', '\u{00bb}', '\u{00f0}', '\u{00fd}', '\u{00fe}', '\u{00b1}',
    '\u{00b0}', '\u{006a}', '\u{006b}', '\u{006c}', '\u{006d}', '\u{006e}', '\u{006f}', '\u{0070}',
    '\u{0071}', '\u{0072}', '\u{00aa}', '\u{00ba}', '\u{00e6}', '\u{00b8}', '\u{00c6}', '\u{00a4}',
    '\u{00b5}', '\u{007e}', '\u{0073}', '\u{0074}', '\u{0075}', '\u{0076}', '\u{0077}', '\u{0078}',
    '\u{0079}', '\u{007a}', '\u{00a1}', '\u{00bf}', '\u{00d0}', '\u{00dd}', '\u{00de}', '\u{00ae}',
    '\u{005e}', '\u{00a3}', '\u{00a5}', '\u{00b7}', '\u{00a9}', '\u{00a7}', '\u{00b6}', '\u{00bc}',
    '\u{00bd}', '\u{00be}', '\u{005b}', '\u{005d}', '\u{00af}', '\u{00a8}', '\u{00b4}', '\u{00d7}',
    '\u{007b}', '\u{0041}', '\u{0042}', '\u{0043}', '\u{0044}', '\u{0045}', '\u{0046}', '\u{0047}',
    '\u{0048}', '\u{0049}', '\u{00ad}', '\u{00f4}', '\u{00f6}', '\u{00f2}', '\u{00f3}', '\u{00f5}',
    '\u{007d}', '\u{004a}', '\u{004b}', '\u{004c}', '\u{004d}', '\u{004e}', '\u{004f}', '\u{0050}',
    '\u{0051}', '\u{0052}', '\u{00b9}', '\u{00fb}', '\u{00fc}', '\u{00f9}', '\u{00fa}', '\u{00ff}',
    '\u{005c}', '\u{00f7}', '\u{0053}', '\u{0054}', '\u{0055}', '\u{0056}', '\u{0057}', '\u{0058}',
    '\u{0059}', '\u{005a}', '\u{00b2}', '\u{00d4}', '\u{00d6}', '\u{00d2}', '\u{00d3}', '\u{00d5}',
    '\u{0030}', '\u{0031}', '\u{0032}', '\u{0033}', '\u{0034}', '\u{0035}', '\u{0036}', '\u{0037}',
    '\u{0038}', '\u{0039}', '\u{00b3}', '\u{00db}', '\u{00dc}', '\u{00d9}', '\u{00da}', '\u{009f}',
];

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(enc: &'static Encoding, text: &str) {
        let (bytes, _, unmappable) = enc.encode(text);
        assert!(!unmappable);
        let d = detect(&bytes, false);
        assert_eq!(d.encoding.name(), enc.name(), "detecting {}", enc.name());
        assert_eq!(d.encoding.decode(&bytes[d.bom_len..]), text);
    }

    #[test]
    fn legacy_encodings() {
        let zh = "简体中文是中华人民共和国的官方文字，这是一个测试文件，用于检测编码是否正确。"
            .repeat(4);
        roundtrip(encoding_rs::GBK, &zh);
        let ru = "В гимназии он не был в числе первых учеников, но и не последним. Однажды зимой он пришёл домой поздно. ".repeat(4);
        roundtrip(encoding_rs::KOI8_R, &ru);
        roundtrip(encoding_rs::WINDOWS_1251, &ru);
        roundtrip(encoding_rs::IBM866, &ru);
        roundtrip(encoding_rs::X_MAC_CYRILLIC, &ru);
    }

    #[test]
    fn boms_and_utf16() {
        let d = detect(b"\xEF\xBB\xBFhi", false);
        assert_eq!((d.encoding.name(), d.bom_len), ("UTF-8", 3));
        let le: Vec<u8> = "plain ascii text here"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert_eq!(detect(&le, false).encoding.name(), "UTF-16LE");
        let be: Vec<u8> = "plain ascii text here"
            .encode_utf16()
            .flat_map(|u| u.to_be_bytes())
            .collect();
        assert_eq!(detect(&be, false).encoding.name(), "UTF-16BE");
    }

    /// UTF-32 with either BOM, and without one when the NUL pattern is unambiguous; UTF-16
    /// does not claim it, and it does not claim UTF-16 or an array of small integers.
    #[test]
    fn utf32_with_and_without_bom() {
        let text = "Grüße, 世界 😀\nline two\n";
        let le: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        let be: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        for (bytes, is_be) in [(&le, false), (&be, true)] {
            let bom: &[u8] = if is_be {
                &[0, 0, 0xFE, 0xFF]
            } else {
                &[0xFF, 0xFE, 0, 0]
            };
            let with = [bom, bytes.as_slice()].concat();
            let d = detect(&with, false);
            assert_eq!(d.encoding, TextEncoding::Utf32 { be: is_be });
            assert_eq!((d.confidence, d.bom_len), (Confidence::Bom, 4));
            assert_eq!(d.encoding.decode(&with[4..]), text);
            let d = detect(bytes, false);
            assert_eq!(d.encoding, TextEncoding::Utf32 { be: is_be });
            assert_eq!(d.confidence, Confidence::Certain);
            assert_eq!(d.encoding.decode_strict(bytes).unwrap(), text);
            assert_eq!(d.encoding.encoded_len(text), bytes.len());
            assert!(utf16_kind(bytes).is_none(), "UTF-16 claims UTF-32");
        }
        let utf16: Vec<u8> = "Hello, UTF-16 text\n"
            .encode_utf16()
            .flat_map(|u| u.to_le_bytes())
            .collect();
        assert!(utf32_kind(&utf16).is_none());
        let ints: Vec<u8> = (0u32..64).flat_map(|i| i.to_le_bytes()).collect();
        assert!(utf32_kind(&ints).is_none(), "small integers are not text");
    }

    /// ISO-2022: detected before the UTF-8 check; the walker agrees with the decoders on
    /// where characters end and what state a byte is in.
    #[test]
    fn iso_2022_detection_and_state() {
        let jp = b"ab \x1b$B\x30\x21\x1b(B cd\n";
        let d = detect(jp, false);
        assert_eq!(d.encoding, TextEncoding::Rs(encoding_rs::ISO_2022_JP));
        assert_eq!(d.encoding.decode(jp), "ab \u{4e9c} cd\n");
        // Inside the escape sequence (byte 4): the walker steps past it, in the JIS state.
        let (at, restore, inside) = d.encoding.walk_state(jp, 0, 4, None);
        assert_eq!((at, restore.as_slice(), inside), (6, &b"\x1b$B"[..], false));
        // Between the two bytes of the kanji: inside a character.
        let (_, _, inside) = d.encoding.walk_state(jp, 0, 7, None);
        assert!(inside);
        // Four characters end after the kanji.
        assert_eq!(d.encoding.walk_state(jp, 0, jp.len(), Some(4)).0, 8);

        let kr = b"\x1b$)C\n\x0e\x30\x21\x33\x2a\x0f ok\r\x0e\x30\x21\x0f\n";
        let d = detect(kr, false);
        assert_eq!(d.encoding, TextEncoding::Iso2022Kr);
        assert_eq!(d.bom_len, 4);
        let body = &kr[4..];
        assert_eq!(d.encoding.decode(body), "\n\u{ac00}\u{b098} ok\r\u{ac00}\n");
        assert!(d.encoding.decode_strict(b"\x0e\x30").is_none());
        // After the first Hangul character (3 characters: \n, 가): byte 4 of the body.
        assert_eq!(d.encoding.walk_state(body, 0, body.len(), Some(2)).0, 4);
        // CR ends Korean, as the decoder reads it (no SI before it here).
        let cr = b"\x0e\x30\x21\rx";
        assert_eq!(d.encoding.decode(cr), "\u{ac00}\rx");
        let (_, restore, _) = d.encoding.walk_state(cr, 0, 4, None);
        assert!(restore.is_empty());
        let (_, restore, _) = d.encoding.walk_state(cr, 0, 3, None);
        assert_eq!(restore, [0x0e]);
        // Plain ASCII with an ANSI colour escape is not ISO-2022.
        assert_eq!(
            detect(b"\x1b[31mred\x1b[0m\n", false).encoding,
            TextEncoding::Rs(encoding_rs::UTF_8)
        );
    }

    /// Mac Roman, which chardetng lacks, from its curly quotes and accents; windows-1252
    /// text stays.
    #[test]
    fn mac_roman_text_is_told_from_windows_1252() {
        let mac = encoding_rs::MACINTOSH
            .encode("The trackpad is Daniel Blanchard’s. Le café d’été.\n")
            .0
            .repeat(3);
        let mut ascii = b"port=1 product=none\n".repeat(40);
        ascii.extend_from_slice(&mac);
        assert_eq!(detect(&ascii, false).encoding.name(), "macintosh");
        let win = encoding_rs::WINDOWS_1252
            .encode("Le café d’été, la Straße, l’hôtel — «bien».\n")
            .0
            .repeat(3);
        assert_eq!(detect(&win, false).encoding.name(), "windows-1252");
    }

    #[test]
    fn ebcdic_text() {
        let text = "IntelliStation POWER workstations (and more) are described here.";
        let bytes: Vec<u8> = text
            .chars()
            .map(|c| CP500.iter().position(|t| *t == c).unwrap() as u8)
            .collect();
        let d = detect(&bytes, false);
        assert!(matches!(d.encoding, TextEncoding::Ebcdic(_)));
        assert_eq!(d.encoding.decode(&bytes), text);
    }

    /// An XML declaration naming IBM855 (no WHATWG label) is honoured; the bytes decode
    /// through its table.
    #[test]
    fn an_ibm855_declaration_is_honoured() {
        let cp855 = |text: &str| -> Vec<u8> {
            text.chars()
                .map(|c| match c {
                    c if c.is_ascii() => c as u8,
                    c => 0x80 + CP855_HIGH.iter().position(|&h| h == c).unwrap() as u8,
                })
                .collect()
        };
        let mut xml = b"<?xml version=\"1.0\" encoding=\"IBM855\"?>\n<t>".to_vec();
        xml.extend(cp855("Форумы: Обсуждение"));
        xml.extend(b"</t>\n");
        let d = detect(&xml, true);
        assert_eq!(
            (d.encoding.name(), d.confidence),
            ("IBM855", Confidence::Declared)
        );
        assert!(d.encoding.decode(&xml).contains("Форумы: Обсуждение"));
    }

    #[test]
    fn declared_charset_far_into_file() {
        let mut html = b"<html><head>".to_vec();
        html.extend(std::iter::repeat_n(b' ', 10_000));
        html.extend(b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"></head><body>");
        html.extend(encoding_rs::WINDOWS_1251.encode("Аренда квартир").0.iter());
        let d = detect(&html, true);
        assert_eq!(
            (d.encoding.name(), d.confidence),
            ("windows-1251", Confidence::Declared)
        );
    }

    #[test]
    fn encoded_len_matches() {
        for (enc, t) in [
            (encoding_rs::GBK, "中文abc"),
            (encoding_rs::UTF_16LE, "a𝓼b"),
            (encoding_rs::UTF_8, "é𝓼"),
        ] {
            let te = TextEncoding::Rs(enc);
            let bytes: Vec<u8> = if enc == encoding_rs::UTF_16LE {
                t.encode_utf16().flat_map(|u| u.to_le_bytes()).collect()
            } else {
                enc.encode(t).0.into_owned()
            };
            assert_eq!(te.encoded_len(t), bytes.len());
        }
    }
}

#[cfg(test)]
mod large_file_tests {
    use super::*;

    fn ascii_lines(n: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(n + 64);
        let mut i = 0u64;
        while v.len() < n {
            v.extend_from_slice(format!("line {i}, plain ascii words and numbers\n").as_bytes());
            i += 1;
        }
        v
    }

    /// Past `WHOLE_FEED` chardetng is fed samples, yet the decision stays a whole-file one:
    /// Japanese that appears only deep inside a 3 MB file still decides it.
    #[test]
    fn evidence_deep_in_a_large_file_is_not_missed() {
        let (sjis, _, _) =
            encoding_rs::SHIFT_JIS.encode("日本語のテキストです。東京都港区の住所と電話番号。");
        let mut bytes = ascii_lines(3 * 1024 * 1024);
        let at = line_start(&bytes, 2_345_678, EDGE);
        for _ in 0..20 {
            bytes.splice(at..at, sjis.iter().copied().chain(*b"\n"));
        }
        assert!(bytes.len() > WHOLE_FEED);
        assert_eq!(detect(&bytes, false).encoding.name(), "Shift_JIS");
    }

    /// A large GBK file is recognised from samples and confirmed by decoding all of it; one
    /// whose bytes stop being GBK deep inside is fed whole instead (and is not called GBK
    /// on the strength of its samples).
    #[test]
    fn a_multi_byte_guess_must_hold_for_the_whole_file() {
        let (gbk, _, _) = encoding_rs::GBK
            .encode("代码,名称,价格\n600519,贵州茅台,1700.00\n601318,中国平安,45.10\n");
        let mut bytes = Vec::new();
        while bytes.len() < 2 * 1024 * 1024 {
            bytes.extend_from_slice(&gbk);
        }
        assert_eq!(guess_legacy(&bytes, false).0, encoding_rs::GBK);
        assert!(decodes_cleanly(encoding_rs::GBK, &bytes));
        // Bytes no GBK decoder accepts (a lone lead byte before a newline), deep inside.
        let mut broken = bytes.clone();
        let at = line_start(&broken, 1_500_000, EDGE);
        broken.splice(at..at, [0x81, b'\n']);
        assert!(!decodes_cleanly(encoding_rs::GBK, &broken));
        let (whole, _) = {
            let mut d = chardetng::EncodingDetector::new();
            d.feed(&broken, true);
            d.guess_assess(None, false)
        };
        assert_eq!(
            guess_legacy(&broken, false).0,
            whole,
            "falls back to the whole feed"
        );
        // Kept, the strict decode is the file's text; a file it fails on has none.
        let (enc, _, text) = guess_legacy(&bytes, true);
        assert_eq!(enc, encoding_rs::GBK);
        assert_eq!(text.as_deref(), Some(&*encoding_rs::GBK.decode(&bytes).0));
        let (enc, _, text) = guess_legacy(&broken, true);
        assert_eq!(enc, whole);
        assert!(text.is_none());
        assert_eq!(detect_decoded(&bytes, false).1, text_of(&bytes));
    }

    fn text_of(bytes: &[u8]) -> Option<String> {
        Some(encoding_rs::GBK.decode(bytes).0.into_owned())
    }

    /// Pounds before amounts in an English page (chardet's test suite has such a BBC forum
    /// page, read as windows-1250 by chardetng: `Ł825`), and a Polish page that keeps its
    /// encoding though one of its `Ł`s comes before a number.
    #[test]
    fn currency_signs_before_amounts_are_windows_1252() {
        let page = b"<!DOCTYPE html>\n<html><head><meta http-equiv=\"Content-Type\" \
            content=\"text/html\"><title>Weekend results</title></head>\n<body><p>If the \
            home sides all win I take home \xa3825, not bad for a \xa32 stake.<br>Three draws \
            at 50p each, three away wins too.</p></body></html>\n";
        assert_eq!(detect(page, true).encoding.name(), "windows-1252");
        assert_eq!(
            refine_currency(page, TextEncoding::Rs(encoding_rs::WINDOWS_1250)).name(),
            "windows-1252"
        );
        let polish = encoding_rs::WINDOWS_1250
            .encode("Łódź, ulica Piotrkowska 104. Ł5 to numer lokalu; zażółć gęślą jaźń.\n")
            .0
            .into_owned();
        assert_eq!(
            refine_currency(&polish, TextEncoding::Rs(encoding_rs::WINDOWS_1250)).name(),
            "windows-1250"
        );
        // No byte above 0x7F: nothing to go on.
        assert_eq!(
            refine_currency(b"plain", TextEncoding::Rs(encoding_rs::WINDOWS_1250)).name(),
            "windows-1250"
        );
    }

    #[test]
    fn windows_are_cut_where_a_character_starts() {
        let b = b"abc\xb9\xf3\xd6\xdd, def";
        // No newline near: cut after the space-like byte (',' and ' ' are below 0x30).
        assert_eq!(line_start(b, 8, EDGE), 8);
        assert_eq!(line_start(b, 5, EDGE), 0);
        assert_eq!(line_end(b, 4, EDGE), 8);
    }
}
