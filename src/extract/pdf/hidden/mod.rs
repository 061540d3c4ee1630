//! Text a person does not see on a PDF page (issue #21), from the page's objects — their
//! render mode, colours, font size, bounds and drawing order, one walk over the objects,
//! no per-character calls:
//!
//! - `invisible_render_mode`: render mode 3 or 7, beside the page's images;
//! - `invisible_text_not_in_image`: invisible (or fully transparent) text over an image that
//!   does not show it — a scan's OCR layer is checked against its image (`scan_layer`);
//! - `tiny_text`: under 1.5 pt as drawn;
//! - `off_page`: wholly outside the crop box;
//! - `clipped`: cut away by its own clip path (the clip lets through next to nothing of it);
//! - `covered`: wholly under an opaque image, an opaque upright filled rectangle or the band
//!   of a thick opaque straight stroke drawn after it, as cut by its clip (but not a scan's text layer that its page image hides —
//!   most of the page's text under one page-sized image — nor text set again over its
//!   cover);
//! - `overlapping_different`: two different texts drawn on the same spot, the same size;
//! - `low_contrast`: text painted at 10 % opacity or less, or in the colour of what is under
//!   it. For the latter only light text, and text whose colour is near that of a filled
//!   rectangle under it, are candidates. A candidate's ground is known from the objects when
//!   nothing is drawn under it (the white page) or the last thing drawn under it is an opaque
//!   filled rectangle holding it (its fill); for the others the page is rendered once and
//!   the pixels inside the text's box looked at: where nearly all of them are within a small
//!   distance of the text's own colour, nothing tells the text from its background (white on
//!   white, black on a black box), whatever drew it.
//!
//! Form XObjects (a stamp, an included figure, a template drawn with `Do`) are walked
//! where they are drawn, their objects placed on the page by the forms' matrices, so text
//! hidden inside one is found like the page's own.
//!
//! Its files: `mod.rs` the scan (`scan`: the walk, then the checks that compare objects,
//! then the suspects' text through the text layer and the findings made of it);
//! `walk.rs` the one walk over the page's objects (form XObjects flattened in drawing
//! order, the shapes that may hide text, the text objects and what each hides alone);
//! `compare.rs` the checks between objects (covered, two texts on one spot, low contrast
//! with its rendering). Boxes and matrices are `super::geometry`'s.

mod compare;
mod walk;

use pdfium_render::prelude::*;

use super::geometry::{crop_box, Rect};
use super::scan_layer;
use compare::{
    contrast_candidates, covered, covered_not_set_again, ground_unknown, same_spot, unseen,
};
use walk::{flatten, walk_objects, Placed, Shape, TextObj, Walk};

/// What a page hides: kind, its text, and the bounds (left, bottom, right, top) of the
/// text objects holding it as PDFium gives them (a form XObject's objects in the form's
/// space), by which their characters are known.
#[derive(Debug, Clone)]
pub struct PageHidden {
    pub kind: crate::findings::FindingKind,
    pub text: String,
    pub boxes: Vec<[f32; 4]>,
}

impl PageHidden {
    /// Hidden from sight, so marked or dropped on request (two texts on one spot are both
    /// in sight, if garbled).
    pub fn unseen(&self) -> bool {
        // A hidden form field's value is listed under `[Form fields]`, not in the text
        // layer the marking works on; a comment shows beside the page.
        !matches!(
            self.kind,
            crate::findings::FindingKind::OverlappingDifferent
                | crate::findings::FindingKind::HiddenFormField
                | crate::findings::FindingKind::Comment
        )
    }
}

/// Smaller than this (points, as drawn) no one reads it.
const TINY_PT: f32 = 1.5;

/// A pixel within this distance (largest channel difference, 0–255) of the text's colour
/// does not tell the text from its background.
const NEAR: u8 = 24;

/// Share of a text's box in its own colour above which the text cannot be told apart.
const SAME_SHARE: f32 = 0.9;

/// Text painted at this alpha (0–255) or under shows nothing.
const FAINT: u8 = 25;

/// Boxes overlapping by this much of their union are drawn on the same spot.
const SAME_SPOT: f32 = 0.6;

/// `DOCREADER_HIDDEN_TEXT_CHECKS=off` turns the checks off, for measuring what they cost
/// side by side (bench/pdf); nothing else should set it.
pub(super) fn checks_on() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("DOCREADER_HIDDEN_TEXT_CHECKS").map_or(true, |v| v != "off"))
}

/// `text_page`: the page's text layer, loaded once for its text and these checks.
pub(super) fn scan(
    page: &PdfPage<'_>,
    text_page: &PdfPageText<'_>,
    check: &scan_layer::LayerCheck,
) -> Vec<PageHidden> {
    if !checks_on() {
        return Vec::new();
    }
    let objects = flatten(page.objects());
    let (w, h) = (page.width().value, page.height().value);
    let crop = crop_box(page, w, h);
    let Walk {
        mut suspects,
        layer_like,
        mut texts,
        shapes,
    } = walk_objects(&objects, &crop);
    let over_image = over_images(&mut suspects, &layer_like, &texts, &shapes);
    let covered = covered(&objects, &mut texts, &shapes, w * h);
    let pairs = same_spot(&texts);
    let candidates = contrast_candidates(&objects, &texts, &shapes);
    if suspects.is_empty()
        && covered.is_empty()
        && pairs.is_empty()
        && candidates.is_empty()
        && over_image.is_empty()
    {
        return Vec::new();
    }
    // Their text, through the page's text layer (each object's own call would load one).
    // Each object's text asked of PDFium once (each call walks the page's characters; the
    // checks below ask again for the same objects, two layers of one paragraph many times).
    let asked: std::cell::RefCell<std::collections::HashMap<usize, Option<String>>> =
        Default::default();
    let text_of = |i: usize| -> Option<String> {
        if let Some(t) = asked.borrow().get(&i) {
            return t.clone();
        }
        let t = objects
            .get(i)
            .and_then(|o| o.obj.as_text_object().map(|t| text_page.for_object(t)));
        asked.borrow_mut().insert(i, t.clone());
        t
    };
    covered_not_set_again(covered, &texts, &text_of, &mut suspects);
    let candidates = ground_unknown(&objects, candidates, &text_of, &mut suspects);
    if !over_image.is_empty() {
        let lines = scan_layer::lines(&over_image, &text_of);
        suspects.extend(
            scan_layer::not_in_image(page, &lines, check)
                .into_iter()
                .flatten()
                .map(|i| (crate::findings::FindingKind::InvisibleTextNotInImage, i)),
        );
    }
    if !candidates.is_empty() {
        suspects.extend(
            unseen(page, &candidates)
                .into_iter()
                .map(|i| (crate::findings::FindingKind::LowContrast, i)),
        );
    }
    findings(&objects, suspects, pairs, &text_of)
}

/// Over an image, such text may be a scan's OCR layer: it is one only where the image
/// shows that text (`not_in_image` looks). Invisible text beside the images (in a
/// margin the scan does not reach) is no layer of theirs, and is listed as it is.
///
/// The suspects that are layer-like text held by an image are taken out of `suspects` and
/// returned with their boxes, for `scan_layer` to look at.
fn over_images(
    suspects: &mut Vec<(crate::findings::FindingKind, usize)>,
    layer_like: &std::collections::HashSet<usize>,
    texts: &[TextObj],
    shapes: &[Shape],
) -> Vec<(usize, Rect)> {
    let mut over_image: Vec<(usize, Rect)> = Vec::new();
    if !layer_like.is_empty() && shapes.iter().any(|s| s.image) {
        let images: Vec<Rect> = shapes.iter().filter(|s| s.image).map(|s| s.rect).collect();
        let box_of: std::collections::HashMap<usize, Rect> =
            texts.iter().map(|t| (t.index, t.rect)).collect();
        suspects.retain(|&(_, i)| {
            let held = layer_like.contains(&i)
                && box_of
                    .get(&i)
                    .is_some_and(|r| images.iter().any(|im| im.holds(r, 2.0)));
            if held {
                over_image.push((i, box_of[&i]));
            }
            !held
        });
    }
    over_image
}

/// Letters and digits in a text.
fn letters(s: &str) -> usize {
    s.chars().filter(|c| c.is_alphanumeric()).count()
}

/// A text without its whitespace.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<String>()
}

/// The findings, one per kind: the text of each suspect (blank ones left out) and of each
/// pair of different texts on one spot, with the bounds of the objects holding it.
fn findings(
    objects: &[Placed<'_>],
    suspects: Vec<(crate::findings::FindingKind, usize)>,
    pairs: Vec<(usize, usize)>,
    text_of: &dyn Fn(usize) -> Option<String>,
) -> Vec<PageHidden> {
    let mut out: Vec<PageHidden> = Vec::new();
    // The bounds PDFium gives the object (a form's own space for a form's objects), as a
    // character's text object gives them back.
    let box_of = |i: usize| {
        let q = objects.get(i)?.obj.bounds().ok()?;
        Some([
            q.left().value,
            q.bottom().value,
            q.right().value,
            q.top().value,
        ])
    };
    let mut add = |kind: crate::findings::FindingKind, text: String, ids: &[usize]| {
        let boxes = ids.iter().filter_map(|&i| box_of(i));
        match out.iter_mut().find(|p| p.kind == kind) {
            Some(p) => {
                if !p.text.ends_with(' ') && !text.starts_with(' ') {
                    p.text.push(' ');
                }
                p.text.push_str(&text);
                p.boxes.extend(boxes);
            }
            None => out.push(PageHidden {
                kind,
                text,
                boxes: boxes.collect(),
            }),
        }
    };
    for (kind, i) in suspects {
        let Some(text) = text_of(i) else { continue };
        if text.trim().is_empty() {
            continue;
        }
        add(kind, text, &[i]);
    }
    for (a, b) in pairs {
        let (Some(x), Some(y)) = (text_of(a), text_of(b)) else {
            continue;
        };
        let (sx, sy) = (squeeze(&x), squeeze(&y));
        // Drawn twice to look bold, or a shadow: the same words, or a part of the line
        // drawn again over itself (every letter of the one shows in the other); a letter
        // under a word (an accent, a drop cap) is not a second text.
        if sx == sy || sx.contains(&sy) || sy.contains(&sx) || letters(&sx) < 3 || letters(&sy) < 3
        {
            continue;
        }
        add(
            crate::findings::FindingKind::OverlappingDifferent,
            format!("{} | {}", x.trim(), y.trim()),
            &[a, b],
        );
    }
    // A stray letter or two (a figure's label, a glyph drawn for kerning) hides nothing.
    out.retain(|p| letters(&p.text) >= 4);
    out
}
