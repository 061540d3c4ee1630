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
/// limited, sniffed and blocked exactly as an upload's, read with the options of the
/// `options` part (a JSON object, as `POST /read` takes them, without `file_id`), and
/// forgotten after the answer unless the options say `"keep": true` (then the envelope's
/// `file_id` is an upload like any other). One file a request.
async fn one_shot(st: AppState, tenant: String, mut form: axum::extract::Multipart) -> Response {
    let place = place_for_an_answer(&tenant, st.limits.max_concurrent_reads).await;
    let mut options: Option<Value> = None;
    let mut options_seen = false;
    let mut stored: Option<crate::db::FileRecord> = None;
    let mut total = 0u64;
    let failed = |st: &AppState, tenant: &str, rec: Option<crate::db::FileRecord>, e: ApiError| {
        let (st, tenant) = (st.clone(), tenant.to_string());
        async move {
            if let Some(rec) = rec {
                let _ = st.files.forget(&tenant, &rec.file_id).await;
            }
            e.into_response()
        }
    };
    loop {
        let field = match super::files::paced(&st, form.next_field()).await {
            Ok(Ok(Some(f))) => f,
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                let e = super::files::multipart_error(e, st.limits.max_request_bytes);
                return failed(&st, &tenant, stored, e).await;
            }
            Err(e) => return failed(&st, &tenant, stored, e).await,
        };
        match (field.file_name().map(str::to_string), field.name()) {
            (Some(raw), _) => {
                if stored.is_some() {
                    let e = ApiError::invalid_request("a one-shot read takes one file").with_hint(
                        "Upload several files with POST /upload and read them with `file_ids`.",
                    );
                    return failed(&st, &tenant, stored, e).await;
                }
                let name = crate::store::clean_name(&raw);
                match super::files::receive_one(&st, &tenant, &name, field, &mut total).await {
                    Ok(rec) => stored = Some(rec),
                    Err(e) => return failed(&st, &tenant, stored, e).await,
                }
            }
            (None, Some("options")) => {
                // Two options parts would leave one of them unread: refused.
                if std::mem::replace(&mut options_seen, true) {
                    let e = ApiError::invalid_request("the form has more than one options part")
                        .with_hint("Send the options as one JSON object in one options part.");
                    return failed(&st, &tenant, stored, e).await;
                }
                // Read chunk by chunk, refused as soon as it passes a JSON body's cap (not
                // buffered whole first: the part could be as large as an upload).
                let mut field = field;
                let mut bytes: Vec<u8> = Vec::new();
                loop {
                    match super::files::paced(&st, field.chunk()).await {
                        Ok(Ok(Some(c))) => {
                            bytes.extend_from_slice(&c);
                            if bytes.len() as u64 > super::guard::MAX_JSON_BODY {
                                let e = ApiError::invalid_request("the options part is too large")
                                    .with_hint("Options are a small JSON object; send the file in the file part.");
                                return failed(&st, &tenant, stored, e).await;
                            }
                        }
                        Ok(Ok(None)) => break,
                        Ok(Err(e)) => {
                            let e = super::files::multipart_error(e, st.limits.max_request_bytes);
                            return failed(&st, &tenant, stored, e).await;
                        }
                        Err(e) => return failed(&st, &tenant, stored, e).await,
                    }
                }
                let text = String::from_utf8_lossy(&bytes).into_owned();
                match serde_json::from_str::<Value>(&text) {
                    Ok(v @ Value::Object(_)) => options = Some(v),
                    // An empty or `null` part: no options.
                    Ok(Value::Null) => {}
                    _ if text.trim().is_empty() => {}
                    _ => {
                        let e = ApiError::invalid_request(
                            "the options part must be a JSON object such as {\"pages\": \"1-3\"}",
                        );
                        return failed(&st, &tenant, stored, e).await;
                    }
                }
            }
            // Other plain fields are ignored, as an upload ignores them.
            (None, _) => {}
        }
    }
    st.metrics.upload_done(if stored.is_some() {
        "ok"
    } else {
        "invalid_request"
    });
    let Some(rec) = stored else {
        return ApiError::invalid_request("the one-shot read holds no file")
            .with_hint("Send the file as a multipart part with a file name, e.g. curl -F file=@report.pdf -F 'options={\"pages\":\"1\"}' …/read")
            .into_response();
    };
    let mut options = options.unwrap_or_else(|| Value::Object(Default::default()));
    let obj = options.as_object_mut().expect("an object");
    let keep = match obj.remove("keep") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(_) => {
            let e = ApiError::invalid_option("keep must be true or false");
            return failed(&st, &tenant, Some(rec), e).await;
        }
    };
    if let Some(e) = one_shot_misfit(obj) {
        return failed(&st, &tenant, Some(rec), e).await;
    }
    obj.insert("file_id".into(), Value::String(rec.file_id.clone()));
    let req = match parse(Ok(Json(options))) {
        Ok(r) => r,
        Err(e) => return failed(&st, &tenant, Some(rec), e).await,
    };
    // Forgotten however the read ends, a client that leaves (the handler's future dropped)
    // included.
    let mut guard = ForgetOnDrop {
        st: st.clone(),
        tenant: tenant.clone(),
        ids: if keep {
            Vec::new()
        } else {
            vec![rec.file_id.clone()]
        },
    };
    let answer = match st.reader.prepare(&tenant, req).await {
        Ok(mut prepared) => {
            if !keep {
                prepared.not_indexed();
            }
            st.reader.run(prepared, ProgressSink::default()).await
        }
        Err(e) => Err(e),
    };
    // The answer goes out first; the file (and an e-mail's attachments) are forgotten
    // right after, by a task of their own (`ForgetOnDrop`'s drop): the delete's writes
    // (the row, the document memory, the blob, ~1.5 ms here) were half of a one-page
    // one-shot read's time, spent on the client's clock for nothing it receives.
    match answer {
        Ok(mut env) => {
            if !keep {
                env.file_id = None;
                // An e-mail's attachments were stored as uploads by the read: not kept
                // either.
                guard.drop_attachments(&mut env);
            }
            let response = envelope_response(env, place);
            drop(guard);
            response
        }
        Err(e) => {
            drop(guard);
            e.into_response()
        }
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

/// The uploads a one-shot read made, forgotten when it ends (`forget`), or when dropped
/// (the answer made, or the client gone) by a task of their own.
pub(super) struct ForgetOnDrop {
    pub(super) st: AppState,
    pub(super) tenant: String,
    pub(super) ids: Vec<String>,
}

impl ForgetOnDrop {
    /// An e-mail's attachments a read stored as uploads: not kept after a read of a file
    /// that is not kept either (their `file_id`s taken out of the envelope, and a note).
    pub(super) fn drop_attachments(&mut self, env: &mut crate::envelope::Envelope) {
        for a in env.report.attachments.iter_mut().flatten() {
            if let Some(id) = a.file_id.take() {
                self.ids.push(id);
                a.note = Some(
                    "not kept: a one-shot read keeps nothing (\"keep\": true keeps the message and its attachments)"
                        .into(),
                );
            }
        }
    }

    pub(super) async fn forget(&mut self) {
        for id in std::mem::take(&mut self.ids) {
            let _ = self.st.files.forget(&self.tenant, &id).await;
        }
    }
}

impl Drop for ForgetOnDrop {
    fn drop(&mut self) {
        if self.ids.is_empty() {
            return;
        }
        let (st, tenant, ids) = (
            self.st.clone(),
            std::mem::take(&mut self.tenant),
            std::mem::take(&mut self.ids),
        );
        st.files.forget_later(tenant, ids);
    }
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
