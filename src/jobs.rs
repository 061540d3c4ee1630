//! Read jobs (issue #22): `POST /read` with `"async": true` (or `Prefer: respond-async`)
//! answers 202 with a job at once; any replica then answers `GET /jobs/{id}`, streams
//! `GET /jobs/{id}/events` and cancels with `DELETE /jobs/{id}`, because the job, its
//! progress and its events live in the database and its result in the blob store.
//!
//! Every replica runs a few job runners that claim queued jobs through the database
//! (`FOR UPDATE SKIP LOCKED` on Postgres; SQLite has one writer). A claim takes a lease
//! (`LEASE`), renewed by a heartbeat while the read runs, and raises the job's `fence`:
//! every write of a runner names the fence it claimed with, so a runner whose lease was
//! taken over (it stalled past the lease) or whose job was cancelled finds its writes
//! refused, stops, and never overwrites the result of the run that replaced it. A replica
//! that dies leaves its jobs to the others when their leases expire.
//!
//! Fairness between tenants: a job's `turn` is the number of its tenant's jobs queued or
//! running when it was submitted, and runners take the lowest turn first — with twenty of
//! tenant A's jobs queued, tenant B's one job (turn 0) starts before A's second.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

pub use crate::callbacks::JobState;
use crate::db::{self, on, Db};
use crate::error::{ApiError, ErrorCode};
use crate::extract::ProgressSink;
use crate::options::ReadRequest;
use crate::read::ReadService;
use crate::store::Store;

/// How long a claim holds without a heartbeat.
const LEASE: Duration = Duration::from_secs(20);
/// How often a running job's lease is renewed (and its cancellation noticed).
const HEARTBEAT: Duration = Duration::from_secs(3);
/// How often an idle runner looks for work.
const POLL: Duration = Duration::from_millis(400);
/// At most one progress event per this interval is written (the last one always).
const PROGRESS_EVERY: Duration = Duration::from_millis(500);
/// Set with a job's end (`$2` is the time): its callback, if it has one, becomes due.
const ENDED_CALLBACK: &str =
    "callback_state = CASE WHEN callback_url IS NULL THEN NULL ELSE 'pending' END, \
     callback_next_at = $2";

/// A job as `GET /jobs/{id}` shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct JobView {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    pub job_id: String,
    pub state: JobState,
    /// The last progress event of a running job: `{done, total, stage}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub progress: Option<Value>,
    /// The read's envelope, once `done` (as the read made it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub envelope: Option<Box<serde_json::value::RawValue>>,
    /// The read's error (as an error body's `error`), once `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub error: Option<Value>,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// When a replica started it (RFC 3339 UTC; again when one took over from a replica
    /// that died).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the job and its result are forgotten (RFC 3339 UTC).
    pub expires_at: String,
    /// Where its state and events are: `/jobs/{id}`, `/jobs/{id}/events`.
    pub links: JobLinks,
    /// The job's `callback_url` and how its delivery went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback: Option<crate::callbacks::CallbackView>,
}

pub use crate::callbacks::JobLinks;

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    state: String,
    progress: Option<String>,
    error: Option<String>,
    result_key: Option<String>,
    created_at: i64,
    started_at: Option<i64>,
    expires_at: i64,
    callback_url: Option<String>,
    callback_state: Option<String>,
    callback_attempts: i64,
    callback_error: Option<String>,
}

/// A claimed job.
#[derive(sqlx::FromRow)]
struct Claimed {
    id: String,
    tenant: String,
    request: String,
    fence: i64,
}

/// One event of a job's stream: its sequence number (the SSE id) and its data.
pub struct JobEvent {
    pub seq: i64,
    pub data: String,
}

pub struct Jobs {
    db: Db,
    store: Arc<Store>,
    reader: Arc<ReadService>,
    /// This replica's name in `owner` (for the operator: who ran what).
    owner: String,
    ttl: Duration,
    runners: usize,
    /// `deadline_ms` of a job that gives none, and the most one may ask for.
    deadline_ms: u64,
    /// Jobs one tenant may have running at once, across replicas.
    per_tenant: i64,
    wake: tokio::sync::Notify,
    callbacks: Arc<crate::callbacks::Callbacks>,
    /// Set when the replica stops: runners claim nothing more.
    stopping: std::sync::atomic::AtomicBool,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl Jobs {
    pub fn new(
        db: Db,
        store: Arc<Store>,
        reader: Arc<ReadService>,
        ttl: Duration,
        runners: usize,
        deadline_ms: u64,
        per_tenant: i64,
        callbacks: Arc<crate::callbacks::Callbacks>,
    ) -> Self {
        Self {
            db,
            store,
            reader,
            owner: format!("r_{}", crate::store::random_hex(6)),
            ttl,
            runners,
            deadline_ms,
            per_tenant,
            wake: tokio::sync::Notify::new(),
            callbacks,
            stopping: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub fn callbacks(&self) -> &crate::callbacks::Callbacks {
        &self.callbacks
    }

    /// Queue a read for the tenant.
    pub async fn submit(&self, tenant: &str, req: &ReadRequest) -> Result<JobView, ApiError> {
        let id = format!("j_{}", crate::store::random_hex(16));
        let mut req = req.clone();
        req.run_async = None;
        let callback = match req.callback_url.take() {
            Some(url) => Some(self.callbacks.check(&url)?),
            None => None,
        };
        if req.deadline_ms.is_none() {
            req.deadline_ms = Some(self.deadline_ms.min(i64::MAX as u64) as i64);
        }
        let request = serde_json::to_string(&req).map_err(ApiError::internal)?;
        let now = now_ms();
        let expires = now + self.ttl.as_millis() as i64;
        let q = "INSERT INTO jobs (id, tenant, request, state, turn, created_at, updated_at, expires_at, \
                 callback_url) VALUES ($1, $2, $3, 'queued', (SELECT COUNT(*) FROM jobs WHERE tenant = $2 \
                 AND state IN ('queued', 'running')), $4, $4, $5, $6)";
        on!(&self.db, p => sqlx::query(q)
            .bind(&id)
            .bind(tenant)
            .bind(&request)
            .bind(now)
            .bind(expires)
            .bind(&callback)
            .execute(p)
            .await
            .map(drop))
        .map_err(db::failure)?;
        self.wake.notify_one();
        self.get(tenant, &id).await
    }

    async fn row(&self, tenant: &str, id: &str) -> Result<Row, ApiError> {
        let q =
            "SELECT id, state, progress, error, result_key, created_at, started_at, expires_at, \
             callback_url, callback_state, callback_attempts, callback_error \
             FROM jobs WHERE id = $1 AND tenant = $2";
        let row: Option<Row> =
            on!(&self.db, p => sqlx::query_as(q).bind(id).bind(tenant).fetch_optional(p).await)
                .map_err(db::failure)?;
        row.ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, "no such job").with_hint(
                "A job is kept for DOCREADER_JOB_TTL_HOURS (24 by default) after it was submitted; submit the read again.",
            )
        })
    }

    /// A tenant's job (another tenant's id is not found), with its envelope once done.
    pub async fn get(&self, tenant: &str, id: &str) -> Result<JobView, ApiError> {
        let row = self.row(tenant, id).await?;
        let envelope = match (&*row.state, &row.result_key) {
            ("done", Some(key)) => Some(self.result(key).await?),
            _ => None,
        };
        let callback_state =
            crate::callbacks::CallbackState::from_db(row.callback_state.as_deref())?;
        let callback = row.callback_url.map(|url| crate::callbacks::CallbackView {
            url,
            state: callback_state,
            attempts: row.callback_attempts,
            last_error: row.callback_error,
        });
        Ok(JobView {
            status: "ok",
            links: JobLinks::of(&row.id),
            callback,
            job_id: row.id,
            progress: match &*row.state {
                "running" => row.progress.and_then(|p| serde_json::from_str(&p).ok()),
                _ => None,
            },
            error: row.error.and_then(|e| serde_json::from_str(&e).ok()),
            envelope,
            state: JobState::from_db(&row.state)?,
            created_at: rfc3339(row.created_at),
            started_at: row.started_at.map(rfc3339),
            expires_at: rfc3339(row.expires_at),
        })
    }

    async fn result(&self, key: &str) -> Result<Box<serde_json::value::RawValue>, ApiError> {
        let bytes = self
            .store
            .get_result(key)
            .await?
            .ok_or_else(|| ApiError::internal(format!("job result {key} is missing")))?;
        let text = String::from_utf8(bytes).map_err(ApiError::internal)?;
        serde_json::value::RawValue::from_string(text).map_err(ApiError::internal)
    }

    /// Jobs waiting for a runner and jobs running, across every replica (the metrics'
    /// queue depth).
    pub async fn depth(&self) -> Result<(i64, i64), sqlx::Error> {
        let q =
            "SELECT state, COUNT(*) FROM jobs WHERE state IN ('queued', 'running') GROUP BY state";
        let rows: Vec<(String, i64)> =
            crate::db::on!(&self.db, p => sqlx::query_as(q).fetch_all(p).await)?;
        let of = |s: &str| rows.iter().find(|(k, _)| k == s).map_or(0, |r| r.1);
        Ok((of("queued"), of("running")))
    }

    /// Cancel a queued or running job (a running one stops at its next heartbeat). A job
    /// that already ended is left as it is.
    pub async fn cancel(&self, tenant: &str, id: &str) -> Result<JobView, ApiError> {
        let cancelled = ApiError::new(
            crate::error::ErrorCode::Cancelled,
            "the job was cancelled (DELETE /jobs/{id})",
        );
        let err = serde_json::to_string(&cancelled.body(None).error).map_err(ApiError::internal)?;
        let q = format!(
            "UPDATE jobs SET state = 'cancelled', error = $1, updated_at = $2, {ENDED_CALLBACK} \
             WHERE id = $3 AND tenant = $4 AND state IN ('queued', 'running')"
        );
        let n = on!(&self.db, p => sqlx::query(&q)
            .bind(&err)
            .bind(now_ms())
            .bind(id)
            .bind(tenant)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))
        .map_err(db::failure)?;
        if n == 1 {
            self.callbacks.nudge();
        }
        self.get(tenant, id).await
    }

    /// The job's events after `after`, and its state (checked first: when it is final, the
    /// events returned are all there will be).
    pub async fn events(
        &self,
        tenant: &str,
        id: &str,
        after: i64,
    ) -> Result<(JobState, Vec<JobEvent>), ApiError> {
        let row = self.row(tenant, id).await?;
        let q = "SELECT seq, data FROM job_events WHERE job_id = $1 AND seq > $2 ORDER BY seq LIMIT 500";
        let rows: Vec<(i64, String)> =
            on!(&self.db, p => sqlx::query_as(q).bind(id).bind(after).fetch_all(p).await)
                .map_err(db::failure)?;
        Ok((
            JobState::from_db(&row.state)?,
            rows.into_iter()
                .map(|(seq, data)| JobEvent { seq, data })
                .collect(),
        ))
    }

    /// The last event of a finished job's stream: `envelope` with the envelope, or `error`
    /// with the error body.
    pub async fn final_event(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<(&'static str, String), ApiError> {
        let view = self.get(tenant, id).await?;
        Ok(match (view.envelope, view.error) {
            (Some(env), _) => ("envelope", env.get().to_string()),
            (None, Some(err)) => (
                "error",
                serde_json::json!({"status": "error", "error": err}).to_string(),
            ),
            (None, None) => (
                "error",
                serde_json::json!({"status": "error", "error": {
                "code": "internal", "message": "the job ended without a result"}})
                .to_string(),
            ),
        })
    }

    /// Start this replica's runners and the sweeper of expired jobs.
    pub fn start(self: &Arc<Self>) {
        for _ in 0..self.runners {
            let me = self.clone();
            tokio::spawn(async move { me.runner().await });
        }
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = me.sweep().await {
                    tracing::warn!(error = %e, "could not remove expired jobs");
                }
                tokio::time::sleep(Duration::from_secs(300)).await;
            }
        });
    }

    async fn runner(self: Arc<Self>) {
        use std::sync::atomic::Ordering;
        while !self.stopping.load(Ordering::Relaxed) {
            match self.claim().await {
                Ok(Some(job)) => {
                    let id = job.id.clone();
                    // A panic in a read fails its job, not the runner.
                    let me = self.clone();
                    let run = tokio::spawn(async move { me.run(job).await });
                    if let Err(e) = run.await {
                        tracing::error!(job = %id, error = %e, "job runner failed");
                    }
                }
                Ok(None) => {
                    let _ = tokio::time::timeout(POLL, self.wake.notified()).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not claim a job");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
            }
        }
    }

    /// The replica is stopping (SIGTERM): claim nothing more.
    pub fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.wake.notify_waiters();
    }

    /// Hand this replica's running jobs back to the queue, for another replica to take at
    /// once rather than when their leases run out. Their runs here are refused every write
    /// from now on (they are no longer `running`; the next claim raises the fence). The
    /// number handed back.
    pub async fn release(&self) -> u64 {
        let q =
            "UPDATE jobs SET state = 'queued', owner = NULL, lease_until = 0, progress = NULL, \
                 updated_at = $1 WHERE owner = $2 AND state = 'running'";
        let n = on!(&self.db, p => sqlx::query(q)
            .bind(now_ms())
            .bind(&self.owner)
            .execute(p)
            .await
            .map(|r| r.rows_affected()));
        match n {
            Ok(n) => {
                if n > 0 {
                    tracing::info!(jobs = n, "running jobs handed back to the queue");
                }
                n
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not hand running jobs back (their leases run out instead)");
                0
            }
        }
    }

    /// Take the next job: queued, or running under a lease that expired (its replica died),
    /// the lowest turn first.
    async fn claim(&self) -> Result<Option<Claimed>, sqlx::Error> {
        let now = now_ms();
        let lease = now + LEASE.as_millis() as i64;
        // A read first: an idle replica's polls take no write lock (SQLite has one writer,
        // which uploads and reads need).
        let q = "SELECT id FROM jobs WHERE state = 'queued' OR (state = 'running' AND lease_until < $1) LIMIT 1";
        let any: Option<(String,)> =
            on!(&self.db, p => sqlx::query_as(q).bind(now).fetch_optional(p).await)?;
        if any.is_none() {
            return Ok(None);
        }
        let skip = self.db.skip_locked();
        // Between tenants: a tenant at its cap of running jobs waits; of the others, the
        // one with the fewest running goes first, then the fewest queued ahead (`turn`).
        // The counts are the database's, so every replica claims by the same rule.
        let q = format!(
            "UPDATE jobs SET state = 'running', fence = fence + 1, owner = $1, \
             lease_until = $2, updated_at = $3, started_at = $3 WHERE id = (SELECT j.id FROM jobs j \
             WHERE (j.state = 'queued' OR (j.state = 'running' AND j.lease_until < $3)) \
             AND (SELECT COUNT(*) FROM jobs r WHERE r.tenant = j.tenant AND r.state = 'running' \
                  AND r.lease_until >= $3) < $4 \
             ORDER BY (SELECT COUNT(*) FROM jobs r WHERE r.tenant = j.tenant AND r.state = 'running' \
                  AND r.lease_until >= $3), j.turn, j.created_at LIMIT 1{skip}) \
             RETURNING id, tenant, request, fence"
        );
        on!(&self.db, p => sqlx::query_as(&q)
            .bind(&self.owner)
            .bind(lease)
            .bind(now)
            .bind(self.per_tenant)
            .fetch_optional(p)
            .await)
    }

    /// Renew the lease; false when the job is no longer this run's (cancelled, or claimed
    /// by another runner after this one's lease ran out).
    async fn renew(&self, id: &str, fence: i64) -> Result<bool, sqlx::Error> {
        let q =
            "UPDATE jobs SET lease_until = $1 WHERE id = $2 AND fence = $3 AND state = 'running'";
        let n = on!(&self.db, p => sqlx::query(q)
            .bind(now_ms() + LEASE.as_millis() as i64)
            .bind(id)
            .bind(fence)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(n == 1)
    }

    /// Record a progress event (fenced: a stale run's events are not written).
    async fn progress(&self, id: &str, fence: i64, data: &str) -> Result<(), sqlx::Error> {
        let q = "UPDATE jobs SET progress = $1, updated_at = $2 WHERE id = $3 AND fence = $4 AND state = 'running'";
        let n = on!(&self.db, p => sqlx::query(q)
            .bind(data)
            .bind(now_ms())
            .bind(id)
            .bind(fence)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if n == 1 {
            let q = "INSERT INTO job_events (job_id, seq, data) VALUES ($1, \
                     (SELECT COALESCE(MAX(seq), 0) + 1 FROM job_events WHERE job_id = $1), $2)";
            on!(&self.db, p => sqlx::query(q).bind(id).bind(data).execute(p).await.map(drop))?;
        }
        Ok(())
    }

    async fn run(&self, job: Claimed) {
        let (id, fence) = (job.id.clone(), job.fence);
        tracing::info!(job = %id, fence, "job started");
        let req: ReadRequest = match serde_json::from_str(&job.request) {
            Ok(r) => r,
            Err(e) => {
                let e = ApiError::internal(format!("stored job request: {e}"));
                self.finish(&id, fence, Err(e)).await;
                return;
            }
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let sink = ProgressSink::new(move |p| {
            if let Ok(s) = serde_json::to_string(&p) {
                let _ = tx.send(s);
            }
        });
        let reader = self.reader.clone();
        let tenant = job.tenant.clone();
        let job_max = self.deadline_ms;
        let reading = async move {
            let mut prepared = reader.prepare(&tenant, req).await?;
            prepared.for_job(job_max, &reader.limits);
            reader.run(prepared, sink).await
        };
        tokio::pin!(reading);
        let mut beat = tokio::time::interval(HEARTBEAT);
        beat.tick().await;
        let (mut pending, mut written) = (None::<String>, std::time::Instant::now());
        let result = loop {
            tokio::select! {
                r = &mut reading => break Some(r),
                _ = beat.tick() => match self.renew(&id, fence).await {
                    Ok(true) => {}
                    Ok(false) => break None,
                    // The database is away: keep reading; the lease decides.
                    Err(e) => tracing::warn!(job = %id, error = %e, "could not renew a job's lease"),
                },
                Some(p) = rx.recv() => {
                    pending = Some(p);
                    if written.elapsed() >= PROGRESS_EVERY {
                        if let Some(p) = pending.take() {
                            let _ = self.progress(&id, fence, &p).await;
                        }
                        written = std::time::Instant::now();
                    }
                }
            }
        };
        let Some(result) = result else {
            tracing::info!(job = %id, fence, "job stopped: cancelled, or taken over");
            return;
        };
        while let Ok(p) = rx.try_recv() {
            pending = Some(p);
        }
        if let Some(p) = pending {
            let _ = self.progress(&id, fence, &p).await;
        }
        self.finish(&id, fence, result).await;
    }

    /// Write the result under the run's fence: a run that lost its job writes nothing.
    async fn finish(
        &self,
        id: &str,
        fence: i64,
        result: Result<crate::envelope::Envelope, ApiError>,
    ) {
        let now = now_ms();
        let written = match result {
            Ok(env) => {
                let key = format!("{id}.{fence}.json");
                let bytes = match serde_json::to_vec(&env) {
                    Ok(b) => b,
                    Err(e) => {
                        return Box::pin(self.finish(id, fence, Err(ApiError::internal(e)))).await
                    }
                };
                if let Err(e) = self.store.put_result(&key, bytes).await {
                    tracing::warn!(job = %id, error = %e, "could not store a job's result");
                    return Box::pin(self.finish(id, fence, Err(e.into_api()))).await;
                }
                let q = format!(
                    "UPDATE jobs SET state = 'done', result_key = $1, progress = NULL, updated_at = $2, \
                     {ENDED_CALLBACK} WHERE id = $3 AND fence = $4 AND state = 'running'"
                );
                let n = on!(&self.db, p => sqlx::query(&q)
                    .bind(&key)
                    .bind(now)
                    .bind(id)
                    .bind(fence)
                    .execute(p)
                    .await
                    .map(|r| r.rows_affected()));
                if !matches!(n, Ok(1)) {
                    self.store.remove_result(&key).await;
                }
                n
            }
            Err(e) => {
                let err = serde_json::to_string(&e.body(crate::request_id::current()).error)
                    .unwrap_or_default();
                let q = format!(
                    "UPDATE jobs SET state = 'failed', error = $1, progress = NULL, updated_at = $2, \
                     {ENDED_CALLBACK} WHERE id = $3 AND fence = $4 AND state = 'running'"
                );
                on!(&self.db, p => sqlx::query(&q)
                    .bind(&err)
                    .bind(now)
                    .bind(id)
                    .bind(fence)
                    .execute(p)
                    .await
                    .map(|r| r.rows_affected()))
            }
        };
        match written {
            Ok(1) => {
                tracing::info!(job = %id, fence, "job ended");
                self.callbacks.nudge();
            }
            Ok(_) => {
                tracing::info!(job = %id, fence, "job ended elsewhere (cancelled or taken over): result dropped")
            }
            Err(e) => {
                tracing::warn!(job = %id, error = %e, "could not record a job's end (another runner takes it after its lease)")
            }
        }
    }

    /// Forget jobs past their time, with their events and results.
    async fn sweep(&self) -> Result<(), sqlx::Error> {
        let q = "DELETE FROM jobs WHERE expires_at < $1 RETURNING id, result_key";
        let gone: Vec<(String, Option<String>)> =
            on!(&self.db, p => sqlx::query_as(q).bind(now_ms()).fetch_all(p).await)?;
        for (id, key) in gone {
            on!(&self.db, p => sqlx::query("DELETE FROM job_events WHERE job_id = $1")
                .bind(&id)
                .execute(p)
                .await
                .map(drop))?;
            if let Some(k) = key {
                self.store.remove_result(&k).await;
            }
        }
        Ok(())
    }
}
