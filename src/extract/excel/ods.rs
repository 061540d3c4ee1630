//! What an OpenDocument spreadsheet has besides its cells (calamine reads only the
//! cells): the text of its text boxes and shapes (`table:shapes`, or anchored in a cell
//! that is not a string cell: calamine gives a string cell's shapes in its text), by
//! sheet, shown after the sheet's rows under `[Shapes]` as xlsx's are (a drawing's title
//! and description, its alt text, and a cell's comment are not shapes); and its print
//! headers and footers on request, from its master pages.

use std::collections::HashMap;

use super::super::package::Package;
use super::super::xml::{attr, walk, Node};
use crate::error::ApiError;

/// ODF's drawing objects (frames, shapes, groups).
const DRAWINGS: &[&str] = &[
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
];

/// At most this many lines are read from one sheet's shapes.
const MAX_LINES: usize = 1000;

/// By sheet name, the paragraphs of the shapes drawn on it, in document order.
pub(super) fn shapes(pkg: &mut Package) -> Result<HashMap<String, Vec<String>>, ApiError> {
    let Some(xml) = pkg.read("content.xml")? else {
        return Ok(HashMap::new());
    };
    // Most sheets draw nothing: a byte search spares them the walk (every ODF writer
    // names the drawing namespace `draw`).
    if memchr::memmem::find(&xml, b"<draw:").is_none() {
        return Ok(HashMap::new());
    }
    let depth = pkg.limits().max_xml_depth;
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut sheet: Option<String> = None;
    let (mut tables, mut drawing, mut skip) = (0usize, 0usize, 0usize);
    // In a string cell, whose text calamine gives with its shapes' text in it.
    let mut string_cell = false;
    let mut para: Option<String> = None;
    walk(&xml, depth, |n| {
        if skip > 0 {
            match n {
                Node::Open(..) => skip += 1,
                Node::Close(..) => skip -= 1,
                _ => {}
            }
            return;
        }
        match n {
            Node::Open("table", a) => {
                if tables == 0 {
                    sheet = attr(a, "name").map(str::to_string);
                }
                tables += 1;
            }
            Node::Close("table") => {
                tables = tables.saturating_sub(1);
                if tables == 0 {
                    sheet = None;
                }
            }
            Node::Open("annotation", _) => skip = 1,
            Node::Open("table-cell", a) if drawing == 0 => {
                string_cell = attr(a, "value-type") == Some("string");
            }
            Node::Close("table-cell") if drawing == 0 => string_cell = false,
            // A string cell's shapes are in its text already (calamine reads them there).
            Node::Open(name, _) if DRAWINGS.contains(&name) && string_cell && drawing == 0 => {
                skip = 1
            }
            Node::Open(name, _) if DRAWINGS.contains(&name) && sheet.is_some() => drawing += 1,
            Node::Close(name) if DRAWINGS.contains(&name) => drawing = drawing.saturating_sub(1),
            Node::Open("title" | "desc", _) if drawing > 0 => skip = 1,
            Node::Open("p" | "h", _) if drawing > 0 => para = Some(String::new()),
            Node::Text(t) => {
                if let Some(p) = para.as_mut() {
                    p.push_str(t);
                }
            }
            Node::Open("s" | "tab" | "line-break", _) => {
                if let Some(p) = para.as_mut() {
                    p.push(' ');
                }
            }
            Node::Close("p" | "h") => {
                if let (Some(p), Some(s)) = (para.take(), &sheet) {
                    let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                    let lines = out.entry(s.clone()).or_default();
                    if !p.is_empty() && lines.len() < MAX_LINES {
                        lines.push(p);
                    }
                }
            }
            _ => {}
        }
    })?;
    Ok(out)
}

/// Where a sheet's name goes in a master page's line (a `text:sheet-name` field): a
/// character XML text cannot hold.
const SHEET_NAME: &str = "\u{1}";

/// At most this much of a master page's headers and footers is read (every sheet that
/// prints with it repeats them).
const MAX_PRINTED_CHARS: usize = 4000;

/// By sheet name, its print headers and footers (`include_headers_footers`) as xlsx's
/// are given: `[Headers]`/`[Footers]`, each region (left, centre, right) a line, fields as
/// the printed page shows them (`[Page]`, `[Pages]`, `[Date]`, `[Time]`, `[File]`, the
/// sheet's name). A sheet's master page is its table style's (`Default` when it names
/// none); a header or footer that says `style:display="false"` is not printed.
pub(super) fn headers_footers(pkg: &mut Package) -> Result<HashMap<String, String>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let Some(content) = pkg.read("content.xml")? else {
        return Ok(HashMap::new());
    };
    // Table styles' master pages, and each sheet's table style.
    let mut style_master: HashMap<String, String> = HashMap::new();
    let mut sheets: Vec<(String, Option<String>)> = Vec::new();
    let mut tables = 0usize;
    walk(&content, depth, |n| match n {
        Node::Open("style", a) if attr(a, "family") == Some("table") => {
            if let (Some(name), Some(m)) = (attr(a, "name"), attr(a, "master-page-name")) {
                style_master.insert(name.to_string(), m.to_string());
            }
        }
        Node::Open("table", a) => {
            if tables == 0 {
                if let Some(name) = attr(a, "name") {
                    sheets.push((name.to_string(), attr(a, "style-name").map(str::to_string)));
                }
            }
            tables += 1;
        }
        Node::Close("table") => tables = tables.saturating_sub(1),
        _ => {}
    })?;
    let Some(styles) = pkg.read("styles.xml")? else {
        return Ok(HashMap::new());
    };
    let masters = master_pages(&styles, depth)?;
    let mut out = HashMap::new();
    for (sheet, style) in sheets {
        let master = style
            .and_then(|s| style_master.get(&s).cloned())
            .unwrap_or_else(|| "Default".to_string());
        let Some((headers, footers)) = masters.get(&master) else {
            continue;
        };
        let mut text = String::new();
        for (head, lines) in [
            (super::print::HEADERS_HEAD, headers),
            (super::print::FOOTERS_HEAD, footers),
        ] {
            if lines.is_empty() {
                continue;
            }
            text.push_str(head);
            text.push('\n');
            for l in lines {
                text.push_str(&l.replace(SHEET_NAME, &sheet));
                text.push('\n');
            }
        }
        if !text.is_empty() {
            out.insert(sheet, text);
        }
    }
    Ok(out)
}

/// Each master page's header and footer lines (a region or paragraph a line, repeats
/// once), by master page name.
#[allow(clippy::type_complexity)]
fn master_pages(
    xml: &[u8],
    depth: usize,
) -> Result<HashMap<String, (Vec<String>, Vec<String>)>, ApiError> {
    let mut out: HashMap<String, (Vec<String>, Vec<String>)> = HashMap::new();
    let mut master: Option<String> = None;
    // In a header (true) or footer (false) that prints; the paragraph being read.
    let mut within: Option<bool> = None;
    let mut para: Option<String> = None;
    let mut skip = 0usize;
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
            Node::Open("master-page", a) => master = attr(a, "name").map(str::to_string),
            Node::Close("master-page") => master = None,
            Node::Open(
                tag @ ("header" | "header-left" | "header-first" | "footer" | "footer-left"
                | "footer-first"),
                a,
            ) if master.is_some() => {
                if attr(a, "display") == Some("false") {
                    skip = 1;
                } else {
                    within = Some(tag.starts_with("header"));
                }
            }
            Node::Close(
                "header" | "header-left" | "header-first" | "footer" | "footer-left"
                | "footer-first",
            ) => within = None,
            Node::Open("p" | "h", _) if within.is_some() => para = Some(String::new()),
            Node::Open(field, _) if para.is_some() => {
                let said = match field {
                    "sheet-name" => Some(SHEET_NAME),
                    "page-number" => Some("[Page]"),
                    "page-count" => Some("[Pages]"),
                    "date" => Some("[Date]"),
                    "time" => Some("[Time]"),
                    "file-name" => Some("[File]"),
                    "title" => Some("[Title]"),
                    "s" | "tab" | "line-break" => Some(" "),
                    "span" | "a" => None,
                    _ => Some(""),
                };
                if let (Some(s), Some(p)) = (said, para.as_mut()) {
                    p.push_str(s);
                    // A field's own text is what it showed when saved.
                    if !matches!(field, "s" | "tab" | "line-break") {
                        skip = 1;
                    }
                }
            }
            Node::Text(t) => {
                if let Some(p) = para.as_mut() {
                    p.push_str(t);
                }
            }
            Node::Close("p" | "h") => {
                if let (Some(p), Some(header), Some(m)) = (para.take(), within, &master) {
                    let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                    let (h, f) = out.entry(m.clone()).or_default();
                    let held: usize = h.iter().chain(f.iter()).map(String::len).sum();
                    let list = if header { h } else { f };
                    if !p.is_empty()
                        && !list.contains(&p)
                        && list.len() < MAX_LINES
                        && held + p.len() <= MAX_PRINTED_CHARS
                    {
                        list.push(p);
                    }
                }
            }
            _ => {}
        }
    })?;
    Ok(out)
}
