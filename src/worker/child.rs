//! The child's side (`docreader worker`): read a job, run it, answer.

use super::*;

pub(super) fn send(reply: &Reply) -> std::io::Result<()> {
    send_with(reply, None)
}

/// Send a reply, and after it (under the same lock, so no progress frame comes between)
/// a read's text as a frame of raw UTF-8 (`Reply::Ok::text_follows`).
fn send_with(reply: &Reply, text: Option<&str>) -> std::io::Result<()> {
    use std::io::Write;
    // The text's length is checked before anything is written: a reply that says a text
    // follows is never left without it.
    let text_len = match text {
        Some(t) => Some(
            u32::try_from(t.len())
                .ok()
                .filter(|&n| n as usize <= MAX_FRAME)
                .ok_or_else(|| std::io::Error::other("a text too large for one frame"))?,
        ),
        None => None,
    };
    let frame = frame(reply).map_err(std::io::Error::other)?;
    let frames = FRAMES
        .get()
        .ok_or_else(|| std::io::Error::other("no frame channel"))?;
    let mut out = frames
        .lock()
        .map_err(|_| std::io::Error::other("frame lock poisoned"))?;
    out.write_all(&frame)?;
    if let (Some(text), Some(len)) = (text, text_len) {
        out.write_all(&len.to_le_bytes())?;
        out.write_all(text.as_bytes())?;
    }
    out.flush()
}

/// The worker's memory cap (MB; 0 = none), as its address-space limit says.
static WORKER_CAP_MB: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `docreader worker --spool DIR`: answer jobs until stdin closes. With `test_hooks` (a
/// hidden flag the test suite passes), files of three magic names crash the worker or print
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
    super::allocator::report_aborts_at_the_cap(cap_mb);
    WORKER_CAP_MB.store(cap_mb, Ordering::Relaxed);
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
        let mut reply = match serde_json::from_slice::<Job>(&body) {
            Ok(job) => run_job(job, spool, test_hooks),
            Err(e) => Reply::Err(ApiError::internal(format!("bad job: {e}"))),
        };
        // A long text goes in a frame of its own, after the reply (`TEXT_APART`).
        let text = match &mut reply {
            Reply::Ok {
                envelope,
                text_follows,
                ..
            } if envelope.text.len() > super::protocol::TEXT_APART => {
                *text_follows = true;
                Some(std::mem::take(&mut envelope.text))
            }
            _ => None,
        };
        send_with(&reply, text.as_deref())?;
        drop((reply, text));
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

pub(super) fn run_job(job: Job, spool: &Path, test_hooks: bool) -> Reply {
    if test_hooks {
        // The crash-isolation test.
        if job.name == "__docreader_crash_test__.txt" {
            std::process::abort();
        }
        // A native library that runs out of memory under the cap and aborts (as glibc does
        // when it cannot register a thread's destructor): the read must be `too_large`.
        if job.name == "__docreader_native_oom_test__.txt" {
            // SAFETY: malloc until the cap refuses, then abort, as a C library would; the
            // blocks are never used and the process ends here.
            unsafe {
                // black_box: an unused malloc may be assumed to succeed and the loop to spin.
                while !std::hint::black_box(libc::malloc(1 << 20)).is_null() {}
                libc::abort();
            }
        }
        // The test that stray stdout output (a chatty native library) cannot corrupt the
        // replies.
        if job.name == "__docreader_stdout_noise_test__.txt" {
            println!("docreader test: noise on stdout, which must not reach the server");
        }
    }
    // An image decodes in this process, under its memory cap: one that would take more than
    // half of the cap decoded is refused before it is decoded (trying it dies at the cap,
    // sometimes inside glibc or a native library that cannot say why).
    let mut job = job;
    let cap_mb = WORKER_CAP_MB.load(Ordering::Relaxed);
    let room = (cap_mb << 20) / 2;
    let clamped = cap_mb > 0 && job.limits.max_image_decode_bytes > room;
    if clamped {
        job.limits.max_image_decode_bytes = room;
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
        Task::Read { file_id, opts } => (file_id, opts),
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
                text_follows: false,
            }
        }
        Err(mut e) => {
            if let Some(cause) = &e.cause {
                tracing::error!(code = e.code.as_str(), cause = %cause, "read failed");
            }
            if clamped
                && e.code == crate::error::ErrorCode::TooLarge
                && e.message.contains("decode cap")
            {
                e.message
                    .push_str(&format!(" (half the worker's memory cap of {cap_mb} MB)"));
                e.hint = "Scale the image down, or ask the operator to raise \
                          DOCREADER_WORKER_MEMORY_MB."
                    .to_string();
            }
            Reply::Err(e)
        }
    }
}

/// A drawn page goes back as a spool file, not inside the reply frame.
pub(super) fn draw_job(
    input: &Input,
    draw: &PageImageRequest,
    limits: &Limits,
    spool: &Path,
) -> Reply {
    match extract::drawing::draw(input, draw, limits) {
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
