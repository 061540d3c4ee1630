//! HTML to the text a browser shows: tags dropped, scripts, styles and templates skipped,
//! elements a browser hides left out (the `hidden` attribute, inline `display:none`,
//! `visibility:hidden` or `font-size:0`, and `<style>` rules of a tag, class or id that say
//! so) and recorded, block elements on their own lines, every HTML5 character reference
//! decoded. For HTML files, e-mail bodies with no text part, EPUB chapters and RTF's HTML.

/// What a browser hides, left out of the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Hidden {
    /// `hidden attribute`, `display:none`, `visibility:hidden`, `font-size:0` or
    /// `a <style> rule`.
    pub why: &'static str,
    /// The whole hidden text, whitespace collapsed.
    pub text: String,
    /// The 1-based line of the rendered text where it stands (kept, marked or left out).
    pub line: usize,
}

/// What becomes of text a browser hides: left out (the default), kept as if shown, or
/// kept between visible markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HiddenMode {
    #[default]
    Drop,
    Keep,
    Mark,
}

/// Where a hidden element stood in the output, until lines are known.
const PLACE: char = '\u{FDD0}';

/// The text, and what was hidden.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub text: String,
    pub hidden: Vec<Hidden>,
    /// The document's `<title>` (in the head, so not in `text`).
    pub title: Option<String>,
}

/// Hidden elements as `hidden_element` findings, each at the line given with it (its line
/// in the text returned); instruction-like text left out is also an `injection_pattern`.
pub(crate) fn hidden_findings<'a>(
    hidden: impl IntoIterator<Item = (&'a Hidden, u64)>,
    mode: HiddenMode,
) -> Vec<crate::findings::Finding> {
    hidden
        .into_iter()
        .flat_map(|(h, line)| {
            crate::findings::hidden(
                "hidden_element",
                Some(h.why),
                "low",
                &h.text,
                line,
                mode == HiddenMode::Drop,
            )
        })
        .collect()
}

/// The warning of a read that left hidden elements out (`mode` drop), or none:
/// `{n} element(s) {shown_by} ({chars} characters: {why}) left out; {back}`.
pub(crate) fn left_out_warning(
    hidden: &[Hidden],
    mode: HiddenMode,
    shown_by: &str,
    back: &str,
) -> Option<String> {
    let first = hidden.first().filter(|_| mode == HiddenMode::Drop)?;
    let chars: usize = hidden.iter().map(|h| h.text.chars().count()).sum();
    Some(format!(
        "{} element{} {shown_by} ({chars} characters: {}) left out; {back}",
        hidden.len(),
        if hidden.len() == 1 { "" } else { "s" },
        first.why
    ))
}

/// Convert an HTML fragment or document to readable text.
pub fn to_text(html: &str) -> String {
    render(html).text
}

/// Elements that never have content (a start tag is all of them).
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// An element being left out: its name, how deep in itself we are, why, its text so far.
struct Hiding {
    name: String,
    depth: usize,
    why: &'static str,
    text: String,
}

impl Hiding {
    /// What it hid, when it held any text.
    fn done(self) -> Option<Hidden> {
        let text = self.text.split_whitespace().collect::<Vec<_>>().join(" ");
        (!text.is_empty()).then(|| Hidden {
            why: self.why,
            text,
            line: 0,
        })
    }
}

/// Convert HTML to the text a browser shows, with what it hides.
pub fn render(html: &str) -> Rendered {
    render_as(html, false, HiddenMode::Drop)
}

/// Render as text or Markdown (headings, lists with their numbers, links, GFM pipe
/// tables), hidden text dropped, kept or marked.
pub fn render_as(html: &str, markdown: bool, mode: HiddenMode) -> Rendered {
    let rules = StyleRules::of(html);
    let mut md = markdown.then(Markdown::default);
    let mut out = String::with_capacity(html.len() / 2);
    let mut hidden: Vec<Hidden> = Vec::new();
    let mut hiding: Option<Hiding> = None;
    let mut rest = html;
    let mut skip_until: Option<&'static str> = None;
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            if skip_until.is_none() {
                match hiding.as_mut() {
                    Some(h) => push_text(&mut h.text, rest),
                    None => push_text(&mut out, rest),
                }
            }
            break;
        };
        if skip_until.is_none() {
            match hiding.as_mut() {
                Some(h) => push_text(&mut h.text, &rest[..lt]),
                None => push_text(&mut out, &rest[..lt]),
            }
        }
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map(|i| &rest[i + 3..]).unwrap_or("");
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = tag.starts_with('/');
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(end) = skip_until {
            if closing && name == end {
                skip_until = None;
            }
            continue;
        }
        let empty = tag.trim_end().ends_with('/') || VOID.contains(&name.as_str());
        if let Some(h) = hiding.as_mut() {
            if name == h.name && !empty {
                if closing {
                    h.depth -= 1;
                } else {
                    h.depth += 1;
                }
            }
            if h.depth == 0 {
                let done = hiding.take().and_then(Hiding::done);
                place_hidden(&mut out, done.as_ref(), mode);
                hidden.extend(done);
            } else if matches!(
                name.as_str(),
                "br" | "p" | "div" | "li" | "tr" | "td" | "th"
            ) {
                h.text.push(' ');
            } else if !closing && !empty {
                // Code and style sheets inside a hidden element are not its text either.
                skip_until = match name.as_str() {
                    "script" => Some("script"),
                    "style" => Some("style"),
                    "template" => Some("template"),
                    _ => None,
                };
            }
            continue;
        }
        if !closing && !empty && !name.is_empty() {
            if let Some(why) = rules.hides(&name, tag) {
                hiding = Some(Hiding {
                    name,
                    depth: 1,
                    why,
                    text: String::new(),
                });
                continue;
            }
        }
        if let Some(m) = md.as_mut() {
            if m.tag(&mut out, &name, tag, closing) {
                continue;
            }
        }
        // `<head/>` (XHTML) opens and closes at once: nothing to skip.
        match name.as_str() {
            "script" if !closing && !empty => skip_until = Some("script"),
            "template" if !closing && !empty => skip_until = Some("template"),
            "style" if !closing && !empty => skip_until = Some("style"),
            "head" if !closing && !empty => skip_until = Some("head"),
            "br" => out.push('\n'),
            "p" | "div" | "tr" | "li" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "table"
            | "ul" | "ol" | "blockquote" | "pre" | "hr" | "title" => {
                if !out.ends_with('\n') && !out.is_empty() {
                    out.push('\n');
                }
                if name == "li" && !closing {
                    out.push_str("• ");
                }
            }
            "td" | "th" if closing => out.push_str(" | "),
            _ => {}
        }
    }
    // An element hidden and never closed hides to the end, as in a browser.
    let done = hiding.and_then(Hiding::done);
    place_hidden(&mut out, done.as_ref(), mode);
    hidden.extend(done);
    // Collapse runs of blank lines and trailing spaces; each hidden element's place
    // becomes its line number.
    let mut clean = String::with_capacity(out.len());
    let mut blank = 0;
    let mut lines_out = 0usize;
    let mut places: Vec<usize> = Vec::with_capacity(hidden.len());
    for line in out.lines() {
        let marks = line.matches(PLACE).count();
        let stripped;
        let line = if marks > 0 {
            stripped = line.replace(PLACE, "");
            stripped.as_str()
        } else {
            line
        };
        let l = match md {
            // List items keep their indent, table rows their closing pipe.
            Some(_) => line.trim_end(),
            None => line
                .trim_end()
                .trim_end_matches(" |")
                .trim_end()
                .trim_start_matches(' '),
        };
        // Where the next line shown will be (a hidden block between lines is placed
        // at the line after it).
        places.extend(std::iter::repeat_n(lines_out + 1, marks));
        if marks > 0 && l.trim().is_empty() {
            // Only where something hidden stood: no line of its own.
            continue;
        }
        if l.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        clean.push_str(l);
        clean.push('\n');
        lines_out += 1;
    }
    // Leading blank lines are trimmed below: lines count from the first one kept.
    let lead = clean.len() - clean.trim_start().len();
    let lead_lines = clean[..lead].matches('\n').count();
    let text = clean.trim().to_string() + "\n";
    let last = text.lines().count().max(1);
    // Every element left a place mark; should one have been lost, it is placed last.
    for (i, h) in hidden.iter_mut().enumerate() {
        let at = places.get(i).copied().unwrap_or(usize::MAX);
        h.line = at.saturating_sub(lead_lines).clamp(1, last);
    }
    Rendered {
        text,
        hidden,
        title: title(html),
    }
}

/// Mark where a hidden element stood, and put its text back when it is kept or marked.
fn place_hidden(out: &mut String, hidden: Option<&Hidden>, mode: HiddenMode) {
    let Some(h) = hidden else { return };
    out.push(PLACE);
    match mode {
        HiddenMode::Drop => {}
        HiddenMode::Keep => {
            if !out.ends_with([' ', '\n', PLACE]) {
                out.push(' ');
            }
            out.push_str(&h.text);
            out.push(' ');
        }
        HiddenMode::Mark => {
            out.push_str("⟦hidden: ");
            out.push_str(&h.text);
            out.push_str("⟧ ");
        }
    }
}

/// Markdown's state while HTML is rendered: open lists (the counter of an ordered one),
/// tables being collected, and links waiting for their text. Text goes to the output as
/// it comes; a cell's or a link's is taken back from it at its end tag.
#[derive(Default)]
struct Markdown {
    lists: Vec<Option<u64>>,
    tables: Vec<MdTable>,
    links: Vec<(usize, String)>,
    emphasis: Vec<(usize, &'static str)>,
}

#[derive(Default)]
struct MdTable {
    /// Where the table starts in the output (its cells' text is taken back from here).
    start: usize,
    rows: Vec<Vec<String>>,
    /// The open cell: where its text starts, and how many columns it spans.
    cell: Option<(usize, usize)>,
}

impl MdTable {
    fn close_cell(&mut self, out: &mut String) {
        let Some((at, span)) = self.cell.take() else {
            return;
        };
        let at = if out.is_char_boundary(at.min(out.len())) {
            at.min(out.len())
        } else {
            out.len()
        };
        let text = cell_text(&out[at..]);
        out.truncate(at);
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        let row = self.rows.last_mut().expect("a row");
        // A cell spanning columns fills each of them, so the columns stay aligned.
        row.extend(std::iter::repeat_n(text, span));
    }
}

/// A cell's text on one line, its pipes escaped.
pub(crate) fn cell_text(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A GFM pipe table: the first row is the header, every row as wide as the widest.
pub(crate) fn pipe_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        out.push('|');
        for c in 0..cols {
            out.push(' ');
            out.push_str(r.get(c).map_or("", String::as_str));
            out.push_str(" |");
        }
        out.push('\n');
        if i == 0 {
            out.push_str(&separator(cols));
        }
    }
    out
}

/// A link target fit for Markdown: control characters (tab and line breaks among them)
/// taken out, as browsers do — so `java\tscript:` is `javascript:` —, only `http`,
/// `https`, `mailto` or a relative target, and the characters that would end or break
/// Markdown's `(…)` percent-encoded.
fn safe_href(raw: &str) -> Option<String> {
    let href: String = raw
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace(' ', "%20");
    if href.is_empty() {
        return None;
    }
    let scheme_end = href.find(':');
    let path_start = href.find(['/', '?', '#']);
    if let Some(colon) = scheme_end {
        if path_start.is_none_or(|p| colon < p) {
            let scheme = href[..colon].to_ascii_lowercase();
            if !matches!(scheme.as_str(), "http" | "https" | "mailto") {
                return None;
            }
        }
    }
    Some(
        href.replace('(', "%28")
            .replace(')', "%29")
            .replace('<', "%3C")
            .replace('>', "%3E"),
    )
}

/// Wrap the text written since `at` (a link's, an emphasis's) with `wrap`: the marks hug
/// the text, spaces around it stay outside; nothing is wrapped around nothing or around
/// lines, or when `at` is no longer where the text starts (a table took it back).
fn wrap_since(out: &mut String, at: usize, wrap: impl FnOnce(&str) -> String) {
    if at > out.len() || !out.is_char_boundary(at) {
        return;
    }
    let inner = &out[at..];
    let text = inner.trim();
    if text.is_empty() || text.contains('\n') {
        return;
    }
    let lead = &inner[..inner.len() - inner.trim_start().len()];
    let tail = &inner[inner.trim_end().len()..];
    let wrapped = format!("{lead}{}{tail}", wrap(text));
    out.truncate(at);
    out.push_str(&wrapped);
}

/// A pipe table's separator row for `cols` columns, line end included.
pub(crate) fn separator(cols: usize) -> String {
    format!("|{}\n", "---|".repeat(cols.max(1)))
}

/// Make the output end with a blank line (a new Markdown block), unless it is empty.
fn block_break(out: &mut String) {
    if out.is_empty() || out.ends_with("\n\n") {
        return;
    }
    out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
}

fn line_break(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

impl Markdown {
    /// Render a tag's Markdown; false leaves it to the plain rendering.
    fn tag(&mut self, out: &mut String, name: &str, tag: &str, closing: bool) -> bool {
        let in_cell = self.tables.last().is_some_and(|t| t.cell.is_some());
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if !in_cell => {
                if closing {
                    block_break(out);
                } else {
                    block_break(out);
                    let level = (name.as_bytes()[1] - b'0') as usize;
                    out.push_str(&"#".repeat(level));
                    out.push(' ');
                }
            }
            "p" | "div" | "blockquote" | "pre" | "section" | "article" | "header" | "footer"
            | "main" | "nav" | "aside" | "figure" | "figcaption" | "dl" | "address"
                if !in_cell =>
            {
                if self.lists.is_empty() {
                    block_break(out);
                } else {
                    line_break(out);
                }
            }
            "hr" if !in_cell => {
                block_break(out);
                out.push_str("---\n\n");
            }
            "ul" | "ol" if !in_cell => {
                if closing {
                    self.lists.pop();
                    if self.lists.is_empty() {
                        block_break(out);
                    } else {
                        line_break(out);
                    }
                } else {
                    if self.lists.is_empty() {
                        block_break(out);
                    }
                    let start = attributes(tag)
                        .into_iter()
                        .find(|(k, _)| k == "start")
                        .and_then(|(_, v)| v.trim().parse::<u64>().ok())
                        .unwrap_or(1);
                    self.lists
                        .push((name == "ol").then_some(start.saturating_sub(1)));
                }
            }
            "li" if !in_cell => {
                line_break(out);
                if closing {
                    return true;
                }
                let depth = self.lists.len().max(1);
                out.push_str(&"    ".repeat(depth - 1));
                match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n = n.saturating_add(1);
                        out.push_str(&format!("{n}. "));
                    }
                    _ => out.push_str("- "),
                }
            }
            "table" => {
                if closing {
                    let Some(mut t) = self.tables.pop() else {
                        return true;
                    };
                    t.close_cell(out);
                    // What stood in the table outside its cells — a hidden row's place (and
                    // its text, kept or marked), text a browser shows beside the table —
                    // goes after it.
                    let start = t.start.min(out.len());
                    let rest = if out.is_char_boundary(start) {
                        let rest = out[start..]
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ");
                        out.truncate(start);
                        rest
                    } else {
                        String::new()
                    };
                    t.rows.retain(|r| !r.is_empty());
                    if !t.rows.is_empty() {
                        if self.tables.is_empty() {
                            block_break(out);
                        }
                        out.push_str(&pipe_table(&t.rows));
                        if self.tables.is_empty() {
                            out.push('\n');
                        }
                    }
                    if !rest.is_empty() {
                        out.push_str(&rest);
                        out.push('\n');
                    }
                } else {
                    if self.tables.is_empty() {
                        block_break(out);
                    }
                    self.tables.push(MdTable {
                        start: out.len(),
                        ..Default::default()
                    });
                }
            }
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    t.close_cell(out);
                    if !closing {
                        t.rows.push(Vec::new());
                    }
                }
            }
            "td" | "th" => {
                if let Some(t) = self.tables.last_mut() {
                    t.close_cell(out);
                    if !closing {
                        let span = attributes(tag)
                            .into_iter()
                            .find(|(k, _)| k == "colspan")
                            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                            .unwrap_or(1)
                            .clamp(1, 64);
                        t.cell = Some((out.len(), span));
                    }
                }
            }
            "a" => {
                if closing {
                    let Some((at, href)) = self.links.pop() else {
                        return true;
                    };
                    if !href.is_empty() {
                        wrap_since(out, at, |text| format!("[{text}]({href})"));
                    }
                } else {
                    let href = attributes(tag)
                        .into_iter()
                        .find(|(k, _)| k == "href")
                        .and_then(|(_, v)| safe_href(&decode_entities(&v)))
                        .unwrap_or_default();
                    self.links.push((out.len(), href));
                }
            }
            "strong" | "b" | "em" | "i" => {
                let mark = if matches!(name, "strong" | "b") {
                    "**"
                } else {
                    "*"
                };
                if !closing {
                    self.emphasis.push((out.len(), mark));
                    return true;
                }
                let Some((at, mark)) = self.emphasis.pop() else {
                    return true;
                };
                wrap_since(out, at, |text| format!("{mark}{text}{mark}"));
            }
            "br" if in_cell => out.push(' '),
            _ => return false,
        }
        true
    }
}

/// The text of the first `<title>` element, whitespace collapsed.
fn title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let mut t = String::new();
    push_text(&mut t, &html[start..end]);
    let t = t.trim().to_string();
    (!t.is_empty()).then_some(t)
}

/// The selectors of `<style>` rules that hide (`display:none`, `visibility:hidden`): simple
/// ones only — a tag, `.class`, `#id`, `tag.class` — which is what hiding text takes.
#[derive(Default)]
struct StyleRules {
    tags: Vec<String>,
    classes: Vec<(Option<String>, String)>,
    ids: Vec<String>,
}

impl StyleRules {
    fn of(html: &str) -> Self {
        let mut rules = Self::default();
        let lower = html.to_ascii_lowercase();
        let mut at = 0;
        while let Some(i) = lower[at..].find("<style") {
            let open = at + i;
            let Some(gt) = lower[open..].find('>') else {
                break;
            };
            let body_start = open + gt + 1;
            let end = lower[body_start..]
                .find("</style")
                .map_or(lower.len(), |j| body_start + j);
            rules.parse(&lower[body_start..end]);
            at = end;
        }
        rules
    }

    fn parse(&mut self, css: &str) {
        let mut rest = css;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let (selectors, decls) = (&rest[..open], &rest[open + 1..open + close]);
            rest = &rest[open + close + 1..];
            if hiding_style(decls).is_none() {
                continue;
            }
            // Comments and at-rules before the selector list are not selectors.
            let selectors = selectors.rsplit("*/").next().unwrap_or("");
            for sel in selectors.split(',').map(str::trim) {
                if sel.is_empty() || sel.contains([' ', '>', '+', '~', '[', ':', '@', '*']) {
                    continue;
                }
                if let Some(id) = sel.strip_prefix('#') {
                    self.ids.push(id.to_string());
                } else if let Some((tag, class)) = sel.split_once('.') {
                    let tag = (!tag.is_empty()).then(|| tag.to_string());
                    self.classes.push((tag, class.to_string()));
                } else {
                    self.tags.push(sel.to_string());
                }
            }
        }
    }

    /// Why a start tag's element is hidden, if it is.
    fn hides(&self, name: &str, tag: &str) -> Option<&'static str> {
        let attrs = attributes(tag);
        let get = |k: &str| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        if get("hidden").is_some() {
            return Some("hidden attribute");
        }
        if let Some(why) = get("style").and_then(|d| hiding_style(d).or_else(|| hiding_inline(d))) {
            return Some(why);
        }
        if name == "body" || name == "html" {
            return None;
        }
        let by_rule = self.tags.iter().any(|t| t == name)
            || get("id").is_some_and(|id| self.ids.iter().any(|i| i.eq_ignore_ascii_case(id)))
            || get("class").is_some_and(|cls| {
                cls.split_whitespace().any(|c| {
                    self.classes.iter().any(|(t, k)| {
                        k.eq_ignore_ascii_case(c) && t.as_deref().is_none_or(|t| t == name)
                    })
                })
            });
        by_rule.then_some("a <style> rule")
    }
}

/// What in a declaration block hides text.
fn hiding_style(decls: &str) -> Option<&'static str> {
    let d: String = decls
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let has = |decl: &str| {
        d.split(';')
            .any(|part| part.trim_end_matches("!important") == decl)
    };
    if has("display:none") {
        Some("display:none")
    } else if has("visibility:hidden") {
        Some("visibility:hidden")
    } else if [
        "font-size:0",
        "font-size:0px",
        "font-size:0pt",
        "font-size:0em",
    ]
    .iter()
    .any(|z| has(z))
    {
        Some("font-size:0")
    } else {
        None
    }
}

/// What else in an element's own `style` hides its text (not looked for in `<style>` rules,
/// where screen-reader-only classes use the same tricks): `opacity:0`, placed far off the
/// screen (`position:absolute|fixed` with `left`/`top` at -1000px or beyond, or
/// `text-indent` so), or a colour equal to the background it sets itself.
fn hiding_inline(decls: &str) -> Option<&'static str> {
    let d: String = decls
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let value = |prop: &str| {
        d.split(';').find_map(|part| {
            let (k, v) = part.split_once(':')?;
            (k == prop).then(|| v.trim_end_matches("!important"))
        })
    };
    if value("opacity").is_some_and(|v| v.parse::<f32>().is_ok_and(|o| o <= 0.0)) {
        return Some("opacity:0");
    }
    let far = |v: Option<&str>| {
        v.and_then(|v| v.strip_suffix("px"))
            .and_then(|n| n.parse::<f32>().ok())
            .is_some_and(|n| n <= -1000.0)
    };
    let placed = value("position").is_some_and(|p| p == "absolute" || p == "fixed");
    if (placed && (far(value("left")) || far(value("top")))) || far(value("text-indent")) {
        return Some("off-screen");
    }
    let colour = |v: &str| -> String {
        match v {
            "white" | "#fff" | "#ffffff" | "rgb(255,255,255)" => "#ffffff".into(),
            "black" | "#000" | "#000000" | "rgb(0,0,0)" => "#000000".into(),
            v if v.len() == 4 && v.starts_with('#') && v.is_ascii() => {
                let c = v.as_bytes();
                let (r, g, b) = (c[1] as char, c[2] as char, c[3] as char);
                format!("#{r}{r}{g}{g}{b}{b}")
            }
            v => v.to_string(),
        }
    };
    if let (Some(fg), Some(bg)) = (
        value("color"),
        value("background-color").or_else(|| value("background")),
    ) {
        if !fg.is_empty() && colour(fg) == colour(bg) {
            return Some("colour of its background");
        }
    }
    None
}

/// A start tag's attributes (names lower-cased; values unquoted, entities left as written).
fn attributes(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let b = tag.as_bytes();
    // Past the element's name.
    let mut i = b
        .iter()
        .position(|c| c.is_ascii_whitespace())
        .unwrap_or(b.len());
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'/' {
            i += 1;
        }
        if start == i {
            break;
        }
        let name = tag[start..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        if b.get(i) == Some(&b'=') {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            match b.get(i) {
                Some(&q) if q == b'"' || q == b'\'' => {
                    let end = tag[i + 1..].find(q as char).map_or(b.len(), |j| i + 1 + j);
                    value = tag[i + 1..end].to_string();
                    i = (end + 1).min(b.len());
                }
                _ => {
                    let end = tag[i..]
                        .find(|c: char| c.is_ascii_whitespace())
                        .map_or(b.len(), |j| i + j);
                    value = tag[i..end].to_string();
                    i = end;
                }
            }
        }
        out.push((name, value));
    }
    out
}

fn push_text(out: &mut String, raw: &str) {
    let decoded = decode_entities(raw);
    // Whitespace in HTML text collapses to single spaces.
    let mut last_space = out.ends_with([' ', '\n']);
    for c in decoded.chars().filter(|&c| c != PLACE) {
        if c.is_whitespace() && c != '\u{A0}' {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(if c == '\u{A0}' { ' ' } else { c });
            last_space = false;
        }
    }
}

fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let end = rest[1..]
            .find(|c: char| c == ';' || c.is_whitespace() || c == '&')
            .map(|j| j + 1);
        let (entity, after) = match end {
            Some(j) if rest.as_bytes().get(j) == Some(&b';') && j <= 34 => {
                (&rest[1..j], &rest[j + 1..])
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
                continue;
            }
        };
        let ch: Option<String> = match entity {
            e if e.starts_with("#x") || e.starts_with("#X") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32)
                .map(String::from),
            e if e.starts_with('#') => e[1..]
                .parse()
                .ok()
                .and_then(char::from_u32)
                .map(String::from),
            // Every named reference of HTML5 (2,231 of them).
            e => quick_xml::escape::resolve_html5_entity(e).map(str::to_string),
        };
        match ch {
            Some(c) => out.push_str(&c),
            None => {
                out.push('&');
                out.push_str(entity);
                out.push(';');
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::to_text;

    #[test]
    fn inline_styles_that_hide_text() {
        use super::hiding_inline as h;
        assert_eq!(h("opacity: 0"), Some("opacity:0"));
        assert_eq!(h("opacity:0.5"), None);
        assert_eq!(h("position:absolute; left:-9999px"), Some("off-screen"));
        assert_eq!(
            h("position:fixed;top:-2000px !important"),
            Some("off-screen")
        );
        assert_eq!(h("text-indent:-5000px"), Some("off-screen"));
        // Moved a little, or not taken out of the flow: still on screen.
        assert_eq!(h("position:absolute; left:-20px"), None);
        assert_eq!(h("left:-9999px"), None);
        assert_eq!(
            h("color:#FFF; background-color: white"),
            Some("colour of its background")
        );
        assert_eq!(
            h("color:#1f3864;background:#1F3864"),
            Some("colour of its background")
        );
        // White on a dark band is read; a colour alone says nothing of what is behind.
        assert_eq!(h("color:#fff;background:#1f3864"), None);
        assert_eq!(h("color:white"), None);
        // Hostile values do not panic.
        assert_eq!(
            h("color:#é1;background:#é1"),
            Some("colour of its background")
        );
        assert_eq!(h("color:#é1;background:#fff"), None);
    }

    #[test]
    fn html_becomes_text() {
        let h = "<html><head><title>x</title><style>p{}</style></head><body><p>Hello&nbsp;<b>world</b> &amp; all</p><script>evil()</script><ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table>caf&#233; &#x263A;</body></html>";
        assert_eq!(
            to_text(h),
            "Hello world & all\n• one\n• two\na | b\ncafé ☺\n"
        );
    }
}
