//! Read jobs over HTTP (`jobs.rs`): `GET /jobs/{id}`, `GET /jobs/{id}/events`,
//! `DELETE /jobs/{id}`; `POST /read` with `"async": true` makes them (`read.rs`).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

use super::answers::{
    event_channel, event_stream, long_json, place_for_an_answer, sse_event, STREAM_TEXT_BYTES,
};
use super::auth::Tenant;
use super::responses::error_responses;
use super::AppState;
use crate::callbacks::CallbackSecret;
use crate::error::ApiError;
use crate::jobs::JobView;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/jobs/{id}", get(show).delete(cancel))
        .route("/jobs/{id}/events", get(events))
        .route("/callbacks/secret", get(callback_secret))
}

error_responses!(
    /// The errors `GET /callbacks/secret` answers with.
    CallbackSecretErrors:
    Unauthorized, Unavailable,
);

/// The tenant's secret for checking job callbacks (`callback_url`): each callback carries
/// `X-Docreader-Signature: sha256=<hex>`, the HMAC-SHA256 of its body under this secret.
/// Made on first use; the same from every replica.
#[utoipa::path(get, path = "/callbacks/secret", tag = "read",
    responses(
        (status = 200, description = "the tenant's signing secret", body = CallbackSecret),
        CallbackSecretErrors),
    security((), ("bearer" = [])))]
pub async fn callback_secret(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
) -> Result<Json<CallbackSecret>, ApiError> {
    Ok(Json(CallbackSecret {
        status: "ok",
        secret: st.jobs.callbacks().secret(&tenant).await?,
        header: "X-Docreader-Signature",
    }))
}

error_responses!(
    /// The errors `GET /jobs/{id}` and `DELETE /jobs/{id}` answer with.
    JobErrors:
    Unauthorized, NotFound, Unavailable,
);

/// A read job: `queued`, `running` (with its last progress event), `done` (with the
/// envelope), `failed` (with the error) or `cancelled` — from any replica. Jobs and their
/// results are kept for `DOCREADER_JOB_TTL_HOURS` (24 by default), not removed when read.
#[utoipa::path(get, path = "/jobs/{id}", tag = "read",
    params(("id" = String, Path, description = "The job id `POST /read` with `\"async\": true` answered")),
    responses(
        (status = 200, description = "the job", body = JobView),
        JobErrors),
    security((), ("bearer" = [])))]
pub async fn show(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    // A done job's long envelope: its answer holds a place from before the result is
    // loaded and goes out paced, as a read's does. Polling a job that runs, or whose result
    // is short, waits for no place.
    let long = st
        .jobs
        .long_result(&tenant, &id, STREAM_TEXT_BYTES as i64)
        .await?;
    let place = match long {
        true => Some(place_for_an_answer(&tenant, st.limits.max_concurrent_reads).await),
        false => None,
    };
    let view = st.jobs.get(&tenant, &id).await?;
    Ok(match place {
        Some(place) => long_json(view, true, place),
        None => Json(view).into_response(),
    })
}

/// Cancel a job: a queued one never runs, a running one stops within seconds (its state
/// is `cancelled` at once). A job that already ended is answered as it is.
#[utoipa::path(delete, path = "/jobs/{id}", tag = "read",
    params(("id" = String, Path, description = "The job id")),
    responses(
        (status = 200, description = "the job, `cancelled` unless it had ended", body = JobView),
        JobErrors),
    security((), ("bearer" = [])))]
pub async fn cancel(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Json<JobView>, ApiError> {
    st.jobs.cancel(&tenant, &id).await.map(Json)
}

/// The largest event number a stream ever gives (a job has at most a few thousand).
const MAX_EVENT_ID: i64 = i32::MAX as i64;

/// `Last-Event-ID`: absent, from the start; else a whole number the stream could
/// have given (0 to 2^31 - 1), and nothing else.
fn last_event_id(headers: &HeaderMap) -> Result<i64, ApiError> {
    let Some(v) = headers.get("last-event-id") else {
        return Ok(0);
    };
    // An empty one is no event number either (EventSource never sends it empty).
    let text = v.to_str().unwrap_or("\u{fffd}").trim();
    match text.parse::<i64>() {
        Ok(n) if (0..=MAX_EVENT_ID).contains(&n) && text.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(ApiError::invalid_request(format!(
            "Last-Event-ID {:?} is not an event number of this stream",
            text.chars().take(40).collect::<String>()
        ))
        .with_hint("Send back the id of the last event received (a whole number), or no Last-Event-ID to start from the beginning.")),
    }
}

error_responses!(
    /// The errors `GET /jobs/{id}/events` answers with.
    JobEventsErrors:
    InvalidRequest => "a Last-Event-ID that is no event number",
    Unauthorized, NotFound, Unavailable,
);

/// The job's progress as server-sent events, as a streamed `POST /read` sends them:
/// `progress` events (`{done, total, stage}`), then one `envelope` or `error` event, then
/// the end. Each event has an id; reconnecting with `Last-Event-ID` resumes after it. Any
/// replica serves it, whichever runs the job.
#[utoipa::path(get, path = "/jobs/{id}/events", tag = "read",
    params(("id" = String, Path, description = "The job id"),
        ("Last-Event-ID" = Option<i64>, Header, nullable = false, minimum = 0, maximum = 2147483647, description = "Resume after this event (its id, a whole number)")),
    responses(
        (status = 200, description = "text/event-stream: progress events, then envelope or error", content_type = "text/event-stream", body = JobStreamEvent),
        JobEventsErrors),
    security((), ("bearer" = [])))]
pub async fn events(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut after = last_event_id(&headers)?;
    // An unknown job is a plain 404, not a stream (its result is not loaded for it).
    st.jobs.exists(&tenant, &id).await?;
    let (mut events, body) = event_channel();
    let jobs = st.jobs.clone();
    let lanes = st.limits.max_concurrent_reads;
    tokio::spawn(async move {
        loop {
            let (state, batch) = match jobs.events(&tenant, &id, after).await {
                Ok(x) => x,
                Err(e) => {
                    let _ = events.send(error_event(&e)).await;
                    return;
                }
            };
            let full = batch.len() >= 500;
            for e in batch {
                after = e.seq;
                let ev = sse_event(Some(e.seq), "progress", &e.data);
                if events.send(ev).await.is_err() {
                    return;
                }
            }
            if state.ended() && !full {
                // The envelope is loaded, and goes out paced, while a place is held (a
                // short one goes out at once).
                let long = jobs
                    .long_result(&tenant, &id, STREAM_TEXT_BYTES as i64)
                    .await
                    .unwrap_or(true);
                let place = match long {
                    true => Some(place_for_an_answer(&tenant, lanes).await),
                    false => None,
                };
                match jobs.final_event(&tenant, &id).await {
                    Ok((kind, data)) => events.send_last(Some(after + 1), kind, data, place).await,
                    Err(e) => {
                        let _ = events.send(error_event(&e)).await;
                    }
                }
                return;
            }
            if !full {
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_millis(300)) => {}
                    _ = events.closed() => return,
                }
            }
        }
    });
    Ok(event_stream(body))
}

/// One server-sent event of a job's stream (the stream's schema, for clients and tests).
#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct JobStreamEvent {
    /// `progress`, then `envelope` or `error`.
    pub event: String,
    /// The sequence number: send it back as `Last-Event-ID` to resume after it.
    pub id: Option<String>,
    /// JSON: `{done, total, stage}` for `progress`, the envelope, or the error body.
    pub data: String,
}

fn error_event(e: &ApiError) -> axum::body::Bytes {
    let data = serde_json::to_string(&super::error::body(e)).unwrap_or_default();
    sse_event(None, "error", &data)
}
