//! Safe reading of zip-based packages (Office Open XML, OpenDocument): bounded entry
//! count, bounded per-entry and total uncompressed size, bounded compression ratio, all
//! checked on the bytes actually inflated (declared sizes are not trusted).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use zip::ZipArchive;

use crate::error::{ApiError, ErrorCode};

pub use crate::config::PackageLimits;

/// Parts that could inflate past this many bytes are checked before they are kept.
const PRECHECK_ABOVE: u64 = 32 * 1024 * 1024;

pub struct Package {
    zip: ZipArchive<Source>,
    limits: PackageLimits,
    inflated: u64,
    /// Entry indexes by lower-cased name, made at the first name not found as spelled.
    folded: std::cell::OnceCell<std::collections::HashMap<String, usize>>,
    /// The 64 KiB a part is inflated through, made once for all of the package's parts.
    scratch: Vec<u8>,
}

/// A package up to this size is read into memory whole, in one call: its directory and
/// parts are then read without a system call each (a 40-slide deck made ~300 small reads
/// and seeks).
const IN_MEMORY: u64 = 4 * 1024 * 1024;

/// Where a package's bytes come from: memory (small packages), or its file.
enum Source {
    Memory(std::io::Cursor<Vec<u8>>),
    File(File),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Source::Memory(c) => c.read(buf),
            Source::File(f) => f.read(buf),
        }
    }
}

impl std::io::Seek for Source {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        match self {
            Source::Memory(c) => c.seek(pos),
            Source::File(f) => f.seek(pos),
        }
    }
}

fn bomb(msg: String) -> ApiError {
    ApiError::new(ErrorCode::TooLarge, msg).with_hint(
        "The package inflates far beyond any real document (a zip bomb); it is not read.",
    )
}

impl Package {
    /// The caps this package is read under.
    pub fn limits(&self) -> &PackageLimits {
        &self.limits
    }

    pub fn open(path: &Path, limits: PackageLimits) -> Result<Self, ApiError> {
        let mut f = File::open(path).map_err(ApiError::internal)?;
        let len = f.metadata().map_err(ApiError::internal)?.len();
        let source = if len <= IN_MEMORY {
            let mut bytes = Vec::with_capacity(len as usize);
            f.read_to_end(&mut bytes).map_err(ApiError::internal)?;
            Source::Memory(std::io::Cursor::new(bytes))
        } else {
            Source::File(f)
        };
        let zip = ZipArchive::new(source).map_err(|e| {
            ApiError::new(ErrorCode::Corrupt, "the package is not a readable zip").with_cause(e)
        })?;
        if zip.len() > limits.max_entries {
            return Err(bomb(format!(
                "the package has {} entries (limit {})",
                zip.len(),
                limits.max_entries
            )));
        }
        Ok(Self {
            zip,
            limits,
            inflated: 0,
            folded: Default::default(),
            scratch: Vec::new(),
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .flatten()
            .map(|n| n.into_owned())
            .collect()
    }

    pub fn has(&self, name: &str) -> bool {
        self.index_of(name).is_some()
    }

    /// The entry of a part name. Part names compare without case (Office Open XML, ECMA-376
    /// part 2, 9.1.1.1.2): a writer's `xl/SharedStrings.bin` is the part its workbook calls
    /// `xl/sharedStrings.bin`. The name as spelled is tried first.
    fn index_of(&self, name: &str) -> Option<usize> {
        self.zip.index_for_name(name).or_else(|| {
            let folded = self.folded.get_or_init(|| {
                let mut by_name = std::collections::HashMap::new();
                for i in 0..self.zip.len() {
                    if let Some(Ok(n)) = self.zip.name_for_index(i) {
                        by_name.entry(n.to_lowercase()).or_insert(i);
                    }
                }
                by_name
            });
            folded.get(&name.to_lowercase()).copied()
        })
    }

    /// Inflate one entry within the caps; `None` when it does not exist.
    pub fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, ApiError> {
        let Some(i) = self.index_of(name) else {
            return Ok(None);
        };
        self.read_index(i).map(Some)
    }

    /// Inflate one entry within the caps, showing `visit` each piece as it comes and
    /// keeping none of it (a large part is read in 64 KiB, not whole); `false` when it does
    /// not exist.
    pub fn visit(&mut self, name: &str, mut visit: impl FnMut(&[u8])) -> Result<bool, ApiError> {
        let Some(i) = self.index_of(name) else {
            return Ok(false);
        };
        self.inflate_visiting(i, 0, &mut |_, piece| visit(piece))?;
        Ok(true)
    }

    fn read_index(&mut self, i: usize) -> Result<Vec<u8>, ApiError> {
        // Deflate expands at most 1032:1 and the reader cannot run past the compressed
        // size, so a part that could inflate past 32 MB is first counted without being
        // kept: a bomb then fails holding 64 KiB, not the cap's 256 MB.
        let compressed = self
            .zip
            .by_index_raw(i)
            .map(|e| e.compressed_size())
            .unwrap_or(u64::MAX);
        if compressed.saturating_mul(1032) > PRECHECK_ABOVE {
            let before = self.inflated;
            self.inflate(i, 0)?;
            self.inflated = before;
        }
        self.inflate(i, usize::MAX)
    }

    /// Inflate entry `i` within the caps, keeping at most its first `keep` bytes (the
    /// rest is counted and dropped, so a check pass holds 64 KiB, not the part).
    fn inflate(&mut self, i: usize, keep: usize) -> Result<Vec<u8>, ApiError> {
        self.inflate_visiting(i, keep, &mut |_, _| {})
    }

    /// `inflate`, showing `visit` every piece inflated with the entry's name.
    fn inflate_visiting(
        &mut self,
        i: usize,
        keep: usize,
        visit: &mut dyn FnMut(&str, &[u8]),
    ) -> Result<Vec<u8>, ApiError> {
        let limits = self.limits;
        let mut entry = self.zip.by_index(i).map_err(|e| {
            ApiError::new(ErrorCode::Corrupt, "a package part cannot be read").with_cause(e)
        })?;
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        let compressed = entry.compressed_size().max(1);
        let room = limits
            .max_entry_bytes
            .min(limits.max_total_bytes.saturating_sub(self.inflated));
        // What the part says it inflates to, trusted only to size the first allocation.
        let mut out = Vec::with_capacity(
            (entry.size().min(room) as usize)
                .min(keep)
                .min(IN_MEMORY as usize),
        );
        let mut len = 0u64;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.resize(64 * 1024, 0);
        loop {
            let n = entry.read(&mut buf).map_err(|e| {
                ApiError::new(ErrorCode::Corrupt, format!("part {name} is damaged")).with_cause(e)
            })?;
            if n == 0 {
                break;
            }
            visit(&name, &buf[..n]);
            let kept = keep.saturating_sub(out.len()).min(n);
            out.extend_from_slice(&buf[..kept]);
            len += n as u64;
            if len > room {
                return Err(bomb(format!("part {name} inflates past {} bytes", room)));
            }
            if len > limits.ratio_floor && len / compressed > limits.max_ratio {
                return Err(bomb(format!(
                    "part {name} inflates more than {}× its compressed size",
                    limits.max_ratio
                )));
            }
        }
        drop(entry);
        self.scratch = buf;
        self.inflated += len;
        Ok(out)
    }

    /// Inflate every entry (discarding the bytes) to prove the package is within its caps,
    /// and refuse XML parts that declare entities. For libraries that read the package
    /// themselves (calamine).
    pub fn check_all(&mut self) -> Result<(), ApiError> {
        self.check_where(|_| true)?;
        self.reset_count();
        Ok(())
    }

    /// `check_all` for the entries whose names `pick` chooses; the inflated total runs on
    /// across calls until `reset_count`, so a package checked in parts has the same caps.
    pub fn check_where(&mut self, pick: impl Fn(&str) -> bool) -> Result<(), ApiError> {
        self.check_where_visiting(pick, |_, _| {})
    }

    /// `check_where`, showing `visit` every piece of the chosen entries as it inflates
    /// (with the entry's name): what a caller looks for in a part costs no second inflate.
    pub fn check_where_visiting(
        &mut self,
        pick: impl Fn(&str) -> bool,
        mut visit: impl FnMut(&str, &[u8]),
    ) -> Result<(), ApiError> {
        for i in 0..self.zip.len() {
            // A name that does not decode is checked wherever "" is chosen.
            let chosen = match self.zip.name_for_index(i) {
                Some(Ok(n)) => pick(&n),
                _ => pick(""),
            };
            if !chosen {
                continue;
            }
            let bytes = self.inflate_visiting(i, 64 * 1024, &mut visit)?;
            if is_xml_part(&bytes) {
                super::xml::refuse_entities(&bytes)?;
            }
        }
        Ok(())
    }

    /// Start counting inflated bytes from zero (after a check pass).
    pub fn reset_count(&mut self) {
        self.inflated = 0;
    }
}

fn is_xml_part(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    let t = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &head[i..])
        .unwrap_or(&[]);
    t.starts_with(b"<") || t.starts_with(b"\xEF\xBB\xBF<")
}

/// `Id → (Target, kind)` of a part's relationships, targets resolved against `base_dir`.
pub fn relationships(
    pkg: &mut Package,
    rels_path: &str,
    base_dir: &str,
) -> Result<std::collections::HashMap<String, (String, String)>, ApiError> {
    Ok(relationship_list(pkg, rels_path, base_dir)?
        .into_iter()
        .map(|(id, kind, target)| (id, (target, kind)))
        .collect())
}

/// A part's relationships in document order: (Id, kind — the last segment of `Type` —,
/// Target resolved against `base_dir`; a target outside the package, `TargetMode="External"`,
/// as written: `https://…`, `mailto:…`).
pub fn relationship_list(
    pkg: &mut Package,
    rels_path: &str,
    base_dir: &str,
) -> Result<Vec<(String, String, String)>, ApiError> {
    use super::xml::{attr, walk, Node};
    let mut out = Vec::new();
    let Some(xml) = pkg.read(rels_path)? else {
        return Ok(out);
    };
    walk(&xml, pkg.limits().max_xml_depth, |n| {
        if let Node::Open("Relationship", a) = n {
            if let (Some(id), Some(target)) = (attr(a, "Id"), attr(a, "Target")) {
                let kind = attr(a, "Type")
                    .unwrap_or("")
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_string();
                // An external target, or a place inside the document (`#Sheet2!A1`), is
                // kept as written: neither is a part to resolve.
                let target = if attr(a, "TargetMode") == Some("External")
                    || target.trim_start().starts_with('#')
                {
                    target.trim().to_string()
                } else {
                    resolve(base_dir, target)
                };
                out.push((id.to_string(), kind, target));
            }
        }
    })?;
    Ok(out)
}

/// Where a part's relationships are, and the folder its targets resolve against:
/// `word/document.xml` → (`word/_rels/document.xml.rels`, `word`).
pub fn rels_of(part: &str) -> (String, &str) {
    match part.rsplit_once('/') {
        Some((dir, file)) => (format!("{dir}/_rels/{file}.rels"), dir),
        None => (format!("_rels/{part}.rels"), ""),
    }
}

/// A part's relationships (`relationships` of its `rels_of`).
pub fn part_relationships(
    pkg: &mut Package,
    part: &str,
) -> Result<std::collections::HashMap<String, (String, String)>, ApiError> {
    let (rels, dir) = rels_of(part);
    relationships(pkg, &rels, dir)
}

/// `ppt/slides` + `../notesSlides/n1.xml` → `ppt/notesSlides/n1.xml`.
pub fn resolve(base_dir: &str, target: &str) -> String {
    if let Some(abs) = target.strip_prefix('/') {
        return abs.to_string();
    }
    let mut parts: Vec<&str> = base_dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in target.split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// The package folder an embedded object's `xlink:href` names (OpenDocument: `./Object 1`
/// → `Object 1`), or `None` for one outside the package: an address, an absolute path, a
/// path up.
pub fn object_folder(href: &str) -> Option<&str> {
    let folder = href.trim_start_matches("./").trim_end_matches('/');
    let outside = folder.is_empty()
        || folder.contains(':')
        || folder.starts_with('/')
        || folder.split('/').any(|p| p == "..");
    (!outside).then_some(folder)
}
