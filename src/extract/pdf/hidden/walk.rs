//! The one walk over a page's objects: form XObjects flattened into the page's drawing
//! order (`flatten`), then the images, filled paths and thick strokes that may hide text
//! (`Shape`), the text objects (`TextObj`), and the text hidden by what it shows alone
//! (render mode, size, place, clip, opacity).

use pdfium_render::prelude::*;

use super::super::geometry::{corners_only, Affine, Rect};
use super::{FAINT, TINY_PT};

/// A page object in drawing order: the page's own, or one inside a form XObject drawn on
/// it, with the forms' matrix.
pub(super) struct Placed<'a> {
    pub(super) obj: PdfPageObject<'a>,
    pub(super) form: Option<Affine>,
}

/// Forms drawn inside forms deeper than this are not walked (no real page nests so deep).
const MAX_FORM_DEPTH: usize = 8;

/// Objects inside forms walked on one page, at most (a form stamped thousands of times is
/// a map's symbol, not a message).
const MAX_FORM_OBJECTS: usize = 20_000;

/// The page's objects in drawing order, the objects of each form XObject in its place.
pub(super) fn flatten<'a>(objects: &PdfPageObjects<'a>) -> Vec<Placed<'a>> {
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

// What PDFium says of an object's box (the arithmetic of `Rect` is in `geometry`).
impl Rect {
    /// An object's box on the page.
    pub(super) fn of(o: &Placed<'_>) -> Option<Rect> {
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
        r.finite()
    }
}

/// A text object as the walk found it.
pub(super) struct TextObj {
    pub(super) index: usize,
    pub(super) rect: Rect,
    /// The colour it is painted in (fill, or stroke for stroke-only text), and its alpha.
    pub(super) color: Option<(u8, u8, u8)>,
    /// Already a finding of another kind.
    pub(super) flagged: bool,
}

/// A filled rectangle, an image or a thick straight stroke: what can hide text drawn before
/// it, or (filled) be the background of text drawn after it.
pub(super) struct Shape {
    pub(super) index: usize,
    pub(super) rect: Rect,
    pub(super) image: bool,
    /// A straight upright line stroked opaque: `rect` is the band its pen paints.
    pub(super) stroke: bool,
}

/// What the walk over a page's objects finds (`walk_objects`).
#[derive(Default)]
pub(super) struct Walk {
    /// Objects hidden by what each shows alone, with how.
    pub(super) suspects: Vec<(crate::findings::FindingKind, usize)>,
    /// Text no one could see however it is looked at (invisible, or painted at no opacity):
    /// over a page image, a scan's text layer.
    pub(super) layer_like: std::collections::HashSet<usize>,
    pub(super) texts: Vec<TextObj>,
    pub(super) shapes: Vec<Shape>,
}

/// One walk over the page's objects in drawing order: the images, filled paths and thick
/// strokes that may hide text, the text objects, and the text hidden by what it shows alone.
pub(super) fn walk_objects(objects: &[Placed<'_>], crop: &Rect) -> Walk {
    let mut walk = Walk::default();
    for (i, placed) in objects.iter().enumerate() {
        let o = &placed.obj;
        match o.object_type() {
            PdfPageObjectType::Image => {
                if let Some(r) = Rect::of(placed) {
                    walk.shapes.push(Shape {
                        index: i,
                        rect: r,
                        image: true,
                        stroke: false,
                    });
                }
            }
            PdfPageObjectType::Path => {
                if let Some(s) = path_shape(placed, i) {
                    walk.shapes.push(s);
                }
            }
            PdfPageObjectType::Text => walk.text(placed, i, crop),
            _ => {}
        }
    }
    walk
}

/// A path that may hide text: a filled one (its box), or an opaque thick straight stroke
/// (`stroke_band`).
fn path_shape(placed: &Placed<'_>, i: usize) -> Option<Shape> {
    let p = placed.obj.as_path_object()?;
    // Filled: whether it is an upright rectangle (other shapes — a triangle, a
    // pie wedge, a slanted frame, a letter's outline — cover less than their
    // box) is asked only of one with text in its box.
    let filled = p.fill_mode().is_ok_and(|m| m != PdfPathFillMode::None);
    if filled {
        Rect::of(placed).map(|r| Shape {
            index: i,
            rect: r,
            image: false,
            stroke: false,
        })
    } else {
        stroke_band(placed).map(|r| Shape {
            index: i,
            rect: r,
            image: false,
            stroke: true,
        })
    }
}

impl Walk {
    /// A text object: a suspect when invisible, tiny, off the page, clipped away or faint;
    /// kept with its box and colour for the checks that compare objects.
    fn text(&mut self, placed: &Placed<'_>, i: usize, crop: &Rect) {
        let o = &placed.obj;
        let Some(t) = o.as_text_object() else {
            return;
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
            rect.and_then(|r| off_page_or_clipped(placed, r, crop))
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
            self.layer_like.insert(i);
        }
        let kind = kind.or_else(|| faint.then_some(crate::findings::FindingKind::LowContrast));
        if let Some(k) = kind {
            self.suspects.push((k, i));
        }
        if let Some(rect) = rect {
            let color = paint.map(rgb);
            self.texts.push(TextObj {
                index: i,
                rect,
                color,
                flagged: kind.is_some(),
            });
        }
    }
}

/// A text object's box `r` wholly outside the crop box, or cut away by the object's clip.
fn off_page_or_clipped(
    placed: &Placed<'_>,
    r: Rect,
    crop: &Rect,
) -> Option<crate::findings::FindingKind> {
    if crop.apart(&r) {
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
    (through <= 0.05 * r.area()).then_some(crate::findings::FindingKind::Clipped)
}

pub(super) fn rgb(c: PdfColor) -> (u8, u8, u8) {
    (c.red(), c.green(), c.blue())
}

/// Whether the object paints fully opaque: no transparency (alpha, soft mask, blend mode),
/// and for a path an opaque fill.
pub(super) fn opaque(o: &PdfPageObject<'_>) -> bool {
    if o.has_transparency() {
        return false;
    }
    match o.as_path_object() {
        Some(_) => o.fill_color().is_ok_and(|c| c.alpha() == 255),
        None => true,
    }
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
    r.finite()
}

/// Whether a path is one upright rectangle: four to six points, each at a corner of their
/// bounding box and each corner drawn, with no rotation or skew.
pub(super) fn upright_rectangle(p: &PdfPagePathObject<'_>, form: Option<Affine>) -> bool {
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
    corners_only(&points)
}

/// The box of an object's clip path (the intersection of its paths' boxes), if it has one.
pub(super) fn clip_box(placed: &Placed<'_>) -> Option<Rect> {
    let clip = placed.obj.get_clip_path()?;
    let mut out: Option<Rect> = None;
    for path in clip.iter() {
        let q = Rect::around(path.iter().map(|seg| (seg.x().value, seg.y().value)));
        if q.l > q.r || q.b > q.t {
            continue;
        }
        let q = match &placed.form {
            Some(m) => m.rect(q),
            None => q,
        };
        out = Some(match out {
            Some(o) => o.cut(&q),
            None => q,
        });
    }
    out
}
