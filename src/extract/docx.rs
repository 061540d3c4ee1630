//! Word (.docx/.docm): the body in reading order — paragraphs, list items with their
//! bullet or number, and each table where it stands — then headers, footers, footnotes,
//! endnotes and comments under their own markers.

use std::collections::HashMap;

use super::package::Package;
use super::xml::{attr, walk, Node};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{close_truncated, take_blocks, whole_lines_within, Extraction, Next, Taken};
use crate::error::ApiError;
use crate::options::{self, grep, ReadRequest};
use crate::report::Report;

pub struct DocxExtractor;

/// One unit of output, counted by `max_paragraphs`.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Para(String),
    Table(Vec<Vec<String>>),
    /// `--- Headers ---` and the like.
    Marker(String),
}

/// List formats per (numId, level), from numbering.xml.
#[derive(Default)]
struct Numbering {
    formats: HashMap<(String, u32), String>,
    counters: HashMap<(String, u32), u32>,
}

impl Numbering {
    fn parse(xml: &[u8], depth: usize) -> Result<Self, ApiError> {
        let mut abstract_fmt: HashMap<(String, u32), String> = HashMap::new();
        let mut num_to_abstract: HashMap<String, String> = HashMap::new();
        let (mut cur_abs, mut cur_lvl, mut cur_num) = (None::<String>, None::<u32>, None::<String>);
        walk(xml, depth, |n| match n {
            Node::Open("abstractNum", a) => cur_abs = attr(a, "abstractNumId").map(str::to_string),
            Node::Open("lvl", a) => cur_lvl = attr(a, "ilvl").and_then(|v| v.parse().ok()),
            Node::Open("numFmt", a) => {
                if let (Some(ab), Some(l), Some(v)) = (&cur_abs, cur_lvl, attr(a, "val")) {
                    abstract_fmt.insert((ab.clone(), l), v.to_string());
                }
            }
            Node::Open("num", a) => cur_num = attr(a, "numId").map(str::to_string),
            Node::Open("abstractNumId", a) => {
                if let (Some(num), Some(v)) = (&cur_num, attr(a, "val")) {
                    num_to_abstract.insert(num.clone(), v.to_string());
                }
            }
            Node::Close("abstractNum") => cur_abs = None,
            _ => {}
        })?;
        let mut formats = HashMap::new();
        for (num, abs) in num_to_abstract {
            for ((a, lvl), fmt) in &abstract_fmt {
                if *a == abs {
                    formats.insert((num.clone(), *lvl), fmt.clone());
                }
            }
        }
        Ok(Self {
            formats,
            counters: HashMap::new(),
        })
    }

    fn prefix(&mut self, num_id: &str, lvl: u32) -> String {
        let indent = "  ".repeat(lvl as usize);
        let fmt = self
            .formats
            .get(&(num_id.to_string(), lvl))
            .map(String::as_str)
            .unwrap_or("bullet");
        if fmt == "bullet" || fmt == "none" {
            return format!("{indent}• ");
        }
        // A new item at this level restarts the deeper levels.
        self.counters.retain(|(n, l), _| !(n == num_id && *l > lvl));
        let c = self.counters.entry((num_id.to_string(), lvl)).or_insert(0);
        *c += 1;
        let n = *c;
        let label = match fmt {
            "lowerLetter" => letters(n).to_lowercase(),
            "upperLetter" => letters(n),
            "lowerRoman" => roman(n).to_lowercase(),
            "upperRoman" => roman(n),
            _ => n.to_string(),
        };
        format!("{indent}{label}. ")
    }
}

fn letters(mut n: u32) -> String {
    let mut s = Vec::new();
    while n > 0 {
        n -= 1;
        s.push((b'A' + (n % 26) as u8) as char);
        n /= 26;
    }
    s.iter().rev().collect()
}

fn roman(mut n: u32) -> String {
    let table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut s = String::new();
    for (v, r) in table {
        while n >= v {
            s.push_str(r);
            n -= v;
        }
    }
    s
}

/// Parse one story (body, header, notes…) into blocks.
fn parse_story(
    xml: &[u8],
    depth: usize,
    numbering: &mut Numbering,
) -> Result<Vec<Block>, ApiError> {
    struct Cell {
        paras: Vec<String>,
    }
    let mut blocks = Vec::new();
    let mut paras: Vec<(String, Option<(String, u32)>)> = Vec::new(); // open paragraphs
    let mut tables: Vec<Vec<Vec<Cell>>> = Vec::new(); // open tables: rows of cells
    let mut in_text = false;
    let mut skip_depth = 0usize; // inside content that must not be read (fallbacks, deleted text, field codes, ruby annotations)
    let mut num: Option<(String, u32)> = None;
    let mut ilvl: u32 = 0;
    walk(xml, depth, |n| {
        if skip_depth > 0 {
            match n {
                Node::Open(..) => skip_depth += 1,
                Node::Close(..) => skip_depth -= 1,
                _ => {}
            }
            return;
        }
        match n {
            Node::Open(
                "Fallback" | "delText" | "instrText" | "rt" | "footnoteRef" | "endnoteRef",
                _,
            ) => skip_depth = 1,
            Node::Open("p", _) => {
                paras.push((String::new(), None));
                num = None;
                ilvl = 0;
            }
            Node::Open("ilvl", a) => {
                ilvl = attr(a, "val").and_then(|v| v.parse().ok()).unwrap_or(0)
            }
            Node::Open("numId", a) => {
                if let Some(v) = attr(a, "val").filter(|v| *v != "0") {
                    num = Some((v.to_string(), ilvl));
                }
            }
            Node::Close("numPr") => {
                if let (Some(p), Some((id, _))) = (paras.last_mut(), num.clone()) {
                    p.1 = Some((id, ilvl));
                }
            }
            Node::Open("t", _) => in_text = true,
            Node::Close("t") => in_text = false,
            Node::Text(t) if in_text => {
                if let Some(p) = paras.last_mut() {
                    p.0.push_str(t);
                }
            }
            Node::Open("tab", _) => {
                if let Some(p) = paras.last_mut() {
                    if !p.0.is_empty() {
                        p.0.push('\t');
                    }
                }
            }
            Node::Open("br" | "cr", _) => {
                if let Some(p) = paras.last_mut() {
                    p.0.push('\n');
                }
            }
            Node::Open("noBreakHyphen", _) => {
                if let Some(p) = paras.last_mut() {
                    p.0.push('-');
                }
            }
            Node::Close("p") => {
                let Some((text, list)) = paras.pop() else {
                    return;
                };
                let text = match list {
                    Some((id, lvl)) if !text.trim().is_empty() => {
                        format!("{}{}", numbering.prefix(&id, lvl), text)
                    }
                    _ => text,
                };
                if let Some(cell) = tables
                    .last_mut()
                    .and_then(|t| t.last_mut())
                    .and_then(|r| r.last_mut())
                {
                    cell.paras.push(text);
                    return;
                }
                if !paras.is_empty() {
                    // A text box inside a paragraph: its own line, where it stands.
                    if !text.trim().is_empty() {
                        blocks.push(Block::Para(text));
                    }
                    return;
                }
                blocks.push(Block::Para(text));
            }
            Node::Open("tbl", _) => tables.push(Vec::new()),
            Node::Open("tr", _) => {
                if let Some(t) = tables.last_mut() {
                    t.push(Vec::new());
                }
            }
            Node::Open("tc", _) => {
                if let Some(r) = tables.last_mut().and_then(|t| t.last_mut()) {
                    r.push(Cell { paras: Vec::new() });
                }
            }
            Node::Close("tbl") => {
                let Some(t) = tables.pop() else { return };
                let rows: Vec<Vec<String>> = t
                    .into_iter()
                    .map(|r| {
                        r.into_iter()
                            .map(|c| {
                                c.paras
                                    .iter()
                                    .map(|p| p.trim())
                                    .filter(|p| !p.is_empty())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                                    .replace(['\n', '\r', '\t'], " ")
                            })
                            .collect()
                    })
                    .collect();
                match tables
                    .last_mut()
                    .and_then(|t| t.last_mut())
                    .and_then(|r| r.last_mut())
                {
                    // A nested table becomes text of the cell that holds it.
                    Some(cell) => cell.paras.extend(rows.iter().map(|r| r.join(" | "))),
                    None => blocks.push(Block::Table(rows)),
                }
            }
            _ => {}
        }
    })?;
    Ok(blocks)
}

/// Render blocks; table numbering continues from `first_table`.
fn render(blocks: &[Block], first_table: usize, with_tables: bool) -> Vec<String> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut t = first_table;
    for b in blocks {
        match b {
            Block::Para(p) => out.push(format!("{p}\n")),
            Block::Marker(m) => out.push(format!("--- {m} ---\n")),
            Block::Table(rows) => {
                t += 1;
                if with_tables {
                    let mut s = format!("--- Table {t} ---\n");
                    for r in rows {
                        s.push_str(&r.join(" | "));
                        s.push('\n');
                    }
                    out.push(s);
                } else {
                    out.push(String::new());
                }
            }
        }
    }
    out
}

/// The parts of a document in reading order: body, then the side stories.
fn read_document(pkg: &mut Package) -> Result<(Vec<Block>, usize, usize), ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut numbering = match pkg.read("word/numbering.xml")? {
        Some(x) => Numbering::parse(&x, depth)?,
        None => Numbering::default(),
    };
    let body = pkg.read("word/document.xml")?.ok_or_else(|| {
        ApiError::new(
            crate::error::ErrorCode::Corrupt,
            "the package has no word/document.xml",
        )
    })?;
    let mut blocks = parse_story(&body, depth, &mut numbering)?;
    let body_paragraphs = blocks
        .iter()
        .filter(|b| matches!(b, Block::Para(_)))
        .count();
    let tables = blocks
        .iter()
        .filter(|b| matches!(b, Block::Table(_)))
        .count();
    let mut names = pkg.names();
    names.sort();
    for (marker, prefix) in [
        ("Headers", "word/header"),
        ("Footers", "word/footer"),
        ("Footnotes", "word/footnotes"),
        ("Endnotes", "word/endnotes"),
        ("Comments", "word/comments"),
    ] {
        let mut seen: Vec<Block> = Vec::new();
        for name in names
            .iter()
            .filter(|n| n.starts_with(prefix) && n.ends_with(".xml"))
        {
            let Some(xml) = pkg.read(name)? else { continue };
            for b in parse_story(&xml, depth, &mut numbering)? {
                let empty = matches!(&b, Block::Para(p) if p.trim().is_empty());
                if !empty && !seen.contains(&b) {
                    seen.push(b);
                }
            }
        }
        if !seen.is_empty() {
            blocks.push(Block::Marker(marker.to_string()));
            blocks.extend(seen);
        }
    }
    Ok((blocks, body_paragraphs, tables))
}

impl Extractor for DocxExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &ReadRequest,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars(limits.max_chars)?;
        let query = req.query()?;
        let with_tables = req.mode != Some(crate::options::DocxMode::Text);
        let budget =
            options::count("max_paragraphs", req.max_paragraphs, 1)?.unwrap_or(200) as usize;
        let start =
            options::count("paragraph_offset", req.paragraph_offset, 0)?.unwrap_or(0) as usize;
        let mut pkg = Package::open(&input.path, limits.package)?;
        let (blocks, paragraphs, tables) = read_document(&mut pkg)?;
        if start > 0 && start >= blocks.len() {
            return Err(ApiError::out_of_range(format!(
                "paragraph_offset {start} but the document has {} blocks",
                blocks.len()
            )));
        }
        let tables_before = blocks[..start]
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        let rendered = render(&blocks[start..], tables_before, with_tables);
        let extra = Report {
            paragraphs: Some(paragraphs as u64),
            tables: Some(tables as u64),
            blocks: Some(blocks.len() as u64),
            ..Default::default()
        };

        if let Some(q) = query {
            // Search everything from the offset; line numbers are the output's lines.
            let all: String = rendered.concat();
            let lines: Vec<&str> = all.lines().collect();
            let (hits, count) = grep(&lines, 1, &q);
            let char_count = hits.chars().count() as u64;
            let mut ex = Extraction {
                char_count,
                matches: Some(count as u64),
                report: extra,
                ..Default::default()
            };
            if char_count as usize > max_chars {
                let kept = whole_lines_within(&hits, max_chars);
                ex.text = close_truncated(kept.to_string(), char_count);
                ex.truncated = true;
                let mut next = Next::default();
                next.max_chars = Some(char_count as u64);
                ex.next = Some(next);
                ex.warnings
                    .push("the matches are cut at max_chars; `next` reads them all".into());
            } else {
                ex.text = hits;
            }
            return Ok(ex);
        }

        // Whole blocks, within both budgets.
        let full: u64 = rendered.iter().map(|r| r.chars().count() as u64).sum();
        let mut ex = Extraction {
            char_count: full,
            report: extra,
            ..Default::default()
        };
        let Taken {
            text,
            count: taken,
            oversize,
        } = take_blocks(&rendered, max_chars, budget);
        if taken == rendered.len() {
            ex.text = text;
            return Ok(ex);
        }
        let mut next = Next::default();
        next.paragraph_offset = Some((start + taken) as u64);
        if let Some(needed) = oversize {
            // One block longer than max_chars: its start is shown; `next` reads it whole.
            next.max_chars = Some(needed as u64);
            ex.warnings
                .push("a single block is longer than max_chars; `next` reads it whole".into());
        } else if taken >= budget {
            ex.warnings.push(format!(
                "stopped after max_paragraphs ({budget}); `next` reads on"
            ));
        }
        ex.truncated = true;
        ex.text = close_truncated(text, full);
        ex.next = Some(next);
        Ok(ex)
    }
}
