//! Drawing a page (`GET /files/{id}/pages/{n}`): a PDF page through PDFium, an image
//! file's page through the image decoders, scaled within the render pixel budget and
//! encoded (`page_image` holds the request, the budget check and the encoder both use).

use image::DynamicImage;

use super::page_image::{encode, fits, PageImage, PageImageRequest};
use super::Input;
use crate::config::Limits;
use crate::detect::{Family, Format, ImageKind};
use crate::error::{ApiError, ErrorCode};

/// Draw the page (blocking: PDFium or an image decoder, then the encoder).
pub fn draw(input: &Input, req: &PageImageRequest, limits: &Limits) -> Result<PageImage, ApiError> {
    req.check(input.format)?;
    let cap = limits.max_render_pixels_per_page;
    let img = match input.format.family() {
        Family::Pdf => super::pdf::render_page(&input.path, req, cap)?,
        _ => scaled(image_page(input, req.page, limits)?, req.width, cap)?,
    };
    encode(img, req.format)
}

/// Page `n` of an image file: the image itself, or a TIFF's n-th page.
fn image_page(input: &Input, n: u64, limits: &Limits) -> Result<DynamicImage, ApiError> {
    if n == 1 {
        return super::image::decode(input, limits);
    }
    if input.format != Format::Image(ImageKind::Tiff) {
        return Err(ApiError::out_of_range(format!(
            "page {n} but an image has one page"
        )));
    }
    let mut pages = super::image::TiffPages::open(&input.path, limits)?;
    if pages.skip_to(n as usize) {
        if let Some((k, page)) = pages.next_page() {
            if k as u64 == n {
                return page.map(DynamicImage::ImageRgb8).map_err(|e| match e {
                    super::image::PageError::Skipped(why) => ApiError::new(ErrorCode::Corrupt, why),
                    super::image::PageError::TooLarge(e) => e,
                });
            }
        }
    }
    Err(ApiError::out_of_range(format!(
        "page {n} but the TIFF has {} pages",
        pages.last()
    )))
}

fn scaled(img: DynamicImage, width: Option<u32>, cap: u64) -> Result<DynamicImage, ApiError> {
    let (w, h) = (img.width(), img.height());
    let Some(tw) = width.filter(|&tw| tw != w) else {
        fits(w as u64, h as u64, cap, |f| {
            format!(
                "Ask for a width of at most {} pixels.",
                (w as f64 * f) as u64
            )
        })?;
        return Ok(img);
    };
    let th = ((h as f64 * tw as f64 / w as f64).round() as u32).max(1);
    fits(tw as u64, th as u64, cap, |f| {
        format!(
            "Ask for a width of at most {} pixels.",
            (tw as f64 * f) as u64
        )
    })?;
    Ok(img.resize_exact(tw, th, image::imageops::FilterType::Triangle))
}
