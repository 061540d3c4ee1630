//! Pages as pixels: a page as PNG, a page for OCR within the pixel caps, PDFium's bitmap
//! as RGB, and the OCR of one page running while the next one renders.

use image::RgbImage;
use pdfium_render::prelude::*;

use super::Page;
use crate::error::{ApiError, ErrorCode};
use crate::ocr;

/// A page (1-based) rendered to PNG at `dpi`, through the process's one PDFium binding
/// (no pixel budget: for tests and tools that make OCR inputs).
pub fn render_page_png(path: &std::path::Path, page: u64, dpi: f32) -> Result<Vec<u8>, ApiError> {
    use crate::extract::page_image::{encode, PageImageRequest, PictureFormat};
    let req = PageImageRequest {
        page,
        format: PictureFormat::Png,
        dpi: Some(dpi),
        width: None,
        password: None,
    };
    Ok(encode(render_page(path, &req, u64::MAX)?, PictureFormat::Png)?.bytes)
}

/// A page as `req` asks (dpi or width), refused when over `cap` pixels.
pub fn render_page(
    path: &std::path::Path,
    req: &crate::extract::page_image::PageImageRequest,
    cap: u64,
) -> Result<image::DynamicImage, ApiError> {
    let pdfium = super::pdfium::pdfium()?;
    let doc = super::pdfium::open(pdfium, path, req.password.as_deref())?;
    let count = super::pdfium::PageCount::of(&doc);
    let pages = doc.pages();
    if !(1..=count.found).contains(&req.page) {
        let mut message = format!(
            "page {} is past the end: the document has {} page{}",
            req.page,
            count.found,
            if count.found == 1 { "" } else { "s" }
        );
        if let Some(why) = count.shortfall() {
            message = format!("{message}; {why}");
        }
        return Err(ApiError::out_of_range(message)
            .with_hint(format!("Ask for a page from 1 to {}.", count.found.max(1))));
    }
    let p = pages.get((req.page - 1) as i32).map_err(|e| {
        ApiError::new(
            ErrorCode::Corrupt,
            format!(
                "page {} cannot be read: the PDF's page tree is damaged there",
                req.page
            ),
        )
        .with_cause(e)
    })?;
    let (wpt, hpt) = (f64::from(p.width().value), f64::from(p.height().value));
    if !(wpt.is_finite() && hpt.is_finite() && wpt > 0.0 && hpt > 0.0) {
        return Err(ApiError::new(
            ErrorCode::Corrupt,
            "the page has no size to draw",
        ));
    }
    let dpi = match req.width {
        Some(w) => f64::from(w) * 72.0 / wpt,
        None => f64::from(req.dpi.unwrap_or(crate::extract::page_image::DEFAULT_DPI)),
    };
    let side = |pt: f64| (pt * dpi / 72.0).round().clamp(1.0, 1e9) as u64;
    let (w, h) = (req.width.map_or(side(wpt), u64::from), side(hpt));
    crate::extract::page_image::fits(w, h, cap, |f| match req.width {
        Some(_) => format!(
            "Ask for a width of at most {} pixels.",
            (w as f64 * f) as u64
        ),
        None => format!("Ask for a dpi of at most {}.", (dpi * f).floor().max(1.0)),
    })?;
    p.render_with_config(
        &PdfRenderConfig::new()
            .set_target_width(w as i32)
            .set_target_height(h as i32),
    )
    .and_then(|b| b.as_image())
    .map_err(|e| ApiError::new(ErrorCode::Corrupt, "the page cannot be rendered").with_cause(e))
}

/// The pixel size (and dpi) a page of `wpt` × `hpt` points renders at for OCR: 300 dpi, or
/// less so that width × height stays within `cap`. Computed in floating point, so a page
/// box of absurd size (a hostile MediaBox) cannot overflow past the cap; each side is at
/// least 1 and at most `cap` pixels.
fn ocr_render_size(wpt: f32, hpt: f32, cap: u64) -> (u32, u32, f64) {
    let clean = |v: f32| {
        if v.is_finite() {
            f64::from(v).max(1.0)
        } else {
            1.0
        }
    };
    let (wpt, hpt) = (clean(wpt), clean(hpt));
    let cap = cap.max(1) as f64;
    let mut scale = 300.0 / 72.0;
    let pixels = |s: f64| (wpt * s) * (hpt * s);
    if pixels(scale) > cap {
        scale *= (cap / pixels(scale)).sqrt();
    }
    let side = |pt: f64| (pt * scale).floor().clamp(1.0, cap.min(u32::MAX as f64)) as u32;
    let (mut w, mut h) = (side(wpt), side(hpt));
    // A sliver page (1 pt by 10⁹) keeps its long side within the cap too.
    while (w as u64).saturating_mul(h as u64) > cap as u64 {
        if w >= h {
            w = (w / 2).max(1);
        } else {
            h = (h / 2).max(1);
        }
    }
    (w, h, scale * 72.0)
}

/// Render a page for OCR at 300 dpi, or less within the read's pixel budget (then with a
/// warning saying so).
pub(super) fn render_for_ocr(
    page: &PdfPage<'_>,
    per_page: u64,
    budget: &mut u64,
) -> Result<(RgbImage, Option<String>), ApiError> {
    let cap = per_page.min((*budget).max(1_000_000));
    let (w, h, dpi) = ocr_render_size(page.width().value, page.height().value, cap);
    let warning = (dpi < 299.5)
        .then(|| format!("page rendered for OCR at {dpi:.0} dpi instead of 300 (pixel budget)"));
    let (w, h) = (w as i32, h as i32);
    *budget = budget.saturating_sub(w as u64 * h as u64);
    let bitmap = page
        .render_with_config(
            &PdfRenderConfig::new()
                .set_target_width(w)
                .set_maximum_height(h)
                .set_reverse_byte_order(true)
                .render_form_data(true),
        )
        .map_err(|e| {
            ApiError::new(ErrorCode::Corrupt, "the page cannot be rendered").with_cause(e)
        })?;
    Ok((bitmap_rgb(&bitmap)?, warning))
}

/// A page rendered with `set_reverse_byte_order(true)` as RGB. PDFium then writes RGBA
/// (its "BGRA" with red and blue swapped; rows possibly padded): turned into RGB in one
/// pass, where `as_image().to_rgb8()` made an RGBA copy and then cast it pixel by pixel
/// (tens of ms per 300 dpi page, on the thread that renders while the OCR lanes run).
fn bitmap_rgb(bitmap: &PdfBitmap) -> Result<RgbImage, ApiError> {
    let failed = |e: &dyn std::fmt::Display| {
        ApiError::new(ErrorCode::Corrupt, "the page cannot be rendered").with_cause(e)
    };
    let (w, h) = (
        bitmap.width().max(0) as usize,
        bitmap.height().max(0) as usize,
    );
    if matches!(
        bitmap.format(),
        Ok(PdfBitmapFormat::BGRA | PdfBitmapFormat::BGRx)
    ) && w > 0
        && h > 0
    {
        let raw = bitmap.as_raw_bytes();
        let stride = raw.len() / h;
        if stride >= w * 4 {
            let mut rgb = vec![0u8; w * h * 3];
            for (out, row) in rgb.chunks_exact_mut(w * 3).zip(raw.chunks_exact(stride)) {
                for (o, p) in out.chunks_exact_mut(3).zip(row.chunks_exact(4)) {
                    o.copy_from_slice(&p[..3]);
                }
            }
            return RgbImage::from_raw(w as u32, h as u32, rgb)
                .ok_or_else(|| failed(&"the bitmap has the wrong size"));
        }
    }
    Ok(ocr::into_rgb(bitmap.as_image().map_err(|e| failed(&e))?))
}

/// A page's OCR running while the next page renders.
pub(super) struct PendingOcr<'scope> {
    /// Its place in the pages read so far.
    pub(super) index: usize,
    pub(super) handle: std::thread::ScopedJoinHandle<'scope, Result<Vec<ocr::OcrLine>, ApiError>>,
}

impl PendingOcr<'_> {
    /// Wait for the page's OCR and put its text in place. `Ok(false)` when the deadline
    /// passed inside it: that page and any read after it are dropped, to be read with
    /// `next` (unless it was the first page, when the read is a timeout).
    pub(super) fn finish(
        self,
        pages: &mut Vec<Page>,
        fresh: &mut Vec<(u64, Vec<ocr::OcrLine>)>,
    ) -> Result<bool, ApiError> {
        let result = self.handle.join().unwrap_or_else(|_| {
            Err(ApiError::new(
                ErrorCode::ExtractionCrashed,
                "the OCR of a page panicked",
            ))
        });
        match result {
            Ok(lines) => {
                let page = &mut pages[self.index];
                fresh.push((page.number, lines.clone()));
                page.set_ocr(lines);
                Ok(true)
            }
            Err(e) if e.code == ErrorCode::Timeout && self.index > 0 => {
                pages.truncate(self.index);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::pdf::pdfium::pdfium;

    #[test]
    fn ocr_render_size_stays_within_the_cap() {
        // A4 fits: 300 dpi.
        let (w, h, dpi) = ocr_render_size(595.0, 842.0, 9_000_000);
        assert_eq!((w, h), (2479, 3508));
        assert!((dpi - 300.0).abs() < 0.01);
        // Hostile page boxes: huge, infinite, NaN, slivers. Before, width × height was
        // multiplied as saturated integers, which overflowed past the cap.
        for (wpt, hpt) in [
            (1e20, 1e20),
            (f32::MAX, f32::MAX),
            (f32::INFINITY, 10.0),
            (f32::NAN, f32::NAN),
            (1.0, 1e9),
            (1e9, 0.5),
            (-50.0, 842.0),
        ] {
            let (w, h, _) = ocr_render_size(wpt, hpt, 9_000_000);
            assert!(w >= 1 && h >= 1, "{wpt} x {hpt}");
            assert!(
                w as u64 * h as u64 <= 9_000_000,
                "{wpt} x {hpt} -> {w} x {h}"
            );
        }
    }

    /// A rendered page comes out as the RGB `as_image().to_rgb8()` makes, channels in
    /// place: page 1 of the corpus's testPDFVarious.pdf has coloured text and images.
    #[test]
    fn rendered_pages_keep_their_colours() {
        let path = std::env::var_os("DOCREADER_CORPUS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
            })
            .join("pdf/testPDFVarious.pdf");
        let pdfium = pdfium().expect("PDFium (make native)");
        let doc = pdfium.load_pdf_from_file(&path, None).expect("corpus PDF");
        let page = doc.pages().get(0).expect("page 1");
        // An odd width: rows of a BGRA bitmap may be padded.
        let bitmap = page
            .render_with_config(
                &PdfRenderConfig::new()
                    .set_target_width(601)
                    .set_reverse_byte_order(true),
            )
            .expect("rendered");
        let fast = bitmap_rgb(&bitmap).expect("converted");
        let slow = bitmap.as_image().expect("image").to_rgb8();
        assert_eq!(fast.dimensions(), slow.dimensions());
        let coloured = slow.pixels().filter(|p| p[0].abs_diff(p[2]) > 40).count();
        assert!(
            coloured > 100,
            "page 1 should have colour, found {coloured} pixels"
        );
        assert!(fast == slow, "the fast conversion differs from image's");
    }
}

/// Renderings are at most this many pixels a side, whatever their pixel cap.
const MAX_SIDE: f32 = 16_384.0;

/// A bitmap's size for a page of `w` × `h` points: `scale` pixels a point at most, the
/// pixels capped, and each side capped too (a page 10⁸ points wide and a thousandth high
/// passes a pixel cap taken on the product alone).
pub(super) fn bitmap_size(w: f32, h: f32, scale: f32, max_pixels: f32) -> Option<(i32, i32)> {
    if !(w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0) {
        return None;
    }
    let scale = scale
        .min((max_pixels / (w * h)).sqrt())
        .min(MAX_SIDE / w)
        .min(MAX_SIDE / h);
    let (pw, ph) = (
        ((w * scale).round()).max(1.0),
        ((h * scale).round()).max(1.0),
    );
    (pw * ph <= max_pixels.max(1.0) && pw <= MAX_SIDE && ph <= MAX_SIDE)
        .then_some((pw as i32, ph as i32))
}

/// A page drawn for the hidden-text checks: RGBA rows of `width` pixels.
pub(super) struct Drawing {
    config: PdfRenderConfig,
    pub(super) width: i64,
    pub(super) height: i64,
    pub(super) pixels: Vec<u8>,
}

impl Drawing {
    /// The page at `scale` pixels a point at most, within `max_pixels` (`bitmap_size`).
    pub(super) fn of(page: &PdfPage<'_>, scale: f32, max_pixels: f32) -> Option<Drawing> {
        let (pw, ph) = bitmap_size(page.width().value, page.height().value, scale, max_pixels)?;
        let config = PdfRenderConfig::new()
            .set_target_width(pw)
            .set_target_height(ph);
        let bitmap = page.render_with_config(&config).ok()?;
        let (width, height) = (i64::from(bitmap.width()), i64::from(bitmap.height()));
        let pixels = bitmap.as_rgba_bytes();
        (pixels.len() >= (width * height * 4) as usize).then_some(Drawing {
            config,
            width,
            height,
            pixels,
        })
    }

    /// The pixels (x0, y0, x1, y1) of a box in page points (left, bottom, right, top),
    /// clamped to the drawing; None when a corner cannot be placed or the box is under
    /// `min` pixels a side.
    pub(super) fn pixel_box(
        &self,
        page: &PdfPage<'_>,
        [l, b, r, t]: [f32; 4],
        min: i64,
    ) -> Option<(i64, i64, i64, i64)> {
        let corner = |x: f32, y: f32| {
            page.points_to_pixels(PdfPoints::new(x), PdfPoints::new(y), &self.config)
                .ok()
        };
        let (p, q) = (corner(l, b)?, corner(r, t)?);
        let (x0, x1) = (
            i64::from(p.0.min(q.0)).clamp(0, self.width),
            i64::from(p.0.max(q.0)).clamp(0, self.width),
        );
        let (y0, y1) = (
            i64::from(p.1.min(q.1)).clamp(0, self.height),
            i64::from(p.1.max(q.1)).clamp(0, self.height),
        );
        (x1 - x0 >= min && y1 - y0 >= min).then_some((x0, y0, x1, y1))
    }

    /// The RGB of the pixel at (x, y).
    pub(super) fn rgb(&self, x: i64, y: i64) -> (u8, u8, u8) {
        let p = ((y * self.width + x) * 4) as usize;
        (self.pixels[p], self.pixels[p + 1], self.pixels[p + 2])
    }
}
