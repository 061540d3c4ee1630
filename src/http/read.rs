//! `POST /read`: parse the body, hand it to the read service, answer with the envelope —
//! or, with `Accept: text/event-stream`, stream progress events and then the envelope.

use axum::extract::rejection::JsonRejection;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;

use super::auth::Tenant;
use super::AppState;
use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ProgressSink;
use crate::options::ReadRequest;

pub fn router() -> Router<AppState> {
    Router::new().route("/read", post(read))
}

/// Read a file: text and format metadata in one envelope. Options that do not fit the
/// file's format are refused (`unsupported_option`); positions past the end are
/// `out_of_range`; a cut text says how to read on in `next`. With `Accept:
/// text/event-stream` the answer is a stream of `progress` events ({done, total, stage}
/// per page) ending with an `envelope` (or `error`) event. With `file_ids` (up to 10) the
/// answer is `{"status":"ok","results":[…]}`: one envelope, error or `not_read` per file, in
/// order, the budget used up in file order.
#[utoipa::path(post, path = "/read", tag = "read", request_body = ReadRequest,
    responses(
        (status = 200, description = "the envelope; with `file_ids`, one result per file", body = ReadAnswer),
        (status = 202, description = "with `\"async\": true` or `Prefer: respond-async`: the queued job (`Location`: /jobs/{id})", body = crate::jobs::JobView),
        (status = 400, description = "invalid_request, invalid_option, unsupported_option, invalid_range, inverted_range, url_scheme_not_allowed", body = ErrorBody),
        (status = 401, description = "unauthorized", body = ErrorBody),
        (status = 403, description = "outside_allowed_roots, url_not_allowed, url_host_not_allowed, url_address_blocked, url_redirect_blocked", body = ErrorBody),
        (status = 404, description = "not_found", body = ErrorBody),
        (status = 413, description = "too_large: the file or what it expands to is over a limit (pixels, decompressed size, a worker's memory cap)", body = ErrorBody),
        (status = 415, description = "blocked_type, binary_content, legacy_format, unsupported_format", body = ErrorBody),
        (status = 416, description = "out_of_range", body = ErrorBody),
        (status = 422, description = "encrypted, corrupt, no_ocr_engine", body = ErrorBody),
        (status = 500, description = "extraction_crashed, internal", body = ErrorBody),
        (status = 502, description = "fetch_failed: the server of `url` could not be reached or answered an error", body = ErrorBody),
        (status = 503, description = "unavailable", body = ErrorBody),
        (status = 504, description = "timeout", body = ErrorBody)),
    security((), ("bearer" = [])))]
pub async fn read(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    headers: HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Response {
    let streamed = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    let mut req = match parse(body) {
        Ok(req) => req,
        Err(e) => return e.into_response(),
    };
    let prefer_async = headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim().eq_ignore_ascii_case("respond-async"));
    // A callback_url makes the read a job, whatever `async` says (a read answered at once
    // has nothing to call back; the 202 says what happened).
    if req.run_async.take().unwrap_or(prefer_async) || req.callback_url.is_some() {
        return submit(&st, &tenant, streamed, req).await;
    }
    if req.file_ids.is_some() {
        if streamed {
            return ApiError::invalid_option("a read of several files (file_ids) is not streamed")
                .with_hint("Send it without `Accept: text/event-stream`, or stream each file's read on its own.")
                .into_response();
        }
        let rid = super::request_id::current();
        return match st.reader.read_many(&tenant, req, rid).await {
            Ok(results) => Json(results).into_response(),
            Err(e) => e.into_response(),
        };
    }
    let prepared = st.reader.prepare(&tenant, req).await;
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if !streamed {
        return match st.reader.run(prepared, ProgressSink::default()).await {
            Ok(env) => Json(env).into_response(),
            Err(e) => e.into_response(),
        };
    }
    // Progress as server-sent events, then the envelope (or the error) as the last event.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let progress_tx = tx.clone();
    let progress = ProgressSink::new(move |p| {
        if let Ok(ev) = Event::default().event("progress").json_data(&p) {
            let _ = progress_tx.send(ev);
        }
    });
    let request_id = super::request_id::current().unwrap_or_default();
    tokio::spawn(super::request_id::scope(request_id, async move {
        let last = match st.reader.run(prepared, progress).await {
            Ok(env) => Event::default().event("envelope").json_data(&env),
            Err(e) => Event::default()
                .event("error")
                .json_data(super::error::body(&e)),
        };
        if let Ok(ev) = last {
            let _ = tx.send(ev);
        }
    }));
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|ev| (Ok::<_, std::convert::Infallible>(ev), rx))
    });
    event_stream(events)
}

/// Server-sent events as a response (a streamed read, a job's events). Gateways buffer
/// responses by default; two headers ask nginx (and caches) to pass each event on as it
/// comes.
pub(super) fn event_stream(
    events: impl futures_util::Stream<Item = Result<Event, std::convert::Infallible>> + Send + 'static,
) -> Response {
    let mut res = Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response();
    let h = res.headers_mut();
    h.insert("x-accel-buffering", header::HeaderValue::from_static("no"));
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    res
}

/// `"async": true`: queue the read as a job and answer 202 with it. What can be checked
/// without reading is checked now (the file exists, the request's shape); the rest is the
/// job's typed error.
async fn submit(st: &AppState, tenant: &str, streamed: bool, req: ReadRequest) -> Response {
    if req.file_ids.is_some() {
        return ApiError::invalid_option("a read of several files (file_ids) is not run as a job")
            .with_hint("Submit one job per file_id.")
            .into_response();
    }
    if streamed {
        return ApiError::invalid_option("an async read answers at once, not as a stream")
            .with_hint("Stream the job's progress from GET /jobs/{id}/events.")
            .into_response();
    }
    // What can be known without reading is answered at once, as a read would: values out
    // of their range, and an upload that does not exist.
    if let Err(e) = crate::read::check_values(&req) {
        return e.into_response();
    }
    if let Some(id) = &req.file_id {
        if let Err(e) = st.files.get(tenant, id).await {
            return e.into_response();
        }
    }
    match st.jobs.submit(tenant, &req).await {
        Ok(job) => {
            let mut res = (axum::http::StatusCode::ACCEPTED, Json(&job)).into_response();
            if let Ok(v) = header::HeaderValue::from_str(&job.links.this) {
                res.headers_mut().insert(header::LOCATION, v);
            }
            res
        }
        Err(e) => e.into_response(),
    }
}

/// What `POST /read` answers: one envelope, or with `file_ids` one result per file.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum ReadAnswer {
    One(Envelope),
    Many(crate::read::ReadResults),
}

fn parse(body: Result<Json<Value>, JsonRejection>) -> Result<ReadRequest, ApiError> {
    let Json(body) = body.map_err(|e| {
        ApiError::invalid_request(format!("the body is not valid JSON: {}", e.body_text()))
    })?;
    if !body.is_object() {
        return Err(ApiError::invalid_request(
            "the body must be a JSON object such as {\"file_id\": \"f_…\"}",
        ));
    }
    serde_json::from_value(body).map_err(|e| {
        ApiError::invalid_option(format!("bad option: {e}"))
            .with_hint("See the ReadRequest schema at /docs for option names and types.")
    })
}
