//! Boxes and matrices on a PDF page, plain arithmetic with no PDFium walking: `Rect` (a box
//! in the page's own space: area, overlap, holding, cutting), `Affine` (how a form
//! XObject's space maps onto the page), and whether a path's points draw the corners of an
//! upright rectangle; and a page's crop box (`crop_box`). Used by the hidden-text checks
//! (`hidden`), the scan layer's lines (`scan_layer`), the optional-content layers
//! (`layers`) and the frame blocks' boxes are given in (`paragraphs`).

use pdfium_render::prelude::*;

/// A box in the page's own (unrotated) space: left, bottom, right, top.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rect {
    pub(super) l: f32,
    pub(super) b: f32,
    pub(super) r: f32,
    pub(super) t: f32,
}

impl Rect {
    /// The box holding these points (left at `f32::MAX`, right at `f32::MIN` when there are
    /// none).
    pub(super) fn around(points: impl IntoIterator<Item = (f32, f32)>) -> Rect {
        let mut out = Rect {
            l: f32::MAX,
            b: f32::MAX,
            r: f32::MIN,
            t: f32::MIN,
        };
        for (x, y) in points {
            (out.l, out.b, out.r, out.t) = (out.l.min(x), out.b.min(y), out.r.max(x), out.t.max(y));
        }
        out
    }

    /// The box, when all its edges are finite numbers.
    pub(super) fn finite(self) -> Option<Rect> {
        let r = self;
        (r.l.is_finite() && r.b.is_finite() && r.r.is_finite() && r.t.is_finite()).then_some(r)
    }

    pub(super) fn area(&self) -> f32 {
        (self.r - self.l).max(0.0) * (self.t - self.b).max(0.0)
    }

    pub(super) fn height(&self) -> f32 {
        (self.t - self.b).abs()
    }

    /// Whether `inner` lies inside, give or take `slack` points.
    pub(super) fn holds(&self, inner: &Rect, slack: f32) -> bool {
        inner.l >= self.l - slack
            && inner.r <= self.r + slack
            && inner.b >= self.b - slack
            && inner.t <= self.t + slack
    }

    pub(super) fn overlap(&self, o: &Rect) -> f32 {
        let w = (self.r.min(o.r) - self.l.max(o.l)).max(0.0);
        let h = (self.t.min(o.t) - self.b.max(o.b)).max(0.0);
        w * h
    }

    /// Whether `o` lies wholly outside (touching edges count as inside).
    pub(super) fn apart(&self, o: &Rect) -> bool {
        o.r < self.l || o.l > self.r || o.t < self.b || o.b > self.t
    }

    /// The part of this box inside `by` (edges crossed when they do not meet).
    pub(super) fn cut(&self, by: &Rect) -> Rect {
        Rect {
            l: self.l.max(by.l),
            b: self.b.max(by.b),
            r: self.r.min(by.r),
            t: self.t.min(by.t),
        }
    }
}

/// How a form XObject's space maps onto the page (`[a b c d e f]`, as PDF writes it), the
/// forms it is drawn in composed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Affine(pub(super) [f32; 6]);

impl Affine {
    pub(super) fn of(m: PdfMatrix) -> Affine {
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
        Rect::around(corners)
    }

    /// How much it scales lengths (the square root of its area's scale).
    pub(super) fn scale(&self) -> f32 {
        let [a, b, c, d, ..] = self.0;
        (a * d - b * c).abs().sqrt()
    }

    /// Neither rotated nor skewed.
    pub(super) fn upright(&self) -> bool {
        let [a, b, c, d, ..] = self.0;
        b.abs() <= 1e-4 * a.abs().max(1e-6) && c.abs() <= 1e-4 * d.abs().max(1e-6)
    }
}

/// Whether a path's points draw an upright rectangle: each at a corner of their bounding
/// box, and each corner drawn (a right triangle has three).
pub(super) fn corners_only(points: &[(f32, f32)]) -> bool {
    let Rect { l, b, r, t } = Rect::around(points.iter().copied());
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

/// The crop box, else the media box, in the page's own (unrotated) space, as object bounds
/// are (`w` and `h` are the rotated page's width and height, for a page with neither).
pub(super) fn crop_box(page: &PdfPage<'_>, w: f32, h: f32) -> Rect {
    page.boundaries()
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
        })
}
