//! `content.xml` walked into blocks: paragraphs, headings and list items with their labels,
//! tables where they stand, notes and comments apart, slides and their notes, and the text
//! that hides (issue #21) with the block it is in.

use std::collections::HashMap;

use super::super::blocks::Block;
use super::super::xml::{attr, walk, Node, Skip};
use super::styles::{Counters, ListLevel, Styles};
use crate::error::ApiError;
use crate::options::HiddenText;

/// What a document's `content.xml` holds, in reading order.
#[derive(Default)]
pub(super) struct Content {
    /// Body blocks, each with the slide it is on (0 in a text document) and whether it
    /// is in that slide's notes.
    pub(super) body: Vec<(usize, bool, Block)>,
    pub(super) footnotes: Vec<Block>,
    pub(super) endnotes: Vec<Block>,
    pub(super) comments: Vec<Block>,
    pub(super) slides: usize,
    /// Slides hidden in the slide show (`presentation:visibility="hidden"`, on the page or
    /// its style).
    pub(super) hidden_slides: Vec<usize>,
    /// Hidden text in the body (issue #21): the block it is in, how it hides, its text.
    pub(super) hidden: Vec<(usize, &'static str, String)>,
    /// Embedded objects (`draw:object`: a spreadsheet, a chart, a formula): where their
    /// blocks go in the body, the slide and notes they are on, and their folder in the
    /// package (`mod::read_content` reads them in).
    pub(super) objects: Vec<(usize, usize, bool, String)>,
    /// Each slide's master page (`draw:master-page-name`), and whether the slide shows
    /// what that master draws.
    pub(super) masters: Vec<(String, super::styles::MasterShown)>,
}

/// Drawing objects of ODF (frames, shapes, groups): one set in the line as a character
/// stands between two words, and a drawing's alt text is words of its own.
pub(super) const DRAWINGS: &[&str] = &[
    "frame",
    "custom-shape",
    "rect",
    "ellipse",
    "circle",
    "line",
    "polyline",
    "polygon",
    "regular-polygon",
    "path",
    "connector",
    "caption",
    "measure",
    "g",
    "control",
];

/// An open list: its style and nesting.
struct OpenList {
    style: String,
}

/// `markdown`: links to web and mail addresses (`text:a xlink:href`) are written as
/// Markdown links.
pub(super) fn parse_content(
    xml: &[u8],
    depth: usize,
    styles: &Styles,
    mode: HiddenText,
    markdown: bool,
) -> Result<Content, ApiError> {
    let mut parser = ContentParser::new(styles, mode);
    parser.markdown = markdown;
    walk(xml, depth, |n| parser.node(n))?;
    Ok(parser.c)
}

/// What an open paragraph is: a heading (Markdown level, the list level its number is
/// indented by, the number), a list item (level, label) or a plain paragraph.
enum Kind {
    Heading(u8, u32, String),
    Item(u32, String),
    Para,
}

/// `content.xml` being walked: what it holds so far, and what is open where the walk
/// stands.
struct ContentParser<'a> {
    styles: &'a Styles,
    mode: HiddenText,
    c: Content,
    // What hides text (issue #21): spans whose style says `text:display="none"`, sections
    // displayed `none`, hidden-text fields that are hidden — each open one, whether it
    // hides; and a hidden-paragraph field hides its whole paragraph.
    spans: Vec<bool>,
    sections: Vec<bool>,
    field: bool,
    para_hidden: bool,
    /// The open paragraph's hidden text (how, text), and whether the last text was hidden.
    hidden_here: Vec<(&'static str, String)>,
    last_hidden: bool,
    /// Open paragraphs (text, label) — a frame's or note's paragraph opens inside another.
    /// Open paragraphs: text, and what it is — a heading, a list item or a paragraph.
    paras: Vec<(String, Kind)>,
    /// Rows of cells of paragraphs.
    tables: Vec<Vec<Vec<Vec<String>>>>,
    /// The open cells' number-columns-repeated.
    repeat: Vec<usize>,
    lists: Vec<OpenList>,
    counters: HashMap<String, Counters>,
    outline: Counters,
    pending_label: Option<String>,
    /// Open notes' classes.
    notes: Vec<String>,
    note_paras: Vec<String>,
    /// Author, paragraphs.
    annotation: Option<(String, Vec<String>)>,
    in_creator: bool,
    skip: Skip,
    slide: usize,
    in_notes: bool,
    /// Open drawing objects (`DRAWINGS`), each set in the line as a character or not; the
    /// paragraph (by how many are open) whose next text stands apart from its text
    /// before; where the paragraph's text stood when a drawing's alt text began.
    inline: Vec<(bool, usize)>,
    apart: Option<usize>,
    alt_from: Option<usize>,
    /// Links are written as Markdown links; the open link (`text:a`): its paragraph (by
    /// index), where its text starts there, its address when it is one to write.
    markdown: bool,
    link: Option<(usize, usize, Option<String>)>,
}

impl<'a> ContentParser<'a> {
    fn new(styles: &'a Styles, mode: HiddenText) -> Self {
        Self {
            styles,
            mode,
            c: Content::default(),
            spans: Vec::new(),
            sections: Vec::new(),
            field: false,
            para_hidden: false,
            hidden_here: Vec::new(),
            last_hidden: false,
            paras: Vec::new(),
            tables: Vec::new(),
            repeat: Vec::new(),
            lists: Vec::new(),
            counters: HashMap::new(),
            outline: Counters::default(),
            pending_label: None,
            notes: Vec::new(),
            note_paras: Vec::new(),
            annotation: None,
            in_creator: false,
            skip: Skip::default(),
            slide: 0,
            in_notes: false,
            inline: Vec::new(),
            apart: None,
            alt_from: None,
            markdown: false,
            link: None,
        }
    }

    /// One node of `content.xml`.
    fn node(&mut self, n: Node<'_>) {
        if self.skip.passes(&n) {
            return;
        }
        match n {
            // Deleted text of tracked changes, a note's own citation mark, where an
            // annotation ends, what only a form or a field declares.
            Node::Open(
                "tracked-changes" | "note-citation" | "annotation-end" | "sequence-decls"
                | "variable-decls" | "forms" | "page-thumbnail",
                _,
            ) => self.skip.start(),
            Node::Open("page", a) => self.open_page(a),
            // A drawing set in the line as a character (`as-char`) stands between the
            // words on either side; one anchored elsewhere floats, its neighbours touch.
            Node::Open(name, a) if DRAWINGS.contains(&name) => {
                let inline = attr(a, "anchor-type") == Some("as-char");
                if inline && !self.paras.is_empty() {
                    self.apart = Some(self.paras.len());
                }
                self.inline.push((inline, self.paras.len()));
            }
            Node::Close(name) if DRAWINGS.contains(&name) => {
                if self.inline.pop().is_some_and(|d| d.0) && !self.paras.is_empty() {
                    self.apart = Some(self.paras.len());
                }
            }
            // A drawing's own title and description (its alt text, not a title field in
            // its text box) are read, words apart from the text around them.
            Node::Open("title" | "desc", _) if self.in_drawing_itself() => {
                self.alt_from = self.paras.last().map(|p| p.0.len());
                if !self.paras.is_empty() {
                    self.apart = Some(self.paras.len());
                }
            }
            Node::Close("title" | "desc")
                if self.alt_from.is_some() || self.in_drawing_itself() =>
            {
                let grew = self
                    .alt_from
                    .take()
                    .zip(self.paras.last())
                    .is_some_and(|(n, p)| p.0.len() > n);
                if grew {
                    self.apart = Some(self.paras.len());
                } else if self.apart == Some(self.paras.len()) {
                    self.apart = None;
                }
            }
            // An embedded object in the body (not in a note, a comment or hidden text,
            // where its place would be lost).
            Node::Open("object", a)
                if self.notes.is_empty()
                    && self.annotation.is_none()
                    && !self.sections.iter().chain(&self.spans).any(|h| *h) =>
            {
                if let Some(href) = attr(a, "href") {
                    self.c.objects.push((
                        self.c.body.len(),
                        self.slide,
                        self.in_notes,
                        href.to_string(),
                    ));
                }
            }
            Node::Open("span", a) => self
                .spans
                .push(attr(a, "style-name").is_some_and(|s| self.styles.hiding.contains(s))),
            Node::Close("span") => {
                self.spans.pop();
            }
            Node::Open("section", a) => self.sections.push(attr(a, "display") == Some("none")),
            Node::Close("section") => {
                self.sections.pop();
            }
            Node::Open("hidden-text", a) => self.field = attr(a, "is-hidden") == Some("true"),
            Node::Close("hidden-text") => self.field = false,
            Node::Open("hidden-paragraph", a) => {
                self.para_hidden |= attr(a, "is-hidden") == Some("true")
            }
            Node::Open("notes", _) => self.in_notes = true,
            Node::Close("notes") => self.in_notes = false,
            Node::Open("note", a) => self
                .notes
                .push(attr(a, "note-class").unwrap_or("footnote").to_string()),
            Node::Close("note") => self.close_note(),
            Node::Open("annotation", _) => self.annotation = Some((String::new(), Vec::new())),
            Node::Open("creator", _) if self.annotation.is_some() => self.in_creator = true,
            Node::Open("date", _) if self.annotation.is_some() => self.skip.start(),
            Node::Close("creator") => self.in_creator = false,
            Node::Close("annotation") => self.close_annotation(),
            Node::Text(t) if self.in_creator => {
                if let Some((author, _)) = self.annotation.as_mut() {
                    author.push_str(t);
                }
            }
            // A link in the text (`text:a`), for Markdown.
            Node::Open("a", a) if self.markdown => {
                self.link = self.paras.len().checked_sub(1).map(|i| {
                    (
                        i,
                        self.paras[i].0.len(),
                        attr(a, "href")
                            .filter(|u| crate::extract::markdown::linkable(u))
                            .map(str::to_string),
                    )
                });
            }
            Node::Close("a") => {
                if let Some((i, start, Some(url))) = self.link.take() {
                    if i + 1 == self.paras.len() {
                        crate::extract::markdown::link_tail(&mut self.paras[i].0, start, &url);
                    }
                }
            }
            Node::Open("list", a) => self.open_list(a),
            Node::Close("list") => {
                self.lists.pop();
            }
            Node::Open("list-item", a) => self.list_item(a),
            Node::Open("list-header", _) => self.pending_label = Some(String::new()),
            Node::Open(tag @ ("p" | "h"), a) => self.open_paragraph(tag, a),
            Node::Text(t) => self.text(t),
            Node::Open("s", a) => {
                let n: usize = attr(a, "c")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1)
                    .min(1000);
                if let Some(p) = self.paras.last_mut() {
                    p.0.push_str(&" ".repeat(n));
                }
            }
            Node::Open("tab", _) => {
                if let Some(p) = self.paras.last_mut() {
                    p.0.push('\t');
                }
            }
            Node::Open("line-break", _) => {
                if let Some(p) = self.paras.last_mut() {
                    p.0.push('\n');
                }
            }
            Node::Close("p" | "h") => self.close_paragraph(),
            Node::Open("table", _) => self.tables.push(Vec::new()),
            Node::Open("table-row", _) => {
                if let Some(t) = self.tables.last_mut() {
                    t.push(Vec::new());
                }
            }
            Node::Open("table-cell" | "covered-table-cell", a) => {
                let n: usize = attr(a, "number-columns-repeated")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1);
                self.repeat.push(n.clamp(1, 1000));
                if let Some(r) = self.tables.last_mut().and_then(|t| t.last_mut()) {
                    r.push(Vec::new());
                }
            }
            Node::Close("table-cell" | "covered-table-cell") => self.close_cell(),
            Node::Close("table") => self.close_table(),
            _ => {}
        }
    }

    /// Whether the walk stands in a drawing itself, not in a paragraph of its text box.
    fn in_drawing_itself(&self) -> bool {
        self.inline.last().is_some_and(|d| d.1 == self.paras.len())
    }

    /// A slide (`draw:page`): counted, and noted when hidden in the slide show.
    fn open_page(&mut self, a: &[(String, String)]) {
        self.c.slides += 1;
        self.slide = self.c.slides;
        let shows = self.styles.page_shows(attr(a, "style-name"));
        self.c.masters.push((
            attr(a, "master-page-name").unwrap_or_default().to_string(),
            shows,
        ));
        if attr(a, "visibility") == Some("hidden")
            || attr(a, "style-name").is_some_and(|s| self.styles.page_hidden(s))
        {
            self.c.hidden_slides.push(self.slide);
        }
    }

    /// A note ends: its paragraphs one block of the footnotes or the endnotes.
    fn close_note(&mut self) {
        let class = self.notes.pop().unwrap_or_default();
        let text = std::mem::take(&mut self.note_paras).join(" ");
        if !text.trim().is_empty() {
            let list = if class == "endnote" {
                &mut self.c.endnotes
            } else {
                &mut self.c.footnotes
            };
            list.push(Block::Para(text));
        }
    }

    /// A comment ends: its paragraphs one block of the comments, after its author.
    fn close_annotation(&mut self) {
        if let Some((author, ps)) = self.annotation.take() {
            let text = ps.join(" ");
            if !text.trim().is_empty() {
                self.c
                    .comments
                    .push(Block::Para(if author.trim().is_empty() {
                        text
                    } else {
                        format!("{}: {text}", author.trim())
                    }));
            }
        }
    }

    /// A list opens: its style (else its parent list's), its counters reset when it is a
    /// new top-level list.
    fn open_list(&mut self, a: &[(String, String)]) {
        let style = attr(a, "style-name")
            .map(str::to_string)
            .or_else(|| self.lists.last().map(|l| l.style.clone()))
            .unwrap_or_default();
        // A new top-level list numbers from its start, unless it says it continues.
        let continues =
            attr(a, "continue-numbering") == Some("true") || attr(a, "continue-list").is_some();
        if self.lists.is_empty() && !continues {
            self.counters.remove(&style);
        }
        self.lists.push(OpenList { style });
    }

    /// A list item: counted, its label waiting for its paragraph.
    fn list_item(&mut self, a: &[(String, String)]) {
        let no_levels: Vec<ListLevel> = Vec::new();
        let Some(l) = self.lists.last() else { return };
        let levels = self.styles.lists.get(&l.style).unwrap_or(&no_levels);
        let start = attr(a, "start-value").and_then(|v| v.parse().ok());
        let label = self.counters.entry(l.style.clone()).or_default().label(
            levels,
            self.lists.len().min(10),
            start,
        );
        self.pending_label = Some(label.unwrap_or_default());
    }

    /// A paragraph or heading opens: what it is (a heading, numbered by the outline style
    /// when no list numbers it; a list item; a paragraph) and its label.
    fn open_paragraph(&mut self, tag: &str, a: &[(String, String)]) {
        let mut label = self.pending_label.take();
        let in_list = label.is_some() && !self.lists.is_empty();
        let mut indent = self.lists.len().saturating_sub(1);
        let mut heading = None;
        if tag == "h" {
            let level: usize = attr(a, "outline-level")
                .and_then(|v| v.parse().ok())
                .unwrap_or(1)
                .clamp(1, 10);
            // Markdown: as Word's, Heading 1 is `##` (the title is `#`).
            heading = Some((level + 1).min(6) as u8);
            if label.is_none() {
                if let Some(levels) = self.styles.lists.get("") {
                    if levels.get(level - 1).is_some_and(|l| !l.format.is_empty()) {
                        // Indented by level, as Word's numbered headings are.
                        label = self.outline.label(levels, level, None);
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
        self.paras.push((String::new(), kind));
    }

    /// Text, into the open paragraph: as it is, or (in a hidden span, section or field) as
    /// `mode` says, kept for its finding.
    fn text(&mut self, t: &str) {
        if self.apart.is_some() && self.apart == Some(self.paras.len()) {
            self.apart = None;
            if let Some(p) = self.paras.last_mut() {
                let glued = p.0.chars().last().is_some_and(|c| !c.is_whitespace());
                if glued && !t.starts_with(char::is_whitespace) {
                    p.0.push(' ');
                }
            }
        }
        let how = if self.sections.iter().any(|h| *h) {
            Some("a hidden section (text:display none)")
        } else if self.spans.iter().any(|h| *h) {
            Some("a style with text:display none")
        } else if self.field {
            Some("a hidden-text field")
        } else {
            None
        };
        let Some(p) = self.paras.last_mut() else {
            return;
        };
        let Some(how) = how else {
            p.0.push_str(t);
            self.last_hidden = false;
            return;
        };
        match self.hidden_here.last_mut() {
            Some((h, text)) if *h == how && self.last_hidden => text.push_str(t),
            _ => self.hidden_here.push((how, t.to_string())),
        }
        crate::findings::push_hidden(&mut p.0, t, self.mode, self.last_hidden);
        self.last_hidden = true;
    }

    /// A paragraph or heading ends: a hidden-paragraph field applied, its hidden text
    /// placed, and the paragraph into the open comment, note or table cell, or a block of
    /// the body.
    fn close_paragraph(&mut self) {
        if self.apart == Some(self.paras.len()) {
            self.apart = None;
        }
        let Some((mut text, kind)) = self.paras.pop() else {
            return;
        };
        self.last_hidden = false;
        if self.paras.is_empty() && std::mem::take(&mut self.para_hidden) && !text.trim().is_empty()
        {
            // A hidden-paragraph field: the whole paragraph.
            self.hidden_here.clear();
            self.hidden_here
                .push(("a hidden-paragraph field", text.clone()));
            text = match self.mode {
                HiddenText::Keep => text,
                HiddenText::Drop => String::new(),
                HiddenText::Mark => format!("⟦hidden: {}⟧", text.trim()),
            };
        }
        // Listed in the body only (as Word's are): placed by the block the paragraph
        // becomes, or the table it is in.
        let listed = self.annotation.is_none() && self.notes.is_empty() && self.slide == 0;
        for (how, t) in self.hidden_here.drain(..) {
            if listed && !t.trim().is_empty() {
                self.c.hidden.push((self.c.body.len(), how, t));
            }
        }
        if let Some((_, ps)) = self.annotation.as_mut() {
            ps.push(text.trim().to_string());
            return;
        }
        if !self.notes.is_empty() {
            self.note_paras.push(text.trim().to_string());
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
        if let Some(cell) = self
            .tables
            .last_mut()
            .and_then(|t| t.last_mut())
            .and_then(|r| r.last_mut())
        {
            cell.push(block.plain());
            return;
        }
        // A frame's paragraph inside another: its own line, where it stands. On a
        // slide every paragraph is in a frame, and none is inside another.
        if block.plain().trim().is_empty() && (!self.paras.is_empty() || self.slide > 0) {
            return;
        }
        self.c.body.push((self.slide, self.in_notes, block));
    }

    /// A table cell ends: repeated as `number-columns-repeated` says, when it holds
    /// something.
    fn close_cell(&mut self) {
        let n = self.repeat.pop().unwrap_or(1);
        if let Some(r) = self.tables.last_mut().and_then(|t| t.last_mut()) {
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

    /// A table ends: its cells' paragraphs joined, empty cells and rows at the ends left
    /// out, the table a block of the body, or text of the cell that holds it.
    fn close_table(&mut self) {
        let Some(t) = self.tables.pop() else { return };
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
        match self
            .tables
            .last_mut()
            .and_then(|t| t.last_mut())
            .and_then(|r| r.last_mut())
        {
            Some(cell) => cell.extend(rows.iter().map(|r| r.join(" | "))),
            None if !rows.is_empty() => {
                self.c
                    .body
                    .push((self.slide, self.in_notes, Block::Table(rows)))
            }
            None => {}
        }
    }
}
