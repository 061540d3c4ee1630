//! The runners' side of jobs: claiming under a lease, heartbeats, running the read,
//! finishing it once (by fence), releasing at a stop, and sweeping expired jobs.

use super::*;
use crate::db::{Bind, Claim};

impl Jobs {
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

    pub(super) async fn runner(self: Arc<Self>) {
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
    pub(super) async fn claim(&self) -> Result<Option<Claimed>, sqlx::Error> {
        let now = now_ms();
        let lease = now + LEASE.as_millis() as i64;
        // Between tenants: a tenant at its cap of running jobs waits; of the others, the
        // one with the fewest running goes first, then the fewest queued ahead (`turn`).
        // The counts are the database's, so every replica claims by the same rule.
        self.db
            .claim_due(Claim {
                table: "jobs",
                peek: "state = 'queued' OR (state = 'running' AND lease_until < $1)",
                peek_binds: &[Bind::Int(now)],
                set: "state = 'running', fence = fence + 1, owner = $1, lease_until = $2, \
                      updated_at = $3, started_at = $3",
                due: "(c.state = 'queued' OR (c.state = 'running' AND c.lease_until < $3)) \
                      AND (SELECT COUNT(*) FROM jobs r WHERE r.tenant = c.tenant \
                           AND r.state = 'running' AND r.lease_until >= $3) < $4",
                order: "(SELECT COUNT(*) FROM jobs r WHERE r.tenant = c.tenant \
                        AND r.state = 'running' AND r.lease_until >= $3), c.turn, c.created_at",
                returning: "id, tenant, request, fence",
                binds: &[
                    Bind::Text(&self.owner),
                    Bind::Int(lease),
                    Bind::Int(now),
                    Bind::Int(self.per_tenant),
                ],
            })
            .await
    }

    /// Renew the lease; false when the job is no longer this run's (cancelled, or claimed
    /// by another runner after this one's lease ran out).
    pub(super) async fn renew(&self, id: &str, fence: i64) -> Result<bool, sqlx::Error> {
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
    pub(super) async fn progress(
        &self,
        id: &str,
        fence: i64,
        data: &str,
    ) -> Result<(), sqlx::Error> {
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

    pub(super) async fn run(&self, job: Claimed) {
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

    /// Whether the job's tenant may keep `len` more bytes of results: what its done jobs
    /// not yet expired keep, and this, within `result_budget`. Concurrent jobs of one tenant
    /// (at most `per_tenant`) may each pass before the others are counted.
    async fn within_budget(&self, id: &str, len: i64) -> Result<(), ApiError> {
        if self.result_budget == 0 {
            return Ok(());
        }
        let q = "SELECT CAST(COALESCE(SUM(result_bytes), 0) AS BIGINT) FROM jobs \
                 WHERE tenant = (SELECT tenant FROM jobs WHERE id = $1) AND state = 'done' \
                 AND expires_at > $2";
        let kept: i64 = on!(&self.db, p => sqlx::query_scalar(q)
            .bind(id)
            .bind(now_ms())
            .fetch_one(p)
            .await)
        .map_err(crate::db::failure)?;
        let budget = self.result_budget.min(i64::MAX as u64) as i64;
        if kept.saturating_add(len) <= budget {
            return Ok(());
        }
        let mib = |b: i64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
        Err(ApiError::new(
            ErrorCode::TooLarge,
            format!(
                "the result ({}) is not kept: this key's job results kept now take {} of the {} it may keep",
                mib(len),
                mib(kept),
                mib(budget)
            ),
        )
        .with_hint(format!(
            "Results are kept for {} hours after their job was submitted. Read without `async` (an answer is not kept), read a part (`pages`, `max_chars`), or ask the operator to raise DOCREADER_MAX_JOB_RESULT_BYTES.",
            self.ttl.as_secs() / 3600
        )))
    }

    /// Write the result under the run's fence: a run that lost its job writes nothing.
    pub(super) async fn finish(
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
                let len = bytes.len() as i64;
                if let Err(e) = self.within_budget(id, len).await {
                    return Box::pin(self.finish(id, fence, Err(e))).await;
                }
                if let Err(e) = self.store.put_result(&key, bytes).await {
                    tracing::warn!(job = %id, error = %e, "could not store a job's result");
                    return Box::pin(self.finish(id, fence, Err(e.into_api()))).await;
                }
                let q = format!(
                    "UPDATE jobs SET state = 'done', result_key = $1, progress = NULL, updated_at = $2, \
                     result_bytes = $5, {ENDED_CALLBACK} WHERE id = $3 AND fence = $4 AND state = 'running'"
                );
                let n = on!(&self.db, p => sqlx::query(&q)
                    .bind(&key)
                    .bind(now)
                    .bind(id)
                    .bind(fence)
                    .bind(len)
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
    pub(super) async fn sweep(&self) -> Result<(), sqlx::Error> {
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
