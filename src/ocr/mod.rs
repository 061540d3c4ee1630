//! OCR: the `OcrEngine` trait and engine selection. The built-in engine runs the PP-OCR
//! ONNX models (detection, angle classification, recognition) through ONNX Runtime, in
//! process, with nothing sent off the machine.

pub mod ppocr;

use image::RgbImage;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorCode};

/// What a remembered OCR result depends on: engine, models and rendering. Change it when
/// any of them changes, so old results are not reused.
pub const MEMORY_VARIANT: &str = "ppocr-v4/300dpi/1";

/// One recognised line: text, its box in image pixels, and the recogniser's confidence.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OcrLine {
    pub text: String,
    /// `[x0, y0, x1, y1]`.
    #[serde(rename = "box")]
    pub bbox: [u32; 4],
    pub confidence: f32,
}

/// A text recogniser for RGB images.
pub trait OcrEngine: Send + Sync {
    /// Stable name, reported as `ocr_engine`.
    fn name(&self) -> &'static str;
    /// Whether it runs on this machine (only local engines are chosen by `auto`).
    fn is_local(&self) -> bool;
    /// Whether its parts are installed. Cheap: does not load models.
    fn is_available(&self) -> bool;
    /// Lines in reading order.
    fn recognize(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError>;
}

/// What the `ocr` option asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcrChoice {
    /// Local engines only (default).
    Auto,
    /// OCR every selected page, not only those that need it.
    Force,
    /// No OCR: pages that need it are flagged and skipped.
    Off,
}

impl OcrChoice {
    pub fn parse(v: Option<&str>) -> Result<Self, ApiError> {
        match v {
            None | Some("auto") | Some(ppocr::NAME) => Ok(Self::Auto),
            Some("force") => Ok(Self::Force),
            Some("none") => Ok(Self::Off),
            Some(other) => Err(
                ApiError::invalid_option(format!("unknown OCR engine {other:?}")).with_hint(
                    format!(
                        "Use ocr \"auto\" (local engines only), \"{}\", \"force\" or \"none\".",
                        ppocr::NAME
                    ),
                ),
            ),
        }
    }
}

/// The engine `auto` picks: the first local engine whose parts are installed.
pub fn local_engine() -> Option<&'static dyn OcrEngine> {
    let e: &'static dyn OcrEngine = ppocr::engine();
    (e.is_local() && e.is_available()).then_some(e)
}

/// The error for content that needs OCR when no engine is installed.
pub fn no_engine(what: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NoOcrEngine,
        format!("{what} and no OCR engine is installed"),
    )
}

/// Lines as text: one line per line, in reading order.
pub fn lines_to_text(lines: &[OcrLine]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(&l.text);
        s.push('\n');
    }
    s
}

/// Mean confidence, weighted by characters.
pub fn mean_confidence(lines: &[OcrLine]) -> Option<f32> {
    let n: usize = lines.iter().map(|l| l.text.chars().count()).sum();
    (n > 0).then(|| {
        lines
            .iter()
            .map(|l| l.confidence * l.text.chars().count() as f32)
            .sum::<f32>()
            / n as f32
    })
}
