//! Whether a scan's invisible text layer is what its image shows (issue #41): invisible
//! (or fully transparent) text over an image is an OCR program's layer only where the
//! image shows that text. Otherwise it is `invisible_text_not_in_image`.
//!
//! The layer's text objects are put into lines (2,000 a page at most). The page is
//! rendered once, at about 24 pixels a line (12 when no line of it is to be read):
//! - a line's box with no ink in it (no text under the line: a blank margin or sky), or
//!   off the page as drawn, does not show it — every line is looked at this way, cheaply
//!   (ink: a third of the way from the page's paper to its darkest marks, 12–60 levels);
//! - a box with ink is read by the recognition model alone (one run, no detection), and
//!   the reading compared with the layer's text: below `SAME` normalised similarity the
//!   image shows something else. A recognition run costs about a tenth of a second, so not
//!   every line is read: on each page every instruction-like line (`findings`'s phrases),
//!   then the `SAMPLE` longest others — 64 instruction-like and 16 other lines in a read
//!   at most (pages read after the samples are spent keep the ink check: a 500-page scan
//!   pays a rendering a page, not 1,000 recognitions). Only with the built-in engine
//!   installed and OCR not turned off (`ocr: "none"`). A textured or dark image passes the
//!   ink check: there only the lines read are checked.

use std::sync::atomic::{AtomicUsize, Ordering};

use image::RgbImage;
use pdfium_render::prelude::*;

use super::geometry::Rect;

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
/// Lines looked at on a page, and pixels looked at for their ink, at most.
const MAX_LINES: usize = 2_000;
const MAX_VISITS: u64 = 32_000_000;
/// Pixels for a line's height when no line of the page is to be read (the ink check
/// alone: a quarter of the pixels).
const INK_LINE_PX: f32 = 12.0;
const MAX_PIXELS: f32 = 8.0e6;
/// A box with less than this share of its pixels in ink shows no text.
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
    // A stray letter or two (a figure's label) hides nothing worth a rendering; lines past
    // MAX_LINES on one page are not looked at.
    let letters = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).count();
    let lines: Vec<&Line> = lines
        .iter()
        .filter(|l| letters(&l.text) >= 4)
        .take(MAX_LINES)
        .collect();
    if lines.is_empty() {
        return Vec::new();
    }
    let engine = crate::ocr::ppocr::engine();
    let can_read = check.recognise && crate::ocr::OcrEngine::is_available(engine);
    let instruction: Vec<bool> = lines
        .iter()
        .map(|l| crate::findings::instruction_like(&l.text))
        .collect();
    // Only the ink check (nothing left to read with): a coarser rendering does.
    let reading = can_read
        && (check.samples.load(Ordering::Relaxed) > 0
            || (instruction.contains(&true) && check.instructions.load(Ordering::Relaxed) > 0));
    let line_px = if reading { LINE_PX } else { INK_LINE_PX };
    let mut heights: Vec<f32> = lines.iter().map(|l| l.rect.height().max(1.0)).collect();
    heights.sort_by(f32::total_cmp);
    let scale = (line_px / heights[heights.len() / 2]).clamp(0.5, 4.0);
    let Some(drawing) = super::render::Drawing::of(page, scale, MAX_PIXELS) else {
        return Vec::new();
    };
    let (bw, bh, pixels) = (drawing.width, drawing.height, &drawing.pixels);
    let lum = |i: usize| -> u8 {
        ((u16::from(pixels[i]) * 3 + u16::from(pixels[i + 1]) * 6 + u16::from(pixels[i + 2])) / 10)
            as u8
    };
    // What ink is on this page: a third of the way from its paper to its darkest marks
    // (12–60 levels), so a faint or pencilled scan is not taken for blank paper.
    let step = {
        let stride = ((bw * bh) as usize / 200_000).max(1);
        let mut sample: Vec<u8> = (0..(bw * bh) as usize)
            .step_by(stride)
            .map(|k| lum(k * 4))
            .collect();
        sample.sort_unstable();
        let at = |q: f32| sample[((sample.len() - 1) as f32 * q) as usize];
        ((at(0.9).saturating_sub(at(0.01))) / 3).clamp(12, 60)
    };
    // A line's box in the rendering, with a margin: None when it lies outside it.
    let boxed = |r: &Rect| {
        let (dx, dy) = (0.3 * r.height(), 0.12 * r.height());
        drawing.pixel_box(page, [r.l - dx, r.b - dy, r.r + dx, r.t + dy], 4)
    };
    let mut budget = MAX_VISITS;
    // Ink: pixels well darker than the box's paper (its lightest tenth), 1 % of them or
    // more. None once the page's pixel budget is spent (not looked at).
    let mut ink = |(x0, y0, x1, y1): (i64, i64, i64, i64)| -> Option<bool> {
        let area = ((x1 - x0) * (y1 - y0)) as u64;
        if area > budget {
            budget = 0;
            return None;
        }
        budget -= area;
        let mut box_lum: Vec<u8> = Vec::with_capacity(area as usize);
        for y in y0..y1 {
            for x in x0..x1 {
                box_lum.push(lum(((y * bw + x) * 4) as usize));
            }
        }
        let mut sorted = box_lum.clone();
        let at = sorted.len() * 9 / 10;
        let paper = *sorted.select_nth_unstable(at).1;
        let dark = box_lum
            .iter()
            .filter(|&&v| v.saturating_add(step) < paper)
            .count();
        Some(dark as f32 >= MIN_INK * box_lum.len() as f32)
    };
    let cut = |(x0, y0, x1, y1): (i64, i64, i64, i64)| -> RgbImage {
        let mut img = RgbImage::new((x1 - x0) as u32, (y1 - y0) as u32);
        for (y, row) in (y0..y1).zip(0u32..) {
            for (x, col) in (x0..x1).zip(0u32..) {
                let (r, g, b) = drawing.rgb(x, y);
                img.put_pixel(col, row, image::Rgb([r, g, b]));
            }
        }
        img
    };
    let mut out = Vec::new();
    // Lines with ink, to be read.
    let mut inked: Vec<(usize, (i64, i64, i64, i64))> = Vec::new();
    for (k, line) in lines.iter().enumerate() {
        match boxed(&line.rect) {
            // Off the page as drawn, or too small to show anything: not shown.
            None => out.push(line.objects.clone()),
            Some(b) => match ink(b) {
                Some(false) => out.push(line.objects.clone()),
                Some(true) => inked.push((k, b)),
                None => {}
            },
        }
    }
    if !reading {
        return out;
    }
    // Instruction-like lines first, then the longest.
    inked.sort_by_key(|&(k, _)| (!instruction[k], std::cmp::Reverse(lines[k].text.len())));
    let mut sampled = 0;
    for (k, (x0, y0, x1, y1)) in inked {
        // A line that does not lie across its box (text set at an angle on the page as
        // shown) is not read: the model reads horizontal lines.
        if y1 - y0 > x1 - x0 {
            continue;
        }
        if !instruction[k] {
            if sampled >= SAMPLE {
                continue;
            }
            sampled += 1;
        }
        if !check.take(instruction[k]) {
            continue;
        }
        let Ok((read, _)) = engine.read_line(&cut((x0, y0, x1, y1))) else {
            continue;
        };
        if similarity(&read, &lines[k].text) < SAME {
            tracing::debug!(layer = %lines[k].text, image = %read, "scan layer line not in its image");
            out.push(lines[k].objects.clone());
        }
    }
    out
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
}
