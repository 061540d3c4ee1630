//! Word (.docx/.docm): the body in reading order — paragraphs, list items with their
//! bullet or number, and each table where it stands — then headers, footers, footnotes,
//! endnotes and comments under their own markers.

use std::collections::HashMap;

use super::blocks::{block_findings, join_label, letters, roman, serve_blocks, Block};
use super::package::Package;
use super::xml::{attr, walk, Node};
use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{Extraction, Next};
use crate::error::ApiError;
use crate::options::{HiddenText, Options};

pub struct DocxExtractor;

/// A paragraph `parse_story` writes where a chart stands, with its relationship id.
const CHART_MARK: &str = "\u{1}chart:";
/// A paragraph `parse_story` writes where a SmartArt diagram stands, with the relationship
/// id of its data part.
const DIAGRAM_MARK: &str = "\u{1}diagram:";

/// One level of a list definition (`w:lvl`).
#[derive(Debug, Clone, Default)]
struct Level {
    /// `numFmt`: decimal, decimalZero, upperLetter, lowerRoman, bullet, none, …
    fmt: Option<String>,
    /// `lvlText`: the label, `%1.%2.` standing for the levels' counters.
    text: Option<String>,
    start: Option<u32>,
    /// `lvlRestart`: restart after this (1-based) level is used; 0 never.
    restart: Option<u32>,
    /// `isLgl`: every counter in the label as a decimal number.
    legal: bool,
    /// `pStyle`: the paragraph style numbered at this level.
    style: Option<String>,
}

/// A list instance (`w:num`): its definition and what it overrides.
#[derive(Debug, Clone, Default)]
struct Num {
    abs: String,
    /// By level: `startOverride`, and a whole `lvl` given in the override.
    overrides: HashMap<u32, (Option<u32>, Option<Level>)>,
}

/// A paragraph style's numbering, from styles.xml (`basedOn` followed).
#[derive(Debug, Clone, Default)]
struct StyleNum {
    based_on: Option<String>,
    num_id: Option<String>,
    ilvl: Option<u32>,
    /// The outline level (0 for Heading 1), from `outlineLvl` or the style's built-in
    /// name.
    outline: Option<u32>,
    /// The built-in Title style.
    title: bool,
    /// `w:vanish` (or `w:specVanish`) in the style's run properties: text in this style is
    /// hidden unless a run says otherwise.
    vanish: Option<bool>,
}

const LEVELS: usize = 9;

/// Word's list numbering: definitions from numbering.xml and styles.xml, and the counters
/// as the document is read. Counters belong to the definition (`abstractNum`), so two
/// lists of one definition continue each other, unless a list restarts a level with
/// `startOverride` (applied when it is first used).
#[derive(Default)]
struct Numbering {
    abstracts: HashMap<String, Vec<Level>>,
    nums: HashMap<String, Num>,
    styles: HashMap<String, StyleNum>,
    counters: HashMap<String, [Option<u32>; LEVELS]>,
    started: std::collections::HashSet<String>,
    /// `w:vanish` in the document defaults' run properties (`w:docDefaults`).
    default_vanish: bool,
}

impl Numbering {
    fn parse(xml: &[u8], depth: usize) -> Result<Self, ApiError> {
        let mut out = Self::default();
        let (mut cur_abs, mut cur_num) = (None::<String>, None::<String>);
        let mut cur_override: Option<u32> = None;
        let mut cur_lvl: Option<(u32, Level)> = None;
        walk(xml, depth, |n| match n {
            Node::Open("abstractNum", a) => cur_abs = attr(a, "abstractNumId").map(str::to_string),
            Node::Close("abstractNum") => cur_abs = None,
            Node::Open("num", a) => {
                cur_num = attr(a, "numId").map(str::to_string);
                if let Some(id) = &cur_num {
                    out.nums.insert(id.clone(), Num::default());
                }
            }
            Node::Close("num") => cur_num = None,
            Node::Open("abstractNumId", a) => {
                if let (Some(num), Some(v)) = (&cur_num, attr(a, "val")) {
                    if let Some(n) = out.nums.get_mut(num) {
                        n.abs = v.to_string();
                    }
                }
            }
            Node::Open("lvlOverride", a) => {
                cur_override = attr(a, "ilvl").and_then(|v| v.parse().ok())
            }
            Node::Close("lvlOverride") => cur_override = None,
            Node::Open("startOverride", a) => {
                if let (Some(num), Some(l)) = (&cur_num, cur_override) {
                    let v = attr(a, "val").and_then(|v| v.parse().ok());
                    if let Some(n) = out.nums.get_mut(num) {
                        n.overrides.entry(l).or_default().0 = v;
                    }
                }
            }
            Node::Open("lvl", a) => {
                let i = attr(a, "ilvl").and_then(|v| v.parse().ok()).unwrap_or(0);
                cur_lvl = Some((i, Level::default()));
            }
            Node::Close("lvl") => {
                let Some((i, lvl)) = cur_lvl.take() else {
                    return;
                };
                if (i as usize) >= LEVELS {
                    return;
                }
                if let (Some(num), Some(_)) = (&cur_num, cur_override) {
                    if let Some(n) = out.nums.get_mut(num) {
                        n.overrides.entry(i).or_default().1 = Some(lvl);
                    }
                } else if let Some(abs) = &cur_abs {
                    let levels = out.abstracts.entry(abs.clone()).or_default();
                    if levels.len() <= i as usize {
                        levels.resize(i as usize + 1, Level::default());
                    }
                    levels[i as usize] = lvl;
                }
            }
            Node::Open(tag, a) => {
                let Some((_, lvl)) = cur_lvl.as_mut() else {
                    return;
                };
                let val = attr(a, "val");
                match tag {
                    "numFmt" => lvl.fmt = val.map(str::to_string),
                    "lvlText" => lvl.text = val.map(str::to_string),
                    "start" => lvl.start = val.and_then(|v| v.parse().ok()),
                    "lvlRestart" => lvl.restart = val.and_then(|v| v.parse().ok()),
                    "isLgl" => lvl.legal = val.is_none_or(|v| !matches!(v, "0" | "false")),
                    "pStyle" => lvl.style = val.map(str::to_string),
                    _ => {}
                }
            }
            _ => {}
        })?;
        Ok(out)
    }

    /// Paragraph styles that carry numbering (headings numbered through their style).
    fn parse_styles(&mut self, xml: &[u8], depth: usize) -> Result<(), ApiError> {
        let mut cur: Option<(String, StyleNum)> = None;
        let mut in_ppr = false;
        let mut in_defaults = false;
        let default_vanish = &mut self.default_vanish;
        let styles = &mut self.styles;
        walk(xml, depth, |n| match n {
            Node::Open("rPrDefault", _) => in_defaults = true,
            Node::Close("rPrDefault") => in_defaults = false,
            Node::Open("vanish" | "specVanish", a) if in_defaults => *default_vanish = on(a),
            Node::Open("style", a) => {
                cur = attr(a, "styleId").map(|id| (id.to_string(), StyleNum::default()))
            }
            Node::Close("style") => {
                if let Some((id, st)) = cur.take() {
                    styles.insert(id, st);
                }
            }
            Node::Open("pPr", _) => in_ppr = true,
            Node::Close("pPr") => in_ppr = false,
            Node::Open(tag, a) => {
                let Some((_, st)) = cur.as_mut() else { return };
                match tag {
                    "basedOn" => st.based_on = attr(a, "val").map(str::to_string),
                    "numId" if in_ppr => st.num_id = attr(a, "val").map(str::to_string),
                    "ilvl" if in_ppr => st.ilvl = attr(a, "val").and_then(|v| v.parse().ok()),
                    "outlineLvl" if in_ppr => {
                        st.outline = attr(a, "val").and_then(|v| v.parse().ok())
                    }
                    // The style's run properties (a paragraph style's `pPr/rPr` is its
                    // paragraph mark's, which hides no text).
                    "vanish" | "specVanish" if !in_ppr => st.vanish = Some(on(a)),
                    "name" => {
                        let name = attr(a, "val").unwrap_or("").to_ascii_lowercase();
                        st.title = name == "title";
                        let level = name
                            .strip_prefix("heading ")
                            .and_then(|n| n.trim().parse::<u32>().ok())
                            .map(|n| n.saturating_sub(1));
                        st.outline = st.outline.or(level);
                    }
                    _ => {}
                }
            }
            _ => {}
        })
    }

    /// Whether text in `style` is hidden (`w:vanish`), through the styles it is based on;
    /// `None` when no style in the chain says.
    fn style_vanish(&self, style: &str) -> Option<bool> {
        let mut at = Some(style);
        for _ in 0..16 {
            let st = self.styles.get(at?)?;
            if let Some(v) = st.vanish {
                return Some(v);
            }
            at = st.based_on.as_deref();
        }
        None
    }

    /// The Markdown heading level of a paragraph of `style`, through the styles it is
    /// based on: 1 for the Title, outline level + 2 (to 6) for headings — the title is the
    /// document's one top heading —; none for body text (outline level 9 and up).
    fn heading(&self, style: &str) -> Option<u8> {
        let mut at = Some(style);
        for _ in 0..16 {
            let st = self.styles.get(at?)?;
            if st.title {
                return Some(1);
            }
            if let Some(o) = st.outline {
                return heading_level(o);
            }
            at = st.based_on.as_deref();
        }
        None
    }

    /// The list and level a paragraph of `style` has through its style (and the styles
    /// it is based on), if any.
    fn for_style(&self, style: &str) -> Option<(String, u32)> {
        let (mut num_id, mut ilvl) = (None, None);
        let mut at = Some(style.to_string());
        for _ in 0..16 {
            let Some(st) = at.as_ref().and_then(|s| self.styles.get(s)) else {
                break;
            };
            num_id = num_id.or_else(|| st.num_id.clone());
            ilvl = ilvl.or(st.ilvl);
            at = st.based_on.clone();
        }
        let num_id = num_id.filter(|n| n != "0")?;
        // A level linked to the style names the level; else the style's own, else 0.
        let linked = self
            .nums
            .get(&num_id)
            .and_then(|n| self.abstracts.get(&n.abs))
            .and_then(|levels| {
                levels
                    .iter()
                    .position(|l| l.style.as_deref() == Some(style))
            });
        Some((num_id, linked.map(|l| l as u32).or(ilvl).unwrap_or(0)))
    }

    /// The definition of level `ilvl` of list `num_id`, overrides applied.
    fn level(&self, num_id: &str, ilvl: u32) -> Option<Level> {
        let num = self.nums.get(num_id)?;
        if let Some((_, Some(l))) = num.overrides.get(&ilvl) {
            return Some(l.clone());
        }
        self.abstracts.get(&num.abs)?.get(ilvl as usize).cloned()
    }

    /// The label of the next item at `ilvl` of list `num_id` (`2.3.1.`, `b)`, `•`), with
    /// the indent of its level, counting it.
    fn prefix(&mut self, num_id: &str, lvl: u32) -> (u32, String, bool) {
        let ilvl = lvl.min(LEVELS as u32 - 1);
        let Some(num) = self.nums.get(num_id).cloned() else {
            return (ilvl, "•".into(), true);
        };
        let Some(level) = self
            .level(num_id, ilvl)
            .filter(|l| l.fmt.is_some() || l.text.is_some())
        else {
            return (ilvl, "•".into(), true);
        };
        let levels: Vec<Level> = (0..LEVELS as u32)
            .map(|i| self.level(num_id, i).unwrap_or_default())
            .collect();
        let counters = self.counters.entry(num.abs.clone()).or_default();
        if self.started.insert(num_id.to_string()) {
            for (l, (start, _)) in &num.overrides {
                if let Some(v) = start {
                    if (*l as usize) < LEVELS {
                        counters[*l as usize] = Some(v.saturating_sub(1));
                    }
                }
            }
        }
        let start = |l: &Level| l.start.unwrap_or(1);
        let i = ilvl as usize;
        counters[i] = Some(counters[i].map_or(start(&level), |c| c.saturating_add(1)));
        // Deeper levels restart after this one, unless their lvlRestart says otherwise.
        for (d, l) in levels.iter().enumerate().skip(i + 1) {
            let restarts = match l.restart {
                None => true,
                Some(0) => false,
                Some(r) => i < r as usize,
            };
            if restarts {
                counters[d] = None;
            }
        }
        let fmt = level.fmt.as_deref().unwrap_or("decimal");
        if fmt == "bullet" {
            return (ilvl, bullet(level.text.as_deref().unwrap_or("")), true);
        }
        let pattern = level.text.clone().unwrap_or_else(|| format!("%{}.", i + 1));
        let mut label = String::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek().and_then(|d| d.to_digit(10))) {
                ('%', Some(d)) if (1..=LEVELS as u32).contains(&d) => {
                    chars.next();
                    let k = d as usize - 1;
                    let n = counters[k].unwrap_or_else(|| start(&levels[k]));
                    let f = if level.legal && k != i {
                        "decimal"
                    } else if k == i {
                        fmt
                    } else {
                        levels[k].fmt.as_deref().unwrap_or("decimal")
                    };
                    label.push_str(&format_number(n, f));
                }
                _ => label.push(c),
            }
        }
        (ilvl, label.trim().to_string(), false)
    }
}

/// A bullet's character: Word writes Symbol and Wingdings bullets in the private use area
/// (U+F0B7 for the round one); those become `•`.
fn bullet(text: &str) -> String {
    let t: String = text
        .chars()
        .map(|c| {
            if ('\u{E000}'..='\u{F8FF}').contains(&c) {
                '•'
            } else {
                c
            }
        })
        .collect();
    if t.trim().is_empty() {
        "•".to_string()
    } else {
        t
    }
}

/// A counter in a `numFmt`.
fn format_number(n: u32, fmt: &str) -> String {
    match fmt {
        "lowerLetter" => letters(n).to_lowercase(),
        "upperLetter" => letters(n),
        "lowerRoman" => roman(n).to_lowercase(),
        "upperRoman" => roman(n),
        "decimalZero" if n < 10 => format!("0{n}"),
        "ordinal" => {
            let suffix = match (n % 10, n % 100) {
                (_, 11..=13) => "th",
                (1, _) => "st",
                (2, _) => "nd",
                (3, _) => "rd",
                _ => "th",
            };
            format!("{n}{suffix}")
        }
        "none" => String::new(),
        _ => n.to_string(),
    }
}

/// Parse one story (body, header, notes…) into blocks.
/// Hidden runs found in a story: the block they are in, how they hide, and their text.
type HiddenRuns = Vec<(usize, Hiding, String)>;

/// How a run hides: `w:vanish`, white text with no shading or highlight under it (on the
/// run, its paragraph or its table cell) and no page colour, or a font under 1.5 pt. Direct
/// formatting only (a character style's colour is not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hiding {
    Vanish,
    White,
    Tiny,
    /// A picture's description (`wp:docPr descr`): not in the text, shown on request.
    AltText,
    /// A comment: in the text under `--- Comments ---`, shown beside the page on request.
    Comment,
}

impl Hiding {
    fn kind(self) -> crate::findings::FindingKind {
        match self {
            Self::Vanish => crate::findings::FindingKind::HiddenRun,
            Self::White => crate::findings::FindingKind::WhiteText,
            Self::Tiny => crate::findings::FindingKind::TinyText,
            Self::AltText => crate::findings::FindingKind::AltText,
            Self::Comment => crate::findings::FindingKind::Comment,
        }
    }

    fn why(self) -> &'static str {
        match self {
            Self::Vanish => "w:vanish (on the run, its style or the document defaults)",
            Self::White => "white text (w:color FFFFFF) on no shading",
            Self::Tiny => "font under 1.5 pt (w:sz)",
            Self::AltText => "picture description (wp:docPr descr), not in the text",
            Self::Comment => "a comment, shown beside the text on request",
        }
    }
}

/// A toggle property (`w:vanish`, `w:b`…): on unless `w:val` says 0, false or off.
fn on(a: &[(String, String)]) -> bool {
    attr(a, "val").is_none_or(|v| !matches!(v, "0" | "false" | "off"))
}

/// A fill or highlight that shows something behind the text (not none, auto or white).
fn shows_colour(v: Option<&str>) -> bool {
    v.is_some_and(|v| {
        !matches!(
            v.to_ascii_lowercase().as_str(),
            "" | "auto" | "none" | "ffffff" | "white"
        )
    })
}

fn parse_story(
    xml: &[u8],
    depth: usize,
    numbering: &mut Numbering,
    hidden_text: HiddenText,
    page: &mut bool,
) -> Result<(Vec<Block>, HiddenRuns), ApiError> {
    struct Cell {
        paras: Vec<String>,
    }
    let mut blocks = Vec::new();
    // Open paragraphs: text, list (numId, level) set directly, and paragraph style.
    let mut paras: Vec<(String, Option<(String, u32)>, Option<String>)> = Vec::new();
    let mut tables: Vec<Vec<Vec<Cell>>> = Vec::new(); // open tables: rows of cells
    let mut in_text = false;
    let mut skip_depth = 0usize; // inside content that must not be read (fallbacks, deleted text, field codes, ruby annotations)
    let mut num: Option<(String, u32)> = None;
    let mut ilvl: u32 = 0;
    // The open paragraph's own outline level (`w:outlineLvl`), over its style's.
    let mut outline: Option<u32> = None;
    // Hidden runs (`w:vanish` in a run's properties; in the paragraph's it hides only the
    // paragraph mark): the open run's, the last run's, and the open paragraph's text.
    let (mut in_ppr, mut last_hidden) = (false, false);
    // Whether the open run hides: its own `w:vanish`/`w:specVanish`, else its character
    // style's, else its paragraph style's, else the document defaults' (styles followed
    // through `basedOn`).
    let (mut run_hidden, mut run_style_hidden, mut para_style_hidden) =
        (None::<bool>, None::<bool>, None::<bool>);
    // White or tiny text, and what could make white text visible (shading, highlight, a
    // page colour).
    let (mut run_white, mut run_tiny, mut run_shaded) = (false, false, false);
    let (mut in_tcpr, mut para_shaded, mut cell_shaded, mut page_coloured) =
        (false, false, false, *page);
    let mut hidden_here: Vec<(Hiding, String)> = Vec::new();
    let mut hidden: HiddenRuns = Vec::new();
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
                "Fallback" | "delText" | "instrText" | "rt" | "footnoteRef" | "endnoteRef"
                | "pPrChange" | "rPrChange",
                _,
            ) => skip_depth = 1,
            Node::Open("p", _) => {
                para_shaded = false;
                para_style_hidden = None;
                paras.push((String::new(), None, None));
                num = None;
                ilvl = 0;
                outline = None;
            }
            Node::Open("pStyle", a) => {
                if let Some(p) = paras.last_mut() {
                    p.2 = attr(a, "val").map(str::to_string);
                }
                para_style_hidden = attr(a, "val").and_then(|v| numbering.style_vanish(v));
            }
            Node::Open("rStyle", a) if !in_ppr => {
                run_style_hidden = attr(a, "val").and_then(|v| numbering.style_vanish(v));
            }
            Node::Open("ilvl", a) => {
                ilvl = attr(a, "val").and_then(|v| v.parse().ok()).unwrap_or(0)
            }
            Node::Open("numId", a) => {
                // numId 0 takes the numbering a style would give away.
                num = attr(a, "val").map(|v| (v.to_string(), ilvl));
            }
            Node::Close("numPr") => {
                if let (Some(p), Some((id, _))) = (paras.last_mut(), num.clone()) {
                    p.1 = Some((id, ilvl));
                }
            }
            Node::Open("t", _) => in_text = true,
            Node::Close("t") => in_text = false,
            Node::Open("pPr", _) => in_ppr = true,
            Node::Close("pPr") => in_ppr = false,
            Node::Open("r", _) => {
                (run_hidden, run_style_hidden) = (None, None);
                (run_white, run_tiny, run_shaded) = (false, false, false)
            }
            Node::Open("vanish" | "specVanish", a) if !in_ppr => run_hidden = Some(on(a)),
            Node::Open("color", a) if !in_ppr => {
                run_white = attr(a, "val").is_some_and(|v| v.eq_ignore_ascii_case("FFFFFF"))
            }
            Node::Open("sz", a) if !in_ppr => {
                run_tiny = attr(a, "val")
                    .and_then(|v| v.parse::<u32>().ok())
                    .is_some_and(|hp| hp < 3)
            }
            Node::Open("highlight", a) if !in_ppr => run_shaded |= shows_colour(attr(a, "val")),
            Node::Open("tcPr", _) => in_tcpr = true,
            Node::Close("tcPr") => in_tcpr = false,
            Node::Open("shd", a) => {
                let shown = shows_colour(attr(a, "fill"));
                if in_tcpr {
                    cell_shaded |= shown;
                } else if in_ppr {
                    para_shaded |= shown;
                } else {
                    run_shaded |= shown;
                }
            }
            Node::Open("background", a) => page_coloured |= shows_colour(attr(a, "color")),
            // A picture's description: listed (`alt_text`), not read into the text.
            Node::Open("docPr", a) => {
                if let Some(d) = attr(a, "descr").filter(|d| !d.trim().is_empty()) {
                    hidden_here.push((Hiding::AltText, d.to_string()));
                }
            }
            Node::Text(t) if in_text => {
                if let Some(p) = paras.last_mut() {
                    let vanish = run_hidden
                        .or(run_style_hidden)
                        .or(para_style_hidden)
                        .unwrap_or(numbering.default_vanish);
                    let hiding = if vanish {
                        Some(Hiding::Vanish)
                    } else if run_white
                        && !(run_shaded || para_shaded || cell_shaded || page_coloured)
                    {
                        Some(Hiding::White)
                    } else if run_tiny {
                        Some(Hiding::Tiny)
                    } else {
                        None
                    };
                    let Some(hiding) = hiding else {
                        p.0.push_str(t);
                        last_hidden = false;
                        return;
                    };
                    match hidden_here.last_mut() {
                        Some((h, text)) if *h == hiding => text.push_str(t),
                        _ => hidden_here.push((hiding, t.to_string())),
                    }
                    crate::findings::push_hidden(&mut p.0, t, hidden_text, last_hidden);
                    last_hidden = true;
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
                let Some((text, list, style)) = paras.pop() else {
                    return;
                };
                last_hidden = false;
                for (h, text) in hidden_here.drain(..) {
                    if !text.trim().is_empty() {
                        hidden.push((blocks.len(), h, text));
                    }
                }
                let heading = match outline.take() {
                    Some(o) => heading_level(o),
                    None => style.as_deref().and_then(|s| numbering.heading(s)),
                };
                // Set on the paragraph, else through its style (numbered headings).
                let list = match list {
                    Some((id, _)) if id == "0" => None,
                    Some(l) => Some(l),
                    None => style.and_then(|s| numbering.for_style(&s)),
                };
                let label = match list {
                    Some((id, lvl)) if !text.trim().is_empty() => Some(numbering.prefix(&id, lvl)),
                    _ => None,
                };
                let in_cell = tables
                    .last_mut()
                    .and_then(|t| t.last_mut())
                    .and_then(|r| r.last_mut());
                let block = match (label, heading) {
                    _ if in_cell.is_some() || text.trim().is_empty() => Block::Para(text),
                    // A numbered heading is a heading with its number.
                    (Some((lvl, label, _)), Some(h)) => {
                        Block::Heading(h, lvl, join_label(&label, &text))
                    }
                    (None, Some(h)) => Block::Heading(h, 0, text),
                    (Some((level, label, bullet)), None) => Block::Item {
                        level,
                        label,
                        bullet,
                        text,
                    },
                    (None, None) => Block::Para(text),
                };
                if let Some(cell) = in_cell {
                    cell.paras.push(block.plain());
                    return;
                }
                if !paras.is_empty() {
                    // A text box inside a paragraph: its own line, where it stands.
                    if !block.plain().trim().is_empty() {
                        blocks.push(block);
                    }
                    return;
                }
                blocks.push(block);
            }
            Node::Open("outlineLvl", a) if !paras.is_empty() => {
                outline = attr(a, "val").and_then(|v| v.parse().ok());
            }
            Node::Open("chart", a) => {
                if let Some(rid) = attr(a, "id") {
                    blocks.push(Block::Para(format!("{CHART_MARK}{rid}")));
                }
            }
            Node::Open("relIds", a) => {
                if let Some(rid) = attr(a, "dm") {
                    blocks.push(Block::Para(format!("{DIAGRAM_MARK}{rid}")));
                }
            }
            Node::Open("tbl", _) => tables.push(Vec::new()),
            Node::Open("tr", _) => {
                if let Some(t) = tables.last_mut() {
                    t.push(Vec::new());
                }
            }
            Node::Open("tc", _) => {
                cell_shaded = false;
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
    *page = page_coloured;
    Ok((blocks, hidden))
}

/// The Markdown heading of a Word outline level (0 is Heading 1, under the title).
fn heading_level(outline: u32) -> Option<u8> {
    (outline < 9).then(|| (outline + 2).min(6) as u8)
}

/// The parts of a document in reading order: body, then the side stories.
fn read_document(
    pkg: &mut Package,
    hidden_text: HiddenText,
) -> Result<(Vec<Block>, usize, usize, HiddenRuns), ApiError> {
    let depth = pkg.limits().max_xml_depth;
    let mut numbering = match pkg.read("word/numbering.xml")? {
        Some(x) => Numbering::parse(&x, depth)?,
        None => Numbering::default(),
    };
    if let Some(x) = pkg.read("word/styles.xml")? {
        numbering.parse_styles(&x, depth)?;
    }
    let body = pkg.read("word/document.xml")?.ok_or_else(|| {
        ApiError::new(
            crate::error::ErrorCode::Corrupt,
            "the package has no word/document.xml",
        )
    })?;
    // A page colour (the body's `w:background`) is behind the headers and notes too.
    let mut page = false;
    let (mut blocks, mut hidden) =
        parse_story(&body, depth, &mut numbering, hidden_text, &mut page)?;
    // Charts and SmartArt where they stand, from the parts the body's relationships name.
    let placed = |b: &Block| matches!(b, Block::Para(p) if p.starts_with(CHART_MARK) || p.starts_with(DIAGRAM_MARK));
    if blocks.iter().any(placed) {
        let rels = super::package::relationships(pkg, "word/_rels/document.xml.rels", "word")?;
        let mut read = |rid: &str| -> Result<Option<Vec<u8>>, ApiError> {
            match rels.get(rid) {
                Some((part, _)) => pkg.read(part),
                None => Ok(None),
            }
        };
        // Each block's place after the charts and diagrams take theirs (hidden runs are
        // placed by block).
        let mut at = Vec::with_capacity(blocks.len() + 1);
        let mut out = Vec::with_capacity(blocks.len());
        for b in std::mem::take(&mut blocks) {
            at.push(out.len());
            let Block::Para(p) = &b else {
                out.push(b);
                continue;
            };
            if let Some(rid) = p.strip_prefix(CHART_MARK) {
                if let Some(chart) = read(rid)?.map(|x| super::chart::read(&x, depth)) {
                    out.extend(chart?.filter(|c| !c.is_empty()).map(Block::Chart));
                }
            } else if let Some(rid) = p.strip_prefix(DIAGRAM_MARK) {
                if let Some(x) = read(rid)? {
                    // A damaged diagram loses its own text, not the document's.
                    let lines = super::diagram::lines(&x, depth).unwrap_or_default();
                    out.extend(lines.into_iter().map(Block::Para));
                }
            } else {
                out.push(b);
            }
        }
        at.push(out.len());
        for h in hidden.iter_mut() {
            h.0 = at[h.0.min(at.len() - 1)];
        }
        blocks = out;
    }
    let body_paragraphs = blocks.iter().filter(|b| b.is_paragraph()).count();
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
        // Hidden runs and pictures' descriptions of these stories, by their block's place
        // in `seen` (a block repeated in another part is one block; a picture alone in an
        // empty paragraph is placed where the stories' marker stands).
        let mut found: Vec<(Option<usize>, Hiding, String)> = Vec::new();
        for name in names
            .iter()
            .filter(|n| n.starts_with(prefix) && n.ends_with(".xml"))
        {
            let Some(xml) = pkg.read(name)? else { continue };
            let (story, story_hidden) =
                parse_story(&xml, depth, &mut numbering, hidden_text, &mut page)?;
            let mut place: Vec<Option<usize>> = Vec::with_capacity(story.len());
            for b in story {
                let empty = b.is_paragraph() && {
                    let p = b.plain();
                    p.trim().is_empty() || p.starts_with(CHART_MARK) || p.starts_with(DIAGRAM_MARK)
                };
                place.push(if empty {
                    None
                } else if let Some(i) = seen.iter().position(|s| *s == b) {
                    Some(i)
                } else {
                    seen.push(b);
                    Some(seen.len() - 1)
                });
            }
            for (at, how, text) in story_hidden {
                let at = place.get(at).copied().flatten();
                if !found
                    .iter()
                    .any(|(a, h, t)| *a == at && *h == how && *t == text)
                {
                    found.push((at, how, text));
                }
            }
        }
        // The marker's place; the stories' blocks follow it.
        let base = blocks.len();
        for (at, how, text) in found {
            let at = at.map_or(base, |i| base + 1 + i);
            hidden.push((at, how, text));
        }
        if !seen.is_empty() {
            blocks.push(Block::Marker(marker.to_string()));
            for b in seen {
                if marker == "Comments" {
                    hidden.push((blocks.len(), Hiding::Comment, b.plain()));
                }
                blocks.push(b);
            }
        }
    }
    // What stands past the last block (a picture alone in the last stories) goes with it.
    let last = blocks.len().saturating_sub(1);
    for h in hidden.iter_mut() {
        h.0 = h.0.min(last);
    }
    hidden.sort_by_key(|h| h.0);
    Ok((blocks, body_paragraphs, tables, hidden))
}

impl Extractor for DocxExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let mut pkg = Package::open(&input.path, limits.package)?;
        let hidden_text = req.hidden_text.unwrap_or(HiddenText::Keep);
        let (blocks, paragraphs, tables, hidden) = read_document(&mut pkg, hidden_text)?;
        let mut ex = serve_blocks(&blocks, paragraphs, tables, req)?;
        ex.findings = hidden_findings(blocks.len(), &hidden, req, ex.next.as_ref(), hidden_text)?;
        Ok(ex)
    }
}

/// Word's hidden runs in the blocks the read returned (from `paragraph_offset` to where
/// `next` goes on, or all it searched for a query) as findings, placed by block
/// (`paragraph`, as `paragraph_offset` counts).
fn hidden_findings(
    blocks: usize,
    hidden: &[(usize, Hiding, String)],
    req: &Options,
    next: Option<&Next>,
    mode: HiddenText,
) -> Result<Vec<crate::findings::Finding>, ApiError> {
    block_findings(
        blocks,
        hidden.iter().map(|(at, how, text)| {
            (
                *at,
                how.kind(),
                how.why(),
                text.as_str(),
                // Not in the text returned: a picture's description.
                *how == Hiding::AltText,
            )
        }),
        req,
        next,
        mode,
    )
}
