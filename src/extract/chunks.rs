//! `output: "chunks"`: the typed document a read shows, cut into pieces for retrieval.
//!
//! A chunk holds the blocks under one heading path, at most `chunk_tokens` estimated tokens
//! (the `max_tokens` estimator). A heading starts a chunk (two sections are never joined; a
//! heading right under a heading stays with it while they fit); a sheet, slide or chapter
//! starts one too (a page does not: a paragraph goes on over pages); a part outside the main
//! flow (comments, notes) never shares a chunk with the main flow. A table too large for one
//! chunk is cut between rows, its header rows repeated in each piece (a header larger than
//! half a chunk heads the first piece only); a row is never cut (a row larger than the budget
//! is a chunk of its own). A paragraph or heading larger than the budget is cut between
//! words. Running headers and footers are left out unless `furniture: "keep"`, which gives
//! each a chunk of its own.
//!
//! Each chunk says where its blocks stand in the read's `text` (characters): each block is
//! looked for from where the one before it ended, inside its unit's span and a bounded
//! look-ahead (a paragraph whitespace aside, a table by its cells in order); chunks are cut
//! from the document, never from rendered text.

use crate::model::{plain_text, Block, Chunk, Content, Document, Span, Unit, UnitKind};
use crate::tokens;

/// The chunks of the document a read shows.
pub fn cut(
    doc: &Document,
    text: &str,
    spans: &[Span],
    budget: u64,
    keep_furniture: bool,
) -> Vec<Chunk> {
    let mut c = Cutter {
        budget,
        text,
        units: doc.units.iter().map(|u| u.unit.clone()).collect(),
        spans: {
            // Units and spans come in one order: each looked for from the last one found.
            let mut j = 0;
            doc.units
                .iter()
                .map(|u| {
                    let k = (j..spans.len())
                        .chain(0..j)
                        .find(|&k| spans[k].unit == u.unit)?;
                    j = k + 1;
                    Some((spans[k].body, spans[k].end))
                })
                .collect()
        },
        cursor: 0,
        out: Vec::new(),
        open: Open::default(),
        path: Vec::new(),
        part: None,
        misses: 0,
    };
    for (ui, u) in doc.units.iter().enumerate() {
        // A new sheet, slide or chapter starts a chunk; the next page does not.
        if ui > 0 && u.unit.kind != UnitKind::Page {
            c.flush();
        }
        if let Some((body, _)) = c.spans[ui] {
            c.cursor = c.cursor.max(body);
        }
        c.misses = 0;
        for b in &u.blocks {
            if is_furniture(b) {
                if keep_furniture {
                    // Outside every section, in a chunk of its own.
                    c.flush();
                    c.open.path = Vec::new();
                    let text = plain_text(&b.content);
                    let lines = needles(&text);
                    let at = c.locate(ui, &lines);
                    c.body(text.trim(), Join::Block, ui, at);
                    c.flush();
                }
                continue;
            }
            if b.part != c.part {
                c.flush();
                c.part = b.part.clone();
            }
            c.block(b, ui);
        }
    }
    c.flush();
    c.finish()
}

/// The lines of a block's text to look for, trimmed, without empty ones.
fn needles(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Whether a block is a running header or footer (page furniture).
pub(crate) fn is_furniture(b: &Block) -> bool {
    matches!(b.content, Content::Header { .. } | Content::Footer { .. })
        || matches!(
            b.part.as_deref(),
            Some("headers" | "footers" | "print_headers_footers")
        )
}

/// How a piece joins the one before it in a chunk's text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Join {
    /// A new block: a blank line between.
    Block,
    /// A line of a run of lines, list items or fields: a line break.
    Line,
}

/// The chunk being filled.
#[derive(Default)]
struct Open {
    text: String,
    path: Vec<String>,
    units: Vec<usize>,
    /// Where its located blocks start and end in the read's text (bytes).
    range: Option<(usize, usize)>,
    /// Whether it holds more than headings.
    body: bool,
    /// An upper bound of its estimated tokens: its pieces' and joins' (one more a join,
    /// for two whitespace runs becoming one). Counting the text again at every piece
    /// would make a chunk of many small pieces cost its size squared.
    tokens: u64,
    last: Option<Join>,
}

struct Cutter<'a> {
    budget: u64,
    text: &'a str,
    /// The document's units, and where each one's text stands in `text` (bytes).
    units: Vec<Unit>,
    spans: Vec<Option<(usize, usize)>>,
    /// Where the next block is looked for in the text (bytes).
    cursor: usize,
    out: Vec<(Chunk, Option<(usize, usize)>)>,
    open: Open,
    /// The heading path: (level, text), outermost first.
    path: Vec<(u8, String)>,
    part: Option<String>,
    /// Blocks not found in the text in a row, in this unit.
    misses: usize,
}

impl Cutter<'_> {
    fn path_texts(&self) -> Vec<String> {
        self.path.iter().map(|(_, t)| t.clone()).collect()
    }

    fn flush(&mut self) {
        let open = std::mem::take(&mut self.open);
        self.open.path = self.path_texts();
        if open.text.trim().is_empty() {
            return;
        }
        let tokens = tokens::estimate(&open.text);
        self.out.push((
            Chunk {
                text: open.text,
                heading_path: open.path,
                units: open.units.iter().map(|&i| self.units[i].clone()).collect(),
                start: None,
                end: None,
                tokens,
            },
            open.range,
        ));
    }

    /// What joining a piece of `tokens` adds to the open chunk's bound.
    fn cost(&self, tokens: u64) -> u64 {
        if self.open.text.is_empty() {
            tokens
        } else {
            tokens + JOIN_TOKENS
        }
    }

    /// Whether a piece of `tokens` keeps the open chunk within the budget.
    fn fits(&self, tokens: u64) -> bool {
        self.open.tokens + self.cost(tokens) <= self.budget
    }

    /// Add a piece to the open chunk (the caller checked it fits, or it goes in anyway).
    fn push(&mut self, piece: &str, join: Join, unit: usize, at: Option<(usize, usize)>) {
        let tokens = tokens::estimate(piece);
        self.open.tokens += self.cost(tokens);
        if !self.open.text.is_empty() {
            self.open.text.push_str(separator(self.open.last, join));
        }
        self.open.text.push_str(piece);
        self.open.last = Some(join);
        if self.open.units.last() != Some(&unit) {
            self.open.units.push(unit);
        }
        if let Some((s, e)) = at {
            self.open.range = Some(match self.open.range {
                Some((a, b)) => (a.min(s), b.max(e)),
                None => (s, e),
            });
        }
    }

    /// A piece of body text: in the open chunk if it fits, else in the next one (cut
    /// between words when it is larger than a chunk).
    fn body(&mut self, piece: &str, join: Join, unit: usize, at: Option<(usize, usize)>) {
        let tokens = tokens::estimate(piece);
        if self.fits(tokens) {
            self.push(piece, join, unit, at);
            self.open.body = true;
            return;
        }
        // Only a paragraph larger than a chunk is cut: one that fits an empty chunk goes
        // to the next (leaving a heading above it alone, its path on the next chunk).
        if !self.open.text.is_empty() && tokens <= self.budget {
            self.flush();
            if self.fits(tokens) {
                self.push(piece, join, unit, at);
                self.open.body = true;
                return;
            }
        }
        // Larger than what is left of a chunk: cut between words, each part in a chunk,
        // each part looked for inside the block's place.
        let after = self.cursor;
        if let Some((s, _)) = at {
            self.cursor = s;
        }
        let mut rest = piece;
        while !rest.is_empty() {
            let room = self
                .budget
                .saturating_sub(self.open.tokens + self.cost(0))
                .max(1);
            let n = tokens::prefix_within(rest, room);
            let mut cut = rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i);
            if cut < rest.len() {
                if let Some(ws) = rest[..cut].rfind(char::is_whitespace) {
                    if ws > cut / 2 {
                        cut = ws;
                    }
                }
                if cut == 0 {
                    // Not one character fits beside what the chunk holds: a new chunk.
                    if self.open.body || !self.open.text.is_empty() {
                        self.flush();
                        continue;
                    }
                    cut = rest.chars().next().map_or(rest.len(), char::len_utf8);
                }
            }
            let part = rest[..cut].trim();
            if !part.is_empty() {
                // Looked for as the text has it (a heading's `#` is the rendering's), whole;
                // a part not found has no place (the block's whole place would overlap the
                // others', and its first word alone, which `locate` falls back to for a
                // heading, would be a place of a few characters for a chunk of many).
                let probe = part.trim_start_matches('#').trim_start();
                let part_at = self.locate_loosely(unit, probe);
                self.push(part, join, unit, part_at);
                self.open.body = true;
            }
            rest = rest[cut..].trim_start();
            if !rest.is_empty() {
                self.flush();
            }
        }
        self.cursor = self.cursor.max(after);
    }

    fn block(&mut self, b: &Block, ui: usize) {
        match &b.content {
            Content::Heading { level, text } => {
                let title = one_line(text);
                if title.is_empty() {
                    return;
                }
                let level = (*level).clamp(1, 6);
                let md = format!("{} {title}", "#".repeat(level as usize));
                let tokens = tokens::estimate(&md);
                // A heading right under a heading stays with it (while they fit); after
                // body text, a new section starts a chunk.
                if self.open.body || !self.fits(tokens) {
                    self.flush();
                }
                while self.path.last().is_some_and(|(l, _)| *l >= level) {
                    self.path.pop();
                }
                self.path.push((level, title.clone()));
                self.open.path = self.path_texts();
                let at = self.locate_loosely(ui, &title);
                if tokens > self.budget {
                    // A heading larger than a chunk is cut like a paragraph.
                    self.body(&md, Join::Block, ui, at);
                } else {
                    self.push(&md, Join::Block, ui, at);
                }
            }
            Content::Table {
                rows, header_rows, ..
            } => self.table(rows, *header_rows as usize, ui),
            // A file a message carries, named as its text names it.
            Content::ListItem { text, .. } if b.part.as_deref() == Some("attachments") => {
                let at = self.locate(ui, &needles(text));
                self.body(&format!("Attachments: {}", text.trim()), Join::Line, ui, at);
            }
            content => {
                let Some((md, join)) = render(content) else {
                    return;
                };
                let plain = plain_text(content);
                let at = self
                    .locate_loosely(ui, &plain)
                    .or_else(|| self.locate(ui, &needles(&plain)));
                self.body(&md, join, ui, at);
            }
        }
    }

    /// A table: whole when it fits, else cut between rows with its header rows repeated.
    fn table(&mut self, rows: &[Vec<String>], header_rows: usize, ui: usize) {
        let Some(rows) = grid(rows) else {
            return;
        };
        // A table that marks no header shows its first row as one (a pipe table's header
        // row): that row is what each piece repeats. A table of header rows only is cut as
        // rows.
        let header_rows = match header_rows {
            0 if rows.len() > 1 => 1,
            n if n >= rows.len() && rows.len() > 1 => 0,
            n => n.min(rows.len()),
        };
        let cols = rows[0].len();
        let (head, body) = rows.split_at(header_rows);
        // Whole, in the open chunk or the next one, when it fits in one.
        let whole = crate::extract::markdown::pipe_table(&rows);
        let whole_tokens = tokens::estimate(whole.trim_end());
        if whole_tokens <= self.budget || rows.len() == 1 {
            // (One row larger than a chunk: a chunk of its own.)
            if !self.fits(whole_tokens) {
                self.flush();
            }
            self.table_piece(&rows, 0, ui);
            if whole_tokens > self.budget {
                self.flush();
            }
            return;
        }
        // A piece's tokens: its header's (with the separator line), then each row's line
        // (counted once, not the piece again at every row; a line starts with `|` and ends
        // with its line break, so lines add up); the first row of a piece without a header
        // brings the separator line.
        let head_tokens = tokens::estimate(&crate::extract::markdown::pipe_table(head));
        let separator = tokens::estimate(&crate::extract::markdown::separator(cols));
        let row_tokens =
            |r: &[String]| tokens::estimate(&crate::extract::markdown::pipe_row(r, cols));
        // The header is repeated only while it leaves room for rows (at most half a
        // chunk): a larger one heads the first piece only.
        let repeat = if head_tokens * 2 <= self.budget {
            header_rows
        } else {
            0
        };
        let mut seg: Vec<Vec<String>> = head.to_vec();
        let mut seg_tokens = head_tokens;
        let mut taken = 0; // body rows in seg
                           // The rows looked for in the text: the header with the first piece only.
        let mut skip = 0;
        let mut i = 0;
        while i < body.len() {
            let row = row_tokens(&body[i]) + if seg.is_empty() { separator } else { 0 };
            if self.fits(seg_tokens + row) {
                seg.push(body[i].clone());
                seg_tokens += row;
                taken += 1;
                i += 1;
                continue;
            }
            if taken > 0 {
                self.table_piece(&seg, skip, ui);
                skip = repeat;
                self.flush();
            } else if !self.open.text.is_empty() {
                // Not one row beside what the chunk holds: the next chunk.
                self.flush();
                continue;
            } else {
                // One row (with the header) is larger than a chunk: a chunk of its own.
                seg.push(body[i].clone());
                self.table_piece(&seg, skip, ui);
                skip = repeat;
                self.flush();
                i += 1;
            }
            seg.truncate(repeat);
            seg_tokens = if repeat > 0 { head_tokens } else { 0 };
            taken = 0;
        }
        if taken > 0 {
            self.table_piece(&seg, skip, ui);
        }
    }

    /// Rows of a table (its header rows first) into the open chunk; where they stand in the
    /// text is where their cells do, past the first `skip` rows (a repeated header).
    fn table_piece(&mut self, seg: &[Vec<String>], skip: usize, ui: usize) {
        let md = crate::extract::markdown::pipe_table(seg);
        // The cells as the text has them (a pipe table escapes `|`).
        let cells: Vec<String> = seg[skip..]
            .iter()
            .flatten()
            .filter(|c| !c.is_empty())
            .map(|c| c.replace("\\|", "|"))
            .collect();
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        let at = self.locate(ui, &cells);
        self.push(md.trim_end(), Join::Block, ui, at);
        self.open.body = true;
    }

    /// Where a block whose text runs from `needles`' first to its last stands in the
    /// read's text, from the cursor on inside its unit's span (each needle looked for after
    /// the one before); the cursor moves past it.
    fn locate(&mut self, ui: usize, needles: &[&str]) -> Option<(usize, usize)> {
        let first = needles.first()?;
        let (body, end_of_unit) = self.spans.get(ui).copied().flatten()?;
        if self.misses >= MAX_MISSES {
            return None;
        }
        self.misses += 1; // until found
        let from = self.cursor.max(body);
        let reach = floor(self.text, (from + LOOK_AHEAD).min(end_of_unit));
        let hay = self.text.get(from..reach)?;
        let head = first_words(first);
        if head.is_empty() {
            return None;
        }
        let (start, head_len) = match hay.find(head) {
            Some(p) => (from + p, head.len()),
            // A heading joined from two lines, a cell written otherwise: its first word,
            // nearby (not a paragraph's: a place of a few characters for a block of many).
            None if first.chars().count() <= 150 => {
                let word = head
                    .split_whitespace()
                    .next()
                    .filter(|w| w.chars().count() >= 3)?;
                let near = &hay[..floor(hay, 2_000)];
                (from + near.find(word)?, word.len())
            }
            None => return None,
        };
        // Its end: each needle after the one before, near it (a table's last cell, "1",
        // may stand in an earlier row too), to the last one's end.
        let mut pos = start + head_len;
        for (k, n) in needles.iter().enumerate() {
            let key = if k == 0 { "" } else { first_words(n) };
            let found = if key.is_empty() {
                (k == 0).then_some(start)
            } else {
                let reach = floor(self.text, (pos + n.len() + 1_024).min(end_of_unit));
                self.text
                    .get(pos..reach)
                    .and_then(|h| h.find(key))
                    .map(|p| pos + p)
            };
            let Some(at) = found else { continue };
            pos = pos.max(at + if k == 0 { head_len } else { key.len() });
            // A needle longer than its first words: on to its last ones.
            let tail = last_words(n);
            if n.len() > 40 && !tail.is_empty() {
                let reach = floor(self.text, (at + n.len() + 1_024).min(end_of_unit));
                if let Some(p) = self.text.get(pos..reach).and_then(|h| h.find(tail)) {
                    pos = pos + p + tail.len();
                }
            }
        }
        self.cursor = pos;
        self.misses = 0;
        Some((start, pos))
    }

    /// Where a block's whole text stands in the read's text, whitespace aside (a
    /// paragraph's lines joined by spaces, a word broken by a hyphen at a line's end
    /// joined): from an occurrence of its first word, from the cursor on inside its unit's
    /// span (else before the cursor in it); the cursor moves past it.
    fn locate_loosely(&mut self, ui: usize, block: &str) -> Option<(usize, usize)> {
        let first = block.split_whitespace().next()?;
        let (body, end_of_unit) = self.spans.get(ui).copied().flatten()?;
        if self.misses >= MAX_MISSES {
            return None;
        }
        self.misses += 1; // until found
        let from = self.cursor.max(body);
        // From the cursor on; then from the unit's start up to the cursor: a page whose
        // blocks are in another order than its text (columns drawn row by row, a title
        // drawn after the columns under it; `pdf::columns`).
        let windows = [
            (from, (from + LOOK_AHEAD).min(end_of_unit)),
            (body, from.min(body + LOOK_AHEAD)),
        ];
        for (mut at, end) in windows {
            let reach = floor(self.text, end);
            for _ in 0..20 {
                let Some(p) = self
                    .text
                    .get(at..reach)
                    .and_then(|h| h.find(first))
                    .map(|p| at + p)
                else {
                    break;
                };
                if let Some(len) = loose_match(self.text.get(p..end_of_unit)?, block) {
                    self.cursor = p + len;
                    self.misses = 0;
                    return Some((p, p + len));
                }
                at = p + first.len();
            }
        }
        None
    }

    /// The chunks with their units and character ranges.
    fn finish(self) -> Vec<Chunk> {
        let mut points: Vec<usize> = self
            .out
            .iter()
            .filter_map(|(_, r)| *r)
            .flat_map(|(a, b)| [a, b])
            .collect();
        points.sort_unstable();
        points.dedup();
        let chars = crate::model::to_chars(self.text, &points);
        let at = |b: usize| chars[points.binary_search(&b).unwrap_or(0)];
        self.out
            .into_iter()
            .map(|(mut c, r)| {
                if let Some((a, b)) = r {
                    c.start = Some(at(a));
                    c.end = Some(at(b));
                }
                c
            })
            .collect()
    }
}

/// What a join adds to a chunk's tokens at most: its line breaks (one token), and one for
/// whitespace on either side becoming one run.
const JOIN_TOKENS: u64 = 2;

/// How far past the cursor a block is looked for in the text (bytes, beyond its own
/// length): blocks come in the text's order, and a block not found near it is not found
/// (looking through the whole rest of a large text for each such block would cost its
/// length times their number).
const LOOK_AHEAD: usize = 16_384;

/// Blocks not found in a row after which a unit's others are no longer looked for (a text
/// that renders its blocks otherwise would cost the look-ahead for each).
const MAX_MISSES: usize = 64;

/// The separator between a chunk's last piece and the next.
fn separator(last: Option<Join>, next: Join) -> &'static str {
    match (last, next) {
        (Some(Join::Line), Join::Line) => "\n",
        _ => "\n\n",
    }
}

/// A block's Markdown in a chunk and how it joins the one before (`None`: no text).
fn render(content: &Content) -> Option<(String, Join)> {
    let (md, join) = match content {
        Content::Heading { .. } | Content::Table { .. } => return None,
        Content::Paragraph { text }
        | Content::Header { text }
        | Content::Footer { text }
        | Content::Chart { text } => (text.trim().to_string(), Join::Block),
        Content::Line { text, .. } => (text.trim().to_string(), Join::Line),
        Content::ListItem { level, label, text } => {
            let label = if label.chars().any(char::is_alphanumeric) {
                label.as_str()
            } else {
                "-"
            };
            (
                format!("{}{label} {}", "  ".repeat(*level as usize), text.trim()),
                Join::Line,
            )
        }
        Content::Figure { alt, caption } => {
            let t = caption.as_deref().or(alt.as_deref())?.trim();
            (format!("[Figure: {t}]"), Join::Block)
        }
        Content::Note { text, author } => match author {
            Some(a) => (format!("[Note by {a}] {}", text.trim()), Join::Block),
            None => (format!("[Note] {}", text.trim()), Join::Block),
        },
        Content::Code { text } => (format!("```\n{}\n```", text.trim_end()), Join::Block),
        Content::Field { name, value } if name.is_empty() => (value.trim().to_string(), Join::Line),
        Content::Field { name, value } => (format!("{name}: {}", value.trim()), Join::Line),
    };
    (!md.trim().is_empty()).then_some((md, join))
}

/// A table's rows as a pipe table shows them: cells as Markdown writes them, every row as
/// wide as the widest (a table cut into pieces keeps the whole table's columns); none when
/// every cell is empty.
fn grid(rows: &[Vec<String>]) -> Option<Vec<Vec<String>>> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut r: Vec<String> = r
                .iter()
                .map(|c| crate::extract::markdown::cell_text(c))
                .collect();
            r.resize(cols, String::new());
            r
        })
        .collect();
    (!rows.iter().all(|r| r.iter().all(String::is_empty))).then_some(rows)
}

/// A block as Markdown (a heading `#`, a table as a pipe table, the rest as a chunk shows
/// it), and whether it joins the block before it by a line break rather than a blank line.
pub(crate) fn markdown(content: &Content) -> Option<(String, bool)> {
    match content {
        Content::Heading { level, text } => {
            let title = one_line(text);
            (!title.is_empty()).then(|| {
                (
                    format!("{} {title}", "#".repeat((*level).clamp(1, 6) as usize)),
                    false,
                )
            })
        }
        Content::Table { rows, .. } => {
            let rows = grid(rows)?;
            Some((
                crate::extract::markdown::pipe_table(&rows)
                    .trim_end()
                    .to_string(),
                false,
            ))
        }
        c => render(c).map(|(md, join)| (md, join == Join::Line)),
    }
}

/// Whether `hay` starts with `needle`'s characters in order, whitespace aside on both
/// sides (and a hyphen at a line's end in `hay`): the bytes of `hay` they take.
fn loose_match(hay: &str, needle: &str) -> Option<usize> {
    let mut h = hay.char_indices().peekable();
    let mut end = 0;
    for n in needle.chars().filter(|c| !c.is_whitespace()) {
        loop {
            let (i, c) = h.next()?;
            if c.is_whitespace() {
                continue;
            }
            if c == '-' && n != '-' && h.peek().is_some_and(|(_, c)| *c == '\n' || *c == '\r') {
                continue;
            }
            if c != n {
                return None;
            }
            end = i + c.len_utf8();
            break;
        }
    }
    (end > 0).then_some(end)
}

/// A heading's text on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The start of a needle to look for: its first line, at most 40 characters.
fn first_words(s: &str) -> &str {
    let line = s.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(40) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}

/// The end of a needle to look for: its last line, at most its last 40 characters.
fn last_words(s: &str) -> &str {
    let line = s.lines().last().unwrap_or("").trim();
    let n = line.chars().count();
    match line.char_indices().nth(n.saturating_sub(40)) {
        Some((i, _)) => &line[i..],
        None => line,
    }
}

/// The largest character boundary of `s` at or below `at`.
fn floor(s: &str, at: usize) -> usize {
    let mut i = at.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
