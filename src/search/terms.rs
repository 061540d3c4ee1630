//! Search terms: CJK runs as overlapping bigrams, FTS5 `MATCH` and Postgres `tsquery`
//! expressions from a user's query, and the `tsvector` text of what is indexed.

use super::*;

/// Whether a character belongs to a script written without spaces between words (or, for
/// Hangul, with words long enough that bigrams match better than whole words).
pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF
        | 0x20000..=0x3FFFF)
}

/// Split text into words and CJK runs (both lowercased by the tokenizer later).
pub(super) fn pieces(text: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    for c in text.chars() {
        let kind = if is_cjk(c) {
            Some(true)
        } else if c.is_alphanumeric() {
            Some(false)
        } else {
            None
        };
        match (kind, out.last_mut()) {
            (Some(k), Some((lk, s))) if *lk == k && !s.is_empty() => s.push(c),
            (Some(k), _) => out.push((k, c.to_string())),
            (None, Some((_, s))) if !s.is_empty() => out.push((false, String::new())),
            (None, _) => {}
        }
    }
    out.retain(|(_, s)| !s.is_empty());
    out
}

pub(super) fn bigrams(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    if chars.len() == 1 {
        return vec![run.to_string()];
    }
    chars.windows(2).map(|w| w.iter().collect()).collect()
}

/// What the index stores for a text: its words, with CJK runs as bigrams.
pub fn index_terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (cjk, s) in pieces(text) {
        if cjk {
            for b in bigrams(&s) {
                out.push_str(&b);
                out.push(' ');
            }
        } else {
            out.push_str(&s);
            out.push(' ');
        }
    }
    out
}

/// A query as the index matches it: its phrases (words between double quotes, which must
/// stand together in that order) and its other words, at most `MAX_TERMS` words in all (a
/// CJK run counts as one). An unclosed quote quotes nothing.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    phrases: Vec<Vec<(bool, String)>>,
    loose: Vec<(bool, String)>,
}

pub(super) fn parse_query(query: &str) -> Parsed {
    let segments: Vec<&str> = query.split('"').collect();
    let closed = segments.len() % 2 == 1;
    let mut left = MAX_TERMS;
    let mut parsed = Parsed::default();
    for (i, seg) in segments.iter().enumerate() {
        let quoted = i % 2 == 1 && (closed || i + 1 < segments.len());
        let mut words: Vec<(bool, String)> = pieces(seg)
            .into_iter()
            .map(|(cjk, w)| (cjk, w.to_lowercase()))
            .collect();
        words.truncate(left);
        left -= words.len();
        if quoted && !words.is_empty() {
            parsed.phrases.push(words);
        } else {
            parsed.loose.extend(words);
        }
    }
    parsed
}

impl Parsed {
    /// Every word, for the snippet's line.
    pub(super) fn words(&self) -> Vec<String> {
        self.phrases
            .iter()
            .flatten()
            .chain(&self.loose)
            .map(|(_, w)| w.clone())
            .collect()
    }

    /// The index's terms of a phrase, in order (a CJK run as its bigrams).
    fn phrase_terms(phrase: &[(bool, String)]) -> Vec<String> {
        phrase
            .iter()
            .flat_map(|(cjk, w)| if *cjk { bigrams(w) } else { vec![w.clone()] })
            .collect()
    }

    /// The query in an index's syntax, given how it writes a run of terms that must
    /// stand together (`phrase`) and a prefix (`prefix`): phrases required, the other
    /// words (and the first phrase) ranked — `P1 AND P2 AND (w1 OR w2 OR P1)`; without
    /// phrases, any of the words. A loose word is a phrase of its terms (a CJK run's
    /// bigrams), a lone CJK character a prefix.
    fn render(
        &self,
        phrase: impl Fn(&[String]) -> String,
        prefix: impl Fn(&str) -> String,
        and: &str,
        or: &str,
    ) -> Option<String> {
        let required: Vec<String> = self
            .phrases
            .iter()
            .map(|p| phrase(&Self::phrase_terms(p)))
            .collect();
        let mut loose: Vec<String> = self
            .loose
            .iter()
            .map(|(cjk, s)| match *cjk && s.chars().count() == 1 {
                true => prefix(s),
                false => phrase(&Self::phrase_terms(&[(*cjk, s.clone())])),
            })
            .collect();
        loose.dedup();
        match (required.is_empty(), loose.is_empty()) {
            (true, true) => None,
            (true, false) => Some(loose.join(or)),
            (false, true) => Some(required.join(and)),
            (false, false) => {
                loose.push(required[0].clone());
                Some(format!("{}{and}({})", required.join(and), loose.join(or)))
            }
        }
    }
}

/// The FTS5 query for a user's query: any of its words (BM25 ranks documents with more
/// of them, and rarer ones, first); a CJK run is a phrase of its bigrams; words in double
/// quotes a phrase that must match. Every term is quoted, so no user text is FTS5 syntax.
pub fn match_query(query: &str) -> Option<String> {
    parse_query(query).render(
        |terms| format!("\"{}\"", terms.join(" ")),
        |t| format!("\"{t}\"*"),
        " AND ",
        " OR ",
    )
}

/// The Postgres tsvector of a text: the terms `index_terms` gives, lowercased, with their
/// positions (so a CJK run's bigrams match as a phrase), written as tsvector input: no
/// text search parser or locale of the database decides what a word is.
pub fn ts_vector(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (i, term) in index_terms(text)
        .split(' ')
        .filter(|t| !t.is_empty())
        .enumerate()
    {
        let term = term.to_lowercase();
        out.push('\'');
        out.push_str(&term.replace('\'', "''"));
        out.push_str("':");
        out.push_str(&(i + 1).min(16383).to_string());
        out.push(' ');
    }
    out
}

/// The Postgres query for a user's query: the same terms as `match_query`, as a tsquery
/// (`|` between terms, a CJK run's bigrams and a phrase's words in sequence with `<->`,
/// one CJK character a prefix, phrases required with `&`), cast to tsquery as written (no
/// parser: `ts_vector`). Terms are letters and digits only, each quoted: no user text is
/// syntax.
pub fn ts_query(query: &str) -> Option<String> {
    let quote = |t: &str| format!("'{}'", t.replace('\'', "''"));
    parse_query(query).render(
        |terms| match terms {
            [one] => quote(one),
            _ => {
                let seq: Vec<String> = terms.iter().map(|t| quote(t)).collect();
                format!("({})", seq.join(" <-> "))
            }
        },
        |t| format!("{}:*", quote(t)),
        " & ",
        " | ",
    )
}
