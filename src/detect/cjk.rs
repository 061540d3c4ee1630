//! Two Far East encodings that are no WHATWG encoding, so encoding_rs has neither:
//!
//! - **Johab** (KS X 1001:1992 annex 3, Korean): a Hangul syllable is a 16-bit code of three
//!   5-bit jamo fields, composed here into Unicode; symbols and Hanja sit on KS X 1001's
//!   rows, moved, and decode through EUC-KR's table.
//! - **EUC-TW** (CNS 11643 in EUC form, Taiwan): plane 1 in two bytes, other planes behind
//!   `8E A1–B0`; planes 1 and 2 (every character Big5 has, and more) from `cns11643.bin`,
//!   generated from glibc's converter by `scripts/gen_cns11643.py`. Planes 3–16 are not
//!   mapped: their characters decode to U+FFFD.
//!
//! Each is told from the legacy encodings chardetng weighs by what it decodes to: every
//! byte valid, and the text made of the characters the encoding's own everyday set holds
//! (KS X 1001's 2,350 syllables for Johab, CNS plane 1's Hanzi for EUC-TW). Text in another
//! encoding is malformed in these within a few characters.

use std::sync::OnceLock;

/// One Johab jamo field: a letter's index, or the field's "fill" (no letter).
#[derive(Clone, Copy, PartialEq)]
enum Jamo {
    Letter(u32),
    Fill,
}

/// The 19 initial consonants: field values 2–20; 1 is fill.
fn initial(bits: u32) -> Option<Jamo> {
    match bits {
        1 => Some(Jamo::Fill),
        2..=20 => Some(Jamo::Letter(bits - 2)),
        _ => None,
    }
}

/// The 21 vowels: field values 3–7, 10–15, 18–23 and 26–29; 2 is fill.
fn medial(bits: u32) -> Option<Jamo> {
    match bits {
        2 => Some(Jamo::Fill),
        3..=7 => Some(Jamo::Letter(bits - 3)),
        10..=15 => Some(Jamo::Letter(bits - 5)),
        18..=23 => Some(Jamo::Letter(bits - 7)),
        26..=29 => Some(Jamo::Letter(bits - 9)),
        _ => None,
    }
}

/// The 27 final consonants (Unicode's 1–27): field values 2–17 and 19–29; 1 is fill.
fn last(bits: u32) -> Option<Jamo> {
    match bits {
        1 => Some(Jamo::Fill),
        2..=17 => Some(Jamo::Letter(bits - 1)),
        19..=29 => Some(Jamo::Letter(bits - 2)),
        _ => None,
    }
}

/// A lone initial as a Hangul compatibility letter (U+3131…).
const COMPAT_INITIAL: [u16; 19] = [
    0x3131, 0x3132, 0x3134, 0x3137, 0x3138, 0x3139, 0x3141, 0x3142, 0x3143, 0x3145, 0x3146, 0x3147,
    0x3148, 0x3149, 0x314A, 0x314B, 0x314C, 0x314D, 0x314E,
];

/// A lone final (1–27) as a Hangul compatibility letter.
const COMPAT_FINAL: [u16; 28] = [
    0, 0x3131, 0x3132, 0x3133, 0x3134, 0x3135, 0x3136, 0x3137, 0x3139, 0x313A, 0x313B, 0x313C,
    0x313D, 0x313E, 0x313F, 0x3140, 0x3141, 0x3142, 0x3144, 0x3145, 0x3146, 0x3147, 0x3148, 0x314A,
    0x314B, 0x314C, 0x314D, 0x314E,
];

/// The character of a Johab byte pair (lead ≥ 0x80), or `None` when it has none.
fn johab_pair(c1: u8, c2: u8) -> Option<char> {
    match c1 {
        0x84..=0xD3 if matches!(c2, 0x41..=0x7E | 0x81..=0xFE) => {
            let code = (u32::from(c1) << 8) | u32::from(c2);
            let i = initial((code >> 10) & 31)?;
            let m = medial((code >> 5) & 31)?;
            let f = last(code & 31)?;
            let c = match (i, m, f) {
                (Jamo::Letter(i), Jamo::Letter(m), f) => {
                    let f = if let Jamo::Letter(f) = f { f } else { 0 };
                    0xAC00 + (i * 21 + m) * 28 + f
                }
                (Jamo::Letter(i), Jamo::Fill, Jamo::Fill) => COMPAT_INITIAL[i as usize].into(),
                (Jamo::Fill, Jamo::Letter(m), Jamo::Fill) => 0x314F + m,
                (Jamo::Fill, Jamo::Fill, Jamo::Letter(f)) => COMPAT_FINAL[f as usize].into(),
                // All three filled: the full-width space (as Python's and Microsoft's cp1361).
                (Jamo::Fill, Jamo::Fill, Jamo::Fill) => 0x3000,
                _ => return None,
            };
            char::from_u32(c)
        }
        // Symbols and Hanja: KS X 1001 rows 0x21–0x7E, two to a lead byte.
        0xD9..=0xDE | 0xE0..=0xF9 if matches!(c2, 0x31..=0x7E | 0x91..=0xFE) => {
            let t1 = if c1 < 0xE0 {
                2 * (u32::from(c1) - 0xD9)
            } else {
                2 * u32::from(c1) - 0x197
            };
            let t2 = if c2 < 0x91 {
                u32::from(c2) - 0x31
            } else {
                u32::from(c2) - 0x43
            };
            let (row, col) = if t2 < 0x5E {
                (t1 + 0x21, t2 + 0x21)
            } else {
                (t1 + 0x22, t2 - 0x5E + 0x21)
            };
            ksx1001(row as usize, col as usize)
        }
        _ => None,
    }
}

/// KS X 1001's character at `row`, `col` (each 0x21–0x7E), from EUC-KR's table (read
/// through encoding_rs once).
fn ksx1001(row: usize, col: usize) -> Option<char> {
    static TABLE: OnceLock<Vec<u16>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = vec![0u16; 94 * 94];
        for (k, slot) in t.iter_mut().enumerate() {
            let pair = [(k / 94) as u8 + 0xA1, (k % 94) as u8 + 0xA1];
            if let Some(s) =
                encoding_rs::EUC_KR.decode_without_bom_handling_and_without_replacement(&pair)
            {
                let mut chars = s.chars();
                if let (Some(c), None) = (chars.next(), chars.next()) {
                    *slot = u16::try_from(u32::from(c)).unwrap_or(0);
                }
            }
        }
        t
    });
    if !(0x21..=0x7E).contains(&row) || !(0x21..=0x7E).contains(&col) {
        return None;
    }
    match table[(row - 0x21) * 94 + col - 0x21] {
        0 => None,
        u => char::from_u32(u.into()),
    }
}

/// One character read from the start of `bytes` by a decoder here.
enum Step {
    /// A character and the bytes it took.
    Char(char, usize),
    /// Well-formed bytes for a character the table lacks (EUC-TW planes 3–16).
    Unmapped(usize),
    /// A byte that starts no character.
    Bad,
}

impl Step {
    /// The bytes the decoder moves on by (a bad byte is one: the next is read again).
    fn len(&self) -> usize {
        match self {
            Self::Char(_, n) | Self::Unmapped(n) => *n,
            Self::Bad => 1,
        }
    }
}

fn johab_step(bytes: &[u8]) -> Step {
    match *bytes {
        [b, ..] if b < 0x80 => Step::Char(b as char, 1),
        [b, t, ..] => johab_pair(b, t).map_or(Step::Bad, |c| Step::Char(c, 2)),
        _ => Step::Bad,
    }
}

fn euc_tw_step(bytes: &[u8]) -> Step {
    match *bytes {
        [b, ..] if b < 0x80 => Step::Char(b as char, 1),
        _ => match euc_tw_char(bytes) {
            Some((_, Some(c), len)) => Step::Char(c, len),
            Some((_, None, len)) => Step::Unmapped(len),
            None => Step::Bad,
        },
    }
}

/// Decode with `step`; `strict`: `None` at the first byte that starts no character, or a
/// character the table lacks (else U+FFFD).
fn decode(bytes: &[u8], strict: bool, step: fn(&[u8]) -> Step) -> Option<String> {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 2);
    let mut i = 0;
    while i < bytes.len() {
        let s = step(&bytes[i..]);
        match s {
            Step::Char(c, _) => out.push(c),
            _ if strict => return None,
            _ => out.push('\u{FFFD}'),
        }
        i += s.len();
    }
    Some(out)
}

/// Decode Johab; `strict`: `None` at the first byte it has no character for (else U+FFFD,
/// the byte after a bad lead read again).
pub fn decode_johab(bytes: &[u8], strict: bool) -> Option<String> {
    decode(bytes, strict, johab_step)
}

/// Whether bytes are Korean in Johab: every byte valid, at least eight syllables, and nine
/// in ten of them among KS X 1001's 2,350 everyday syllables. Text in any other encoding is
/// malformed in Johab or makes rare syllables (an EUC-KR file's pairs that happen to be
/// valid Johab compose to syllables nobody writes). One pass, nothing allocated.
pub fn is_johab(bytes: &[u8]) -> bool {
    let (mut syllables, mut everyday, mut pairs, mut i) = (0usize, 0usize, 0usize, 0usize);
    while i < bytes.len() {
        let Step::Char(c, n) = johab_step(&bytes[i..]) else {
            return false;
        };
        i += n;
        if n == 1 {
            continue;
        }
        if ('\u{AC00}'..='\u{D7A3}').contains(&c) {
            syllables += 1;
            everyday += usize::from(everyday_syllable(c));
            // GBK or Big5 read as Johab make valid but random syllables, about one in five
            // of them everyday ones: after 1,024 syllables, under half everyday is no
            // Korean text (it needs nine in ten over the whole file), so the rest of the
            // file is not walked.
            if syllables == 1024 && everyday * 2 < syllables {
                return false;
            }
        }
        pairs += 1;
        // Western text whose accents happen to pair up as Johab symbols: no syllable in
        // thousands of pairs (a Korean file may open with box-drawing art, not that long).
        if pairs == 4096 && syllables == 0 {
            return false;
        }
    }
    syllables >= 8 && everyday * 10 >= syllables * 9
}

/// Whether a Hangul syllable is one of KS X 1001's 2,350 (EUC-KR rows 0xB0–0xC8).
fn everyday_syllable(c: char) -> bool {
    static SET: OnceLock<Vec<u64>> = OnceLock::new();
    let set = SET.get_or_init(|| {
        let mut set = vec![0u64; 11172usize.div_ceil(64)];
        for row in 0x30..=0x48 {
            for col in 0x21..=0x7E {
                if let Some(s) = ksx1001(row, col) {
                    let k = u32::from(s) as usize - 0xAC00;
                    set[k / 64] |= 1 << (k % 64);
                }
            }
        }
        set
    });
    let k = u32::from(c) as usize - 0xAC00;
    set[k / 64] >> (k % 64) & 1 == 1
}

/// CNS 11643 planes 1 and 2: 94 × 94 little-endian u16 each, 0 where there is no character.
static CNS: &[u8; 2 * 2 * 94 * 94] = include_bytes!("cns11643.bin");

/// The character at `row`, `col` (0xA1–0xFE, as EUC-TW writes them) of plane 1 or 2.
fn cns(plane: usize, row: u8, col: u8) -> Option<char> {
    if !(1..=2).contains(&plane) || !(0xA1..=0xFE).contains(&row) || !(0xA1..=0xFE).contains(&col) {
        return None;
    }
    let k = ((plane - 1) * 94 * 94 + usize::from(row - 0xA1) * 94 + usize::from(col - 0xA1)) * 2;
    match u16::from_le_bytes([CNS[k], CNS[k + 1]]) {
        0 => None,
        u => char::from_u32(u.into()),
    }
}

/// One EUC-TW character at the start of `bytes` (lead ≥ 0x80): its plane, its character
/// (`None`: a plane this table lacks), and its length; `None` when malformed.
fn euc_tw_char(bytes: &[u8]) -> Option<(usize, Option<char>, usize)> {
    match *bytes {
        [r @ 0xA1..=0xFE, c, ..] => Some((1, Some(cns(1, r, c)?), 2)),
        [0x8E, p @ 0xA1..=0xB0, r @ 0xA1..=0xFE, c @ 0xA1..=0xFE, ..] => {
            let plane = usize::from(p - 0xA0);
            match plane {
                1 | 2 => Some((plane, Some(cns(plane, r, c)?), 4)),
                _ => Some((plane, None, 4)),
            }
        }
        _ => None,
    }
}

/// Decode EUC-TW; `strict`: `None` at the first malformed sequence or a character of a
/// plane the table lacks (else U+FFFD).
pub fn decode_euc_tw(bytes: &[u8], strict: bool) -> Option<String> {
    decode(bytes, strict, euc_tw_step)
}

/// Whether bytes are Chinese in EUC-TW: every byte valid, at least sixteen characters beyond
/// ASCII, and half of them Hanzi of plane 1 (rows 0x44–0x7D: the 5,401 in everyday use),
/// the rest punctuation or rarer Hanzi. Other East Asian encodings are malformed in EUC-TW
/// within a few characters (CNS rows 0x27–0x41 are empty, where GB2312's, EUC-KR's and
/// Big5's everyday characters fall), and kana read as EUC-TW are CNS symbols, not Hanzi.
pub fn is_euc_tw(bytes: &[u8]) -> bool {
    let (mut chars, mut hanzi, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            continue;
        }
        let Some((plane, Some(_), len)) = euc_tw_char(&bytes[i..]) else {
            return false;
        };
        chars += 1;
        let row = if len == 2 { b } else { bytes[i + 2] };
        hanzi += usize::from(plane == 1 && row >= 0xC4);
        i += len;
    }
    chars >= 16 && hanzi * 2 >= chars
}

/// How many bytes the character at the start of `bytes` takes as `decode_johab` reads it
/// (a byte it has no character for is one).
pub fn johab_len(bytes: &[u8]) -> usize {
    johab_step(bytes).len()
}

/// How many bytes the character at the start of `bytes` takes as `decode_euc_tw` reads it.
pub fn euc_tw_char_len(bytes: &[u8]) -> usize {
    euc_tw_step(bytes).len()
}

/// The bytes the first `chars` characters of `bytes` take as `decode` reads them (`len`:
/// `johab_len` or `euc_tw_char_len`): byte positions from character counts, exact where
/// re-encoding the text is not (EUC-TW writes a plane-1 character in 2 bytes or, behind
/// `8E A1`, in 4; a malformed byte decodes to U+FFFD, which has no bytes of its own).
pub fn bytes_of_chars(bytes: &[u8], chars: usize, len: fn(&[u8]) -> usize) -> usize {
    let mut i = 0;
    for _ in 0..chars {
        if i >= bytes.len() {
            break;
        }
        i += len(&bytes[i..]).max(1);
    }
    i.min(bytes.len())
}

/// How many bytes a character takes in EUC-TW: 1 for ASCII, 2 for plane 1, 4 for the rest.
pub fn euc_tw_len(c: char) -> usize {
    static PLANE1: OnceLock<Vec<u64>> = OnceLock::new();
    if c.is_ascii() {
        return 1;
    }
    let set = PLANE1.get_or_init(|| {
        let mut set = vec![0u64; 1024];
        for row in 0xA1..=0xFE {
            for col in 0xA1..=0xFE {
                if let Some(c) = cns(1, row, col) {
                    let k = u32::from(c) as usize;
                    set[k / 64] |= 1 << (k % 64);
                }
            }
        }
        set
    });
    let k = u32::from(c) as usize;
    if k < 65536 && set[k / 64] >> (k % 64) & 1 == 1 {
        2
    } else {
        4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte pairs checked against Python's `johab` codec (CPython's cjkcodecs).
    #[test]
    fn johab_decodes_hangul_jamo_symbols_and_hanja() {
        let cases: &[(&[u8], &str)] = &[
            (b"\x88\x61", "가"),
            (b"\xd3\xbd", "힣"),
            (b"\x88\x62\x90\x61\x94\x61", "각나다"),
            (b"\x88\x41", "ㄱ"),
            (b"\x84\x61", "ㅏ"),
            (b"\x84\x43", "ㄲ"),
            (b"\x84\x41", "\u{3000}"),
            (b"\xd9\x31", "\u{3000}"),
            (b"\xe0\x31", "伽"),
            (b"\xf7\xd3\xf1\xae", "漢字"),
            (b"\xd9\x48\xd9\x49", "「」"),
            (b"A\\b", "A\\b"),
        ];
        for (bytes, text) in cases {
            assert_eq!(
                decode_johab(bytes, true).as_deref(),
                Some(*text),
                "{bytes:x?}"
            );
        }
        assert_eq!(decode_johab(b"\x84\x20", true), None);
        assert_eq!(
            decode_johab(b"\xff\x41", false).as_deref(),
            Some("\u{FFFD}A")
        );
    }

    #[test]
    fn euc_tw_decodes_planes_one_and_two() {
        let cases: &[(&[u8], &str)] = &[
            (b"\xc4\xa1", "一"),
            (b"\x8e\xa1\xc4\xa1", "一"),
            (b"\x8e\xa2\xa1\xa1", "乂"),
            (b"\xa1\xa1a", "\u{3000}a"),
        ];
        for (bytes, text) in cases {
            assert_eq!(
                decode_euc_tw(bytes, true).as_deref(),
                Some(*text),
                "{bytes:x?}"
            );
        }
        assert_eq!(decode_euc_tw(b"\x8e\xa3\xa1\xa1", true), None);
        assert_eq!(
            decode_euc_tw(b"\x8e\xa3\xa1\xa1", false).as_deref(),
            Some("\u{FFFD}")
        );
        assert_eq!(euc_tw_len('一'), 2);
        assert_eq!(euc_tw_len('乂'), 4);
    }
}
