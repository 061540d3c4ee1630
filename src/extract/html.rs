//! HTML to the text a browser shows, for HTML files, e-mail bodies with no text part, EPUB
//! chapters and RTF's HTML.
//!
//! The page is parsed as a browser parses it (html5ever: real-world HTML is not XML —
//! unclosed tags, implied elements, tables fixed up, every character reference), styled as
//! a browser styles it for the few properties that hide text (`css`: style sheets for
//! screens and `style` attributes, cascaded, selectors matched by a real engine), and
//! walked in document order: scripts, styles and templates skipped, block elements on
//! lines of their own, and text no one would see left out and recorded — `display:none`,
//! the `hidden` attribute, `visibility:hidden`, `opacity:0`, a font size under 1px,
//! transparent text or text the colour of what is behind it, placed off-screen, clipped or
//! scaled away, or in a zero-sized box that hides its overflow.

mod css;

/// What a browser hides, left out of the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Hidden {
    /// What hides it, as computed: `hidden attribute`, `display:none`,
    /// `visibility:hidden`, `opacity:0`, `font-size:0`, `off-screen`, … (see `Seen`).
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
    /// With `render_blocks`: the typed blocks, each with the line of `text` it starts on
    /// (1-based).
    pub blocks: Vec<(usize, crate::model::Block)>,
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
                crate::findings::FindingKind::HiddenElement,
                Some(h.why),
                crate::findings::Severity::Low,
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

/// Elements whose content is never shown as text: metadata, code, templates, and an SVG's
/// `<title>` (a tooltip).
const NOT_SHOWN: &[&str] = &[
    "head", "script", "style", "template", "title", "noembed", "noframes", "meta", "link",
];

/// Elements whose start and end break a line in the plain rendering (their text in a
/// hidden element is kept apart by a space).
const BREAKS: &[&str] = &[
    "p",
    "div",
    "tr",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "table",
    "ul",
    "ol",
    "blockquote",
    "pre",
    "hr",
];

/// Elements laid out as blocks unless a style says otherwise (where `height:0` with
/// `overflow:hidden` hides; an inline element has no height of its own).
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "tr",
    "ul",
    "img",
    "iframe",
    "video",
    "object",
    "canvas",
];

/// What hides an element's text, as a browser would compute it (inherited down the tree).
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Hidden with everything inside it: `display:none`, `opacity:0`, off-screen,
    /// clipped or scaled away, a zero-sized box that hides its overflow.
    gone: Option<&'static str>,
    /// `visibility:hidden` (a descendant may set `visible` again).
    invisible: bool,
    /// The computed font size in CSS pixels.
    font: f32,
    /// The text colour; `None` when not known.
    color: Option<css::Rgba>,
    /// The colour behind the text; `None` when not known (an image, a sheet we lack).
    backdrop: Option<css::Rgba>,
    /// The product of the opacities down to here.
    opacity: f32,
}

impl Seen {
    fn root(external_sheets: bool) -> Self {
        Seen {
            gone: None,
            invisible: false,
            font: 16.0,
            color: Some(css::Rgba::BLACK),
            backdrop: (!external_sheets).then_some(css::Rgba::WHITE),
            opacity: 1.0,
        }
    }

    /// Why text here is not seen, if it is not.
    fn hides(&self) -> Option<&'static str> {
        if let Some(why) = self.gone {
            return Some(why);
        }
        if self.invisible {
            return Some("visibility:hidden");
        }
        if self.font <= 0.0 {
            return Some("font-size:0");
        }
        if self.font < 1.0 {
            return Some("font-size under 1px");
        }
        let color = self.color?;
        if color.3 < 16 {
            return Some("transparent text");
        }
        match self.backdrop {
            Some(b) if color.near(b) => Some("colour of its background"),
            _ => None,
        }
    }

    /// An element's style from its parent's and its own declarations.
    fn of(parent: &Seen, d: &css::Declared, name: &str, hidden_attr: bool) -> Seen {
        use css::Prop as P;
        let mut s = *parent;
        if let Some(v) = d.get(P::FontSize).filter(|v| *v != "inherit") {
            s.font = css::font_size(v, parent.font);
        }
        if let Some(v) = d.get(P::Color) {
            if !matches!(v, "inherit" | "currentcolor") {
                s.color = css::colour(v);
            }
        }
        // What is painted behind: a colour of its own, an image (not known), or the
        // parent's backdrop showing through.
        let mut image = d
            .get(P::BackgroundImage)
            .is_some_and(|v| v != "none" && v != "initial");
        let mut fill = d.get(P::BackgroundColor).map(css::colour);
        if let Some(v) = d.get(P::Background) {
            if v.contains("url(") || v.contains("gradient(") || v.contains("image(") {
                image = true;
            } else if v != "none" && v != "inherit" {
                fill = Some(v.split_whitespace().find_map(css::colour).or_else(|| {
                    // `var(…)` and the like: what it paints is not known.
                    v.split_whitespace()
                        .any(|t| t.contains('('))
                        .then_some(css::Rgba(0, 0, 0, 1))
                }));
            }
        }
        if image {
            s.backdrop = None;
        } else if let Some(fill) = fill {
            match fill {
                Some(c) if c.3 >= 128 => s.backdrop = Some(c),
                Some(c) if c.3 == 1 && c.0 == 0 => s.backdrop = None,
                Some(_) => {}
                None => s.backdrop = None,
            }
        }
        // The page itself (`html`, `body`) is never taken for hidden: pages hide their body
        // until a script has run (`.async-hide{opacity:0}`, `body{visibility:hidden}`),
        // and a reader shows what the script would.
        let page = matches!(name, "html" | "body");
        match d.get(P::Visibility) {
            Some("hidden" | "collapse") if !page => s.invisible = true,
            Some("visible") => s.invisible = false,
            _ => {}
        }
        if s.gone.is_some() || page {
            return s;
        }
        let em = s.font;
        let len = |p: P| d.get(p).and_then(|v| css::length(v, em));
        let display = d.get(P::Display);
        if display == Some("none") {
            s.gone = Some(if hidden_attr && d.is_hint(P::Display) {
                "hidden attribute"
            } else {
                "display:none"
            });
            return s;
        }
        if let Some(o) = d.get(P::Opacity).and_then(|v| match v.strip_suffix('%') {
            Some(pc) => pc.parse::<f32>().ok().map(|p| p / 100.0),
            None => v.parse::<f32>().ok(),
        }) {
            s.opacity *= o.clamp(0.0, 1.0);
        }
        if s.opacity <= 0.01 {
            s.gone = Some("opacity:0");
            return s;
        }
        let position = d.get(P::Position).unwrap_or("static");
        let placed = matches!(position, "absolute" | "fixed" | "relative" | "sticky");
        let far = |v: Option<f32>| v.is_some_and(|n| n <= -999.0);
        let translated_far = d.get(P::Transform).is_some_and(|t| {
            t.split(|c: char| c == '(' || c == ')' || c == ',' || c.is_whitespace())
                .filter_map(|t| css::length(t, em))
                .any(|n| n <= -999.0)
        });
        if (placed && (far(len(P::Left)) || far(len(P::Top))))
            || far(len(P::TextIndent))
            || translated_far
        {
            s.gone = Some("off-screen");
            return s;
        }
        if d.get(P::Transform).is_some_and(scaled_away) {
            s.gone = Some("scaled to nothing");
            return s;
        }
        let absolute = matches!(position, "absolute" | "fixed");
        if (absolute && d.get(P::Clip).is_some_and(|v| clip_empty(v, em)))
            || d.get(P::ClipPath).is_some_and(|v| clip_path_empty(v, em))
        {
            s.gone = Some("clipped away");
            return s;
        }
        let block = absolute
            || display.map_or(BLOCKS.contains(&name), |v| v != "inline" && v != "contents");
        let hides_overflow = |p: P| {
            d.get(p)
                .or_else(|| d.get(P::Overflow))
                .is_some_and(|v| v.split_whitespace().any(|o| o == "hidden" || o == "clip"))
        };
        let zero =
            |a: P, b: P| len(a).is_some_and(|n| n <= 1.0) || len(b).is_some_and(|n| n <= 1.0);
        if block
            && ((zero(P::Height, P::MaxHeight) && hides_overflow(P::OverflowY))
                || (zero(P::Width, P::MaxWidth) && hides_overflow(P::OverflowX)))
        {
            s.gone = Some("zero-size box, overflow hidden");
        }
        s
    }
}

/// `transform: scale(0)`, `scaleX(0)`, `scaleY(0)`: drawn at no size.
fn scaled_away(t: &str) -> bool {
    let mut rest = t;
    while let Some(i) = rest.find("scale") {
        rest = &rest[i + 5..];
        let Some(open) = rest.find('(') else { break };
        let which = &rest[..open];
        let Some(close) = rest.find(')') else { break };
        let args: Vec<f32> = rest[open + 1..close]
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter_map(|a| a.parse().ok())
            .collect();
        let zero = |i: usize| args.get(i).is_some_and(|v| v.abs() < 0.01);
        let hit = match which {
            "" => zero(0) || zero(1),
            "x" | "y" | "3d" => zero(0) || (which == "3d" && zero(1)),
            _ => false,
        };
        if hit {
            return true;
        }
        rest = &rest[close..];
    }
    false
}

/// `clip: rect(top right bottom left)` (commas or spaces) with no area left.
fn clip_empty(v: &str, em: f32) -> bool {
    let Some(args) = v.strip_prefix("rect(").and_then(|a| a.strip_suffix(')')) else {
        return false;
    };
    let n: Vec<Option<f32>> = args
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|a| !a.is_empty())
        .map(|a| css::length(a, em))
        .collect();
    match n.as_slice() {
        [top, right, bottom, left] => {
            let thin = |a: &Option<f32>, b: &Option<f32>| match (a, b) {
                (Some(a), Some(b)) => b - a <= 1.0,
                _ => false,
            };
            thin(top, bottom) || thin(left, right)
        }
        _ => false,
    }
}

/// A `clip-path` that leaves nothing: `inset()` of half or more, `circle(0)`,
/// `ellipse(0 …)`, a polygon of one point.
fn clip_path_empty(v: &str, em: f32) -> bool {
    let args = |f: &str| {
        v.strip_prefix(f)
            .and_then(|a| a.split_once(')'))
            .map(|(a, _)| a.to_string())
    };
    let pct_or_len = |a: &str| -> Option<f32> {
        match a.strip_suffix('%') {
            Some(p) => p.parse::<f32>().ok().map(|p| p / 100.0),
            // A length: only zero says anything without the box's size.
            None => css::length(a, em).map(|n| if n <= 0.0 { 0.0 } else { -1.0 }),
        }
    };
    if let Some(a) = args("inset(") {
        let a = a.split(" round").next().unwrap_or("").to_string();
        let v: Vec<f32> = a
            .split_whitespace()
            .filter_map(|x| match x.strip_suffix('%') {
                Some(p) => p.parse().ok(),
                None => None,
            })
            .collect();
        return match v.as_slice() {
            [all] => *all >= 50.0,
            [tb, lr] => *tb >= 50.0 || *lr >= 50.0,
            [t, lr, b] => t + b >= 100.0 || *lr >= 50.0,
            [t, r, b, l] => t + b >= 100.0 || l + r >= 100.0,
            _ => false,
        };
    }
    if let Some(a) = args("circle(") {
        let r = a.split(" at").next().unwrap_or("").trim().to_string();
        return pct_or_len(&r) == Some(0.0);
    }
    if let Some(a) = args("ellipse(") {
        let radii = a.split(" at").next().unwrap_or("").to_string();
        return radii.split_whitespace().any(|r| pct_or_len(r) == Some(0.0));
    }
    if let Some(a) = args("polygon(") {
        let points: Vec<String> = a
            .split(',')
            .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|p| !p.starts_with("nonzero") && !p.starts_with("evenodd"))
            .collect();
        return points
            .first()
            .is_some_and(|f| !f.is_empty() && points.iter().all(|p| p == f));
    }
    false
}

/// Where a tag whose attributes start at `from` ends (its `>`), quoted values skipped;
/// `None` when the source ends first.
fn tag_end(b: &[u8], from: usize) -> Option<usize> {
    let mut quote = 0u8;
    for (j, &c) in b.iter().enumerate().skip(from) {
        match (quote, c) {
            (0, b'"' | b'\'') => quote = c,
            (q, c) if q != 0 && c == q => quote = 0,
            (0, b'>') => return Some(j),
            _ => {}
        }
    }
    None
}

/// An XHTML document (an EPUB chapter, XHTML mail) as an HTML parser must see it: an
/// element written `<x/>` that is not void (`<div/>`, `<title/>`, `<script/>`) opened and
/// closed, which in XHTML it is, and not left open to swallow the rest.
fn xhtml_as_html(src: &str) -> std::borrow::Cow<'_, str> {
    let mut cut = src.len().min(2048);
    while !src.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &src[..cut];
    let xhtml = head
        .trim_start_matches('\u{FEFF}')
        .trim_start()
        .starts_with("<?xml")
        || head.contains("http://www.w3.org/1999/xhtml");
    if !xhtml || !src.contains("/>") {
        return std::borrow::Cow::Borrowed(src);
    }
    const VOID: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param",
    ];
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len() + 64);
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        let lt = i + off;
        i = lt + 1;
        if !b.get(lt + 1).is_some_and(u8::is_ascii_alphabetic) {
            continue;
        }
        let Some(j) = tag_end(b, lt + 1) else { break };
        if b[j - 1] == b'/' {
            let name: String = src[lt + 1..j]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == ':' || *c == '-')
                .collect();
            let local = name.rsplit(':').next().unwrap_or("").to_ascii_lowercase();
            if !VOID.contains(&local.as_str()) {
                out.push_str(&src[copied..j - 1]);
                out.push('>');
                out.push_str("</");
                out.push_str(&name);
                out.push('>');
                copied = j + 1;
            }
        }
        i = j + 1;
    }
    out.push_str(&src[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Elements nested past this depth in the source are left out (their text kept): an HTML
/// parser looks through the elements open on every block start, end tag and formatting
/// element, so a page of 100,000 unclosed `<div>`s costs its square (34 s); Blink stops
/// nesting at 512 for the same reason; real pages stay far below 256. The style of elements this deep is their parent's
/// anyway (`css::MAX_STYLED_DEPTH`).
const MAX_NESTING: usize = 256;

/// The source with the tags of elements past [`MAX_NESTING`] open elements taken out, their
/// end tags with them, and end tags of elements not open taken out. Elements whose end tag may be left out (`p`, `li`, `td`, …)
/// and void ones do not count: they do not nest by themselves. Borrowed when nothing is
/// that deep and no end tag is stray.
fn bounded_nesting(src: &str) -> std::borrow::Cow<'_, str> {
    const FLAT: &[&str] = &[
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param", "keygen", "p", "li", "dt", "dd", "tr", "td", "th", "option",
        "optgroup", "tbody", "thead", "tfoot", "colgroup", "caption", "rb", "rt", "rp", "rtc",
        "html", "head", "body",
    ];
    const RAW: &[&str] = &[
        "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
    ];
    let b = src.as_bytes();
    // The elements open, as far as this scan can tell (at most MAX_NESTING).
    let mut open: Vec<String> = Vec::new();
    let mut dropped: std::collections::HashMap<String, usize> = Default::default();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'<', &b[i..]) {
        let lt = i + off;
        i = lt + 1;
        if b[lt + 1..].starts_with(b"!--") {
            i = memchr::memmem::find(&b[lt + 4..], b"-->").map_or(b.len(), |e| lt + 4 + e + 3);
            continue;
        }
        let closing = b.get(lt + 1) == Some(&b'/');
        let name_at = lt + 1 + usize::from(closing);
        if !b.get(name_at).is_some_and(u8::is_ascii_alphabetic) {
            continue;
        }
        let name_end = b[name_at..]
            .iter()
            .position(|c| c.is_ascii_whitespace() || *c == b'/' || *c == b'>')
            .map_or(b.len(), |p| name_at + p);
        let name = src[name_at..name_end].to_ascii_lowercase();
        let Some(j) = tag_end(b, name_end) else { break };
        i = j + 1;
        if !closing && RAW.contains(&name.as_str()) {
            // Its content is text up to its end tag, whatever it looks like; the end tag
            // goes as written.
            let end = format!("</{name}");
            let rest = &b[i..];
            let at = memchr::memmem::find_iter(rest, b"</").find(|&p| {
                rest[p..]
                    .get(..end.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(end.as_bytes()))
            });
            i = match at {
                Some(p) => memchr::memchr(b'>', &rest[p..]).map_or(b.len(), |q| i + p + q + 1),
                None => b.len(),
            };
            continue;
        }
        if FLAT.contains(&name.as_str()) || (!closing && b[j - 1] == b'/') {
            continue;
        }
        // A start tag past the depth and its end tag are taken out; so is an end tag of
        // nothing open (the parser would look through every open element for it, then
        // ignore it).
        let keep = if closing {
            match dropped.get_mut(&name).filter(|n| **n > 0) {
                Some(n) => {
                    *n -= 1;
                    false
                }
                None => match open.iter().rposition(|o| *o == name) {
                    Some(at) => {
                        open.truncate(at);
                        true
                    }
                    None => false,
                },
            }
        } else if open.len() >= MAX_NESTING {
            *dropped.entry(name).or_default() += 1;
            false
        } else {
            open.push(name);
            true
        };
        if !keep {
            let o = out.get_or_insert_with(|| String::with_capacity(src.len()));
            o.push_str(&src[copied..lt]);
            // A space where the tag stood, so words either side stay apart.
            o.push(' ');
            copied = j + 1;
        }
    }
    match out {
        Some(mut o) => {
            o.push_str(&src[copied..]);
            std::borrow::Cow::Owned(o)
        }
        None => std::borrow::Cow::Borrowed(src),
    }
}

/// An element being left out: the element it started at, why, its text so far.
struct Hiding {
    owner: ego_tree::NodeId,
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

/// One step of the walk over the document tree.
enum Step<'a> {
    Enter(ego_tree::NodeRef<'a, scraper::Node>, usize),
    Leave(scraper::ElementRef<'a>),
}

/// The state of one open element on the walk.
struct Open {
    seen: Seen,
    /// A hiding paused for it (it is shown inside a hidden element) and resumed after it.
    resume: Option<(ego_tree::NodeId, &'static str)>,
}

/// Render as text or Markdown (headings, lists with their numbers, links, GFM pipe
/// tables), hidden text dropped, kept or marked.
pub fn render_as(html: &str, markdown: bool, mode: HiddenMode) -> Rendered {
    render_inner(html, markdown, mode, false)
}

/// Render as plain text, and record the typed blocks the elements make (headings,
/// paragraphs, list items with their labels, tables with their cells and header rows,
/// preformatted text, pictures' descriptions), each placed at its line in the text.
pub fn render_blocks(html: &str, mode: HiddenMode) -> Rendered {
    render_inner(html, false, mode, true)
}

fn render_inner(html: &str, markdown: bool, mode: HiddenMode, record: bool) -> Rendered {
    let xhtml = xhtml_as_html(html);
    let source = bounded_nesting(&xhtml);
    // Parsed as a browser with scripts off parses it: what `<noscript>` holds is markup
    // shown (no script of the page runs here).
    let opts = html5ever::driver::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let doc = {
        use html5ever::tendril::TendrilSink;
        html5ever::driver::parse_document(
            scraper::HtmlTreeSink::new(scraper::Html::new_document()),
            opts,
        )
        .one(&*source)
    };
    let mut sheet = css::Sheet::default();
    let mut title: Option<String> = None;
    for el in doc.tree.nodes().filter_map(scraper::ElementRef::wrap) {
        let v = el.value();
        match v.name() {
            "style"
                if css::media_attr_applies(v.attr("media"))
                    && v.attr("type").is_none_or(|t| {
                        let t = t.trim().to_ascii_lowercase();
                        t.is_empty() || t == "text/css"
                    }) =>
            {
                sheet.add(&el.text().collect::<String>());
            }
            "link"
                if v.attr("rel").is_some_and(|r| {
                    r.split_whitespace()
                        .any(|w| w.eq_ignore_ascii_case("stylesheet"))
                }) && css::media_attr_applies(v.attr("media")) =>
            {
                sheet.external = true;
            }
            "title"
                if title.is_none()
                    && el
                        .parent()
                        .and_then(scraper::ElementRef::wrap)
                        .is_none_or(|p| p.value().name() != "svg") =>
            {
                let mut t = String::new();
                push_text(&mut t, &el.text().collect::<String>());
                let t = t.trim().to_string();
                if !t.is_empty() {
                    title = Some(t);
                }
            }
            _ => {}
        }
    }
    let mut md = markdown.then(Markdown::default);
    let mut rec = record.then(Recorder::default);
    let mut out = String::with_capacity(html.len() / 2);
    let mut hidden: Vec<Hidden> = Vec::new();
    let mut hiding: Option<Hiding> = None;
    let mut open: Vec<Open> = vec![Open {
        seen: Seen::root(sheet.external),
        resume: None,
    }];
    let mut steps: Vec<Step> = vec![Step::Enter(doc.tree.root(), 0)];
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(node, depth) => match node.value() {
                scraper::Node::Text(t) => match hiding.as_mut() {
                    Some(h) => push_text(&mut h.text, t),
                    None => push_text(&mut out, t),
                },
                scraper::Node::Element(v) => {
                    let Some(el) = scraper::ElementRef::wrap(node) else {
                        continue;
                    };
                    let name = v.name();
                    if NOT_SHOWN.contains(&name) {
                        continue;
                    }
                    let parent = open.last().map_or(Seen::root(false), |o| o.seen);
                    let seen = if depth < css::MAX_STYLED_DEPTH {
                        Seen::of(
                            &parent,
                            &sheet.declared(el),
                            name,
                            v.attr("hidden").is_some(),
                        )
                    } else {
                        parent
                    };
                    let mut resume = None;
                    match (seen.hides(), hiding.is_some()) {
                        (Some(why), false) => {
                            hiding = Some(Hiding {
                                owner: node.id(),
                                why,
                                text: String::new(),
                            });
                        }
                        (None, true) => {
                            // Shown again inside a hidden element (`visibility:visible`, a
                            // font size or colour of its own): what was hidden so far ends
                            // here and goes on after it.
                            if let Some(h) = hiding.take() {
                                resume = Some((h.owner, h.why));
                                let done = h.done();
                                place_hidden(&mut out, done.as_ref(), mode);
                                hidden.extend(done);
                            }
                        }
                        _ => {}
                    }
                    open.push(Open { seen, resume });
                    steps.push(Step::Leave(el));
                    for child in node.children().rev() {
                        steps.push(Step::Enter(child, depth + 1));
                    }
                    tag(
                        &mut out,
                        md.as_mut(),
                        rec.as_mut(),
                        hiding.as_mut(),
                        el,
                        false,
                    );
                }
                _ => {
                    for child in node.children().rev() {
                        steps.push(Step::Enter(child, depth + 1));
                    }
                }
            },
            Step::Leave(el) => {
                tag(
                    &mut out,
                    md.as_mut(),
                    rec.as_mut(),
                    hiding.as_mut(),
                    el,
                    true,
                );
                let this = open.pop();
                if hiding.as_ref().is_some_and(|h| h.owner == el.id()) {
                    let done = hiding.take().and_then(Hiding::done);
                    place_hidden(&mut out, done.as_ref(), mode);
                    hidden.extend(done);
                }
                if let Some((owner, why)) = this.and_then(|o| o.resume) {
                    if hiding.is_none() {
                        hiding = Some(Hiding {
                            owner,
                            why,
                            text: String::new(),
                        });
                    }
                }
            }
        }
    }
    // An element hidden and never closed hides to the end, as in a browser.
    let done = hiding.and_then(Hiding::done);
    place_hidden(&mut out, done.as_ref(), mode);
    hidden.extend(done);
    let recorded = match rec {
        Some(mut r) => {
            r.flush(&out);
            r.blocks.sort_by_key(|b| b.0);
            r.blocks
        }
        None => Vec::new(),
    };
    finish(out, hidden, md.is_some(), title, recorded)
}

/// A start (`closing` false) or end tag's rendering: in a hidden element a space between
/// blocks, else Markdown's or the plain text's.
fn tag(
    out: &mut String,
    md: Option<&mut Markdown>,
    rec: Option<&mut Recorder>,
    hiding: Option<&mut Hiding>,
    el: scraper::ElementRef<'_>,
    closing: bool,
) {
    match (rec, hiding.is_some()) {
        (Some(r), false) => {
            let attr = |k: &str| el.value().attr(k).map(str::to_string);
            let moved = r.tag(out, el.value().name(), &attr, closing);
            render_tag(out, md, hiding, el, closing);
            if moved {
                r.at = out.len();
            }
            // A cell's text starts after what its tag wrote.
            if let Some(t) = r.tables.last_mut() {
                if let Some(cell) = t.cell.as_mut().filter(|c| c.0 == usize::MAX) {
                    cell.0 = out.len();
                }
            }
        }
        _ => render_tag(out, md, hiding, el, closing),
    }
}

fn render_tag(
    out: &mut String,
    md: Option<&mut Markdown>,
    hiding: Option<&mut Hiding>,
    el: scraper::ElementRef<'_>,
    closing: bool,
) {
    let name = el.value().name();
    if let Some(h) = hiding {
        if matches!(name, "br" | "p" | "div" | "li" | "tr" | "td" | "th") {
            h.text.push(' ');
        }
        return;
    }
    if let Some(m) = md {
        let attr = |k: &str| el.value().attr(k).map(str::to_string);
        if m.tag(out, name, &attr, closing) {
            return;
        }
    }
    match name {
        "br" if !closing => out.push('\n'),
        "li" if !closing => {
            if !out.ends_with('\n') && !out.is_empty() {
                out.push('\n');
            }
            out.push_str("• ");
        }
        n if BREAKS.contains(&n) => {
            if !out.ends_with('\n') && !out.is_empty() {
                out.push('\n');
            }
        }
        "td" | "th" if closing => out.push_str(" | "),
        _ => {}
    }
}

/// The rendered output made text: runs of blank lines collapsed, trailing spaces gone,
/// each hidden element's place mark made its line number.
fn finish(
    out: String,
    mut hidden: Vec<Hidden>,
    markdown: bool,
    title: Option<String>,
    mut blocks: Vec<(usize, crate::model::Block)>,
) -> Rendered {
    let mut clean = String::with_capacity(out.len());
    let mut blank = 0;
    let mut lines_out = 0usize;
    let mut places: Vec<usize> = Vec::with_capacity(hidden.len());
    // Each block's start (a byte of `out`) becomes the line shown at or after it.
    let mut next_block = 0;
    let mut raw_at = 0usize;
    for line in out.split_inclusive('\n') {
        raw_at += line.len();
        while next_block < blocks.len() && blocks[next_block].0 < raw_at {
            blocks[next_block].0 = lines_out + 1;
            next_block += 1;
        }
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let marks = line.matches(PLACE).count();
        let stripped;
        let line = if marks > 0 {
            stripped = line.replace(PLACE, "");
            stripped.as_str()
        } else {
            line
        };
        let l = if markdown {
            // List items keep their indent, table rows their closing pipe.
            line.trim_end()
        } else {
            // A row's cells end in ` | `; a line of nothing but that (cells with only
            // pictures in them) is empty.
            let l = line
                .trim_end()
                .trim_end_matches(" |")
                .trim_end()
                .trim_start_matches(' ');
            if l == "|" {
                ""
            } else {
                l
            }
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
    for b in blocks[..next_block].iter_mut() {
        b.0 = b.0.saturating_sub(lead_lines).clamp(1, last);
    }
    for b in blocks[next_block..].iter_mut() {
        b.0 = last;
    }
    Rendered {
        text,
        hidden,
        title,
        blocks,
    }
}

/// The typed blocks of a page as its elements open and close (`render_blocks`): text
/// written between two block boundaries is one block of the innermost open kind.
#[derive(Default)]
struct Recorder {
    /// Where the text not yet in a block starts in the output.
    at: usize,
    /// Open elements that make a kind of block: heading level, list item, `pre`.
    kinds: Vec<Kind>,
    /// Open lists: an ordered one's counter.
    lists: Vec<Option<u64>>,
    tables: Vec<RecTable>,
    /// The blocks, each with where it starts in the output (a line of the text, after
    /// `finish`).
    blocks: Vec<(usize, crate::model::Block)>,
}

enum Kind {
    Heading(u8),
    Item(u32, String),
    Pre,
    Caption,
}

#[derive(Default)]
struct RecTable {
    start: usize,
    rows: Vec<Vec<String>>,
    /// Rows made only of `th` cells, from the first row on, or the rows of `thead`.
    header_rows: u32,
    in_head: bool,
    /// The open cell: where its text starts, how many columns it spans, whether `th`.
    cell: Option<(usize, usize, bool)>,
    /// Whether the open row has only header cells so far.
    row_head: bool,
}

/// What text between two offsets of the output says: hidden places taken out, and (but
/// in preformatted text) whitespace runs one space.
fn text_between(out: &str, from: usize, pre: bool) -> String {
    let from = from.min(out.len());
    if !out.is_char_boundary(from) {
        return String::new();
    }
    let raw = out[from..].replace(PLACE, "");
    if pre {
        raw.trim_matches('\n').trim_end().to_string()
    } else {
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

impl RecTable {
    fn close_cell(&mut self, out: &str) {
        let Some((at, span, th)) = self.cell.take() else {
            return;
        };
        let text = text_between(out, at, false);
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        self.row_head &= th;
        let row = self.rows.last_mut().expect("a row");
        // A cell spanning columns: its text in the first, the others empty (never copied:
        // a page of wide spans would multiply its text).
        row.push(text);
        row.extend(std::iter::repeat_n(String::new(), span - 1));
    }

    fn close_row(&mut self) {
        if let Some(row) = self.rows.last() {
            let heads = self.header_rows as usize == self.rows.len() - 1;
            if !row.is_empty() && heads && (self.row_head || self.in_head) {
                self.header_rows += 1;
            }
        }
    }
}

impl Recorder {
    /// The text since the last boundary as a block of the innermost kind open (a cell's
    /// text is its table's).
    fn flush(&mut self, out: &str) {
        use crate::model::{Block, Content};
        if !self.tables.is_empty() {
            return;
        }
        let pre = matches!(self.kinds.last(), Some(Kind::Pre));
        let text = text_between(out, self.at, pre);
        if !text.is_empty() {
            let content = match self.kinds.last() {
                Some(Kind::Heading(level)) => Content::Heading {
                    level: *level,
                    text,
                },
                Some(Kind::Item(level, label)) => Content::ListItem {
                    level: *level,
                    label: label.clone(),
                    text: text.trim_start_matches("• ").to_string(),
                },
                Some(Kind::Pre) => Content::Code { text },
                Some(Kind::Caption) => Content::Figure {
                    alt: None,
                    caption: Some(text),
                },
                None => Content::Paragraph { text },
            };
            self.blocks.push((self.at, Block::new(content)));
        }
        self.at = out.len();
    }

    /// A tag's effect on the blocks; true when text after it starts a new block (the
    /// caller moves `at` past what the tag itself writes).
    fn tag(
        &mut self,
        out: &str,
        name: &str,
        attr: &dyn Fn(&str) -> Option<String>,
        closing: bool,
    ) -> bool {
        use crate::model::{Block, Content};
        match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.flush(out);
                if closing {
                    self.kinds.pop();
                } else {
                    self.kinds.push(Kind::Heading(name.as_bytes()[1] - b'0'));
                }
            }
            "pre" | "figcaption" | "caption" if self.tables.is_empty() || name != "caption" => {
                self.flush(out);
                if closing {
                    self.kinds.pop();
                } else if name == "pre" {
                    self.kinds.push(Kind::Pre);
                } else {
                    self.kinds.push(Kind::Caption);
                }
            }
            "ul" | "ol" => {
                self.flush(out);
                if closing {
                    self.lists.pop();
                } else {
                    self.lists.push(list_counter(name, attr));
                }
            }
            "li" => {
                self.flush(out);
                if closing {
                    self.kinds.pop();
                } else {
                    let level = self.lists.len().saturating_sub(1) as u32;
                    let label = match self.lists.last_mut() {
                        Some(Some(n)) => {
                            *n = n.saturating_add(1);
                            format!("{n}.")
                        }
                        _ => "•".to_string(),
                    };
                    self.kinds.push(Kind::Item(level, label));
                }
            }
            "table" => {
                if closing {
                    let Some(mut t) = self.tables.pop() else {
                        return true;
                    };
                    t.close_cell(out);
                    t.close_row();
                    t.rows.retain(|r| !r.is_empty());
                    if !t.rows.is_empty() {
                        let content = Content::Table {
                            header_rows: t.header_rows.min(t.rows.len() as u32),
                            rows: t.rows,
                            spans: Vec::new(),
                        };
                        match self.tables.last_mut() {
                            // A table in a cell: its text is the cell's already.
                            Some(_) => {}
                            None => self.blocks.push((t.start, Block::new(content))),
                        }
                    }
                } else {
                    self.flush(out);
                    self.tables.push(RecTable {
                        start: out.len(),
                        ..Default::default()
                    });
                }
            }
            "thead" | "tbody" | "tfoot" => {
                if let Some(t) = self.tables.last_mut() {
                    t.in_head = name == "thead" && !closing;
                }
                return false;
            }
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    t.close_cell(out);
                    t.close_row();
                    if !closing {
                        t.rows.push(Vec::new());
                        t.row_head = true;
                    }
                }
                return false;
            }
            "td" | "th" => {
                if let Some(t) = self.tables.last_mut() {
                    t.close_cell(out);
                    if !closing {
                        let span = colspan(attr);
                        if t.rows.is_empty() {
                            t.rows.push(Vec::new());
                            t.row_head = true;
                        }
                        // The cell's text starts after what the tag writes.
                        t.cell = Some((usize::MAX, span, name == "th"));
                    }
                }
                return false;
            }
            n if BREAKS.contains(&n) || BLOCKS.contains(&n) => {
                self.flush(out);
            }
            _ => return false,
        }
        true
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
        let text = super::markdown::cell_text(&out[at..]);
        out.truncate(at);
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        let row = self.rows.last_mut().expect("a row");
        // A cell spanning columns fills each of them, so the columns stay aligned.
        row.extend(std::iter::repeat_n(text, span));
    }
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

/// A list's counter as it opens: an `ol`'s number before its first item (`start` less
/// one), none for a `ul`.
fn list_counter(name: &str, attr: &dyn Fn(&str) -> Option<String>) -> Option<u64> {
    let start = attr("start")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    (name == "ol").then_some(start.saturating_sub(1))
}

/// How many columns a cell spans (1 to 64).
fn colspan(attr: &dyn Fn(&str) -> Option<String>) -> usize {
    attr("colspan")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, 64)
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
    fn tag(
        &mut self,
        out: &mut String,
        name: &str,
        attr: &dyn Fn(&str) -> Option<String>,
        closing: bool,
    ) -> bool {
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
                    self.lists.push(list_counter(name, attr));
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
                        out.push_str(&super::markdown::pipe_table(&t.rows));
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
                        let span = colspan(attr);
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
                    let href = attr("href").and_then(|v| safe_href(&v)).unwrap_or_default();
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

fn push_text(out: &mut String, raw: &str) {
    // Whitespace in HTML text collapses to single spaces.
    let mut last_space = out.ends_with([' ', '\n']);
    for c in raw.chars().filter(|&c| c != PLACE) {
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

#[cfg(test)]
mod tests {
    use super::{render, to_text};

    /// What a page hides, as (why, text) pairs.
    fn hidden(html: &str) -> Vec<(&'static str, String)> {
        render(html)
            .hidden
            .into_iter()
            .map(|h| (h.why, h.text))
            .collect()
    }

    #[test]
    fn html_becomes_text() {
        let h = "<html><head><title>x</title><style>p{}</style></head><body><p>Hello&nbsp;<b>world</b> &amp; all</p><script>evil()</script><ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table>caf&#233; &#x263A; &amp;lt;</body></html>";
        assert_eq!(
            to_text(h),
            "Hello world & all\n• one\n• two\na | b\ncafé ☺ &lt;\n"
        );
        assert_eq!(render(h).title.as_deref(), Some("x"));
        // What `<noscript>` holds is read as markup (no script runs here).
        assert_eq!(
            to_text("<p>a</p><noscript><div><img src=x>b</div></noscript>"),
            "a\nb\n"
        );
    }

    #[test]
    fn inline_styles_that_hide_text() {
        let one = |style: &str| {
            let h = hidden(&format!("<p>shown</p><p style=\"{style}\">words</p>"));
            h.first().map(|(why, _)| *why)
        };
        assert_eq!(one("opacity: 0"), Some("opacity:0"));
        assert_eq!(one("opacity:0.5"), None);
        assert_eq!(one("position:absolute; left:-9999px"), Some("off-screen"));
        assert_eq!(
            one("position:fixed;top:-2000px !important"),
            Some("off-screen")
        );
        assert_eq!(one("text-indent:-5000px"), Some("off-screen"));
        assert_eq!(one("transform:translateX(-10000px)"), Some("off-screen"));
        // Moved a little, or not taken out of the flow: still on screen.
        assert_eq!(one("position:absolute; left:-20px"), None);
        assert_eq!(one("left:-9999px"), None);
        assert_eq!(
            one("color:#FFF; background-color: white"),
            Some("colour of its background")
        );
        assert_eq!(
            one("color:#1f3864;background:#1F3864"),
            Some("colour of its background")
        );
        // On the page's white, with no background of its own.
        assert_eq!(one("color:#fefefe"), Some("colour of its background"));
        assert_eq!(one("color:transparent"), Some("transparent text"));
        assert_eq!(one("color:rgba(0,0,0,0)"), Some("transparent text"));
        // White on a dark band, or on an image, is read.
        assert_eq!(one("color:#fff;background:#1f3864"), None);
        assert_eq!(one("color:#fff;background:url(band.png)"), None);
        assert_eq!(one("font-size:0.1px"), Some("font-size under 1px"));
        assert_eq!(one("font-size:0em"), Some("font-size:0"));
        assert_eq!(one("font-size:0pt"), Some("font-size:0"));
        assert_eq!(one("font-size:6pt"), None);
        assert_eq!(
            one("clip:rect(0 0 0 0);position:absolute"),
            Some("clipped away")
        );
        assert_eq!(
            one("clip:rect(1px, 1px, 1px, 1px);position:absolute"),
            Some("clipped away")
        );
        assert_eq!(one("clip-path: inset(50%)"), Some("clipped away"));
        assert_eq!(one("clip-path:circle(0)"), Some("clipped away"));
        assert_eq!(one("clip-path:inset(10%)"), None);
        assert_eq!(
            one("height:0;overflow:hidden"),
            Some("zero-size box, overflow hidden")
        );
        assert_eq!(
            one("max-height:0px;overflow-y:hidden"),
            Some("zero-size box, overflow hidden")
        );
        assert_eq!(one("height:0"), None);
        assert_eq!(one("transform:scale(0)"), Some("scaled to nothing"));
        assert_eq!(one("display:/**/none"), Some("display:none"));
        assert_eq!(one("display:n\\one"), Some("display:none"));
        // Hostile values do not panic.
        assert_eq!(one("color:#é1;background:#é1"), None);
        assert_eq!(one("font-size:1e39px;clip-path:polygon()"), None);
        assert_eq!(one("clip-path:polygon(nonzero)"), None);
        assert_eq!(
            one("clip-path:polygon(evenodd, 5px 5px, 5px 5px)"),
            Some("clipped away")
        );
    }

    #[test]
    fn style_sheets_as_a_browser_cascades_them() {
        let page = |css: &str, body: &str| {
            hidden(&format!(
                "<html><head><style>{css}</style></head><body>{body}</body></html>"
            ))
        };
        // Descendant, child and attribute selectors.
        let h = page(
            ".wrap .note{font-size:0.1px} div > p.x{display:none} [data-h=\"1\"]{visibility:hidden}",
            "<div class=wrap><span><i class=note>one</i></span></div><div><p class=x>two</p></div><b data-h=1>three</b><p>shown</p>",
        );
        let texts: Vec<&str> = h.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["one", "two", "three"], "{h:?}");
        // `@media` for screens applies; for print it does not.
        let h = page(
            "@media screen and (min-width: 10px) { .a { display: none } } @media print { .b { display:none } }",
            "<p class=a>a</p><p class=b>b</p>",
        );
        assert_eq!(h, [("display:none", "a".to_string())]);
        // Later and more specific rules win; !important wins over both.
        assert!(page(".a{display:none} .a{display:block}", "<p class=a>x</p>").is_empty());
        assert!(page(
            "#i{display:block} .a{display:none}",
            "<p id=i class=a>x</p>"
        )
        .is_empty());
        assert_eq!(
            page(
                "#i{display:block} .a{display:none!important}",
                "<p id=i class=a>x</p>"
            )
            .len(),
            1
        );
        // The inline style beats a rule; a rule's !important beats the inline style.
        assert!(page(
            ".a{display:none}",
            "<p class=a style=\"display:block\">x</p>"
        )
        .is_empty());
        // A visible child of a hidden parent is shown (visibility inherits, can be undone).
        let r = render("<div style=\"visibility:hidden\">gone <span style=\"visibility:visible\">back</span> also gone</div>");
        assert_eq!(r.text, "back\n");
        assert_eq!(r.hidden.len(), 2);
        // font-size:0 on a row, reset on its cells (the inline-block gap trick): shown.
        assert!(page(
            ".row{font-size:0}.cell{font-size:14px}",
            "<div class=row><span class=cell>a</span> <span class=cell>b</span></div>"
        )
        .is_empty());
        // A rule that hides the page itself until a script runs is not taken for hiding.
        assert!(page(
            ".async-hide{opacity:0!important} body{visibility:hidden}",
            "<p>x</p>"
        )
        .is_empty());
        // White text on a page that links a style sheet we do not have: not known.
        assert!(hidden("<link rel=stylesheet href=s.css><p style=\"color:#fff\">x</p>").is_empty());
        // A table cell's own background.
        assert!(hidden(
            "<table><tr><td bgcolor=\"#000\"><font color=white>x</font></td></tr></table>"
        )
        .is_empty());
        assert_eq!(
            hidden("<table><tr><td bgcolor=\"#fff\"><font color=white>x</font></td></tr></table>")
                .len(),
            1
        );
    }

    #[test]
    fn real_world_markup() {
        // Unclosed elements, implied structure, self-closed XHTML.
        assert_eq!(
            to_text("<p>one<p>two<ul><li>a<li>b</ul>"),
            "one\ntwo\n• a\n• b\n"
        );
        let x = "<?xml version=\"1.0\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title/><script src=\"a.js\"/></head><body><div/><p>after</p></body></html>";
        assert_eq!(to_text(x), "after\n");
        // A multi-byte character across the first 2 KiB looked at for XHTML.
        let long = format!("<html>{}פ</html>", "a".repeat(2041));
        assert!(to_text(&long).ends_with("פ\n"));
        // Deep nesting does not overflow the stack.
        let deep = "<div>".repeat(100_000) + "deep";
        assert_eq!(to_text(&deep), "deep\n");
        // Past the depth, tags are left out and their text kept; end tags of nothing open
        // are dropped.
        let b = super::bounded_nesting("<div>a</div></section><p>b</p>");
        assert_eq!(b, "<div>a</div> <p>b</p>");
        let raw = "<title>a</b></title><script>x</div></script><p>b</p>";
        assert_eq!(super::bounded_nesting(raw), raw);
        let deep = "<b><section>".repeat(300) + "x" + &"</section></b>".repeat(300);
        let b = super::bounded_nesting(&deep);
        assert_eq!(b.matches("<section>").count(), 128);
        assert_eq!(b.matches("</section>").count(), 128);
        assert_eq!(to_text(&deep), "x\n");
    }
}
