//! Job callbacks (issue #22): a job submitted with `callback_url` has that URL POSTed when
//! it ends (`done`, `failed` or `cancelled`), so a caller need not poll.
//!
//! - Only hosts the operator lists (`DOCREADER_CALLBACK_ALLOWLIST`), through the same
//!   guard against server-side request forgery as URL inputs (`fetch.rs`): the host is
//!   checked when the job is submitted, the addresses it resolves to at every delivery
//!   (loopback, private and metadata addresses refused unless their range is listed in
//!   `DOCREADER_URL_ALLOW_ADDRESSES`), no redirect followed.
//! - Signed: `X-Docreader-Signature: sha256=<hex>`, the HMAC-SHA256 of the body under the
//!   tenant's secret (`GET /callbacks/secret`, made on first use, the same on every
//!   replica). The body names the job and its state and carries `sent_at`; the envelope
//!   itself is fetched with `GET /jobs/{id}` (it can be 50 M characters).
//! - Retried with backoff: a delivery that fails (no answer, not 2xx) is tried again after
//!   `DOCREADER_CALLBACK_RETRY_MS`, doubling, at most 15 minutes apart, 8 attempts in all.
//!   The delivery's state lives in the job's row, so any replica delivers and retries it:
//!   a delivery is claimed by pushing its next attempt a minute ahead, so one whose
//!   replica died is tried again by another. Delivery is at least once: a receiver keys
//!   on `job_id`.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use utoipa::ToSchema;

use crate::db::{self, on, Bind, Claim, Db};
use crate::error::{ApiError, ErrorCode};
use crate::fetch::FetchPolicy;

/// Attempts at one delivery before it is given up.
pub const ATTEMPTS: i64 = 8;
/// How long a claimed delivery is left to its replica (longer than an attempt may take).
const CLAIM: Duration = Duration::from_secs(60);
/// One attempt's time limit.
pub const ATTEMPT_TIMEOUT_MS: u64 = 10_000;
/// Deliveries one replica makes at once.
const PARALLEL: usize = 8;
/// How often an idle deliverer looks for due deliveries.
const POLL: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// Where a job is: a closed set (the database keeps its name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    /// Its name, as the wire and the database write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The state a database row names (an unknown name is a fault of the database).
    pub fn from_db(name: &str) -> Result<Self, crate::error::ApiError> {
        [
            Self::Queued,
            Self::Running,
            Self::Done,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
        .ok_or_else(|| crate::error::ApiError::internal(format!("unknown job state {name:?}")))
    }

    /// Whether the job has ended.
    pub fn ended(self) -> bool {
        matches!(self, Self::Done | Self::Failed | Self::Cancelled)
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a job's callback is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallbackState {
    /// The job has not ended.
    Waiting,
    /// Being delivered or retried.
    Pending,
    Delivered,
    /// Every attempt failed.
    Failed,
}

impl CallbackState {
    /// The state a database row names (none: the job has not ended).
    pub fn from_db(name: Option<&str>) -> Result<Self, crate::error::ApiError> {
        match name {
            None | Some("waiting") => Ok(Self::Waiting),
            Some("pending") => Ok(Self::Pending),
            Some("delivered") => Ok(Self::Delivered),
            Some("failed") => Ok(Self::Failed),
            Some(other) => Err(crate::error::ApiError::internal(format!(
                "unknown callback state {other:?}"
            ))),
        }
    }
}

/// A job's callback as `GET /jobs/{id}` shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackView {
    pub url: String,
    pub state: CallbackState,
    pub attempts: i64,
    /// Why the last attempt failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The tenant's signing secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackSecret {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    /// Hex; `X-Docreader-Signature` is `sha256=` and the hex HMAC-SHA256 of the body
    /// under this secret (the secret's text as the key).
    pub secret: String,
    /// The header that carries the signature.
    #[schema(example = "X-Docreader-Signature")]
    pub header: &'static str,
}

/// What the callback's body says.
#[derive(Debug, Serialize, ToSchema)]
pub struct CallbackBody {
    /// Always `job.ended`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub job_id: String,
    /// `done`, `failed` or `cancelled`.
    pub state: JobState,
    /// The job's error, when it failed or was cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub error: Option<serde_json::Value>,
    /// `self` (`GET` it for the envelope) and `events`.
    pub links: JobLinks,
    /// 1 for the first attempt.
    pub attempt: i64,
    /// RFC 3339 UTC: a receiver may refuse old deliveries (replays).
    pub sent_at: String,
}

#[derive(sqlx::FromRow)]
struct Due {
    id: String,
    tenant: String,
    callback_url: String,
    state: String,
    error: Option<String>,
    callback_attempts: i64,
}

pub struct Callbacks {
    db: Db,
    policy: FetchPolicy,
    retry: Duration,
    wake: tokio::sync::Notify,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Callbacks {
    /// `policy` from `FetchPolicy::for_callbacks` (with `ATTEMPT_TIMEOUT_MS`).
    pub fn new(db: Db, policy: FetchPolicy, retry: Duration) -> Self {
        Self {
            db,
            policy,
            retry: retry.max(Duration::from_millis(1)),
            wake: tokio::sync::Notify::new(),
        }
    }

    /// Check a `callback_url` when its job is submitted: the URL as it will be called.
    pub fn check(&self, url: &str) -> Result<String, ApiError> {
        if self.policy.hosts.is_empty() {
            return Err(ApiError::new(
                ErrorCode::UrlNotAllowed,
                "this service does not make callbacks",
            )
            .with_hint(
                "Poll GET /jobs/{id} or stream GET /jobs/{id}/events, or ask the operator to list the host in DOCREADER_CALLBACK_ALLOWLIST.",
            ));
        }
        crate::fetch::check_target(&self.policy, url).map(|u| u.to_string())
    }

    /// The tenant's signing secret, made on first use (replicas asking at once agree on
    /// the first one written). Read first: only the first use writes.
    pub async fn secret(&self, tenant: &str) -> Result<String, ApiError> {
        let q = "SELECT secret FROM callback_secrets WHERE tenant = $1";
        let read = || async {
            on!(&self.db, p => sqlx::query_as::<_, (String,)>(q).bind(tenant).fetch_optional(p).await)
                .map_err(db::failure)
        };
        if let Some((secret,)) = read().await? {
            return Ok(secret);
        }
        let q = "INSERT INTO callback_secrets (tenant, secret, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (tenant) DO NOTHING";
        on!(&self.db, p => sqlx::query(q)
            .bind(tenant)
            .bind(crate::store::random_hex(32))
            .bind(now_ms())
            .execute(p)
            .await
            .map(drop))
        .map_err(db::failure)?;
        read()
            .await?
            .map(|(s,)| s)
            .ok_or_else(|| ApiError::internal("the callback secret was not kept"))
    }

    /// A job ended with a callback to make: deliver soon.
    pub fn nudge(&self) {
        self.wake.notify_one();
    }

    /// Start this replica's deliverer: it claims due deliveries and makes up to
    /// `PARALLEL` at once (a receiver that hangs holds one slot for an attempt's 10 s, not
    /// every other tenant's callbacks).
    pub fn start(self: &Arc<Self>) {
        let me = self.clone();
        tokio::spawn(async move {
            let slots = Arc::new(tokio::sync::Semaphore::new(PARALLEL));
            loop {
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    return;
                };
                match me.claim().await {
                    Ok(Some(due)) => {
                        let me = me.clone();
                        tokio::spawn(async move {
                            if let Err(e) = me.deliver(due).await {
                                tracing::warn!(error = %e, "could not record a callback's outcome (it is tried again)");
                            }
                            drop(slot);
                        });
                    }
                    Ok(None) => {
                        drop(slot);
                        let _ = tokio::time::timeout(POLL, me.wake.notified()).await;
                    }
                    Err(e) => {
                        drop(slot);
                        tracing::warn!(error = %e, "could not look for job callbacks to make");
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                }
            }
        });
    }

    /// Claim one due delivery (its next attempt pushed a minute ahead, so no other
    /// deliverer takes it meanwhile); `None` when none is due.
    async fn claim(&self) -> Result<Option<Due>, sqlx::Error> {
        let now = now_ms();
        self.db
            .claim_due(Claim {
                table: "jobs",
                peek: "callback_state = 'pending' AND callback_next_at <= $1",
                peek_binds: &[Bind::Int(now)],
                set: "callback_next_at = $1, callback_attempts = callback_attempts + 1",
                due: "c.callback_state = 'pending' AND c.callback_next_at <= $2",
                order: "c.callback_next_at",
                returning: "id, tenant, callback_url, state, error, callback_attempts",
                binds: &[Bind::Int(now + CLAIM.as_millis() as i64), Bind::Int(now)],
            })
            .await
    }

    /// Make one claimed delivery and record how it went (only while the claim is still
    /// this one's: its attempt count unchanged).
    async fn deliver(&self, due: Due) -> Result<(), sqlx::Error> {
        // What went wrong in detail (refused, reset, timed out, which status) goes to the log
        // only: told to the tenant it would map which ports of an allowed host answer.
        let outcome = self.attempt(&due).await;
        let (id, n) = (&due.id, due.callback_attempts);
        match outcome {
            Ok(()) => {
                tracing::info!(job = %id, attempt = n, "callback delivered");
                let q = "UPDATE jobs SET callback_state = 'delivered', callback_next_at = NULL, \
                         callback_error = NULL WHERE id = $1 AND callback_attempts = $2";
                on!(&self.db, p => sqlx::query(q).bind(id).bind(n).execute(p).await.map(drop))?;
            }
            Err((e, detail)) if n >= ATTEMPTS => {
                tracing::warn!(job = %id, attempt = n, error = %detail, "callback failed: given up");
                let q = "UPDATE jobs SET callback_state = 'failed', callback_next_at = NULL, \
                         callback_error = $3 WHERE id = $1 AND callback_attempts = $2";
                on!(&self.db, p => sqlx::query(q).bind(id).bind(n).bind(&e).execute(p).await.map(drop))?;
            }
            Err((e, detail)) => {
                tracing::info!(job = %id, attempt = n, error = %detail, "callback failed: to be retried");
                let next = now_ms() + self.backoff(n).as_millis() as i64;
                let q = "UPDATE jobs SET callback_next_at = $3, callback_error = $4 \
                         WHERE id = $1 AND callback_attempts = $2";
                on!(&self.db, p => sqlx::query(q).bind(id).bind(n).bind(next).bind(&e).execute(p).await.map(drop))?;
            }
        }
        // Another delivery may have come due while this one was made.
        self.wake.notify_one();
        Ok(())
    }

    /// Wait after the `attempts`th failed attempt.
    fn backoff(&self, attempts: i64) -> Duration {
        let factor = 1u32 << (attempts.clamp(1, 16) - 1) as u32;
        self.retry.saturating_mul(factor).min(MAX_BACKOFF)
    }

    /// One attempt: POST the signed body; an error says why it failed, as the tenant is
    /// told it and as the log has it.
    async fn attempt(&self, due: &Due) -> Result<(), (String, String)> {
        let plain = |e: String| (GENERIC_FAILURE.to_string(), e);
        let secret = self
            .secret(&due.tenant)
            .await
            .map_err(|e| plain(e.message))?;
        let body = CallbackBody {
            kind: "job.ended",
            job_id: due.id.clone(),
            state: JobState::from_db(&due.state).map_err(|e| plain(e.message))?,
            error: due
                .error
                .as_deref()
                .and_then(|e| serde_json::from_str(e).ok()),
            links: JobLinks::of(&due.id),
            attempt: due.callback_attempts,
            sent_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        let body = serde_json::to_vec(&body).map_err(|e| plain(e.to_string()))?;
        let signature = format!(
            "sha256={}",
            hex::encode(hmac_sha256(secret.as_bytes(), &body))
        );
        let url = url::Url::parse(&due.callback_url).map_err(|e| plain(e.to_string()))?;
        let headers = vec![
            ("content-type", "application/json".to_string()),
            ("x-docreader-signature", signature),
            ("x-docreader-job", due.id.clone()),
            ("x-docreader-attempt", due.callback_attempts.to_string()),
        ];
        match crate::fetch::post(&self.policy, &url, headers, body).await {
            Ok(status) if status.is_success() => Ok(()),
            Ok(status) => Err(plain(format!(
                "{} answered HTTP {status}",
                url.host_str().unwrap_or("")
            ))),
            // The operator's rules (a host or address not allowed) are the tenant's to know;
            // how a connection failed is not.
            Err(e)
                if matches!(
                    e.code,
                    ErrorCode::UrlNotAllowed
                        | ErrorCode::UrlHostNotAllowed
                        | ErrorCode::UrlSchemeNotAllowed
                        | ErrorCode::UrlAddressBlocked
                        | ErrorCode::UrlRedirectBlocked
                ) =>
            {
                let told = format!("{}: {}", e.code.as_str(), e.message);
                Err((told.clone(), told))
            }
            Err(e) => Err(plain(format!(
                "{}: {} ({:?})",
                e.code.as_str(),
                e.message,
                e.cause
            ))),
        }
    }
}

/// The one reason a tenant is shown for a failed delivery, whatever the cause.
pub const GENERIC_FAILURE: &str =
    "not delivered: the receiver gave no 2xx answer within 10 s (the operator's log has the details)";

/// HMAC-SHA256 (RFC 2104).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.map(|x| x ^ b);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2.
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex::encode(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}

/// Where a job is seen: its own URL and its events' (in the job's view and its callbacks).
#[derive(Debug, Serialize, ToSchema)]
pub struct JobLinks {
    #[serde(rename = "self")]
    pub this: String,
    pub events: String,
}

impl JobLinks {
    pub fn of(id: &str) -> Self {
        Self {
            this: format!("/jobs/{id}"),
            events: format!("/jobs/{id}/events"),
        }
    }
}
