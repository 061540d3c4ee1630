//! Tesseract as the second local engine, for scripts the PP-OCR `ch` models do not read
//! (Korean, Japanese including vertical text, and the other languages whose
//! `*.traineddata` are installed). libtesseract is loaded at run time through its C API
//! (like PDFium and ONNX Runtime), so the service builds and starts without it; a worker
//! process contains any crash. One `TessBaseAPI` per recognition: it is not thread-safe.

use std::ffi::{c_char, c_int, c_uchar, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

use image::RgbImage;

use super::{OcrEngine, OcrLine};
use crate::error::{ApiError, ErrorCode};

pub const NAME: &str = "tesseract";

type Handle = *mut c_void;

struct Api {
    _lib: libloading::Library,
    create: unsafe extern "C" fn() -> Handle,
    init3: unsafe extern "C" fn(Handle, *const c_char, *const c_char) -> c_int,
    set_image: unsafe extern "C" fn(Handle, *const c_uchar, c_int, c_int, c_int, c_int),
    set_psm: unsafe extern "C" fn(Handle, c_int),
    recognize: unsafe extern "C" fn(Handle, *mut c_void) -> c_int,
    tsv: unsafe extern "C" fn(Handle, c_int) -> *mut c_char,
    delete_text: unsafe extern "C" fn(*const c_char),
    end: unsafe extern "C" fn(Handle),
    delete: unsafe extern "C" fn(Handle),
    version: unsafe extern "C" fn() -> *const c_char,
    detect_script: Option<
        unsafe extern "C" fn(Handle, *mut c_int, *mut f32, *mut *const c_char, *mut f32) -> c_int,
    >,
    set_variable: Option<unsafe extern "C" fn(Handle, *const c_char, *const c_char) -> c_int>,
    utf8: Option<unsafe extern "C" fn(Handle) -> *mut c_char>,
    mean_conf: Option<unsafe extern "C" fn(Handle) -> c_int>,
}

fn load() -> Result<Api, String> {
    let path = std::env::var_os("DOCREADER_TESSERACT_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("libtesseract.so.5"));
    // SAFETY: loading libtesseract runs its initialisers, which have no preconditions.
    let lib = unsafe { libloading::Library::new(&path) }
        .map_err(|e| format!("{} cannot be loaded: {e}", path.display()))?;
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol has the C API signature of tesseract/capi.h.
            *unsafe { lib.get($name) }.map_err(|e| format!("libtesseract lacks a symbol: {e}"))?
        };
    }
    Ok(Api {
        create: sym!(b"TessBaseAPICreate"),
        init3: sym!(b"TessBaseAPIInit3"),
        set_image: sym!(b"TessBaseAPISetImage"),
        set_psm: sym!(b"TessBaseAPISetPageSegMode"),
        recognize: sym!(b"TessBaseAPIRecognize"),
        tsv: sym!(b"TessBaseAPIGetTsvText"),
        delete_text: sym!(b"TessDeleteText"),
        end: sym!(b"TessBaseAPIEnd"),
        delete: sym!(b"TessBaseAPIDelete"),
        version: sym!(b"TessVersion"),
        // SAFETY: the symbol has the signature of tesseract/capi.h (Tesseract 4 and 5).
        detect_script: unsafe { lib.get(b"TessBaseAPIDetectOrientationScript") }
            .ok()
            .map(|f| *f),
        // SAFETY: as above.
        set_variable: unsafe { lib.get(b"TessBaseAPISetVariable") }
            .ok()
            .map(|f| *f),
        // SAFETY: as above.
        utf8: unsafe { lib.get(b"TessBaseAPIGetUTF8Text") }
            .ok()
            .map(|f| *f),
        // SAFETY: as above.
        mean_conf: unsafe { lib.get(b"TessBaseAPIMeanTextConf") }
            .ok()
            .map(|f| *f),
        _lib: lib,
    })
}

fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        // Tesseract's OpenMP threads burn several cores for the same output; reads are
        // parallel across workers instead: `native::init_process_env` sets OMP_THREAD_LIMIT
        // at start-up (unless the operator says otherwise).
        load()
    })
    .as_ref()
    .map_err(|e| e.as_str())
}

/// The library's version, when it loads.
pub fn version() -> Option<String> {
    let api = api().ok()?;
    // SAFETY: TessVersion returns a static NUL-terminated string.
    Some(
        unsafe { CStr::from_ptr((api.version)()) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Where the `*.traineddata` files are.
pub fn tessdata() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for var in ["DOCREADER_TESSDATA", "TESSDATA_PREFIX"] {
        if let Some(d) = std::env::var_os(var) {
            let d = PathBuf::from(d);
            dirs.push(d.join("tessdata"));
            dirs.push(d);
        }
    }
    for d in [
        "/usr/share/tesseract-ocr/5/tessdata",
        "/usr/share/tesseract-ocr/4.00/tessdata",
        "/usr/share/tessdata",
        "/usr/local/share/tessdata",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter()
        .find(|d| d.join("eng.traineddata").is_file() || has_any(d))
}

fn has_any(d: &std::path::Path) -> bool {
    std::fs::read_dir(d).is_ok_and(|mut r| {
        r.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".traineddata")))
    })
}

/// Installed languages (traineddata names), sorted; empty when Tesseract is missing.
pub fn installed() -> Vec<String> {
    if api().is_err() {
        return Vec::new();
    }
    installed_data()
}

/// The languages whose traineddata is installed, without loading the library (which
/// costs 15–30 ms): what a read's remembered results depend on.
pub fn installed_data() -> Vec<String> {
    let Some(dir) = tessdata() else {
        return Vec::new();
    };
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_suffix(".traineddata")
                        .filter(|n| *n != "osd")
                        .map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Tesseract with a language set, e.g. `eng+kor`.
pub struct Tesseract {
    langs: String,
}

impl Tesseract {
    pub fn new(langs: &[String]) -> Self {
        Self {
            langs: langs.join("+"),
        }
    }

    pub fn langs(&self) -> &str {
        &self.langs
    }
}

/// A live `TessBaseAPI` handle, ended and deleted when dropped. Only `open` makes one, and
/// only from a handle that is not null.
struct Session<'a>(&'a Api, Handle);

impl<'a> Session<'a> {
    /// Create a handle; `None` when Tesseract could not (then there is nothing to end).
    ///
    /// # Safety
    /// `api` holds the C API's functions.
    unsafe fn open(api: &'a Api) -> Option<Self> {
        let h = (api.create)();
        // `then`, not `then_some`: an eagerly built session would be dropped (ended) here.
        (!h.is_null()).then(|| Self(api, h))
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from TessBaseAPICreate and is ended and deleted once.
        unsafe {
            (self.0.end)(self.1);
            (self.0.delete)(self.1);
        }
    }
}

impl OcrEngine for Tesseract {
    fn name(&self) -> &'static str {
        NAME
    }

    fn is_local(&self) -> bool {
        true
    }

    fn is_available(&self) -> bool {
        let Some(dir) = tessdata() else { return false };
        api().is_ok()
            && self
                .langs
                .split('+')
                .all(|l| dir.join(format!("{l}.traineddata")).is_file())
    }

    fn memory_variant(&self) -> String {
        format!(
            "tesseract-{}/{}/1",
            version().unwrap_or_default(),
            self.langs
        )
    }

    fn recognize(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        // PSM_AUTO, as the tesseract command uses: the API's default is one uniform
        // block, which reads columns and vertical text as noise.
        Reader::open(&self.langs, 3)?.read(image)
    }
}

/// An initialised Tesseract session, kept for several images (the lines of a page read
/// with one language set): loading a language's model costs more than reading a line.
pub struct Reader {
    session: Session<'static>,
}

impl Reader {
    /// A session for `langs` (`kor+eng`; `osd` for `script`) in page segmentation mode
    /// `psm` (3 a page, 7 one line, 0 orientation and script only).
    pub fn open(langs: &str, psm: c_int) -> Result<Self, ApiError> {
        let api = api().map_err(|e| {
            ApiError::new(ErrorCode::NoOcrEngine, "Tesseract is not usable").with_cause(e)
        })?;
        let dir = tessdata().ok_or_else(|| {
            ApiError::new(ErrorCode::NoOcrEngine, "no Tesseract language data found")
        })?;
        let datapath =
            CString::new(dir.to_string_lossy().as_bytes()).map_err(ApiError::internal)?;
        let c_langs = CString::new(langs.as_bytes()).map_err(ApiError::internal)?;
        // SAFETY: a created handle, initialised before use; the session ends and deletes it.
        unsafe {
            let Some(s) = Session::open(api) else {
                return Err(ApiError::internal("TessBaseAPICreate failed"));
            };
            if (api.init3)(s.1, datapath.as_ptr(), c_langs.as_ptr()) != 0 {
                return Err(ApiError::new(
                    ErrorCode::NoOcrEngine,
                    format!("Tesseract cannot load the languages {langs}"),
                ));
            }
            (api.set_psm)(s.1, psm);
            // Its remarks ("Too few characters", "Estimating resolution") go nowhere rather
            // than to the service's stderr, once per line read.
            if let Some(set) = api.set_variable {
                set(s.1, c"debug_file".as_ptr(), c"/dev/null".as_ptr());
            }
            Ok(Self { session: s })
        }
    }

    /// Hand `image` to the session (it must outlive the next call that reads it).
    fn set_image(&self, image: &RgbImage) {
        let (w, h) = image.dimensions();
        let raw = image.as_raw();
        // SAFETY: an initialised handle and a w*h*3 byte buffer with stride w*3; Tesseract
        // copies it into its own image.
        unsafe {
            (self.session.0.set_image)(
                self.session.1,
                raw.as_ptr(),
                w as c_int,
                h as c_int,
                3,
                (w * 3) as c_int,
            );
        }
    }

    /// The lines in `image`.
    pub fn read(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        let (w, h) = image.dimensions();
        if w < 3 || h < 3 {
            return Ok(Vec::new());
        }
        let api = self.session.0;
        self.set_image(image);
        // No resolution is set: images rarely carry a true one, and Tesseract estimates it
        // from the text height (setting 300 dpi on a small screenshot makes its characters
        // look 5 pt high and the result garbage).
        // SAFETY: an initialised handle with an image set; the TSV text is freed with
        // TessDeleteText.
        unsafe {
            if (api.recognize)(self.session.1, std::ptr::null_mut()) != 0 {
                return Err(ApiError::internal(
                    "Tesseract could not recognise the image",
                ));
            }
            let p = (api.tsv)(self.session.1, 0);
            if p.is_null() {
                return Ok(Vec::new());
            }
            let tsv = CStr::from_ptr(p).to_string_lossy().into_owned();
            (api.delete_text)(p);
            let mut lines = parse_tsv(&tsv);
            if let Some(utf8) = api.utf8 {
                let p = utf8(self.session.1);
                if !p.is_null() {
                    let text = CStr::from_ptr(p).to_string_lossy().into_owned();
                    (api.delete_text)(p);
                    respace(&mut lines, &text);
                }
            }
            Ok(lines)
        }
    }

    /// `image` read as one line (a session opened in mode 7): its text, spaced as
    /// Tesseract writes it (its word boxes split Korean words into syllables and Thai into
    /// letters), and its mean confidence, 0–1. `None` when it reads nothing.
    pub fn read_line(&self, image: &RgbImage) -> Result<Option<(String, f32)>, ApiError> {
        let api = self.session.0;
        let (Some(utf8), Some(mean_conf)) = (api.utf8, api.mean_conf) else {
            let lines = self.read(image)?;
            let text = lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>();
            return Ok(super::mean_confidence(&lines).map(|c| (text.join(" "), c)));
        };
        let (w, h) = image.dimensions();
        if w < 3 || h < 3 {
            return Ok(None);
        }
        self.set_image(image);
        // SAFETY: an initialised handle with an image set; the text is freed with
        // TessDeleteText.
        unsafe {
            if (api.recognize)(self.session.1, std::ptr::null_mut()) != 0 {
                return Err(ApiError::internal("Tesseract could not recognise a line"));
            }
            let p = utf8(self.session.1);
            if p.is_null() {
                return Ok(None);
            }
            let text = CStr::from_ptr(p).to_string_lossy().into_owned();
            (api.delete_text)(p);
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let conf = mean_conf(self.session.1).clamp(0, 100) as f32 / 100.0;
            Ok((!text.is_empty()).then_some((text, conf)))
        }
    }

    /// The script Tesseract's orientation and script detection sees in `image` and its
    /// confidence (a session opened with `osd`, mode 0); `None` when it sees too little.
    pub fn script(&self, image: &RgbImage) -> Option<(String, f32)> {
        let detect = self.session.0.detect_script?;
        self.set_image(image);
        let (mut deg, mut oconf, mut name, mut sconf) = (0, 0.0f32, std::ptr::null(), 0.0f32);
        // SAFETY: an initialised `osd` handle with an image set; `name` points to a string
        // Tesseract owns, copied before the session is used again.
        unsafe {
            if detect(self.session.1, &mut deg, &mut oconf, &mut name, &mut sconf) == 0
                || name.is_null()
            {
                return None;
            }
            Some((CStr::from_ptr(name).to_string_lossy().into_owned(), sconf))
        }
    }
}

/// Gives each line the spacing of Tesseract's own text (`GetUTF8Text`), which knows
/// where a space was: the TSV lists a Korean word's syllables, and Thai's letters, as
/// words of their own (`회 의 는` for `회의는`). Only when the text has the same lines with
/// the same characters (spaces aside); otherwise the TSV's words stay.
fn respace(lines: &mut [OcrLine], text: &str) {
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let written: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    if written.len() != lines.len()
        || lines
            .iter()
            .zip(&written)
            .any(|(l, w)| squeeze(&l.text) != squeeze(w))
    {
        return;
    }
    for (l, w) in lines.iter_mut().zip(written) {
        l.text = w;
    }
}

/// Whether `c` is written without spaces around it: Chinese and Japanese characters
/// (Han, kana, CJK and fullwidth punctuation; Hangul is spaced). Also where a PDF paragraph's
/// lines are joined (`extract::pdf::paragraphs`).
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF | 0x20000..=0x3FFFF)
}

/// Tesseract's TSV (level 5 = words) grouped into lines. Words are joined with a space,
/// except between Chinese or Japanese characters, which are written without one.
fn parse_tsv(tsv: &str) -> Vec<OcrLine> {
    struct Acc {
        key: (u32, u32, u32, u32),
        text: String,
        bbox: [u32; 4],
        conf: f32,
        words: u32,
    }
    let mut lines: Vec<Acc> = Vec::new();
    for row in tsv.lines() {
        let f: Vec<&str> = row.splitn(12, '\t').collect();
        if f.len() < 12 || f[0] != "5" {
            continue;
        }
        let n = |i: usize| f[i].trim().parse::<i64>().unwrap_or(0).max(0) as u32;
        let word = f[11].trim();
        let conf: f32 = f[10].trim().parse().unwrap_or(-1.0);
        if word.is_empty() || conf < 0.0 {
            continue;
        }
        let key = (n(1), n(2), n(3), n(4));
        let (x0, y0) = (n(6), n(7));
        let (x1, y1) = (x0 + n(8), y0 + n(9));
        match lines.last_mut() {
            Some(l) if l.key == key => {
                let joined = l.text.chars().last().is_some_and(is_cjk)
                    && word.chars().next().is_some_and(is_cjk);
                if !joined {
                    l.text.push(' ');
                }
                l.text.push_str(word);
                l.bbox = [
                    l.bbox[0].min(x0),
                    l.bbox[1].min(y0),
                    l.bbox[2].max(x1),
                    l.bbox[3].max(y1),
                ];
                l.conf += conf;
                l.words += 1;
            }
            _ => lines.push(Acc {
                key,
                text: word.to_string(),
                bbox: [x0, y0, x1, y1],
                conf,
                words: 1,
            }),
        }
    }
    lines
        .into_iter()
        .map(|l| OcrLine {
            text: l.text,
            bbox: l.bbox,
            confidence: (l.conf / l.words as f32 / 100.0).clamp(0.0, 1.0),
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_words_become_lines() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   4\t1\t1\t1\t1\t0\t10\t10\t200\t20\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t10\t10\t50\t20\t96.5\tHello\n\
                   5\t1\t1\t1\t1\t2\t70\t12\t60\t18\t91.5\tworld\n\
                   5\t1\t1\t1\t2\t1\t10\t40\t20\t20\t90\t文字\n\
                   5\t1\t1\t1\t2\t2\t30\t40\t20\t20\t80\tを上\n\
                   5\t1\t1\t1\t2\t3\t50\t40\t20\t20\t70\tOK\n";
        let lines = parse_tsv(tsv);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].text, "Hello world");
        assert_eq!(lines[0].bbox, [10, 10, 130, 30]);
        assert!((lines[0].confidence - 0.94).abs() < 1e-4);
        assert_eq!(lines[1].text, "文字を上 OK");
    }
}

#[cfg(test)]
mod respace_tests {
    use super::*;

    #[test]
    fn lines_take_tesseracts_spacing_when_they_match() {
        let line = |t: &str| OcrLine {
            text: t.into(),
            ..Default::default()
        };
        let mut lines = vec![line("회 의 는 오후 세 시 에"), line("RULES AND")];
        respace(&mut lines, "회의는 오후 세 시에\n\nRULES AND\n");
        assert_eq!(lines[0].text, "회의는 오후 세 시에");
        assert_eq!(lines[1].text, "RULES AND");
        // Different characters or lines: left as they were.
        let mut lines = vec![line("회 의 는")];
        respace(&mut lines, "회의");
        assert_eq!(lines[0].text, "회 의 는");
        respace(&mut lines, "회의는\n다른 줄");
        assert_eq!(lines[0].text, "회 의 는");
    }
}

#[cfg(test)]
mod session_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static ENDED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn null_create() -> Handle {
        std::ptr::null_mut()
    }
    unsafe extern "C" fn count_end(_: Handle) {
        ENDED.fetch_add(1, Ordering::SeqCst);
    }
    unsafe extern "C" fn no_init(_: Handle, _: *const c_char, _: *const c_char) -> c_int {
        -1
    }
    unsafe extern "C" fn no_image(
        _: Handle,
        _: *const c_uchar,
        _: c_int,
        _: c_int,
        _: c_int,
        _: c_int,
    ) {
    }
    unsafe extern "C" fn no_psm(_: Handle, _: c_int) {}
    unsafe extern "C" fn no_recognize(_: Handle, _: *mut c_void) -> c_int {
        -1
    }
    unsafe extern "C" fn no_tsv(_: Handle, _: c_int) -> *mut c_char {
        std::ptr::null_mut()
    }
    unsafe extern "C" fn no_delete_text(_: *const c_char) {}
    unsafe extern "C" fn no_version() -> *const c_char {
        std::ptr::null()
    }

    /// A handle Tesseract failed to create is never ended or deleted (before, the session
    /// wrapped it first and its `Drop` called End/Delete on null).
    #[test]
    fn a_null_handle_is_never_ended() {
        // SAFETY: libc is loaded only to own a library handle; no symbol is used.
        let lib = unsafe { libloading::Library::new("libc.so.6") }.unwrap();
        let api = Api {
            _lib: lib,
            create: null_create,
            init3: no_init,
            set_image: no_image,
            set_psm: no_psm,
            recognize: no_recognize,
            tsv: no_tsv,
            delete_text: no_delete_text,
            end: count_end,
            delete: count_end,
            version: no_version,
            detect_script: None,
            set_variable: None,
            utf8: None,
            mean_conf: None,
        };
        // SAFETY: the API's functions are the test's own.
        assert!(unsafe { Session::open(&api) }.is_none());
        assert_eq!(ENDED.load(Ordering::SeqCst), 0);
    }
}
