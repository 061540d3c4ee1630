//! Figures of a PDF page in `output: "json"` and Markdown (#44 item 3): the pictures a page draws, each
//! a `figure` block where it stands in the reading order, with its caption (`Figure 2: …`,
//! `Fig. 3.`, `Table 1`, `Abbildung 4`, `图 5` …) when one sits right under or over it.
//!
//! A picture is an image object, a form XObject holding an image or a drawing (eight paths
//! or more), or four paths or more with a curve or a slanted line drawn on the page that
//! touch (a chart's lines and markers), at least `MIN_SIDE` points on each side and
//! `MIN_SHARE` of the page; pictures that touch are one figure. One covering most of the
//! page (`MAX_SHARE`: a scan under its own text layer, a background) is no figure. The
//! caption moves into the figure (it is no paragraph of its own then). Markdown marks each
//! figure `<!-- image -->` in the same place, its caption beside it; plain text is as it
//! was.

use pdfium_render::prelude::*;

use super::paragraphs::Frame;
use super::tables::Bounds;
use crate::model::{Block, Content};

/// A figure is at least this many points wide and high (not a bullet, an icon, a rule).
const MIN_SIDE: f32 = 24.0;
/// … and at least this share of the page.
const MIN_SHARE: f32 = 0.005;
/// A picture over this share of the page is the page's background, no figure.
const MAX_SHARE: f32 = 0.85;
/// A form XObject with this many paths is a drawing.
const DRAWING_PATHS: usize = 8;
/// Drawn straight on the page, this many paths with a curve or a slanted line that touch
/// make a drawing (a chart's lines and markers; not a formula's radical or brace).
const DRAWING_PIECES: usize = 4;
/// … standing no more than this many points apart.
const PIECES_APART: f32 = 8.0;
/// Figures looked at on one page.
const MAX_FIGURES: usize = 64;
/// How far a caption may stand from its figure, in points.
const CAPTION_GAP: f32 = 24.0;
/// A picture under a block of prose (this many characters or more), or under this much
/// text in all, is a background or a frame, no figure (a diagram's labels are short).
const PROSE_INSIDE: usize = 150;
const TEXT_INSIDE: usize = 1_000;
/// A picture in the same place (within this many points) on at least half the pages read,
/// and three at least, is a decoration (a logo, a tab, a band), no figure.
const SAME_PLACE: f32 = 4.0;

/// The page's figures, as boxes of the page as shown (`[left, top, right, bottom]` from
/// its top-left corner), top to bottom. `drawn`: the page's pictures and its paths with a
/// curve or a slanted line, in the page's space (`tables::find_with_art`).
pub(super) fn find(page: &PdfPage<'_>, frame: Frame, drawn: &[Bounds]) -> Vec<[f32; 4]> {
    let area = frame.area();
    if area <= 0.0 {
        return Vec::new();
    }
    let shown = |(l, b, r, t): Bounds| frame.bbox((l, b, r, t));
    // Each box with its weight: a picture makes a figure by itself, a drawn piece counts 1.
    let mut boxes: Vec<([f32; 4], usize)> = Vec::new();
    for o in page.objects().iter() {
        if boxes.len() >= 4 * MAX_FIGURES {
            break;
        }
        let picture = match o.object_type() {
            PdfPageObjectType::Image => true,
            PdfPageObjectType::XObjectForm => o.as_x_object_form_object().is_some_and(|f| {
                let mut paths = 0;
                f.iter().any(|i| match i.object_type() {
                    PdfPageObjectType::Image => true,
                    PdfPageObjectType::Path => {
                        paths += 1;
                        paths >= DRAWING_PATHS
                    }
                    _ => false,
                })
            }),
            _ => false,
        };
        if !picture {
            continue;
        }
        let Ok(q) = o.bounds() else { continue };
        boxes.push((
            shown((
                q.left().value,
                q.bottom().value,
                q.right().value,
                q.top().value,
            )),
            DRAWING_PIECES,
        ));
    }
    // A drawing's pieces (a chart's lines and markers) stand apart by a few points; the
    // pictures among `drawn` are the ones above, not pieces (images side by side stay
    // figures of their own).
    let same = |a: &[f32; 4], b: &[f32; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 0.5);
    let pieces: Vec<([f32; 4], usize)> = drawn
        .iter()
        .map(|b| (shown(*b), 1))
        .filter(|(b, _)| b.iter().all(|v| v.is_finite()))
        .filter(|(b, _)| !boxes.iter().any(|(p, _)| same(p, b)))
        .collect();
    boxes.extend(merge(pieces, PIECES_APART));
    boxes.retain(|(b, _)| b.iter().all(|v| v.is_finite()));
    let mut figures: Vec<[f32; 4]> = merge(boxes, 2.0)
        .into_iter()
        .filter(|(_, weight)| *weight >= DRAWING_PIECES)
        .map(|(b, _)| b)
        .collect();
    figures.retain(|b| {
        let (w, h) = (b[2] - b[0], b[3] - b[1]);
        w >= MIN_SIDE && h >= MIN_SIDE && w * h >= MIN_SHARE * area && w * h <= MAX_SHARE * area
    });
    figures.sort_by(|a, b| a[1].total_cmp(&b[1]).then(a[0].total_cmp(&b[0])));
    figures.truncate(MAX_FIGURES);
    figures
}

/// Boxes that overlap or stand within `gap` points of each other, joined, their weights
/// added.
fn merge(mut boxes: Vec<([f32; 4], usize)>, gap: f32) -> Vec<([f32; 4], usize)> {
    let touch = |a: &[f32; 4], b: &[f32; 4]| {
        a[0] <= b[2] + gap && b[0] <= a[2] + gap && a[1] <= b[3] + gap && b[1] <= a[3] + gap
    };
    let mut out: Vec<([f32; 4], usize)> = Vec::new();
    while let Some((mut b, mut w)) = boxes.pop() {
        // Joining may make it touch one already out: take those back in.
        while let Some(k) = out.iter().position(|o| touch(&o.0, &b)) {
            let (o, ow) = out.swap_remove(k);
            b = [
                b[0].min(o[0]),
                b[1].min(o[1]),
                b[2].max(o[2]),
                b[3].max(o[3]),
            ];
            w += ow;
        }
        out.push((b, w));
    }
    out
}

/// The figures of each page read without the decorations: boxes found in the same place
/// on at least half the pages, and on three at least.
pub(super) fn without_decorations(pages: &[&[[f32; 4]]]) -> Vec<Vec<[f32; 4]>> {
    let same =
        |a: &[f32; 4], b: &[f32; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() <= SAME_PLACE);
    let decoration = |f: &[f32; 4]| {
        let on = pages
            .iter()
            .filter(|p| p.iter().any(|g| same(f, g)))
            .count();
        on >= 3 && on * 2 >= pages.len()
    };
    // Each figure against each page's (MAX_FIGURES a page at most).
    pages
        .iter()
        .map(|p| p.iter().filter(|f| !decoration(f)).copied().collect())
        .collect()
}

/// What a paragraph's start says it captions: `Some(true)` a table (`Table 1`, `Tabelle 2`,
/// `表 3`: captions that stand over what they caption as often as under), `Some(false)` a
/// figure (`Figure 2:`, `Fig. 3.`, `Abbildung 4`, `图 5`), `None` when it is no caption.
fn caption(text: &str) -> Option<bool> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let m = RE
        .get_or_init(|| {
            regex::Regex::new(
                r"^(?:(?i:(?P<table>table|tabelle|tabla|tableau|tabella|таблица|exhibit)|figure|fig\.?|chart|diagram|graph|image|illustration|photo|plate|map|scheme|abbildung|abb\.|grafik|figura|рис\.?|рисунок)\s*(?:[0-9]+|[IVXLC]+)(?:[.:)\-–—]|\s|$)|(?:(?P<cjk_table>表)|图|図)\s*[0-9０-９一二三四五六七八九十])",
            )
            .expect("a valid pattern")
        })
        .captures(text.trim_start())?;
    Some(m.name("table").is_some() || m.name("cjk_table").is_some())
}

/// What `place` needs of the things a page's figures are placed among: `Block`s of
/// `output: "json"`, the pieces of a page's Markdown (`paragraphs::markdown`).
pub(super) trait Placed: Sized {
    /// Its box, when it is of the page's main flow and has one (not a header, footer,
    /// note or field).
    fn flow_box(&self) -> Option<[f32; 4]>;
    /// Characters of its text, when it is of the main flow.
    fn flow_chars(&self) -> usize;
    /// Its text, when it is a paragraph (a caption is one).
    fn paragraph(&self) -> Option<&str>;
    /// A paragraph's text, taken.
    fn into_paragraph(self) -> Option<String>;
    /// A figure at `bbox` with its caption, which stood over it (`above`) or under it.
    fn figure(bbox: [f32; 4], caption: Option<String>, above: bool) -> Self;
}

impl Placed for Block {
    fn flow_box(&self) -> Option<[f32; 4]> {
        in_flow(self)
    }

    fn flow_chars(&self) -> usize {
        text_length(&self.content)
    }

    fn paragraph(&self) -> Option<&str> {
        match &self.content {
            Content::Paragraph { text } => Some(text),
            _ => None,
        }
    }

    fn into_paragraph(self) -> Option<String> {
        match self.content {
            Content::Paragraph { text } => Some(text),
            _ => None,
        }
    }

    fn figure(bbox: [f32; 4], caption: Option<String>, _above: bool) -> Self {
        Block::new(Content::Figure { alt: None, caption }).at(Some(bbox))
    }
}

/// Characters of a main-flow block's text.
fn text_length(c: &Content) -> usize {
    match c {
        Content::Paragraph { text }
        | Content::Heading { text, .. }
        | Content::ListItem { text, .. }
        | Content::Line { text, .. } => text.chars().count(),
        Content::Table { rows, .. } => rows.iter().flatten().map(|c| c.chars().count()).sum(),
        _ => 0,
    }
}

/// Whether two boxes share at least a third of the narrower one's width.
fn side_by_side_overlap(a: &[f32; 4], b: &[f32; 4]) -> bool {
    let shared = a[2].min(b[2]) - a[0].max(b[0]);
    shared > 0.33 * (a[2] - a[0]).min(b[2] - b[0]).max(1.0)
}

/// Whether a block is of the page's main flow with a box (not a header, footer, note or
/// field).
fn in_flow(b: &Block) -> Option<[f32; 4]> {
    match (&b.content, &b.part) {
        (
            Content::Paragraph { .. }
            | Content::Heading { .. }
            | Content::ListItem { .. }
            | Content::Table { .. }
            | Content::Line { .. },
            None,
        ) => b.bbox,
        _ => None,
    }
}

/// The page's blocks with its figures among them: each before the first block of the
/// main flow in its column that starts below its top (after the last one above it in its
/// column where none does; by height alone where none stands in its column), with the
/// caption right under it (or else right over it) taken in.
pub(super) fn place<B: Placed>(mut blocks: Vec<B>, figures: &[[f32; 4]]) -> Vec<B> {
    for f in figures {
        let inside: Vec<usize> = blocks
            .iter()
            .filter(|b| {
                b.flow_box().is_some_and(|bb| {
                    let (x, y) = ((bb[0] + bb[2]) / 2.0, (bb[1] + bb[3]) / 2.0);
                    (f[0]..=f[2]).contains(&x) && (f[1]..=f[3]).contains(&y)
                })
            })
            .map(|b| b.flow_chars())
            .collect();
        if inside.iter().any(|n| *n >= PROSE_INSIDE) || inside.iter().sum::<usize>() > TEXT_INSIDE {
            continue;
        }
        let column = |b: &[f32; 4]| side_by_side_overlap(b, f);
        let at = blocks
            .iter()
            .position(|b| {
                b.flow_box()
                    .is_some_and(|bb| column(&bb) && bb[1] >= f[1] - 1.0)
            })
            .or_else(|| {
                blocks
                    .iter()
                    .rposition(|b| b.flow_box().is_some_and(|bb| column(&bb) && bb[3] <= f[3]))
                    .map(|k| k + 1)
            })
            .or_else(|| {
                blocks
                    .iter()
                    .rposition(|b| b.flow_box().is_some_and(|bb| bb[1] < f[1]))
                    .map(|k| k + 1)
            })
            .unwrap_or(0);
        // Under the figure: the first block of its column that starts below the figure's
        // bottom (its labels, inside it, come before). Over it: only a table's caption
        // (a figure's stands under it; the one over it is the figure's before).
        let is_caption = |b: &B, below: bool| {
            let Some(text) = b.paragraph() else {
                return false;
            };
            let Some(bb) = b.flow_box() else { return false };
            let gap = if below { bb[1] - f[3] } else { f[1] - bb[3] };
            column(&bb)
                && (-2.0..=CAPTION_GAP).contains(&gap)
                && caption(text).is_some_and(|table| below || table)
        };
        let under = blocks[at..]
            .iter()
            .position(|b| {
                b.flow_box()
                    .is_some_and(|bb| column(&bb) && bb[1] >= f[3] - 2.0)
            })
            .map(|k| at + k)
            .filter(|&k| is_caption(&blocks[k], true));
        let mut figure_at = at;
        let mut above = false;
        let caption_text = if let Some(k) = under {
            Some(blocks.remove(k))
        } else if at > 0 && is_caption(&blocks[at - 1], false) {
            figure_at = at - 1;
            above = true;
            Some(blocks.remove(at - 1))
        } else {
            None
        };
        let caption = caption_text.and_then(B::into_paragraph);
        blocks.insert(figure_at, B::figure(*f, caption, above));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn para(text: &str, bbox: [f32; 4]) -> Block {
        Block::paragraph(text.to_string()).at(Some(bbox))
    }

    #[test]
    fn captions_by_their_start() {
        assert_eq!(caption("Table 2. Counts"), Some(true));
        assert_eq!(caption("表 3 数据"), Some(true));
        assert_eq!(caption("Figure 2: Map"), Some(false));
        for t in [
            "Figure 1: Readings",
            "Fig. 2. Soil",
            "FIGURE 3",
            "Table IV. Results",
            "Abbildung 4 – Karte",
            "图 5 流程",
            "Рис. 6. Схема",
        ] {
            assert!(caption(t).is_some(), "{t}");
        }
        for t in [
            "Figures show the trend",
            "Table of contents",
            "The figure 3 shows",
            "Mapping 2 fields",
        ] {
            assert!(caption(t).is_none(), "{t}");
        }
    }

    #[test]
    fn decorations_and_backgrounds_are_no_figures() {
        let tab = [552.7, 556.0, 586.5, 671.9];
        let moved = [553.5, 556.0, 586.0, 672.0];
        let photo = [50.0, 100.0, 300.0, 250.0];
        let (first, second, third) = ([tab, photo], [moved], [tab]);
        let pages: Vec<&[[f32; 4]]> = vec![&first, &second, &third, &[], &[], &[]];
        assert_eq!(
            without_decorations(&pages),
            vec![vec![photo], vec![], vec![], vec![], vec![], vec![]]
        );
        // On two pages of two, or three of seven: figures.
        let one = [tab];
        let two: Vec<&[[f32; 4]]> = vec![&one, &one];
        assert_eq!(without_decorations(&two), vec![vec![tab], vec![tab]]);
        // A picture under a page's worth of text is its background.
        let long = "word ".repeat(60);
        let out = place(
            vec![para(&long, [60.0, 120.0, 280.0, 240.0])],
            &[[50.0, 100.0, 300.0, 250.0]],
        );
        assert_eq!(out.len(), 1);
        let out = place(
            vec![para("Axis label", [60.0, 120.0, 120.0, 130.0])],
            &[[50.0, 100.0, 300.0, 250.0]],
        );
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn touching_pictures_are_one_figure() {
        let m = merge(
            vec![
                ([0.0, 0.0, 10.0, 10.0], 1),
                ([50.0, 50.0, 60.0, 60.0], 1),
                ([11.0, 0.0, 30.0, 10.0], 4),
                ([29.0, 9.0, 49.0, 49.0], 1),
                ([200.0, 200.0, 300.0, 300.0], 1),
            ],
            2.0,
        );
        assert_eq!(m.len(), 2);
        assert!(m.contains(&([0.0, 0.0, 60.0, 60.0], 7)), "{m:?}");
    }

    #[test]
    fn a_figure_stands_in_its_column_with_its_caption() {
        // Two columns: left 50–290, right 320–560; the figure in the right one.
        let blocks = vec![
            para("Left one.", [50.0, 100.0, 290.0, 300.0]),
            para("Left two.", [50.0, 310.0, 290.0, 600.0]),
            para("Right above.", [320.0, 100.0, 560.0, 180.0]),
            para("Fig. 2. Soil cores by depth.", [320.0, 352.0, 560.0, 362.0]),
            para("Right below.", [320.0, 380.0, 560.0, 600.0]),
        ];
        let out = place(blocks, &[[330.0, 200.0, 550.0, 340.0]]);
        let kinds: Vec<String> = out
            .iter()
            .map(|b| match &b.content {
                Content::Paragraph { text } => text.clone(),
                Content::Figure { caption, .. } => format!("[{}]", caption.clone().unwrap()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "Left one.",
                "Left two.",
                "Right above.",
                "[Fig. 2. Soil cores by depth.]",
                "Right below."
            ]
        );
        assert_eq!(out[3].bbox, Some([330.0, 200.0, 550.0, 340.0]));
        // A caption over the figure (as tables have them), and a paragraph too far away
        // or not a caption stays a paragraph.
        let blocks = vec![
            para("Table 1: Counts.", [50.0, 100.0, 290.0, 110.0]),
            para("Body text.", [50.0, 300.0, 290.0, 400.0]),
        ];
        let out = place(blocks, &[[50.0, 120.0, 290.0, 250.0]]);
        assert_eq!(out.len(), 2);
        assert!(
            matches!(&out[0].content, Content::Figure { caption: Some(c), .. } if c == "Table 1: Counts.")
        );
        let out = place(
            vec![para("Figure 9: far below.", [50.0, 400.0, 290.0, 410.0])],
            &[[50.0, 120.0, 290.0, 250.0]],
        );
        assert!(matches!(
            &out[0].content,
            Content::Figure { caption: None, .. }
        ));
        assert_eq!(out.len(), 2);
    }
}
