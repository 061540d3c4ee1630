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
