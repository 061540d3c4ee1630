//! What `styles.xml` and `content.xml` say of styles: list and outline styles by level
//! (`ListLevel`), the text styles that hide (`text:display="none"`), the drawing-page
//! styles that hide a slide; and the counters that number list items and headings.

use std::collections::HashMap;

use super::super::xml::{attr, walk, Node};
use crate::error::ApiError;

/// One level of a list style (`text:list-level-style-number` / `-bullet`) or of the
/// outline style that numbers headings.
#[derive(Debug, Clone, Default)]
pub(super) struct ListLevel {
    bullet: Option<String>,
    /// `style:num-format`: `1`, `a`, `A`, `i`, `I`, or empty (no number).
    pub(super) format: String,
    prefix: String,
    suffix: String,
    display_levels: usize,
    start: u32,
}

/// List styles by name, and the outline style (under the name ""); and the styles that
/// hide (issue #21): text styles with `text:display="none"`, and drawing-page styles with
/// their parent and `presentation:visibility` (a slide's visibility is on its style, which
/// may inherit it).
#[derive(Default)]
pub(super) struct Styles {
    pub(super) lists: HashMap<String, Vec<ListLevel>>,
    pub(super) hiding: std::collections::HashSet<String>,
    pages: HashMap<String, PageStyle>,
}

/// A drawing-page style: its parent, and what it says (if it does) of the slide's
/// visibility and of its master's drawings (`presentation:background-objects-visible`).
#[derive(Default)]
struct PageStyle {
    parent: Option<String>,
    hidden: Option<bool>,
    master_shown: Option<bool>,
    footer_shown: Option<bool>,
    header_shown: Option<bool>,
}

/// What of its master page a slide shows: the master's drawings, its footer and header
/// placeholders' text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MasterShown {
    pub(super) drawings: bool,
    pub(super) footer: bool,
    pub(super) header: bool,
}

impl Styles {
    /// Whether the drawing-page style `name` (or the one it inherits from) hides its slide.
    pub(super) fn page_hidden(&self, name: &str) -> bool {
        self.page_says(name, |p| p.hidden).unwrap_or(false)
    }

    /// What of its master page a slide of the drawing-page style `name` (or the one it
    /// inherits from) shows: all of it unless the style says otherwise.
    pub(super) fn page_shows(&self, name: Option<&str>) -> MasterShown {
        let says = |what: fn(&PageStyle) -> Option<bool>| {
            name.and_then(|n| self.page_says(n, what)).unwrap_or(true)
        };
        MasterShown {
            drawings: says(|p| p.master_shown),
            footer: says(|p| p.footer_shown),
            header: says(|p| p.header_shown),
        }
    }

    /// What a drawing-page style says, or the nearest style it inherits from.
    fn page_says(&self, name: &str, what: impl Fn(&PageStyle) -> Option<bool>) -> Option<bool> {
        let mut name = name;
        for _ in 0..16 {
            let p = self.pages.get(name)?;
            if let Some(v) = what(p) {
                return Some(v);
            }
            name = p.parent.as_deref()?;
        }
        None
    }

    pub(super) fn parse(&mut self, xml: &[u8], depth: usize) -> Result<(), ApiError> {
        let mut cur: Option<String> = None;
        // The open `style:style`: its name and family.
        let mut style: Option<(String, String)> = None;
        walk(xml, depth, |n| match n {
            Node::Open("style", a) => {
                let name = attr(a, "name").unwrap_or("").to_string();
                let family = attr(a, "family").unwrap_or("").to_string();
                if family == "drawing-page" {
                    self.pages.entry(name.clone()).or_insert(PageStyle {
                        parent: attr(a, "parent-style-name").map(str::to_string),
                        ..Default::default()
                    });
                }
                style = Some((name, family));
            }
            Node::Close("style") => style = None,
            Node::Open("text-properties", a) if attr(a, "display") == Some("none") => {
                if let Some((name, _)) = &style {
                    self.hiding.insert(name.clone());
                }
            }
            Node::Open("drawing-page-properties", a) => {
                if let Some(page) = style
                    .as_ref()
                    .and_then(|(name, _)| self.pages.get_mut(name))
                {
                    if let Some(v) = attr(a, "visibility") {
                        page.hidden = Some(v == "hidden");
                    }
                    if let Some(v) = attr(a, "background-objects-visible") {
                        page.master_shown = Some(v != "false");
                    }
                    if let Some(v) = attr(a, "display-footer") {
                        page.footer_shown = Some(v != "false");
                    }
                    if let Some(v) = attr(a, "display-header") {
                        page.header_shown = Some(v != "false");
                    }
                }
            }
            Node::Open("list-style", a) => cur = attr(a, "name").map(str::to_string),
            Node::Open("outline-style", _) => cur = Some(String::new()),
            Node::Close("list-style" | "outline-style") => cur = None,
            Node::Open(
                tag @ ("list-level-style-number"
                | "list-level-style-bullet"
                | "outline-level-style"),
                a,
            ) => {
                let Some(name) = &cur else { return };
                let level: usize = attr(a, "level").and_then(|v| v.parse().ok()).unwrap_or(1);
                if !(1..=10).contains(&level) {
                    return;
                }
                let l = ListLevel {
                    bullet: (tag == "list-level-style-bullet")
                        .then(|| attr(a, "bullet-char").unwrap_or("•").to_string()),
                    format: attr(a, "num-format").unwrap_or("").to_string(),
                    prefix: attr(a, "num-prefix").unwrap_or("").to_string(),
                    suffix: attr(a, "num-suffix").unwrap_or("").to_string(),
                    display_levels: attr(a, "display-levels")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(1),
                    start: attr(a, "start-value")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(1),
                };
                let levels = self.lists.entry(name.clone()).or_default();
                if levels.len() < level {
                    levels.resize(level, ListLevel::default());
                }
                levels[level - 1] = l;
            }
            _ => {}
        })
    }
}

/// A number in an ODF `num-format`.
fn format_number(n: u32, format: &str) -> String {
    match format {
        "a" => super::super::blocks::letters(n).to_lowercase(),
        "A" => super::super::blocks::letters(n),
        "i" => super::super::blocks::roman(n).to_lowercase(),
        "I" => super::super::blocks::roman(n),
        "" => String::new(),
        _ => n.to_string(),
    }
}

/// Counters of one list style (or the outline), by level.
#[derive(Default, Clone)]
pub(super) struct Counters(Vec<Option<u32>>);

impl Counters {
    /// Counts an item at `level` (1-based) and gives its label (`1.2.`, `•`), `None` when
    /// the level shows no label.
    pub(super) fn label(
        &mut self,
        levels: &[ListLevel],
        level: usize,
        start: Option<u32>,
    ) -> Option<String> {
        let def = levels.get(level - 1).cloned().unwrap_or_default();
        if self.0.len() < level {
            self.0.resize(level, None);
        }
        self.0[level - 1] = Some(match (start, self.0[level - 1]) {
            (Some(s), _) => s,
            (None, Some(c)) => c.saturating_add(1),
            (None, None) => def.start.max(1),
        });
        self.0.truncate(level);
        if let Some(b) = def.bullet {
            let b = if ('\u{E000}'..='\u{F8FF}').contains(&b.chars().next().unwrap_or(' ')) {
                "•".to_string()
            } else {
                b
            };
            return Some(b);
        }
        if def.format.is_empty() {
            return (!def.prefix.is_empty() || !def.suffix.is_empty())
                .then(|| format!("{}{}", def.prefix, def.suffix).trim().to_string())
                .filter(|s| !s.is_empty());
        }
        let shown = def.display_levels.clamp(1, level);
        let parts: Vec<String> = (level - shown..level)
            .map(|i| {
                let n = self.0[i].unwrap_or(1);
                let f = levels.get(i).map_or("1", |l| l.format.as_str());
                format_number(n, if f.is_empty() { "1" } else { f })
            })
            .collect();
        Some(format!("{}{}{}", def.prefix, parts.join("."), def.suffix))
    }
}
