//! The checks between objects: text covered by a shape drawn after it (`covered`, unless
//! set again over its cover), two different texts on one spot (`same_spot`), and text in
//! the colour of what is under it (`contrast_candidates`, settled from the objects where
//! their ground is known, `ground_unknown`, else from one rendering, `unseen`).

use pdfium_render::prelude::*;

use super::super::geometry::Rect;
use super::walk::{clip_box, opaque, rgb, upright_rectangle, Placed, Shape, TextObj};
use super::{letters, squeeze, NEAR, SAME_SHARE, SAME_SPOT};

/// Text objects wholly under an opaque image or filled rectangle drawn after them, with
/// the shape that covers each. A page-sized image drawn over most of the page's text is a
/// scan over its own text layer (some OCR programs put the layer first): not a finding.
pub(super) fn covered(
    objects: &[Placed<'_>],
    texts: &mut [TextObj],
    shapes: &[Shape],
    page_area: f32,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if texts.is_empty() {
        return out;
    }
    let first_text = texts[0].index;
    // The texts by their bottom edge: a shape looks only at those that start within it.
    let mut by_bottom: Vec<(f32, usize)> = texts
        .iter()
        .enumerate()
        .map(|(k, t)| (t.rect.b, k))
        .collect();
    by_bottom.sort_by(|a, b| a.0.total_cmp(&b.0));
    for s in shapes.iter().filter(|s| s.index > first_text) {
        let from = by_bottom.partition_point(|&(b, _)| b < s.rect.b - 1.0);
        let under: Vec<usize> = by_bottom[from..]
            .iter()
            .take_while(|&&(b, _)| b <= s.rect.t + 1.0)
            .map(|&(_, k)| k)
            .filter(|&k| {
                let t = &texts[k];
                !t.flagged && t.index < s.index && s.rect.holds(&t.rect, 1.0)
            })
            .collect();
        if under.is_empty() {
            continue;
        }
        if s.image && s.rect.area() >= 0.5 * page_area && under.len() * 5 >= texts.len() * 4 {
            continue;
        }
        let Some(placed) = objects.get(s.index) else {
            continue;
        };
        let o = &placed.obj;
        let hides = if s.stroke {
            // Checked when its band was taken.
            true
        } else {
            opaque(o)
                && !o
                    .as_path_object()
                    .is_some_and(|p| !upright_rectangle(p, placed.form))
        };
        if !hides {
            continue;
        }
        // What the shape paints is its box cut by its clip (an image clipped to a frame
        // leaves the caption below it in sight).
        let painted = match clip_box(placed) {
            Some(c) => s.rect.cut(&c),
            None => s.rect,
        };
        for k in under {
            if !painted.holds(&texts[k].rect, 1.0) {
                continue;
            }
            texts[k].flagged = true;
            out.push((texts[k].index, s.index));
        }
    }
    out
}

/// Covered, unless the same words are drawn again over it (a producer that paints a
/// box over a line and sets the line anew, word by word).
pub(super) fn covered_not_set_again(
    covered: Vec<(usize, usize)>,
    texts: &[TextObj],
    text_of: &dyn Fn(usize) -> Option<String>,
    suspects: &mut Vec<(crate::findings::FindingKind, usize)>,
) {
    for (i, cover) in covered {
        let Some(k) = texts.binary_search_by_key(&i, |t| t.index).ok() else {
            continue;
        };
        let rect = texts[k].rect;
        let words = text_of(i).map(|t| squeeze(&t)).unwrap_or_default();
        let above: String = texts
            .iter()
            .filter(|u| u.index > cover && rect.overlap(&u.rect) >= 0.5 * u.rect.area())
            .filter(|u| u.rect.area() > 0.0)
            .filter_map(|u| text_of(u.index))
            .map(|t| squeeze(&t))
            .collect();
        if words.is_empty() || !above.contains(&words) {
            suspects.push((crate::findings::FindingKind::Covered, i));
        }
    }
}

/// Pairs of text objects drawn on the same spot at the same size (their boxes overlap by
/// most of their union), found by a sweep over the boxes sorted by their bottom edge.
pub(super) fn same_spot(texts: &[TextObj]) -> Vec<(usize, usize)> {
    // Text already found hidden (invisible, tiny, covered, ...) is reported as such.
    let mut order: Vec<&TextObj> = texts
        .iter()
        .filter(|t| !t.flagged && t.rect.area() > 0.0)
        .collect();
    order.sort_by(|a, b| a.rect.b.total_cmp(&b.rect.b));
    let mut out = Vec::new();
    for (k, a) in order.iter().enumerate() {
        for b in &order[k + 1..] {
            if b.rect.b - a.rect.b > 0.3 * a.rect.height() {
                break;
            }
            let inter = a.rect.overlap(&b.rect);
            let union = a.rect.area() + b.rect.area() - inter;
            if inter >= SAME_SPOT * union {
                out.push((a.index.min(b.index), a.index.max(b.index)));
                // Bounded: a page of thousands of overlaps is a drawing, not a message.
                if out.len() >= 64 {
                    return out;
                }
            }
        }
    }
    out
}

/// Text that may be in the colour of what is under it: light text, and text whose colour
/// is near that of an opaque filled rectangle drawn before it and holding it (each shape
/// looks only at the texts that start within it, as in `covered`).
pub(super) fn contrast_candidates(
    objects: &[Placed<'_>],
    texts: &[TextObj],
    shapes: &[Shape],
) -> Vec<(usize, Rect, (u8, u8, u8))> {
    let mut boxed = vec![false; texts.len()];
    let mut by_bottom: Vec<(f32, usize)> = texts
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.flagged && t.color.is_some())
        .map(|(k, t)| (t.rect.b, k))
        .collect();
    by_bottom.sort_by(|a, b| a.0.total_cmp(&b.0));
    for s in shapes.iter().filter(|s| !s.image && !s.stroke) {
        let from = by_bottom.partition_point(|&(b, _)| b < s.rect.b - 0.5);
        let inside: Vec<usize> = by_bottom[from..]
            .iter()
            .take_while(|&&(b, _)| b <= s.rect.t + 0.5)
            .map(|&(_, k)| k)
            .filter(|&k| texts[k].index > s.index && s.rect.holds(&texts[k].rect, 0.5))
            .collect();
        if inside.is_empty() {
            continue;
        }
        let Some(placed) = objects.get(s.index) else {
            continue;
        };
        let o = &placed.obj;
        let Ok(fill) = o.fill_color().map(rgb) else {
            continue;
        };
        let same: Vec<usize> = inside
            .into_iter()
            .filter(|&k| texts[k].color.is_some_and(|c| near(fill, c)))
            .collect();
        if !same.is_empty()
            && o.as_path_object()
                .is_some_and(|p| upright_rectangle(p, placed.form))
        {
            for k in same {
                boxed[k] = true;
            }
        }
    }
    let mut out = Vec::new();
    for (k, t) in texts.iter().enumerate().filter(|(_, t)| !t.flagged) {
        let Some(color) = t.color else { continue };
        if light(color) || boxed[k] {
            out.push((t.index, t.rect, color));
        }
        // Bounded: a page of hundreds of light words is a dark page's ordinary text; the
        // first ones tell.
        if out.len() >= 200 {
            break;
        }
    }
    out
}

/// Rendered only for candidates with words in them whose ground is not known from the
/// objects: light text with nothing drawn under it stands on the blank (white) page, and
/// text whose last thing drawn under it is an opaque filled rectangle holding it (a
/// slide's background, a box) stands on that rectangle's colour — a page with light gray
/// credits on a slide's white background is not rendered for them.
///
/// A candidate whose ground is known is settled here (a `low_contrast` suspect when its
/// colour is near the ground's); those left to render for are returned.
pub(super) fn ground_unknown(
    objects: &[Placed<'_>],
    candidates: Vec<(usize, Rect, (u8, u8, u8))>,
    text_of: &dyn Fn(usize) -> Option<String>,
    suspects: &mut Vec<(crate::findings::FindingKind, usize)>,
) -> Vec<(usize, Rect, (u8, u8, u8))> {
    let mut candidates: Vec<(usize, Rect, (u8, u8, u8))> = candidates
        .into_iter()
        .filter(|&(i, _, _)| text_of(i).is_some_and(|s| letters(&s) >= 2))
        .collect();
    if let Some(last) = candidates.iter().map(|c| c.0).max() {
        // What paints before the last candidate (paths filled or stroked, images,
        // shadings), each box asked once.
        let painted: Vec<(usize, Rect)> = objects[..last]
            .iter()
            .enumerate()
            .filter(|(_, p)| p.obj.object_type() != PdfPageObjectType::Text)
            .filter_map(|(j, p)| Rect::of(p).map(|r| (j, r)))
            .collect();
        candidates.retain(|&(i, r, color)| {
            let top = painted
                .iter()
                .take_while(|(j, _)| *j < i)
                .filter(|(_, p)| p.overlap(&r) > 0.0)
                .last();
            let ground = match top {
                None => Some((255, 255, 255)),
                Some(&(j, box_)) => {
                    let p = &objects[j];
                    let plain_box = box_.holds(&r, 0.5)
                        && opaque(&p.obj)
                        && p.obj.as_path_object().is_some_and(|path| {
                            path.fill_mode().is_ok_and(|m| m != PdfPathFillMode::None)
                                && upright_rectangle(path, p.form)
                        });
                    plain_box
                        .then(|| p.obj.fill_color().ok().map(rgb))
                        .flatten()
                }
            };
            match ground {
                Some(g) => {
                    if near(g, color) {
                        suspects.push((crate::findings::FindingKind::LowContrast, i));
                    }
                    false
                }
                None => true,
            }
        });
    }
    candidates
}

/// The candidates that cannot be told from what is under them, from one rendering of the
/// page (a pixel a point, at most 2 megapixels: a letter glyph is several pixels wide).
pub(super) fn unseen(page: &PdfPage<'_>, candidates: &[(usize, Rect, (u8, u8, u8))]) -> Vec<usize> {
    let Some(drawing) = super::super::render::Drawing::of(page, 1.0, 2.0e6) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &(i, r, color) in candidates {
        let Some((x0, y0, x1, y1)) = drawing.pixel_box(page, [r.l, r.b, r.r, r.t], 2) else {
            continue;
        };
        // At most about 4,000 samples a box.
        let step = (((x1 - x0) * (y1 - y0)) as f64 / 4000.0)
            .sqrt()
            .ceil()
            .max(1.0) as usize;
        let (mut same, mut all) = (0u32, 0u32);
        for y in (y0..y1).step_by(step) {
            for x in (x0..x1).step_by(step) {
                all += 1;
                same += u32::from(near(drawing.rgb(x, y), color));
            }
        }
        if all > 0 && same as f32 >= SAME_SHARE * all as f32 {
            out.push(i);
        }
    }
    out
}

fn near(a: (u8, u8, u8), b: (u8, u8, u8)) -> bool {
    a.0.abs_diff(b.0) <= NEAR && a.1.abs_diff(b.1) <= NEAR && a.2.abs_diff(b.2) <= NEAR
}

fn light(c: (u8, u8, u8)) -> bool {
    0.299 * f32::from(c.0) + 0.587 * f32::from(c.1) + 0.114 * f32::from(c.2) >= 180.0
}
