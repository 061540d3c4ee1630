//! Token budgets (`max_tokens`): an estimate of how many tokens a language model's
//! tokenizer makes of a text, meant as an upper bound of the common ones (OpenAI's
//! cl100k_base and o200k_base), checked against them in `tests/integration/tokens.rs`.
//!
//! The rule, per run of characters: ASCII letters `ceil(len / 3)` per word (common words are
//! one token, rare and foreign ones a few letters a token), digits `ceil(len / 3)` (both
//! tokenizers group digits by three), one token per ASCII punctuation mark, whitespace free
//! when it is a single space (it joins the next word) and one token per other run (newlines,
//! indentation); CJK ideographs, kana and Hangul two tokens a character, any other non-ASCII
//! character one. Measured ratios, estimate over the larger real count, are in README.
//!
//! The estimate only grows as characters are appended, so the longest prefix that fits a
//! budget is well defined (`prefix_within`).

/// The smallest `max_tokens`: room for the closing line of a cut text and some text.
pub const MIN_BUDGET: u64 = 50;

/// The largest `max_tokens`: its first pass reads 4 characters a token, within the largest
/// `max_chars`.
pub const MAX_BUDGET: u64 = 12_500_000;

/// Characters a first pass reads for a token budget: no text is estimated at fewer than one
/// token per four characters, but runs of whitespace.
pub fn first_pass_chars(max_tokens: u64) -> u64 {
    max_tokens.saturating_mul(4).min(MAX_BUDGET * 4)
}

/// A character that costs more than any other: the bound used to turn a character budget
/// into a token budget that surely holds it.
pub const MAX_PER_CHAR: u64 = 2;

/// An estimate, grown a character at a time.
#[derive(Default)]
struct Counter {
    tokens: u64,
    /// Length of the current run of ASCII letters or digits (0 when not in one).
    word: u32,
    /// Whether the previous character was a digit (digits and letters are separate runs).
    digits: bool,
    /// Length of the current whitespace run, and whether it held a newline.
    space: u32,
    newline: bool,
}

impl Counter {
    fn push(&mut self, c: char) {
        if c.is_ascii_alphanumeric() {
            let digit = c.is_ascii_digit();
            if self.word > 0 && digit != self.digits {
                self.word = 0;
            }
            self.space = 0;
            self.newline = false;
            if self.word % 3 == 0 {
                self.tokens += 1;
            }
            self.word += 1;
            self.digits = digit;
            return;
        }
        self.word = 0;
        if c.is_whitespace() && c.is_ascii() {
            let nl = c == '\n' || c == '\r';
            // A single space is free; the run costs one token once it is more than that.
            let was_free = self.space == 0 || (self.space == 1 && !self.newline);
            self.space += 1;
            self.newline |= nl;
            let free = self.space == 1 && !self.newline;
            if was_free && !free {
                self.tokens += 1;
            }
            return;
        }
        self.space = 0;
        self.newline = false;
        self.tokens += per_char(c);
    }

    fn tokens(&self) -> u64 {
        self.tokens
    }
}

/// Tokens of one character outside ASCII letters, digits and whitespace.
fn per_char(c: char) -> u64 {
    let o = c as u32;
    let wide = matches!(o,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x2E80..=0x9FFF    // CJK radicals, kana, CJK ideographs, Hangul compatibility
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7FF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFFEF    // full-width forms
        | 0x20000..);
    if wide {
        MAX_PER_CHAR
    } else {
        1
    }
}

/// The estimated token count of `text`.
pub fn estimate(text: &str) -> u64 {
    let mut c = Counter::default();
    text.chars().for_each(|ch| c.push(ch));
    c.tokens()
}

/// The number of characters of the longest prefix of `text` estimated at no more than
/// `max_tokens`.
pub fn prefix_within(text: &str, max_tokens: u64) -> usize {
    let mut c = Counter::default();
    for (n, ch) in text.chars().enumerate() {
        c.push(ch);
        if c.tokens() > max_tokens {
            return n;
        }
    }
    text.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_digits_and_spaces() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("the"), 1);
        assert_eq!(estimate("the cat"), 2);
        assert_eq!(estimate("docreader"), 3);
        assert_eq!(estimate("2026"), 2);
        assert_eq!(estimate("a1"), 2);
        assert_eq!(estimate("fn main() {"), 6);
        assert_eq!(estimate("a\n    b"), 3);
        assert_eq!(estimate("中文"), 4);
        assert_eq!(estimate("한국어"), 6);
        assert_eq!(estimate("Привет"), 6);
    }

    #[test]
    fn the_estimate_grows_with_the_text_and_prefixes_fit() {
        let text = "Lorem ipsum dolor sit amet,\n  中文 테스트 1234567 — done.";
        let mut last = 0;
        for (i, _) in text.char_indices() {
            let e = estimate(&text[..i]);
            assert!(e >= last, "estimate shrank at {i}");
            last = e;
        }
        for budget in 0..=estimate(text) {
            let n = prefix_within(text, budget);
            let prefix: String = text.chars().take(n).collect();
            assert!(estimate(&prefix) <= budget);
            if n < text.chars().count() {
                let longer: String = text.chars().take(n + 1).collect();
                assert!(
                    estimate(&longer) > budget,
                    "budget {budget}: {n} is not the longest"
                );
            }
        }
    }
}
