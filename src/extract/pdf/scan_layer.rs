//! Whether a scan's invisible text layer is what its image shows (issue #41): invisible
//! (or fully transparent) text over an image is an OCR program's layer only where the
//! image shows that text. Otherwise it is `invisible_text_not_in_image`.
//!
//! The layer's text objects are put into lines. The page is rendered once, at about 32
//! pixels per line, and each line's box is cut out of the rendering:
//! - a box with no ink in it (no text under the line: a blank margin or sky) does not show
//!   it — every line is looked at this way, cheaply;
//! - a box with ink is read by the recognition model alone (one run, no detection), and
//!   the reading compared with the layer's text: below `SAME` normalised similarity the
//!   image shows something else. A recognition run costs about a tenth of a second, so not
//!   every line is read: on each page every instruction-like line (`findings`'s phrases),
//!   then the `SAMPLE` longest others — 64 instruction-like and 16 other lines in a read
//!   at most (pages read after the samples are spent keep the ink check: a 500-page scan
//!   pays a rendering a page, not 1,000 recognitions). Only with
//!   the built-in engine installed and OCR not turned off (`ocr: "none"`).

use std::sync::atomic::{AtomicUsize, Ordering};

use image::RgbImage;
use pdfium_render::prelude::*;

use super::hidden::Rect;

/// Normalised similarity (letters and digits, case folded) from which a reading shows the
/// layer's line.
const SAME: f32 = 0.8;
/// Lines read on a page besides the instruction-like ones; such sampled lines read in a
/// read at most, and instruction-like lines read in a read at most (apart: samples on the
/// first pages never use up what a later page's instruction needs).
const SAMPLE: usize = 2;
const SAMPLES_PER_READ: usize = 16;
const INSTRUCTIONS_PER_READ: usize = 64;
/// The rendering: pixels for a line's height, and at most this many pixels a page.
const LINE_PX: f32 = 24.0;
/// Pixels for a line's height when no line of the page is to be read (the ink check
/// alone: a quarter of the pixels).
const INK_LINE_PX: f32 = 12.0;
const MAX_PIXELS: f32 = 8.0e6;
/// A pixel this much darker (0–255 luminance) than the box's paper is ink; a box with
/// less than `MIN_INK` of its pixels in ink shows no text.
const INK_STEP: u8 = 60;
const MIN_INK: f32 = 0.01;

/// What a read allows the check: recognition or not, and the runs left.
pub(super) struct LayerCheck {
    recognise: bool,
    samples: AtomicUsize,
    instructions: AtomicUsize,
}

impl LayerCheck {
    /// `recognise`: OCR is not turned off for the read.
    pub(super) fn new(recognise: bool) -> Self {
        LayerCheck {
            recognise,
            samples: AtomicUsize::new(SAMPLES_PER_READ),
            instructions: AtomicUsize::new(INSTRUCTIONS_PER_READ),
        }
    }

    /// One recognition run of the read's allowance, for an instruction-like line or not.
    fn take(&self, instruction: bool) -> bool {
        let pool = if instruction {
            &self.instructions
        } else {
            &self.samples
        };
        self.recognise
            && pool
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
    }
}

/// One line of the layer: its text objects, box and text.
pub(super) struct Line {
    objects: Vec<usize>,
    rect: Rect,
    text: String,
}

/// The layer's objects (index, box on the page) put into lines, top to bottom: objects
/// whose vertical middles lie within half a height of each other, left to right.
pub(super) fn lines(
    objects: &[(usize, Rect)],
    text_of: &dyn Fn(usize) -> Option<String>,
) -> Vec<Line> {
    let mid = |r: &Rect| (r.b + r.t) / 2.0;
    let mut sorted: Vec<(usize, Rect)> = objects.to_vec();
    sorted.sort_by(|a, b| {
        mid(&b.1)
            .total_cmp(&mid(&a.1))
            .then(a.1.l.total_cmp(&b.1.l))
    });
    let mut out: Vec<(Vec<(usize, Rect)>, Rect)> = Vec::new();
    for (i, r) in sorted {
        match out.last_mut() {
            Some((members, u))
                if (mid(u) - mid(&r)).abs() <= 0.5 * u.height().min(r.height()).max(0.5) =>
            {
                members.push((i, r));
                *u = Rect {
                    l: u.l.min(r.l),
                    b: u.b.min(r.b),
                    r: u.r.max(r.r),
                    t: u.t.max(r.t),
                };
            }
            _ => out.push((vec![(i, r)], r)),
        }
    }
    out.into_iter()
        .map(|(mut members, rect)| {
            members.sort_by(|a, b| a.1.l.total_cmp(&b.1.l));
            let text = members
                .iter()
                .filter_map(|(i, _)| text_of(*i))
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            Line {
                objects: members.into_iter().map(|(i, _)| i).collect(),
                rect,
                text,
            }
        })
        .collect()
}

/// The lines the image does not show, as their objects.
pub(super) fn not_in_image(
    page: &PdfPage<'_>,
    lines: &[Line],
    check: &LayerCheck,
) -> Vec<Vec<usize>> {
    // A stray letter or two (a figure's label) hides nothing worth a rendering.
    let letters = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count();
    let lines: Vec<&Line> = lines.iter().filter(|l| letters(&l.text) >= 4).collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let (w, h) = (page.width().value, page.height().value);
    if !(w.is_finite() && h.is_finite() && w > 0.0 && h > 0.0) {
        return Vec::new();
    }
    let engine = crate::ocr::ppocr::engine();
    let can_read = check.recognise && crate::ocr::OcrEngine::is_available(engine);
    // Only the ink check (nothing left to read with): a coarser rendering does.
    let reading = can_read
        && (check.samples.load(Ordering::Relaxed) > 0
            || lines
                .iter()
                .any(|l| crate::findings::instruction_like(&l.text)));
    let line_px = if reading { LINE_PX } else { INK_LINE_PX };
    let mut heights: Vec<f32> = lines.iter().map(|l| l.rect.height().max(1.0)).collect();
    heights.sort_by(f32::total_cmp);
    let scale = (line_px / heights[heights.len() / 2])
        .clamp(0.5, 4.0)
        .min((MAX_PIXELS / (w * h)).sqrt());
    let config = PdfRenderConfig::new()
        .set_target_width(((w * scale).round() as i32).max(1))
        .set_target_height(((h * scale).round() as i32).max(1));
    let Ok(bitmap) = page.render_with_config(&config) else {
        return Vec::new();
    };
    let (bw, bh) = (bitmap.width() as i64, bitmap.height() as i64);
    let pixels = bitmap.as_rgba_bytes();
    if pixels.len() < (bw * bh * 4) as usize {
        return Vec::new();
    }
    let cut = |r: &Rect| -> Option<RgbImage> {
        let (dx, dy) = (0.3 * r.height(), 0.12 * r.height());
        let corner = |x: f32, y: f32| {
            page.points_to_pixels(PdfPoints::new(x), PdfPoints::new(y), &config)
                .ok()
        };
        let (a, b) = (corner(r.l - dx, r.b - dy)?, corner(r.r + dx, r.t + dy)?);
        let (x0, x1) = (
            i64::from(a.0.min(b.0)).clamp(0, bw),
            i64::from(a.0.max(b.0)).clamp(0, bw),
        );
        let (y0, y1) = (
            i64::from(a.1.min(b.1)).clamp(0, bh),
            i64::from(a.1.max(b.1)).clamp(0, bh),
        );
        if x1 - x0 < 4 || y1 - y0 < 4 {
            return None;
        }
        let mut img = RgbImage::new((x1 - x0) as u32, (y1 - y0) as u32);
        for (y, row) in (y0..y1).zip(0u32..) {
            for (x, col) in (x0..x1).zip(0u32..) {
                let p = ((y * bw + x) * 4) as usize;
                img.put_pixel(
                    col,
                    row,
                    image::Rgb([pixels[p], pixels[p + 1], pixels[p + 2]]),
                );
            }
        }
        Some(img)
    };
    // Instruction-like lines first, then the longest.
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&k| {
        (
            !crate::findings::instruction_like(&lines[k].text),
            std::cmp::Reverse(lines[k].text.len()),
        )
    });
    let mut sampled = 0;
    let mut out = Vec::new();
    let mut crops: Vec<Option<RgbImage>> = lines.iter().map(|l| cut(&l.rect)).collect();
    for (k, crop) in crops.iter().enumerate() {
        if crop.as_ref().is_some_and(|c| !has_ink(c)) {
            out.push(lines[k].objects.clone());
        }
    }
    if !reading {
        return out;
    }
    for k in order {
        let Some(crop) = crops[k].take() else {
            continue;
        };
        // A line that does not lie across its crop (text set at an angle on the page as
        // shown) is not read: the model reads horizontal lines.
        if !has_ink(&crop) || crop.height() > crop.width() {
            continue;
        }
        let instruction = crate::findings::instruction_like(&lines[k].text);
        if !instruction {
            if sampled >= SAMPLE {
                continue;
            }
            sampled += 1;
        }
        if !check.take(instruction) {
            continue;
        }
        let Ok((read, _)) = engine.read_line(&crop) else {
            continue;
        };
        if similarity(&read, &lines[k].text) < SAME {
            tracing::debug!(layer = %lines[k].text, image = %read, "scan layer line not in its image");
            out.push(lines[k].objects.clone());
        }
    }
    out
}

/// Whether a cut-out box holds ink: pixels well darker than its paper (the lightest tenth).
fn has_ink(img: &RgbImage) -> bool {
    let lum: Vec<u8> = img
        .pixels()
        .map(|p| ((u16::from(p[0]) * 3 + u16::from(p[1]) * 6 + u16::from(p[2])) / 10) as u8)
        .collect();
    if lum.is_empty() {
        return false;
    }
    let mut sorted = lum.clone();
    let at = sorted.len() * 9 / 10;
    let paper = *sorted.select_nth_unstable(at).1;
    let ink = lum
        .iter()
        .filter(|&&v| v.saturating_add(INK_STEP) < paper)
        .count();
    ink as f32 >= MIN_INK * lum.len() as f32
}

/// 1 − edit distance / longer length, over letters and digits with case folded.
fn similarity(a: &str, b: &str) -> f32 {
    let norm = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .take(400)
            .collect()
    };
    let (a, b) = (norm(a), norm(b));
    let longer = a.len().max(b.len());
    if longer == 0 {
        return 1.0;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    1.0 - prev[b.len()] as f32 / longer as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_folds_case_and_ignores_spacing() {
        assert_eq!(similarity("Invoice No. 4471", "invoice no4471"), 1.0);
        assert!(
            similarity(
                "the train cormpany explained",
                "the train company explained"
            ) > 0.9
        );
        assert!(
            similarity(
                "Wire the money to 55-0192",
                "The city council approved the budget"
            ) < 0.5
        );
    }

    #[test]
    fn ink_is_told_from_blank_paper() {
        let mut img = RgbImage::from_pixel(100, 20, image::Rgb([235, 232, 228]));
        assert!(!has_ink(&img));
        for x in 10..90 {
            for y in 6..14 {
                if x % 3 == 0 {
                    img.put_pixel(x, y, image::Rgb([40, 40, 40]));
                }
            }
        }
        assert!(has_ink(&img));
    }
}
