//! Recognition: model runs (`run`, `run_with`), CTC decoding, the angle classifier, the
//! recognition lanes that read a page's lines side by side, and the passes that read an
//! image whatever its orientation (`read_upright`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use image::imageops;
use image::RgbImage;
use ndarray::{Array4, ArrayViewD};
use ort::session::Session;
use ort::value::TensorRef;

use super::detect::Region;
use super::layout::reading_order;
use super::models::Models;
use super::preprocess::{crop, deskew, line_tensor, Crop};
use super::{past, past_deadline, PpOcr, DEADLINE, MAX_SKEW};
use crate::error::{ApiError, ErrorCode};
use crate::ocr::OcrLine;

pub(super) const REC_HEIGHT: u32 = 48;
const REC_MAX_WIDTH: u32 = 48 * 40;
/// Short lines are padded to this width (RapidOCR pads to 320; measured here, 160 keeps
/// the spaces between words that 320 loses on short lines).
const REC_MIN_WIDTH: u32 = 160;
const MIN_LINE_SCORE: f32 = 0.5;
/// A line read upright this surely, and this long, is upright: the angle classifier is not
/// asked (upside-down text read upright scores 0.3–0.5).
const SURE_LINE_SCORE: f32 = 0.95;
const SURE_LINE_CHARS: usize = 8;
/// A punctuation mark or symbol read less surely than this sends its line to a 2× re-read.
const ZOOM_BELOW: f32 = 0.7;
/// Skew (radians) worth levelling (lines at `MAX_SKEW` or more are not text lines at an
/// angle).
const MIN_SKEW: f32 = 0.026; // 1.5°

fn ort_err(e: impl std::fmt::Display) -> ApiError {
    let cause = e.to_string();
    // ONNX Runtime's arena could not grow under the worker's memory cap: the page is too
    // large for it, which is not a crash of the engine.
    if cause.contains("Failed to allocate memory") {
        return ApiError::new(
            ErrorCode::TooLarge,
            "recognising this page needs more memory than this reader may use",
        )
        .with_hint("Read fewer pages at once, or raise --worker-memory-mb.")
        .with_cause(cause);
    }
    ApiError::new(ErrorCode::ExtractionCrashed, "the OCR engine failed").with_cause(cause)
}

/// Run a model. `release`: give the session's arena chunks back at the end of this run.
pub(super) fn run(
    session: &Mutex<Session>,
    input: &Array4<f32>,
    release: bool,
) -> Result<ndarray::ArrayD<f32>, ApiError> {
    run_with(session, input, release, |out| out.to_owned())
}

/// `run`, handing the output to `f` in place (a recognition output is a few MB: not
/// copied).
fn run_with<R>(
    session: &Mutex<Session>,
    input: &Array4<f32>,
    release: bool,
    f: impl FnOnce(&ArrayViewD<f32>) -> R,
) -> Result<R, ApiError> {
    let mut s = session
        .lock()
        .map_err(|_| ort_err("a session lock was poisoned"))?;
    let tensor = TensorRef::from_array_view(input.view()).map_err(ort_err)?;
    // The CPU arena reuses its chunks from run to run (fast: no fresh pages to fault in),
    // and gives them back after the last run of a page: otherwise it holds the peak of the
    // largest run ever made (hundreds of MB for a page) for the life of the process.
    // Releasing after every run costs 7–25 % of a model's time.
    let mut opts = ort::session::RunOptions::new().map_err(ort_err)?;
    if release {
        opts.set("memory.enable_memory_arena_shrinkage", "cpu:0")
            .map_err(ort_err)?;
    }
    let out = s
        .run_with_options(ort::inputs![tensor], &opts)
        .map_err(ort_err)?;
    let view: ArrayViewD<f32> = out[0].try_extract_array::<f32>().map_err(ort_err)?;
    Ok(f(&view))
}

/// The first index of the largest value, and the value: the maximum found 16 lanes at a
/// time (vectorised; a recognition output is thousands of classes per step), then its
/// first place.
fn argmax(row: &[f32]) -> (usize, f32) {
    let mut lanes = [f32::MIN; 16];
    let mut chunks = row.chunks_exact(16);
    for c in &mut chunks {
        for (m, &v) in lanes.iter_mut().zip(c) {
            *m = if v > *m { v } else { *m };
        }
    }
    let mut max = f32::MIN;
    for &v in lanes.iter().chain(chunks.remainder()) {
        if v > max {
            max = v;
        }
    }
    let at = row.iter().position(|&v| v == max).unwrap_or(0);
    (at, max)
}

/// A line's text and confidence (the mean of its characters') from its characters.
pub(super) fn summary(chars: &[(String, f32)]) -> (String, f32) {
    let text: String = chars.iter().map(|c| c.0.as_str()).collect();
    let conf = if chars.is_empty() {
        0.0
    } else {
        chars.iter().map(|c| c.1).sum::<f32>() / chars.len() as f32
    };
    (text.trim().to_string(), conf)
}

/// Whether the zoomed reading is the surer one: where both readings have as many
/// characters, by the confidences of the characters they disagree on (a whole line's mean
/// moves with the resampling of letters both read alike); otherwise by the mean.
fn zoomed_is_surer(first: &[(String, f32)], zoomed: &[(String, f32)]) -> bool {
    if first.len() == zoomed.len() {
        let (mut a, mut b) = (0.0f32, 0.0f32);
        for (x, y) in first.iter().zip(zoomed) {
            if x.0 != y.0 {
                a += x.1;
                b += y.1;
            }
        }
        return b > a;
    }
    summary(zoomed).1 > summary(first).1
}

/// Greedy CTC decoding of line `k` of a recognition output (batch × steps × classes):
/// the best class per step, repeats merged, blanks dropped; each character with its
/// probability (`summary`: the text, and the mean of the probabilities as confidence).
pub(super) fn ctc_chars(
    probs: &ArrayViewD<f32>,
    k: usize,
    dict: &[String],
) -> Result<Vec<(String, f32)>, ApiError> {
    let (steps, classes) = (probs.shape()[1], probs.shape()[2]);
    let flat = probs
        .as_slice()
        .ok_or_else(|| ort_err("recognition output is not contiguous"))?;
    let mut out = Vec::new();
    let mut prev = 0usize;
    for t in 0..steps {
        let row = &flat[(k * steps + t) * classes..(k * steps + t + 1) * classes];
        let (best, bp) = argmax(row);
        if best != 0 && best != prev {
            if let Some(ch) = dict.get(best) {
                out.push((ch.clone(), bp));
            }
        }
        prev = best;
    }
    Ok(out)
}

impl PpOcr {
    /// One line of text already cut out (no detection, no angle check): its text and
    /// confidence. For checking that an image shows a given line (a PDF's invisible text
    /// layer over a scan).
    pub fn read_line(&self, image: &RgbImage) -> Result<(String, f32), ApiError> {
        let m = self.models()?;
        let chars = self.recognize_chars(m, 0, &Crop::whole(image.clone()), true)?;
        Ok(summary(&chars))
    }

    /// Whether the angle classifier, sure of it, calls a line upside down.
    fn upside_down(&self, m: &Models, crop: &Crop) -> Result<bool, ApiError> {
        // A long line squeezed into 192 px is a smear the classifier misjudges; its middle,
        // at true proportions, shows real glyphs (upside-down text is upside down
        // everywhere along the line).
        let window = (crop.height() * 4).max(1);
        let view = if crop.width() > window {
            crop.columns((crop.width() - window) / 2, window)
        } else {
            crop.columns(0, crop.width())
        };
        let w = ((48.0 * view.width() as f32 / view.height().max(1) as f32).ceil() as u32)
            .clamp(1, 192);
        // The classifier's arena is a few MB: kept.
        let probs = run(&m.cls, &line_tensor(&view, w, 48, 192), false)?;
        Ok(probs[[0, 1]] > 0.9 && probs[[0, 1]] > probs[[0, 0]])
    }

    /// CTC recognition of one line at its own width, character by character with each
    /// one's probability: no padding to a wider neighbour's width (11 % less CPU than
    /// batches of six), and a line reads the same whatever lines or how many threads share
    /// the page. `summary` gives its text and confidence.
    fn recognize_chars(
        &self,
        m: &Models,
        lane: usize,
        crop: &Crop,
        release: bool,
    ) -> Result<Vec<(String, f32)>, ApiError> {
        let width = ((REC_HEIGHT as f32 * crop.width() as f32 / crop.height().max(1) as f32).ceil()
            as u32)
            .clamp(16, REC_MAX_WIDTH);
        let input = line_tensor(crop, width, REC_HEIGHT, REC_MIN_WIDTH);
        run_with(&m.rec[lane], &input, release, |probs| {
            ctc_chars(probs, 0, &m.dict)
        })?
    }

    /// Small type: a line whose punctuation or symbols the model is unsure of (`#` read
    /// as `±` at 0.44 on a 9-pt invoice) is read again from its crop enlarged 2× with a
    /// sharper filter, and the reading whose differing characters are surer is kept.
    /// `None` when the line did not need it (the common case: nothing runs again).
    fn zoom_reread(
        &self,
        m: &Models,
        lane: usize,
        crop: &Crop,
        first: &[(String, f32)],
        release: bool,
    ) -> Result<Option<(String, f32)>, ApiError> {
        let unsure = first.iter().any(|(c, p)| {
            *p < ZOOM_BELOW
                && c.chars()
                    .all(|ch| !ch.is_alphanumeric() && !ch.is_whitespace())
        });
        if !unsure {
            return Ok(None);
        }
        let big = imageops::resize(
            &crop.to_image(),
            crop.width() * 2,
            crop.height() * 2,
            imageops::FilterType::Lanczos3,
        );
        let second = self.recognize_chars(m, lane, &Crop::whole(big), release)?;
        Ok(Some(summary(if zoomed_is_surer(first, &second) {
            &second
        } else {
            first
        })))
    }

    /// Each region cut out, classified and recognised, on the recognition lanes side by
    /// side: `(text, confidence, read upside down)` per region, in region order.
    fn read_lines(
        &self,
        m: &Models,
        img: &RgbImage,
        regions: &[Region],
    ) -> Result<Vec<(String, f32, bool, bool)>, ApiError> {
        let lanes = m.rec.len().max(1);
        // Longest lines first, each taken by the next lane to come free: the lanes end
        // together however long each line really takes (a line the classifier flags is
        // read twice). A planned split by length left one lane idle for up to a third of
        // the reading on some scans.
        let mut order: Vec<usize> = (0..regions.len()).collect();
        let cost = |r: &Region| r.length() / r.thickness().max(1.0);
        order.sort_by(|&a, &b| cost(&regions[b]).total_cmp(&cost(&regions[a])));
        let next = AtomicUsize::new(0);
        let deadline = DEADLINE.with(|d| d.borrow().clone());
        let read_lane = |lane: usize| -> Result<Vec<(usize, String, f32, bool, bool)>, ApiError> {
            let mut got = Vec::new();
            // Whether this lane's last run gave its arena back.
            let mut released = true;
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                past(&deadline)?;
                // Usually each lane takes one of the last `lanes` lines, and gives its
                // arena back after it.
                let last = k + lanes >= order.len();
                let crop = crop(img, &regions[i]);
                released = last;
                let chars = self.recognize_chars(m, lane, &crop, released)?;
                let (mut text, mut conf) = summary(&chars);
                // A line read upright as a long line at high confidence is upright: text
                // read upside down never scores so (the classifier, asked anyway, wrongly
                // flagged one or two such lines on most English scans). Any other line the
                // classifier calls upside down is read both ways and the surer reading
                // kept: a wrong turn would otherwise lose the whole line.
                let mut flipped = false;
                let sure = conf >= SURE_LINE_SCORE && text.chars().count() >= SURE_LINE_CHARS;
                if !sure && self.upside_down(m, &crop)? {
                    let turned = crop.turned();
                    let (t2, c2) = summary(&self.recognize_chars(m, lane, &turned, released)?);
                    if c2 > conf {
                        (text, conf, flipped) = (t2, c2, true);
                    }
                }
                let mut reread = false;
                if !flipped {
                    if let Some((t2, c2)) = self.zoom_reread(m, lane, &crop, &chars, released)? {
                        (text, conf, reread) = (t2, c2, true);
                    }
                }
                got.push((i, text, conf, flipped, reread));
            }
            // A lane still busy with an earlier line when the others took the last ones:
            // its arena is given back by the smallest run there is.
            if !released {
                let empty =
                    Array4::<f32>::zeros((1, 3, REC_HEIGHT as usize, REC_MIN_WIDTH as usize));
                run_with(&m.rec[lane], &empty, true, |_| ())?;
            }
            Ok(got)
        };
        let per_lane: Vec<Result<Vec<(usize, String, f32, bool, bool)>, ApiError>> = if lanes == 1 {
            vec![read_lane(0)]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (1..lanes).map(|l| s.spawn(move || read_lane(l))).collect();
                let mut all = vec![read_lane(0)];
                all.extend(handles.into_iter().map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(ort_err("a recognition thread panicked")))
                }));
                all
            })
        };
        let mut out = vec![(String::new(), 0f32, false, false); regions.len()];
        for lane in per_lane {
            for (i, text, conf, flipped, reread) in lane? {
                out[i] = (text, conf, flipped, reread);
            }
        }
        Ok(out)
    }

    /// One detection + classification + recognition pass over an image.
    fn pass(&self, m: &Models, img: &RgbImage) -> Result<Pass, ApiError> {
        let (regions, skew) = self.detect_timed(m, img)?;
        self.read_regions(m, img, regions, skew)
    }

    /// Classification and recognition of the regions detection found in `img`.
    fn read_regions(
        &self,
        m: &Models,
        img: &RgbImage,
        regions: Vec<Region>,
        skew: Option<f32>,
    ) -> Result<Pass, ApiError> {
        past_deadline()?;
        let t1 = std::time::Instant::now();
        let read = self.read_lines(m, img, &regions)?;
        tracing::debug!(
            regions = regions.len(),
            read_ms = t1.elapsed().as_millis() as u64,
            "ocr reading"
        );
        let upside_down = read.iter().filter(|r| r.2).count();
        let mut lines = Vec::new();
        let mut weak = Vec::new();
        for (r, (text, conf, _, reread)) in regions.iter().zip(read) {
            if text.is_empty() {
                continue;
            }
            let line = OcrLine {
                text,
                bbox: [r.x0 as u32, r.y0 as u32, r.x1 as u32, r.y1 as u32],
                confidence: conf,
                reread,
                ..Default::default()
            };
            if conf < MIN_LINE_SCORE {
                weak.push(line);
            } else {
                lines.push((line, r.thickness()));
            }
        }
        // Slanted lines are ordered along their own direction: their axis-aligned boxes are
        // taller than the text by the slant, and overlap their neighbours'.
        let slant = skew.filter(|a| a.abs() < MAX_SKEW).unwrap_or(0.0);
        Ok(Pass {
            lines: crate::ocr::tables::columns_in_order(reading_order(lines, slant)),
            weak,
            regions: regions.len(),
            tall: regions.iter().filter(|r| r.h() > 1.5 * r.w()).count(),
            upside_down,
        })
    }
}

/// What one pass found, with the hints that the whole image is turned.
struct Pass {
    lines: Vec<OcrLine>,
    /// Regions read at under `MIN_LINE_SCORE`, left out of `lines`: noise, or a line in a
    /// script PP-OCR has no letters for (a Hindi line scores under 0.5), which
    /// `script::route` may read.
    weak: Vec<OcrLine>,
    regions: usize,
    /// Regions much taller than wide: text running vertically (a page turned 90°).
    tall: usize,
    /// Crops the classifier found upside down.
    upside_down: usize,
}

impl Pass {
    /// Characters times confidence: how much was read, and how surely.
    fn weight(&self) -> f32 {
        self.lines
            .iter()
            .map(|l| l.confidence * l.text.chars().count() as f32)
            .sum()
    }

    /// A reading to keep without reading the image another way: text at a mean confidence
    /// (per character) of 0.9 or more, not mostly upside down.
    fn is_sure(&self) -> bool {
        let chars: usize = self.lines.iter().map(|l| l.text.chars().count()).sum();
        chars > 0 && self.weight() >= 0.9 * chars as f32 && self.upside_down * 2 <= self.regions
    }
}

impl PpOcr {
    /// Read an image whatever its orientation: skewed, turned a quarter, or upside down.
    /// The lines of `image`, upright, with lines in scripts PP-OCR cannot read checked
    /// (`ocr::script`) on the image as it was read (levelled or turned).
    pub(super) fn read_upright(
        &self,
        m: &Models,
        image: &RgbImage,
    ) -> Result<Vec<OcrLine>, ApiError> {
        let (pass, seen) = self.read_turned(m, image)?;
        let seen = seen.as_ref().unwrap_or(image);
        // Regions too unsure to be lines are checked with them (one pass, so the script
        // found on the page is tried first for both) and stay out unless another script's
        // engine reads them or their script is one no engine here reads (then reported).
        let mut lines = pass.lines;
        let n = lines.len();
        lines.extend(pass.weak);
        crate::ocr::script::route(seen, &mut lines, &past_deadline)?;
        let weak: Vec<OcrLine> = lines.drain(n..).filter(|w| w.script.is_some()).collect();
        for w in weak {
            let at = lines
                .iter()
                .position(|l| l.bbox[1] + l.bbox[3] > w.bbox[1] + w.bbox[3])
                .unwrap_or(lines.len());
            lines.insert(at, w);
        }
        Ok(lines)
    }

    /// The lines of `image` and, when it was levelled or turned to read them, the image
    /// their boxes belong to.
    fn read_turned(
        &self,
        m: &Models,
        image: &RgbImage,
    ) -> Result<(Pass, Option<RgbImage>), ApiError> {
        let (regions, skew) = self.detect_timed(m, image)?;
        let first = self.read_regions(m, image, regions, skew)?;
        // Skewed lines (a scan fed in at an angle) are cut out along their own direction;
        // when that reading is not sure, the image is levelled and read again, and the
        // larger and surer reading kept.
        if let Some(a) = skew.filter(|a| a.abs() > MIN_SKEW && a.abs() < MAX_SKEW) {
            if !first.is_sure() {
                let levelled = deskew(image, a);
                let level = self.pass(m, &levelled)?;
                if level.weight() > first.weight() {
                    return Ok((level, Some(levelled)));
                }
            }
        }
        // A page turned by a quarter: most regions run vertically. Try both quarter turns
        // and keep the reading that is larger and surer.
        let (best, turned) = if first.regions >= 3 && first.tall * 2 > first.regions {
            let cw_img = imageops::rotate90(image);
            let ccw_img = imageops::rotate270(image);
            let cw = self.pass(m, &cw_img)?;
            let ccw = self.pass(m, &ccw_img)?;
            if cw.weight() >= ccw.weight().max(first.weight()) {
                (cw, Some(cw_img))
            } else if ccw.weight() >= first.weight() {
                (ccw, Some(ccw_img))
            } else {
                (first, None)
            }
        } else {
            (first, None)
        };
        // Upside down: the classifier fixed each line, but the line order is reversed.
        if best.regions > 0 && best.upside_down * 2 > best.regions {
            let upright = imageops::rotate180(turned.as_ref().unwrap_or(image));
            return Ok((self.pass(m, &upright)?, Some(upright)));
        }
        Ok((best, turned))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectorised argmax finds the first largest value, as a plain scan does: ties,
    /// a maximum in the tail past the last 16, rows shorter than 16.
    #[test]
    fn argmax_is_the_first_largest() {
        let plain = |row: &[f32]| {
            let (mut best, mut bp) = (0usize, f32::MIN);
            for (c, &v) in row.iter().enumerate() {
                if v > bp {
                    (best, bp) = (c, v);
                }
            }
            (best, bp)
        };
        let mut row: Vec<f32> = (0..6625)
            .map(|i| ((i * 7919) % 1000) as f32 / 1e3)
            .collect();
        assert_eq!(argmax(&row), plain(&row));
        row[6624] = 2.0;
        assert_eq!(argmax(&row), (6624, 2.0));
        row[17] = 2.0;
        assert_eq!(argmax(&row), (17, 2.0));
        for n in [1, 5, 15, 16, 17, 33] {
            assert_eq!(argmax(&row[..n]), plain(&row[..n]), "{n} values");
        }
    }
}
