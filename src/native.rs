//! Where the native parts (PDFium, and later ONNX Runtime and the OCR models) live:
//! the cache that `make native` (scripts/fetch_native.py) fills, found without any
//! environment variable; `DOCREADER_NATIVE_DIR` or a per-part variable overrides it.

use std::path::PathBuf;

/// The command that installs the native parts, for error hints.
pub const INSTALL_HINT: &str =
    "Run `make native` (python3 scripts/fetch_native.py) to install the native parts, then retry.";

/// The cache folders to search, in order.
pub fn dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(d) = std::env::var_os("DOCREADER_NATIVE_DIR") {
        out.push(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        out.push(PathBuf::from(d).join("docreader/native"));
    }
    if let Some(h) = std::env::var_os("HOME") {
        out.push(PathBuf::from(h).join(".cache/docreader/native"));
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            out.push(dir.join("native"));
        }
    }
    out
}

/// Find a native file: `env_override` (a variable holding a full path) first, then the
/// cache folders.
pub fn find(file: &str, env_override: Option<&str>) -> Result<PathBuf, String> {
    if let Some((var, p)) = env_override.and_then(|v| std::env::var_os(v).map(|p| (v, p))) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("{var}={} does not exist", p.display()))
        };
    }
    let dirs = dirs();
    dirs.iter()
        .map(|d| d.join(file))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "{file} not found (looked in {})",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// Variables the native libraries read when they load: ONNX Runtime records and uploads no
/// usage events (`ORT_DISABLE_TELEMETRY`), Tesseract runs one thread per read
/// (`OMP_THREAD_LIMIT`). Each is set only when the operator has not set it.
///
/// # Safety
/// Call it while the process has one thread (at the top of `main`): setting variables
/// beside threads that read the environment is a data race in libc. Nothing else in the
/// crate writes the environment (a unit test checks the sources).
pub unsafe fn init_process_env() {
    for (var, value) in [("ORT_DISABLE_TELEMETRY", "1"), ("OMP_THREAD_LIMIT", "1")] {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, value);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The environment is written once, at start-up, never lazily on some thread (a libc
    /// data race): only `init_process_env` may call `set_var`.
    #[test]
    fn only_start_up_writes_the_environment() {
        fn walk(dir: &std::path::Path, hits: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, hits);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let n = text.matches(concat!("set_", "var(")).count()
                        + text.matches(concat!("remove_", "var(")).count();
                    if n > 0 {
                        hits.push(format!("{}: {n}", p.display()));
                    }
                }
            }
        }
        let mut hits = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut hits,
        );
        assert_eq!(
            hits,
            vec![format!("{}/src/native.rs: 1", env!("CARGO_MANIFEST_DIR"))]
        );
    }
}
