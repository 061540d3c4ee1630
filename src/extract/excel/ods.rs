//! What an OpenDocument spreadsheet has besides its cells (calamine reads only the
//! cells): the text of its text boxes and shapes (`table:shapes`, or anchored in a cell
//! that is not a string cell: calamine gives a string cell's shapes in its text), by
//! sheet, shown after the sheet's rows under `[Shapes]` as xlsx's are (a drawing's title
//! and description, its alt text, and a cell's comment are not shapes); and its print
//! headers and footers on request, from its master pages.

use std::collections::HashMap;

use super::super::package::Package;
use super::super::xml::{attr, walk, Node, Skip};
use crate::error::ApiError;

/// A sheet's start tag (`table:table`, not `table:table-row` and the like).
const TABLE: &[u8] = b"<table:table ";

/// What an ODS has besides its cells, from one read of its `content.xml`: by sheet name,
/// its charts' text (`chart::read_odf`, in document order), its shapes' text as
/// `[Shapes]` blocks, and (`headers`) its print headers and footers.
pub(super) struct Extras {
    pub(super) charts: HashMap<String, Vec<String>>,
    pub(super) shapes: HashMap<String, String>,
    pub(super) printed: HashMap<String, String>,
    /// Number cells shown otherwise than their value (`1,599.99`, `2.50%`, `$3.00`), by
    /// sheet: what the cell shows.
    pub(super) shown: HashMap<String, Shown>,
}

/// A sheet's number cells as they show, by absolute (row, col) (repeated cells share one
/// text).
pub(super) type Shown = HashMap<(u32, u32), std::sync::Arc<str>>;

/// A number's shown text longer than this is no number format's: the value is shown.
const MAX_SHOWN_TEXT: usize = 64;
/// The rows and columns a sheet can have (calamine reads no cell past them).
const MAX_ROWS: u32 = 1 << 20;
const MAX_COLS: u32 = 1 << 14;

/// At most this many chart objects are read from one workbook.
const MAX_CHARTS: usize = 64;

pub(super) fn extras(pkg: &mut Package, headers: bool) -> Result<Extras, ApiError> {
    let Some(content) = pkg.read("content.xml")? else {
        return Ok(Extras {
            charts: HashMap::new(),
            shapes: HashMap::new(),
            printed: HashMap::new(),
            shown: HashMap::new(),
        });
    };
    let charts = charts(pkg, &content)?;
    let shapes = shapes(&content, pkg.limits().max_xml_depth)
        .into_iter()
        .map(|(sheet, lines)| {
            let mut t = String::from(super::comments::SHAPES_HEAD);
            for l in lines {
                t.push_str(&l);
                t.push('\n');
            }
            (sheet, t)
        })
        .collect();
    let printed = if headers {
        headers_footers(pkg, &content)?
    } else {
        HashMap::new()
    };
    let shown = shown(&content, pkg.limits().max_xml_depth)?;
    Ok(Extras {
        charts,
        shapes,
        printed,
        shown,
    })
}

/// Number cells kept as they show, across the workbook (as `biff::MAX_CELLS` for .xls).
const MAX_SHOWN: usize = super::biff::MAX_CELLS;

/// By sheet name, the number cells (`office:value-type` float, percentage or currency)
/// whose text differs from their value: the text the spreadsheet wrote for them, which is
/// the cell as its number format shows it (ODF keeps it beside the value). Dates and times
/// stay ISO, as every other workbook's.
fn shown(xml: &[u8], depth: usize) -> Result<HashMap<String, Shown>, ApiError> {
    let mut out: HashMap<String, Shown> = HashMap::new();
    let mut kept = 0usize;
    // The sheet being walked (tables inside it are not), its row, the open row's repeat,
    // the column, and the open number cell: its value, its text, its repeat.
    let mut sheet: Option<String> = None;
    let mut tables = 0usize;
    let (mut row, mut rows, mut col) = (0u32, 1u32, 0u32);
    let mut cell: Option<(String, String, u32)> = None;
    let (mut paras, mut skip) = (0usize, Skip::default());
    let count = |a: &[(String, String)], name: &str| -> u32 {
        attr(a, name)
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(1)
            .clamp(1, 1 << 20)
    };
    walk(xml, depth, |n| {
        if skip.passes(&n) {
            return;
        }
        match n {
            Node::Open("table", a) => {
                tables += 1;
                if tables == 1 {
                    sheet = attr(a, "name").map(str::to_string);
                    row = 0;
                }
            }
            Node::Close("table") => tables = tables.saturating_sub(1),
            _ if tables != 1 => {}
            // A comment's text, and a shape's anchored in the cell, are not the cell's.
            Node::Open(
                "annotation" | "frame" | "custom-shape" | "rect" | "ellipse" | "circle" | "line"
                | "polyline" | "polygon" | "regular-polygon" | "path" | "connector" | "caption"
                | "measure" | "g" | "control",
                _,
            ) => skip.start(),
            Node::Open("table-row", a) => {
                rows = count(a, "number-rows-repeated");
                col = 0;
            }
            Node::Close("table-row") => row = row.saturating_add(rows),
            Node::Open("table-cell" | "covered-table-cell", a) => {
                let repeat = count(a, "number-columns-repeated");
                cell = match (attr(a, "value-type"), attr(a, "value")) {
                    (Some("float" | "percentage" | "currency"), Some(v)) => {
                        Some((v.to_string(), String::new(), repeat))
                    }
                    _ => {
                        col = col.saturating_add(repeat);
                        None
                    }
                };
            }
            Node::Open("p", _) if cell.is_some() => {
                if let Some((_, text, _)) = cell.as_mut().filter(|_| paras > 0) {
                    text.push('\n');
                }
                paras += 1;
            }
            Node::Text(t) if paras > 0 => {
                if let Some((_, text, _)) = cell.as_mut() {
                    // One byte past the limit says "too long" (see `MAX_SHOWN_TEXT`).
                    if text.len() <= MAX_SHOWN_TEXT {
                        let room = MAX_SHOWN_TEXT + 1 - text.len();
                        let mut end = t.len().min(room);
                        while !t.is_char_boundary(end) {
                            end -= 1;
                        }
                        text.push_str(&t[..end]);
                        if end < t.len() {
                            text.push('\u{1}');
                        }
                    }
                }
            }
            Node::Close("table-cell" | "covered-table-cell") => {
                paras = 0;
                let Some((value, text, repeat)) = cell.take() else {
                    return;
                };
                let text = text.trim();
                let fits = text.len() <= MAX_SHOWN_TEXT && !text.contains('\u{1}');
                if fits && !text.is_empty() && text != value {
                    if let Some(name) = &sheet {
                        let map = out.entry(name.clone()).or_default();
                        let shared: std::sync::Arc<str> = text.into();
                        let rows_end = row.saturating_add(rows).min(MAX_ROWS);
                        let cols_end = col.saturating_add(repeat).min(MAX_COLS);
                        'cells: for r in row..rows_end {
                            for c in col..cols_end {
                                if kept == MAX_SHOWN {
                                    break 'cells;
                                }
                                kept += 1;
                                map.insert((r, c), shared.clone());
                            }
                        }
                    }
                }
                col = col.saturating_add(repeat);
            }
            _ => {}
        }
    })?;
    Ok(out)
}

/// By sheet name, the text of each chart drawn on it: an embedded object (`draw:object`,
/// its own `content.xml` in the package) that is a chart. An object outside the package
/// (an address, a path up) or whose part is not a chart, or cannot be read, is left out:
/// it costs its own text, never the workbook's.
fn charts(pkg: &mut Package, xml: &[u8]) -> Result<HashMap<String, Vec<String>>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut pos = 0;
    let mut read = 0;
    let mut sheets = LastBefore::new(xml, TABLE);
    while let Some(off) = memchr::memmem::find(&xml[pos..], b"<draw:object ") {
        let at = pos + off;
        pos = at + 1;
        let Some(table) = sheets.before(at) else {
            continue;
        };
        let (Some(sheet), Some(href)) = (
            attr_value(&xml[table..at], b"table:name=\""),
            attr_value(&xml[at..], b"xlink:href=\""),
        ) else {
            continue;
        };
        let Some(folder) = super::super::package::object_folder(&href) else {
            continue;
        };
        if read == MAX_CHARTS {
            break;
        }
        read += 1;
        let Ok(Some(part)) = pkg.read(&format!("{folder}/content.xml")) else {
            continue;
        };
        if let Ok(Some(text)) = super::super::chart::read_odf(&part, depth) {
            out.entry(sheet).or_default().push(text);
        }
    }
    Ok(out)
}

/// At most this many lines are read from one sheet's shapes.
const MAX_LINES: usize = 1000;

/// By sheet name, the paragraphs of the shapes drawn on it, in document order. Only the
/// drawings' own bytes are walked: each `<draw:` element is found by a byte search, its
/// end by counting tags, its sheet by the `table:table` start tag before it (a workbook of
/// millions of cells with one text box pays a search, not a second walk of its cells).
fn shapes(xml: &[u8], depth: usize) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut pos = 0;
    let (mut sheets, mut cells, mut cell_ends) = (
        LastBefore::new(xml, TABLE),
        LastBefore::new(xml, b"<table:table-cell"),
        LastBefore::new(xml, b"</table:table-cell>"),
    );
    while let Some(off) = memchr::memmem::find(&xml[pos..], b"<draw:") {
        let at = pos + off;
        let end = element_end(&xml, at);
        pos = end.max(at + 1);
        let Some(table) = sheets.before(at) else {
            continue;
        };
        let Some(sheet) = attr_value(&xml[table..at], b"table:name=\"") else {
            continue;
        };
        // A string cell's shapes are in its text already (calamine reads them there).
        let cell = cells.before(at).filter(|c| *c > table);
        if cell.is_some_and(|c| in_string_cell(&xml[c..at], cell_ends.before(at) < Some(c))) {
            continue;
        }
        let lines = out.entry(sheet).or_default();
        // A drawing cut short by a damaged part loses its own text, nothing else.
        let _ = walk_drawing(&xml[at..end], depth, lines);
    }
    out.retain(|_, l| !l.is_empty());
    out
}

/// Where the element starting at `at` ends (just past its end tag), by counting start and
/// end tags; the end of `xml` if it never does.
fn element_end(xml: &[u8], at: usize) -> usize {
    let mut depth = 0i64;
    let mut i = at;
    while let Some(off) = memchr::memchr(b'<', &xml[i..]) {
        let t = i + off;
        let close = memchr::memchr(b'>', &xml[t..]).map_or(xml.len(), |c| t + c + 1);
        let tag = &xml[t..close];
        if tag.starts_with(b"</") {
            depth -= 1;
        } else if !(tag.starts_with(b"<?") || tag.starts_with(b"<!") || tag.ends_with(b"/>")) {
            depth += 1;
        }
        i = close;
        if depth <= 0 {
            return close;
        }
    }
    xml.len()
}

/// An attribute's value in the start tag that `xml` begins with (`name` with its `="`),
/// its entities read.
fn attr_value(xml: &[u8], name: &[u8]) -> Option<String> {
    let tag_end = memchr::memchr(b'>', xml)?;
    let tag = &xml[..tag_end];
    let v = memchr::memmem::find(tag, name)? + name.len();
    let len = memchr::memchr(b'"', &tag[v..])?;
    let raw = std::str::from_utf8(&tag[v..v + len]).ok()?;
    Some(
        quick_xml::escape::unescape(raw)
            .map(|c| c.into_owned())
            .unwrap_or_else(|_| raw.to_string()),
    )
}

/// Whether a cell whose start tag `xml` begins with (up to a drawing in the same sheet),
/// still `open` there (no end tag since), holds a string value.
fn in_string_cell(xml: &[u8], open: bool) -> bool {
    let Some(tag_end) = memchr::memchr(b'>', xml) else {
        return false;
    };
    open && xml[tag_end - 1] != b'/'
        && memchr::memmem::find(&xml[..tag_end], b"value-type=\"string\"").is_some()
}

/// Where a pattern last starts before places asked in increasing order, from one forward
/// search over the part: a search back from each drawing to its sheet's start tag (or its
/// cell's) made a workbook of 8 KB with 300,000 empty objects hold a worker for minutes.
struct LastBefore<'a> {
    xml: &'a [u8],
    pattern: &'static [u8],
    /// Searched up to here.
    scanned: usize,
    last: Option<usize>,
}

impl<'a> LastBefore<'a> {
    fn new(xml: &'a [u8], pattern: &'static [u8]) -> Self {
        Self {
            xml,
            pattern,
            scanned: 0,
            last: None,
        }
    }

    /// The last start of the pattern wholly before `at` (`at` no smaller than last time).
    fn before(&mut self, at: usize) -> Option<usize> {
        let at = at.min(self.xml.len());
        if at > self.scanned {
            for off in memchr::memmem::find_iter(&self.xml[self.scanned..at], self.pattern) {
                self.last = Some(self.scanned + off);
            }
            // A match may straddle `at`: search its first bytes again next time.
            self.scanned = at.saturating_sub(self.pattern.len() - 1).max(self.scanned);
        }
        self.last
    }
}

/// The paragraphs of one drawing (`xml` is its element), not its alt text.
fn walk_drawing(xml: &[u8], depth: usize, lines: &mut Vec<String>) -> Result<(), ApiError> {
    let mut skip = Skip::default();
    let mut para: Option<String> = None;
    walk(xml, depth, |n| {
        if skip.passes(&n) {
            return;
        }
        match n {
            Node::Open("title" | "desc" | "annotation", _) => skip.start(),
            Node::Open("p" | "h", _) => para = Some(String::new()),
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
                if let Some(p) = para.take() {
                    let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !p.is_empty() && lines.len() < MAX_LINES {
                        lines.push(p);
                    }
                }
            }
            _ => {}
        }
    })
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
fn headers_footers(pkg: &mut Package, content: &[u8]) -> Result<HashMap<String, String>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    // Table styles' master pages (automatic styles, before the body), and each sheet's
    // table style: start tags found by a byte search, as the shapes are.
    let body = memchr::memmem::find(content, b"<office:body").unwrap_or(content.len());
    let mut style_master: HashMap<String, String> = HashMap::new();
    for at in memchr::memmem::find_iter(&content[..body], b"<style:style ") {
        let tag = &content[at..body];
        if attr_value(tag, b"style:family=\"").as_deref() != Some("table") {
            continue;
        }
        if let (Some(name), Some(m)) = (
            attr_value(tag, b"style:name=\""),
            attr_value(tag, b"style:master-page-name=\""),
        ) {
            style_master.insert(name, m);
        }
    }
    let mut sheets: Vec<(String, Option<String>)> = Vec::new();
    for at in memchr::memmem::find_iter(&content[body..], TABLE) {
        let tag = &content[body + at..];
        if let Some(name) = attr_value(tag, b"table:name=\"") {
            // A sheet's own tag comes before any table nested in its cells.
            if !sheets.iter().any(|(n, _)| *n == name) {
                sheets.push((name, attr_value(tag, b"table:style-name=\"")));
            }
        }
    }
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
    let mut skip = Skip::default();
    walk(xml, depth, |n| {
        if skip.passes(&n) {
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
                    skip.start();
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
                        skip.start();
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
