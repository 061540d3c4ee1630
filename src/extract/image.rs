//! Images (png, jpeg, gif, bmp, webp, tiff) are read by OCR only: decoded within memory
//! limits, turned by their EXIF orientation, scaled down past a pixel budget, recognised.
//! No text found is an empty result with a `note`, never invented text.

use image::{DynamicImage, ImageDecoder, ImageReader, RgbImage};

use super::{Extractor, Input};
use crate::config::Limits;
use crate::envelope::{close_truncated, whole_lines_within, Extraction, Next};
use crate::error::{ApiError, ErrorCode};
use crate::ocr::{self, OcrChoice, OcrLine};
use crate::options::Options;
use crate::report::{Boxes, OcrQuality, Report};

pub struct ImageExtractor;

pub(crate) fn decode(input: &Input, caps: &Limits) -> Result<DynamicImage, ApiError> {
    let bad = |e: &dyn std::fmt::Display| {
        ApiError::new(
            ErrorCode::Corrupt,
            "the image cannot be decoded: it is damaged or not really that format",
        )
        .with_cause(e)
    };
    let mut reader = ImageReader::open(&input.path)
        .map_err(ApiError::internal)?
        .with_guessed_format()
        .map_err(ApiError::internal)?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(caps.max_image_side);
    limits.max_image_height = Some(caps.max_image_side);
    limits.max_alloc = Some(caps.max_image_decode_bytes);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(|e| match e {
        image::ImageError::Limits(_) => {
            ApiError::new(ErrorCode::TooLarge, "the image is too large to decode").with_cause(e)
        }
        other => bad(&other),
    })?;
    // What decoding will cost, from the header, before a byte is decoded: the pixels, and
    // the bytes at the depth the decoder expands to (a 1-bit PNG becomes a byte a pixel).
    let (w, h) = decoder.dimensions();
    check_page(1, w, h, decoder.color_type().bytes_per_pixel() as u64, caps)?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut img = DynamicImage::from_decoder(decoder).map_err(|e| bad(&e))?;
    img.apply_orientation(orientation);
    Ok(img)
}

/// One page's decoding within the caps: at most `max_image_pixels` pixels, and at most
/// `max_image_decode_bytes` bytes at `bytes_per_pixel` (the decoder's output) — refused as
/// `too_large` naming the page and the cap, before it is decoded.
pub(crate) fn check_page(
    page: usize,
    w: u32,
    h: u32,
    bytes_per_pixel: u64,
    caps: &Limits,
) -> Result<(), ApiError> {
    let pixels = w as u64 * h as u64;
    if pixels > caps.max_image_pixels {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!(
                "page {page} of the image is {w}×{h} ({pixels} pixels), over the {} pixels one page may have to be decoded",
                caps.max_image_pixels
            ),
        )
        .with_hint("Scale the image down (300 dpi is plenty for OCR), or ask the operator to raise DOCREADER_MAX_IMAGE_PIXELS."));
    }
    // At least three bytes a pixel: a grey or 1-bit page is made RGB for recognition.
    let bytes = pixels.saturating_mul(bytes_per_pixel.max(3));
    if bytes > caps.max_image_decode_bytes {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!(
                "page {page} of the image ({w}×{h}) would take {bytes} bytes decoded, over the {}-byte decode cap",
                caps.max_image_decode_bytes
            ),
        )
        .with_hint("Scale the image down, or ask the operator to raise DOCREADER_MAX_IMAGE_DECODE_BYTES."));
    }
    Ok(())
}

/// The read's budget of decoded pixels across a TIFF's pages, from the pages' headers (no
/// page decoded): a 500-page TIFF of 16000×16000 pages costs what its pixels cost and is
/// refused before the first, naming the page where the budget runs out.
pub(crate) fn check_pages_budget(path: &std::path::Path, caps: &Limits) -> Result<(), ApiError> {
    let Ok(f) = std::fs::File::open(path) else {
        return Ok(());
    };
    let Ok(mut dec) = tiff::decoder::Decoder::new(std::io::BufReader::new(f)) else {
        return Ok(());
    };
    let mut total = 0u64;
    let mut page = 1usize;
    loop {
        if let Ok((w, h)) = dec.dimensions() {
            check_page(page, w, h, 1, caps)?;
            total = total.saturating_add(w as u64 * h as u64);
            if total > caps.max_image_pixels_per_read {
                return Err(ApiError::new(
                    ErrorCode::TooLarge,
                    format!(
                        "decoding the image's pages up to page {page} would pass the {} decoded pixels one read may use",
                        caps.max_image_pixels_per_read
                    ),
                )
                .with_hint("Split the TIFF or scale its pages down, or ask the operator to raise DOCREADER_MAX_IMAGE_PIXELS_PER_READ."));
            }
        }
        if page >= caps.max_tiff_pages || !dec.more_images() || dec.next_image().is_err() {
            return Ok(());
        }
        page += 1;
    }
}

/// OCR an image within the pixel budget; returns the lines (in the image's own pixel
/// coordinates) and a warning when it had to be scaled down. A larger image is scaled in
/// its own colour type (a 1-bit scan stays one byte a pixel) with an integer filter that
/// allocates only the result, before it becomes RGB: a 50 KB PNG of 15000×15000 1-bit
/// pixels once took a worker past 2 GB through an RGB copy and a float resize buffer.
/// With `layout`, each line's role from the page's layout (`ocr::page_layout`).
pub fn ocr_image(
    engine: &dyn ocr::OcrEngine,
    img: DynamicImage,
    budget: u64,
    deadline: &super::Deadline,
    layout: bool,
) -> Result<(Vec<OcrLine>, Option<String>), ApiError> {
    let laid = |rgb: &image::RgbImage, lines: Vec<OcrLine>| {
        if layout {
            ocr::page_layout::with_roles(rgb, lines)
        } else {
            lines
        }
    };
    let (w, h) = (img.width(), img.height());
    let pixels = w as u64 * h as u64;
    if pixels <= budget {
        let rgb = ocr::into_rgb(img);
        let lines = engine.recognize_until(&rgb, deadline)?;
        return Ok((laid(&rgb, lines), None));
    }
    let f = (budget as f64 / pixels as f64).sqrt();
    let (sw, sh) = (
        ((w as f64 * f) as u32).max(1),
        ((h as f64 * f) as u32).max(1),
    );
    let small = ocr::into_rgb(img.thumbnail_exact(sw, sh));
    drop(img);
    let lines = engine.recognize_until(&small, deadline)?;
    let mut lines = laid(&small, lines);
    for l in &mut lines {
        for v in l.bbox.iter_mut() {
            *v = (*v as f64 / f).round() as u32;
        }
    }
    Ok((
        lines,
        Some(format!(
            "the image ({w}×{h}) was scaled to {sw}×{sh} for OCR"
        )),
    ))
}

/// The pages of a TIFF after the first (the `image` crate decodes only the first), decoded
/// one at a time as RGB, so that a 500-page TIFF holds one page in memory, not all of them.
/// Pages in colour types this does not handle are skipped, and said so.
pub(crate) struct TiffPages {
    dec: Option<tiff::decoder::Decoder<std::io::BufReader<std::fs::File>>>,
    /// The 1-based number of the page last decoded.
    n: usize,
    /// Pages read at most.
    max_pages: usize,
    caps: Limits,
}

/// Why a TIFF page gave no image.
pub(crate) enum PageError {
    /// Damaged or in a colour type OCR does not take: said in a warning, the rest read.
    Skipped(String),
    /// Over a decoding cap: the read's error.
    TooLarge(ApiError),
}

impl TiffPages {
    pub(crate) fn open(path: &std::path::Path, caps: &Limits) -> Result<Self, ApiError> {
        let f = std::io::BufReader::new(std::fs::File::open(path).map_err(ApiError::internal)?);
        Ok(Self {
            dec: tiff::decoder::Decoder::new(f).ok(),
            n: 1,
            max_pages: caps.max_tiff_pages,
            caps: caps.clone(),
        })
    }

    /// Move on to page `n` without decoding the pages before it (a drawing of page 500
    /// decodes one page, not 499 first); false when the TIFF has fewer pages.
    pub(crate) fn skip_to(&mut self, n: usize) -> bool {
        while self.n + 1 < n {
            let Some(dec) = self.dec.as_mut() else {
                return false;
            };
            if !dec.more_images() || self.n >= self.max_pages || dec.next_image().is_err() {
                self.dec = None;
                return false;
            }
            self.n += 1;
        }
        true
    }

    /// The page number last reached.
    pub(crate) fn last(&self) -> usize {
        self.n
    }

    /// The next page: its number and its image, or why it was skipped (or is too large to
    /// decode); `None` after the last page (or `max_pages`).
    pub(crate) fn next_page(&mut self) -> Option<(usize, Result<RgbImage, PageError>)> {
        use tiff::decoder::DecodingResult;
        use tiff::ColorType;
        let dec = self.dec.as_mut()?;
        if !dec.more_images() || self.n >= self.max_pages || dec.next_image().is_err() {
            self.dec = None;
            return None;
        }
        self.n += 1;
        let n = self.n;
        if let (Ok((w, h)), Ok(ct)) = (dec.dimensions(), dec.colortype()) {
            // The samples as decoded plus the RGB copy made of them.
            let per_pixel = ct.num_samples() as u64 * ct.bit_depth().div_ceil(8) as u64 + 3;
            if let Err(e) = check_page(n, w, h, per_pixel, &self.caps) {
                self.dec = None;
                return Some((n, Err(PageError::TooLarge(e))));
            }
        }
        let (Ok((w, h)), Ok(ct), Ok(data)) = (dec.dimensions(), dec.colortype(), dec.read_image())
        else {
            return Some((
                n,
                Err(PageError::Skipped(format!(
                    "TIFF page {n} cannot be decoded; it was skipped"
                ))),
            ));
        };
        let px = (w as usize) * (h as usize);
        let rgb: Option<Vec<u8>> = match (ct, data) {
            (ColorType::RGB(8), DecodingResult::U8(d)) if d.len() >= px * 3 => {
                Some(d[..px * 3].to_vec())
            }
            (ColorType::RGBA(8), DecodingResult::U8(d)) if d.len() >= px * 4 => Some(
                d.chunks_exact(4)
                    .take(px)
                    .flat_map(|p| [p[0], p[1], p[2]])
                    .collect(),
            ),
            (ColorType::Gray(8), DecodingResult::U8(d)) if d.len() >= px => {
                Some(d.iter().take(px).flat_map(|v| [*v, *v, *v]).collect())
            }
            (ColorType::Gray(16), DecodingResult::U16(d)) if d.len() >= px => Some(
                d.iter()
                    .take(px)
                    .flat_map(|v| {
                        let b = (v >> 8) as u8;
                        [b, b, b]
                    })
                    .collect(),
            ),
            _ => None,
        };
        Some((
            n,
            rgb.and_then(|buf| RgbImage::from_raw(w, h, buf))
                .ok_or_else(|| {
                    PageError::Skipped(format!(
                        "TIFF page {n} has a colour type OCR does not handle; it was skipped"
                    ))
                }),
        ))
    }
}

impl Extractor for ImageExtractor {
    fn extract(
        &self,
        input: &Input,
        req: &Options,
        limits: &Limits,
    ) -> Result<Extraction, ApiError> {
        let max_chars = req.max_chars;
        let choice = OcrChoice::parse(req.ocr.map(|o| o.as_str()))?;
        if choice == OcrChoice::Off {
            return Err(
                ocr::no_engine("images are read by OCR only, ocr is \"none\",")
                    .with_hint("Leave out `ocr` (or use \"auto\") to read the image."),
            );
        }
        let engine = ocr::engine_for(req.ocr.map(|o| o.as_str()), req.ocr_lang.as_deref())?
            .ok_or_else(|| {
                ocr::no_engine(&format!(
                    "images ({}) are read by OCR,",
                    input.format.mime()
                ))
            })?;
        let engine = engine.as_ref();
        // The models load while the image decodes (a CLI read loads them for every file).
        engine.warm_up();
        let t0 = std::time::Instant::now();
        let tiff = matches!(
            input.format,
            crate::detect::Format::Image(crate::detect::ImageKind::Tiff)
        );
        if tiff {
            check_pages_budget(&input.path, limits)?;
        }
        let img = decode(input, limits)?;
        let (w, h) = (img.width(), img.height());
        tracing::debug!(
            width = w,
            height = h,
            decode_ms = t0.elapsed().as_millis() as u64,
            "image decoded"
        );
        // The page's layout only where the output has structure (Markdown, json, chunks).
        let layout = req.structured();
        let (mut lines, warning) =
            ocr_image(engine, img, limits.max_ocr_pixels, &input.deadline, layout)?;
        let mut warnings: Vec<String> = warning.into_iter().collect();
        // Markdown: the lines as they are, rows read in parts as pipe tables.
        // Running headers and footers the page layout found are left out of Markdown
        // unless kept.
        let furniture_left_out = std::cell::Cell::new(false);
        let as_text = |l: &[ocr::OcrLine]| {
            if req.markdown() {
                let (text, left_out) = crate::extract::markdown::ocr_lines(l, req.keep_furniture());
                furniture_left_out.set(furniture_left_out.get() | left_out);
                text
            } else {
                ocr::lines_to_text(l)
            }
        };
        let mut text = as_text(&lines);
        let mut pages = 1;
        let mut units = Vec::new();
        // With `output: "json"`: each page's lines as blocks.
        let mut page_blocks: Vec<(u64, Vec<crate::model::Block>)> = Vec::new();
        if req.json() {
            page_blocks.push((1, ocr::blocks(&lines)));
        }
        if tiff {
            // One page decoded, recognised and dropped at a time.
            let mut more = TiffPages::open(&input.path, limits)?;
            let mut decoded = 0usize;
            while let Some((number, page)) = more.next_page() {
                let page = match page {
                    Ok(p) => p,
                    Err(PageError::Skipped(warning)) => {
                        warnings.push(warning);
                        continue;
                    }
                    Err(PageError::TooLarge(e)) => return Err(e),
                };
                if decoded == 0 {
                    let marker = "--- Page 1 ---\n";
                    text.insert_str(0, marker);
                    units.push(page_span(1, 0, marker.len(), text.len()));
                }
                decoded += 1;
                pages += 1;
                let (l, w3) = ocr_image(
                    engine,
                    DynamicImage::ImageRgb8(page),
                    limits.max_ocr_pixels,
                    &input.deadline,
                    layout,
                )?;
                warnings.extend(w3);
                // Numbered as the TIFF numbers its pages (a skipped page keeps its number).
                let (head, marker) = (text.len(), format!("--- Page {number} ---\n"));
                text.push_str(&marker);
                text.push_str(&as_text(&l));
                units.push(page_span(number as u64, head, marker.len(), text.len()));
                if req.json() {
                    page_blocks.push((number as u64, ocr::blocks(&l)));
                }
                lines.extend(l);
            }
        }
        if layout && !ocr::page_layout::installed() {
            warnings.push(ocr::page_layout::MISSING.to_string());
        }
        if furniture_left_out.get() {
            warnings.push(
                "running headers and footers the page layout found were left out of the Markdown; furniture: \"keep\" keeps them"
                    .to_string(),
            );
        }
        let chars = text.chars().filter(|c| !c.is_whitespace()).count();
        let confidence = ocr::mean_confidence(&lines);
        let mut extra = Report {
            width: Some(w),
            height: Some(h),
            ocr_engine: Some(engine.name().to_string()),
            ..Default::default()
        };
        let unsure = ocr::unsure_lines(&lines);
        let unread = ocr::unread_lines(&lines, None);
        let degraded = lines.is_empty() || unsure.is_some();
        let flag = if unread.is_some() {
            "unsupported_script"
        } else if degraded {
            "degraded"
        } else {
            "good"
        };
        extra.ocr_quality = Some(OcrQuality {
            quality_flag: flag.to_string(),
            ocr_pages: pages as u64,
            text_density: (chars / pages) as f64,
            confidence,
            reread_lines: ocr::reread_lines(&lines),
            unsure_lines: unsure,
            other_script_lines: ocr::other_script_lines(&lines),
            unsupported_script: unread,
        });
        if req.include_boxes == Some(true) {
            extra.boxes = Some(Boxes::Lines(lines.clone()));
        }
        let mut ex = Extraction {
            char_count: text.chars().count() as u64,
            report: extra,
            ..Default::default()
        };
        ex.warnings.extend(warnings);
        if req.json() {
            // One page: the document's unit; pages of a TIFF: each its own.
            let paged = !units.is_empty();
            ex.document = Some(crate::model::Document {
                units: page_blocks
                    .into_iter()
                    .map(|(n, blocks)| {
                        let unit = if paged {
                            crate::model::Unit::numbered(crate::model::UnitKind::Page, n)
                        } else {
                            crate::model::Unit::document()
                        };
                        crate::model::UnitBlocks::new(unit, blocks)
                    })
                    .collect(),
            });
        }
        if lines.is_empty() {
            ex.report.note = Some("OCR found no text in the image".into());
            return Ok(ex);
        }
        if text.chars().count() > max_chars {
            let kept = whole_lines_within(&text, max_chars);
            ex.units = crate::model::clip(units, kept.len());
            ex.text = close_truncated(kept.to_string(), ex.char_count);
            ex.truncated = true;
            let mut next = Next::default();
            next.max_chars = Some(ex.char_count as u64);
            ex.next = Some(next);
            ex.warnings
                .push("the image holds more text than max_chars; `next` reads it whole".into());
        } else {
            ex.units = units;
            ex.text = text;
        }
        Ok(ex)
    }
}

/// Where page `n` of a multi-page image stands in the text.
fn page_span(n: u64, head: usize, marker: usize, end: usize) -> crate::model::Span {
    crate::model::Span {
        unit: crate::model::Unit::numbered(crate::model::UnitKind::Page, n),
        head,
        body: head + marker,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TIFF pages come one at a time, each its own image (the corpus's 10-page TIFF).
    #[test]
    fn tiff_pages_are_decoded_one_at_a_time() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus/image/testTIFF_multipage.tif");
        let mut pages = TiffPages::open(&path, &Limits::default()).unwrap();
        let mut seen = Vec::new();
        while let Some((n, page)) = pages.next_page() {
            let Ok(img) = page else {
                panic!("page {n} not decoded")
            };
            assert!(img.width() > 0 && img.height() > 0);
            seen.push(n);
        }
        assert!(!seen.is_empty());
        assert_eq!(seen, (2..2 + seen.len()).collect::<Vec<_>>());
        assert!(pages.next_page().is_none());
        // Straight to the last page, the ones before it not decoded.
        let last = *seen.last().unwrap();
        let mut pages = TiffPages::open(&path, &Limits::default()).unwrap();
        assert!(pages.skip_to(last));
        assert_eq!(pages.next_page().map(|(n, _)| n), Some(last));
    }
}
