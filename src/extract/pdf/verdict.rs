//! Whether a page's text layer is usable: the verdict that sends a page to OCR (no text
//! layer, sparse text, or a garbled layer that forms no words), judged from its text alone.

/// Why a page needs OCR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcrReason {
    NoTextLayer,
    SparseText,
    GarbledText,
    /// `ocr: "force"`.
    Forced,
}

impl OcrReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoTextLayer => "no_text_layer",
            Self::SparseText => "sparse_text",
            Self::GarbledText => "garbled_text",
            Self::Forced => "forced",
        }
    }
}

/// Judge a page's native text. `has_images`: a page with neither text nor images is blank,
/// and OCR could find nothing on it.
/// `has_images` is asked only for sparse pages (walking page objects costs time).
pub fn assess(
    text: &str,
    min_chars: usize,
    has_images: impl FnOnce() -> bool,
) -> Option<OcrReason> {
    let visible: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let n = visible.len();
    if n == 0 {
        return has_images().then_some(OcrReason::NoTextLayer);
    }
    if is_garbled(&visible) {
        return Some(OcrReason::GarbledText);
    }
    (n < min_chars && has_images()).then_some(OcrReason::SparseText)
}

/// A text layer that is mostly unmappable: private-use code points, U+FFFD, control
/// characters, or Latin "glyph soup" (shifted glyph codes) with no vowels to make words.
fn is_garbled(visible: &[char]) -> bool {
    let n = visible.len();
    let bad = visible
        .iter()
        .filter(|&&c| {
            matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{10FFFF}' | '\u{FFFD}')
                || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        })
        .count();
    if bad * 10 >= n * 3 {
        return true;
    }
    let letters: Vec<char> = visible
        .iter()
        .copied()
        .filter(|c| c.is_ascii_alphabetic())
        .collect();
    if letters.len() >= 40 && letters.len() * 2 >= n {
        let vowels = letters
            .iter()
            .filter(|c| "aeiouyAEIOUY".contains(**c))
            .count();
        if vowels * 100 < letters.len() * 12 {
            return true;
        }
    }
    let symbols = visible.iter().filter(|c| c.is_ascii_punctuation()).count();
    n >= 40 && symbols * 100 > n * 55
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let words = "The quick brown fox jumps over the lazy dog. ".repeat(3);
        assert_eq!(assess(&words, 50, || true), None);
        assert_eq!(assess("", 50, || true), Some(OcrReason::NoTextLayer));
        assert_eq!(
            assess("  \n", 50, || false),
            None,
            "a blank page has nothing to OCR"
        );
        assert_eq!(assess("Page 3", 50, || true), Some(OcrReason::SparseText));
        assert_eq!(assess("Page 3", 50, || false), None);
        let pua: String = "\u{E041}\u{E042}\u{E043} ".repeat(30);
        assert_eq!(assess(&pua, 50, || false), Some(OcrReason::GarbledText));
        let fffd = "\u{FFFD}\u{FFFD}ab ".repeat(30);
        assert_eq!(assess(&fffd, 50, || false), Some(OcrReason::GarbledText));
        let soup = "Vkg tzxbn drgwp ktr mlzqs qwtr khl lzxd; ".repeat(4);
        assert_eq!(assess(&soup, 50, || false), Some(OcrReason::GarbledText));
        let symbols = "#$%& ()*+ ,-./ :;<= >?@[ ]^_` {|}~ ".repeat(5);
        assert_eq!(assess(&symbols, 50, || false), Some(OcrReason::GarbledText));
        let table = "Item 1 | $1,234.00 | 12% | 2024-01-02\n".repeat(5);
        assert_eq!(assess(&table, 50, || false), None);
        let cjk = "日本語のテキストです。これは正しい文章です。".repeat(4);
        assert_eq!(assess(&cjk, 50, || false), None);
    }
}
