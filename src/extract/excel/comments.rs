//! Cell comments and charts of an xlsx workbook. Comments: notes (`xl/comments*.xml`, with their authors) and
//! threaded comments (`xl/threadedComments/*.xml`, authors in `xl/persons/`), found
//! through each worksheet's relationships. Excel also writes a note for every threaded
//! comment ("[Threaded comment] Your version of Excel…"): where a cell has threaded
//! comments, they are given instead.

use std::collections::HashMap;

use super::super::package::Package;
use super::super::xml::{attr, walk, Node};
use crate::error::ApiError;

/// A comment on a cell (0-based row and column).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Note {
    pub(super) row: u32,
    pub(super) col: u32,
    pub(super) author: String,
    pub(super) text: String,
}

impl Note {
    /// A note as Excel wrote it (xlsx, xlsb, Excel 2003 XML): its text without the leading
    /// "Author:" Excel starts it with, author and text each on one line.
    pub(super) fn new(row: u32, col: u32, author: &str, text: &str) -> Self {
        let text = text.strip_prefix(&format!("{author}:")).unwrap_or(text);
        Note {
            row,
            col,
            author: one_line(author),
            text: one_line(text),
        }
    }

    /// `B2 (Ann): text`.
    pub(super) fn line(&self) -> String {
        let cell = format!("{}{}", super::col_name(self.col), self.row + 1);
        if self.author.is_empty() {
            format!("{cell}: {}\n", self.text)
        } else {
            format!("{cell} ({}): {}\n", self.author, self.text)
        }
    }
}

/// A part's relationships in document order: (Id, kind, target).
fn relationships(pkg: &mut Package, part: &str) -> Result<Vec<(String, String, String)>, ApiError> {
    let (rels, dir) = super::super::package::rels_of(part);
    super::super::package::relationship_list(pkg, &rels, dir)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Notes of one comments part, in order.
fn notes(xml: &[u8], depth: usize) -> Result<Vec<Note>, ApiError> {
    let mut authors: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let (mut in_author, mut in_t) = (false, false);
    let mut cur: Option<(Option<(u32, u32)>, usize, String)> = None;
    walk(xml, depth, |n| match n {
        Node::Open("author", _) => {
            in_author = true;
            authors.push(String::new());
        }
        Node::Close("author") => in_author = false,
        Node::Open("comment", a) => {
            let at = attr(a, "ref").and_then(super::cells::parse_cell);
            let who = attr(a, "authorId")
                .and_then(|v| v.parse().ok())
                .unwrap_or(usize::MAX);
            cur = Some((at, who, String::new()));
        }
        Node::Open("t", _) => in_t = true,
        Node::Close("t") => in_t = false,
        // Phonetic runs repeat the text in kana: not part of it.
        Node::Open("rPh", _) => in_t = false,
        Node::Text(t) if in_author => {
            if let Some(a) = authors.last_mut() {
                a.push_str(t);
            }
        }
        Node::Text(t) if in_t => {
            if let Some((_, _, s)) = cur.as_mut() {
                s.push_str(t);
            }
        }
        Node::Close("comment") => {
            if let Some((Some((row, col)), who, text)) = cur.take() {
                let author = authors.get(who).map(String::as_str).unwrap_or_default();
                out.push(Note::new(row, col, author, &text));
            }
        }
        _ => {}
    })?;
    Ok(out)
}

/// Threaded comments of one part, with the people who wrote them.
fn threaded(
    xml: &[u8],
    depth: usize,
    people: &HashMap<String, String>,
) -> Result<Vec<Note>, ApiError> {
    let mut out = Vec::new();
    let mut cur: Option<(Option<(u32, u32)>, String, String)> = None;
    let mut in_text = false;
    walk(xml, depth, |n| match n {
        Node::Open("threadedComment", a) => {
            let at = attr(a, "ref").and_then(super::cells::parse_cell);
            let who = attr(a, "personId").unwrap_or("").to_string();
            cur = Some((at, who, String::new()));
        }
        Node::Open("text", _) => in_text = true,
        Node::Close("text") => in_text = false,
        Node::Text(t) if in_text => {
            if let Some((_, _, s)) = cur.as_mut() {
                s.push_str(t);
            }
        }
        Node::Close("threadedComment") => {
            if let Some((Some((row, col)), who, text)) = cur.take() {
                out.push(Note {
                    row,
                    col,
                    author: people.get(&who).map(|p| one_line(p)).unwrap_or_default(),
                    text: one_line(&text),
                });
            }
        }
        _ => {}
    })?;
    Ok(out)
}

/// Every worksheet's comments, by sheet name (cells in row, then column order; a cell's
/// thread in its order), from the sheets' parts (`sheet_parts`).
pub(super) fn read(
    pkg: &mut Package,
    parts: &[(String, String)],
) -> Result<HashMap<String, Vec<Note>>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut out = HashMap::new();
    let mut people: Option<HashMap<String, String>> = None;
    for (name, part) in parts {
        let rels = relationships(pkg, part)?;
        let mut legacy = Vec::new();
        let mut threads = Vec::new();
        for (_, kind, target) in rels {
            if kind == "comments" {
                if let Some(x) = pkg.read(&target)? {
                    if target.ends_with(".bin") {
                        legacy.extend(super::xlsb::notes(&x));
                    } else {
                        legacy.extend(notes(&x, depth)?);
                    }
                }
            } else if kind == "threadedComment" {
                if people.is_none() {
                    people = Some(persons(pkg)?);
                }
                if let Some(x) = pkg.read(&target)? {
                    threads.extend(threaded(
                        &x,
                        depth,
                        people.as_ref().unwrap_or(&HashMap::new()),
                    )?);
                }
            }
        }
        legacy.retain(|n| !threads.iter().any(|t| (t.row, t.col) == (n.row, n.col)));
        legacy.extend(threads);
        legacy.sort_by_key(|n| (n.row, n.col));
        if !legacy.is_empty() {
            out.insert(name.clone(), legacy);
        }
    }
    Ok(out)
}

/// Each sheet's name and its part (`xl/worksheets/sheet1.xml`), in workbook order.
pub(super) fn sheet_parts(pkg: &mut Package) -> Result<Vec<(String, String)>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let Some(wb) = pkg.read("xl/workbook.xml")? else {
        return Ok(Vec::new());
    };
    let mut sheets: Vec<(String, String)> = Vec::new();
    walk(&wb, depth, |n| {
        if let Node::Open("sheet", a) = n {
            if let (Some(name), Some(id)) = (attr(a, "name"), attr(a, "id")) {
                sheets.push((name.to_string(), id.to_string()));
            }
        }
    })?;
    let rels = relationships(pkg, "xl/workbook.xml")?;
    Ok(sheets
        .into_iter()
        .filter_map(|(name, rid)| {
            rels.iter()
                .find(|(id, _, _)| *id == rid)
                .map(|(_, _, part)| (name, part.clone()))
        })
        .collect())
}

/// Every sheet's charts (`chart::read` text), by sheet name: those drawn on a worksheet
/// (its drawing's charts, in the drawing's order) and the chart of a chart sheet; then the
/// text of its drawing's text boxes, shapes and SmartArt under `[Shapes]`.
pub(super) fn charts(pkg: &mut Package, parts: &[(String, String)]) -> Result<Drawn, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut out = HashMap::new();
    let mut described = HashMap::new();
    let mut links = HashMap::new();
    for (name, part) in parts {
        let mut texts = Vec::new();
        let mut alt: Vec<String> = Vec::new();
        let mut linked: Vec<String> = Vec::new();
        for (_, kind, drawing) in relationships(pkg, part)? {
            if kind != "drawing" {
                continue;
            }
            // The drawing's anchors in order, each chart by its relationship id.
            let Some(dx) = pkg.read(&drawing)? else {
                continue;
            };
            let mut ids = Vec::new();
            // Text boxes' and shapes' paragraphs (`xdr:sp/xdr:txBody/a:p`), and SmartArt
            // diagrams by the relationship id of their data part.
            let mut diagrams: Vec<String> = Vec::new();
            let mut text = super::super::diagram::Paragraphs::default();
            let mut body = 0usize;
            // The shape being walked (its `cNvPr` name), and its links' relationship ids
            // (on the shape or on a run of its text), each once.
            let mut shape = String::new();
            let mut link_ids: Vec<(String, String)> = Vec::new();
            walk(&dx, depth, |n| match n {
                Node::Open("chart", a) => {
                    if let Some(id) = attr(a, "id") {
                        ids.push(id.to_string());
                    }
                }
                Node::Open("relIds", a) => {
                    if let Some(id) = attr(a, "dm") {
                        diagrams.push(id.to_string());
                    }
                }
                Node::Open("txBody", _) => body += 1,
                Node::Close("txBody") => body = body.saturating_sub(1),
                // A picture's or shape's description (alt text), and its name.
                Node::Open("cNvPr", a) => {
                    if let Some(d) = attr(a, "descr").filter(|d| !d.trim().is_empty()) {
                        alt.push(d.to_string());
                    }
                    shape = one_line(attr(a, "name").unwrap_or_default());
                }
                Node::Open("hlinkClick", a) => {
                    if let Some(id) = attr(a, "id").filter(|id| !id.is_empty()) {
                        let key = (shape.clone(), id.to_string());
                        if link_ids.len() < 1000 && !link_ids.contains(&key) {
                            link_ids.push(key);
                        }
                    }
                }
                n => text.node(&n, body > 0),
            })?;
            let mut shapes = text.lines;
            let drels = relationships(pkg, &drawing)?;
            for (shape, id) in link_ids {
                // Only a link that leads outside the package (kept as written).
                if let Some((_, _, target)) = drels.iter().find(|(i, kind, target)| {
                    *i == id && kind == "hyperlink" && !target.starts_with('#')
                }) {
                    let name = if shape.is_empty() { "Shape" } else { &shape };
                    linked.push(format!("{name}: {}", one_line(target)));
                }
            }
            for id in ids {
                let Some((_, _, target)) = drels.iter().find(|(i, _, _)| *i == id) else {
                    continue;
                };
                if let Some(cx) = pkg.read(target)? {
                    if let Some(t) = super::super::chart::read(&cx, depth)? {
                        texts.push(t);
                    }
                }
            }
            for id in diagrams {
                let Some((_, _, target)) = drels.iter().find(|(i, _, _)| *i == id) else {
                    continue;
                };
                if let Some(x) = pkg.read(target)? {
                    // A damaged diagram loses its own text, not the workbook's.
                    shapes.extend(super::super::diagram::lines(&x, depth).unwrap_or_default());
                }
            }
            if !shapes.is_empty() {
                let mut t = String::from(SHAPES_HEAD);
                for l in shapes {
                    t.push_str(&l);
                    t.push('\n');
                }
                texts.push(t);
            }
        }
        if !texts.is_empty() {
            out.insert(name.clone(), texts);
        }
        if !alt.is_empty() {
            described.insert(name.clone(), alt);
        }
        if !linked.is_empty() {
            links.insert(name.clone(), linked);
        }
    }
    Ok(Drawn {
        charts: out,
        described,
        links,
    })
}

/// The line over the text of a sheet's text boxes, shapes and SmartArt.
pub(super) const SHAPES_HEAD: &str = "[Shapes]\n";

/// What a workbook's drawings hold, by sheet name.
#[derive(Default)]
pub(super) struct Drawn {
    /// The text of each chart drawn on the sheet (and of its shapes, under `[Shapes]`).
    pub(super) charts: HashMap<String, Vec<String>>,
    /// The descriptions (alt text) of its pictures and shapes.
    pub(super) described: HashMap<String, Vec<String>>,
    /// Where its shapes' hyperlinks lead outside the workbook, each `shape name: address`
    /// (a `[Links]` line, as a cell's is `B12: address`).
    pub(super) links: HashMap<String, Vec<String>>,
}

/// The people of threaded comments: id → display name.
fn persons(pkg: &mut Package) -> Result<HashMap<String, String>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut out = HashMap::new();
    let names: Vec<String> = pkg
        .names()
        .into_iter()
        .filter(|n| n.starts_with("xl/persons/") && n.ends_with(".xml"))
        .collect();
    for n in names {
        if let Some(x) = pkg.read(&n)? {
            walk(&x, depth, |node| {
                if let Node::Open("person", a) = node {
                    if let (Some(id), Some(name)) = (attr(a, "id"), attr(a, "displayName")) {
                        out.insert(id.to_string(), name.to_string());
                    }
                }
            })?;
        }
    }
    Ok(out)
}
