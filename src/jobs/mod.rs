//! Read jobs (issue #22): `POST /read` with `"async": true` (or `Prefer: respond-async`)
//! answers 202 with a job at once; any replica then answers `GET /jobs/{id}`, streams
//! `GET /jobs/{id}/events` and cancels with `DELETE /jobs/{id}`, because the job, its
//! progress and its events live in the database and its result in the blob store.
//!
//! Every replica runs a few job runners that claim queued jobs through the database
//! (`Db::claim_due`: `FOR UPDATE SKIP LOCKED` on Postgres; SQLite has one writer). A
//! claim takes a lease (`LEASE`), renewed by a heartbeat while the read runs, and raises
//! the job's `fence`: every write of a runner names the fence it claimed with, so a
//! runner whose lease was taken over (it stalled past the lease) or whose job was
//! cancelled finds its writes refused, stops, and never overwrites the result of the run
//! that replaced it. A replica that dies leaves its jobs to the others when their leases
//! expire.
//!
//! Fairness between tenants: a job's `turn` is the number of its tenant's jobs queued or
//! running when it was submitted, and runners take the lowest turn first — with twenty of
//! tenant A's jobs queued, tenant B's one job (turn 0) starts before A's second.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

pub use crate::callbacks::JobState;
use crate::db::{self, on, Db};
use crate::error::{ApiError, ErrorCode};
use crate::extract::ProgressSink;
use crate::options::ReadRequest;
use crate::read::ReadService;
use crate::store::Store;

mod queue;
mod runner;

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
    /// The last progress event of a running job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<crate::extract::Progress>,
    /// The read's envelope, once `done` (as the read made it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub envelope: Option<Box<serde_json::value::RawValue>>,
    /// The read's error (as an error body's `error`), once `failed` or `cancelled`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::error::ErrorDetail>,
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
    /// Bytes of results one tenant may have kept at once (0: no cap).
    result_budget: u64,
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
