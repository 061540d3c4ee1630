//! Figures of a PDF page in `output: "json"` (#44 item 3): the pictures a page draws, each
//! a `figure` block where it stands in the reading order, with its caption (`Figure 2: …`,
//! `Fig. 3.`, `Table 1`, `Abbildung 4`, `图 5` …) when one sits right under or over it.
//!
//! A picture is an image object, or a form XObject holding an image or a drawing (eight
//! paths or more), at least `MIN_SIDE` points on each side and `MIN_SHARE` of the page;
//! pictures that touch are one figure. One covering most of the page (`MAX_SHARE`: a
//! scan under its own text layer, a background) is no figure. The caption moves into the
//! figure (it is no paragraph of its own then); plain text and Markdown are as they were.

use pdfium_render::prelude::*;

use super::paragraphs::Frame;
use crate::model::{Block, Content};

/// A figure is at least this many points wide and high (not a bullet, an icon, a rule).
const MIN_SIDE: f32 = 24.0;
/// … and at least this share of the page.
const MIN_SHARE: f32 = 0.005;
/// A picture over this share of the page is the page's background, no figure.
const MAX_SHARE: f32 = 0.85;
/// A form XObject with this many paths is a drawing.
const DRAWING_PATHS: usize = 8;
/// Figures looked at on one page.
const MAX_FIGURES: usize = 64;
/// How far a caption may stand from its figure, in points.
const CAPTION_GAP: f32 = 24.0;
/// A picture under more text than this (characters of the blocks standing inside it) is
/// a background or a frame, no figure (a chart's labels are short).
const TEXT_INSIDE: usize = 200;
/// A picture in the same place (within this many points) on at least half the pages read,
/// and three at least, is a decoration (a logo, a tab, a band), no figure.
const SAME_PLACE: f32 = 4.0;

/// The page's figures, as boxes of the page as shown (`[left, top, right, bottom]` from
/// its top-left corner), top to bottom.
pub(super) fn find(page: &PdfPage<'_>, frame: Frame) -> Vec<[f32; 4]> {
    let area = frame.area();
    if area <= 0.0 {
        return Vec::new();
    }
    let mut boxes: Vec<[f32; 4]> = Vec::new();
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
        let b = frame.bbox((
            q.left().value,
            q.bottom().value,
            q.right().value,
            q.top().value,
        ));
        if b.iter().all(|v| v.is_finite()) {
            boxes.push(b);
        }
    }
    let mut figures = merge(boxes);
    figures.retain(|b| {
        let (w, h) = (b[2] - b[0], b[3] - b[1]);
        w >= MIN_SIDE && h >= MIN_SIDE && w * h >= MIN_SHARE * area && w * h <= MAX_SHARE * area
    });
    figures.sort_by(|a, b| a[1].total_cmp(&b[1]).then(a[0].total_cmp(&b[0])));
    figures.truncate(MAX_FIGURES);
    figures
}

/// Boxes that overlap or touch (within 2 points), joined.
fn merge(mut boxes: Vec<[f32; 4]>) -> Vec<[f32; 4]> {
    let touch = |a: &[f32; 4], b: &[f32; 4]| {
        a[0] <= b[2] + 2.0 && b[0] <= a[2] + 2.0 && a[1] <= b[3] + 2.0 && b[1] <= a[3] + 2.0
    };
    let mut out: Vec<[f32; 4]> = Vec::new();
    while let Some(mut b) = boxes.pop() {
        // Joining may make it touch one already out: take those back in.
        while let Some(k) = out.iter().position(|o| touch(o, &b)) {
            let o = out.swap_remove(k);
            b = [
                b[0].min(o[0]),
                b[1].min(o[1]),
                b[2].max(o[2]),
                b[3].max(o[3]),
            ];
        }
        out.push(b);
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

/// Whether a paragraph is a caption by its start: a figure or table word and a number.
fn caption(text: &str) -> bool {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"^(?:(?i:figure|fig\.?|chart|diagram|graph|image|illustration|photo|plate|exhibit|map|scheme|table|abbildung|abb\.|tabelle|grafik|figura|tabla|tableau|рис\.?|рисунок|таблица)\s*(?:[0-9]+|[IVXLC]+)(?:[.:)\-–—]|\s|$)|(?:图|表|図)\s*[0-9０-９一二三四五六七八九十])",
        )
        .expect("a valid pattern")
    })
    .is_match(text.trim_start())
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
pub(super) fn place(mut blocks: Vec<Block>, figures: &[[f32; 4]]) -> Vec<Block> {
    for f in figures {
        let inside: usize = blocks
            .iter()
            .filter(|b| {
                in_flow(b).is_some_and(|bb| {
                    let (x, y) = ((bb[0] + bb[2]) / 2.0, (bb[1] + bb[3]) / 2.0);
                    (f[0]..=f[2]).contains(&x) && (f[1]..=f[3]).contains(&y)
                })
            })
            .map(|b| text_length(&b.content))
            .sum();
        if inside > TEXT_INSIDE {
            continue;
        }
        let column = |b: &[f32; 4]| side_by_side_overlap(b, f);
        let at = blocks
            .iter()
            .position(|b| in_flow(b).is_some_and(|bb| column(&bb) && bb[1] >= f[1] - 1.0))
            .or_else(|| {
                blocks
                    .iter()
                    .rposition(|b| in_flow(b).is_some_and(|bb| column(&bb) && bb[3] <= f[3]))
                    .map(|k| k + 1)
            })
            .or_else(|| {
                blocks
                    .iter()
                    .rposition(|b| in_flow(b).is_some_and(|bb| bb[1] < f[1]))
                    .map(|k| k + 1)
            })
            .unwrap_or(0);
        let is_caption = |b: &Block, below: bool| {
            let Content::Paragraph { text } = &b.content else {
                return false;
            };
            let Some(bb) = in_flow(b) else { return false };
            let gap = if below { bb[1] - f[3] } else { f[1] - bb[3] };
            column(&bb) && (-2.0..=CAPTION_GAP).contains(&gap) && caption(text)
        };
        let mut figure_at = at;
        let caption_text = if blocks.get(at).is_some_and(|b| is_caption(b, true)) {
            Some(blocks.remove(at))
        } else if at > 0 && is_caption(&blocks[at - 1], false) {
            figure_at = at - 1;
            Some(blocks.remove(at - 1))
        } else {
            None
        };
        let caption = caption_text.and_then(|b| match b.content {
            Content::Paragraph { text } => Some(text),
            _ => None,
        });
        blocks.insert(
            figure_at,
            Block::new(Content::Figure { alt: None, caption }).at(Some(*f)),
        );
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
        for t in [
            "Figure 1: Readings",
            "Fig. 2. Soil",
            "FIGURE 3",
            "Table IV. Results",
            "Abbildung 4 – Karte",
            "图 5 流程",
            "Рис. 6. Схема",
        ] {
            assert!(caption(t), "{t}");
        }
        for t in [
            "Figures show the trend",
            "Table of contents",
            "The figure 3 shows",
            "Mapping 2 fields",
        ] {
            assert!(!caption(t), "{t}");
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
        let m = merge(vec![
            [0.0, 0.0, 10.0, 10.0],
            [50.0, 50.0, 60.0, 60.0],
            [11.0, 0.0, 30.0, 10.0],
            [29.0, 9.0, 49.0, 49.0],
        ]);
        assert_eq!(m, vec![[0.0, 0.0, 60.0, 60.0]]);
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
