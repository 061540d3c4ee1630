//! Mutation fuzzing on stable Rust (issue #15): seeds from fixtures/ and the shared corpus,
//! mutated structure-aware (bytes; zip members and the XML inside them; PDF objects), each
//! input read through the real read path (sniffing, planning, the executor) with every
//! extractor running in a worker process, as `serve` runs them. A finding is any outcome
//! that is not an envelope or a typed refusal: the worker crashed, a read ran past its
//! deadline (plus the grace period), the worker's memory cap was hit, an internal error.
//!
//!   cargo build --examples && target/debug/examples/fuzz --seconds 60 --seed 1
//!   make fuzz MINUTES=60
//!
//! Findings are written to `--out` (default `target/fuzz-findings`) with what happened;
//! fixed ones move to `fixtures/fuzz/`, which the test suite reads on every run. The exit
//! status is 1 when anything was found.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use docreader::config::Limits;
use docreader::error::ErrorCode;
use docreader::metrics::Metrics;
use docreader::options::{Ocr, ReadRequest};
use docreader::read::{Executor, ReadService};
use docreader::worker::{Pool, PoolConfig};

/// Seeds larger than this are skipped (reading them is slow and mutations rarely matter).
const MAX_SEED_BYTES: u64 = 2 * 1024 * 1024;

struct Args {
    seconds: u64,
    seed: u64,
    workers: usize,
    deadline_ms: i64,
    out: PathBuf,
    bin: PathBuf,
    dirs: Vec<PathBuf>,
    worker_memory_mb: u64,
}

fn parse_args() -> Args {
    let mut a = Args {
        seconds: 60,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(1),
        workers: 2,
        deadline_ms: 5_000,
        out: PathBuf::from("target/fuzz-findings"),
        bin: std::env::var_os("DOCREADER_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(sibling_binary),
        dirs: Vec::new(),
        // What `serve` gives its workers by default (`--worker-memory-mb`).
        worker_memory_mb: 4096,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")))
        };
        match flag.as_str() {
            "--seconds" => a.seconds = val().parse().unwrap_or_else(|_| usage("--seconds N")),
            "--minutes" => {
                a.seconds = val()
                    .parse::<u64>()
                    .unwrap_or_else(|_| usage("--minutes N"))
                    * 60
            }
            "--seed" => a.seed = val().parse().unwrap_or_else(|_| usage("--seed N")),
            "--workers" => a.workers = val().parse().unwrap_or_else(|_| usage("--workers N")),
            "--deadline-ms" => {
                a.deadline_ms = val().parse().unwrap_or_else(|_| usage("--deadline-ms N"))
            }
            "--worker-memory-mb" => {
                a.worker_memory_mb = val()
                    .parse()
                    .unwrap_or_else(|_| usage("--worker-memory-mb N"))
            }
            "--out" => a.out = PathBuf::from(val()),
            "--bin" => a.bin = PathBuf::from(val()),
            "--seeds" => a.dirs.push(PathBuf::from(val())),
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    if a.dirs.is_empty() {
        a.dirs = vec![PathBuf::from("fixtures"), PathBuf::from("tests/corpus")];
    }
    a
}

fn usage(why: &str) -> ! {
    if !why.is_empty() {
        eprintln!("fuzz: {why}");
    }
    eprintln!(
        "usage: fuzz [--seconds N | --minutes N] [--seed N] [--workers N] [--deadline-ms N]\n\
         \x20           [--worker-memory-mb N] [--out DIR] [--bin DOCREADER] [--seeds DIR]..."
    );
    std::process::exit(2)
}

/// `target/debug/docreader` beside `target/debug/examples/fuzz`.
fn sibling_binary() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("docreader")))
        .unwrap_or_else(|| PathBuf::from("docreader"))
}

/// A seed file: its bytes and the name (extension) it is read under.
struct Seed {
    name: String,
    bytes: Vec<u8>,
}

fn collect_seeds(dirs: &[PathBuf]) -> Vec<Seed> {
    let mut paths = Vec::new();
    for d in dirs {
        walk(d, &mut paths);
    }
    paths.sort();
    let mut seeds = Vec::new();
    for p in paths {
        let Ok(meta) = std::fs::metadata(&p) else {
            continue;
        };
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Generator scripts, manifests and notes are not documents to read.
        if meta.len() == 0
            || meta.len() > MAX_SEED_BYTES
            || name.ends_with(".py")
            || name.ends_with(".sh")
            || name == "MANIFEST.tsv"
        {
            continue;
        }
        if let Ok(bytes) = std::fs::read(&p) {
            seeds.push(Seed { name, bytes });
        }
    }
    seeds
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

/// xorshift64*: deterministic per seed, which is all a mutator needs.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Values that break parsers more often than random ones.
const INTERESTING_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "-2147483648",
    "4294967295",
    "18446744073709551615",
    "99999999999999999999",
    "1e308",
    "NaN",
    "-0",
    "0.5",
];
const INTERESTING_BYTES: &[u8] = &[0x00, 0xFF, 0x7F, 0x80, 0x0A, 0x0D, b'<', b'>', b'"', b'%'];

/// One mutation of bytes, format-blind.
fn mutate_bytes(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    if data.is_empty() {
        data.extend_from_slice(&other[..other.len().min(64)]);
        return;
    }
    let len = data.len();
    match rng.below(9) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
        }
        1 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(data.len());
                data[i] = *rng.pick(INTERESTING_BYTES);
            }
        }
        2 => data.truncate(rng.below(len)),
        3 => {
            let a = rng.below(len);
            let b = (a + 1 + rng.below(4096)).min(len);
            data.drain(a..b);
        }
        4 => {
            // Repeat a chunk (nesting, duplicated records).
            let a = rng.below(len);
            let b = (a + 1 + rng.below(512)).min(len);
            let chunk = data[a..b].to_vec();
            let most = if rng.chance(8) { 200 } else { 4 };
            let times = 1 + rng.below(most);
            let at = rng.below(len);
            for _ in 0..times {
                data.splice(at..at, chunk.iter().copied());
            }
        }
        5 => {
            let at = rng.below(len);
            let n = 1 + rng.below(32);
            let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            data.splice(at..at, junk);
        }
        6 => {
            // Splice in a piece of another seed.
            if !other.is_empty() {
                let a = rng.below(other.len());
                let b = (a + 1 + rng.below(2048)).min(other.len());
                let at = rng.below(len);
                let end = (at + (b - a)).min(len);
                data.splice(at..end, other[a..b].iter().copied());
            }
        }
        7 => replace_number(rng, data),
        _ => {
            // Overwrite a 4-byte field with an extreme value (sizes, offsets, counts).
            if len >= 4 {
                let i = rng.below(len - 3);
                let v: u32 = *rng.pick(&[0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF]);
                let bytes = if rng.chance(2) {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                };
                data[i..i + 4].copy_from_slice(&bytes);
            }
        }
    }
}

/// Replace one ASCII number in the data with an interesting one (counts, lengths,
/// offsets, sizes in PDF dictionaries and XML attributes).
fn replace_number(rng: &mut Rng, data: &mut Vec<u8>) {
    let starts: Vec<usize> = data
        .windows(2)
        .enumerate()
        .filter(|(_, w)| !w[0].is_ascii_digit() && w[1].is_ascii_digit())
        .map(|(i, _)| i + 1)
        .take(100_000)
        .collect();
    if starts.is_empty() {
        return;
    }
    let a = *rng.pick(&starts);
    let mut b = a;
    while b < data.len() && data[b].is_ascii_digit() {
        b += 1;
    }
    let n = rng.pick(INTERESTING_NUMBERS).as_bytes().to_vec();
    data.splice(a..b, n);
}

/// XML mutations: unbalanced or duplicated elements, deep nesting, odd references.
fn mutate_xml(rng: &mut Rng, data: &mut Vec<u8>) {
    let tags: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b'<')
        .map(|(i, _)| i)
        .take(100_000)
        .collect();
    if tags.is_empty() {
        return mutate_bytes(rng, data, &[]);
    }
    let a = *rng.pick(&tags);
    let b = data[a..]
        .iter()
        .position(|&c| c == b'>')
        .map(|p| a + p + 1)
        .unwrap_or(data.len());
    match rng.below(6) {
        0 => {
            data.drain(a..b);
        }
        1 => {
            // The same start tag many times over: deep nesting.
            let tag = data[a..b].to_vec();
            let most = if rng.chance(4) { 5_000 } else { 20 };
            let times = 1 + rng.below(most);
            for _ in 0..times {
                data.splice(a..a, tag.iter().copied());
            }
        }
        2 => {
            let refs: &[&[u8]] = &[
                b"&amp;",
                b"&#0;",
                b"&#x110000;",
                b"&undefined;",
                b"&#65535;",
                b"]]>",
            ];
            data.splice(b..b, rng.pick(refs).iter().copied());
        }
        3 => replace_number(rng, data),
        4 => {
            // An element moved elsewhere.
            let tag = data[a..b].to_vec();
            data.drain(a..b);
            let at = rng.below(data.len() + 1);
            data.splice(at..at, tag);
        }
        _ => mutate_bytes(rng, data, &[]),
    }
}

/// PDF mutations aimed at objects: the numbers in dictionaries (`/Count`, `/Length`,
/// `/W`, object references), keywords that end objects and streams, filters.
fn mutate_pdf(rng: &mut Rng, data: &mut Vec<u8>) {
    const KEYS: &[&[u8]] = &[
        b"/Count ",
        b"/Length ",
        b"/Size ",
        b"/W [",
        b"/N ",
        b"/First ",
        b"/Index [",
        b"/Kids [",
        b"/Parent ",
        b"/Root ",
        b"/Contents ",
        b"/Widths [",
        b"/Columns ",
    ];
    match rng.below(6) {
        0 | 1 => {
            let key = rng.pick(KEYS);
            let hits = find_all(data, key);
            if let Some(&at) = hits.get(rng.below(hits.len().max(1))) {
                let start = at + key.len();
                let mut end = start;
                while end < data.len() && (data[end].is_ascii_digit() || data[end] == b'-') {
                    end += 1;
                }
                let n = rng.pick(INTERESTING_NUMBERS).as_bytes().to_vec();
                data.splice(start..end, n);
            } else {
                replace_number(rng, data);
            }
        }
        2 => {
            const WORDS: &[&[u8]] = &[b"endobj", b"endstream", b"xref", b"trailer", b"startxref"];
            let word: &[u8] = *rng.pick(WORDS);
            let hits = find_all(data, word);
            if !hits.is_empty() {
                let at = *rng.pick(&hits);
                data.drain(at..at + word.len());
            }
        }
        3 => {
            let hits = find_all(data, b"/FlateDecode");
            if !hits.is_empty() {
                let at = *rng.pick(&hits);
                const TO: &[&[u8]] = &[
                    b"/LZWDecode",
                    b"/DCTDecode",
                    b"/JBIG2Decode",
                    b"/CCITTFaxDecode",
                    b"/RunLengthDecode",
                    b"/ASCII85Decode",
                    b"/JPXDecode",
                    b"/Crypt",
                ];
                let to: &[u8] = *rng.pick(TO);
                data.splice(at..at + 12, to.iter().copied());
            }
        }
        4 => {
            // An object reference pointed somewhere else (cycles, missing objects).
            let hits = find_all(data, b" 0 R");
            if !hits.is_empty() {
                let at = *rng.pick(&hits);
                let mut s = at;
                while s > 0 && data[s - 1].is_ascii_digit() {
                    s -= 1;
                }
                let n = format!("{}", 1 + rng.below(64)).into_bytes();
                data.splice(s..at, n);
            }
        }
        _ => mutate_bytes(rng, data, &[]),
    }
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return Vec::new();
    }
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .take(10_000)
        .collect()
}

/// Zip containers (OOXML, OpenDocument, EPUB): one member mutated (as XML when it is),
/// dropped or renamed, the archive written again so the container itself stays valid.
fn mutate_zip(rng: &mut Rng, data: &[u8]) -> Option<Vec<u8>> {
    use std::io::{Read, Write};
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(data)).ok()?;
    let mut members = Vec::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).ok()?;
        if f.size() > 32 * 1024 * 1024 {
            return None;
        }
        let mut buf = Vec::new();
        f.read_to_end(&mut buf).ok()?;
        members.push((f.name().ok()?.to_string(), buf));
    }
    if members.is_empty() {
        return None;
    }
    let target = rng.below(members.len());
    match rng.below(8) {
        0 => {
            members.remove(target);
        }
        1 => {
            let (name, _) = &mut members[target];
            name.push_str(if rng.chance(2) { ".bak" } else { "/../x" });
        }
        2 => {
            // A member blown up: many copies of itself (a mild bomb).
            let (_, body) = &mut members[target];
            let copy = body.clone();
            for _ in 0..rng.below(64) {
                body.extend_from_slice(&copy);
            }
        }
        _ => {
            let (name, body) = &mut members[target];
            let xmlish = name.ends_with(".xml")
                || name.ends_with(".rels")
                || name.ends_with(".xhtml")
                || name.ends_with(".opf")
                || name.ends_with(".ncx")
                || body.starts_with(b"<?xml");
            for _ in 0..1 + rng.below(3) {
                if xmlish {
                    mutate_xml(rng, body);
                } else {
                    mutate_bytes(rng, body, &[]);
                }
            }
        }
    }
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut seen = std::collections::HashSet::new();
    for (i, (name, body)) in members.iter().enumerate() {
        if !seen.insert(name.clone()) {
            continue;
        }
        // The first member of an OpenDocument/EPUB (`mimetype`) stays stored, as the formats ask.
        let method = if i == 0 && name == "mimetype" {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let opts = zip::write::SimpleFileOptions::default().compression_method(method);
        out.start_file(name.as_str(), opts).ok()?;
        out.write_all(body).ok()?;
    }
    Some(out.finish().ok()?.into_inner())
}

/// One input from one seed: a few mutations, chosen by what the seed is.
fn mutate(rng: &mut Rng, seed: &Seed, other: &Seed) -> Vec<u8> {
    let is_zip = seed.bytes.starts_with(b"PK\x03\x04");
    let is_pdf = seed.bytes.windows(5).take(1024).any(|w| w == b"%PDF-");
    if is_zip && !rng.chance(4) {
        if let Some(out) = mutate_zip(rng, &seed.bytes) {
            return out;
        }
    }
    let mut data = seed.bytes.clone();
    for _ in 0..1 + rng.below(4) {
        if is_pdf && !rng.chance(3) {
            mutate_pdf(rng, &mut data);
        } else if data.starts_with(b"<") || data.starts_with(b"\xEF\xBB\xBF<") {
            mutate_xml(rng, &mut data);
        } else {
            mutate_bytes(rng, &mut data, &other.bytes);
        }
    }
    data
}

/// What one read came to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Outcome {
    Envelope,
    Refused,
    Crash,
    Hang,
    Memory,
    Internal,
}

impl Outcome {
    fn is_finding(self) -> bool {
        !matches!(self, Outcome::Envelope | Outcome::Refused)
    }
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Envelope => "envelope",
            Outcome::Refused => "refused",
            Outcome::Crash => "crash",
            Outcome::Hang => "hang",
            Outcome::Memory => "memory",
            Outcome::Internal => "internal",
        }
    }
}

fn classify(r: &Result<docreader::envelope::Envelope, docreader::error::ApiError>) -> Outcome {
    match r {
        Ok(_) => Outcome::Envelope,
        Err(e) => match e.code {
            ErrorCode::ExtractionCrashed => Outcome::Crash,
            // The executor's own timeout: the read did not come back by its deadline plus
            // the grace period. (An extractor that stops itself at the deadline, such as
            // OCR of one large image, answers a typed `timeout` in time: not a finding.)
            ErrorCode::Timeout if e.message.starts_with("the read did not finish") => Outcome::Hang,
            // The worker's allocator hit its cap: a parser without its own bound.
            ErrorCode::TooLarge
                if e.message.contains("more memory than a worker may use")
                    || e.message.contains("more memory than this reader may use") =>
            {
                Outcome::Memory
            }
            ErrorCode::Internal | ErrorCode::Unavailable => Outcome::Internal,
            _ => Outcome::Refused,
        },
    }
}

#[derive(Default)]
struct Stats {
    tried: AtomicU64,
    counts: Mutex<std::collections::BTreeMap<&'static str, u64>>,
    findings: Mutex<Vec<String>>,
}

fn main() {
    let args = parse_args();
    // Workers log every refused file; a fuzz run refuses thousands. Quiet unless asked.
    if std::env::var_os("DOCREADER_LOG").is_none() {
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var("DOCREADER_LOG", "off") };
    }
    let seeds = collect_seeds(&args.dirs);
    if seeds.is_empty() {
        eprintln!("fuzz: no seed files under {:?}", args.dirs);
        std::process::exit(2);
    }
    if !args.bin.exists() {
        eprintln!(
            "fuzz: the docreader binary is not at {} (build it: cargo build; or pass --bin)",
            args.bin.display()
        );
        std::process::exit(2);
    }
    std::fs::create_dir_all(&args.out).expect("creatable --out folder");
    let work = tempfile_dir();
    eprintln!(
        "fuzz: {} seeds, seed {}, {} workers, {} s, deadline {} ms, findings to {}",
        seeds.len(),
        args.seed,
        args.workers,
        args.seconds,
        args.deadline_ms,
        args.out.display()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let limits = Limits {
        max_concurrent_reads: args.workers,
        ..Limits::default()
    };
    let pool = Pool::new(PoolConfig {
        bin: args.bin.clone(),
        spool: work.join("spool"),
        workers: args.workers,
        memory_bytes: args.worker_memory_mb * 1024 * 1024,
        log_format: "text".into(),
        logs_to_stdout: true,
        test_hooks: false,
    });
    std::fs::create_dir_all(work.join("spool")).expect("spool folder");
    let service = Arc::new(ReadService {
        executor: Executor::with_workers(pool, args.workers, usize::MAX),
        limits,
        storage: None,
        allowed_roots: Vec::new(),
        fetch: Default::default(),
        metrics: Arc::new(Metrics::default()),
    });
    let seeds = Arc::new(seeds);
    let stats = Arc::new(Stats::default());
    let started = Instant::now();
    let until = started + Duration::from_secs(args.seconds);
    rt.block_on(async {
        let mut tasks = Vec::new();
        for t in 0..args.workers {
            let (service, seeds, stats) = (service.clone(), seeds.clone(), stats.clone());
            let (out, dir) = (args.out.clone(), work.join(format!("in{t}")));
            let (seed, deadline_ms) = (args.seed.wrapping_add(t as u64 * 7919), args.deadline_ms);
            tasks.push(tokio::spawn(async move {
                std::fs::create_dir_all(&dir).expect("input folder");
                let mut rng = Rng::new(seed);
                let mut n = 0u64;
                while Instant::now() < until {
                    n += 1;
                    let s = &seeds[rng.below(seeds.len())];
                    let other = &seeds[rng.below(seeds.len())];
                    let bytes = mutate(&mut rng, s, other);
                    let path = dir.join(&s.name);
                    std::fs::write(&path, &bytes).expect("writable work folder");
                    let is_image = matches!(
                        s.name
                            .rsplit('.')
                            .next()
                            .map(|e| e.to_ascii_lowercase())
                            .as_deref(),
                        Some("png" | "jpg" | "jpeg" | "gif" | "bmp" | "tif" | "tiff" | "webp")
                    );
                    // OCR is slow: most reads skip it, a tenth (and every image) keep it.
                    let req = ReadRequest {
                        ocr: if is_image || rng.chance(10) {
                            None
                        } else {
                            Some(Ocr::None)
                        },
                        deadline_ms: Some(deadline_ms),
                        ..ReadRequest::default()
                    };
                    let r = service.read_local(&path, req).await;
                    let outcome = classify(&r);
                    stats.tried.fetch_add(1, Ordering::Relaxed);
                    *stats
                        .counts
                        .lock()
                        .unwrap()
                        .entry(outcome.as_str())
                        .or_default() += 1;
                    if outcome.is_finding() {
                        let e = r.err().expect("findings are errors");
                        let stem = format!("{}-{}-{seed}-{n}", outcome.as_str(), s.name);
                        let keep = out.join(&stem);
                        let _ = std::fs::write(&keep, &bytes);
                        let _ = std::fs::write(
                            out.join(format!("{stem}.txt")),
                            format!(
                                "seed file: {}\n{}: {}\ncause: {:?}\n",
                                s.name,
                                e.code.as_str(),
                                e.message,
                                e.cause
                            ),
                        );
                        let line = format!(
                            "{}: {} ({}: {})",
                            outcome.as_str(),
                            keep.display(),
                            e.code.as_str(),
                            e.message
                        );
                        eprintln!("fuzz: FOUND {line}");
                        stats.findings.lock().unwrap().push(line);
                    }
                }
            }));
        }
        let reporter = {
            let stats = stats.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    eprintln!(
                        "fuzz: {:>5} s, {} inputs, {:?}",
                        started.elapsed().as_secs(),
                        stats.tried.load(Ordering::Relaxed),
                        stats.counts.lock().unwrap()
                    );
                }
            })
        };
        for t in tasks {
            t.await.expect("fuzz task");
        }
        reporter.abort();
    });
    let _ = std::fs::remove_dir_all(&work);
    let tried = stats.tried.load(Ordering::Relaxed);
    let findings = stats.findings.lock().unwrap();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "fuzz: {tried} inputs in {secs:.0} s ({:.1}/s) from {} seeds, seed {}; outcomes {:?}; worker restarts {}; findings {}",
        tried as f64 / secs,
        seeds.len(),
        args.seed,
        stats.counts.lock().unwrap(),
        service.executor.restarts(),
        findings.len()
    );
    for f in findings.iter() {
        println!("  {f}");
    }
    std::process::exit(if findings.is_empty() { 0 } else { 1 });
}

/// A fresh work folder under the system's temp dir.
fn tempfile_dir() -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "docreader-fuzz-{}",
        docreader::store::random_hex(8)
    ));
    std::fs::create_dir_all(&p).expect("temp folder");
    p
}
