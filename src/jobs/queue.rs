//! The queue's side of jobs: submitting, looking up, cancelling, and their events.

use super::*;

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
            result_budget: 0,
            wake: tokio::sync::Notify::new(),
            callbacks,
            stopping: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Hold each tenant's kept results to `bytes` (0: no cap).
    pub fn with_result_budget(mut self, bytes: u64) -> Self {
        self.result_budget = bytes;
        self
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

    pub(super) async fn row(&self, tenant: &str, id: &str) -> Result<Row, ApiError> {
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
    /// The job exists for the tenant (`not_found` otherwise), without loading its result.
    pub async fn exists(&self, tenant: &str, id: &str) -> Result<(), ApiError> {
        self.row(tenant, id).await.map(|_| ())
    }

    /// Whether the job is done with a result that may be long (over `long` bytes, or of a
    /// size not recorded): its answer then holds a place before the result is loaded. An
    /// unknown job is `false` (its 404 comes from `get`).
    pub async fn long_result(&self, tenant: &str, id: &str, long: i64) -> Result<bool, ApiError> {
        let q = "SELECT result_bytes FROM jobs WHERE id = $1 AND tenant = $2 AND state = 'done'";
        let row: Option<(Option<i64>,)> = on!(&self.db, p => sqlx::query_as(q)
            .bind(id)
            .bind(tenant)
            .fetch_optional(p)
            .await)
        .map_err(db::failure)?;
        Ok(row.is_some_and(|(n,)| n.is_none_or(|n| n > long)))
    }

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
            error: row.error.map(|e| stored_error(&e)),
            envelope,
            state: JobState::from_db(&row.state)?,
            created_at: rfc3339(row.created_at),
            started_at: row.started_at.map(rfc3339),
            expires_at: rfc3339(row.expires_at),
        })
    }

    pub(super) async fn result(
        &self,
        key: &str,
    ) -> Result<Box<serde_json::value::RawValue>, ApiError> {
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
}

/// A failed job's error as it was stored (an error body's `error`). One this build cannot
/// read whole (a code a newer replica wrote) keeps its message and hint, as `internal`.
fn stored_error(raw: &str) -> crate::error::ErrorDetail {
    serde_json::from_str(raw).unwrap_or_else(|_| {
        let v: serde_json::Value = serde_json::from_str(raw).unwrap_or_default();
        let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
        crate::error::ErrorDetail {
            code: ErrorCode::Internal,
            message: match text("message") {
                m if m.is_empty() => "the job failed; its error could not be read".into(),
                m => m,
            },
            hint: text("hint"),
            request_id: v["request_id"].as_str().map(str::to_string),
        }
    })
}
