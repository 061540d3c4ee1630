//! `POST /read`: resolve the file (an upload of the caller's tenant, or an allowed server
//! path), then hand it to `extract::run`.

use std::path::{Path, PathBuf};

use axum::extract::rejection::JsonRejection;
use std::sync::atomic::Ordering;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value;

use super::auth::Tenant;
use super::AppState;
use crate::db;
use crate::envelope::Envelope;
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::extract::{self, Input, ProgressSink};
use crate::options::ReadRequest;
use crate::sniff::{self, Format};

pub fn router() -> Router<AppState> {
    Router::new().route("/read", post(read))
}

/// Read a file: text and format metadata in one envelope. Options that do not fit the
/// file's format are refused (`unsupported_option`); positions past the end are
/// `out_of_range`; a cut text says how to read on in `next`. With `Accept:
/// text/event-stream` the answer is a stream of `progress` events ({done, total, stage}
/// per page) ending with an `envelope` (or `error`) event.
#[utoipa::path(post, path = "/read", tag = "read", request_body = ReadRequest,
    responses(
        (status = 200, description = "the envelope", body = Envelope),
        (status = 400, description = "invalid_request, invalid_option, unsupported_option, invalid_range, inverted_range", body = ErrorBody),
        (status = 401, description = "unauthorized", body = ErrorBody),
        (status = 403, description = "outside_allowed_roots", body = ErrorBody),
        (status = 404, description = "not_found", body = ErrorBody),
        (status = 415, description = "blocked_type, binary_content, legacy_format, unsupported_format", body = ErrorBody),
        (status = 416, description = "out_of_range", body = ErrorBody),
        (status = 422, description = "encrypted, corrupt, no_ocr_engine", body = ErrorBody),
        (status = 500, description = "extraction_crashed, internal", body = ErrorBody),
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
    let resolved = async {
        let req = parse(body)?;
        let (input, ids) = resolve(&st, &tenant, &req).await?;
        Ok::<_, ApiError>((req, input, ids))
    };
    let (req, mut input, ids) = match resolved.await {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    if !streamed {
        return match execute(&st, &tenant, input, ids, req).await {
            Ok(env) => Json(env).into_response(),
            Err(e) => e.into_response(),
        };
    }
    // Progress as server-sent events, then the envelope (or the error) as the last event.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let progress_tx = tx.clone();
    input.progress = ProgressSink::new(move |p| {
        if let Ok(ev) = Event::default().event("progress").json_data(&p) {
            let _ = progress_tx.send(ev);
        }
    });
    let request_id = super::request_id::current().unwrap_or_default();
    tokio::spawn(super::request_id::scope(request_id, async move {
        let last = match execute(&st, &tenant, input, ids, req).await {
            Ok(env) => Event::default().event("envelope").json_data(&env),
            Err(e) => Event::default().event("error").json_data(e.body()),
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
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
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

/// The file to read: an upload of the tenant (with its id and sha256) or a server path.
async fn resolve(
    st: &AppState,
    tenant: &str,
    req: &ReadRequest,
) -> Result<(Input, Option<(String, String)>), ApiError> {
    match (&req.file_id, &req.path) {
        (Some(_), Some(_)) => Err(ApiError::invalid_request(
            "give either file_id or path, not both",
        )),
        (None, None) => Err(ApiError::invalid_request("missing file_id")
            .with_hint("Upload the file with POST /upload and pass the file_id it returns.")),
        (Some(id), None) => {
            let rec = db::get(&st.db, tenant, id)
                .await
                .map_err(ApiError::internal)?
                .ok_or_else(ApiError::not_found)?;
            let format = Format::from_mime(&rec.mime, &rec.name)
                .ok_or_else(|| ApiError::internal(format!("unknown stored mime {}", rec.mime)))?;
            let known_ocr = match format {
                Format::Pdf => remembered(st, tenant, &rec.sha256, &memory_variant(req)).await,
                _ => Default::default(),
            };
            let input = Input {
                path: st.store.blob_path(&rec.sha256),
                name: rec.name,
                format,
                size: rec.size as u64,
                deadline: None,
                known_ocr,
                progress: Default::default(),
            };
            Ok((input, Some((rec.file_id, rec.sha256))))
        }
        (None, Some(p)) => Ok((server_path_input(st, p).await?, None)),
    }
}

/// Run the read (in a worker or in process), remember its OCR, store its attachments,
/// count it.
async fn execute(
    st: &AppState,
    tenant: &str,
    input: Input,
    ids: Option<(String, String)>,
    req: ReadRequest,
) -> Result<Envelope, ApiError> {
    let format = input.format.family().as_str();
    let size = input.size;
    let started = std::time::Instant::now();
    st.metrics.in_flight.fetch_add(1, Ordering::Relaxed);
    let (file_id, sha256) = match ids {
        Some((id, sha)) => (Some(id), Some(sha)),
        None => (None, None),
    };
    // Only PDF pages are remembered (images are read whole, once per upload).
    let variant = matches!(input.format, Format::Pdf).then(|| memory_variant(&req));
    let out = match &st.workers {
        Some(pool) => pool.read(input, file_id, req, &st.limits).await,
        None => extract::run(&st.read_slots, &st.limits, input, file_id, req).await,
    };
    if let (Ok(env), Some(sha), Some(variant)) = (&out, &sha256, &variant) {
        remember(st, tenant, sha, variant, env).await;
    }
    st.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
    let outcome = out
        .as_ref()
        .map(|_| "ok")
        .unwrap_or_else(|e| e.code.as_str());
    st.metrics
        .read_done(format, outcome, started.elapsed().as_secs_f64());
    match &out {
        Ok(env) => tracing::info!(
            format,
            size,
            chars = env.char_count,
            truncated = env.truncated,
            elapsed_ms = env.elapsed_ms,
            "read"
        ),
        Err(e) => tracing::info!(format, size, code = e.code.as_str(), "read failed"),
    }
    let mut env = out?;
    store_attachments(st, tenant, &mut env).await;
    Ok(env)
}

/// OCR lines the document memory holds for a tenant's bytes.
async fn remembered(
    st: &AppState,
    tenant: &str,
    sha256: &str,
    variant: &str,
) -> std::collections::HashMap<u64, Vec<crate::ocr::OcrLine>> {
    let rows = match crate::db::memory_get(&st.db, tenant, sha256, variant).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::warn!(error = %e, "document memory unavailable");
            return Default::default();
        }
    };
    rows.into_iter()
        .filter_map(|(page, json)| Some((page as u64, serde_json::from_str(&json).ok()?)))
        .collect()
}

/// Keep what this read recognised; count what it reused.
/// The memory variant of a read's OCR: its engine, models and languages.
fn memory_variant(req: &ReadRequest) -> String {
    crate::ocr::memory_variant_for(req.ocr.as_deref(), req.ocr_lang.as_deref())
}

async fn remember(st: &AppState, tenant: &str, sha256: &str, variant: &str, env: &Envelope) {
    if let Some(n) = env
        .extra
        .get("ocr_pages_from_memory")
        .and_then(|v| v.as_u64())
    {
        st.metrics
            .cache_hits
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
    for (page, lines) in &env.fresh_ocr {
        let Ok(json) = serde_json::to_string(lines) else {
            continue;
        };
        let put = crate::db::memory_put(
            &st.db,
            tenant,
            sha256,
            variant,
            *page as i64,
            &json,
            MEMORY_MAX_BYTES,
        );
        if let Err(e) = put.await {
            tracing::warn!(error = %e, "document memory not written");
        }
    }
}

/// Size of the document memory before least-recently-used pages are dropped.
const MEMORY_MAX_BYTES: i64 = 256 * 1024 * 1024;

/// Keep attachments found in the document as uploads of the same tenant and list their
/// ids; one that is refused (blocked type, too large) is listed with its error instead.
async fn store_attachments(st: &AppState, tenant: &str, env: &mut Envelope) {
    let found = std::mem::take(&mut env.attachments);
    if found.is_empty() {
        return;
    }
    let Some(serde_json::Value::Array(listed)) = env.extra.get_mut("attachments") else {
        return;
    };
    for (i, att) in found.into_iter().enumerate() {
        let Some(entry) = listed.get_mut(i) else {
            break;
        };
        if !st.store_attachments {
            entry["note"] = serde_json::json!("this deployment does not store attachments");
            continue;
        }
        match super::files::store_bytes(st, tenant, &att.name, &att.bytes).await {
            Ok(rec) => {
                entry["file_id"] = serde_json::json!(rec.file_id);
                entry["format"] = serde_json::json!(rec.format);
            }
            Err(e) => {
                entry["error"] = serde_json::json!({"code": e.code, "message": e.message});
            }
        }
    }
}

/// A server-side path: only under an allowed root, after resolving `~`, `..` and symlinks.
async fn server_path_input(st: &AppState, raw: &str) -> Result<Input, ApiError> {
    let outside = || {
        ApiError::new(
            ErrorCode::OutsideAllowedRoots,
            "that path is outside the folders this service may read",
        )
    };
    if st.allowed_roots.is_empty() {
        return Err(ApiError::new(ErrorCode::OutsideAllowedRoots, "reading server paths is disabled on this service")
            .with_hint("Upload the file with POST /upload, or ask the operator to set DOCREADER_ALLOWED_ROOTS."));
    }
    if raw.starts_with("\\\\") || raw.starts_with("//") || raw.contains("://") || raw.contains('\0')
    {
        return Err(outside().with_hint(
            "UNC paths and URLs are not read; give a local path under an allowed root.",
        ));
    }
    let expanded = expand_home(raw);
    let resolved = tokio::fs::canonicalize(&expanded).await.map_err(|_| {
        // Do not reveal whether a path outside the roots exists.
        if st
            .allowed_roots
            .iter()
            .any(|r| lexically_under(&expanded, r))
        {
            ApiError::new(ErrorCode::NotFound, "no such file under the allowed roots")
        } else {
            outside()
        }
    })?;
    if !st
        .allowed_roots
        .iter()
        .any(|root| resolved.starts_with(root))
    {
        return Err(outside());
    }
    let meta = tokio::fs::metadata(&resolved)
        .await
        .map_err(ApiError::internal)?;
    if !meta.is_file() {
        return Err(ApiError::invalid_request("that path is not a file"));
    }
    if meta.len() > st.limits.max_file_bytes {
        return Err(ApiError::new(
            ErrorCode::TooLarge,
            format!(
                "the file is over the limit of {} bytes",
                st.limits.max_file_bytes
            ),
        ));
    }
    let name = resolved
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (p, n) = (resolved.clone(), name.clone());
    let format = tokio::task::spawn_blocking(move || {
        let mut f = std::fs::File::open(&p)?;
        Ok::<_, std::io::Error>(sniff::sniff_file(&mut f, &n))
    })
    .await
    .map_err(ApiError::internal)?
    .map_err(ApiError::internal)?
    .map_err(|r| r.into_error())?;
    Ok(Input {
        path: resolved,
        name,
        format,
        size: meta.len(),
        deadline: None,
        known_ocr: Default::default(),
        progress: Default::default(),
    })
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ if p == "~" => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(p)),
        _ => PathBuf::from(p),
    }
}

fn lexically_under(p: &Path, root: &Path) -> bool {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(root)
}
