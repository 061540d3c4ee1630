//! Markdown headings of a PDF page (`output: "markdown"`), only where they are clear: a
//! line that is one of the document's bookmark titles on that bookmark's page (its depth
//! the level), or a line drawn wholly in a font clearly larger than the page's body text
//! (the level from how much larger), or a line of its own wholly in bold (a few words, not
//! a sentence, not one of a bold paragraph) or in italic Title Case at about the body's
//! size. Anything else stays a plain line: a bold phrase in a line, a line ending in a
//! comma or semicolon, and OCR'd text, are never promoted.

use std::collections::HashMap;

use pdfium_render::prelude::*;

/// The bookmarks of a document by page number: (title without whitespace, lowercased;
/// level).
#[derive(Debug, Default)]
pub(super) struct Outline(HashMap<u64, Vec<(String, usize)>>);

/// At most this many bookmarks are looked at (a hostile outline can be huge or loop).
const MAX_BOOKMARKS: usize = 10_000;

impl Outline {
    pub(super) fn read(doc: &PdfDocument<'_>) -> Self {
        let mut out: HashMap<u64, Vec<(String, usize)>> = HashMap::new();
        let bookmarks = doc.bookmarks();
        let mut stack = Vec::new();
        if let Some(first) = bookmarks.root() {
            stack.push((first, 1usize));
        }
        let mut seen = 0;
        while let Some((b, depth)) = stack.pop() {
            seen += 1;
            if seen > MAX_BOOKMARKS {
                break;
            }
            if let Some(next) = b.next_sibling() {
                stack.push((next, depth));
            }
            if depth < 6 {
                if let Some(child) = b.first_child() {
                    stack.push((child, depth + 1));
                }
            }
            let page = b.destination().and_then(|d| d.page_index().ok());
            if let (Some(title), Some(page)) = (b.title(), page) {
                let key = squash(&title);
                if !key.is_empty() {
                    out.entry(page as u64 + 1).or_default().push((key, depth));
                }
            }
        }
        Self(out)
    }

    fn on(&self, page: u64) -> &[(String, usize)] {
        self.0.get(&page).map_or(&[], Vec::as_slice)
    }
}

/// A line's letters without whitespace, lowercased: how lines, bookmark titles and text
/// objects are compared (PDFs space words and break runs in many ways).
pub(super) fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| keyed(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Whether a character counts when lines are compared: not whitespace, and not an Arabic
/// alef, which the lam-alef ligature puts before its lam in a text object's text and
/// after it in the line's logical order (`اإلنتاجية` against `الإنتاجية`): left out of
/// both sides, the two compare equal.
pub(super) fn keyed(c: char) -> bool {
    !c.is_whitespace() && !matches!(c, '\u{0622}' | '\u{0623}' | '\u{0625}' | '\u{0627}')
}

/// The level of a heading in a bold font a little larger than the body text, and of one
/// of the body's size, each plus `BOLD`: `pieces` takes such a line only when it reads
/// like a heading on its own (`bold_heading`).
const BOLD_LARGER: usize = BOLD + 3;
const BOLD_BODY: usize = BOLD + 4;
const BOLD: usize = 10;
/// The level of a heading in an italic font of the body's size, plus `ITALIC`: taken only
/// for a Title Case line of its own (`italic_heading`).
const ITALIC_BODY: usize = ITALIC + 4;
const ITALIC: usize = 20;

/// Whether a text object is drawn in a bold font, and whether in an italic one: by its
/// name (`-Bold`, `Black`, `Heavy`, `Demi`; `Italic`, `Oblique`), or for a font without a
/// name, its weight. One name read per object (this runs on every body-size object): the
/// caller reads it.
fn style(font: &PdfFont<'_>, name: &str) -> (bool, bool) {
    let name = name.to_ascii_lowercase();
    if name.is_empty() {
        let heavy = font.weight().is_ok_and(|w| {
            matches!(
                w,
                PdfFontWeight::Weight600
                    | PdfFontWeight::Weight700Bold
                    | PdfFontWeight::Weight800
                    | PdfFontWeight::Weight900
            )
        });
        return (heavy, false);
    }
    style_by_name(&name)
}

/// A font's typeface: its name without a subset's `ABCDEF+` prefix (two subsets of one
/// face are one face; lowercased names too).
fn face(name: &str) -> &str {
    match name.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.bytes().all(|b| b.is_ascii_alphabetic()) => rest,
        _ => name,
    }
}

/// A font's (bold, italic) by its lowercased name.
fn style_by_name(name: &str) -> (bool, bool) {
    let bold = ["bold", "black", "heavy", "demi", "-medi"]
        .iter()
        .any(|w| name.contains(w));
    let italic = name.contains("italic") || name.contains("oblique");
    // TeX's own faces name their weight and shape in a letter code before the design
    // size: `CMBX10`, `SFBX1000` (bold extended), `CMTI10`, `SFTI1000`, `CMSL10` (italic,
    // slanted), `CMBXTI10` (both). Every arXiv paper set in Computer Modern has them.
    let face = face(name);
    let code = face.trim_end_matches(|c: char| c.is_ascii_digit());
    let tex = code.len() < face.len()
        && code.len() <= 8
        && ["cm", "sf", "ec", "lm", "tc"]
            .iter()
            .any(|p| code.starts_with(p));
    let tex_bold = tex && (code.contains("bx") || code == "cmb");
    let tex_italic = tex && ["ti", "sl", "it"].iter().any(|s| code.ends_with(s));
    (bold || tex_bold, italic || tex_italic)
}

/// The text of a page drawn larger than its body text, or in bold, in drawing order:
/// (squashed text, level, size in half points).
fn large_runs(page: &PdfPage<'_>, text_page: &PdfPageText<'_>) -> Vec<Run> {
    let objects = page.objects();
    // The body size: the one that covers the most width (rounded to half points).
    let mut width_by_size: HashMap<i32, f32> = HashMap::new();
    let mut texts = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        let Some(t) = o.as_text_object() else {
            continue;
        };
        let size = t.scaled_font_size().value;
        if !(size.is_finite() && size > 0.0) {
            continue;
        }
        let width = o.bounds().map(|b| b.width().value.abs()).unwrap_or(0.0);
        *width_by_size
            .entry((size * 2.0).round() as i32)
            .or_default() += width;
        texts.push((i, size, width));
    }
    let Some(body) = width_by_size
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(s, _)| *s as f32 / 2.0)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // The body's typeface (the name covering the most width at the body's size), and the
    // runs a little larger than the body in a plain font, by name: headings only when
    // that font is not the body's (a sans subhead over a serif body).
    let mut width_by_font: HashMap<String, f32> = HashMap::new();
    let mut other_font: Vec<(usize, String)> = Vec::new();
    for (i, size, width) in texts {
        let ratio = size / body;
        let Ok(o) = objects.get(i) else { continue };
        let Some(t) = o.as_text_object() else {
            continue;
        };
        let level = match ratio {
            r if r >= 1.6 => 1,
            r if r >= 1.3 => 2,
            r if r >= 1.15 => 3,
            // Bold, a little larger than the body or its size, or italic in its size: a
            // heading when it is a line of its own (`pieces` decides; a bold phrase in a
            // line is not one).
            r if r >= 0.97 => {
                let font = t.font();
                let name = font.name();
                let face = face(&name).to_string();
                let larger = r >= 1.05;
                let style = style(&font, &name);
                if !larger {
                    *width_by_font.entry(face.clone()).or_default() += width;
                }
                match (style, larger) {
                    ((true, _), true) => BOLD_LARGER,
                    ((true, _), false) => BOLD_BODY,
                    ((false, true), _) => ITALIC_BODY,
                    (_, true) if !face.is_empty() => {
                        other_font.push((out.len(), face));
                        BOLD_LARGER
                    }
                    _ => continue,
                }
            }
            _ => continue,
        };
        let text = squash(&text_page.for_object(t));
        if !text.is_empty() {
            out.push((
                text,
                level,
                (size * 2.0).round().clamp(0.0, 65_535.0) as u16,
            ));
        } else if other_font.last().is_some_and(|(k, _)| *k == out.len()) {
            other_font.pop();
        }
    }
    if !other_font.is_empty() {
        let body_font = width_by_font
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(n, _)| n);
        // In the body's own typeface, only a little larger: no heading.
        let drop: std::collections::HashSet<usize> = other_font
            .into_iter()
            .filter(|(_, n)| body_font.as_ref().is_none_or(|b| b == n))
            .map(|(k, _)| k)
            .collect();
        if !drop.is_empty() {
            out = out
                .into_iter()
                .enumerate()
                .filter(|(k, _)| !drop.contains(k))
                .map(|(_, r)| r)
                .collect();
        }
    }
    out
}

/// The page's text objects: (squashed text, box as left, right, bottom, top), in drawing
/// order.
fn object_boxes(page: &PdfPage<'_>, text_page: &PdfPageText<'_>) -> Vec<(String, [f32; 4])> {
    let mut out = Vec::new();
    for o in page.objects().iter() {
        let Some(t) = o.as_text_object() else {
            continue;
        };
        let Ok(b) = o.bounds() else { continue };
        let key = squash(&text_page.for_object(t));
        if !key.is_empty() {
            out.push((
                key,
                [
                    b.left().value,
                    b.right().value,
                    b.bottom().value,
                    b.top().value,
                ],
            ));
        }
    }
    out
}

/// A piece of large (or bold) text: squashed, its level, its size in half points.
type Run = (String, usize, u16);

/// A page's text as headings and lines: each clear heading (its level, its text; a
/// title broken over lines in one size is one heading), the other lines as they are.
pub(super) enum Piece<'a> {
    Heading(usize, String),
    Line(&'a str),
}

/// The page's text as pieces: headings by bookmark or by font size, the rest its lines.
pub(super) fn pieces<'a>(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    number: u64,
    text: &'a str,
    outline: &Outline,
) -> Vec<Piece<'a>> {
    let marks = outline.on(number);
    let runs = large_runs(page, layer);
    if marks.is_empty() && runs.is_empty() {
        return text.split_inclusive('\n').map(Piece::Line).collect();
    }
    let mut cursor = 0; // runs before it are used
    let mut out: Vec<Piece<'a>> = Vec::new();
    // Each piece's line when it is a heading by size made of one line (a name above a
    // byline may turn out to be part of it).
    let mut sized: Vec<Option<&'a str>> = Vec::new();
    // Each piece's level and line when it is a heading by size made of one line.
    let mut by_size_line: Vec<Option<(usize, &'a str)>> = Vec::new();
    // The heading just made, when its level came from its font size (not a bookmark),
    // and the line after it has not come yet: a title broken over lines continues in it.
    let mut open_title: Option<(usize, u16)> = None;
    // The pieces whose line is wholly bold, of about the body's size.
    let mut bold_lines: Vec<(usize, usize, usize, &'a str)> = Vec::new();
    // Non-empty lines so far (bold lines apart only by blank lines are one after another).
    let mut nonblank = 0usize;
    for line in text.split_inclusive('\n') {
        if !line.trim().is_empty() {
            nonblank += 1;
        }
        let key = squash(line);
        let letters = line.chars().filter(|c| c.is_alphabetic()).count();
        // Where the heading starts in the line when a short label in smaller print comes
        // first on its line (`Chapter 1.` before a chapter's title).
        let mut kicker_at = None;
        // The size of the line's largest piece (a title's lines are in one size).
        let mut size = None;
        let (level, by_size) = if key.is_empty() || letters < 2 || line.chars().count() > 150 {
            (None, false)
        } else if let Some((_, l)) = marks.iter().find(|(t, _)| *t == key) {
            (Some(*l), false)
        } else {
            let found = covered(&key, &runs, &mut cursor).or_else(|| {
                let (l, at) = kicker(&key, &runs, &mut cursor)?;
                kicker_at = Some(line_offset(line, at.1));
                Some((l, at.0))
            });
            size = found.map(|f| f.1);
            match found.map(|f| f.0) {
                // More digits than letters: a number (an issue's `제1695호`, `No. 2024/117`),
                // not a heading's words.
                Some(_) if line.chars().filter(char::is_ascii_digit).count() > letters => {
                    (None, false)
                }
                // Large, but an author or date line under the title: no heading (#44
                // item 6). A title (level 1) may hold a date.
                Some(l) if l > 1 && byline(line) => (None, false),
                // Bold only: a line that reads as a heading on its own, never the next
                // line of a title (a bold paragraph is no run of headings).
                Some(l) if l > ITALIC => {
                    bold_lines.push((out.len(), nonblank, l, line));
                    let alone = italic_heading(line) && open_title.is_none();
                    (alone.then_some(l - ITALIC), false)
                }
                Some(l) if l > BOLD => {
                    bold_lines.push((out.len(), nonblank, l, line));
                    // A numbered one (`(1) Scope`) right under a heading is one too.
                    let alone = bold_heading(line) && (open_title.is_none() || numbered(line));
                    (alone.then_some(l - BOLD), false)
                }
                level => (level, true),
            }
        };
        match (level, out.last_mut()) {
            // The next line of a title in the same size: the same heading (a line that
            // starts a numbered section is a heading of its own).
            (Some(l), Some(Piece::Heading(_, title)))
                if by_size
                    && open_title
                        .is_some_and(|t| t.0 == l && same_size(t.1, size.unwrap_or(0)))
                    && !numbered(line)
                    && kicker_at.is_none() =>
            {
                title.push(' ');
                title.push_str(line.trim());
                if let Some(s) = sized.last_mut() {
                    *s = None;
                }
                if let Some(s) = by_size_line.last_mut() {
                    *s = None;
                }
            }
            (Some(l), _) => {
                let line = match kicker_at {
                    Some(at) => {
                        out.push(Piece::Line(&line[..at]));
                        sized.push(None);
                        by_size_line.push(None);
                        &line[at..]
                    }
                    None => line,
                };
                out.push(Piece::Heading(l, line.trim().to_string()));
                sized.push((by_size && l > 1 && !numbered(line)).then_some(line));
                by_size_line.push(by_size.then_some((l, line)));
                open_title = by_size.then_some((l, size.unwrap_or(0)));
            }
            (None, _) => {
                open_title = None;
                out.push(Piece::Line(line));
                sized.push(None);
                by_size_line.push(None);
            }
        }
    }
    labels_are_no_headings(page, layer, &mut out, &by_size_line);
    // Bold (or italic) lines one after another in one size are a bold paragraph, not
    // headings.
    for w in bold_lines.windows(2) {
        if w[1].1 == w[0].1 + 1 && w[1].2 == w[0].2 {
            for &(i, _, _, line) in w {
                out[i] = Piece::Line(line);
            }
        }
    }
    // A short line in a larger size right above a byline (`January 3, 2024`) is its name
    // line, no heading: `Your Name` over the date.
    for i in 0..out.len() {
        let Some(line) = sized[i] else { continue };
        let next = out[i + 1..].iter().find_map(|p| match p {
            Piece::Line(l) if l.trim().is_empty() => None,
            Piece::Line(l) => Some(Some(*l)),
            Piece::Heading(..) => Some(None),
        });
        if line.split_whitespace().count() <= 6 && next.flatten().is_some_and(byline) {
            out[i] = Piece::Line(line);
        }
    }
    // A line ending in a comma or semicolon goes on (a clause, a statement of a listing
    // set larger: `DISABLE;`): no heading.
    let unfinished = |l: &str| l.trim_end().ends_with([',', ';', '，', '；']);
    let single = sized
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, (*l)?)))
        .chain(bold_lines.iter().map(|&(i, _, _, l)| (i, l)));
    let demote: Vec<(usize, &str)> = single
        .filter(|&(i, l)| matches!(out[i], Piece::Heading(..)) && unfinished(l))
        .collect();
    for (i, line) in demote {
        out[i] = Piece::Line(line);
    }
    out
}

/// Labels, not sections: three or more headings by size of one level one after another,
/// each followed by one line before the next, that line not under its heading but above
/// it or beside it (the boxes of a syntax diagram and their notes, a form's field names
/// with their help): plain lines. A heading heads what is under it; a résumé's headings
/// over one line each keep theirs.
fn labels_are_no_headings<'a>(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    out: &mut [Piece<'a>],
    by_size_line: &[Option<(usize, &'a str)>],
) {
    let heads: Vec<usize> = (0..out.len())
        .filter(|&i| by_size_line[i].is_some())
        .collect();
    let note = |a: usize, b: usize| -> Option<&'a str> {
        let mut lines = out[a + 1..b].iter().filter_map(|p| match p {
            Piece::Line(l) if l.trim().is_empty() => None,
            Piece::Line(l) => Some(Some(*l)),
            Piece::Heading(..) => Some(None),
        });
        match (lines.next(), lines.next()) {
            (Some(Some(l)), None) => Some(l),
            _ => None,
        }
    };
    // Runs of such headings (the note after each but the last): (first, last) in `heads`.
    let mut runs = Vec::new();
    let mut k = 0;
    while k < heads.len() {
        let level = by_size_line[heads[k]].map(|(l, _)| l);
        let mut end = k;
        while end + 1 < heads.len()
            && by_size_line[heads[end + 1]].map(|(l, _)| l) == level
            && note(heads[end], heads[end + 1]).is_some()
        {
            end += 1;
        }
        if end >= k + 2 {
            runs.push((k, end));
        }
        k = end + 1;
    }
    if runs.is_empty() {
        return;
    }
    // Only now the objects' boxes are read (few pages have such a run). A line's box:
    // its first object's.
    let boxes = object_boxes(page, layer);
    let first_box = |line: &str| {
        let key = squash(line);
        boxes
            .iter()
            .find(|(k, _)| key.starts_with(k.as_str()))
            .map(|(_, b)| *b)
    };
    let labels: Vec<usize> = runs
        .into_iter()
        .filter(|&(first, last)| {
            (first..last).all(|j| {
                let Some((_, head)) = by_size_line[heads[j]] else {
                    return false;
                };
                let (Some(h), Some(n)) = (
                    first_box(head),
                    note(heads[j], heads[j + 1]).and_then(first_box),
                ) else {
                    return false;
                };
                // [left, right, bottom, top]: the note's top above the heading's, or the
                // note starting right of the heading's end.
                n[3] > h[3] + 0.5 || n[0] >= h[1]
            })
        })
        .flat_map(|(first, last)| heads[first..=last].to_vec())
        .collect();
    for i in labels {
        if let Some((_, line)) = by_size_line[i] {
            out[i] = Piece::Line(line);
        }
    }
}

/// The page's text with its clear headings marked (`## Title`, a blank line around each).
pub(super) fn mark(
    page: &PdfPage<'_>,
    layer: &PdfPageText<'_>,
    number: u64,
    text: &str,
    outline: &Outline,
) -> String {
    let pieces = pieces(page, layer, number, text, outline);
    if pieces.iter().all(|p| matches!(p, Piece::Line(_))) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 64);
    let mut after_heading = false;
    for p in pieces {
        match p {
            Piece::Heading(l, title) => {
                if !out.is_empty() && !out.ends_with("\n\n") {
                    out.push('\n');
                }
                out.push_str(&"#".repeat(l.min(6)));
                out.push(' ');
                out.push_str(&title);
                out.push_str("\n\n");
                after_heading = true;
            }
            Piece::Line(line) => {
                if after_heading && line.trim().is_empty() {
                    continue; // the blank line after a heading is there already
                }
                after_heading = false;
                out.push_str(line);
            }
        }
    }
    if !text.ends_with('\n') && out.ends_with("\n\n") {
        out.truncate(out.len() - 2);
    }
    out
}

/// Whether a wholly bold line of about the body's size reads as a heading on its own: a
/// few words starting with a capital or a number (or a letter of a script without case;
/// an opening bracket before it: `(1)`), not a sentence (no closing `.`, `,`, `;`), not a
/// list item.
fn bold_heading(line: &str) -> bool {
    let t = line.trim();
    let words = t.split_whitespace().count();
    (1..=14).contains(&words)
        && t.chars().count() <= 110
        && t.trim_start_matches(['(', '[', '「', '【', '《', '〈'])
            // A right-to-left line's number comes mirrored: `-2-5 استاندارد کالا`.
            .trim_start_matches(|c| c == '-' && t.chars().any(super::text::is_rtl))
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() && !c.is_lowercase())
        && !t.ends_with(['.', ',', ';'])
        || (numbered(t) && words <= 14 && !t.ends_with([',', ';']))
}

/// Whether a wholly italic line of the body's size reads as a heading on its own: a bold
/// heading's shape, in Title Case (two words or more, each longer than three letters
/// capitalised: `Stainless Steel Self-Locking Nut`), so an italic caption or sentence is
/// not one.
fn italic_heading(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let long: Vec<&&str> = words.iter().filter(|w| w.chars().count() > 3).collect();
    words.len() >= 2
        && !long.is_empty()
        && long.iter().all(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || !c.is_alphabetic())
        })
        && bold_heading(line)
}

/// Whether a line starts like a numbered section (`2.`, `3.1`, `IV.`, `A.`, `Chapter`):
/// a heading of its own, never the second line of the one before.
fn numbered(line: &str) -> bool {
    let t = line.trim_start();
    let first = t.split_whitespace().next().unwrap_or("");
    let lower = first.to_lowercase();
    (first.chars().next().is_some_and(|c| c.is_ascii_digit())
        && first.chars().all(|c| c.is_ascii_digit() || c == '.'))
        || (first.len() <= 5
            && first.ends_with('.')
            && first[..first.len() - 1]
                .chars()
                .all(|c| matches!(c, 'I' | 'V' | 'X' | 'A'..='H')))
        || matches!(lower.as_str(), "chapter" | "part" | "section" | "appendix")
        || {
            // `(1)`, `(12)`, `1)`
            let inner = first.strip_prefix('(').unwrap_or(first);
            inner.strip_suffix(')').is_some_and(|n| {
                !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit())
            })
        }
}

/// Whether a line reads like a byline or a date rather than a heading: a date (`January
/// 3, 2024`, `3 Jan 2024`, `2024-01-03`, `03/01/2024`), an e-mail address, or `by …`.
fn byline(line: &str) -> bool {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = line.trim().to_lowercase();
    if lower.starts_with("by ") || lower.contains('@') {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let year = |w: &str| {
        w.len() == 4
            && w.chars().all(|c| c.is_ascii_digit())
            && (w.starts_with("19") || w.starts_with("20"))
    };
    let month = |w: &str| {
        w.len() >= 3 && MONTHS.iter().any(|m| w.starts_with(m)) && {
            // The month's full name or its abbreviation, not a word that starts like one.
            const FULL: [&str; 12] = [
                "january",
                "february",
                "march",
                "april",
                "may",
                "june",
                "july",
                "august",
                "september",
                "october",
                "november",
                "december",
            ];
            w.len() == 3 || w == "sept" || FULL.contains(&w)
        }
    };
    let day = |w: &str| w.len() <= 2 && w.chars().all(|c| c.is_ascii_digit());
    // A month with a day or year next to it.
    for (i, w) in words.iter().enumerate() {
        if month(w) {
            let near = |j: Option<usize>| {
                j.and_then(|j| words.get(j))
                    .is_some_and(|x| day(x) || year(x))
            };
            if near(i.checked_sub(1)) || near(Some(i + 1)) {
                return true;
            }
        }
    }
    // A numeric date: 2024-01-03, 03/01/2024, 3.1.2024.
    lower.split_whitespace().any(|w| {
        let parts: Vec<&str> = w
            .trim_matches(|c: char| !c.is_ascii_digit())
            .split(['-', '/', '.'])
            .collect();
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            && parts.iter().any(|p| year(p) || p.len() == 2)
            && parts.iter().filter(|p| p.len() <= 2).count() >= 2
    })
}

/// Whether two lines' sizes (half points) are one title's: within about a tenth (a title
/// set to fit may shrink its second line a little: 33 and 30 pt), not a kicker over a
/// title (26 and 32 pt).
fn same_size(a: u16, b: u16) -> bool {
    let (lo, hi) = (a.min(b) as f32, a.max(b) as f32);
    hi > 0.0 && lo / hi >= 0.88
}

/// A line that is a heading by size after a short label in smaller print (`Chapter 1.`
/// set small before a chapter's title, on its line): the heading's level and where it
/// starts in `key` (with the heading's size). The label is at most a third of the line, and the line must end in a
/// large piece (few lines do; only those are tried).
fn kicker(key: &str, runs: &[Run], cursor: &mut usize) -> Option<(usize, (u16, usize))> {
    if !runs
        .iter()
        .any(|(p, l, _)| *l <= 6 && !p.is_empty() && key.ends_with(p.as_str()))
    {
        return None;
    }
    // At most a third of the line and 32 bytes (`Chapter 12.`, `Part IV`), each offset
    // tried against the runs in drawing order only: a hostile page of many runs costs a
    // few passes over them a line, not the search for pieces drawn apart.
    let limit = (key.len() / 3).min(32);
    for (at, _) in key.char_indices().skip(1) {
        if at > limit {
            break;
        }
        if let Some((l, size)) = in_drawing_order(&key[at..], runs, cursor).filter(|f| f.0 <= 6) {
            return Some((l, (size, at)));
        }
    }
    None
}

/// The byte offset in `line` of the character that starts `key[at..]` (`key` its
/// `squash`).
fn line_offset(line: &str, at: usize) -> usize {
    let mut k = 0;
    for (i, c) in line.char_indices() {
        if !keyed(c) {
            continue;
        }
        if k >= at {
            return i;
        }
        k += c.to_lowercase().map(char::len_utf8).sum::<usize>();
    }
    line.len()
}

/// Whether `key` is exactly a run of consecutive large pieces, from `cursor` on; the
/// level of the largest of them and its size. Each piece heads one line at most.
fn covered(key: &str, runs: &[Run], cursor: &mut usize) -> Option<(usize, u16)> {
    if let Some(found) = in_drawing_order(key, runs, cursor) {
        return Some(found);
    }
    drawn_apart(key, runs)
}

/// `covered`'s first look: `key` made of consecutive runs from `cursor` on.
fn in_drawing_order(key: &str, runs: &[Run], cursor: &mut usize) -> Option<(usize, u16)> {
    for start in *cursor..runs.len() {
        if !key.starts_with(runs[start].0.as_str()) {
            continue;
        }
        let (mut len, mut level, mut size) = (0, usize::MAX, 0);
        for (j, (piece, l, sz)) in runs.iter().enumerate().skip(start) {
            if !key[len..].starts_with(piece.as_str()) {
                break;
            }
            len += piece.len();
            level = level.min(*l);
            size = size.max(*sz);
            if len == key.len() {
                // A bold or italic line moves nothing: drawn out of order (a stamp at the
                // top drawn last), it would hide the large headings before it.
                if level <= BOLD {
                    *cursor = j + 1;
                }
                return Some((level, size));
            }
        }
    }
    None
}

/// `covered`'s second look: `key` made of runs drawn anywhere on the page.
fn drawn_apart(key: &str, runs: &[Run]) -> Option<(usize, u16)> {
    // Bounded: a page drawn glyph by glyph is not searched piece by piece for every line.
    if key.len() > 400 || runs.len() > 2_000 {
        return None;
    }
    // Pieces of one line drawn apart (a section's number set in a badge drawn before or
    // after its title, as docling's normal_4pages.pdf has it): the line made of large
    // pieces from anywhere on the page, each the longest that fits, none used twice.
    let mut used = vec![false; runs.len()];
    let (mut len, mut level, mut size) = (0, usize::MAX, 0);
    while len < key.len() {
        let best = runs
            .iter()
            .enumerate()
            .filter(|(j, (piece, _, _))| {
                !used[*j] && !piece.is_empty() && key[len..].starts_with(piece.as_str())
            })
            .max_by_key(|(_, (piece, _, _))| piece.len())?;
        used[best.0] = true;
        len += best.1 .0.len();
        level = level.min(best.1 .1);
        size = size.max(best.1 .2);
    }
    (len == key.len() && used.iter().filter(|u| **u).count() > 1).then_some((level, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bold_and_italic_by_the_font_name_tex_faces_too() {
        for (name, want) in [
            ("aaaaad+sfbx1000", (true, false)),
            ("cmbx12", (true, false)),
            ("cmssbx10", (true, false)),
            ("cmbxti10", (true, true)),
            ("aaaaae+sfti1000", (false, true)),
            ("cmsl10", (false, true)),
            ("nimbusromno9l-medi", (true, false)),
            ("timesnewromanps-boldmt", (true, false)),
            ("helvetica-oblique", (false, true)),
            ("aaaaac+sfrm1000", (false, false)),
            ("cmr10", (false, false)),
            ("cmmi10", (false, false)),
            ("cmtt10", (false, false)),
            ("calibri", (false, false)),
            ("lmroman10-regular", (false, false)),
        ] {
            assert_eq!(style_by_name(name), want, "{name}");
        }
    }

    #[test]
    fn a_small_label_before_a_title_on_its_line_is_no_part_of_it() {
        let runs = vec![("securingandprotectingibmdb2".to_string(), 1, 52)];
        let line = "Chapter 1. Securing and protecting IBM DB2\n";
        let key = squash(line);
        let mut cursor = 0;
        assert_eq!(covered(&key, &runs, &mut cursor), None);
        let (level, (_, at)) = kicker(&key, &runs, &mut cursor).unwrap();
        assert_eq!(level, 1);
        assert_eq!(
            &line[line_offset(line, at)..],
            "Securing and protecting IBM DB2\n"
        );
        // A body line is not a label before a heading: the large piece is not its end, or
        // it is most of the line.
        let mut cursor = 0;
        assert_eq!(
            kicker("securingandprotectingibmdb2data", &runs, &mut cursor),
            None
        );
        let long = "thisisalongsentenceofbodytextthatendsinsecuringandprotectingibmdb2";
        assert_eq!(kicker(long, &runs, &mut cursor), None);
    }

    #[test]
    fn a_title_is_in_one_size() {
        assert!(same_size(66, 60));
        assert!(same_size(24, 24));
        assert!(!same_size(52, 64));
        assert!(!same_size(0, 0));
    }

    #[test]
    fn an_alef_is_left_out_of_the_compared_key() {
        // PDFium's text of the object (lam-alef decomposed alef first) and the line's
        // logical order compare equal.
        assert_eq!(squash("اإلنتاجية"), squash("الإنتاجية"));
        assert_eq!(squash("کاال"), squash("کالا"));
    }

    #[test]
    fn bylines_and_dates_are_no_headings() {
        for yes in [
            "Your Name January 3, 2024",
            "3 Jan 2024",
            "Ada Lovelace, 2024-01-03",
            "Published 03/01/2024",
            "by Charles Babbage",
            "ada@example.org",
        ] {
            assert!(byline(yes), "{yes}");
        }
        for no in [
            "2. Results",
            "Annual Report 2024",
            "March of the Machines",
            "Mayflower Voyages",
            "Section 3.1.2",
            "Introduction",
        ] {
            assert!(!byline(no), "{no}");
        }
    }

    #[test]
    fn a_line_must_be_wholly_large_text() {
        let runs = vec![
            ("introduction".to_string(), 2, 28),
            ("1.1".to_string(), 3, 24),
            ("scope".to_string(), 3, 24),
        ];
        let mut cursor = 0;
        assert_eq!(covered("introduction", &runs, &mut cursor), Some((2, 28)));
        // Body text that merely starts with a heading's words is not a heading.
        assert_eq!(covered("scopeandmore", &runs, &mut cursor), None);
        assert_eq!(covered("1.1scope", &runs, &mut cursor), Some((3, 24)));
        // Used pieces head no second line.
        assert_eq!(covered("introduction", &runs, &mut cursor), None);
        // A line whose pieces were drawn apart (a number in a badge drawn after its title).
        let runs = vec![
            ("들어가며".to_string(), 3, 27),
            ("본문".to_string(), 9, 23),
            ("1".to_string(), 3, 27),
        ];
        let mut cursor = 0;
        assert_eq!(covered("1들어가며", &runs, &mut cursor), Some((3, 27)));
        assert_eq!(covered("1본문이다", &runs, &mut cursor), None);
    }
}
