//! `POST /read`: parse the body, hand it to the read service, answer with the envelope —
//! or, with `Accept: text/event-stream`, stream progress events and then the envelope.

use axum::extract::rejection::JsonRejection;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;

use super::answers::{
    event_channel, event_stream, long_json, place_for_an_answer, sse_event, Place,
    STREAM_TEXT_BYTES,
};
use super::auth::Tenant;
use super::responses::error_responses;
use super::AppState;
use crate::envelope::Envelope;
use crate::error::ApiError;
use crate::extract::ProgressSink;
use crate::options::ReadRequest;

/// The envelope as the answer's JSON body (long ones written as they are serialised).
pub(super) fn envelope_response(env: Envelope, place: Place) -> Response {
    let long = env.text.len() > STREAM_TEXT_BYTES;
    long_json(env, long, place)
}

pub fn router(max_request_bytes: u64) -> Router<AppState> {
    Router::new().route(
        "/read",
        // A one-shot read's multipart body is as large as an upload's (a JSON body is capped
        // before it gets here, by `guard::bodies`).
        post(read).layer(axum::extract::DefaultBodyLimit::max(
            (max_request_bytes as usize).saturating_add(64 * 1024),
        )),
    )
}

/// Whether a request's body is a multipart form (a one-shot read).
pub fn is_multipart(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("multipart/form-data")
        })
}

/// The multipart form of a one-shot `POST /read`: the file, and its read options.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct OneShotForm {
    /// The file to read (one). Limited, sniffed and blocked as an upload is.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
    /// The read options as a JSON object (`ReadRequest` without `file_id`, `file_ids`,
    /// `path`, `url`, `async` or `callback_url`), plus `"keep": true` to keep the file as
    /// an upload (its `file_id` in the envelope); by default nothing of it is kept.
    #[schema(example = json!("{\"pages\": \"1-3\", \"keep\": false}"))]
    options: Option<String>,
}

error_responses!(
    /// The errors `POST /read` answers with.
    ReadErrors:
    InvalidRequest, InvalidOption, UnsupportedOption, InvalidRange, InvertedRange,
    UrlSchemeNotAllowed, Unauthorized, OutsideAllowedRoots, UrlNotAllowed, UrlHostNotAllowed,
    UrlAddressBlocked, UrlRedirectBlocked, NotFound,
    TooLarge => "the file or what it expands to is over a limit (pixels, decompressed size, a worker's memory cap)",
    BlockedType, BinaryContent, LegacyFormat, UnsupportedFormat, OutOfRange, Encrypted, Corrupt,
    NoOcrEngine, ExtractionCrashed, Internal,
    FetchFailed => "the server of `url` could not be reached or answered an error",
    Unavailable, Timeout,
);

/// Read a file: text and format metadata in one envelope. A multipart body
/// (`OneShotForm`: the file and an `options` part) reads the file it carries in one round
/// trip, guarded as an upload is, and keeps nothing of it unless `options` says
/// `"keep": true`. Options that do not fit the
/// file's format are refused (`unsupported_option`); positions past the end are
/// `out_of_range`; a cut text says how to read on in `next`. With `Accept:
/// text/event-stream` the answer is a stream of `progress` events ({done, total, stage}
/// per page) ending with an `envelope` (or `error`) event. With `file_ids` (up to 10) the
/// answer is `{"status":"ok","results":[…]}`: one envelope, error or `not_read` per file, in
/// order, the budget used up in file order.
#[utoipa::path(post, path = "/read", tag = "read",
    request_body(content(
        (ReadRequest = "application/json"),
        (OneShotForm = "multipart/form-data"))),
    responses(
        (status = 200, description = "the envelope; with `file_ids`, one result per file", body = ReadAnswer),
        (status = 202, description = "with `\"async\": true` or `Prefer: respond-async`: the queued job (`Location`: /jobs/{id})", body = crate::jobs::JobView),
        ReadErrors),
    security((), ("bearer" = [])))]
pub async fn read(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    request: axum::extract::Request,
) -> Response {
    use axum::extract::FromRequest;
    let headers = request.headers().clone();
    if is_multipart(&headers) {
        return match axum::extract::Multipart::from_request(request, &st).await {
            Ok(form) => one_shot(st, tenant, form).await,
            Err(e) => ApiError::invalid_request(format!("the multipart body cannot be read: {e}"))
                .into_response(),
        };
    }
    let body = Json::<Value>::from_request(request, &st).await;
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
        let place = place_for_an_answer(&tenant, st.limits.max_concurrent_reads).await;
        let rid = super::request_id::current();
        return match st.reader.read_many(&tenant, req, rid).await {
            Ok(results) => {
                let long = results.text_bytes() > STREAM_TEXT_BYTES;
                long_json(results, long, place)
            }
            Err(e) => e.into_response(),
        };
    }
    let place = place_for_an_answer(&tenant, st.limits.max_concurrent_reads).await;
    let prepared = st.reader.prepare(&tenant, req).await;
    let prepared = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if !streamed {
        return match st.reader.run(prepared, ProgressSink::default()).await {
            Ok(env) => envelope_response(env, place),
            Err(e) => e.into_response(),
        };
    }
    // Progress as server-sent events, then the envelope (or the error) as the last event,
    // written a chunk at a time while the read's place is held.
    let (events, body) = event_channel();
    let progress_tx = events.progress();
    let progress = ProgressSink::new(move |p| {
        if let Ok(data) = serde_json::to_string(&p) {
            let _ = progress_tx.send(sse_event(None, "progress", &data));
        }
    });
    let request_id = super::request_id::current().unwrap_or_default();
    tokio::spawn(super::request_id::scope(request_id, async move {
        match st.reader.run(prepared, progress).await {
            Ok(env) => events.send_last_json("envelope", env, place),
            Err(e) => events.send_last_json("error", super::error::body(&e), place),
        }
    }));
    event_stream(body)
}

/// A one-shot read (`POST /read` with a multipart body): the file part is received,
/// limited, sniffed and blocked exactly as an upload's, and read with the options of the
/// `options` part (a JSON object, as `POST /read` takes them, without `file_id`). One file
/// a request. Not kept (the default), it never reaches the store: its bytes wait in a temp
/// file for this read alone (no row, no blob, no sync; removed when the read ends, a client
/// that leaves included). With `"keep": true` it is stored first, an upload like any other
/// (synced, its `file_id` in the envelope).
async fn one_shot(st: AppState, tenant: String, mut form: axum::extract::Multipart) -> Response {
    let place = place_for_an_answer(&tenant, st.limits.max_concurrent_reads).await;
    let mut options: Option<Value> = None;
    let mut options_seen = false;
    // The file part, received but not yet kept or checked: whether it is kept is the
    // options' to say, and they may come after it.
    let mut received: Option<(String, crate::store::Incoming)> = None;
    let mut total = 0u64;
    loop {
        let field = match super::files::paced(&st, form.next_field()).await {
            Ok(Ok(Some(f))) => f,
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                return super::files::multipart_error(e, st.limits.max_request_bytes)
                    .into_response()
            }
            Err(e) => return e.into_response(),
        };
        match (field.file_name().map(str::to_string), field.name()) {
            (Some(raw), _) => {
                if received.is_some() {
                    return ApiError::invalid_request("a one-shot read takes one file")
                        .with_hint(
                            "Upload several files with POST /upload and read them with `file_ids`.",
                        )
                        .into_response();
                }
                let name = crate::store::clean_name(&raw);
                match super::files::receive_part(&st, &name, field, &mut total).await {
                    Ok(inc) => received = Some((name, inc)),
                    Err(e) => return e.into_response(),
                }
            }
            (None, Some("options")) => {
                // Two options parts would leave one of them unread: refused.
                if std::mem::replace(&mut options_seen, true) {
                    return ApiError::invalid_request("the form has more than one options part")
                        .with_hint("Send the options as one JSON object in one options part.")
                        .into_response();
                }
                match options_part(&st, field).await {
                    Ok(v) => options = v,
                    Err(e) => return e.into_response(),
                }
            }
            // Other plain fields are ignored, as an upload ignores them.
            (None, _) => {}
        }
    }
    let Some((name, inc)) = received else {
        st.metrics.upload_done("invalid_request");
        return ApiError::invalid_request("the one-shot read holds no file")
            .with_hint("Send the file as a multipart part with a file name, e.g. curl -F file=@report.pdf -F 'options={\"pages\":\"1\"}' …/read")
            .into_response();
    };
    let mut options = options.unwrap_or_else(|| Value::Object(Default::default()));
    let obj = options.as_object_mut().expect("an object");
    let keep = match obj.remove("keep") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return ApiError::invalid_option("keep must be true or false").into_response(),
    };
    if let Some(e) = one_shot_misfit(obj) {
        return e.into_response();
    }
    if !keep {
        // Checked as an upload is, then read from its temp file and never stored.
        let carried = match st.files.carried(&name, inc).await {
            Ok(c) => c,
            Err(e) => {
                st.metrics.upload_done(e.code.as_str());
                return e.into_response();
            }
        };
        st.metrics.upload_done("ok");
        let req = match parse(Ok(Json(options))) {
            Ok(r) => r,
            Err(e) => return e.into_response(),
        };
        let prepared = match st.reader.prepare_carried(&tenant, req, carried) {
            Ok(p) => p,
            Err(e) => return e.into_response(),
        };
        return match st.reader.run(prepared, ProgressSink::default()).await {
            Ok(env) => envelope_response(env, place),
            Err(e) => e.into_response(),
        };
    }
    // Kept: stored as an upload (synced before the answer), then read by its id.
    let rec = match st.files.finalize(&tenant, &name, inc).await {
        Ok(rec) => rec,
        Err(e) => {
            st.metrics.upload_done(e.code.as_str());
            return e.into_response();
        }
    };
    st.metrics.upload_done("ok");
    obj.insert("file_id".into(), Value::String(rec.file_id.clone()));
    let req = match parse(Ok(Json(options))) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let answer = match st.reader.prepare(&tenant, req).await {
        Ok(prepared) => st.reader.run(prepared, ProgressSink::default()).await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(env) => envelope_response(env, place),
        Err(e) => e.into_response(),
    }
}

/// The `options` part of a one-shot form: a JSON object, or nothing (an empty or `null`
/// part). Read chunk by chunk and refused as soon as it passes a JSON body's cap (not
/// buffered whole first: the part could be as large as an upload).
async fn options_part(
    st: &AppState,
    mut field: axum::extract::multipart::Field<'_>,
) -> Result<Option<Value>, ApiError> {
    let mut bytes: Vec<u8> = Vec::new();
    loop {
        match super::files::paced(st, field.chunk()).await? {
            Ok(Some(c)) => {
                bytes.extend_from_slice(&c);
                if bytes.len() as u64 > super::guard::MAX_JSON_BODY {
                    return Err(ApiError::invalid_request("the options part is too large")
                        .with_hint(
                            "Options are a small JSON object; send the file in the file part.",
                        ));
                }
            }
            Ok(None) => break,
            Err(e) => {
                return Err(super::files::multipart_error(
                    e,
                    st.limits.max_request_bytes,
                ))
            }
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) => Ok(Some(v)),
        Ok(Value::Null) => Ok(None),
        _ if text.trim().is_empty() => Ok(None),
        _ => Err(ApiError::invalid_request(
            "the options part must be a JSON object such as {\"pages\": \"1-3\"}",
        )),
    }
}

/// The options a one-shot read (the file carried in the request, here or over MCP) cannot
/// take: another file, or a job.
pub(super) fn one_shot_misfit(options: &serde_json::Map<String, Value>) -> Option<ApiError> {
    let k = [
        "file_id",
        "file_ids",
        "path",
        "url",
        "async",
        "callback_url",
    ]
    .into_iter()
    .find(|k| options.contains_key(*k))?;
    Some(
        ApiError::invalid_option(format!(
            "a one-shot read reads the file it carries; `{k}` does not fit it"
        ))
        .with_hint("Leave it out, or store the file first (POST /upload, upload_document) and read it by file_id."),
    )
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
    if let Err(e) = crate::read::check_values(&req, st.reader.limits.max_chars) {
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
