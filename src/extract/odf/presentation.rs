//! OpenDocument presentations (.odp), read as PowerPoint's are: `--- Slide N ---`, its
//! frames' text and tables, then what its master page draws on it besides placeholders
//! under `[Layout and master]`, then `[Notes]`; `pages` selects slides; slides hidden in
//! the slide show marked, dropped or kept as `hidden_text` says.

use std::collections::HashMap;

use super::super::blocks::Block;
use super::super::package::Package;
use super::super::xml::{attr, walk, Node, Skip};
use super::super::{Extractor, Input};
use super::content::DRAWINGS;
use super::{read_content, OdpExtractor};
use crate::config::Limits;
use crate::envelope::Extraction;
use crate::error::ApiError;
use crate::options::{HiddenText, Options};

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
        let (content, styles_xml) = read_content(&mut pkg, mode, req.markdown())?;
        let masters = match &styles_xml {
            Some(x) => master_texts(x, limits.package.max_xml_depth)?,
            None => HashMap::new(),
        };
        // What a slide's master draws on it besides placeholders, as far as it shows it,
        // its page number in place.
        let behind = |n: u64| -> Vec<String> {
            let Some((name, shows)) = content.masters.get(n as usize - 1) else {
                return Vec::new();
            };
            let Some(lines) = masters.get(name) else {
                return Vec::new();
            };
            lines
                .iter()
                .filter(|(kind, _)| {
                    // A slide that hides its master's objects hides its footer too.
                    shows.drawings
                        && match kind {
                            MasterPart::Drawing => true,
                            MasterPart::Footer => shows.footer,
                            MasterPart::Header => shows.header,
                        }
                })
                .map(|(_, l)| l.replace(PAGE_NUMBER, &n.to_string()))
                .collect()
        };
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
                let mark = super::super::slides::hidden_slide_mark(hidden, mode);
                let mut block = format!("--- Slide {n}{mark} ---\n");
                let marker = block.len();
                if hidden && mode == HiddenText::Drop {
                    return (n, marker, block);
                }
                block.extend(on(false));
                let behind = behind(n);
                if !behind.is_empty() {
                    block.push_str("[Layout and master]\n");
                    for l in behind {
                        block.push_str(&l);
                        block.push('\n');
                    }
                }
                let notes: String = on(true).collect();
                if !notes.is_empty() {
                    block.push_str("[Notes]\n");
                    block.push_str(&notes);
                }
                (n, marker, block)
            })
            .collect();
        let mut ex =
            super::super::slides::serve_slides(blocks, &selected, total, warnings, max_chars)?;
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
                        typed = super::super::blocks::to_model(&main, 0..main.len());
                        typed.extend(behind(n).into_iter().map(|text| {
                            crate::model::Block::in_part(
                                crate::model::Content::Paragraph { text },
                                Some("layout_and_master"),
                            )
                        }));
                        let notes = of(true);
                        typed.extend(
                            super::super::blocks::to_model(&notes, 0..notes.len())
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
        let shown = super::super::slides::slides_shown(&ex);
        ex.findings = selected
            .iter()
            .filter(|&&n| content.hidden_slides.contains(&(n as usize)) && shown(n))
            .map(|&n| super::super::slides::hidden_slide_finding(n))
            .collect();
        Ok(ex)
    }
}

/// At most this many lines are read from one master page.
const MAX_MASTER_LINES: usize = 200;

/// Where a slide's number goes in a master's line (a `text:page-number` field): a
/// character XML text cannot hold.
const PAGE_NUMBER: &str = "\u{1}";

/// At most this much of a master page's text is read (every slide repeats it).
const MAX_MASTER_CHARS: usize = 4000;

/// What part of a master page a line comes from: a drawing of its own, or the text its
/// footer or header placeholder holds as written (a slide can hide those).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MasterPart {
    Drawing,
    Footer,
    Header,
}

/// What each master page (`style:master-page` in styles.xml) draws besides placeholders,
/// by master name: the paragraphs of its drawings without a `presentation:class`, and the
/// text written into its footer and header placeholders (not their fields, which the
/// slides fill); not the prompt text of its title, outline and other placeholders, not its
/// notes page, not a drawing's alt text. A page-number field is the slide's number,
/// other fields (date, time) are left out.
fn master_texts(
    xml: &[u8],
    depth: usize,
) -> Result<HashMap<String, Vec<(MasterPart, String)>>, ApiError> {
    let mut out: HashMap<String, Vec<(MasterPart, String)>> = HashMap::new();
    let mut master: Option<String> = None;
    // What is passed over (a placeholder, the notes page, alt text, a field); the depth
    // inside a drawing that is read, and what part it is.
    let mut skip = Skip::default();
    let mut drawing = 0usize;
    let mut part = MasterPart::Drawing;
    let mut para: Option<String> = None;
    walk(xml, depth, |n| {
        if skip.passes(&n) {
            return;
        }
        match n {
            Node::Open("master-page", a) => master = Some(attr(a, "name").unwrap_or("").into()),
            Node::Close("master-page") => master = None,
            _ if master.is_none() => {}
            Node::Open("notes", _) => skip.start(),
            Node::Open(name, a) if DRAWINGS.contains(&name) => {
                if drawing == 0 {
                    part = match attr(a, "class") {
                        None if attr(a, "placeholder") != Some("true") => MasterPart::Drawing,
                        Some("footer") => MasterPart::Footer,
                        Some("header") => MasterPart::Header,
                        _ => {
                            skip.start();
                            return;
                        }
                    };
                }
                drawing += 1;
            }
            Node::Close(name) if DRAWINGS.contains(&name) => drawing = drawing.saturating_sub(1),
            Node::Open("page-number", _) if para.is_some() => {
                if let Some(p) = para.as_mut() {
                    p.push_str(PAGE_NUMBER);
                }
                skip.start();
            }
            Node::Open(
                "title" | "desc" | "footer" | "header" | "date-time" | "date" | "time"
                | "page-count" | "page-continuation",
                _,
            ) if drawing > 0 => skip.start(),
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
                if let (Some(p), Some(m)) = (para.take(), &master) {
                    let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
                    let lines = out.entry(m.clone()).or_default();
                    let held: usize = lines.iter().map(|(_, l)| l.len()).sum();
                    if !p.is_empty()
                        && lines.len() < MAX_MASTER_LINES
                        && held + p.len() <= MAX_MASTER_CHARS
                    {
                        lines.push((part, p));
                    }
                }
            }
            _ => {}
        }
    })?;
    Ok(out)
}
