//! The one executor: where a planned read leaves the async runtime, in this process (the
//! blocking pool) or in a worker process. Either way it takes a slot (so
//! `max_concurrent_reads` bounds both), gives the extractor the read's deadline, carries the
//! `extract` span into the work, allows the grace period for the page in flight, and turns
//! an overrun, a panic or a dead worker into the read's own error.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::Instrument;

use super::fair::FairSlots;
use super::plan::ReadPlan;
use crate::config::Limits;
use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorCode};
use crate::extract::page_image::{PageImage, PageImageRequest};
use crate::extract::{self, Deadline, Input, Stop};
use crate::worker::{Done, Failure, Job, Pool, Task};

/// Runs reads: a slot each (shared fairly between tenants), in-process or in the worker
/// pool.
pub struct Executor {
    slots: Arc<FairSlots>,
    workers: Option<Arc<Pool>>,
}

impl Executor {
    /// Reads run on the blocking pool of this process, `max_concurrent` at once, at most
    /// `per_tenant` of one tenant.
    pub fn in_process(max_concurrent: usize, per_tenant: usize) -> Self {
        Self {
            slots: FairSlots::new(max_concurrent, per_tenant),
            workers: None,
        }
    }

    /// Reads run in worker processes, at most `max_concurrent` at once (and at most one per
    /// worker), at most `per_tenant` of one tenant.
    pub fn with_workers(pool: Pool, max_concurrent: usize, per_tenant: usize) -> Self {
        Self {
            slots: FairSlots::new(max_concurrent, per_tenant),
            workers: Some(Arc::new(pool)),
        }
    }

    /// Worker processes killed or found dead, and replaced.
    pub fn restarts(&self) -> u64 {
        self.workers
            .as_ref()
            .map(|p| p.restarts.load(std::sync::atomic::Ordering::Relaxed))
            .unwrap_or(0)
    }

    /// Run a planned read to its envelope, within its deadline (plus the grace period for
    /// the page in flight).
    pub async fn run(
        &self,
        tenant: &str,
        input: Input,
        file_id: Option<String>,
        plan: &ReadPlan,
        limits: &Limits,
    ) -> Result<Envelope, ApiError> {
        let task = Task::Read {
            file_id,
            opts: plan.opts.clone(),
        };
        match self
            .execute(tenant, input, task, plan.deadline, limits)
            .await?
        {
            Done::Read(env) => Ok(env),
            Done::Picture(_) => Err(ApiError::internal("a read came back as a picture")),
        }
    }

    /// Draw a page (`GET /files/{id}/pages/{n}`): the same slots, workers and deadline as
    /// a read.
    pub async fn draw(
        &self,
        tenant: &str,
        input: Input,
        req: PageImageRequest,
        deadline: Duration,
        limits: &Limits,
    ) -> Result<PageImage, ApiError> {
        match self
            .execute(tenant, input, Task::Draw(req), deadline, limits)
            .await?
        {
            Done::Picture(p) => Ok(p),
            Done::Read(_) => Err(ApiError::internal("a drawing came back as a read")),
        }
    }

    async fn execute(
        &self,
        tenant: &str,
        mut input: Input,
        task: Task,
        budget: Duration,
        limits: &Limits,
    ) -> Result<Done, ApiError> {
        let started = Instant::now();
        let span = tracing::info_span!(
            "extract",
            format = input.format.family().as_str(),
            size = input.size,
            workers = self.workers.is_some(),
            draw = matches!(task, Task::Draw(_))
        );
        let permit = tokio::time::timeout(budget, self.slots.acquire(tenant))
            .await
            .map_err(|_| timeout_error(budget))?;
        let remaining = budget.saturating_sub(started.elapsed());
        // The grace period: only work stuck inside one page runs into it.
        let limit = remaining + Duration::from_millis(limits.grace_ms);
        let out = match &self.workers {
            None => {
                // The extractor stops itself at the deadline and returns finished pages;
                // the outer timeout only catches work stuck inside one page.
                // When this future is dropped (the client went away) or gives up, the
                // extractor stops at its next check (between pages, between OCR model runs)
                // instead of holding its slot to the end.
                let (deadline, stop) = Deadline::at(Instant::now() + remaining).stoppable();
                let _stop_when_dropped = StopOnDrop(stop);
                input.deadline = deadline;
                let (limits, inner) = (limits.clone(), span.clone());
                let job = tokio::task::spawn_blocking(move || {
                    let _permit = permit;
                    let _entered = inner.enter();
                    let out = match task {
                        Task::Read { file_id, opts } => {
                            extract::read_blocking(&input, file_id, &opts, &limits).map(Done::Read)
                        }
                        Task::Draw(req) => {
                            extract::drawing::draw(&input, &req, &limits).map(Done::Picture)
                        }
                    };
                    if input.deadline.stopped() {
                        tracing::info!("read stopped: its client left or its time ran out");
                    }
                    out
                });
                match tokio::time::timeout(limit, job).await {
                    Err(_) => Err(timeout_error(budget)),
                    Ok(Err(join)) if join.is_panic() => {
                        span.in_scope(|| tracing::error!("extractor panicked"));
                        Err(crashed("the extractor failed on this file".into()))
                    }
                    Ok(Err(join)) => Err(ApiError::internal(join)),
                    Ok(Ok(r)) => r,
                }
            }
            Some(pool) => {
                let progress = input.progress.clone();
                let job = Job {
                    path: input.path,
                    name: input.name,
                    mime: input.format.mime().to_string(),
                    size: input.size,
                    task,
                    limits: limits.clone(),
                    deadline_ms: remaining.as_millis() as u64,
                    known_ocr: input.known_ocr,
                    request_id: crate::request_id::current(),
                    progress: progress.is_on(),
                };
                let ran = pool.run(job, limit, &progress).instrument(span).await;
                drop(permit);
                match ran {
                    Ok(r) => r,
                    Err(Failure::Overran) => Err(timeout_error(budget)),
                    Err(Failure::Died(how)) => Err(crashed(format!("the extractor process {how} on this file"))),
                    Err(Failure::OutOfMemory(cap_mb)) => Err(ApiError::new(
                        ErrorCode::TooLarge,
                        format!("reading this file needs more memory than a worker may use ({cap_mb} MB)"),
                    )
                    .with_hint("Read a smaller part (pages, range, max_chars), or raise --worker-memory-mb; other reads are unaffected.")),
                    Err(Failure::Spawn(e)) => Err(ApiError::new(
                        ErrorCode::Unavailable,
                        "no worker process could be started for this read",
                    )
                    .with_cause(e)),
                }
            }
        };
        out.map(|done| match done {
            Done::Read(mut env) => {
                env.elapsed_ms = started.elapsed().as_millis() as u64;
                Done::Read(env)
            }
            picture => picture,
        })
    }
}

fn timeout_error(deadline: Duration) -> ApiError {
    ApiError::new(
        ErrorCode::Timeout,
        format!(
            "the read did not finish within its deadline of {} ms",
            deadline.as_millis()
        ),
    )
}

/// Stops the in-process read it guards when dropped.
struct StopOnDrop(Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}

fn crashed(message: String) -> ApiError {
    ApiError::new(ErrorCode::ExtractionCrashed, message)
    .with_hint("The file may be hostile, damaged or too large for the worker's memory cap; other reads are unaffected.")
}
