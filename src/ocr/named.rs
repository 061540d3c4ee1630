//! A read that names its language (`ocr_lang: "ko"`), which PP-OCR cannot read: Tesseract
//! reads the page in that language (with English), and the page is also read as `auto`
//! reads it — PP-OCR's lines, each line in another script routed to its own language
//! (`script::route`). What Tesseract did not see is taken from that reading: a line where
//! Tesseract found nothing, and a line Tesseract read unsurely that `auto` read surely in
//! another script's language. A sign in Korean, English and Russian, read with `ko`, keeps
//! its Russian; a line Tesseract's page layout passed over is not lost. Only when Tesseract
//! read a line unsurely or found none, and never for a vertical script.

use image::RgbImage;

use super::{script, tesseract::Tesseract, OcrEngine, OcrLine, GOOD_LINE_CONFIDENCE};
use crate::error::ApiError;

/// A line of the `auto` reading is taken where Tesseract's lines cover less of its box than
/// this.
const UNSEEN: f32 = 0.25;
/// A line of Tesseract's gives way only to a line that covers this much of its box.
const SAME_PLACE: f32 = 0.5;
/// How sure an `auto` line read by PP-OCR itself must be to replace an unsure line (and
/// not re-read for an unsure mark): Chinese it reads at 0.97–1.0, while Hangul it takes
/// for Chinese scored up to 0.93 on the sign fixtures (`人|社09:00-22:00` for
/// `영업시간 09:00 - 22:00`).
const SURE: f32 = 0.97;
/// How much surer a routed line must be than a Tesseract line it replaces (a Korean sign
/// line Tesseract read in page mode at 0.87 as `SAAS 2층에 있습니다`, line by line at 0.93
/// as `화장실은 2층에 있습니다`).
const MARGIN: f32 = 0.05;

pub struct Named {
    pub tesseract: Tesseract,
    /// A vertical script was named (`ja-vert`): PP-OCR reads lines across its columns, so
    /// there is nothing to fill in from it.
    pub vertical: bool,
    /// PP-OCR: reads the page as `auto` does.
    pub auto: &'static dyn OcrEngine,
}

impl Named {
    /// Whether to read the page as `auto` too: only when Tesseract read a line unsurely (a
    /// line in another script reads as unsure nonsense) or found none, as that reading
    /// costs two to three times Tesseract's own (routing tries each installed script on its
    /// unsure lines). A line Tesseract passed over on a page it read surely stays missed.
    fn wants_fill(&self, lines: &[OcrLine]) -> bool {
        !self.vertical
            && (lines.is_empty()
                || lines
                    .iter()
                    .any(|l| l.confidence < GOOD_LINE_CONFIDENCE || script::looks_misread(&l.text)))
    }

    fn fill(&self, lines: Vec<OcrLine>, auto: Result<Vec<OcrLine>, ApiError>) -> Vec<OcrLine> {
        match auto {
            Ok(auto) => merge(lines, auto, self.auto.name()),
            Err(e) => {
                tracing::warn!(error = %e.message, "named-language OCR: the auto reading failed");
                lines
            }
        }
    }
}

impl OcrEngine for Named {
    fn name(&self) -> &'static str {
        self.tesseract.name()
    }

    fn is_local(&self) -> bool {
        true
    }

    fn is_available(&self) -> bool {
        self.tesseract.is_available()
    }

    fn recognize(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        let lines = self.tesseract.recognize(image)?;
        if !self.wants_fill(&lines) {
            return Ok(lines);
        }
        Ok(self.fill(lines, self.auto.recognize(image)))
    }

    fn recognize_until(
        &self,
        image: &RgbImage,
        deadline: &crate::deadline::Deadline,
    ) -> Result<Vec<OcrLine>, ApiError> {
        let lines = self.tesseract.recognize_until(image, deadline)?;
        if !self.wants_fill(&lines) {
            return Ok(lines);
        }
        // Past the deadline the auto reading stops, and Tesseract's lines stand alone.
        Ok(self.fill(lines, self.auto.recognize_until(image, deadline)))
    }

    fn memory_variant(&self) -> String {
        format!(
            "{}+auto:{}",
            self.tesseract.memory_variant(),
            self.auto.memory_variant()
        )
    }

    fn warm_up(&self) {
        self.auto.warm_up();
    }
}

/// The share of `b`'s area that `boxes` cover (overlaps between them counted once each:
/// lines do not overlap much).
fn covered(b: [u32; 4], boxes: impl Iterator<Item = [u32; 4]>) -> f32 {
    let area =
        |b: [u32; 4]| (b[2].saturating_sub(b[0]) as f32) * (b[3].saturating_sub(b[1]) as f32);
    let whole = area(b);
    if whole <= 0.0 {
        return 1.0;
    }
    let inside: f32 = boxes
        .map(|o| {
            area([
                b[0].max(o[0]),
                b[1].max(o[1]),
                b[2].min(o[2]),
                b[3].min(o[3]),
            ])
        })
        .sum();
    (inside / whole).min(1.0)
}

/// Tesseract's lines, with what the `auto` reading saw that they did not (see the module).
/// Lines taken from it name their engine.
///
/// A line of the `auto` reading is taken when it is sure — routed to another engine (read,
/// line by line, surely in its own script's language), or read by PP-OCR itself at `SURE`
/// and not re-read for an unsure mark — and
/// - Tesseract found nothing there (its lines cover under `UNSEEN` of its box), or
/// - Tesseract's lines there (each covered `SAME_PLACE` by it) are unsure, or, for a routed
///   line, less sure than it by `MARGIN`.
///
/// Tesseract's lines there give way (an unsure fragment inside a line it missed too),
/// except a line with letters of a script the taken line has none of: a Korean line
/// PP-OCR read as Chinese at 0.95 stays Tesseract's Korean. A line taken in place of others
/// goes where the first of them stood; one in a gap, where its middle falls.
fn merge(mut lines: Vec<OcrLine>, auto: Vec<OcrLine>, auto_name: &str) -> Vec<OcrLine> {
    let unsure =
        |l: &OcrLine| l.confidence < GOOD_LINE_CONFIDENCE || script::looks_misread(&l.text);
    for mut a in auto {
        if a.is_unread() || a.text.trim().is_empty() || script::looks_misread(&a.text) {
            continue;
        }
        let routed = a.engine.is_some() && a.script.is_some();
        if !routed && (a.confidence < SURE || a.reread) {
            continue;
        }
        let ours = script::scripts_beyond_latin(&a.text);
        let here = |l: &OcrLine| covered(l.bbox, std::iter::once(a.bbox)) >= SAME_PLACE;
        let kept_apart = |l: &OcrLine| script::scripts_beyond_latin(&l.text) & !ours != 0;
        let unseen = covered(a.bbox, lines.iter().map(|l| l.bbox)) < UNSEEN;
        let gives_way = |l: &OcrLine| {
            here(l)
                && l.text != a.text
                && !kept_apart(l)
                && (unsure(l) || (routed && a.confidence >= l.confidence + MARGIN))
        };
        // Every Tesseract line here must give way (or there be none that counts).
        let blocking = lines.iter().any(|l| here(l) && !gives_way(l));
        let replaced = lines.iter().any(gives_way);
        if blocking || !(unseen || replaced) {
            continue;
        }
        let first = lines.iter().position(gives_way);
        lines.retain(|l| !gives_way(l));
        if a.engine.is_none() {
            a.engine = Some(auto_name.to_string());
        }
        let at = first.unwrap_or_else(|| {
            let mid = a.bbox[1] + a.bbox[3];
            lines
                .iter()
                .position(|l| l.bbox[1] + l.bbox[3] > mid)
                .unwrap_or(lines.len())
        });
        lines.insert(at.min(lines.len()), a);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str, bbox: [u32; 4], confidence: f32) -> OcrLine {
        OcrLine {
            text: text.into(),
            bbox,
            confidence,
            ..Default::default()
        }
    }

    #[test]
    fn what_tesseract_missed_is_taken_from_the_auto_reading() {
        let tess = vec![
            line("출구 EXIT", [10, 10, 400, 60], 0.95),
            line("Bbixon", [10, 100, 300, 150], 0.55),
            line("To City Hall", [10, 300, 400, 350], 0.93),
        ];
        let mut routed = line("Выход", [12, 98, 290, 152], 0.94);
        routed.script = Some("Cyrillic".into());
        routed.engine = Some("tesseract:rus+eng".into());
        let auto = vec![
            // Read by Tesseract already, surely: left (and Korean is not given up for Han).
            line("叁子 EXIT", [8, 8, 402, 62], 0.96),
            routed,
            // Missed by Tesseract: taken, in its place.
            line("Platform 2", [10, 200, 380, 250], 0.97),
            // Missed, but unsure: left out.
            line("~~..", [500, 500, 520, 510], 0.4),
        ];
        let got = merge(tess, auto, "ppocr");
        let texts: Vec<&str> = got.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["출구 EXIT", "Выход", "Platform 2", "To City Hall"]);
        // An unsure Tesseract line gives way to a sure PP-OCR one, unless it holds Hangul
        // the other lacks.
        let tess = vec![
            line("HAA", [0, 0, 100, 40], 0.55),
            line("화장 ASA", [0, 50, 100, 90], 0.6),
        ];
        let auto = vec![
            line("出口在左边", [0, 0, 100, 40], 1.0),
            line("邑片 ASA", [0, 50, 100, 90], 0.97),
        ];
        let texts: Vec<String> = merge(tess, auto, "ppocr")
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert_eq!(texts, ["出口在左边", "화장 ASA"]);
        assert_eq!(got[2].engine.as_deref(), Some("ppocr"));
        assert_eq!(got[1].engine.as_deref(), Some("tesseract:rus+eng"));
        assert_eq!(got[0].engine, None);
    }
}
