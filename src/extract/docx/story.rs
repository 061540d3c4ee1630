//! A Word story (the body, a header, the notes…) walked into blocks: paragraphs, headings
//! and list items with their labels, tables where they stand, the places of charts and
//! SmartArt, and the runs that hide with the block each is in.

use super::super::blocks::{join_label, Block};
use super::super::xml::{attr, walk, Node};
use super::hiding::{on, shows_colour, HiddenRuns, Hiding};
use super::numbering::{heading_level, Numbering};
use super::{CHART_MARK, DIAGRAM_MARK};
use crate::error::ApiError;
use crate::options::HiddenText;

/// Parse one story (body, header, notes…) into blocks.
///
/// `links`: where the story's hyperlinks lead (relationship id → URL), for Markdown; a
/// link's text is then written `[text](url)`. `None`: the text alone.
pub(super) fn parse_story(
    xml: &[u8],
    depth: usize,
    numbering: &mut Numbering,
    hidden_text: HiddenText,
    page: &mut bool,
    links: Option<&std::collections::HashMap<String, String>>,
) -> Result<(Vec<Block>, HiddenRuns), ApiError> {
    let mut story = StoryParser::new(numbering, hidden_text, *page);
    story.links = links;
    walk(xml, depth, |n| story.node(n))?;
    *page = story.page_coloured;
    Ok((story.blocks, story.hidden))
}

/// Word 2003 XML's whole document (`w:wordDocument`) into blocks: its body, and apart, the
/// side stories Word writes inline (`w:hdr` and `w:ftr` in the section's properties,
/// `w:footnote`/`w:endnote` in their runs, comments as `aml:annotation`), each with its
/// marker (`Headers`, `Footers`, `Footnotes`, `Endnotes`, `Comments`) and blocks.
/// `markdown`: a link's text written `[text](url)` (`w:hlink`'s `w:dest`).
pub(super) fn parse_word_2003(
    xml: &[u8],
    depth: usize,
    numbering: &mut Numbering,
    hidden_text: HiddenText,
    markdown: bool,
) -> Result<(Vec<Block>, HiddenRuns, Vec<(&'static str, Vec<Block>)>), ApiError> {
    let none = std::collections::HashMap::new();
    let mut story = StoryParser::new(numbering, hidden_text, false);
    story.word_2003 = true;
    story.links = markdown.then_some(&none);
    walk(xml, depth, |n| story.node(n))?;
    Ok((story.blocks, story.hidden, story.diverted))
}

struct Cell {
    paras: Vec<String>,
}

/// A story being walked: the blocks so far, and what is open where the walk stands.
struct StoryParser<'a> {
    numbering: &'a mut Numbering,
    /// Markdown: where hyperlinks lead (relationship id → URL), and the open link: its
    /// paragraph (in `paras`), where its text starts there, and its URL (`None`: a link
    /// inside the document, or to a URL not written as a link).
    links: Option<&'a std::collections::HashMap<String, String>>,
    link: Option<(usize, usize, Option<String>)>,
    /// Open fields (`w:fldChar` begin … end, `w:fldSimple`), read for Markdown: a
    /// `HYPERLINK` field's result is a link as `w:hyperlink` is. Whether the walk is in a
    /// field's code (`w:instrText`).
    fields: Vec<Field>,
    in_instr: bool,
    /// Fields begun past `MAX_FIELDS`: their ends close nothing.
    fields_over: usize,
    hidden_text: HiddenText,
    blocks: Vec<Block>,
    /// Open paragraphs: text, list (numId, level) set directly, and paragraph style.
    paras: Vec<(String, Option<(String, u32)>, Option<String>)>,
    /// Open tables: rows of cells.
    tables: Vec<Vec<Vec<Cell>>>,
    in_text: bool,
    /// Inside content that must not be read (fallbacks, deleted text, field codes, ruby
    /// annotations).
    skip_depth: usize,
    num: Option<(String, u32)>,
    ilvl: u32,
    /// The open paragraph's own outline level (`w:outlineLvl`), over its style's.
    outline: Option<u32>,
    // Hidden runs (`w:vanish` in a run's properties; in the paragraph's it hides only the
    // paragraph mark): the open run's, the last run's, and the open paragraph's text.
    in_ppr: bool,
    last_hidden: bool,
    // Whether the open run hides: its own `w:vanish`/`w:specVanish`, else its character
    // style's, else its paragraph style's, else the document defaults' (styles followed
    // through `basedOn`).
    run_hidden: Option<bool>,
    run_style_hidden: Option<bool>,
    para_style_hidden: Option<bool>,
    // White or tiny text, and what could make white text visible (shading, highlight, a
    // page colour).
    run_white: bool,
    run_tiny: bool,
    run_shaded: bool,
    /// The run's font is a symbol font: its private-use characters (`U+F0xx`) are that
    /// font's glyphs.
    run_symbol: Option<crate::extract::symbols::SymbolFont>,
    /// The equation being read, and where it starts (paragraph, byte).
    math: super::math::Math,
    math_start: Option<(usize, usize)>,
    in_tcpr: bool,
    para_shaded: bool,
    cell_shaded: bool,
    page_coloured: bool,
    hidden_here: Vec<(Hiding, String)>,
    hidden: HiddenRuns,
    /// Word 2003 XML: inside a paragraph's `w:listPr`, and the label Word wrote there
    /// (`wx:t`, in the font `wx:font` names).
    in_list_pr: bool,
    given_label: Option<String>,
    given_font: Option<crate::extract::symbols::SymbolFont>,
    /// Word 2003 XML: side stories stand inline, and their blocks are moved apart
    /// (`parse_word_2003`): the open one (its marker, the element that ends it, the
    /// number of blocks before it), and those done.
    word_2003: bool,
    side: Option<(&'static str, &'static str, usize)>,
    /// Elements named as the open side story's end, opened inside it (a bookmark's
    /// `aml:annotation` in a comment): each closes before the story does.
    side_nested: usize,
    diverted: Vec<(&'static str, Vec<Block>)>,
}

/// The list id a Word 2003 paragraph's given label is carried under (`listPr` has no
/// numbering definitions to count: Word wrote each label beside its paragraph).
const GIVEN: char = '\u{2}';

/// Fields open inside each other, at most.
const MAX_FIELDS: usize = 64;

/// An open field: its code so far, and where its result starts (paragraph, byte).
struct Field {
    code: String,
    result: Option<(usize, usize)>,
}

impl<'a> StoryParser<'a> {
    /// `page`: whether a page colour is behind the story (the body's `w:background`).
    fn new(numbering: &'a mut Numbering, hidden_text: HiddenText, page: bool) -> Self {
        Self {
            numbering,
            links: None,
            fields: Vec::new(),
            in_instr: false,
            fields_over: 0,
            link: None,
            hidden_text,
            blocks: Vec::new(),
            paras: Vec::new(),
            tables: Vec::new(),
            in_text: false,
            skip_depth: 0,
            num: None,
            ilvl: 0,
            outline: None,
            in_ppr: false,
            last_hidden: false,
            run_hidden: None,
            run_style_hidden: None,
            para_style_hidden: None,
            run_white: false,
            run_tiny: false,
            run_symbol: None,
            math: Default::default(),
            math_start: None,
            run_shaded: false,
            in_tcpr: false,
            para_shaded: false,
            cell_shaded: false,
            page_coloured: page,
            hidden_here: Vec::new(),
            hidden: Vec::new(),
            in_list_pr: false,
            given_label: None,
            given_font: None,
            word_2003: false,
            side: None,
            side_nested: 0,
            diverted: Vec::new(),
        }
    }

    /// Where the walk stands: the open paragraph (by index) and its text's length.
    fn here(&self) -> Option<(usize, usize)> {
        self.paras
            .len()
            .checked_sub(1)
            .map(|i| (i, self.paras[i].0.len()))
    }

    /// A field ends: a `HYPERLINK` to a web or mail address makes its result, in the
    /// paragraph it began in, a Markdown link.
    fn close_field(&mut self, f: Field) {
        let Some((i, start)) = f.result else { return };
        let Some(url) = crate::extract::markdown::field_link(&f.code) else {
            return;
        };
        // Not inside a `w:hyperlink` (that one links the words).
        if i + 1 == self.paras.len() && self.link.is_none() {
            crate::extract::markdown::link_tail(&mut self.paras[i].0, start, &url);
        }
    }

    /// One node of the story's XML.
    fn node(&mut self, n: Node<'_>) {
        if self.skip_depth > 0 {
            match n {
                Node::Open(..) => self.skip_depth += 1,
                Node::Close(..) => {
                    self.skip_depth -= 1;
                    self.in_instr &= self.skip_depth > 0;
                }
                Node::Text(t) if self.in_instr && self.skip_depth == 1 => {
                    if let Some(f) = self.fields.last_mut().filter(|f| f.code.len() < 4096) {
                        f.code.push_str(t);
                    }
                }
                _ => {}
            }
            return;
        }
        match n {
            Node::Open("oMathPara", _) => {
                self.math.display(true);
                return;
            }
            Node::Close("oMathPara") => {
                self.math.display(false);
                return;
            }
            Node::Open("oMath", _) => {
                let outermost = !self.math.active();
                let before = self.math.start();
                if outermost {
                    self.run_text(before);
                    self.math_start = self.paras.last().map(|p| (self.paras.len() - 1, p.0.len()));
                }
                return;
            }
            Node::Close("oMath") => {
                if let Some(mark) = self.math.end() {
                    if let Some((i, start)) = self.math_start.take() {
                        if let Some(p) = self.paras.get_mut(i).filter(|p| p.0.len() >= start) {
                            let eq = super::math::resolve(&p.0[start..]);
                            p.0.truncate(start);
                            if !eq.trim().is_empty() {
                                // Equations side by side stay apart (`$a=b$ $c=d$`).
                                if p.0.ends_with('$') {
                                    p.0.push(' ');
                                }
                                p.0.push_str(mark);
                                p.0.push_str(eq.trim());
                                p.0.push_str(mark);
                            }
                        }
                    }
                }
                return;
            }
            _ if self.math.active() => {
                if let Some(t) = self.math.node(&n) {
                    if !t.is_empty() {
                        self.run_text(&t);
                    }
                    return;
                }
            }
            _ => {}
        }
        match n {
            Node::Open("instrText", _) => {
                self.skip_depth = 1;
                self.in_instr = self.links.is_some();
            }
            // Fields, for Markdown (see `fields`).
            Node::Open("fldChar", a) if self.links.is_some() => match attr(a, "fldCharType") {
                Some("begin") if self.fields.len() < MAX_FIELDS => self.fields.push(Field {
                    code: String::new(),
                    result: None,
                }),
                Some("begin") => self.fields_over += 1,
                Some("separate") => {
                    let here = self.here();
                    if let Some(f) = self.fields.last_mut() {
                        f.result = here;
                    }
                }
                Some("end") if self.fields_over > 0 => self.fields_over -= 1,
                Some("end") => {
                    if let Some(f) = self.fields.pop() {
                        self.close_field(f);
                    }
                }
                _ => {}
            },
            Node::Open("fldSimple", a) if self.links.is_some() => {
                if self.fields.len() < MAX_FIELDS {
                    self.fields.push(Field {
                        code: attr(a, "instr").unwrap_or_default().to_string(),
                        result: self.here(),
                    });
                } else {
                    self.fields_over += 1;
                }
            }
            Node::Close("fldSimple") if self.links.is_some() => {
                if self.fields_over > 0 {
                    self.fields_over -= 1;
                } else if let Some(f) = self.fields.pop() {
                    self.close_field(f);
                }
            }
            Node::Open(
                "Fallback" | "delText" | "rt" | "footnoteRef" | "endnoteRef" | "pPrChange"
                | "rPrChange",
                _,
            ) => self.skip_depth = 1,
            // The lines Word draws above notes (Word 2003 XML defines them in `w:docPr`).
            Node::Open("footnote" | "endnote", a)
                if attr(a, "type")
                    .is_some_and(|t| t.contains("eparator") || t == "continuationNotice") =>
            {
                self.skip_depth = 1
            }
            Node::Open(tag @ ("hdr" | "ftr" | "footnote" | "endnote" | "annotation"), a)
                if self.word_2003 && self.side.is_none() =>
            {
                let marker = match tag {
                    "hdr" => Some("Headers"),
                    "ftr" => Some("Footers"),
                    "footnote" => Some("Footnotes"),
                    "endnote" => Some("Endnotes"),
                    _ => (attr(a, "type") == Some("Word.Comment")).then_some("Comments"),
                };
                if let Some(marker) = marker {
                    let end = match tag {
                        "hdr" => "hdr",
                        "ftr" => "ftr",
                        "footnote" => "footnote",
                        "endnote" => "endnote",
                        _ => "annotation",
                    };
                    self.side = Some((marker, end, self.blocks.len()));
                }
            }
            Node::Open(tag, _) if self.side.is_some_and(|(_, end, _)| end == tag) => {
                self.side_nested += 1;
            }
            Node::Close(tag)
                if self.side_nested > 0 && self.side.is_some_and(|(_, end, _)| end == tag) =>
            {
                self.side_nested -= 1;
            }
            Node::Close(tag) if self.side.is_some_and(|(_, end, _)| end == tag) => {
                if let Some((marker, _, from)) = self.side.take() {
                    let moved: Vec<Block> =
                        self.blocks.drain(from.min(self.blocks.len())..).collect();
                    match self.diverted.iter_mut().find(|(m, _)| *m == marker) {
                        Some((_, b)) => b.extend(moved),
                        None => self.diverted.push((marker, moved)),
                    }
                }
            }
            // A hyperlink (`w:hyperlink r:id`, Word 2003's `w:hlink w:dest`), for Markdown.
            Node::Open("hyperlink" | "hlink", a) if self.links.is_some() => {
                let url = match attr(a, "dest") {
                    Some(dest) if self.word_2003 => Some(dest.to_string()),
                    _ => attr(a, "id")
                        .and_then(|id| self.links.and_then(|l| l.get(id)))
                        .cloned(),
                };
                self.link = self.paras.len().checked_sub(1).map(|i| {
                    (
                        i,
                        self.paras[i].0.len(),
                        url.filter(|u| crate::extract::markdown::linkable(u)),
                    )
                });
            }
            Node::Close("hyperlink" | "hlink") => {
                if let Some((i, start, Some(url))) = self.link.take() {
                    if i + 1 == self.paras.len() {
                        crate::extract::markdown::link_tail(&mut self.paras[i].0, start, &url);
                    }
                }
            }
            Node::Open("p", _) => {
                self.para_shaded = false;
                self.para_style_hidden = None;
                self.paras.push((String::new(), None, None));
                self.num = None;
                self.ilvl = 0;
                self.outline = None;
            }
            Node::Open("pStyle", a) => {
                if let Some(p) = self.paras.last_mut() {
                    p.2 = attr(a, "val").map(str::to_string);
                }
                self.para_style_hidden =
                    attr(a, "val").and_then(|v| self.numbering.style_vanish(v));
            }
            Node::Open(
                tag @ ("rStyle" | "vanish" | "specVanish" | "color" | "sz" | "highlight"),
                a,
            ) if !self.in_ppr => self.run_property(tag, a),
            Node::Open("ilvl", a) => {
                self.ilvl = attr(a, "val").and_then(|v| v.parse().ok()).unwrap_or(0)
            }
            Node::Open("numId", a) => {
                // numId 0 takes the numbering a style would give away.
                self.num = attr(a, "val").map(|v| (v.to_string(), self.ilvl));
            }
            Node::Close("numPr") => {
                if let (Some(p), Some((id, _))) = (self.paras.last_mut(), self.num.clone()) {
                    p.1 = Some((id, self.ilvl));
                }
            }
            // Word 2003 XML's list paragraphs: the label Word shows, as it wrote it.
            Node::Open("listPr", _) => {
                self.in_list_pr = true;
                (self.given_label, self.given_font) = (None, None);
            }
            Node::Open("t", a) if self.in_list_pr => {
                self.given_label = attr(a, "val").map(str::to_string);
            }
            Node::Open("font", a) if self.in_list_pr => {
                self.given_font =
                    attr(a, "val").and_then(crate::extract::symbols::SymbolFont::by_name);
            }
            Node::Open("ilfo", a) if self.in_list_pr => {
                // `ilfo` 0: no list.
                if attr(a, "val").is_some_and(|v| v != "0") && self.given_label.is_none() {
                    self.given_label = Some(String::new());
                }
            }
            Node::Close("listPr") => {
                self.in_list_pr = false;
                if let (Some(p), Some(label)) = (self.paras.last_mut(), self.given_label.take()) {
                    let label = shown_label(&label, self.given_font);
                    p.1 = Some((format!("{GIVEN}{label}"), self.ilvl));
                }
            }
            Node::Open("t", _) => self.in_text = true,
            Node::Close("t") => self.in_text = false,
            Node::Open("pPr", _) => self.in_ppr = true,
            Node::Close("pPr") => self.in_ppr = false,
            Node::Open("r", _) => {
                (self.run_hidden, self.run_style_hidden) = (None, None);
                (self.run_white, self.run_tiny, self.run_shaded) = (false, false, false);
                self.run_symbol = None;
            }
            Node::Open("rFonts", a) if !self.in_ppr => {
                self.run_symbol = attr(a, "ascii")
                    .or_else(|| attr(a, "hAnsi"))
                    .and_then(crate::extract::symbols::SymbolFont::by_name);
            }
            Node::Text(t) if self.in_text && self.run_symbol.is_some() => {
                let font = self.run_symbol.expect("checked");
                let shown: String = t
                    .chars()
                    .filter_map(|c| match c as u32 {
                        n @ 0xF020..=0xF0FF => crate::extract::symbols::symbol_char(font, n as u8),
                        _ => Some(c),
                    })
                    .collect();
                self.run_text(&shown);
            }
            Node::Open("tcPr", _) => self.in_tcpr = true,
            Node::Close("tcPr") => self.in_tcpr = false,
            Node::Open("shd", a) => self.shading(a),
            Node::Open("background", a) => self.page_coloured |= shows_colour(attr(a, "color")),
            // A picture's description: listed (`alt_text`), not read into the text.
            Node::Open("docPr", a) => {
                if let Some(d) = attr(a, "descr").filter(|d| !d.trim().is_empty()) {
                    self.hidden_here.push((Hiding::AltText, d.to_string()));
                }
            }
            Node::Text(t) if self.in_text => self.run_text(t),
            Node::Open("tab", _) => {
                if let Some(p) = self.paras.last_mut() {
                    if !p.0.is_empty() {
                        p.0.push('\t');
                    }
                }
            }
            Node::Open("br" | "cr", _) => {
                if let Some(p) = self.paras.last_mut() {
                    p.0.push('\n');
                }
            }
            // A symbol font's character (`<w:sym w:font="Wingdings" w:char="F0FC"/>`: ✓).
            Node::Open("sym", a) => {
                if let Some(c) = attr(a, "char")
                    .and_then(|code| crate::extract::symbols::sym(attr(a, "font"), code))
                {
                    self.run_text(c.encode_utf8(&mut [0u8; 4]));
                }
            }
            Node::Open("noBreakHyphen", _) => {
                if let Some(p) = self.paras.last_mut() {
                    p.0.push('-');
                }
            }
            Node::Close("p") => self.close_paragraph(),
            Node::Open("outlineLvl", a) if !self.paras.is_empty() => {
                self.outline = attr(a, "val").and_then(|v| v.parse().ok());
            }
            Node::Open("chart", a) => {
                if let Some(rid) = attr(a, "id") {
                    self.blocks.push(Block::Para(format!("{CHART_MARK}{rid}")));
                }
            }
            Node::Open("relIds", a) => {
                if let Some(rid) = attr(a, "dm") {
                    self.blocks
                        .push(Block::Para(format!("{DIAGRAM_MARK}{rid}")));
                }
            }
            Node::Open("tbl", _) => self.tables.push(Vec::new()),
            Node::Open("tr", _) => {
                if let Some(t) = self.tables.last_mut() {
                    t.push(Vec::new());
                }
            }
            Node::Open("tc", _) => {
                self.cell_shaded = false;
                if let Some(r) = self.tables.last_mut().and_then(|t| t.last_mut()) {
                    r.push(Cell { paras: Vec::new() });
                }
            }
            Node::Close("tbl") => self.close_table(),
            _ => {}
        }
    }

    /// A property of the open run (in its `w:rPr`, not the paragraph mark's): its character
    /// style's and its own `w:vanish`, white colour, a size under 1.5 pt, a highlight.
    fn run_property(&mut self, tag: &str, a: &[(String, String)]) {
        match tag {
            "rStyle" => {
                self.run_style_hidden = attr(a, "val").and_then(|v| self.numbering.style_vanish(v));
            }
            "vanish" | "specVanish" => self.run_hidden = Some(on(a)),
            "color" => {
                self.run_white = attr(a, "val").is_some_and(|v| v.eq_ignore_ascii_case("FFFFFF"))
            }
            "sz" => {
                self.run_tiny = attr(a, "val")
                    .and_then(|v| v.parse::<u32>().ok())
                    .is_some_and(|hp| hp < 3)
            }
            "highlight" => self.run_shaded |= shows_colour(attr(a, "val")),
            _ => {}
        }
    }

    /// Shading (`w:shd`) that shows something behind white text: the table cell's, the
    /// paragraph's or the run's.
    fn shading(&mut self, a: &[(String, String)]) {
        let shown = shows_colour(attr(a, "fill"));
        if self.in_tcpr {
            self.cell_shaded |= shown;
        } else if self.in_ppr {
            self.para_shaded |= shown;
        } else {
            self.run_shaded |= shown;
        }
    }

    /// A run's text, into the open paragraph: as it is, or (when the run hides) as
    /// `hidden_text` says, kept for its finding.
    fn run_text(&mut self, t: &str) {
        if let Some(p) = self.paras.last_mut() {
            let vanish = self
                .run_hidden
                .or(self.run_style_hidden)
                .or(self.para_style_hidden)
                .unwrap_or(self.numbering.default_vanish);
            let hiding = if vanish {
                Some(Hiding::Vanish)
            } else if self.run_white
                && !(self.run_shaded || self.para_shaded || self.cell_shaded || self.page_coloured)
            {
                Some(Hiding::White)
            } else if self.run_tiny {
                Some(Hiding::Tiny)
            } else {
                None
            };
            let Some(hiding) = hiding else {
                p.0.push_str(t);
                self.last_hidden = false;
                return;
            };
            match self.hidden_here.last_mut() {
                Some((h, text)) if *h == hiding => text.push_str(t),
                _ => self.hidden_here.push((hiding, t.to_string())),
            }
            crate::findings::push_hidden(&mut p.0, t, self.hidden_text, self.last_hidden);
            self.last_hidden = true;
        }
    }

    /// A paragraph ends: its hidden runs placed by the block it becomes — a heading (by
    /// its outline level or style), a list item (numbered directly or through its style),
    /// or a paragraph — which goes into the open table cell, onto its own line (a text box
    /// inside a paragraph), or into the story.
    fn close_paragraph(&mut self) {
        // A field whose result began in this paragraph and ends in another links nothing:
        // its place here is gone.
        let closing = self.paras.len().checked_sub(1);
        for f in &mut self.fields {
            if f.result.map(|(i, _)| i) == closing {
                f.result = None;
            }
        }
        let Some((text, list, style)) = self.paras.pop() else {
            return;
        };
        self.last_hidden = false;
        for (h, text) in self.hidden_here.drain(..) {
            if !text.trim().is_empty() {
                self.hidden.push((self.blocks.len(), h, text));
            }
        }
        let heading = match self.outline.take() {
            Some(o) => heading_level(o),
            None => style.as_deref().and_then(|s| self.numbering.heading(s)),
        };
        // Set on the paragraph, else through its style (numbered headings).
        let list = match list {
            Some((id, _)) if id == "0" => None,
            Some(l) => Some(l),
            None => style.and_then(|s| self.numbering.for_style(&s)),
        };
        let label = match list {
            Some((id, lvl)) if !text.trim().is_empty() => Some(match id.strip_prefix(GIVEN) {
                Some(given) => {
                    let bullet = !given.chars().any(char::is_alphanumeric);
                    (lvl, given.to_string(), bullet)
                }
                None => self.numbering.prefix(&id, lvl),
            }),
            _ => None,
        };
        let in_cell = self
            .tables
            .last_mut()
            .and_then(|t| t.last_mut())
            .and_then(|r| r.last_mut());
        let block = match (label, heading) {
            _ if in_cell.is_some() || text.trim().is_empty() => Block::Para(text),
            // A numbered heading is a heading with its number.
            (Some((lvl, label, _)), Some(h)) => Block::Heading(h, lvl, join_label(&label, &text)),
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
        if !self.paras.is_empty() {
            // A text box inside a paragraph: its own line, where it stands.
            if !block.plain().trim().is_empty() {
                self.blocks.push(block);
            }
            return;
        }
        self.blocks.push(block);
    }

    /// A table ends: its cells' paragraphs joined, the table a block of the story, or text
    /// of the cell that holds it.
    fn close_table(&mut self) {
        let Some(t) = self.tables.pop() else { return };
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
        match self
            .tables
            .last_mut()
            .and_then(|t| t.last_mut())
            .and_then(|r| r.last_mut())
        {
            // A nested table becomes text of the cell that holds it.
            Some(cell) => cell.paras.extend(rows.iter().map(|r| r.join(" | "))),
            None => self.blocks.push(Block::Table(rows)),
        }
    }
}

/// A Word 2003 list label as the page shows it: a symbol font's characters (`·` in Symbol,
/// `§` in Wingdings) as that font draws them, a label Word left empty as a bullet.
fn shown_label(label: &str, font: Option<crate::extract::symbols::SymbolFont>) -> String {
    let label = label.trim();
    if label.is_empty() {
        return "•".to_string();
    }
    let Some(font) = font else {
        return label.to_string();
    };
    let shown: String = label
        .chars()
        .filter_map(|c| match u32::from(c) {
            u @ (0x20..=0xFF | 0xF020..=0xF0FF) => {
                crate::extract::symbols::symbol_char(font, (u & 0xFF) as u8)
            }
            _ => Some(c),
        })
        .collect();
    if shown.trim().is_empty() {
        "•".to_string()
    } else {
        shown
    }
}
