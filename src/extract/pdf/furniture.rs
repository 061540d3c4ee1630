//! Page furniture: running headers, footers and page numbers, found across the pages a
//! read reads. A line among a page's first two or last two lines is furniture when, with
//! each run of digits as `#`, the same line stands at the same place from the same end of
//! other pages: of at least three pages and two in five of those read, or three pages for a
//! running head with its page number (the outermost line, four words or more, the number at
//! its start or end; not `Chapter 3`) (two pages are enough
//! for a line that is only a page number, `Page # of #`, `- # -`, which counts only as the
//! outermost line). A table's row, and a line with more than two numbers (a statement's
//! entries), never are. Plain text keeps them; `output: "json"`
//! gives them as `header`/`footer` blocks; Markdown and chunks leave them out unless
//! `furniture: "keep"`. A page's whole text is never furniture (pages that repeat one
//! text keep it), page numbers aside; a page with a table or other blocks beside its lines
//! is not all text lines.

use std::collections::{HashMap, HashSet};

use crate::model::{Block, Content};

/// The lines found to be furniture at the top and at the bottom of pages (as keys).
#[derive(Debug, Default)]
pub(super) struct Furniture {
    top: HashSet<String>,
    bottom: HashSet<String>,
}

/// Where a furniture line stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Header,
    Footer,
}

/// How many lines at each end of a page are looked at.
const ENDS: usize = 2;

/// A line as pages are compared: Markdown's heading marks left out, lowercased, each run
/// of digits `#`, whitespace runs one space.
fn key(line: &str) -> String {
    let line = line.trim().trim_start_matches('#').trim();
    let mut out = String::with_capacity(line.len());
    let mut last = ' ';
    for c in line.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_digit() {
            '#'
        } else if c.is_whitespace() {
            ' '
        } else {
            c
        };
        if (c == '#' || c == ' ') && last == c {
            continue;
        }
        out.push(c);
        last = c;
    }
    out
}

/// Whether a key reads as a running head with its page number: the number at its start
/// or end, and four words or more besides.
fn running_head(key: &str) -> bool {
    let words: Vec<&str> = key.split(' ').filter(|w| !w.is_empty()).collect();
    let number = |w: &&str| w.contains('#');
    words.len() >= 5
        && (words.first().is_some_and(number) || words.last().is_some_and(number))
        && words.iter().filter(|w| !number(w)).count() >= 4
}

/// A key with a roman page number at its start or end as `#` (front matter's `xi`).
fn roman_ends(key: String) -> String {
    let roman =
        |w: &str| !w.is_empty() && w.len() <= 7 && w.bytes().all(|b| b"ivxlcdm".contains(&b));
    let mut words: Vec<&str> = key.split(' ').collect();
    let n = words.len();
    if n < 2 {
        return key;
    }
    for i in [0, n - 1] {
        if roman(words[i]) {
            words[i] = "#";
        }
    }
    words.join(" ")
}

/// Whether a key is only a page number and the words around one.
fn page_number(key: &str) -> bool {
    key.contains('#')
        && key
            .split(|c: char| !c.is_alphanumeric() && c != '#')
            .filter(|w| !w.is_empty())
            .all(|w| matches!(w, "#" | "page" | "of" | "p" | "seite" | "página" | "pagina"))
}

/// Lines with their index among a page's non-empty lines.
type Numbered<'a> = Vec<(usize, &'a str)>;

/// The non-empty lines at each end of a page: its top and its bottom.
fn ends<'a>(lines: &[&'a str]) -> (Numbered<'a>, Numbered<'a>) {
    let n = lines.len();
    // A short page's lines are at both ends.
    let top: Numbered<'a> = (0..n.min(ENDS)).map(|i| (i, lines[i])).collect();
    let bottom: Numbered<'a> = (n.saturating_sub(ENDS)..n).map(|i| (i, lines[i])).collect();
    (top, bottom)
}

/// A line as furniture is counted: its key with its place from the page's edge (`0:` the
/// outermost line), or none for a line that cannot be furniture — a table's row, a line
/// with more than two numbers in it (a statement's entries differ only in their numbers),
/// or a line that is only a number anywhere but at the very edge.
fn placed(line: &str, from_edge: usize) -> Option<String> {
    if line.trim_start().starts_with('|') {
        return None;
    }
    let k = key(line);
    if k.is_empty() || k.matches('#').count() > 2 {
        return None;
    }
    if from_edge > 0 && page_number(&k) {
        return None;
    }
    Some(format!("{from_edge}:{}", roman_ends(k)))
}

fn non_empty(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.trim().is_empty()).collect()
}

impl Furniture {
    /// The furniture of the pages read, from each page's text.
    pub(super) fn find<'a>(pages: impl IntoIterator<Item = &'a str>) -> Self {
        let (mut top, mut bottom): (HashMap<String, usize>, HashMap<String, usize>) =
            Default::default();
        let mut count = 0usize;
        for text in pages {
            let lines = non_empty(text);
            if lines.is_empty() {
                continue;
            }
            count += 1;
            let (t, b) = ends(&lines);
            let last = lines.len() - 1;
            // Each key once a page at each end.
            for (end, map, top_end) in [(t, &mut top, true), (b, &mut bottom, false)] {
                let keys: HashSet<String> = end
                    .iter()
                    .filter_map(|(i, l)| placed(l, if top_end { *i } else { last - *i }))
                    .collect();
                for k in keys {
                    *map.entry(k).or_default() += 1;
                }
            }
        }
        let keep = |map: HashMap<String, usize>| -> HashSet<String> {
            map.into_iter()
                .filter(|(k, n)| {
                    let bare = k.split_once(':').map_or(k.as_str(), |(_, k)| k);
                    let least = if page_number(bare) { 2 } else { 3 };
                    // A running head with its page number is furniture on fewer pages:
                    // books alternate two heads, and chapters change theirs. Only a line of
                    // four words or more with the number at its start or end (`12 Access
                    // Control in DB2 for i`), not a short one (`Chapter 3`, `Part II`,
                    // `Question 4`, which open pages and are content).
                    let outermost = k.starts_with("0:");
                    *n >= least && (*n * 5 >= count * 2 || (outermost && running_head(bare)))
                })
                .map(|(k, _)| k)
                .collect()
        };
        Self {
            top: keep(top),
            bottom: keep(bottom),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.top.is_empty() && self.bottom.is_empty()
    }

    /// The furniture among `lines` (a page's lines or its blocks' texts, non-empty):
    /// (index, role).
    fn roles(&self, lines: &[&str], nothing_else: bool) -> Vec<(usize, Role)> {
        let (t, b) = ends(lines);
        let Some(last) = lines.len().checked_sub(1) else {
            return Vec::new();
        };
        let is = |set: &HashSet<String>, l: &str, from_edge: usize| {
            placed(l, from_edge).is_some_and(|k| set.contains(&k))
        };
        let mut out: Vec<(usize, Role)> = t
            .into_iter()
            .filter(|(i, l)| is(&self.top, l, *i))
            .map(|(i, _)| (i, Role::Header))
            .collect();
        let headers: Vec<usize> = out.iter().map(|(i, _)| *i).collect();
        out.extend(
            b.into_iter()
                .filter(|(i, l)| is(&self.bottom, l, last - *i) && !headers.contains(i))
                .map(|(i, _)| (i, Role::Footer)),
        );
        // Furniture frames a page's text, it never is all of it: pages whose whole text
        // repeats (the same short page again and again, a scan of one sheet) keep it, but
        // for lines that are only page numbers.
        if nothing_else && out.len() == lines.len() {
            out.retain(|&(i, _)| page_number(&key(lines[i])));
        }
        out
    }

    /// A page's text without its furniture lines (Markdown).
    pub(super) fn strip(&self, text: &str) -> String {
        let lines = non_empty(text);
        let gone: HashSet<usize> = self
            .roles(&lines, true)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        if gone.is_empty() {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        for line in text.split_inclusive('\n') {
            if line.trim().is_empty() {
                out.push_str(line);
                continue;
            }
            if !gone.contains(&i) {
                out.push_str(line);
            }
            i += 1;
        }
        // The blank lines a header left at the top go with it.
        out.trim_start_matches(['\n', '\r']).to_string()
    }

    /// A page's blocks with its furniture lines (and a heading that is one) as header or
    /// footer blocks.
    pub(super) fn mark(&self, blocks: &mut [Block]) {
        let main: Vec<usize> = (0..blocks.len())
            .filter(|&i| {
                blocks[i].part.is_none()
                    && matches!(
                        blocks[i].content,
                        Content::Line { .. } | Content::Heading { .. }
                    )
            })
            .collect();
        let texts: Vec<String> = main
            .iter()
            .map(|&i| crate::model::plain_text(&blocks[i].content))
            .collect();
        let lines: Vec<&str> = texts.iter().map(String::as_str).collect();
        // A page with a table, a figure or other blocks besides its lines is not all
        // furniture, whatever its lines are.
        let nothing_else = main.len()
            == blocks
                .iter()
                .filter(|b| {
                    b.part.is_none() && !crate::model::plain_text(&b.content).trim().is_empty()
                })
                .count();
        for (i, role) in self.roles(&lines, nothing_else) {
            let text = texts[i].trim().to_string();
            blocks[main[i]].content = match role {
                Role::Header => Content::Header { text },
                Role::Footer => Content::Footer { text },
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_repeated_at_page_ends_are_furniture() {
        let words = ["Alpha", "Bravo", "Charlie", "Delta", "Echo"];
        let pages: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                format!(
                    "## Acme Review 2025\n\n{w} starts here.\n{w} ends here.\nPage {} of 5\n",
                    i + 1
                )
            })
            .collect();
        let f = Furniture::find(pages.iter().map(String::as_str));
        assert!(f.top.contains("0:acme review #"), "{f:?}");
        assert!(f.bottom.contains("0:page # of #"), "{f:?}");
        assert_eq!(f.top.len() + f.bottom.len(), 2, "{f:?}");
        assert_eq!(f.strip(&pages[1]), "Bravo starts here.\nBravo ends here.\n");
    }

    #[test]
    fn two_pages_share_only_page_numbers() {
        let pages = ["Dear reader\nOne\n- 1 -\n", "Dear reader\nTwo\n- 2 -\n"];
        let f = Furniture::find(pages);
        assert!(f.top.is_empty(), "{f:?}");
        assert!(f.bottom.contains("0:- # -"), "{f:?}");
        assert!(page_number("page # of #") && !page_number("chapter #"));
    }

    #[test]
    fn numbers_tables_and_entries_are_not_furniture() {
        // A total above the page number, a table's header row, statement entries that
        // differ only in their numbers: none is furniture; the page number is.
        let pages: Vec<String> = (1..=4)
            .map(|n| {
                format!(
                    "| Date | Amount |\n0{n}/03/2024 card payment {n}.50\nBody {n}\n{n}00\n{n}\n"
                )
            })
            .collect();
        let f = Furniture::find(pages.iter().map(String::as_str));
        assert!(f.top.is_empty(), "{f:?}");
        assert_eq!(f.bottom.len(), 1, "{f:?}");
        assert!(f.bottom.contains("0:#"), "{f:?}");
        assert_eq!(
            f.strip(&pages[0]),
            "| Date | Amount |\n01/03/2024 card payment 1.50\nBody 1\n100\n"
        );
        // A short page's last line is at its bottom too.
        let short = [
            "Alpha\nPage 1 of 3\n",
            "Bravo\nPage 2 of 3\n",
            "Page 3 of 3\n",
        ];
        let f = Furniture::find(short);
        assert_eq!(f.strip(short[1]), "Bravo\n");
    }

    #[test]
    fn alternating_heads_with_page_numbers_are_furniture() {
        // A book's sampled pages (docling's redp5110_sampled.pdf): even pages head
        // "N Title of the book", odd ones "Chapter 3. Title of the chapter N", each on
        // fewer than two in five of the pages; front matter numbers its pages in roman.
        let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
        let mut pages: Vec<String> = Vec::new();
        for (n, w) in [2, 4, 10, 28].iter().zip(words) {
            pages.push(format!(
                "{n} Access Control Support in DB2\nBody {w} even.\nMore {w}.\n"
            ));
        }
        for (n, w) in [15, 19, 27].iter().zip(words) {
            pages.push(format!(
                "Chapter 3. Row and Column Access Control {n}\nBody {w} odd.\nMore {w} odd.\n"
            ));
        }
        for (n, w) in ["iii", "xi", "vii"].iter().zip(words) {
            pages.push(format!(
                "Front {w} text.\nMore front {w}.\n(c) Copyright IBM Corp. 2014. All rights reserved. {n}\n"
            ));
        }
        pages.extend(words.map(|w| format!("Plain page {w}.\nIts second line.\nAnd a third.\n")));
        let f = Furniture::find(pages.iter().map(String::as_str));
        assert_eq!(
            f.strip(&pages[1]),
            "Body bravo even.\nMore bravo.\n",
            "{f:?}"
        );
        assert_eq!(f.strip(&pages[5]), "Body bravo odd.\nMore bravo odd.\n");
        assert_eq!(f.strip(&pages[8]), "Front bravo text.\nMore front bravo.\n");
        assert_eq!(f.strip(&pages[12]), pages[12]);
    }

    #[test]
    fn chapter_openings_are_not_furniture() {
        // "Chapter N" opens three of twelve pages: content, not a running head.
        let pages: Vec<String> = (1..=12)
            .map(|n| match n {
                1 | 5 | 9 => format!(
                    "Chapter {}\nIt begins on page {n} of the book.\nMore.\n",
                    n / 4 + 1
                ),
                _ => "Plain page text.\nIts second line.\nAnd a third.\n".to_string(),
            })
            .collect();
        let f = Furniture::find(pages.iter().map(String::as_str));
        assert_eq!(f.strip(&pages[4]), pages[4], "{f:?}");
        assert!(running_head("# access control support in db# for i"));
        assert!(!running_head("chapter #") && !running_head("part # methods"));
    }

    #[test]
    fn a_page_is_never_all_furniture() {
        // Four pages of one short text (a scan of the same sheet, docling's
        // nemotron_multipage.pdf): the lines repeat at the pages' ends, but they are the
        // pages' text; a page number under them still goes.
        let pages: Vec<String> = (1..=4)
            .map(|n| format!("Docling bundles conversion\nJSON and Markdown\npackage\n{n}\n"))
            .collect();
        let f = Furniture::find(pages.iter().map(String::as_str));
        assert_eq!(
            f.strip(&pages[2]),
            "Docling bundles conversion\nJSON and Markdown\npackage\n"
        );
        let same = [
            "One line\nTwo line\n",
            "One line\nTwo line\n",
            "One line\nTwo line\n",
        ];
        let f = Furniture::find(same);
        assert_eq!(f.strip(same[0]), same[0]);
    }
}
