//! Pages as pictures, for people: a PDF page, or an image file's page (a TIFF's pages, any
//! other image's one), as PNG or WebP at a dpi or a width, within the render pixel budget
//! (`max_render_pixels_per_page`). A request past the budget is refused with the largest
//! size that fits, never quietly shrunk.

use image::{DynamicImage, RgbImage};
use serde::{Deserialize, Serialize};

use super::Input;
use crate::config::Limits;
use crate::detect::{Family, Format, ImageKind};
use crate::error::{ApiError, ErrorCode};

/// PNG (the default) or lossless WebP.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PictureFormat {
    #[default]
    Png,
    Webp,
}

impl PictureFormat {
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Webp => "image/webp",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Webp => "webp",
        }
    }
}

/// What to draw: checked (`check`) before it reaches a worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PageImageRequest {
    /// 1-based.
    pub page: u64,
    pub format: PictureFormat,
    /// PDF pages only; 96 when neither this nor `width` is given.
    pub dpi: Option<f32>,
    /// The picture's width in pixels (the height follows the page's shape).
    pub width: Option<u32>,
    pub password: Option<String>,
}

/// The default dpi of a PDF page: a screen's.
pub const DEFAULT_DPI: f32 = 96.0;
pub const MAX_DPI: f32 = 1200.0;
pub const MAX_WIDTH: u32 = 20_000;

impl PageImageRequest {
    /// Everything that can be refused without opening the file.
    pub fn check(&self, format: Format) -> Result<(), ApiError> {
        if !matches!(format.family(), Family::Pdf | Family::Image) {
            return Err(ApiError::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "page images are drawn of PDFs and images; this file is {}",
                    format.family().as_str()
                ),
            )
            .with_hint("Read its text with POST /read."));
        }
        if self.page == 0 {
            return Err(
                ApiError::new(ErrorCode::InvalidRange, "pages are numbered from 1")
                    .with_hint("Ask for /pages/1 for the first page."),
            );
        }
        match (self.dpi, self.width) {
            (Some(_), Some(_)) => Err(ApiError::invalid_option("give dpi or width, not both")),
            (Some(d), None) if !(d.is_finite() && d > 0.0 && d <= MAX_DPI) => Err(
                ApiError::invalid_option(format!("dpi must be above 0 and at most {MAX_DPI}")),
            ),
            (Some(_), None) if format.family() == Family::Image => Err(ApiError::new(
                ErrorCode::UnsupportedOption,
                "an image has pixels, not a dpi",
            )
            .with_hint("Ask for a `width` in pixels, or neither for the image's own size.")),
            (None, Some(w)) if w == 0 || w > MAX_WIDTH => Err(ApiError::invalid_option(format!(
                "width must be 1 to {MAX_WIDTH} pixels"
            ))),
            _ if self.password.is_some() && format.family() != Family::Pdf => Err(ApiError::new(
                ErrorCode::UnsupportedOption,
                "only PDFs take a password",
            )),
            _ => Ok(()),
        }
    }
}

/// A drawn page.
#[derive(Debug)]
pub struct PageImage {
    pub bytes: Vec<u8>,
    pub format: PictureFormat,
    pub width: u32,
    pub height: u32,
}

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

/// Within the budget, or refused saying what fits.
pub(crate) fn fits(
    w: u64,
    h: u64,
    cap: u64,
    larger: impl Fn(f64) -> String,
) -> Result<(), ApiError> {
    if w.saturating_mul(h) <= cap {
        return Ok(());
    }
    let shrink = (cap as f64 / (w as f64 * h as f64)).sqrt();
    Err(ApiError::new(
        ErrorCode::TooLarge,
        format!("a {w}×{h} picture is over the {cap}-pixel limit of a page image"),
    )
    .with_hint(larger(shrink)))
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

/// PNG or lossless WebP; pages are opaque, so RGB (a quarter fewer bytes than RGBA).
pub fn encode(img: DynamicImage, format: PictureFormat) -> Result<PageImage, ApiError> {
    let (width, height) = (img.width(), img.height());
    let keep_alpha = img.color().has_alpha() && !opaque(&img);
    let img = if keep_alpha {
        DynamicImage::ImageRgba8(img.into_rgba8())
    } else {
        DynamicImage::ImageRgb8(into_rgb(img))
    };
    let mut out = std::io::Cursor::new(Vec::new());
    match format {
        // zlib's balanced level with adaptive filters: half the bytes of the crate's default
        // (fast) for about a third more time, still far quicker than Pillow's (bench/render).
        PictureFormat::Png => {
            img.write_with_encoder(image::codecs::png::PngEncoder::new_with_quality(
                &mut out,
                image::codecs::png::CompressionType::Default,
                image::codecs::png::FilterType::Adaptive,
            ))
        }
        PictureFormat::Webp => img.write_to(&mut out, image::ImageFormat::WebP),
    }
    .map_err(ApiError::internal)?;
    Ok(PageImage {
        bytes: out.into_inner(),
        format,
        width,
        height,
    })
}

fn opaque(img: &DynamicImage) -> bool {
    match img {
        DynamicImage::ImageRgba8(i) => i.pixels().all(|p| p[3] == 255),
        _ => false,
    }
}

fn into_rgb(img: DynamicImage) -> RgbImage {
    match img {
        DynamicImage::ImageRgb8(i) => i,
        other => other.into_rgb8(),
    }
}
