//! The in-document query: a validated matcher (substring, regex or iregex, with context
//! lines) and grep -n style hits, structured (`GrepLine`) or as text.

use crate::error::ApiError;

/// A validated in-document query.
#[derive(Debug, Clone)]
pub struct Query {
    pub re: regex::Regex,
    pub context: usize,
}

impl Query {
    pub fn new(text: &str, mode: Option<&str>, context: Option<i64>) -> Result<Self, ApiError> {
        if text.is_empty() {
            return Err(
                ApiError::invalid_option("query is empty").with_hint("Give the text to look for.")
            );
        }
        let context = super::parsed::CONTEXT_LINES
            .check(context)?
            .map_or(2, |n| n as usize);
        let (pattern, ci) = match mode.unwrap_or("substring") {
            "substring" => (regex::escape(text), true),
            "regex" => (text.to_string(), false),
            "iregex" => (text.to_string(), true),
            other => {
                return Err(
                    ApiError::invalid_option(format!("unknown query_mode {other:?}"))
                        .with_hint("Use substring (default), regex or iregex."),
                )
            }
        };
        let re = regex::RegexBuilder::new(&pattern)
            .case_insensitive(ci)
            .size_limit(2 * 1024 * 1024)
            .build()
            .map_err(|e| {
                ApiError::invalid_option(format!("query is not a valid regular expression: {e}"))
                    .with_hint(
                        "Fix the pattern, or use query_mode \"substring\" to match it literally.",
                    )
            })?;
        Ok(Self { re, context })
    }
}

/// One output line of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrepLine<'a> {
    /// A matching line and its 1-based number (`N:line`).
    Hit(u64, &'a str),
    /// A line of context around a hit (`N-line`).
    Context(u64, &'a str),
    /// Between two groups (`--`).
    Break,
}

impl GrepLine<'_> {
    /// The line's number, for hits and context.
    pub fn number(&self) -> Option<u64> {
        match self {
            Self::Hit(n, _) | Self::Context(n, _) => Some(*n),
            Self::Break => None,
        }
    }

    /// The line as it is shown, with its newline.
    pub fn render(&self) -> String {
        match self {
            Self::Hit(n, l) => format!("{n}:{l}\n"),
            Self::Context(n, l) => format!("{n}-{l}\n"),
            Self::Break => "--\n".to_string(),
        }
    }
}

/// What a query found: the output lines (hits with their context, groups apart) and the
/// number of matching lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits<'a> {
    pub lines: Vec<GrepLine<'a>>,
    pub count: usize,
}

impl Hits<'_> {
    /// The output as text, grep -n style.
    pub fn text(&self) -> String {
        self.lines.iter().map(GrepLine::render).collect()
    }
}

/// Lines that match, with `q.context` lines around each and overlapping or touching groups
/// merged. `first_line` is the number of `lines[0]` (1-based).
pub fn grep_lines<'a>(lines: &[&'a str], first_line: u64, q: &Query) -> Hits<'a> {
    let hits: Vec<usize> = (0..lines.len())
        .filter(|&i| q.re.is_match(lines[i]))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < hits.len() {
        let start = hits[i].saturating_sub(q.context);
        let mut end = (hits[i] + q.context).min(lines.len() - 1);
        while i + 1 < hits.len() && hits[i + 1].saturating_sub(q.context) <= end + 1 {
            i += 1;
            end = (hits[i] + q.context).min(lines.len() - 1);
        }
        if !out.is_empty() {
            out.push(GrepLine::Break);
        }
        for (j, line) in lines.iter().enumerate().take(end + 1).skip(start) {
            let n = first_line + j as u64;
            out.push(if q.re.is_match(line) {
                GrepLine::Hit(n, line)
            } else {
                GrepLine::Context(n, line)
            });
        }
        i += 1;
    }
    Hits {
        lines: out,
        count: hits.len(),
    }
}

/// Lines that match, grep -n style: `N:line` for hits, `N-line` for context, `--` between
/// groups. `first_line` is the number of `lines[0]` (1-based). Returns the text and the hit count.
pub fn grep(lines: &[&str], first_line: u64, q: &Query) -> (String, usize) {
    let hits = grep_lines(lines, first_line, q);
    (hits.text(), hits.count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grep_groups_with_context() {
        let lines = ["a", "hit one", "b", "c", "d", "e", "f", "HIT two", "g"];
        let q = Query::new("hit", None, Some(1)).unwrap();
        let (out, n) = grep(&lines, 1, &q);
        assert_eq!(n, 2);
        assert_eq!(out, "1-a\n2:hit one\n3-b\n--\n7-f\n8:HIT two\n9-g\n");
        // The same hits, structured: numbers come from the lines, not from the text.
        let hits = grep_lines(&lines, 1, &q);
        assert_eq!(hits.count, 2);
        assert_eq!(hits.lines[1], GrepLine::Hit(2, "hit one"));
        assert_eq!(hits.lines[3], GrepLine::Break);
        assert_eq!(
            hits.lines
                .iter()
                .filter_map(GrepLine::number)
                .collect::<Vec<_>>(),
            vec![1, 2, 3, 7, 8, 9]
        );
        assert!(Query::new("(", Some("regex"), None).is_err());
        assert!(Query::new("x", Some("fuzzy"), None).is_err());
        assert!(Query::new("x", None, Some(21)).is_err());
    }
}
