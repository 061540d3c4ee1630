//! Word's list numbering and what paragraph styles say: the definitions of numbering.xml
//! (`Level`, `Num`), the paragraph styles of styles.xml (`StyleNum`: numbering, outline
//! level, Title, `w:vanish`), the counters as the document is read, and the labels they
//! make (`prefix`: `2.3.1.`, `b)`, `•`).

use std::collections::HashMap;

use super::super::blocks::{letters, roman};
use super::super::xml::{attr, walk, Node};
use super::hiding::on;
use crate::error::ApiError;

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
pub(super) struct Numbering {
    abstracts: HashMap<String, Vec<Level>>,
    nums: HashMap<String, Num>,
    styles: HashMap<String, StyleNum>,
    counters: HashMap<String, [Option<u32>; LEVELS]>,
    started: std::collections::HashSet<String>,
    /// `w:vanish` in the document defaults' run properties (`w:docDefaults`).
    pub(super) default_vanish: bool,
}

impl Numbering {
    pub(super) fn parse(xml: &[u8], depth: usize) -> Result<Self, ApiError> {
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
    pub(super) fn parse_styles(&mut self, xml: &[u8], depth: usize) -> Result<(), ApiError> {
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
    pub(super) fn style_vanish(&self, style: &str) -> Option<bool> {
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
    pub(super) fn heading(&self, style: &str) -> Option<u8> {
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
    pub(super) fn for_style(&self, style: &str) -> Option<(String, u32)> {
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
    pub(super) fn prefix(&mut self, num_id: &str, lvl: u32) -> (u32, String, bool) {
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
        // A level without `w:start` starts at 0 (ECMA-376 17.9.26; Word shows `0th`).
        let start = |l: &Level| l.start.unwrap_or(0);
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
                    // A level above that no item has used yet (an item a level or more
                    // deeper than the one before) shows its start, and counts from there:
                    // `2`, `2.a.I`, then `2.b` at the skipped level.
                    let n = match counters[k] {
                        Some(n) => n,
                        None if k < i => *counters[k].insert(start(&levels[k])),
                        None => start(&levels[k]),
                    };
                    let other = levels[k].fmt.as_deref().unwrap_or("decimal");
                    let f = if k == i {
                        fmt
                    } else if matches!(other, "bullet" | "none") {
                        // A bullet or unnumbered level's place in a label is empty, legal
                        // numbering or not (`1.1.1.1...1`).
                        "none"
                    } else if level.legal {
                        "decimal"
                    } else {
                        other
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

/// The Markdown heading of a Word outline level (0 is Heading 1, under the title).
pub(super) fn heading_level(outline: u32) -> Option<u8> {
    (outline < 9).then(|| (outline + 2).min(6) as u8)
}
