//! OpenDocument text (.odt) and presentations (.odp), from `content.xml` (and `styles.xml`
//! for list styles, headers and footers). A text document is read as Word is: paragraphs,
//! headings and list items with their numbers, tables where they stand, then footnotes,
//! endnotes, comments, headers and footers under their own markers, with Word's options.
//! A presentation is read as PowerPoint is: `--- Slide N ---`, its frames' text and tables,
//! then `[Notes]`; `pages` selects slides.

use std::collections::HashMap;

use super::blocks::{serve_blocks, Block};
use super::package::Package;
use super::xml::{attr, walk, Node};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::{ApiError, ErrorCode};
use crate::options::{HiddenText, Options};

pub struct OdtExtractor;
pub struct OdpExtractor;

/// One level of a list style (`text:list-level-style-number` / `-bullet`) or of the
/// outline style that numbers headings.
#[derive(Debug, Clone, Default)]
struct ListLevel {
    bullet: Option<String>,
    /// `style:num-format`: `1`, `a`, `A`, `i`, `I`, or empty (no number).
    format: String,
    prefix: String,
    suffix: String,
    display_levels: usize,
    start: u32,
}

/// List styles by name, and the outline style (under the name ""); and the styles that
/// hide (issue #21): text styles with `text:display="none"`, and drawing-page styles with
/// their parent and `presentation:visibility` (a slide's visibility is on its style, which
/// may inherit it).
#[derive(Default)]
struct Styles {
    lists: HashMap<String, Vec<ListLevel>>,
    hiding: std::collections::HashSet<String>,
    pages: HashMap<String, (Option<String>, Option<bool>)>,
}

impl Styles {
    /// Whether the drawing-page style `name` (or the one it inherits from) hides its slide.
    fn page_hidden(&self, name: &str) -> bool {
        let mut name = name;
        for _ in 0..16 {
            match self.pages.get(name) {
                Some((_, Some(hidden))) => return *hidden,
                Some((Some(parent), None)) => name = parent,
                _ => return false,
            }
        }
        false
    }

    fn parse(&mut self, xml: &[u8], depth: usize) -> Result<(), ApiError> {
        let mut cur: Option<String> = None;
        // The open `style:style`: its name and family.
        let mut style: Option<(String, String)> = None;
        walk(xml, depth, |n| match n {
            Node::Open("style", a) => {
                let name = attr(a, "name").unwrap_or("").to_string();
                let family = attr(a, "family").unwrap_or("").to_string();
                if family == "drawing-page" {
                    self.pages
                        .entry(name.clone())
                        .or_insert((attr(a, "parent-style-name").map(str::to_string), None));
                }
                style = Some((name, family));
            }
            Node::Close("style") => style = None,
            Node::Open("text-properties", a) if attr(a, "display") == Some("none") => {
                if let Some((name, _)) = &style {
                    self.hiding.insert(name.clone());
                }
            }
            Node::Open("drawing-page-properties", a) => {
                if let (Some((name, _)), Some(v)) = (&style, attr(a, "visibility")) {
                    if let Some(page) = self.pages.get_mut(name) {
                        page.1 = Some(v == "hidden");
                    }
                }
            }
            Node::Open("list-style", a) => cur = attr(a, "name").map(str::to_string),
            Node::Open("outline-style", _) => cur = Some(String::new()),
            Node::Close("list-style" | "outline-style") => cur = None,
            Node::Open(
                tag @ ("list-level-style-number"
                | "list-level-style-bullet"
                | "outline-level-style"),
                a,
            ) => {
                let Some(name) = &cur else { return };
                let level: usize = attr(a, "level").and_then(|v| v.parse().ok()).unwrap_or(1);
                if !(1..=10).contains(&level) {
                    return;
                }
                let l = ListLevel {
                    bullet: (tag == "list-level-style-bullet")
                        .then(|| attr(a, "bullet-char").unwrap_or("•").to_string()),
                    format: attr(a, "num-format").unwrap_or("").to_string(),
                    prefix: attr(a, "num-prefix").unwrap_or("").to_string(),
                    suffix: attr(a, "num-suffix").unwrap_or("").to_string(),
                    display_levels: attr(a, "display-levels")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(1),
                    start: attr(a, "start-value")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(1),
                };
                let levels = self.lists.entry(name.clone()).or_default();
                if levels.len() < level {
                    levels.resize(level, ListLevel::default());
                }
                levels[level - 1] = l;
            }
            _ => {}
        })
    }
}

/// A number in an ODF `num-format`.
fn format_number(n: u32, format: &str) -> String {
    match format {
        "a" => super::blocks::letters(n).to_lowercase(),
        "A" => super::blocks::letters(n),
        "i" => super::blocks::roman(n).to_lowercase(),
        "I" => super::blocks::roman(n),
        "" => String::new(),
        _ => n.to_string(),
    }
}

/// Counters of one list style (or the outline), by level.
#[derive(Default, Clone)]
struct Counters(Vec<Option<u32>>);

impl Counters {
    /// Counts an item at `level` (1-based) and gives its label (`1.2.`, `•`), `None` when
    /// the level shows no label.
    fn label(&mut self, levels: &[ListLevel], level: usize, start: Option<u32>) -> Option<String> {
        let def = levels.get(level - 1).cloned().unwrap_or_default();
        if self.0.len() < level {
            self.0.resize(level, None);
        }
        self.0[level - 1] = Some(match (start, self.0[level - 1]) {
            (Some(s), _) => s,
            (None, Some(c)) => c.saturating_add(1),
            (None, None) => def.start.max(1),
        });
        self.0.truncate(level);
        if let Some(b) = def.bullet {
            let b = if ('\u{E000}'..='\u{F8FF}').contains(&b.chars().next().unwrap_or(' ')) {
                "•".to_string()
            } else {
                b
            };
            return Some(b);
        }
        if def.format.is_empty() {
            return (!def.prefix.is_empty() || !def.suffix.is_empty())
                .then(|| format!("{}{}", def.prefix, def.suffix).trim().to_string())
                .filter(|s| !s.is_empty());
        }
        let shown = def.display_levels.clamp(1, level);
        let parts: Vec<String> = (level - shown..level)
            .map(|i| {
                let n = self.0[i].unwrap_or(1);
                let f = levels.get(i).map_or("1", |l| l.format.as_str());
                format_number(n, if f.is_empty() { "1" } else { f })
            })
            .collect();
        Some(format!("{}{}{}", def.prefix, parts.join("."), def.suffix))
    }
}

/// What a document's `content.xml` holds, in reading order.
#[derive(Default)]
struct Content {
    /// Body blocks, each with the slide it is on (0 in a text document) and whether it
    /// is in that slide's notes.
    body: Vec<(usize, bool, Block)>,
    footnotes: Vec<Block>,
    endnotes: Vec<Block>,
    comments: Vec<Block>,
    slides: usize,
    /// Slides hidden in the slide show (`presentation:visibility="hidden"`, on the page or
    /// its style).
    hidden_slides: Vec<usize>,
    /// Hidden text in the body (issue #21): the block it is in, how it hides, its text.
    hidden: Vec<(usize, &'static str, String)>,
}

/// An open list: its style and nesting.
struct OpenList {
    style: String,
}

fn parse_content(
    xml: &[u8],
    depth: usize,
    styles: &Styles,
    mode: HiddenText,
) -> Result<Content, ApiError> {
    let mut c = Content::default();
    // What hides text (issue #21): spans whose style says `text:display="none"`, sections
    // displayed `none`, hidden-text fields that are hidden — each open one, whether it
    // hides; and a hidden-paragraph field hides its whole paragraph.
    let mut spans: Vec<bool> = Vec::new();
    let mut sections: Vec<bool> = Vec::new();
    let mut field = false;
    let mut para_hidden = false;
    // The open paragraph's hidden text (how, text), and whether the last text was hidden.
    let mut hidden_here: Vec<(&'static str, String)> = Vec::new();
    let mut last_hidden = false;
    // Open paragraphs (text, label) — a frame's or note's paragraph opens inside another.
    // Open paragraphs: text, and what it is — a heading, a list item or a paragraph.
    let mut paras: Vec<(String, Kind)> = Vec::new();
    let mut tables: Vec<Vec<Vec<Vec<String>>>> = Vec::new(); // rows of cells of paragraphs
    let mut repeat: Vec<usize> = Vec::new(); // the open cells' number-columns-repeated
    let mut lists: Vec<OpenList> = Vec::new();
    let mut counters: HashMap<String, Counters> = HashMap::new();
    let mut outline = Counters::default();
    let mut pending_label: Option<String> = None;
    let mut notes: Vec<String> = Vec::new(); // open notes' classes
    let mut note_paras: Vec<String> = Vec::new();
    let mut annotation: Option<(String, Vec<String>)> = None; // author, paragraphs
    let mut in_creator = false;
    let mut skip = 0usize;
    let (mut slide, mut in_notes) = (0usize, false);
    let no_levels: Vec<ListLevel> = Vec::new();
    walk(xml, depth, |n| {
        if skip > 0 {
            match n {
                Node::Open(..) => skip += 1,
                Node::Close(..) => skip -= 1,
                _ => {}
            }
            return;
        }
        match n {
            // Deleted text of tracked changes, a note's own citation mark, where an
            // annotation ends, what only a form or a field declares.
            Node::Open(
                "tracked-changes" | "note-citation" | "annotation-end" | "sequence-decls"
                | "variable-decls" | "forms" | "page-thumbnail",
                _,
            ) => skip = 1,
            Node::Open("page", a) => {
                c.slides += 1;
                slide = c.slides;
                if attr(a, "visibility") == Some("hidden")
                    || attr(a, "style-name").is_some_and(|s| styles.page_hidden(s))
                {
                    c.hidden_slides.push(slide);
                }
            }
            Node::Open("span", a) => {
                spans.push(attr(a, "style-name").is_some_and(|s| styles.hiding.contains(s)))
            }
            Node::Close("span") => {
                spans.pop();
            }
            Node::Open("section", a) => sections.push(attr(a, "display") == Some("none")),
            Node::Close("section") => {
                sections.pop();
            }
            Node::Open("hidden-text", a) => field = attr(a, "is-hidden") == Some("true"),
            Node::Close("hidden-text") => field = false,
            Node::Open("hidden-paragraph", a) => {
                para_hidden |= attr(a, "is-hidden") == Some("true")
            }
            Node::Open("notes", _) => in_notes = true,
            Node::Close("notes") => in_notes = false,
            Node::Open("note", a) => {
                notes.push(attr(a, "note-class").unwrap_or("footnote").to_string())
            }
            Node::Close("note") => {
                let class = notes.pop().unwrap_or_default();
                let text = std::mem::take(&mut note_paras).join(" ");
                if !text.trim().is_empty() {
                    let list = if class == "endnote" {
                        &mut c.endnotes
                    } else {
                        &mut c.footnotes
                    };
                    list.push(Block::Para(text));
                }
            }
            Node::Open("annotation", _) => annotation = Some((String::new(), Vec::new())),
            Node::Open("creator", _) if annotation.is_some() => in_creator = true,
            Node::Open("date", _) if annotation.is_some() => skip = 1,
            Node::Close("creator") => in_creator = false,
            Node::Close("annotation") => {
                if let Some((author, ps)) = annotation.take() {
                    let text = ps.join(" ");
                    if !text.trim().is_empty() {
                        c.comments.push(Block::Para(if author.trim().is_empty() {
                            text
                        } else {
                            format!("{}: {text}", author.trim())
                        }));
                    }
                }
            }
            Node::Text(t) if in_creator => {
                if let Some((author, _)) = annotation.as_mut() {
                    author.push_str(t);
                }
            }
            Node::Open("list", a) => {
                let style = attr(a, "style-name")
                    .map(str::to_string)
                    .or_else(|| lists.last().map(|l| l.style.clone()))
                    .unwrap_or_default();
                // A new top-level list numbers from its start, unless it says it continues.
                let continues = attr(a, "continue-numbering") == Some("true")
                    || attr(a, "continue-list").is_some();
                if lists.is_empty() && !continues {
                    counters.remove(&style);
                }
                lists.push(OpenList { style });
            }
            Node::Close("list") => {
                lists.pop();
            }
            Node::Open("list-item", a) => {
                let Some(l) = lists.last() else { return };
                let levels = styles.lists.get(&l.style).unwrap_or(&no_levels);
                let start = attr(a, "start-value").and_then(|v| v.parse().ok());
                let label = counters.entry(l.style.clone()).or_default().label(
                    levels,
                    lists.len().min(10),
                    start,
                );
                pending_label = Some(label.unwrap_or_default());
            }
            Node::Open("list-header", _) => pending_label = Some(String::new()),
            Node::Open(tag @ ("p" | "h"), a) => {
                let mut label = pending_label.take();
                let in_list = label.is_some() && !lists.is_empty();
                let mut indent = lists.len().saturating_sub(1);
                let mut heading = None;
                if tag == "h" {
                    let level: usize = attr(a, "outline-level")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(1)
                        .clamp(1, 10);
                    // Markdown: as Word's, Heading 1 is `##` (the title is `#`).
                    heading = Some((level + 1).min(6) as u8);
                    if label.is_none() {
                        if let Some(levels) = styles.lists.get("") {
                            if levels.get(level - 1).is_some_and(|l| !l.format.is_empty()) {
                                // Indented by level, as Word's numbered headings are.
                                label = outline.label(levels, level, None);
                                indent = level - 1;
                            }
                        }
                    }
                }
                let label = label.unwrap_or_default();
                let kind = match heading {
                    Some(h) => Kind::Heading(h, indent as u32, label),
                    None if in_list => Kind::Item(indent as u32, label),
                    None => Kind::Para,
                };
                paras.push((String::new(), kind));
            }
            Node::Text(t) => {
                let how = if sections.iter().any(|h| *h) {
                    Some("a hidden section (text:display none)")
                } else if spans.iter().any(|h| *h) {
                    Some("a style with text:display none")
                } else if field {
                    Some("a hidden-text field")
                } else {
                    None
                };
                let Some(p) = paras.last_mut() else { return };
                let Some(how) = how else {
                    p.0.push_str(t);
                    last_hidden = false;
                    return;
                };
                match hidden_here.last_mut() {
                    Some((h, text)) if *h == how && last_hidden => text.push_str(t),
                    _ => hidden_here.push((how, t.to_string())),
                }
                crate::findings::push_hidden(&mut p.0, t, mode, last_hidden);
                last_hidden = true;
            }
            Node::Open("s", a) => {
                let n: usize = attr(a, "c")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1)
                    .min(1000);
                if let Some(p) = paras.last_mut() {
                    p.0.push_str(&" ".repeat(n));
                }
            }
            Node::Open("tab", _) => {
                if let Some(p) = paras.last_mut() {
                    p.0.push('\t');
                }
            }
            Node::Open("line-break", _) => {
                if let Some(p) = paras.last_mut() {
                    p.0.push('\n');
                }
            }
            Node::Close("p" | "h") => {
                let Some((mut text, kind)) = paras.pop() else {
                    return;
                };
                last_hidden = false;
                if paras.is_empty() && std::mem::take(&mut para_hidden) && !text.trim().is_empty() {
                    // A hidden-paragraph field: the whole paragraph.
                    hidden_here.clear();
                    hidden_here.push(("a hidden-paragraph field", text.clone()));
                    text = match mode {
                        HiddenText::Keep => text,
                        HiddenText::Drop => String::new(),
                        HiddenText::Mark => format!("⟦hidden: {}⟧", text.trim()),
                    };
                }
                // Listed in the body only (as Word's are): placed by the block the paragraph
                // becomes, or the table it is in.
                let listed = annotation.is_none() && notes.is_empty() && slide == 0;
                for (how, t) in hidden_here.drain(..) {
                    if listed && !t.trim().is_empty() {
                        c.hidden.push((c.body.len(), how, t));
                    }
                }
                if let Some((_, ps)) = annotation.as_mut() {
                    ps.push(text.trim().to_string());
                    return;
                }
                if !notes.is_empty() {
                    note_paras.push(text.trim().to_string());
                    return;
                }
                let block = match kind {
                    _ if text.trim().is_empty() => Block::Para(text),
                    Kind::Heading(h, indent, label) => {
                        let text = if label.is_empty() {
                            text
                        } else {
                            format!("{label} {text}")
                        };
                        Block::Heading(h, indent, text)
                    }
                    Kind::Item(level, label) => Block::Item {
                        level,
                        bullet: !label.chars().any(char::is_alphanumeric),
                        label,
                        text,
                    },
                    Kind::Para => Block::Para(text),
                };
                if let Some(cell) = tables
                    .last_mut()
                    .and_then(|t| t.last_mut())
                    .and_then(|r| r.last_mut())
                {
                    cell.push(block.plain());
                    return;
                }
                // A frame's paragraph inside another: its own line, where it stands. On a
                // slide every paragraph is in a frame, and none is inside another.
                if block.plain().trim().is_empty() && (!paras.is_empty() || slide > 0) {
                    return;
                }
                c.body.push((slide, in_notes, block));
            }
            Node::Open("table", _) => tables.push(Vec::new()),
            Node::Open("table-row", _) => {
                if let Some(t) = tables.last_mut() {
                    t.push(Vec::new());
                }
            }
            Node::Open("table-cell" | "covered-table-cell", a) => {
                let n: usize = attr(a, "number-columns-repeated")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1);
                repeat.push(n.clamp(1, 1000));
                if let Some(r) = tables.last_mut().and_then(|t| t.last_mut()) {
                    r.push(Vec::new());
                }
            }
            Node::Close("table-cell" | "covered-table-cell") => {
                let n = repeat.pop().unwrap_or(1);
                if let Some(r) = tables.last_mut().and_then(|t| t.last_mut()) {
                    if let Some(last) = r.last().cloned() {
                        // Repeated cells repeat their content: only when there is some.
                        if !last.iter().all(|p| p.trim().is_empty()) {
                            for _ in 1..n {
                                r.push(last.clone());
                            }
                        }
                    }
                }
            }
            Node::Close("table") => {
                let Some(t) = tables.pop() else { return };
                let mut rows: Vec<Vec<String>> = t
                    .into_iter()
                    .map(|r| {
                        let mut cells: Vec<String> = r
                            .into_iter()
                            .map(|ps| {
                                ps.iter()
                                    .map(|p| p.trim())
                                    .filter(|p| !p.is_empty())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                                    .replace(['\n', '\r', '\t'], " ")
                            })
                            .collect();
                        while cells.last().is_some_and(|c| c.is_empty()) {
                            cells.pop();
                        }
                        cells
                    })
                    .collect();
                while rows.last().is_some_and(|r| r.is_empty()) {
                    rows.pop();
                }
                match tables
                    .last_mut()
                    .and_then(|t| t.last_mut())
                    .and_then(|r| r.last_mut())
                {
                    Some(cell) => cell.extend(rows.iter().map(|r| r.join(" | "))),
                    None if !rows.is_empty() => c.body.push((slide, in_notes, Block::Table(rows))),
                    None => {}
                }
            }
            _ => {}
        }
    })?;
    Ok(c)
}

/// What an open paragraph is: a heading (Markdown level, the list level its number is
/// indented by, the number), a list item (level, label) or a plain paragraph.
enum Kind {
    Heading(u8, u32, String),
    Item(u32, String),
    Para,
}

/// Paragraphs of the page headers and footers in styles.xml (master pages).
fn headers_footers(xml: &[u8], depth: usize) -> Result<(Vec<Block>, Vec<Block>), ApiError> {
    let (mut headers, mut footers) = (Vec::new(), Vec::new());
    let mut within: Option<bool> = None; // Some(true) in a header, Some(false) in a footer
    let mut para: Option<String> = None;
    walk(xml, depth, |n| match n {
        Node::Open("header" | "header-left" | "header-first", _) => within = Some(true),
        Node::Open("footer" | "footer-left" | "footer-first", _) => within = Some(false),
        Node::Close(
            "header" | "header-left" | "header-first" | "footer" | "footer-left" | "footer-first",
        ) => within = None,
        Node::Open("p" | "h", _) if within.is_some() => para = Some(String::new()),
        Node::Text(t) => {
            if let Some(p) = para.as_mut() {
                p.push_str(t);
            }
        }
        Node::Open("tab", _) => {
            if let Some(p) = para.as_mut() {
                p.push('\t');
            }
        }
        Node::Close("p" | "h") => {
            if let (Some(p), Some(h)) = (para.take(), within) {
                let b = Block::Para(p.trim().to_string());
                let list = if h { &mut headers } else { &mut footers };
                if !p.trim().is_empty() && !list.contains(&b) {
                    list.push(b);
                }
            }
        }
        _ => {}
    })?;
    Ok((headers, footers))
}

/// content.xml parsed, with the list styles of both parts.
fn read_content(
    pkg: &mut Package,
    mode: HiddenText,
) -> Result<(Content, Option<Vec<u8>>), ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let content = pkg
        .read("content.xml")?
        .ok_or_else(|| ApiError::new(ErrorCode::Corrupt, "the package has no content.xml"))?;
    let mut styles = Styles::default();
    let styles_xml = pkg.read("styles.xml")?;
    if let Some(x) = &styles_xml {
        styles.parse(x, depth)?;
    }
    styles.parse(&content, depth)?;
    Ok((parse_content(&content, depth, &styles, mode)?, styles_xml))
}

impl Extractor for OdtExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let mut pkg = Package::open(&input.path, limits.package)?;
        let mode = req.hidden_text.unwrap_or(HiddenText::Keep);
        let (content, styles_xml) = read_content(&mut pkg, mode)?;
        let hidden = content.hidden;
        let mut blocks: Vec<Block> = content.body.into_iter().map(|(_, _, b)| b).collect();
        let paragraphs = blocks.iter().filter(|b| b.is_paragraph()).count();
        let tables = blocks
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        let (headers, footers) = match &styles_xml {
            Some(x) => headers_footers(x, limits.package.max_xml_depth)?,
            None => (Vec::new(), Vec::new()),
        };
        for (marker, side) in [
            ("Headers", headers),
            ("Footers", footers),
            ("Footnotes", content.footnotes),
            ("Endnotes", content.endnotes),
            ("Comments", content.comments),
        ] {
            if !side.is_empty() {
                blocks.push(Block::Marker(marker.to_string()));
                blocks.extend(side);
            }
        }
        let mut ex = serve_blocks(&blocks, paragraphs, tables, req)?;
        ex.findings = super::blocks::block_findings(
            blocks.len(),
            hidden.iter().map(|(at, how, text)| {
                (
                    *at,
                    crate::findings::FindingKind::HiddenRun,
                    *how,
                    text.as_str(),
                    false,
                )
            }),
            req,
            ex.next.as_ref(),
            mode,
        )?;
        Ok(ex)
    }
}

impl Extractor for OdpExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars;
        let mut pkg = Package::open(&input.path, limits.package)?;
        let mode = req.hidden_text.unwrap_or(HiddenText::Keep);
        let (content, _) = read_content(&mut pkg, mode)?;
        let total = content.slides as u64;
        let mut warnings = Vec::new();
        let selected = req.select_pages(total, "slide", "presentation", &mut warnings)?;
        let line = |b: &Block| match b {
            Block::Para(_) | Block::Heading(..) | Block::Item { .. } => format!("{}\n", b.plain()),
            Block::Table(rows) => rows
                .iter()
                .map(|r| format!("{}\n", r.join(" | ")))
                .collect(),
            Block::Marker(m) => format!("{m}\n"),
            Block::Chart(c) => c.clone(),
        };
        let blocks: Vec<(u64, usize, String)> = selected
            .iter()
            .map(|&n| {
                let on = |notes: bool| {
                    content
                        .body
                        .iter()
                        .filter(move |(s, in_notes, _)| *s as u64 == n && *in_notes == notes)
                        .map(|(_, _, b)| line(b))
                };
                // A slide hidden in the slide show (issue #21): read as any other (keep),
                // `⟦hidden⟧` in its marker line (mark), or only its marker line (drop).
                let hidden = content.hidden_slides.contains(&(n as usize));
                let mark = super::slides::hidden_slide_mark(hidden, mode);
                let mut block = format!("--- Slide {n}{mark} ---\n");
                let marker = block.len();
                if hidden && mode == HiddenText::Drop {
                    return (n, marker, block);
                }
                block.extend(on(false));
                let notes: String = on(true).collect();
                if !notes.is_empty() {
                    block.push_str("[Notes]\n");
                    block.push_str(&notes);
                }
                (n, marker, block)
            })
            .collect();
        let mut ex = super::slides::serve_slides(blocks, &selected, total, warnings, max_chars)?;
        if req.json() {
            let units = selected
                .iter()
                .map(|&n| {
                    let hidden = content.hidden_slides.contains(&(n as usize));
                    let of = |notes: bool| -> Vec<Block> {
                        content
                            .body
                            .iter()
                            .filter(|(s, in_notes, _)| *s as u64 == n && *in_notes == notes)
                            .map(|(_, _, b)| b.clone())
                            .collect()
                    };
                    let mut typed = Vec::new();
                    if !(hidden && mode == HiddenText::Drop) {
                        let main = of(false);
                        typed = super::blocks::to_model(&main, 0..main.len());
                        let notes = of(true);
                        typed.extend(
                            super::blocks::to_model(&notes, 0..notes.len())
                                .into_iter()
                                .map(|b| {
                                    crate::model::Block::in_part(
                                        crate::model::Content::Note {
                                            text: crate::model::plain_text(&b.content),
                                            author: None,
                                        },
                                        Some("notes"),
                                    )
                                }),
                        );
                    }
                    crate::model::UnitBlocks::new(
                        crate::model::Unit::numbered(crate::model::UnitKind::Slide, n),
                        typed,
                    )
                })
                .collect();
            ex.document = Some(crate::model::Document { units });
        }
        // The hidden slides among those shown.
        let shown = super::slides::slides_shown(&ex);
        ex.findings = selected
            .iter()
            .filter(|&&n| content.hidden_slides.contains(&(n as usize)) && shown(n))
            .map(|&n| super::slides::hidden_slide_finding(n))
            .collect();
        Ok(ex)
    }
}
