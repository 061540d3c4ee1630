//! The service's side: the pool of worker processes, each job's deadline, a child that
//! dies or overruns killed and replaced; secrets kept out of the children's environment.

use super::*;

pub(super) struct Worker {
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

/// A worker's text frame as a string, checked as UTF-8 by simdutf8 (already in the build
/// through encoding_rs): several times std's speed on text outside ASCII, where std's check
/// cost a long CJK text more than moving it did. `None` when it is not UTF-8.
pub(super) fn utf8(raw: Vec<u8>) -> Option<String> {
    simdutf8::basic::from_utf8(&raw).ok()?;
    // SAFETY: simdutf8 has just checked that `raw` is UTF-8.
    Some(unsafe { String::from_utf8_unchecked(raw) })
}

/// Counts a worker killed because its job's future was dropped before the exchange ended.
pub(super) struct Abandoned<'a>(&'a AtomicU64, bool);

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
                // A reply that does not parse leaves the exchange out of step (a text frame
                // may follow it): the worker is discarded, not reused.
                let reply =
                    reply.map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
                match reply {
                    Reply::Progress(p) => progress.report(p.done, p.total, p.stage),
                    Reply::Ok {
                        mut envelope,
                        attachments,
                        fresh_ocr,
                        spans,
                        text_follows: true,
                    } => {
                        // The text, in the next frame as its bytes: checked, not copied.
                        let raw = read_frame(&mut worker.stdout).await?;
                        let text = tokio::task::spawn_blocking(move || utf8(raw))
                            .await
                            .map_err(std::io::Error::other)?
                            .ok_or_else(|| {
                                std::io::Error::new(
                                    std::io::ErrorKind::InvalidData,
                                    "the worker's text is not UTF-8",
                                )
                            })?;
                        envelope.text = text;
                        return Ok(Reply::Ok {
                            envelope,
                            attachments,
                            fresh_ocr,
                            spans,
                            text_follows: false,
                        });
                    }
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
            Ok(Ok(Reply::OutOfMemory { cap_mb })) => {
                self.discard(worker, "ran out of memory").await;
                Err(Failure::OutOfMemory(cap_mb))
            }
            Ok(Ok(reply)) => {
                self.idle.lock().await.push(worker);
                Ok(match reply {
                    Reply::OutOfMemory { .. } | Reply::Progress(_) => {
                        unreachable!("handled above")
                    }
                    Reply::Err(e) => Err(e),
                    Reply::Picture {
                        path,
                        format,
                        width,
                        height,
                    } => {
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
                    Reply::Ok {
                        mut envelope,
                        attachments,
                        fresh_ocr,
                        spans,
                        ..
                    } => {
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
