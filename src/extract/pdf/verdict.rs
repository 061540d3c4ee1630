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
    let counts = Counts::of(text);
    if counts.visible == 0 {
        return has_images().then_some(OcrReason::NoTextLayer);
    }
    if is_garbled(text, &counts) || implausible_cjk(text) {
        return Some(OcrReason::GarbledText);
    }
    (counts.visible < min_chars && has_images()).then_some(OcrReason::SparseText)
}

/// A character no font's Unicode map gives: private use, U+FFFD, a control code (not a
/// tab or line end).
fn unmappable(c: char) -> bool {
    matches!(c, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{10FFFF}' | '\u{FFFD}')
        || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
}

/// What `is_garbled` weighs, counted over a page's characters other than whitespace in one
/// pass (every page's text pays it; nothing is allocated).
struct Counts {
    visible: usize,
    unmappable: usize,
    /// Control characters other than tab, line ends and U+0002.
    controls: usize,
    letters: usize,
    vowels: usize,
    symbols: usize,
}

impl Counts {
    fn of(text: &str) -> Self {
        let mut k = Counts {
            visible: 0,
            unmappable: 0,
            controls: 0,
            letters: 0,
            vowels: 0,
            symbols: 0,
        };
        for c in text.chars().filter(|c| !c.is_whitespace()) {
            k.visible += 1;
            if c.is_ascii() {
                if c.is_ascii_alphabetic() {
                    k.letters += 1;
                    k.vowels += usize::from(matches!(
                        c,
                        'a' | 'e' | 'i' | 'o' | 'u' | 'y' | 'A' | 'E' | 'I' | 'O' | 'U' | 'Y'
                    ));
                } else if c.is_ascii_punctuation() {
                    k.symbols += 1;
                }
            }
            if unmappable(c) {
                k.unmappable += 1;
                k.controls += usize::from(c.is_control() && c != '\u{2}');
            }
        }
        k
    }
}

/// A text layer that is mostly unmappable: private-use code points, U+FFFD, control
/// characters, or Latin "glyph soup" (shifted glyph codes) with no vowels to make words.
fn is_garbled(text: &str, k: &Counts) -> bool {
    let n = k.visible;
    if k.unmappable * 10 >= n * 3 {
        return true;
    }
    // Control characters do not occur in real text layers; a few percent of them are
    // small codes read as characters (a simple TrueType font without a Unicode map).
    if n >= 20 && k.controls * 100 >= n * 5 {
        return true;
    }
    if k.letters >= 40 && k.letters * 2 >= n && k.vowels * 100 < k.letters * 12 {
        return true;
    }
    let symbols = k.symbols;
    if n < 40 || symbols * 100 <= n * 55 {
        return false; // (leaders below only lower the share: not worth counting)
    }
    let visible: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    // Leaders and rules (`Introduction . . . . . 17`, `-----`, `_____`): the same mark
    // three times or more in a row is layout, not glyph soup; they are left out of the count.
    // (`…` and `·` leaders leave the count of characters only: they are not symbols.)
    let (mut leaders, mut symbol_leaders) = (0usize, 0usize);
    let mut run = 1;
    for (i, c) in visible.iter().enumerate() {
        if i > 0 && visible[i - 1] == *c {
            run += 1;
        } else {
            run = 1;
        }
        if c.is_ascii_punctuation() || *c == '…' || *c == '·' {
            let k = match run {
                3 => 3,
                r if r > 3 => 1,
                _ => 0,
            };
            leaders += k;
            if c.is_ascii_punctuation() {
                symbol_leaders += k;
            }
        }
    }
    let (n, symbols) = (n - leaders.min(n), symbols.saturating_sub(symbol_leaders));
    n >= 40 && symbols * 100 > n * 55
}

/// Whether text with CJK in it holds many characters that real CJK text hardly uses:
/// CJK Extension A, Yi, Braille, control pictures, technical symbols, and Hebrew or Arabic
/// on the same line as CJK. Glyph ids read as code points land there (a
/// CID font without a Unicode map), while real Chinese or Japanese text stays in the
/// common blocks.
pub fn implausible_cjk(text: &str) -> bool {
    if text.is_ascii() {
        return false; // no CJK (most pages: one fast pass)
    }
    let is_cjk = |c: char| matches!(c, '\u{3040}'..='\u{30FF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}');
    let is_rtl = |c: char| matches!(c, '\u{0590}'..='\u{08FF}');
    let (mut cjk, mut odd, mut non_ascii) = (0usize, 0usize, 0usize);
    for line in text.lines() {
        let line_cjk = line.chars().filter(|c| is_cjk(*c)).count();
        cjk += line_cjk;
        for c in line.chars().filter(|c| !c.is_ascii() && !c.is_whitespace()) {
            non_ascii += 1;
            let rare = matches!(c,
                '\u{2300}'..='\u{23FF}'   // technical symbols (not the math operators
                                            // before them: Chinese maths uses ∑ ≤ ∈)
                | '\u{2400}'..='\u{243F}' // control pictures
                | '\u{2800}'..='\u{28FF}' // Braille
                | '\u{3400}'..='\u{4DBF}' // CJK Extension A
                | '\u{A000}'..='\u{A4CF}' // Yi
            );
            if rare || (line_cjk > 0 && is_rtl(c)) {
                odd += 1;
            }
        }
    }
    cjk >= 5 && odd * 100 >= non_ascii * 15
}

/// Whether OCR read the words a text layer judged garbled holds: then the layer was text
/// after all (a page of code is two thirds symbols, a shortcut table in Japanese full of
/// `⌘`), and it is the better reading, exact where OCR errs. A layer of glyph codes shares
/// next to no word with what OCR reads. Never asked of a layer with unmappable characters
/// (private use, U+FFFD, control codes): its numbers may match while its words are lost.
///
/// Words are runs of letters and digits with a letter in them, lowercased; a run of CJK,
/// kana or Hangul counts as its pairs of characters. OCR must read five words at least,
/// and the words matched (each once) must be six in ten of OCR's words and six in ten of
/// the layer's: a layer garbled in part (a block in a font without its map, accents from
/// the wrong code page) has words OCR does not read.
pub fn ocr_confirms(layer: &str, ocr: &str) -> bool {
    if layer.chars().any(unmappable) {
        return false;
    }
    let read = words(ocr);
    let read_count = read.len();
    if read_count < 5 {
        return false;
    }
    let layer_words = words(layer);
    let layer_count = layer_words.len();
    let mut left: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for w in layer_words {
        *left.entry(w).or_default() += 1;
    }
    let hits = read
        .into_iter()
        .filter(|w| match left.get_mut(w) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    hits * 10 >= read_count * 6 && hits * 10 >= layer_count * 6
}

/// `ocr_confirms`'s words of a text.
fn words(text: &str) -> Vec<String> {
    let ideographic = |c: char| matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}');
    let mut out = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if !run.chars().any(char::is_alphabetic) {
            continue;
        }
        if run.chars().any(ideographic) {
            let chars: Vec<char> = run.chars().collect();
            if chars.len() == 1 {
                out.push(run.to_string());
            }
            out.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
        } else {
            out.push(run.to_lowercase());
        }
    }
    out
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
        // A table of contents: dot leaders are layout (issue #43: such pages were OCR'd,
        // 38 s instead of 1 s for a 464-page manual, and read worse).
        let toc = "Contents\n1 Introduction . . . . . . . . . . . . . . . . . . . . . 17\n\
            1.1 Scope . . . . . . . . . . . . . . . . . . . . . . . . . . 18\n\
            2 Usage ........................................ 21\n\
            2.1 Options ______________________________________ 23\n"
            .repeat(3);
        assert_eq!(assess(&toc, 50, || false), None);
        let table = "Item 1 | $1,234.00 | 12% | 2024-01-02\n".repeat(5);
        assert_eq!(assess(&table, 50, || false), None);
        let cjk = "日本語のテキストです。これは正しい文章です。".repeat(4);
        assert_eq!(assess(&cjk, 50, || false), None);
        // Glyph ids of a CID font without a Unicode map, as PDFium returns them.
        let ids = "㛝嗉⣪⋗䢇䥏哘⋙⏰捷␟ׇ\n⢝临⣃䳍ꉗ3135.1926ꉉ暝浩ꉗ\n䧼⠆⎯㰽⍸旉⠏ׇ";
        assert_eq!(assess(ids, 10, || false), Some(OcrReason::GarbledText));
        // Small codes of a simple font without one: a few control characters.
        let simple = "P\u{1}\u{2}li\u{3} \u{4}lu\u{5}ou\u{6}k\u{7} k\u{8} Faktura 2024/0815: celkem 12 345,67 K\u{6}";
        assert_eq!(assess(simple, 10, || false), Some(OcrReason::GarbledText));
        let chinese = "我能吞下玻璃而不伤身体。发票号码：2024-0815，金额：¥12345.67 ∑ ≤ 3";
        assert_eq!(assess(chinese, 10, || false), None);
        let maths = "设集合A满足∀x∈A，x≤∑aᵢ，且∃y∉B∩C⊆D。".repeat(3);
        assert_eq!(assess(&maths, 10, || false), None);
    }

    #[test]
    fn ocr_confirms_a_layer_it_reads_alike() {
        let code = "@r = map { $_ * 2 } grep { $_ % 2 } @v;\n%h = (k => [1, 2], v => {x => 3});\n\
            while (<>) { chomp; print \"$.: $_\\n\" if /^[#;]/; }";
        // OCR misreads a few marks and words; most of its words are the layer's.
        let ocr = "@r = map { $ * 2 } grep { $_ % 2 } @v;\n%h = (k => [1, 2], v => {x => 3});\n\
            while (<>) { chonp; print \"$.: $_\\n\" if /^[#;]/; }";
        assert!(ocr_confirms(code, ocr));
        // Glyph soup (shifted codes) shares no word with the page OCR reads.
        let soup = "Vkg tzxbn drgwp ktr mlzqs qwtr khl lzxd; ".repeat(4);
        let page = "The quick brown fox jumps over the lazy dog; ".repeat(4);
        assert!(!ocr_confirms(&soup, &page));
        // Unmappable characters: the words are lost even where the numbers match.
        let simple =
            "P\u{1}\u{2}li\u{3} \u{4}lu\u{5}ou\u{6}k\u{7} Faktura 2024/0815 celkem 12 345,67";
        let read = "Příliš žluťoučký kůň Faktura 2024/0815 celkem 12 345,67";
        assert!(!ocr_confirms(simple, read));
        // A layer garbled in part: OCR's words are all in it, but half of its are not OCR's.
        let part = "The quick brown fox jumps over the lazy dog. Pøíliš žlutouèký kùò úpìl ïábelské ódy ve þrtu kde.";
        let seen = "The quick brown fox jumps over the lazy dog.";
        assert!(!ocr_confirms(part, seen));
        // CJK by pairs of characters.
        let ja = "⌘C：コピーします ⌘V：貼り付けます ⌘Z：取り消します ⌥⌘Esc：強制終了します";
        assert!(ocr_confirms(
            ja,
            "C：コピーします V：貼り付けます Z：取り消します Esc：強制終了します"
        ));
        assert!(!ocr_confirms(
            "䢇䥏哘捷临 ⋙⏰ 䳍ꉗ暝浩",
            "発票番号と金額を確認してください"
        ));
        // Too few words to judge.
        assert!(!ocr_confirms("a b", "a b"));
    }
}
