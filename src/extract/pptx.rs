//! PowerPoint (.pptx/.pptm): slides in presentation order (from presentation.xml and its
//! relationships, not file names), text frames including grouped shapes, tables, and
//! speaker notes, each slide under `--- Slide N ---`.

use std::collections::HashMap;

use super::package::{part_relationships, Package};
use super::slides::{hidden_slide_finding, hidden_slide_mark, serve_slides, slides_shown};
use super::xml::{attr, walk, Node};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::{ApiError, ErrorCode};
use crate::options::Options;

pub struct PptxExtractor;

/// A line `shape_text` writes where a chart stands, with the chart's relationship id.
const CHART_MARK: &str = "\u{1}chart:";

/// Text of one slide-like part: paragraphs as lines, tables as `a | b` rows. Placeholders
/// of the given types (e.g. slide numbers in notes) are left out. As Markdown: a title
/// placeholder's paragraphs are `#` headings, paragraphs with their own bullet or number
/// (`buChar`, `buAutoNum`) list items at their level, and a table is one GFM pipe table.
/// A text run as read for hidden text: its size (hundredths of a point), colour and text.
#[derive(Default)]
struct Run {
    size: Option<u32>,
    colour: Option<String>,
    text: String,
}

impl Run {
    /// `tiny_text` (under 1.5 pt), `white_text` (white, or the scheme's `bg1`/`lt1`), or
    /// nothing hidden.
    fn kind(&self) -> Option<crate::findings::FindingKind> {
        if self.size.is_some_and(|s| s < 150) {
            Some(crate::findings::FindingKind::TinyText)
        } else if self
            .colour
            .as_deref()
            .is_some_and(|c| matches!(c, "ffffff" | "bg1" | "lt1"))
        {
            Some(crate::findings::FindingKind::WhiteText)
        } else {
            None
        }
    }
}

/// Where a walk stands in a run's properties (`a:rPr`, and a `a:solidFill` in it).
#[derive(Default)]
struct RunProps {
    in_rpr: bool,
    in_fill: bool,
}

impl RunProps {
    /// Reads a run-property node into the open run (its size and colour); whether `n` was
    /// one, which the walk then passes by.
    fn read(&mut self, n: &Node<'_>, run: Option<&mut Run>) -> bool {
        match *n {
            Node::Open("rPr", a) => {
                self.in_rpr = true;
                if let Some(r) = run {
                    r.size = attr(a, "sz").and_then(|v| v.parse().ok());
                }
            }
            Node::Close("rPr") => self.in_rpr = false,
            Node::Open("solidFill", _) if self.in_rpr => self.in_fill = true,
            Node::Close("solidFill") => self.in_fill = false,
            Node::Open("srgbClr" | "schemeClr", a) if self.in_rpr && self.in_fill => {
                if let Some(r) = run {
                    r.colour = attr(a, "val").map(str::to_ascii_lowercase);
                }
            }
            _ => return false,
        }
        true
    }
}

/// `hidden_text: mark|drop` on a slide: its tiny runs, and its white runs when nothing on
/// the slide could show them (`white`).
#[derive(Clone, Copy)]
struct Hide {
    mode: crate::options::HiddenText,
    white: bool,
}

/// The number of the next item at list level `lvl` (its first `first`); the levels below
/// restart when the list steps back out.
fn next_number(numbers: &mut Vec<Option<u64>>, lvl: u32, first: u64) -> u64 {
    let at = lvl.min(8) as usize;
    numbers.truncate(at + 1);
    numbers.resize(at + 1, None);
    let n = numbers[at].map_or(first, |n| n.saturating_add(1));
    numbers[at] = Some(n);
    n
}

///
/// `markdown`: `Some` with the part's relationships (where its runs' hyperlinks lead,
/// `a:hlinkClick`, written `[text](url)`), `None` for plain text.
fn shape_text(
    xml: &[u8],
    depth: usize,
    skip_placeholders: &[&str],
    markdown: Option<&HashMap<String, (String, String)>>,
    hide: Option<Hide>,
    mut typed: Option<&mut Vec<crate::model::Block>>,
    also: &mut dyn FnMut(Node<'_>),
) -> Result<Vec<String>, ApiError> {
    use crate::model::{Block, Content};
    let mut lines = Vec::new();
    // `typed`: the rows of the open table, for its block.
    let mut typed_rows: Vec<Vec<String>> = Vec::new();
    // `hide`: each run's text waits for its end, then goes in as it is, marked or not at
    // all; the run's size and colour as `invisible_runs` reads them.
    let mut run: Option<Run> = None;
    let mut props = RunProps::default();
    let mut last_hidden = false;
    let mut para: Option<String> = None;
    let mut in_t = false;
    let mut row: Option<Vec<String>> = None;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut cell: Option<String> = None;
    let mut shape_depth = 0usize;
    let mut skip_shape: Option<usize> = None;
    // Markdown: the shape that is a title, and the open paragraph's list marker.
    let mut title_shape: Option<usize> = None;
    let mut marker: Option<(u32, Option<u64>)> = None;
    let mut level = 0u32;
    let mut numbers: Vec<Option<u64>> = Vec::new();
    let links = markdown;
    let markdown = markdown.is_some();
    // Markdown: the open run's start in its paragraph and its link, inside its `a:rPr`;
    // the paragraph's linked spans so far (start, end, URL).
    let (mut run_start, mut run_link, mut in_rpr) = (0usize, None::<String>, false);
    let mut spans: Vec<(usize, usize, String)> = Vec::new();
    let mut shape_node = |n: Node<'_>| {
        if let Some(rels) = links {
            match n {
                Node::Open("p", _) => spans.clear(),
                Node::Open("r", _) => {
                    run_start = para.as_ref().map_or(0, String::len);
                    run_link = None;
                }
                Node::Open("rPr", _) => in_rpr = true,
                Node::Close("rPr") => in_rpr = false,
                Node::Open("hlinkClick", a) if in_rpr => {
                    run_link = attr(a, "id")
                        .and_then(|id| rels.get(id))
                        .filter(|(_, kind)| kind == "hyperlink")
                        .map(|(target, _)| target.clone())
                        .filter(|u| super::markdown::linkable(u));
                }
                Node::Close("p") => {
                    if let Some(p) = para.as_mut() {
                        super::markdown::apply_links(p, &spans);
                    }
                    spans.clear();
                }
                _ => {}
            }
        }
        match n {
            Node::Open("sp", _) => shape_depth += 1,
            Node::Close("sp") => {
                if skip_shape == Some(shape_depth) {
                    skip_shape = None;
                }
                if title_shape == Some(shape_depth) {
                    title_shape = None;
                }
                numbers.clear();
                shape_depth = shape_depth.saturating_sub(1);
            }
            Node::Open("ph", a) => {
                let kind = attr(a, "type");
                if skip_placeholders == ["*"]
                    || kind.is_some_and(|t| skip_placeholders.contains(&t))
                {
                    skip_shape = Some(shape_depth);
                }
                if matches!(kind, Some("title" | "ctrTitle")) {
                    title_shape = Some(shape_depth);
                }
            }
            Node::Open("p", _) => {
                para = Some(String::new());
                marker = None;
                level = 0;
            }
            Node::Open("pPr", a) => {
                level = attr(a, "lvl").and_then(|v| v.parse().ok()).unwrap_or(0)
            }
            Node::Open("buChar", _) => marker = Some((level, None)),
            Node::Open("buAutoNum", a) => {
                let start = attr(a, "startAt")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(1u64);
                marker = Some((level, Some(start)));
            }
            Node::Open("buNone", _) => marker = None,
            Node::Open("br", _) => {
                if let Some(p) = para.as_mut() {
                    p.push('\n');
                }
            }
            n if run.is_some() && props.read(&n, run.as_mut()) => {}
            Node::Open("r", _) if hide.is_some() => run = Some(Run::default()),
            Node::Close("r") => {
                if let (Some(r), Some(h), Some(p)) = (run.take(), hide, para.as_mut()) {
                    let hidden = match r.kind() {
                        Some(crate::findings::FindingKind::TinyText) => true,
                        Some(_) => h.white,
                        None => false,
                    };
                    if hidden {
                        crate::findings::push_hidden(p, &r.text, h.mode, last_hidden);
                    } else {
                        p.push_str(&r.text);
                    }
                    last_hidden = hidden;
                }
            }
            Node::Open("t", _) => in_t = true,
            Node::Close("t") => in_t = false,
            Node::Text(t) if in_t && skip_shape.is_none() => {
                if let Some(r) = run.as_mut() {
                    r.text.push_str(t);
                } else if let Some(p) = para.as_mut() {
                    p.push_str(t);
                }
            }
            Node::Close("p") => {
                last_hidden = false;
                if let Some(p) = para.take() {
                    match cell.as_mut() {
                        Some(c) => {
                            if !p.trim().is_empty() {
                                if !c.is_empty() {
                                    c.push(' ');
                                }
                                c.push_str(p.trim());
                            }
                        }
                        None if !p.trim().is_empty() && typed.is_some() => {
                            let text = p.split_whitespace().collect::<Vec<_>>().join(" ");
                            let content = if title_shape.is_some() {
                                Content::Heading { level: 1, text }
                            } else {
                                match marker {
                                    Some((lvl, start)) => {
                                        let label = match start {
                                            Some(first) => {
                                                format!(
                                                    "{}.",
                                                    next_number(&mut numbers, lvl, first)
                                                )
                                            }
                                            None => "•".to_string(),
                                        };
                                        Content::ListItem {
                                            level: lvl.min(8),
                                            label,
                                            text,
                                        }
                                    }
                                    None => Content::Paragraph { text },
                                }
                            };
                            if let Some(t) = typed.as_mut() {
                                t.push(Block::new(content));
                            }
                            lines.push(p);
                        }
                        None if !p.trim().is_empty() && markdown => {
                            let text = p.split_whitespace().collect::<Vec<_>>().join(" ");
                            let line = if title_shape.is_some() {
                                format!("# {text}")
                            } else {
                                match marker {
                                    Some((lvl, start)) => {
                                        let indent = "    ".repeat(lvl.min(8) as usize);
                                        match start {
                                            Some(first) => {
                                                let n = next_number(&mut numbers, lvl, first);
                                                format!("{indent}{n}. {text}")
                                            }
                                            None => format!("{indent}- {text}"),
                                        }
                                    }
                                    None => text,
                                }
                            };
                            lines.push(line);
                        }
                        None if !p.trim().is_empty() => lines.push(p),
                        None => {}
                    }
                }
            }
            Node::Open("chart", a) => {
                if let Some(rid) = attr(a, "id") {
                    lines.push(format!("{CHART_MARK}{rid}"));
                    // Where the chart stands: its block comes with its data (the caller's).
                    if let Some(t) = typed.as_mut() {
                        t.push(Block::new(Content::Chart {
                            text: format!("{CHART_MARK}{rid}"),
                        }));
                    }
                }
            }
            Node::Open("tr", _) => row = Some(Vec::new()),
            Node::Open("tc", _) => cell = Some(String::new()),
            Node::Close("tc") => {
                if let (Some(r), Some(c)) = (row.as_mut(), cell.take()) {
                    r.push(c.replace(['\n', '\r'], " "));
                }
            }
            Node::Close("tr") => {
                if let Some(r) = row.take() {
                    if typed.is_some() {
                        typed_rows.push(r.clone());
                    }
                    if markdown {
                        rows.push(r.iter().map(|c| super::markdown::cell_text(c)).collect());
                    } else {
                        lines.push(r.join(" | "));
                    }
                }
            }
            Node::Close("tbl") if typed.is_some() && !typed_rows.is_empty() => {
                if let Some(t) = typed.as_mut() {
                    t.push(Block::new(Content::Table {
                        rows: std::mem::take(&mut typed_rows),
                        header_rows: 0,
                        spans: Vec::new(),
                    }));
                }
            }
            Node::Close("tbl") if markdown && !rows.is_empty() => {
                let table = super::markdown::pipe_table(&std::mem::take(&mut rows));
                lines.push(table.trim_end().to_string());
            }
            _ => {}
        }
        // Markdown: a linked run's text, now in its paragraph, is a span (one link with the
        // span before it when they touch and lead to the same place).
        if let (Some(_), Node::Close("r")) = (links, n) {
            if let (Some(url), Some(p)) = (run_link.take(), para.as_ref()) {
                let end = p.len();
                match spans.last_mut() {
                    Some(last) if last.1 == run_start && last.2 == url => last.1 = end,
                    _ if end > run_start => spans.push((run_start, end, url)),
                    _ => {}
                }
            }
        }
    };
    // `also`: another visitor fed the same walk (a slide's hidden-text checks).
    walk(xml, depth, |n| {
        also(n);
        shape_node(n)
    })?;
    Ok(lines)
}

/// Slide part paths in presentation order.
/// Comment authors by id: legacy comments' `ppt/commentAuthors.xml` (numeric ids) and
/// modern comments' `ppt/authors.xml` (GUIDs).
fn comment_authors(pkg: &mut Package) -> Result<HashMap<String, String>, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut out = HashMap::new();
    for part in ["ppt/commentAuthors.xml", "ppt/authors.xml"] {
        if let Some(x) = pkg.read(part)? {
            walk(&x, depth, |n| {
                if let Node::Open("cmAuthor" | "author", a) = n {
                    if let (Some(id), Some(name)) = (attr(a, "id"), attr(a, "name")) {
                        out.insert(id.to_string(), name.to_string());
                    }
                }
            })?;
        }
    }
    Ok(out)
}

/// A slide's comments, `author: text` each, replies after what they answer: legacy
/// (`p:cm` with `p:text`) and modern (`p188:cm` with a text body and `p188:reply`s).
fn slide_comments(
    xml: &[u8],
    depth: usize,
    authors: &HashMap<String, String>,
) -> Result<Vec<String>, ApiError> {
    let mut out: Vec<(String, String)> = Vec::new();
    // The open comment and reply (a modern comment's replies may come before its text).
    let mut open: Vec<usize> = Vec::new();
    let mut in_text = false;
    walk(xml, depth, |n| match n {
        Node::Open("cm" | "reply", a) => {
            let who = attr(a, "authorId").unwrap_or("");
            open.push(out.len());
            out.push((authors.get(who).cloned().unwrap_or_default(), String::new()));
        }
        Node::Close("cm" | "reply") => {
            open.pop();
        }
        Node::Open("text" | "t", _) => in_text = true,
        Node::Close("text" | "t") => in_text = false,
        Node::Close("p") => {
            if let Some(&i) = open.last() {
                out[i].1.push(' ');
            }
        }
        Node::Text(t) if in_text => {
            if let Some(&i) = open.last() {
                out[i].1.push_str(t);
            }
        }
        _ => {}
    })?;
    Ok(out
        .into_iter()
        .map(|(who, text)| (who, text.split_whitespace().collect::<Vec<_>>().join(" ")))
        .filter(|(_, text)| !text.is_empty())
        .map(|(who, text)| {
            if who.is_empty() {
                text
            } else {
                format!("{who}: {text}")
            }
        })
        .collect())
}

fn slide_order(pkg: &mut Package) -> Result<Vec<String>, ApiError> {
    let pres = pkg.read("ppt/presentation.xml")?.ok_or_else(|| {
        ApiError::new(
            ErrorCode::Corrupt,
            "the package has no ppt/presentation.xml",
        )
    })?;
    let rels = part_relationships(pkg, "ppt/presentation.xml")?;
    let mut ids = Vec::new();
    walk(&pres, pkg.limits().max_xml_depth, |n| {
        if let Node::Open("sldId", a) = n {
            if let Some(rid) = a
                .iter()
                .find(|(k, _)| k.ends_with(":id") && k != "id")
                .map(|(_, v)| v.clone())
            {
                ids.push(rid);
            }
        }
    })?;
    Ok(ids
        .into_iter()
        .filter_map(|id| rels.get(&id).map(|(t, _)| t.clone()))
        .collect())
}

impl Extractor for PptxExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars;
        let mut pkg = Package::open(&input.path, limits.package)?;
        let depth = limits.package.max_xml_depth;
        let slides = slide_order(&mut pkg)?;
        let total = slides.len() as u64;
        let mut warnings = Vec::new();
        let selected = req.select_pages(total, "slide", "presentation", &mut warnings)?;
        let mut blocks = Vec::with_capacity(selected.len());
        let mut hidden: Vec<crate::findings::Finding> = Vec::new();
        let mut authors: Option<HashMap<String, String>> = None;
        // Markdown: paragraphs apart by a blank line, the slide marker a paragraph too.
        let md = req.markdown();
        let json = req.json();
        let mut unit_blocks: Vec<crate::model::UnitBlocks> = Vec::new();
        let end = if md { "\n\n" } else { "\n" };
        let hidden_text = req.hidden_text.unwrap_or(crate::options::HiddenText::Keep);
        let mut layouts: HashMap<String, bool> = HashMap::new();
        let mut furniture: HashMap<String, Vec<String>> = HashMap::new();
        let mut slide_dims: Option<Option<(i64, i64)>> = None;
        for &n in &selected {
            let path = &slides[(n - 1) as usize];
            let xml = pkg.read(path)?.ok_or_else(|| {
                ApiError::new(ErrorCode::Corrupt, format!("slide {n} ({path}) is missing"))
            })?;
            // A hidden slide (`<p:sld show="0">`): not shown in a slide show (issue #21).
            // `hidden_text`: read as any other (keep), `⟦hidden⟧` in its marker line
            // (mark), or only its marker line (drop).
            let is_hidden = hidden_slide(&xml);
            if is_hidden {
                hidden.push(hidden_slide_finding(n));
            }
            let mark = hidden_slide_mark(is_hidden, hidden_text);
            let mut block = format!("--- Slide {n}{mark} ---{end}");
            let marker = block.len();
            if is_hidden && hidden_text == crate::options::HiddenText::Drop {
                blocks.push((n, marker, block));
                if json {
                    unit_blocks.push(crate::model::UnitBlocks::new(
                        crate::model::Unit::numbered(crate::model::UnitKind::Slide, n),
                        Vec::new(),
                    ));
                }
                continue;
            }
            let rels = part_relationships(&mut pkg, path)?;
            // One walk of the slide gives its text, its runs a person may not see, and its
            // shapes' places (a second one first only to mark or drop hidden runs, which
            // needs them before the text).
            let mut placed = PlacedShapes::default();
            let mut typed: Vec<crate::model::Block> = Vec::new();
            let (shapes, runs) = if hidden_text == crate::options::HiddenText::Keep {
                let mut inv = InvisibleRuns::default();
                let shapes = shape_text(
                    &xml,
                    depth,
                    &[],
                    md.then_some(&rels),
                    None,
                    json.then_some(&mut typed),
                    &mut |n| {
                        inv.node(n);
                        placed.node(n);
                    },
                )?;
                let (mut runs, behind) = inv.finish();
                white_seen(&mut runs, behind, &mut pkg, &xml, &rels, &mut layouts)?;
                (shapes, runs)
            } else {
                let (mut runs, behind) = invisible_runs(&xml, depth)?;
                white_seen(&mut runs, behind, &mut pkg, &xml, &rels, &mut layouts)?;
                // Marked or dropped on request: the runs the findings list.
                let hide = Hide {
                    mode: hidden_text,
                    white: runs
                        .iter()
                        .any(|(k, _)| *k == crate::findings::FindingKind::WhiteText),
                };
                let shapes = shape_text(
                    &xml,
                    depth,
                    &[],
                    md.then_some(&rels),
                    Some(hide),
                    json.then_some(&mut typed),
                    &mut |n| placed.node(n),
                )?;
                (shapes, runs)
            };
            for (kind, text) in runs {
                let how = match kind {
                    crate::findings::FindingKind::TinyText => "font under 1.5 pt (a:rPr sz)",
                    crate::findings::FindingKind::AltText => {
                        "picture or shape description (p:cNvPr descr), not in the text"
                    }
                    _ => "white text on the light default background, nothing behind it",
                };
                // Instruction-like text that `drop` leaves out is still reported as such.
                let left_out = hidden_text == crate::options::HiddenText::Drop
                    || kind == crate::findings::FindingKind::AltText;
                for mut f in crate::findings::hidden(
                    kind,
                    Some(how),
                    crate::findings::Severity::Low,
                    &text,
                    0,
                    left_out,
                ) {
                    f.place.slide = Some(n);
                    hidden.push(f);
                }
            }
            // Text placed off the slide, or under a shape drawn over it: in the file, not on
            // the screen.
            if let Some(size) =
                *slide_dims.get_or_insert_with(|| slide_size(&mut pkg, depth).ok().flatten())
            {
                for (kind, text) in misplaced_texts(&placed.out, size) {
                    let how = match kind {
                        crate::findings::FindingKind::OffSlide => {
                            "placed off the slide (p:spPr a:xfrm outside p:sldSz)"
                        }
                        _ => "wholly under an opaque shape or picture drawn after it",
                    };
                    for mut f in crate::findings::hidden(
                        kind,
                        Some(how),
                        crate::findings::Severity::Low,
                        &text,
                        0,
                        false,
                    ) {
                        f.place.slide = Some(n);
                        hidden.push(f);
                    }
                }
            }
            let mut charts = Vec::new();
            for l in shapes {
                // A chart, where it stands: its data from the chart part.
                if let Some(rid) = l.strip_prefix(CHART_MARK) {
                    let part = rels.get(rid).map(|(t, _)| t.clone());
                    let mut data = None;
                    if let Some(cx) = match part {
                        Some(p) => pkg.read(&p)?,
                        None => None,
                    } {
                        if let Some(text) = super::chart::read(&cx, depth)? {
                            block.push_str(&text);
                            data = Some(text);
                        }
                    }
                    charts.push((format!("{CHART_MARK}{rid}"), data));
                    continue;
                }
                block.push_str(&l);
                block.push_str(end);
            }
            // Each chart's block holds its data, or goes when there is none.
            typed.retain_mut(|b| match &mut b.content {
                crate::model::Content::Chart { text } => {
                    match charts.iter().find(|(mark, _)| mark == text) {
                        Some((_, Some(data))) => {
                            *text = data.trim_end().to_string();
                            true
                        }
                        _ => false,
                    }
                }
                _ => true,
            });
            // SmartArt keeps its text in diagram data parts, not in the slide.
            let mut diagrams: Vec<&String> = rels
                .values()
                .filter(|(_, k)| k == "diagramData")
                .map(|(t, _)| t)
                .collect();
            diagrams.sort();
            for d in diagrams {
                if let Some(dx) = pkg.read(d)? {
                    for l in super::diagram::lines(&dx, depth).unwrap_or_default() {
                        typed.push(crate::model::Block::paragraph(l.trim()));
                        block.push_str(&l);
                        block.push_str(end);
                    }
                }
            }
            // What the layout and master draw on the slide besides their placeholders (a
            // company name, a "Confidential" box): once a slide, marked as such.
            let behind = if root_says_no(&xml, "sld", "showMasterSp") {
                &[][..]
            } else {
                layout_texts(&mut pkg, &rels, &mut furniture)?
            };
            if !behind.is_empty() {
                block.push_str("[Layout and master]");
                block.push_str(end);
                for l in behind {
                    typed.push(crate::model::Block::in_part(
                        crate::model::Content::Paragraph {
                            text: l.trim().to_string(),
                        },
                        Some("layout_and_master"),
                    ));
                    block.push_str(l);
                    block.push_str(end);
                }
            }
            if let Some((notes, _)) = rels.values().find(|(_, kind)| kind == "notesSlide") {
                if let Some(nx) = pkg.read(notes)? {
                    let lines = shape_text(
                        &nx,
                        depth,
                        &["sldNum", "sldImg", "hdr", "dt"],
                        md.then_some(&HashMap::new()),
                        None,
                        None,
                        &mut |_| {},
                    )?;
                    if !lines.is_empty() {
                        block.push_str("[Notes]");
                        block.push_str(end);
                        for l in lines {
                            typed.push(crate::model::Block::in_part(
                                crate::model::Content::Note {
                                    text: l.trim().to_string(),
                                    author: None,
                                },
                                Some("notes"),
                            ));
                            block.push_str(&l);
                            block.push_str(end);
                        }
                    }
                }
            }
            let mut comment_parts: Vec<&String> = rels
                .values()
                .filter(|(_, k)| k == "comments")
                .map(|(t, _)| t)
                .collect();
            comment_parts.sort();
            let mut lines = Vec::new();
            for part in comment_parts {
                if let Some(cx) = pkg.read(part)? {
                    if authors.is_none() {
                        authors = Some(comment_authors(&mut pkg)?);
                    }
                    lines.extend(slide_comments(
                        &cx,
                        depth,
                        authors.as_ref().unwrap_or(&HashMap::new()),
                    )?);
                }
            }
            // Comments: in the text, and listed (`comment`: shown beside the slide on
            // request).
            for l in &lines {
                for mut f in crate::findings::hidden(
                    crate::findings::FindingKind::Comment,
                    Some("a comment, shown beside the slide on request"),
                    crate::findings::Severity::Low,
                    l,
                    0,
                    false,
                ) {
                    f.place.slide = Some(n);
                    hidden.push(f);
                }
            }
            if !lines.is_empty() {
                block.push_str("[Comments]");
                block.push_str(end);
                for l in lines {
                    typed.push(crate::model::Block::in_part(
                        crate::model::Content::Note {
                            text: l.trim().to_string(),
                            author: None,
                        },
                        Some("comments"),
                    ));
                    block.push_str(&l);
                    block.push_str(end);
                }
            }
            blocks.push((n, marker, block));
            if json {
                unit_blocks.push(crate::model::UnitBlocks::new(
                    crate::model::Unit::numbered(crate::model::UnitKind::Slide, n),
                    typed,
                ));
            }
        }
        let mut ex = serve_slides(blocks, &selected, total, warnings, max_chars)?;
        if json {
            ex.document = Some(crate::model::Document { units: unit_blocks });
        }
        let shown = slides_shown(&ex);
        hidden.retain(|f| f.place.slide.is_some_and(&shown));
        ex.findings = hidden;
        Ok(ex)
    }
}

/// The text a slide's layout and (unless the layout hides them) its master's shapes draw
/// on it, placeholders left out: their prompts are replaced by the slide's own text.
/// Read once a layout.
fn layout_texts<'c>(
    pkg: &mut Package,
    rels: &HashMap<String, (String, String)>,
    cache: &'c mut HashMap<String, Vec<String>>,
) -> Result<&'c [String], ApiError> {
    let Some((layout, _)) = rels.values().find(|(_, k)| k == "slideLayout") else {
        return Ok(&[]);
    };
    if !cache.contains_key(layout) {
        let depth = pkg.limits().max_xml_depth;
        let mut lines = Vec::new();
        if let Some(lx) = pkg.read(layout)? {
            lines = shape_text(&lx, depth, &["*"], None, None, None, &mut |_| {})?;
            if !root_says_no(&lx, "sldLayout", "showMasterSp") {
                let lrels = part_relationships(pkg, layout)?;
                if let Some((master, _)) = lrels.values().find(|(_, k)| k == "slideMaster") {
                    if let Some(mx) = pkg.read(master)? {
                        let mut own =
                            shape_text(&mx, depth, &["*"], None, None, None, &mut |_| {})?;
                        own.append(&mut lines);
                        lines = own;
                    }
                }
            }
        }
        lines.retain(|l| !l.trim().is_empty() && !l.starts_with(CHART_MARK));
        cache.insert(layout.clone(), lines);
    }
    Ok(cache.get(layout).map(Vec::as_slice).unwrap_or(&[]))
}

/// Whether a part's root element (`sld`, `sldLayout`) sets `name` to false.
fn root_says_no(xml: &[u8], root: &str, name: &str) -> bool {
    let Some(tag) = root_tag(xml, root) else {
        return false;
    };
    [format!(" {name}=\"0\""), format!(" {name}=\"false\"")]
        .iter()
        .any(|v| memchr::memmem::find(tag, v.as_bytes()).is_some())
}

/// A part's root element's start tag, found in its first 2 KiB.
fn root_tag<'x>(xml: &'x [u8], root: &str) -> Option<&'x [u8]> {
    let head = &xml[..xml.len().min(2048)];
    let at = memchr::memmem::find(head, format!(":{root} ").as_bytes())
        .or_else(|| memchr::memmem::find(head, format!("<{root} ").as_bytes()))?;
    let end = head[at..]
        .iter()
        .position(|&c| c == b'>')
        .map_or(head.len(), |e| at + e);
    Some(&head[at..end])
}

/// Whether a slide part's root says it is hidden (`show="0"`).
fn hidden_slide(xml: &[u8]) -> bool {
    root_says_no(xml, "sld", "show")
}

/// Slide text a person may not see for its size or colour (issue #21): runs under 1.5 pt
/// (`sz` under 150), and white runs (`srgbClr FFFFFF`, or the scheme's `bg1`/`lt1`).
/// Consecutive runs of one kind are one span; a span needs four letters or digits. Also the
/// descriptions of pictures and shapes (`alt_text`, `p:cNvPr descr`).
/// (kind, text) in slide order, and whether anything is drawn that white text could stand
/// on (a picture, a graphic frame, a filled shape).
fn invisible_runs(
    xml: &[u8],
    depth: usize,
) -> Result<(Vec<(crate::findings::FindingKind, String)>, bool), ApiError> {
    let mut runs = InvisibleRuns::default();
    walk(xml, depth, |n| runs.node(n))?;
    Ok(runs.finish())
}

/// White runs count only where nothing could show them: nothing drawn behind on the
/// slide (`behind`), and the light default background (looked up only then; a layout's
/// and master's once per layout). The others are taken out of `runs`.
fn white_seen(
    runs: &mut Vec<(crate::findings::FindingKind, String)>,
    behind: bool,
    pkg: &mut Package,
    xml: &[u8],
    rels: &HashMap<String, (String, String)>,
    layouts: &mut HashMap<String, bool>,
) -> Result<(), ApiError> {
    if runs
        .iter()
        .any(|(k, _)| *k == crate::findings::FindingKind::WhiteText)
        && (behind || !light_background(pkg, xml, rels, layouts)?)
    {
        runs.retain(|(k, _)| *k != crate::findings::FindingKind::WhiteText);
    }
    Ok(())
}

/// `invisible_runs` as a walk's visitor (so one walk of a slide can feed it and others).
#[derive(Default)]
struct InvisibleRuns {
    spans: Vec<(crate::findings::FindingKind, String)>,
    in_sppr: bool,
    in_ln: bool,
    in_t: bool,
    props: RunProps,
    behind: bool,
    run: Option<Run>,
    last: Option<crate::findings::FindingKind>,
}

impl InvisibleRuns {
    fn node(&mut self, n: Node<'_>) {
        match n {
            Node::Open("pic" | "graphicFrame", _) => self.behind = true,
            // A picture's or shape's description: listed (`alt_text`), not in the text.
            Node::Open("cNvPr", a) => {
                if let Some(d) = attr(a, "descr").filter(|d| !d.trim().is_empty()) {
                    self.spans
                        .push((crate::findings::FindingKind::AltText, d.to_string()));
                    self.last = None;
                }
            }
            Node::Open("spPr", _) => self.in_sppr = true,
            Node::Close("spPr") => self.in_sppr = false,
            Node::Open("ln", _) => self.in_ln = true,
            Node::Close("ln") => self.in_ln = false,
            Node::Open("solidFill" | "gradFill" | "blipFill" | "pattFill", _)
                if self.in_sppr && !self.in_ln =>
            {
                self.behind = true
            }
            Node::Open("r", _) => self.run = Some(Run::default()),
            n if self.run.is_some() && self.props.read(&n, self.run.as_mut()) => {}
            Node::Open("t", _) => self.in_t = true,
            Node::Close("t") => self.in_t = false,
            Node::Text(t) if self.in_t => {
                if let Some(r) = self.run.as_mut() {
                    r.text.push_str(t);
                }
            }
            Node::Close("r") => {
                let Some(r) = self.run.take() else { return };
                let kind = r.kind();
                match (kind, self.last) {
                    (Some(k), Some(l)) if k == l => {
                        if let Some(s) = self.spans.last_mut() {
                            s.1.push_str(&r.text);
                        }
                    }
                    (Some(k), _) => self.spans.push((k, r.text)),
                    (None, _) => {}
                }
                self.last = kind;
            }
            Node::Close("p") => self.last = None,
            _ => {}
        }
    }

    /// (kind, text) in slide order, and whether anything is drawn behind.
    fn finish(self) -> (Vec<(crate::findings::FindingKind, String)>, bool) {
        let mut out = Vec::new();
        for (kind, text) in self.spans {
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if text.chars().filter(|c| c.is_alphanumeric()).count() < 4 {
                continue;
            }
            out.push((kind, text));
        }
        (out, self.behind)
    }
}

/// The slide size (`p:sldSz`, EMU), when the presentation part states it.
fn slide_size(pkg: &mut Package, depth: usize) -> Result<Option<(i64, i64)>, ApiError> {
    let Some(xml) = pkg.read("ppt/presentation.xml")? else {
        return Ok(None);
    };
    let mut size = None;
    walk(&xml, depth, |n| {
        if let Node::Open("sldSz", a) = n {
            let v = |k| attr(a, k).and_then(|v| v.parse::<i64>().ok());
            if let (Some(cx), Some(cy)) = (v("cx"), v("cy")) {
                size = Some((cx, cy));
            }
        }
    })?;
    Ok(size)
}

/// A top-level shape of a slide, in drawing order: its box (EMU: x, y, width, height),
/// its text, and whether it paints an opaque area (a fill without transparency, or a
/// picture).
struct Placed {
    rect: Option<(i64, i64, i64, i64)>,
    text: String,
    opaque: bool,
}

/// The slide's top-level shapes and pictures in drawing order, as a walk's visitor. Shapes
/// inside groups are left out (their place is in the group's own coordinates).
#[derive(Default)]
struct PlacedShapes {
    out: Vec<Placed>,
    groups: usize,
    open: bool,
    in_sppr: bool,
    in_t: bool,
    in_ln: bool,
    off: Option<(i64, i64)>,
    ext: Option<(i64, i64)>,
    text: String,
    opaque: bool,
    in_fill: bool,
}

impl PlacedShapes {
    fn node(&mut self, n: Node<'_>) {
        match n {
            Node::Open("grpSp", _) => self.groups += 1,
            Node::Close("grpSp") => self.groups = self.groups.saturating_sub(1),
            Node::Open(tag @ ("sp" | "pic"), _) if self.groups == 0 => {
                (self.open, self.off, self.ext, self.in_ln) = (true, None, None, false);
                self.opaque = tag == "pic";
                self.text.clear();
            }
            Node::Open("spPr", _) if self.open => self.in_sppr = true,
            Node::Close("spPr") => self.in_sppr = false,
            Node::Open("ln", _) if self.in_sppr => self.in_ln = true,
            Node::Close("ln") => self.in_ln = false,
            Node::Open("solidFill" | "gradFill" | "blipFill" | "pattFill", _)
                if self.in_sppr && !self.in_ln =>
            {
                self.opaque = true;
                self.in_fill = true;
            }
            Node::Close("solidFill" | "gradFill" | "blipFill" | "pattFill") => self.in_fill = false,
            // A fill with transparency shows what is under it.
            Node::Open("alpha", a) if self.in_sppr && self.in_fill => {
                if attr(a, "val")
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|v| v < 95_000)
                {
                    self.opaque = false;
                }
            }
            Node::Open(tag @ ("off" | "ext"), a) if self.in_sppr => {
                let v = |k| attr(a, k).and_then(|v| v.parse::<i64>().ok());
                let pair = match tag {
                    "off" => v("x").zip(v("y")),
                    _ => v("cx").zip(v("cy")),
                };
                if tag == "off" {
                    self.off = self.off.or(pair);
                } else {
                    self.ext = self.ext.or(pair);
                }
            }
            Node::Open("t", _) if self.open => self.in_t = true,
            Node::Close("t") => self.in_t = false,
            Node::Text(t) if self.in_t => {
                self.text.push_str(t);
                self.text.push(' ');
            }
            Node::Close("sp" | "pic") if self.open && self.groups == 0 => {
                self.open = false;
                self.out.push(Placed {
                    rect: self.off.zip(self.ext).map(|((x, y), (w, h))| (x, y, w, h)),
                    text: self.text.split_whitespace().collect::<Vec<_>>().join(" "),
                    opaque: self.opaque,
                });
            }
            _ => {}
        }
    }
}

/// Text of a slide no one sees for where it is: placed wholly off the slide
/// (`off_slide`), or wholly under an opaque shape or picture drawn after it (`covered`).
fn misplaced_texts(
    shapes: &[Placed],
    (cx, cy): (i64, i64),
) -> Vec<(crate::findings::FindingKind, String)> {
    let mut out = Vec::new();
    for (i, s) in shapes.iter().enumerate() {
        let Some((x, y, w, h)) = s.rect else { continue };
        if s.text.chars().filter(|c| c.is_alphanumeric()).count() < 4 {
            continue;
        }
        let outside = x >= cx || y >= cy || x.saturating_add(w) <= 0 || y.saturating_add(h) <= 0;
        let covered = shapes[i + 1..].iter().any(|c| {
            c.opaque
                && c.rect.is_some_and(|(cx0, cy0, cw, ch)| {
                    cx0 <= x && cy0 <= y && cx0 + cw >= x + w && cy0 + ch >= y + h
                })
        });
        if outside {
            out.push((crate::findings::FindingKind::OffSlide, s.text.clone()));
        } else if covered {
            out.push((crate::findings::FindingKind::Covered, s.text.clone()));
        }
    }
    out
}

/// Whether a slide, its layout and its master leave the background the light default:
/// the first `<p:bg>` found (slide, layout, master) is white or the scheme's `bg1`/`lt1`
/// (solid, or a reference), or none is set; and the master maps `bg1` to `lt1`.
fn light_background(
    pkg: &mut Package,
    slide_xml: &[u8],
    rels: &HashMap<String, (String, String)>,
    layouts: &mut HashMap<String, bool>,
) -> Result<bool, ApiError> {
    let depth = pkg.limits().max_xml_depth;
    // (found a background, it is light), and the master's bg1 mapping.
    let look = |xml: &[u8]| -> Result<(Option<bool>, Option<String>), ApiError> {
        let (mut in_bg, mut found, mut light, mut image) = (false, false, false, false);
        let mut bg1 = None;
        walk(xml, depth, |n| match n {
            Node::Open("bg", _) => {
                in_bg = true;
                found = true;
            }
            Node::Close("bg") => in_bg = false,
            Node::Open("srgbClr" | "schemeClr" | "sysClr", a) if in_bg => {
                let v = attr(a, "lastClr")
                    .or_else(|| attr(a, "val"))
                    .unwrap_or("")
                    .to_ascii_lowercase();
                light = light || matches!(v.as_str(), "ffffff" | "bg1" | "lt1" | "window");
            }
            Node::Open("blipFill" | "gradFill" | "pattFill", _) if in_bg => image = true,
            Node::Open("clrMap", a) => bg1 = attr(a, "bg1").map(str::to_string),
            _ => {}
        })?;
        Ok((found.then_some(light && !image), bg1))
    };
    let (slide_bg, _) = look(slide_xml)?;
    if let Some(light) = slide_bg {
        return Ok(light);
    }
    let Some((layout, _)) = rels.values().find(|(_, k)| k == "slideLayout").cloned() else {
        return Ok(true);
    };
    if let Some(light) = layouts.get(&layout) {
        return Ok(*light);
    }
    let Some(lx) = pkg.read(&layout)? else {
        layouts.insert(layout, true);
        return Ok(true);
    };
    let (layout_bg, _) = look(&lx)?;
    let lrels = part_relationships(pkg, &layout)?;
    let master = match lrels.values().find(|(_, k)| k == "slideMaster") {
        Some((m, _)) => pkg.read(m)?,
        None => None,
    };
    let (master_bg, bg1) = match master {
        Some(mx) => look(&mx)?,
        None => (None, None),
    };
    let light = !bg1.is_some_and(|m| m != "lt1") && layout_bg.or(master_bg).unwrap_or(true);
    layouts.insert(layout, light);
    Ok(light)
}
