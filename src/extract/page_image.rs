//! Pages as pictures, for people: a PDF page, or an image file's page (a TIFF's pages, any
//! other image's one), as PNG or WebP at a dpi or a width, within the render pixel budget
//! (`max_render_pixels_per_page`). A request past the budget is refused with the largest
//! size that fits, never quietly shrunk.

use image::{DynamicImage, RgbImage};
use serde::{Deserialize, Serialize};

use crate::detect::{Family, Format};
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
