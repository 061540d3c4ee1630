//! Lines in a script the built-in engine has no letters for. PP-OCR's models read Chinese
//! and Latin; a Korean, Russian, Arabic or Thai line comes back as Chinese- or
//! Latin-looking nonsense at 0.5–0.87 confidence (fixtures/images/script_*.png), while
//! pages PP-OCR reads score 0.95 and more per line.
//!
//! So each line under `SUSPECT_BELOW` is read again by Tesseract, one installed script at
//! a time (the script that already read a line of the page first), with English alongside
//! for the names and numbers in it. The right language reads such a line at 0.93–0.97 and
//! the others at 0.84 at most (measured on the fixtures): a reading at `SURE` or more,
//! surer than PP-OCR's, whose letters are mostly in that script, replaces the line. A
//! line no installed language reads, in a script Tesseract's script detection names and
//! no installed language covers, is left out of the text and reported, never guessed.

use image::imageops;
use image::RgbImage;

use super::tesseract::{self, Reader};
use super::OcrLine;
use crate::error::ApiError;

/// A line PP-OCR reads with less confidence than this is checked.
pub const SUSPECT_BELOW: f32 = 0.9;
/// A second reading this sure, in its script, is taken at once (a wrong language reads a
/// line at 0.84 at most on the fixtures: Thai's model reading Russian).
const SURE: f32 = 0.88;
/// Otherwise the surest reading, in its script, is taken when it reaches this, is surer
/// than PP-OCR's, and stands `MARGIN` above every other language's (a line mixing Korean
/// with English names read 0.79 in Korean, 0.64 at best in the others, 0.77 by PP-OCR).
const LIKELY: f32 = 0.75;
const MARGIN: f32 = 0.1;
/// A line left unread must have been this unsure in PP-OCR's reading.
const UNREADABLE_BELOW: f32 = 0.8;
/// Lines of one page read in every installed language (see `route`).
const MAX_SWEEPS: usize = 6;
/// Tesseract's script confidence needed to call a line's script one no engine reads
/// (Greek lines: 0.67–8.3; the line is also unsure, or looks misread, and no installed
/// language read it).
const OSD_SURE: f32 = 0.5;
/// A line script detection calls Latin this surely is not read in other scripts (English
/// lines score 5–30; a Korean line read as Chinese was once called Latin at 1.1).
const LATIN_SURE: f32 = 1.5;

/// A writing system PP-OCR cannot read, the Tesseract languages that read it (the first
/// one installed is used) and its letters.
struct Script {
    /// As Tesseract's script detection names it.
    name: &'static str,
    /// Other names the detection uses for it.
    aliases: &'static [&'static str],
    langs: &'static [&'static str],
    letter: fn(char) -> bool,
}

fn kana(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}' | '\u{FF66}'..='\u{FF9F}')
}

fn han(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

const SCRIPTS: &[Script] = &[
    Script {
        name: "Hangul",
        aliases: &["Korean"],
        langs: &["kor"],
        letter: |c| matches!(c, '\u{AC00}'..='\u{D7AF}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}'),
    },
    Script {
        name: "Japanese",
        aliases: &["Hiragana", "Katakana"],
        langs: &["jpn"],
        // Kanji count too, but `reads_script` also wants a kana: a Chinese line read by
        // the Japanese model stays PP-OCR's.
        letter: |c| kana(c) || han(c),
    },
    Script {
        name: "Cyrillic",
        aliases: &[],
        langs: &["rus", "ukr", "bul", "srp", "bel", "mkd"],
        letter: |c| matches!(c, '\u{0400}'..='\u{052F}'),
    },
    Script {
        name: "Arabic",
        aliases: &[],
        langs: &["ara", "fas", "urd"],
        letter: |c| matches!(c, '\u{0600}'..='\u{06FF}' | '\u{0750}'..='\u{077F}' | '\u{FB50}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}'),
    },
    Script {
        name: "Thai",
        aliases: &[],
        langs: &["tha"],
        letter: |c| matches!(c, '\u{0E00}'..='\u{0E7F}'),
    },
    Script {
        name: "Devanagari",
        aliases: &[],
        langs: &["hin", "mar", "nep", "san"],
        letter: |c| matches!(c, '\u{0900}'..='\u{097F}'),
    },
    Script {
        name: "Greek",
        aliases: &[],
        langs: &["ell", "grc"],
        letter: |c| matches!(c, '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}'),
    },
    Script {
        name: "Hebrew",
        aliases: &[],
        langs: &["heb", "yid"],
        letter: |c| matches!(c, '\u{0590}'..='\u{05FF}'),
    },
    Script {
        name: "Georgian",
        aliases: &[],
        langs: &["kat"],
        letter: |c| matches!(c, '\u{10A0}'..='\u{10FF}'),
    },
    Script {
        name: "Armenian",
        aliases: &[],
        langs: &["hye"],
        letter: |c| matches!(c, '\u{0530}'..='\u{058F}'),
    },
    Script {
        name: "Bengali",
        aliases: &[],
        langs: &["ben", "asm"],
        letter: |c| matches!(c, '\u{0980}'..='\u{09FF}'),
    },
    Script {
        name: "Tamil",
        aliases: &[],
        langs: &["tam"],
        letter: |c| matches!(c, '\u{0B80}'..='\u{0BFF}'),
    },
];

impl Script {
    /// The Tesseract language that reads it here, with English for the Latin in its lines.
    fn langs_installed(&self, installed: &[String]) -> Option<String> {
        let lang = self
            .langs
            .iter()
            .find(|l| installed.iter().any(|i| i == *l))?;
        Some(if installed.iter().any(|i| i == "eng") {
            format!("{lang}+eng")
        } else {
            lang.to_string()
        })
    }

    /// Whether `text` is written in the script: two of its letters at least, and a third
    /// of all (a Korean line often carries English names; a Japanese line also needs a
    /// kana, or it may be Chinese).
    fn reads_script(&self, text: &str) -> bool {
        let letters: Vec<char> = text.chars().filter(|c| c.is_alphabetic()).collect();
        let ours = letters.iter().filter(|c| (self.letter)(**c)).count();
        let kana_ok = self.name != "Japanese" || text.chars().any(kana);
        ours >= 2 && ours * 3 >= letters.len() && kana_ok
    }
}

/// The scripts routing can use on this machine: those with an installed language, in
/// table order, with that language. Empty without Tesseract.
fn routes() -> &'static [(usize, String)] {
    static ROUTES: std::sync::OnceLock<Vec<(usize, String)>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| {
        let installed = tesseract::installed();
        SCRIPTS
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, s.langs_installed(&installed)?)))
            .collect()
    })
}

/// What routing depends on (for remembered results): the languages it can use. Read
/// from the data files alone: every read asks, most never route a line.
pub fn variant() -> String {
    static VARIANT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VARIANT
        .get_or_init(|| {
            let installed = tesseract::installed_data();
            let langs: Vec<String> = SCRIPTS
                .iter()
                .filter_map(|s| s.langs_installed(&installed))
                .collect();
            format!("scripts:{}", langs.join(","))
        })
        .clone()
}

/// The part of `image` under `bbox`, with a margin of a quarter of its height (Tesseract
/// reads a line poorly when its letters touch the edge), on white.
fn crop(image: &RgbImage, bbox: [u32; 4]) -> Option<RgbImage> {
    let [x0, y0, x1, y1] = bbox;
    let (w, h) = image.dimensions();
    if x1 <= x0 || y1 <= y0 || x0 >= w || y0 >= h {
        return None;
    }
    let pad = ((y1 - y0) / 4).max(4);
    let (cx0, cy0) = (x0.saturating_sub(pad), y0.saturating_sub(pad));
    let (cx1, cy1) = ((x1 + pad).min(w), (y1 + pad).min(h));
    Some(imageops::crop_imm(image, cx0, cy0, cx1 - cx0, cy1 - cy0).to_image())
}

/// Checks each unsure line of a page PP-OCR read (see the module's comment): replaces it
/// with a surer reading in another script, marks it unread when its script has no engine
/// here, or leaves it. Stops with `past`'s error when the read's time is up.
pub fn route(
    image: &RgbImage,
    lines: &mut [OcrLine],
    past: &dyn Fn() -> Result<(), ApiError>,
) -> Result<(), ApiError> {
    // A region PP-OCR read under 0.5 is checked only when it is shaped like a line of
    // text (wide, not a blob of a picture).
    let line_shaped = |b: [u32; 4]| {
        let (w, h) = (b[2].saturating_sub(b[0]), b[3].saturating_sub(b[1]));
        h >= 8 && w >= 2 * h
    };
    let suspects: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let l = &lines[i];
            l.script.is_none() && suspect(l) && (l.confidence >= 0.5 || line_shaped(l.bbox))
        })
        .collect();
    if suspects.is_empty() {
        return Ok(());
    }
    let routes = routes();
    // Sessions opened on this page, by route index, and the route that last read a line.
    let mut readers: Vec<Option<Reader>> = routes.iter().map(|_| None).collect();
    let mut page_script: Option<usize> = None;
    let mut osd: Option<Option<Reader>> = None;
    // Lines read in every language: a page of unsure English or noise costs at most this
    // many sweeps (a line the page's script reads, or detection calls Latin, costs none).
    let mut sweeps_left = MAX_SWEEPS;
    for i in suspects {
        let Some(crop) = crop(image, lines[i].bbox) else {
            continue;
        };
        let pp = lines[i].confidence;
        // (route, text, confidence) of each reading tried.
        let mut tried: Vec<(usize, String, f32)> = Vec::new();
        let mut read_as = |r: usize,
                           tried: &mut Vec<(usize, String, f32)>|
         -> Result<bool, ApiError> {
            past()?;
            let langs = &routes[r].1;
            if readers[r].is_none() {
                match Reader::open(langs, 7) {
                    Ok(reader) => readers[r] = Some(reader),
                    Err(e) => {
                        tracing::warn!(langs, error = %e.message, "script routing: cannot open");
                        return Ok(false);
                    }
                }
            }
            let Some(reader) = &readers[r] else {
                return Ok(false);
            };
            let Some((text, conf)) = reader.read_line(&crop)? else {
                return Ok(false);
            };
            tracing::debug!(line = i, langs, conf, pp, %text, "script routing: second reading");
            let sure = conf >= SURE && SCRIPTS[routes[r].0].reads_script(&text);
            tried.push((r, text, conf));
            Ok(sure)
        };
        // The script that already read a line of this page first: pages mix English with
        // one other script, mostly.
        let sure = match page_script {
            Some(r) => read_as(r, &mut tried)?,
            None => false,
        };
        let mut seen = None;
        if !sure {
            // Then what script detection sees: one call, where reading the line in each
            // language costs a model load and a read apiece (an English line at 0.899
            // took 0.6 s through all six).
            past()?;
            let detector = osd.get_or_insert_with(|| Reader::open("osd", 0).ok());
            seen = detector.as_ref().and_then(|d| detect(d, &crop));
            if let Some((name, conf)) = &seen {
                if name == "Latin" && *conf >= LATIN_SURE && !looks_misread(&lines[i].text) {
                    continue;
                }
            }
            // Past the page's sweeps a line keeps PP-OCR's reading, unless detection names
            // a script no engine here reads (below).
            if sweeps_left > 0 {
                sweeps_left -= 1;
                let guess = seen.as_ref().and_then(|(name, _)| script_named(name));
                let mut rest: Vec<usize> = (0..routes.len())
                    .filter(|&r| Some(r) != page_script)
                    .collect();
                if let Some(k) = guess.and_then(|g| rest.iter().position(|&r| routes[r].0 == g)) {
                    let r = rest.remove(k);
                    rest.insert(0, r);
                }
                for r in rest {
                    if read_as(r, &mut tried)? {
                        break;
                    }
                }
            }
        }
        if let Some((r, text, conf)) = best_reading(&mut tried, routes, pp) {
            page_script = Some(r);
            let l = &mut lines[i];
            l.text = text;
            // Its regions' ends were in the text PP-OCR read.
            l.parts.clear();
            l.confidence = conf;
            l.script = Some(SCRIPTS[routes[r].0].name.to_string());
            l.engine = Some(format!("{}:{}", tesseract::NAME, routes[r].1));
            l.reread = false;
            continue;
        }
        if pp >= UNREADABLE_BELOW && !looks_misread(&lines[i].text) {
            continue;
        }
        // A language (with English) that read it nearly surely says it is not unreadable.
        if tried.iter().any(|t| t.2 >= SURE) {
            continue;
        }
        // No installed language reads it: is it in a script none covers?
        let unread = seen
            .filter(|(_, conf)| *conf >= OSD_SURE)
            .and_then(|(name, _)| script_named(&name))
            .filter(|g| !routes.iter().any(|(r, _)| r == g));
        if let Some(g) = unread {
            let l = &mut lines[i];
            l.script = Some(SCRIPTS[g].name.to_string());
            l.text.clear();
            l.engine = None;
        }
    }
    Ok(())
}

/// The index in `SCRIPTS` of the script Tesseract's detection calls `name`.
fn script_named(name: &str) -> Option<usize> {
    SCRIPTS
        .iter()
        .position(|s| s.name == name || s.aliases.contains(&name))
}

/// Whether PP-OCR's reading of a line may be in the wrong script: unsure, or looking
/// misread.
pub fn suspect(line: &OcrLine) -> bool {
    line.confidence < SUSPECT_BELOW || looks_misread(&line.text)
}

/// Which script a letter belongs to, coarsely: 0 Latin, 1 Greek, 2 Cyrillic, 3 Chinese
/// and Japanese, 4 Hangul, 5 any other; `None` for what is not a letter. µ/μ, a unit
/// sign in Latin text, counts as Latin.
fn letter_script(c: char) -> Option<u8> {
    if !c.is_alphabetic() {
        return None;
    }
    Some(match c {
        'µ' | 'μ' => 0,
        _ if c.is_ascii() || ('\u{00C0}'..='\u{024F}').contains(&c) => 0,
        '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}' => 1,
        '\u{0400}'..='\u{052F}' => 2,
        _ if han(c) || kana(c) => 3,
        '\u{AC00}'..='\u{D7AF}' | '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}' => 4,
        _ => 5,
    })
}

/// The scripts of a text's letters beyond Latin, as bits of `letter_script`'s numbers.
pub fn scripts_beyond_latin(text: &str) -> u8 {
    text.chars()
        .filter_map(letter_script)
        .filter(|&s| s > 0)
        .fold(0, |m, s| m | 1 << s)
}

/// Whether a reading looks like letters of one script read by a model of another: a word
/// mixing two scripts' letters (`Kαλnμépα`: Greek read with Latin lookalikes), a digit inside a lower-case word (`Co6paHne`: Cyrillic read as Latin), or
/// a maths sign or small digit against a letter (`S13d₁ uou1^p^∩o`: Greek).
/// Chinese and Japanese run into Latin without a space in ordinary text (`使用Python`), so
/// that pair alone does not count.
pub fn looks_misread(text: &str) -> bool {
    words(text).any(|chars| {
        let scripts: std::collections::BTreeSet<u8> =
            chars.iter().filter_map(|&c| letter_script(c)).collect();
        // Greek or Cyrillic letters in a word with others. Not Latin with Chinese, Japanese
        // or Korean: `使用Python`, `PDF를` are ordinary.
        let mixed = scripts.len() > 1 && (scripts.contains(&1) || scripts.contains(&2));
        // A digit between two lower-case letters (`ID3v2` is a name; `第2章`, `제2회` are
        // ordinary: those scripts have no case).
        let digit_inside = chars
            .windows(3)
            .any(|w| w[1].is_ascii_digit() && w[0].is_lowercase() && w[2].is_lowercase());
        // A maths operator or a sub/superscript digit against a letter (`∩o`, `d₁`):
        // strokes of unknown letters read as symbols.
        let odd = |c: char| matches!(c, '\u{2200}'..='\u{22FF}' | '\u{2070}'..='\u{209F}');
        let symbol_in_word = chars
            .windows(2)
            .any(|w| (odd(w[0]) && w[1].is_alphabetic()) || (w[0].is_alphabetic() && odd(w[1])));
        mixed || digit_inside || symbol_in_word
    })
}

/// A reading's words, as characters (split at spaces and ASCII punctuation but `'`).
fn words(text: &str) -> impl Iterator<Item = Vec<char>> + '_ {
    text.split(|c: char| c.is_whitespace() || (c.is_ascii_punctuation() && c != '\''))
        .map(|w| w.chars().collect())
}

/// Whether a second reading has digits inside words of letters without case (Thai's
/// model read Hebrew as `ด7เว7 คเ7ษ` at 0.81). Real text does this too (`ราคา100บาท`), so
/// it only keeps a merely likely reading from being taken; a sure one is.
fn digits_in_words(text: &str) -> bool {
    words(text).any(|chars| {
        let caseless = |c: char| c.is_alphabetic() && !c.is_uppercase() && !c.is_lowercase();
        chars
            .windows(3)
            .any(|w| w[1].is_ascii_digit() && caseless(w[0]) && caseless(w[2]))
    })
}

/// The reading to take from those tried on a line PP-OCR read at `pp`, if any.
fn best_reading(
    tried: &mut Vec<(usize, String, f32)>,
    routes: &[(usize, String)],
    pp: f32,
) -> Option<(usize, String, f32)> {
    tried.sort_by(|a, b| b.2.total_cmp(&a.2));
    let (r, text, conf) = tried.first()?;
    let second = tried.get(1).map_or(0.0, |t| t.2);
    let in_script = SCRIPTS[routes[*r].0].reads_script(text);
    // A likely reading must not look misread itself: Thai's model read Hebrew as Thai
    // letters with digits inside words, at 0.81.
    let likely = *conf >= LIKELY
        && *conf > pp
        && conf - second >= MARGIN
        && !looks_misread(text)
        && !digits_in_words(text);
    let take = in_script && (*conf >= SURE || likely);
    take.then(|| tried.swap_remove(0))
}

/// The script Tesseract's detection sees in a line, with its confidence. The crop is
/// stacked six times (enlarged when its letters are small): detection counts characters
/// and gives up on one short line (a three-word Hebrew line needed six copies).
fn detect(osd: &Reader, crop: &RgbImage) -> Option<(String, f32)> {
    let f = (48.0 / crop.height().max(1) as f32).clamp(1.0, 4.0);
    let big = imageops::resize(
        crop,
        (crop.width() as f32 * f) as u32,
        (crop.height() as f32 * f) as u32,
        imageops::FilterType::Triangle,
    );
    let mut stacked = RgbImage::from_pixel(big.width(), big.height() * 6, image::Rgb([255; 3]));
    for k in 0..6 {
        imageops::replace(&mut stacked, &big, 0, (k * big.height()) as i64);
    }
    let seen = osd.script(&stacked);
    tracing::debug!(?seen, "script routing: detected");
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_of_a_script() {
        let s = |n: &str| SCRIPTS.iter().find(|s| s.name == n).unwrap();
        assert!(s("Hangul").reads_script("안녕하세요 TREASURE"));
        assert!(s("Hangul").reads_script("HARUTO 팬입니다. 팬으로서, HARUTO 씨"));
        assert!(!s("Hangul").reads_script("RULES AND INSTRUCTIONS 안녕"));
        assert!(s("Japanese").reads_script("会議は午後三時に始まります"));
        assert!(
            !s("Japanese").reads_script("会议在下午三点开始"),
            "Chinese, no kana"
        );
        assert!(s("Cyrillic").reads_script("Добрый день, 2024"));
        assert!(!s("Cyrillic").reads_script("Ao6pbIe AeHb"));
        assert!(!s("Thai").reads_script(""));
    }

    /// Readings in the wrong script, as PP-OCR made them on the fixtures, look misread;
    /// ordinary text in any script does not.
    #[test]
    fn misread_readings() {
        for bad in [
            "Kαλnμépα gαç, σuváõελφol",
            "Ao6pbIé AeHb, Konnern",
            "Co6paHne Ha4HêTca B Tpn 4aca",
            "S13d₁ S11o 132)Xdo uou1^p^∩o H",
        ] {
            assert!(looks_misread(bad), "{bad}");
        }
        for good in [
            "Quarterly report for the northern region",
            "Total amount due: 1,250.00 EUR",
            "MP3 files, ID3v2 tags, 10 μm and 5 µg, COVID-19, x ∈ A, 25 °C, m²",
            "使用Python读取PDF文件",
            "第2章 总则",
            "제2회 회의, PDF를 읽다",
            "第3回の会議",
            "ราคา100บาท",
            "Invoice #: 123, naïve café, Łódź",
            "안녕하세요, 저희는 YGEAS 그룹 TREASURE",
            "Собрание начнётся в 3 часа",
        ] {
            assert!(!looks_misread(good), "{good}");
        }
        // Thai's model on Hebrew: not taken as a merely likely reading.
        assert!(digits_in_words("nw กาเภเ ด7เว7 คเ7ษ"));
        assert!(!digits_in_words("สวัสดีครับ ยินดีต้อนรับ"));
    }
}
