//! Worker processes: extraction runs in `docreader worker` children so that a native
//! parser (PDFium, ONNX Runtime) that crashes or balloons costs one read, not the service.
//!
//! Protocol: on the child's stdin/stdout, frames of a 4-byte little-endian length and a
//! JSON body — one `Job` in, one `Reply` out. Attachments found in a document travel as
//! files in the spool folder (the data dir's `tmp`). Each child has an address-space cap;
//! each job a deadline. A child that dies or overruns is killed and replaced.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{Mutex, Semaphore};

use crate::config::Limits;
use crate::detect::Format;
use crate::envelope::{Attachment, Envelope};
use crate::error::ApiError;
use crate::extract::page_image::{PageImage, PageImageRequest, PictureFormat};
use crate::extract::{self, Input};
use crate::options::ReadRequest;

/// Largest frame accepted either way (a reply carries at most the text of one read).
const MAX_FRAME: usize = 512 * 1024 * 1024;
/// Replies larger than this are parsed on the blocking pool, not on a runtime thread.
const INLINE_PARSE_BYTES: usize = 64 * 1024;

#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    pub path: PathBuf,
    pub name: String,
    pub mime: String,
    pub size: u64,
    pub task: Task,
    pub limits: Limits,
    /// Milliseconds left until the read's deadline.
    pub deadline_ms: u64,
    /// OCR lines the document memory holds for pages of these bytes.
    pub known_ocr: std::collections::HashMap<u64, Vec<crate::ocr::OcrLine>>,
    /// The request this read serves, for the worker's log lines.
    pub request_id: Option<String>,
    /// Whether progress frames are wanted (a streamed read, a job); without a listener
    /// they would cost the server a wake-up per page for nothing.
    #[serde(default)]
    pub progress: bool,
}

/// What a job does: read the file, or draw one of its pages (`GET /files/{id}/pages/{n}`).
#[derive(Debug, Serialize, Deserialize)]
pub enum Task {
    Read {
        file_id: Option<String>,
        req: ReadRequest,
    },
    Draw(PageImageRequest),
}

/// What a job gave: a read's envelope, or a drawn page.
#[derive(Debug)]
pub enum Done {
    Read(Envelope),
    Picture(PageImage),
}

/// Free heap a worker keeps between jobs (bytes); past it, it trims.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const KEEP_FREE: usize = 16 << 20;

#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// Sent any number of times before the final reply.
    Progress(extract::Progress),
    Ok {
        envelope: Envelope,
        attachments: Vec<(String, PathBuf)>,
        fresh_ocr: Vec<(u64, Vec<crate::ocr::OcrLine>)>,
        /// Where the text's units stand (the envelope does not serialize them).
        #[serde(default)]
        spans: Vec<crate::model::Span>,
    },
    /// A drawn page, its bytes in a spool file.
    Picture {
        path: PathBuf,
        format: PictureFormat,
        width: u32,
        height: u32,
    },
    Err(ApiError),
    /// An allocation failed under the memory cap; the worker is about to abort.
    OutOfMemory {
        cap_mb: u64,
    },
}

/// A message as one frame: its length (4 bytes, little-endian), then its JSON. Built whole
/// so it goes out in one write: written in two, the reader may wake for the length alone
/// and wait again for the rest (a second wake-up each way, each job).
fn frame<T: serde::Serialize>(message: &T) -> serde_json::Result<Vec<u8>> {
    let mut buf = vec![0u8; 4];
    serde_json::to_writer(&mut buf, message)?;
    let len = u32::try_from(buf.len() - 4).map_err(|_| {
        <serde_json::Error as serde::ser::Error>::custom("a message too large for one frame")
    })?;
    buf[..4].copy_from_slice(&len.to_le_bytes());
    Ok(buf)
}

async fn write_frame<W: AsyncWriteExt + Unpin>(w: &mut W, frame: &[u8]) -> std::io::Result<()> {
    w.write_all(frame).await?;
    w.flush().await
}

async fn read_frame<R: AsyncReadExt + Unpin>(r: &mut R) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "frame too large",
        ));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body).await?;
    Ok(body)
}

// -----------------------------------------------------------------------------------------
// The child
// -----------------------------------------------------------------------------------------

/// Where replies go: a private copy of the original stdout. fd 1 itself is pointed at
/// stderr, so a native library that prints cannot corrupt the frames.
static FRAMES: std::sync::OnceLock<std::sync::Mutex<std::fs::File>> = std::sync::OnceLock::new();

/// The reply channel's descriptor and the `OutOfMemory` frame, made at start-up so that an
/// allocation failure can report itself without allocating.
static FRAMES_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
static OOM_FRAME: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
static OOM_SENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The global allocator: the system's, plus one thing in worker processes: when an
/// allocation fails (the memory cap), say so on the reply channel before Rust aborts, so
/// the read fails as `too_large` instead of an unexplained crash.
pub struct CapAwareAlloc;

impl CapAwareAlloc {
    #[cold]
    fn failed() {
        let fd = FRAMES_FD.load(Ordering::Relaxed);
        if fd < 0 || OOM_SENT.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Some(frame) = OOM_FRAME.get() {
            // SAFETY: a plain write of a static buffer to an open descriptor.
            unsafe {
                libc::write(fd, frame.as_ptr().cast(), frame.len());
            }
        }
    }
}

// SAFETY: every call is forwarded to `System`; the failure path only writes a prebuilt buffer.
unsafe impl std::alloc::GlobalAlloc for CapAwareAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = std::alloc::System.alloc(layout);
        if p.is_null() {
            Self::failed();
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        let p = std::alloc::System.alloc_zeroed(layout);
        if p.is_null() {
            Self::failed();
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        let p = std::alloc::System.realloc(ptr, layout, new);
        if p.is_null() {
            Self::failed();
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        std::alloc::System.dealloc(ptr, layout)
    }
}

fn send(reply: &Reply) -> std::io::Result<()> {
    use std::io::Write;
    let frame = frame(reply).map_err(std::io::Error::other)?;
    let frames = FRAMES
        .get()
        .ok_or_else(|| std::io::Error::other("no frame channel"))?;
    let mut out = frames
        .lock()
        .map_err(|_| std::io::Error::other("frame lock poisoned"))?;
    out.write_all(&frame)?;
    out.flush()
}

/// `docreader worker --spool DIR`: answer jobs until stdin closes. With `test_hooks` (a
/// hidden flag the test suite passes), files of two magic names crash the worker or print
/// on stdout, so the isolation tests have their own way in; without it, names mean nothing.
pub fn serve_jobs(spool: &Path, test_hooks: bool) -> std::io::Result<()> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: plain descriptor calls at start-up, before any other thread exists; the
    // duplicated descriptor is owned by the File from here on.
    let frames = unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        std::fs::File::from_raw_fd(fd)
    };
    {
        use std::os::fd::AsRawFd;
        FRAMES_FD.store(frames.as_raw_fd(), Ordering::Relaxed);
    }
    let cap_mb = {
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0;
        if ok && rl.rlim_cur != libc::RLIM_INFINITY {
            rl.rlim_cur / (1024 * 1024)
        } else {
            0
        }
    };
    if let Ok(frame) = frame(&Reply::OutOfMemory { cap_mb }) {
        let _ = OOM_FRAME.set(frame);
    }
    let _ = FRAMES.set(std::sync::Mutex::new(frames));
    let mut stdin = std::io::stdin().lock();
    loop {
        let mut len = [0u8; 4];
        if stdin.read_exact(&mut len).is_err() {
            return Ok(()); // the server closed our stdin: done
        }
        let n = u32::from_le_bytes(len) as usize;
        if n > MAX_FRAME {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "frame too large",
            ));
        }
        let mut body = vec![0u8; n];
        stdin.read_exact(&mut body)?;
        let reply = match serde_json::from_slice::<Job>(&body) {
            Ok(job) => run_job(job, spool, test_hooks),
            Err(e) => Reply::Err(ApiError::internal(format!("bad job: {e}"))),
        };
        send(&reply)?;
        drop(reply);
        // Give the memory of a heavy read back to the system between jobs, so an idle
        // worker's footprint is its baseline (and at most `KEEP_FREE`), not its largest read
        // so far. Not after light reads: trimming every time made each next read fault its
        // pages in again (~5 % of a one-page PDF read's CPU, in page faults and madvise).
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallinfo2 only reads the allocator's counters; malloc_trim only releases
        // free heap pages; no allocation is in use by either.
        unsafe {
            if libc::mallinfo2().fordblks > KEEP_FREE {
                libc::malloc_trim(0);
            }
        }
    }
}

fn run_job(job: Job, spool: &Path, test_hooks: bool) -> Reply {
    if test_hooks {
        // The crash-isolation test.
        if job.name == "__docreader_crash_test__.txt" {
            std::process::abort();
        }
        // The test that stray stdout output (a chatty native library) cannot corrupt the
        // replies.
        if job.name == "__docreader_stdout_noise_test__.txt" {
            println!("docreader test: noise on stdout, which must not reach the server");
        }
    }
    let span = tracing::info_span!(
        "worker",
        request_id = job.request_id.as_deref().unwrap_or(""),
        mime = %job.mime,
        size = job.size
    );
    let _entered = span.enter();
    let Some(format) = Format::from_mime(&job.mime, &job.name) else {
        return Reply::Err(ApiError::internal(format!("unknown mime {}", job.mime)));
    };
    let input = Input {
        path: job.path,
        name: job.name,
        format,
        size: job.size,
        deadline: extract::Deadline::at(Instant::now() + Duration::from_millis(job.deadline_ms)),
        known_ocr: job.known_ocr,
        // Progress goes out as frames ahead of the reply, when wanted.
        progress: if job.progress {
            extract::ProgressSink::new(|p| {
                let _ = send(&Reply::Progress(p));
            })
        } else {
            extract::ProgressSink::default()
        },
    };
    let (file_id, req) = match job.task {
        Task::Read { file_id, req } => (file_id, req),
        Task::Draw(draw) => return draw_job(&input, &draw, &job.limits, spool),
    };
    let started = Instant::now();
    match extract::read_blocking(&input, file_id, &req, &job.limits) {
        Ok(mut env) => {
            env.elapsed_ms = started.elapsed().as_millis() as u64;
            let mut attachments = Vec::new();
            for a in std::mem::take(&mut env.attachments) {
                let path = spool.join(format!("att-{}", crate::store::random_hex(12)));
                if std::fs::write(&path, &a.bytes).is_ok() {
                    attachments.push((a.name, path));
                }
            }
            let fresh_ocr = std::mem::take(&mut env.fresh_ocr);
            let spans = std::mem::take(&mut env.spans);
            Reply::Ok {
                envelope: env,
                attachments,
                fresh_ocr,
                spans,
            }
        }
        Err(e) => {
            if let Some(cause) = &e.cause {
                tracing::error!(code = e.code.as_str(), cause = %cause, "read failed");
            }
            Reply::Err(e)
        }
    }
}

/// A drawn page goes back as a spool file, not inside the reply frame.
fn draw_job(input: &Input, draw: &PageImageRequest, limits: &Limits, spool: &Path) -> Reply {
    match extract::page_image::draw(input, draw, limits) {
        Ok(pic) => {
            let path = spool.join(format!("pic-{}", crate::store::random_hex(12)));
            match std::fs::write(&path, &pic.bytes) {
                Ok(()) => Reply::Picture {
                    path,
                    format: pic.format,
                    width: pic.width,
                    height: pic.height,
                },
                Err(e) => Reply::Err(ApiError::internal(e)),
            }
        }
        Err(e) => {
            if let Some(cause) = &e.cause {
                tracing::error!(code = e.code.as_str(), cause = %cause, "drawing failed");
            }
            Reply::Err(e)
        }
    }
}

// -----------------------------------------------------------------------------------------
// The pool
// -----------------------------------------------------------------------------------------

struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

/// Environment variables a worker must not inherit: the API keys, database and storage
/// credentials, and anything named like a secret.
pub fn is_secret_var(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("DOCREADER_API_KEYS")
        || upper.starts_with("DOCREADER_DATABASE")
        || upper.starts_with("AWS_")
        || upper.starts_with("PG")
        || [
            "SECRET",
            "TOKEN",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "PRIVATE_KEY",
            "API_KEY",
        ]
        .iter()
        .any(|w| upper.contains(w))
}

/// Counts a worker killed because its job's future was dropped before the exchange ended.
struct Abandoned<'a>(&'a AtomicU64, bool);

impl Abandoned<'_> {
    fn disarm(mut self) {
        self.1 = false;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(reason = "its read was abandoned", "worker replaced");
        }
    }
}

/// How a job failed in the pool (not in the extractor): the executor maps these to errors.
#[derive(Debug)]
pub enum Failure {
    /// The job ran past the time it was given; the worker was killed.
    Overran,
    /// The worker died (crash, signal); says how.
    Died(String),
    /// An allocation failed under the worker's memory cap (MiB).
    OutOfMemory(u64),
    /// No worker could be started.
    Spawn(std::io::Error),
}

/// N children, each answering one job at a time.
pub struct Pool {
    bin: PathBuf,
    spool: PathBuf,
    memory_bytes: u64,
    log_format: String,
    logs_to_stdout: bool,
    test_hooks: bool,
    idle: Mutex<Vec<Worker>>,
    slots: Arc<Semaphore>,
    /// Children killed or found dead, and replaced.
    pub restarts: AtomicU64,
}

/// How the pool starts its children.
#[derive(Debug, Clone)]
pub struct PoolConfig {
    pub bin: PathBuf,
    pub spool: PathBuf,
    pub workers: usize,
    /// Address-space cap of each child, in bytes (0: none).
    pub memory_bytes: u64,
    /// `text` or `json`: children log in the server's format, where the server logs.
    pub log_format: String,
    /// JSON logs go to the server's stdout (a container's log stream); false where stdout
    /// carries a protocol (MCP over stdio): then to stderr.
    pub logs_to_stdout: bool,
    /// Pass the hidden `--test-hooks` flag (the isolation tests only).
    pub test_hooks: bool,
}

impl Pool {
    pub fn new(c: PoolConfig) -> Self {
        Self {
            bin: c.bin,
            spool: c.spool,
            memory_bytes: c.memory_bytes,
            log_format: c.log_format,
            logs_to_stdout: c.logs_to_stdout,
            test_hooks: c.test_hooks,
            idle: Mutex::new(Vec::new()),
            slots: Arc::new(Semaphore::new(c.workers.max(1))),
            restarts: AtomicU64::new(0),
        }
    }

    fn spawn(&self) -> std::io::Result<Worker> {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("worker")
            .arg("--spool")
            .arg(&self.spool)
            .arg("--log-format")
            .arg(&self.log_format);
        if self.test_hooks {
            cmd.arg("--test-hooks");
        }
        // Workers parse hostile files: they get no secret of the server's.
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_none_or(is_secret_var) {
                cmd.env_remove(&name);
            }
        }
        // JSON logs go to the server's stdout (a container's log stream): the children's
        // log lines join them there, one stream in one format.
        let logs = if self.log_format == "json" && self.logs_to_stdout {
            use std::os::fd::AsFd;
            std::process::Stdio::from(std::io::stdout().as_fd().try_clone_to_owned()?)
        } else {
            std::process::Stdio::inherit()
        };
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(logs)
            .kill_on_drop(true);
        let limit = self.memory_bytes;
        // SAFETY: between fork and exec only async-signal-safe calls are made (setrlimit).
        unsafe {
            cmd.pre_exec(move || {
                if limit > 0 {
                    let rl = libc::rlimit {
                        rlim_cur: limit as libc::rlim_t,
                        rlim_max: limit as libc::rlim_t,
                    };
                    if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        Ok(Worker {
            child,
            stdin,
            stdout,
        })
    }

    /// Run one job in a worker, within `limit` of wall time (waiting for a free worker
    /// included). Only this job fails if the worker dies or overruns: the worker is killed
    /// and replaced on demand. Progress frames go to `progress` as they arrive.
    pub async fn run(
        &self,
        job: Job,
        limit: Duration,
        progress: &extract::ProgressSink,
    ) -> Result<Result<Done, ApiError>, Failure> {
        let started = Instant::now();
        let Ok(Ok(_permit)) = tokio::time::timeout(limit, self.slots.clone().acquire_owned()).await
        else {
            return Err(Failure::Overran);
        };
        let mut worker = match self.idle.lock().await.pop() {
            Some(w) => w,
            None => self.spawn().map_err(Failure::Spawn)?,
        };
        let job = match frame(&job) {
            Ok(b) => b,
            Err(e) => return Ok(Err(ApiError::internal(e))),
        };
        // Each frame is parsed once; a large one (the final envelope) off the runtime threads.
        let exchange = async {
            write_frame(&mut worker.stdin, &job).await?;
            loop {
                let frame = read_frame(&mut worker.stdout).await?;
                let reply = if frame.len() <= INLINE_PARSE_BYTES {
                    serde_json::from_slice::<Reply>(&frame)
                } else {
                    tokio::task::spawn_blocking(move || serde_json::from_slice::<Reply>(&frame))
                        .await
                        .map_err(std::io::Error::other)?
                };
                match reply {
                    Ok(Reply::Progress(p)) => progress.report(p.done, p.total, p.stage),
                    other => return Ok::<_, std::io::Error>(other),
                }
            }
        };
        let remaining = limit.saturating_sub(started.elapsed());
        // Should this future be dropped mid-exchange (its client went away), the worker is
        // killed with it (kill_on_drop): count that as a replacement too.
        let abandoned = Abandoned(&self.restarts, true);
        let exchanged = tokio::time::timeout(remaining, exchange).await;
        abandoned.disarm();
        match exchanged {
            Err(_) => {
                self.discard(worker, "overran its deadline").await;
                Err(Failure::Overran)
            }
            Ok(Err(_)) => Err(Failure::Died(self.discard(worker, "died").await)),
            Ok(Ok(Ok(Reply::OutOfMemory { cap_mb }))) => {
                self.discard(worker, "ran out of memory").await;
                Err(Failure::OutOfMemory(cap_mb))
            }
            Ok(Ok(reply)) => {
                self.idle.lock().await.push(worker);
                Ok(match reply {
                    Err(e) => Err(ApiError::internal(format!(
                        "a worker reply did not parse: {e}"
                    ))),
                    Ok(Reply::OutOfMemory { .. }) | Ok(Reply::Progress(_)) => {
                        unreachable!("handled above")
                    }
                    Ok(Reply::Err(e)) => Err(e),
                    Ok(Reply::Picture {
                        path,
                        format,
                        width,
                        height,
                    }) => {
                        let bytes = tokio::fs::read(&path).await.map_err(ApiError::internal);
                        let _ = tokio::fs::remove_file(&path).await;
                        bytes.map(|bytes| {
                            Done::Picture(PageImage {
                                bytes,
                                format,
                                width,
                                height,
                            })
                        })
                    }
                    Ok(Reply::Ok {
                        mut envelope,
                        attachments,
                        fresh_ocr,
                        spans,
                    }) => {
                        envelope.fresh_ocr = fresh_ocr;
                        envelope.spans = spans;
                        for (name, path) in attachments {
                            if let Ok(bytes) = tokio::fs::read(&path).await {
                                envelope.attachments.push(Attachment { name, bytes });
                            }
                            let _ = tokio::fs::remove_file(&path).await;
                        }
                        Ok(Done::Read(envelope))
                    }
                })
            }
        }
    }

    /// Kill a worker (a replacement is spawned on demand); says how it ended.
    async fn discard(&self, mut w: Worker, what: &str) -> String {
        let _ = w.child.start_kill();
        let status = w.child.wait().await.ok();
        self.restarts.fetch_add(1, Ordering::Relaxed);
        let how = match status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)) {
            Some(sig) if what == "died" => format!("died (signal {sig})"),
            _ => what.to_string(),
        };
        tracing::warn!(reason = %how, "worker replaced");
        how
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn secrets_stay_out_of_workers() {
        use super::is_secret_var;
        for secret in [
            "DOCREADER_API_KEYS",
            "DOCREADER_API_KEYS_FILE",
            "DOCREADER_DATABASE_URL",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "PGPASSWORD",
            "GITHUB_TOKEN",
            "my_client_secret",
        ] {
            assert!(is_secret_var(secret), "{secret}");
        }
        for plain in [
            "PATH",
            "HOME",
            "DOCREADER_NATIVE_DIR",
            "DOCREADER_PDFIUM_LIB",
            "OMP_THREAD_LIMIT",
            "DOCREADER_LOG",
        ] {
            assert!(!is_secret_var(plain), "{plain}");
        }
    }
}
