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

use pdfium_render::prelude::*;

use super::scan_layer;

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

/// A box in the page's own (unrotated) space: left, bottom, right, top.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rect {
    pub(super) l: f32,
    pub(super) b: f32,
    pub(super) r: f32,
    pub(super) t: f32,
}

impl Rect {
    /// An object's box on the page.
    fn of(o: &Placed<'_>) -> Option<Rect> {
        let q = o.obj.bounds().ok()?;
        let r = Rect {
            l: q.left().value,
            b: q.bottom().value,
            r: q.right().value,
            t: q.top().value,
        };
        let r = match &o.form {
            Some(m) => m.rect(r),
            None => r,
        };
        (r.l.is_finite() && r.b.is_finite() && r.r.is_finite() && r.t.is_finite()).then_some(r)
    }

    fn area(&self) -> f32 {
        (self.r - self.l).max(0.0) * (self.t - self.b).max(0.0)
    }

    pub(super) fn height(&self) -> f32 {
        (self.t - self.b).abs()
    }

    /// Whether `inner` lies inside, give or take `slack` points.
    fn holds(&self, inner: &Rect, slack: f32) -> bool {
        inner.l >= self.l - slack
            && inner.r <= self.r + slack
            && inner.b >= self.b - slack
            && inner.t <= self.t + slack
    }

    fn overlap(&self, o: &Rect) -> f32 {
        let w = (self.r.min(o.r) - self.l.max(o.l)).max(0.0);
        let h = (self.t.min(o.t) - self.b.max(o.b)).max(0.0);
        w * h
    }
}

/// How a form XObject's space maps onto the page (`[a b c d e f]`, as PDF writes it), the
/// forms it is drawn in composed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Affine(pub(super) [f32; 6]);

impl Affine {
    fn of(m: PdfMatrix) -> Affine {
        Affine([m.a(), m.b(), m.c(), m.d(), m.e(), m.f()])
    }

    fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        let [a, b, c, d, e, f] = self.0;
        (a * x + c * y + e, b * x + d * y + f)
    }

    /// `inner` then `self`.
    pub(super) fn then(&self, inner: &Affine) -> Affine {
        let [a, b, c, d, e, f] = self.0;
        let [p, q, r, s, t, u] = inner.0;
        Affine([
            a * p + c * q,
            b * p + d * q,
            a * r + c * s,
            b * r + d * s,
            a * t + c * u + e,
            b * t + d * u + f,
        ])
    }

    /// The box holding a box's corners as mapped.
    pub(super) fn rect(&self, r: Rect) -> Rect {
        let corners = [
            self.apply(r.l, r.b),
            self.apply(r.l, r.t),
            self.apply(r.r, r.b),
            self.apply(r.r, r.t),
        ];
        let mut out = Rect {
            l: f32::MAX,
            b: f32::MAX,
            r: f32::MIN,
            t: f32::MIN,
        };
        for (x, y) in corners {
            (out.l, out.b, out.r, out.t) = (out.l.min(x), out.b.min(y), out.r.max(x), out.t.max(y));
        }
        out
    }

    /// How much it scales lengths (the square root of its area's scale).
    fn scale(&self) -> f32 {
        let [a, b, c, d, ..] = self.0;
        (a * d - b * c).abs().sqrt()
    }

    /// Neither rotated nor skewed.
    fn upright(&self) -> bool {
        let [a, b, c, d, ..] = self.0;
        b.abs() <= 1e-4 * a.abs().max(1e-6) && c.abs() <= 1e-4 * d.abs().max(1e-6)
    }
}

/// A page object in drawing order: the page's own, or one inside a form XObject drawn on
/// it, with the forms' matrix.
struct Placed<'a> {
    obj: PdfPageObject<'a>,
    form: Option<Affine>,
}

/// Forms drawn inside forms deeper than this are not walked (no real page nests so deep).
const MAX_FORM_DEPTH: usize = 8;
/// Objects inside forms walked on one page, at most (a form stamped thousands of times is
/// a map's symbol, not a message).
const MAX_FORM_OBJECTS: usize = 20_000;

/// The page's objects in drawing order, the objects of each form XObject in its place.
fn flatten<'a>(objects: &PdfPageObjects<'a>) -> Vec<Placed<'a>> {
    fn walk<'a>(
        obj: PdfPageObject<'a>,
        form: Option<Affine>,
        depth: usize,
        inner: &mut usize,
        out: &mut Vec<Placed<'a>>,
    ) {
        let PdfPageObject::XObjectForm(f) = obj else {
            out.push(Placed { obj, form });
            return;
        };
        if depth >= MAX_FORM_DEPTH {
            return;
        }
        let m = f.matrix().map(Affine::of).ok();
        let place = match (form, m) {
            (Some(outer), Some(m)) => Some(outer.then(&m)),
            (None, m) => m,
            (outer, None) => outer,
        };
        for j in 0..f.len() {
            if *inner >= MAX_FORM_OBJECTS {
                return;
            }
            let Ok(k) = f.get(j) else { continue };
            *inner += 1;
            walk(k, place, depth + 1, inner, out);
        }
    }
    let mut out = Vec::with_capacity(objects.len());
    let mut inner = 0;
    for i in 0..objects.len() {
        if let Ok(o) = objects.get(i) {
            walk(o, None, 0, &mut inner, &mut out);
        }
    }
    out
}

/// A text object as the walk found it.
struct TextObj {
    index: usize,
    rect: Rect,
    /// The colour it is painted in (fill, or stroke for stroke-only text), and its alpha.
    color: Option<(u8, u8, u8)>,
    /// Already a finding of another kind.
    flagged: bool,
}

/// A filled rectangle, an image or a thick straight stroke: what can hide text drawn before
/// it, or (filled) be the background of text drawn after it.
struct Shape {
    index: usize,
    rect: Rect,
    image: bool,
    /// A straight upright line stroked opaque: `rect` is the band its pen paints.
    stroke: bool,
}

fn rgb(c: PdfColor) -> (u8, u8, u8) {
    (c.red(), c.green(), c.blue())
}

fn near(a: (u8, u8, u8), b: (u8, u8, u8)) -> bool {
    a.0.abs_diff(b.0) <= NEAR && a.1.abs_diff(b.1) <= NEAR && a.2.abs_diff(b.2) <= NEAR
}

fn light(c: (u8, u8, u8)) -> bool {
    0.299 * f32::from(c.0) + 0.587 * f32::from(c.1) + 0.114 * f32::from(c.2) >= 180.0
}

/// Whether the object paints fully opaque: no transparency (alpha, soft mask, blend mode),
/// and for a path an opaque fill.
fn opaque(o: &PdfPageObject<'_>) -> bool {
    if o.has_transparency() {
        return false;
    }
    match o.as_path_object() {
        Some(_) => o.fill_color().is_ok_and(|c| c.alpha() == 255),
        None => true,
    }
}

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
    // In the page's own (unrotated) space, as object bounds are: the crop box, else the
    // media box (width and height are the rotated page's).
    let crop = page
        .boundaries()
        .crop()
        .or_else(|_| page.boundaries().media())
        .map(|b| Rect {
            l: b.bounds.left().value,
            b: b.bounds.bottom().value,
            r: b.bounds.right().value,
            t: b.bounds.top().value,
        })
        .unwrap_or(Rect {
            l: 0.0,
            b: 0.0,
            r: w.max(h),
            t: w.max(h),
        });
    let mut suspects: Vec<(crate::findings::FindingKind, usize)> = Vec::new();
    // Text no one could see however it is looked at (invisible, or painted at no opacity):
    // over a page image, a scan's text layer.
    let mut layer_like: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut texts: Vec<TextObj> = Vec::new();
    let mut shapes: Vec<Shape> = Vec::new();
    for (i, placed) in objects.iter().enumerate() {
        let o = &placed.obj;
        match o.object_type() {
            PdfPageObjectType::Image => {
                if let Some(r) = Rect::of(placed) {
                    shapes.push(Shape {
                        index: i,
                        rect: r,
                        image: true,
                        stroke: false,
                    });
                }
            }
            PdfPageObjectType::Path => {
                let Some(p) = o.as_path_object() else {
                    continue;
                };
                // Filled: whether it is an upright rectangle (other shapes — a triangle, a
                // pie wedge, a slanted frame, a letter's outline — cover less than their
                // box) is asked only of one with text in its box.
                let filled = p.fill_mode().is_ok_and(|m| m != PdfPathFillMode::None);
                if filled {
                    if let Some(r) = Rect::of(placed) {
                        shapes.push(Shape {
                            index: i,
                            rect: r,
                            image: false,
                            stroke: false,
                        });
                    }
                } else if let Some(r) = stroke_band(placed) {
                    shapes.push(Shape {
                        index: i,
                        rect: r,
                        image: false,
                        stroke: true,
                    });
                }
            }
            PdfPageObjectType::Text => {
                let Some(t) = o.as_text_object() else {
                    continue;
                };
                let rect = Rect::of(placed);
                // The font size times the text matrix (and the forms' scale); the bounds
                // add the page's transform (figures scale their labels), so both must be
                // small.
                let form_scale = placed.form.map_or(1.0, |m| m.scale());
                let tiny = t.scaled_font_size().value * form_scale < TINY_PT
                    && rect.is_none_or(|r| r.height() < TINY_PT);
                let mode = t.render_mode();
                // Mode 3 (neither filled nor stroked) and mode 7 (only added to the clip):
                // nothing of the glyphs is painted.
                let invisible = matches!(
                    mode,
                    PdfPageTextRenderMode::Invisible | PdfPageTextRenderMode::InvisibleClipping
                );
                let kind = if invisible {
                    Some(crate::findings::FindingKind::InvisibleRenderMode)
                } else if tiny {
                    Some(crate::findings::FindingKind::TinyText)
                } else {
                    rect.and_then(|r| {
                        let outside = r.r < crop.l || r.l > crop.r || r.t < crop.b || r.b > crop.t;
                        if outside {
                            return Some(crate::findings::FindingKind::OffPage);
                        }
                        // Cut away by its clip: what the clip lets through of its box (the
                        // clip's box is an upper bound) is next to nothing.
                        let clip = clip_box(placed)?;
                        let through = if clip.l < clip.r && clip.b < clip.t {
                            clip.overlap(&r)
                        } else {
                            0.0
                        };
                        (through <= 0.05 * r.area())
                            .then_some(crate::findings::FindingKind::Clipped)
                    })
                };
                let paint = match mode {
                    PdfPageTextRenderMode::StrokedUnfilled
                    | PdfPageTextRenderMode::StrokedUnfilledClipping => o.stroke_color(),
                    _ => o.fill_color(),
                }
                .ok();
                // Painted at 10 % opacity or less: nothing of it shows, whatever is under.
                let faint = paint.is_some_and(|c| c.alpha() <= FAINT);
                if faint || invisible {
                    layer_like.insert(i);
                }
                let kind =
                    kind.or_else(|| faint.then_some(crate::findings::FindingKind::LowContrast));
                if let Some(k) = kind {
                    suspects.push((k, i));
                }
                if let Some(rect) = rect {
                    let color = paint.map(rgb);
                    texts.push(TextObj {
                        index: i,
                        rect,
                        color,
                        flagged: kind.is_some(),
                    });
                }
            }
            _ => {}
        }
    }
    // Over an image, such text may be a scan's OCR layer: it is one only where the image
    // shows that text (`not_in_image` looks). Invisible text beside the images (in a
    // margin the scan does not reach) is no layer of theirs, and is listed as it is.
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
    let letters = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count();
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    // Covered, unless the same words are drawn again over it (a producer that paints a
    // box over a line and sets the line anew, word by word).
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
    // Rendered only for candidates with words in them whose ground is not known from the
    // objects: light text with nothing drawn under it stands on the blank (white) page, and
    // text whose last thing drawn under it is an opaque filled rectangle holding it (a
    // slide's background, a box) stands on that rectangle's colour — a page with light gray
    // credits on a slide's white background is not rendered for them.
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
        // Drawn twice to look bold, or a shadow: the same words; a letter under a word (an
        // accent, a drop cap) is not a second text.
        if sx == sy || letters(&sx) < 3 || letters(&sy) < 3 {
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

/// The band an opaque pen paints along one straight horizontal or vertical line (a
/// `m … l S` path, no fill): the line's box widened by half the pen's width on each side,
/// on the page. Thin rules hide nothing and are left alone (under 4 points wide).
fn stroke_band(placed: &Placed<'_>) -> Option<Rect> {
    let o = &placed.obj;
    let p = o.as_path_object()?;
    if !p.is_stroked().unwrap_or(false) || o.has_transparency() {
        return None;
    }
    if o.stroke_color().ok()?.alpha() != 255 {
        return None;
    }
    let segments = p.segments();
    if segments.len() != 2 {
        return None;
    }
    let m = p.matrix().ok()?;
    let pts: Vec<(f32, f32)> = segments
        .raw()
        .iter()
        .map(|s| {
            let (x, y) = (s.x().value, s.y().value);
            (m.a() * x + m.c() * y + m.e(), m.b() * x + m.d() * y + m.f())
        })
        .collect();
    let [(x0, y0), (x1, y1)] = pts[..] else {
        return None;
    };
    let scale = (m.a() * m.d() - m.b() * m.c()).abs().sqrt();
    let half = p.stroke_width().ok()?.value * scale / 2.0;
    if !(half.is_finite() && half >= 2.0) {
        return None;
    }
    let horizontal = (y0 - y1).abs() <= 0.01 * half;
    let vertical = (x0 - x1).abs() <= 0.01 * half;
    if !(horizontal || vertical) {
        return None;
    }
    let r = Rect {
        l: x0.min(x1) - if vertical { half } else { 0.0 },
        r: x0.max(x1) + if vertical { half } else { 0.0 },
        b: y0.min(y1) - if horizontal { half } else { 0.0 },
        t: y0.max(y1) + if horizontal { half } else { 0.0 },
    };
    let r = match &placed.form {
        Some(f) => f.rect(r),
        None => r,
    };
    (r.l.is_finite() && r.b.is_finite() && r.r.is_finite() && r.t.is_finite()).then_some(r)
}

/// Whether a path is one upright rectangle: four to six points, each at a corner of their
/// bounding box and each corner drawn, with no rotation or skew.
fn upright_rectangle(p: &PdfPagePathObject<'_>, form: Option<Affine>) -> bool {
    if form.is_some_and(|m| !m.upright()) {
        return false;
    }
    let segments = p.segments();
    let n = segments.len();
    if !(4..=6).contains(&n) {
        return false;
    }
    let Ok(m) = p.matrix() else { return false };
    if m.b().abs() > 1e-4 * m.a().abs().max(1e-6) || m.c().abs() > 1e-4 * m.d().abs().max(1e-6) {
        return false;
    }
    let points: Vec<(f32, f32)> = segments
        .raw()
        .iter()
        .map(|s| (s.x().value, s.y().value))
        .collect();
    let (mut l, mut b, mut r, mut t) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for &(x, y) in &points {
        (l, b, r, t) = (l.min(x), b.min(y), r.max(x), t.max(y));
    }
    let slack = 0.01 * (r - l).max(t - b) + 1e-3;
    let at = |v: f32, a: f32, z: f32| (v - a).abs() <= slack || (v - z).abs() <= slack;
    let corner = |cx: f32, cy: f32| {
        points
            .iter()
            .any(|&(x, y)| (x - cx).abs() <= slack && (y - cy).abs() <= slack)
    };
    // Every point at a corner, and every corner drawn (a right triangle has three).
    points.iter().all(|&(x, y)| at(x, l, r) && at(y, b, t))
        && corner(l, b)
        && corner(l, t)
        && corner(r, b)
        && corner(r, t)
}

/// Text objects wholly under an opaque image or filled rectangle drawn after them, with
/// the shape that covers each. A page-sized image drawn over most of the page's text is a
/// scan over its own text layer (some OCR programs put the layer first): not a finding.
fn covered(
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
            Some(c) => Rect {
                l: s.rect.l.max(c.l),
                b: s.rect.b.max(c.b),
                r: s.rect.r.min(c.r),
                t: s.rect.t.min(c.t),
            },
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

/// The box of an object's clip path (the intersection of its paths' boxes), if it has one.
fn clip_box(placed: &Placed<'_>) -> Option<Rect> {
    let clip = placed.obj.get_clip_path()?;
    let mut out: Option<Rect> = None;
    for path in clip.iter() {
        let (mut l, mut b, mut r, mut t) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
        for seg in path.iter() {
            let (x, y) = (seg.x().value, seg.y().value);
            (l, b, r, t) = (l.min(x), b.min(y), r.max(x), t.max(y));
        }
        if l > r || b > t {
            continue;
        }
        let (l, b, r, t) = match &placed.form {
            Some(m) => {
                let q = m.rect(Rect { l, b, r, t });
                (q.l, q.b, q.r, q.t)
            }
            None => (l, b, r, t),
        };
        out = Some(match out {
            Some(o) => Rect {
                l: o.l.max(l),
                b: o.b.max(b),
                r: o.r.min(r),
                t: o.t.min(t),
            },
            None => Rect { l, b, r, t },
        });
    }
    out
}

/// Pairs of text objects drawn on the same spot at the same size (their boxes overlap by
/// most of their union), found by a sweep over the boxes sorted by their bottom edge.
fn same_spot(texts: &[TextObj]) -> Vec<(usize, usize)> {
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
fn contrast_candidates(
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

/// The candidates that cannot be told from what is under them, from one rendering of the
/// page (a pixel a point, at most 2 megapixels: a letter glyph is several pixels wide).
fn unseen(page: &PdfPage<'_>, candidates: &[(usize, Rect, (u8, u8, u8))]) -> Vec<usize> {
    let Some(drawing) = super::render::Drawing::of(page, 1.0, 2.0e6) else {
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
