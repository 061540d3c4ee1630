//! OCR: the `OcrEngine` trait and engine selection. The built-in engine runs the PP-OCR
//! ONNX models (detection, angle classification, recognition) through ONNX Runtime, in
//! process, with nothing sent off the machine.

mod named;
pub mod page_layout;
pub mod ppocr;
pub mod script;
pub mod tables;
pub mod tesseract;

use image::{DynamicImage, RgbImage};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::{ApiError, ErrorCode};

/// What a remembered OCR result depends on: engine, models and rendering. Change it when
/// any of them changes, so old results are not reused (6: see-through images over white;
/// 7: a line's regions kept as its `parts`, for tables). Lines read with their page
/// layout's roles are kept under the variant with `page_layout::LAYOUT_VARIANT` added.
pub const MEMORY_VARIANT: &str = "ppocr/det-v4/rec-v6-tiny/300dpi/7";

/// An image as 8-bit RGB, as a viewer shows it: see-through pixels composited onto white
/// (a PNG whose text is drawn only in its alpha channel — black everywhere, the glyphs
/// opaque — is black text on white, not a black page; a palette with a transparent
/// entry likewise), 16-bit and other kinds as `DynamicImage::into_rgb8` converts them. One
/// tight pass for grey and RGBA images: `into_rgb8` casts pixel by pixel through its
/// colour-space machinery, 33 ms for a grey A4 scan at 200 dpi and 73 ms at 300 dpi, on
/// the critical path of an OCR read; this takes 6 and 20 ms.
pub fn into_rgb(img: DynamicImage) -> RgbImage {
    let (w, h) = (img.width(), img.height());
    let expand = |src: &[u8], step: usize, pick: fn(&[u8]) -> [u8; 3]| {
        let mut out = vec![0u8; w as usize * h as usize * 3];
        for (o, p) in out.chunks_exact_mut(3).zip(src.chunks_exact(step)) {
            o.copy_from_slice(&pick(p));
        }
        RgbImage::from_raw(w, h, out)
    };
    let fast = match &img {
        DynamicImage::ImageLuma8(g) => expand(g.as_raw(), 1, |p| [p[0]; 3]),
        DynamicImage::ImageLumaA8(g) => expand(g.as_raw(), 2, |p| [on_white(p[0], p[1]); 3]),
        DynamicImage::ImageRgba8(c) => expand(c.as_raw(), 4, |p| {
            [
                on_white(p[0], p[3]),
                on_white(p[1], p[3]),
                on_white(p[2], p[3]),
            ]
        }),
        DynamicImage::ImageRgb8(_) => None,
        // Other kinds with alpha (16-bit, float): through 8-bit RGBA.
        other if other.color().has_alpha() => {
            let rgba = other.to_rgba8();
            expand(rgba.as_raw(), 4, |p| {
                [
                    on_white(p[0], p[3]),
                    on_white(p[1], p[3]),
                    on_white(p[2], p[3]),
                ]
            })
        }
        _ => None,
    };
    fast.unwrap_or_else(|| img.into_rgb8())
}

/// A channel value of a pixel with opacity `alpha`, over white.
fn on_white(v: u8, alpha: u8) -> u8 {
    let (v, a) = (v as u32, alpha as u32);
    ((v * a + 255 * (255 - a) + 127) / 255) as u8
}

/// One recognised line: text, its box in image pixels, and the recogniser's confidence.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OcrLine {
    pub text: String,
    /// `[x0, y0, x1, y1]`.
    #[serde(rename = "box")]
    #[schema(value_type = Vec<u32>, min_items = 4, max_items = 4)]
    pub bbox: [u32; 4],
    pub confidence: f32,
    /// Read a second time, from the line enlarged 2×, because a punctuation mark or
    /// symbol in it was unsure (the surer reading is the one given).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reread: bool,
    /// The script found in a line the read's engine has no letters for (`Hangul`,
    /// `Cyrillic`, …). With `engine` the line was read by that engine instead; without, no
    /// installed engine reads the script and the line is left out of the text (`text` is
    /// empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The engine and languages that read this line when not the read's `ocr_engine`
    /// (`tesseract:kor+eng`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The regions the line was read from, where it was more than one (a table's row is
    /// one a cell): each `[left, right, end]` — its edges in image pixels and where its
    /// text ends in `text` (bytes). Absent for a line read as one region.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<Vec<u32>>)]
    pub parts: Vec<[u32; 3]>,
    /// What the line is on its page where the page's layout says so (`title`, `header`,
    /// `footer`, `figure`, `caption`, `table`, `reference`, `equation`); absent for body
    /// text and where the layout model did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<page_layout::LineRole>,
}

impl OcrLine {
    /// A line in a script no installed engine reads: kept for its box, not in the text.
    pub fn is_unread(&self) -> bool {
        self.script.is_some() && self.engine.is_none()
    }
}

/// Confidence every OCR'd line must reach for the text to be called `good` (a mean hides
/// a wrong line: Korean read by a Chinese model scored 0.54–0.81 per line, 0.93 overall).
pub const GOOD_LINE_CONFIDENCE: f32 = 0.8;

/// Lines under `GOOD_LINE_CONFIDENCE`, or that look read in the wrong script
/// (`script::looks_misread`); `None` when there are none.
pub fn unsure_lines(lines: &[OcrLine]) -> Option<u64> {
    let n = lines
        .iter()
        .filter(|l| {
            !l.is_unread()
                && (l.confidence < GOOD_LINE_CONFIDENCE || script::looks_misread(&l.text))
        })
        .count() as u64;
    (n > 0).then_some(n)
}

/// Lines read by another engine because the read's engine has no letters for their
/// script; `None` when none were.
pub fn other_script_lines(lines: &[OcrLine]) -> Option<u64> {
    let n = lines.iter().filter(|l| l.engine.is_some()).count() as u64;
    (n > 0).then_some(n)
}

/// Lines left out because no installed engine reads their script (on `page`, for PDFs);
/// `None` when there are none.
pub fn unread_lines(lines: &[OcrLine], page: Option<u64>) -> Option<Vec<UnreadLine>> {
    let v: Vec<_> = lines
        .iter()
        .filter(|l| l.is_unread())
        .map(|l| UnreadLine {
            page,
            script: l.script.clone().unwrap_or_default(),
            bbox: l.bbox,
        })
        .collect();
    (!v.is_empty()).then_some(v)
}

/// How many lines were read again from a 2× enlargement; `None` when none were.
pub fn reread_lines(lines: &[OcrLine]) -> Option<u64> {
    let n = lines.iter().filter(|l| l.reread).count() as u64;
    (n > 0).then_some(n)
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
    /// `recognize`, giving up with a `timeout` error once `deadline` has passed (engines
    /// that cannot stop early just recognise).
    fn recognize_until(
        &self,
        image: &RgbImage,
        deadline: &crate::deadline::Deadline,
    ) -> Result<Vec<OcrLine>, ApiError> {
        let _ = deadline;
        self.recognize(image)
    }
    /// What remembered results of this engine depend on (engine, models, languages,
    /// rendering): results stored under another variant are never reused.
    fn memory_variant(&self) -> String {
        MEMORY_VARIANT.to_string()
    }
    /// Start loading models in the background, if they are not loaded yet, so the load
    /// overlaps work that comes before the first `recognize` (decoding an image). Errors
    /// surface from `recognize`.
    fn warm_up(&self) {}
}

impl<T: OcrEngine + ?Sized> OcrEngine for &'static T {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn is_local(&self) -> bool {
        (**self).is_local()
    }
    fn is_available(&self) -> bool {
        (**self).is_available()
    }
    fn recognize(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        (**self).recognize(image)
    }
    fn recognize_until(
        &self,
        image: &RgbImage,
        deadline: &crate::deadline::Deadline,
    ) -> Result<Vec<OcrLine>, ApiError> {
        (**self).recognize_until(image, deadline)
    }
    fn memory_variant(&self) -> String {
        (**self).memory_variant()
    }
    fn warm_up(&self) {
        (**self).warm_up()
    }
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
            None
            | Some("auto")
            | Some(ppocr::NAME)
            | Some(ppocr::OLD_NAME)
            | Some(tesseract::NAME) => Ok(Self::Auto),
            Some("force") => Ok(Self::Force),
            Some("none") => Ok(Self::Off),
            Some(other) => Err(
                ApiError::invalid_option(format!("unknown OCR engine {other:?}")).with_hint(
                    format!(
                    "Use ocr \"auto\" (local engines only), \"{}\", \"{}\", \"force\" or \"none\".",
                    ppocr::NAME,
                    tesseract::NAME
                ),
                ),
            ),
        }
    }
}

/// The engine `auto` picks for Chinese and Latin scripts: PP-OCR when installed.
pub fn local_engine() -> Option<&'static dyn OcrEngine> {
    let e: &'static dyn OcrEngine = ppocr::engine();
    (e.is_local() && e.is_available()).then_some(e)
}

/// The `ocr_lang` codes the built-in engine reads: Chinese, and the Latin alphabets whose
/// every letter is in its recognition dictionary (PP-OCRv6 tiny's has the accented letters
/// of these; not Romanian's comma-below ș ț, nor Vietnamese's).
const PPOCR_LANGS: &[&str] = &[
    "zh", "en", "de", "fr", "es", "it", "pt", "nl", "pl", "cs", "sk", "sv", "da", "no", "fi", "hu",
    "ca", "hr", "sl", "is", "et", "lv", "lt", "tr",
];

/// Whether the built-in engine reads an `ocr_lang` code, given as a Tesseract name.
fn ppocr_reads(code: &str) -> bool {
    code == "latin" || PPOCR_LANGS.iter().any(|l| tesseract_code(l) == code)
}

/// An `ocr_lang` code as a Tesseract language name (`ko` → `kor`, `ja-vert` → `jpn_vert`);
/// unknown codes pass through, so any installed traineddata can be named.
fn tesseract_code(code: &str) -> String {
    let c = code.to_ascii_lowercase().replace('-', "_");
    let mapped = match c.as_str() {
        "en" | "eng" | "latin" => "eng",
        "zh" | "ch" | "zh_cn" | "zh_hans" | "chi_sim" => "chi_sim",
        "zh_tw" | "zh_hant" | "chi_tra" => "chi_tra",
        "ko" | "kor" => "kor",
        "ja" | "jpn" => "jpn",
        "ja_vert" | "jpn_vert" => "jpn_vert",
        "de" => "deu",
        "fr" => "fra",
        "es" => "spa",
        "it" => "ita",
        "pt" => "por",
        "nl" => "nld",
        "ru" => "rus",
        "uk" => "ukr",
        "pl" => "pol",
        "ro" => "ron",
        "el" => "ell",
        "he" => "heb",
        "bg" => "bul",
        "sr" => "srp",
        "cs" => "ces",
        "sk" => "slk",
        "sv" => "swe",
        "da" => "dan",
        "no" | "nb" => "nor",
        "fi" => "fin",
        "hu" => "hun",
        "ca" => "cat",
        "hr" => "hrv",
        "sl" => "slv",
        "is" => "isl",
        "et" => "est",
        "lv" => "lav",
        "lt" => "lit",
        "tr" => "tur",
        "ar" => "ara",
        "hi" => "hin",
        "th" => "tha",
        "vi" => "vie",
        other => other,
    };
    mapped.to_string()
}

/// The engine for a read, from `ocr` (`auto`, `force`, an engine name) and `ocr_lang`:
/// PP-OCR for Chinese and the Latin-script languages its dictionary covers, Tesseract for
/// the languages it has installed (with PP-OCR's reading filling in what Tesseract did not
/// see, unless `ocr: "tesseract"` was asked for).
/// `Ok(None)` when no engine that could read the document is installed.
pub fn engine_for(
    ocr: Option<&str>,
    lang: Option<&str>,
) -> Result<Option<Box<dyn OcrEngine>>, ApiError> {
    OcrChoice::parse(ocr)?;
    let ocr = ocr.map(|o| if o == ppocr::OLD_NAME { ppocr::NAME } else { o });
    let codes: Vec<String> = lang
        .unwrap_or("")
        .split([',', '+', ' '])
        .filter(|p| !p.is_empty())
        .map(tesseract_code)
        .collect();
    let wants_tesseract = ocr == Some(tesseract::NAME)
        || codes.iter().any(|c| !ppocr_reads(c))
        || (ocr != Some(ppocr::NAME) && local_engine().is_none());
    if !wants_tesseract {
        return Ok(local_engine().map(|e| Box::new(e) as Box<dyn OcrEngine>));
    }
    if ocr == Some(ppocr::NAME) {
        return Err(ApiError::new(
            ErrorCode::UnsupportedOption,
            format!(
                "{} reads Chinese and Latin script in {}; not ocr_lang {:?}",
                ppocr::NAME,
                PPOCR_LANGS.join(", "),
                lang.unwrap_or("")
            ),
        )
        .with_hint("Leave out `ocr` (or use \"auto\" or \"tesseract\") to read other languages."));
    }
    let installed = tesseract::installed();
    // English rides along with every other script (headings, names, product codes): Korean
    // alone reads "RULES AND INSTRUCTIONS" as digits.
    let mut codes = codes;
    codes.dedup();
    if !codes.iter().any(|c| c == "eng") && installed.iter().any(|l| l == "eng") {
        codes.push("eng".to_string());
    }
    if installed.is_empty() {
        return Ok(None);
    }
    if let Some(missing) = codes.iter().find(|c| !installed.contains(c)) {
        return Err(ApiError::new(
            ErrorCode::UnsupportedOption,
            format!("ocr_lang {missing:?}: no recognition model for it is installed"),
        )
        .with_hint(format!(
            "Installed: {}Tesseract ({}). Install tesseract-ocr-{} (Debian) or its traineddata to read it.",
            if local_engine().is_some() {
                format!("PP-OCR ({}) and ", PPOCR_LANGS.join(", "))
            } else {
                String::new()
            },
            installed.join(", "),
            missing.replace('_', "-")
        )));
    }
    let named = tesseract::Tesseract::new(&codes);
    // A language named for Tesseract: the page is also read as `auto` reads it, for the
    // lines in other scripts or that Tesseract's layout passed over (`named`). Not when
    // Tesseract itself was asked for.
    match local_engine() {
        Some(auto) if ocr != Some(tesseract::NAME) => Ok(Some(Box::new(named::Named {
            tesseract: named,
            vertical: codes.iter().any(|c| c.ends_with("_vert")),
            auto,
        }))),
        _ => Ok(Some(Box::new(named))),
    }
}

/// The document-memory variant a read's OCR results are stored under.
pub fn memory_variant_for(ocr: Option<&str>, lang: Option<&str>) -> String {
    match engine_for(ocr, lang) {
        Ok(Some(e)) => {
            let v = e.memory_variant();
            let key = (ocr.map(str::to_string), lang.map(str::to_string));
            if let Ok(mut known) = KNOWN_VARIANTS.lock() {
                // Bounded: `lang` comes from clients.
                if known.len() < 256 {
                    known.insert(key, v.clone());
                }
            }
            v
        }
        _ => MEMORY_VARIANT.to_string(),
    }
}

/// `memory_variant_for`'s answers once an engine was found for the options: asked on
/// every read of a PDF, and finding the engine looks at the disk (an engine found stays
/// found while the service runs; one not found yet is looked for again).
static KNOWN_VARIANTS: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<(Option<String>, Option<String>), String>>,
> = std::sync::LazyLock::new(Default::default);

/// `memory_variant_for`'s answer when it is known without looking at the disk.
pub fn known_memory_variant(ocr: Option<&str>, lang: Option<&str>) -> Option<String> {
    let key = (ocr.map(str::to_string), lang.map(str::to_string));
    KNOWN_VARIANTS.lock().ok()?.get(&key).cloned()
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
    for l in lines.iter().filter(|l| !l.is_unread()) {
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

/// A line left out of the text because no installed engine reads its script.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UnreadLine {
    /// The page (PDFs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<u64>,
    /// As Tesseract's script detection names it: `Greek`, `Hebrew`, `Georgian`, …
    pub script: String,
    /// `[x0, y0, x1, y1]` in the pixels of the image (or page rendering) read.
    #[serde(rename = "box")]
    #[schema(value_type = Vec<u32>, min_items = 4, max_items = 4)]
    pub bbox: [u32; 4],
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every language `ocr_lang` sends to PP-OCR has each of its letters, both cases, in the
    /// recognition dictionary; languages with letters it lacks go to Tesseract.
    #[test]
    fn languages_sent_to_ppocr_have_their_letters() {
        let dict = ppocr::dictionary().unwrap_or_else(|e| panic!("make native: {e}"));
        let has = |c: char| dict.iter().any(|d| d.chars().eq([c]));
        let latin = [
            ("en", ""),
            ("de", "äöüß"),
            ("fr", "àâæçéèêëîïôœùûüÿ«»"),
            ("es", "áéíñóúü¿"),
            ("it", "àèéìíòóù"),
            ("pt", "ãõáâàçéêíóôú"),
            ("nl", "ëïé"),
            ("pl", "ąćęłńóśźż"),
            ("cs", "áčďéěíňóřšťúůýž"),
            ("sk", "áäčďéíĺľňóôŕšťúýž"),
            ("sv", "åäö"),
            ("da", "æøå"),
            ("no", "æøå"),
            ("fi", "äöå"),
            ("hu", "áéíóöőúüű"),
            ("ca", "àçèéíïòóúü·"),
            ("hr", "čćđšž"),
            ("sl", "čšž"),
            ("is", "áðéíóúýþæö"),
            ("et", "äõöüšž"),
            ("lv", "āčēģīķļņšūž"),
            ("lt", "ąčęėįšųūž"),
            ("tr", "çğıöşüİ"),
        ];
        for (code, accents) in latin {
            assert!(
                ppocr_reads(&tesseract_code(code)),
                "{code} is not sent to PP-OCR"
            );
            let letters = ('a'..='z').chain(accents.chars());
            // Each letter and its capital (where that is one letter: not ß's "SS").
            let missing: String = letters
                .flat_map(|c| {
                    let upper: Vec<char> = c.to_uppercase().collect();
                    std::iter::once(c).chain((upper.len() == 1).then_some(upper[0]))
                })
                .filter(|&c| !has(c))
                .collect();
            assert!(missing.is_empty(), "{code}: the dictionary lacks {missing}");
        }
        assert!(has('中') && has('文'));
        // Each language routed to PP-OCR had its letters checked above.
        for &code in PPOCR_LANGS {
            assert!(
                code == "zh" || latin.iter().any(|(c, _)| *c == code),
                "{code} has no letters checked above"
            );
        }
        // Romanian's comma-below ș ț, Vietnamese's horned letters, Cyrillic: not in it.
        for (code, letter) in [("ro", 'ș'), ("vi", 'ư'), ("ru", 'ж')] {
            assert!(
                !has(letter),
                "{letter} is in the dictionary now: send {code} to PP-OCR"
            );
            assert!(!ppocr_reads(&tesseract_code(code)), "{code}");
        }
    }

    /// The one-pass conversions make what `into_rgb8` makes of the image over white, for
    /// every kind they cover.
    #[test]
    fn fast_rgb_is_into_rgb8() {
        let img = image::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/images/hello.png"
        ))
        .expect("fixture");
        // A see-through RGBA (alpha not 255 everywhere) and grey with alpha.
        let mut rgba = img.to_rgba8();
        for (i, p) in rgba.pixels_mut().enumerate() {
            p[3] = (i % 256) as u8;
        }
        let kinds = [
            DynamicImage::ImageLuma8(img.to_luma8()),
            DynamicImage::ImageLumaA8(img.to_luma_alpha8()),
            DynamicImage::ImageRgba8(rgba),
            DynamicImage::ImageRgb8(img.to_rgb8()),
            DynamicImage::ImageRgb16(img.to_rgb16()),
        ];
        for kind in kinds {
            let what = format!("{:?}", kind.color());
            let mut want = kind.to_rgba8();
            // What a viewer shows: over white.
            for p in want.pixels_mut() {
                let a = p[3] as u32;
                for c in 0..3 {
                    p[c] = ((p[c] as u32 * a + 255 * (255 - a) + 127) / 255) as u8;
                }
            }
            let want = DynamicImage::ImageRgba8(want).into_rgb8();
            assert!(into_rgb(kind.clone()) == want, "{what} differs");
        }
        // Text drawn only in alpha: black everywhere, glyphs opaque, the rest clear.
        let mut mask = image::RgbaImage::new(4, 1);
        mask.put_pixel(1, 0, image::Rgba([0, 0, 0, 255]));
        let rgb = into_rgb(DynamicImage::ImageRgba8(mask));
        assert_eq!(rgb.get_pixel(0, 0).0, [255, 255, 255]);
        assert_eq!(rgb.get_pixel(1, 0).0, [0, 0, 0]);
    }
}

/// OCR's lines as typed blocks (`output: "json"`), each with its box (pixels of the image
/// read: left, top, right, bottom) and confidence; a title the page's layout found a
/// heading, its running headers and footers header and footer blocks, tables as tables; a
/// line of a script no engine reads (no text) is left out, as it is of the text.
pub fn blocks(lines: &[OcrLine]) -> Vec<crate::model::Block> {
    use crate::model::{Block, Content};
    use page_layout::Laid;
    page_layout::laid_out(lines)
        .into_iter()
        .map(|p| match p {
            Laid::Line(i) => {
                let l = &lines[i];
                Block::new(Content::Line {
                    text: l.text.clone(),
                    bbox: Some(l.bbox.map(|v| v as f32)),
                    confidence: Some(l.confidence),
                })
            }
            Laid::Header(i) => Block::new(Content::Header {
                text: lines[i].text.trim().to_string(),
            }),
            Laid::Footer(i) => Block::new(Content::Footer {
                text: lines[i].text.trim().to_string(),
            }),
            Laid::Heading { level, text } => Block::new(Content::Heading { level, text }),
            Laid::Table(rows) => Block::new(Content::Table {
                rows,
                header_rows: 1,
                spans: Vec::new(),
            }),
        })
        .collect()
}
