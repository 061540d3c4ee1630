//! What an OpenDocument spreadsheet draws on its sheets besides cells (calamine reads only
//! the cells): the text of its text boxes and shapes (`table:shapes`, or anchored in a
//! cell), by sheet, shown after the sheet's rows under `[Shapes]` as xlsx's are. A
//! drawing's title and description (alt text) and a cell's comment are not shapes.

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
