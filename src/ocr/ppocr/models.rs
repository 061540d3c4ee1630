//! The models on disk and in memory: model files (shipped or fused by `make native`), the
//! recognition dictionary, ONNX Runtime sessions with the cache of their optimised graphs,
//! and `load`, which builds them all once per process.

use std::path::PathBuf;
use std::sync::Mutex;

use ort::session::Session;

use super::{PpOcr, REC_DICT, REC_MODEL};
use crate::error::{ApiError, ErrorCode};

pub(super) struct Models {
    /// The ONNX Runtime environment the sessions were built in (tests open more).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) env: ort::environment::Environment,
    pub(super) det: Mutex<Session>,
    /// Recognition sessions that run side by side, each on its own thread: on 2 cores,
    /// two single-threaded sessions recognise a page 10 % faster than one session with two
    /// intra-op threads (25 % in a bare ONNX Runtime loop).
    pub(super) rec: Vec<Mutex<Session>>,
    pub(super) cls: Mutex<Session>,
    /// Index 0 is the CTC blank; the last entry is a space.
    pub(super) dict: Vec<String>,
    /// The page layout model (`ocr::page_layout`), opened on its first use.
    pub(super) layout: std::sync::OnceLock<crate::ocr::page_layout::LayoutSession>,
}

/// A model or library from the native cache.
pub(super) fn part(file: &str) -> Result<PathBuf, String> {
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
pub(super) fn threads() -> usize {
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
        layout: std::sync::OnceLock::new(),
    })
}

impl Models {
    /// The page layout model's session, opened in these models' environment on first use.
    pub(super) fn layout(&self) -> Result<&Mutex<Session>, String> {
        self.layout
            .get_or_init(|| {
                open_session(
                    &self.env,
                    &part(crate::ocr::page_layout::MODEL_FILE)?,
                    threads(),
                )
                .map(Mutex::new)
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl PpOcr {
    pub(super) fn models(&self) -> Result<&Models, ApiError> {
        self.models.get_or_init(load).as_ref().map_err(|e| {
            ApiError::new(ErrorCode::NoOcrEngine, "the OCR engine cannot start")
                .with_cause(e)
                .with_hint(crate::native::INSTALL_HINT)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Mutex;

    use image::imageops::{self, FilterType};
    use image::RgbImage;
    use ort::session::Session;

    use super::super::detect::regions;
    use super::super::preprocess::{crop, to_tensor};
    use super::super::recognize::{ctc_chars, run, summary, REC_HEIGHT};
    use super::super::{engine, hello_png};
    use super::{model_file, open_session, part};

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
            .map(|k| summary(&ctc_chars(&probs.view(), k, &m.dict).unwrap()).0)
            .collect();
        assert!(
            text.join(" ").contains("Hello OCR world 2026"),
            "read {text:?}"
        );
    }
}
