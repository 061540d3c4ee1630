//! `POST /upload`, `GET /files`, `GET /files/{id}`, `DELETE /files/{id}`.

use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::Tenant;
use super::responses::error_responses;
use super::AppState;
use crate::db::{self, FileRecord};
use crate::error::{ApiError, ErrorCode};
use crate::store::clean_name;

pub fn router(max_request_bytes: u64) -> Router<AppState> {
    Router::new()
        .route(
            "/upload",
            // A little slack over the limit for multipart framing; our own count decides.
            post(upload).layer(DefaultBodyLimit::max(
                (max_request_bytes as usize).saturating_add(64 * 1024),
            )),
        )
        .route("/files", get(list))
        .route("/files/{id}", get(show).delete(remove))
}

/// `{"status":"ok","files":[…]}`
#[derive(Debug, Serialize, ToSchema)]
pub struct UploadResponse {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    pub files: Vec<FileRecord>,
}

/// The multipart form of `POST /upload`: one or more parts with a file name.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct UploadForm {
    /// The file(s) to upload; repeat the part for several.
    #[schema(value_type = Vec<String>, format = Binary, min_items = 1)]
    file: Vec<u8>,
}

error_responses!(
    /// The errors `POST /upload` answers with.
    UploadErrors:
    InvalidRequest, Unauthorized,
    RequestTimeout => "the body paused longer than the upload body timeout",
    TooLarge, BlockedType, BinaryContent, LegacyFormat, UnsupportedFormat, Encrypted,
);

/// Upload one or more files (multipart). Each file's type is decided from its bytes;
/// executables and archives are refused and nothing of the request is kept.
#[utoipa::path(post, path = "/upload", tag = "files",
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 200, description = "stored", body = UploadResponse),
        UploadErrors),
    security((), ("bearer" = [])))]
pub async fn upload(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    form: Result<Multipart, MultipartRejection>,
) -> Result<Json<UploadResponse>, ApiError> {
    let mut form = form.map_err(|e| {
        ApiError::invalid_request(format!("expected a multipart/form-data body: {e}")).with_hint(
            "Send the file as a multipart form field, e.g. curl -F file=@report.pdf …/upload",
        )
    })?;
    let mut stored: Vec<FileRecord> = Vec::new();
    let result = receive_all(&st, &tenant, &mut form, &mut stored).await;
    let outcome = match &result {
        Ok(()) if stored.is_empty() => "invalid_request",
        Ok(()) => "ok",
        Err(e) => e.code.as_str(),
    };
    st.metrics.upload_done(outcome);
    match result {
        Ok(()) if stored.is_empty() => Err(ApiError::invalid_request("the upload holds no file")
            .with_hint("Send at least one multipart part with a file name, e.g. curl -F file=@report.pdf …/upload")),
        Ok(()) => Ok(Json(UploadResponse { status: "ok", files: stored })),
        Err(e) => {
            // Nothing of a failed request is kept.
            for rec in &stored {
                let _ = st.files.forget(&rec.tenant, &rec.file_id).await;
            }
            Err(e)
        }
    }
}

async fn receive_all(
    st: &AppState,
    tenant: &str,
    form: &mut Multipart,
    stored: &mut Vec<FileRecord>,
) -> Result<(), ApiError> {
    let limits = &st.limits;
    let mut total: u64 = 0;
    loop {
        let field = match paced(st, form.next_field()).await? {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(()),
            Err(e) => return Err(multipart_error(e, limits.max_request_bytes)),
        };
        let Some(raw_name) = field.file_name().map(str::to_string) else {
            // Plain form fields carry no file; they are ignored.
            continue;
        };
        if stored.len() >= limits.max_files_per_upload {
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                format!(
                    "more than {} files in one upload",
                    limits.max_files_per_upload
                ),
            )
            .with_hint("Upload the files in several requests."));
        }
        let name = clean_name(&raw_name);
        let rec = receive_one(st, tenant, &name, field, &mut total).await?;
        stored.push(rec);
    }
}

pub(super) async fn receive_one(
    st: &AppState,
    tenant: &str,
    name: &str,
    field: axum::extract::multipart::Field<'_>,
    total: &mut u64,
) -> Result<FileRecord, ApiError> {
    let inc = receive_part(st, name, field, total).await?;
    st.files.finalize(tenant, name, inc).await
}

/// Receive one file's bytes from a stream of chunks into the store, within the limits and
/// the body timeout, and keep it (`Files::finalize`); nothing is kept when it fails.
/// `total` counts the request's bytes across its files.
pub(super) async fn receive_stream<S>(
    st: &AppState,
    tenant: &str,
    name: &str,
    chunks: S,
    total: &mut u64,
) -> Result<FileRecord, ApiError>
where
    S: futures_util::Stream<Item = Result<axum::body::Bytes, ApiError>>,
{
    let inc = receive_incoming(st, name, chunks, total).await?;
    st.files.finalize(tenant, name, inc).await
}

/// A multipart file part received into a temp file (`receive_incoming`), not yet kept.
pub(super) async fn receive_part(
    st: &AppState,
    name: &str,
    field: axum::extract::multipart::Field<'_>,
    total: &mut u64,
) -> Result<crate::store::Incoming, ApiError> {
    use futures_util::StreamExt;
    let limit = st.limits.max_request_bytes;
    let chunks = field.map(|c| c.map_err(|e| multipart_error(e, limit)));
    receive_incoming(st, name, chunks, total).await
}

/// Receive one file's bytes from a stream of chunks into a temp file, within the limits
/// and the body timeout; the caller keeps it (`Files::finalize`) or reads it once
/// (`Files::carried`). The temp file goes when it fails.
async fn receive_incoming<S>(
    st: &AppState,
    name: &str,
    chunks: S,
    total: &mut u64,
) -> Result<crate::store::Incoming, ApiError>
where
    S: futures_util::Stream<Item = Result<axum::body::Bytes, ApiError>>,
{
    use futures_util::StreamExt;
    let limits = &st.limits;
    let mut chunks = std::pin::pin!(chunks);
    let mut inc = st
        .files
        .store
        .incoming()
        .await
        .map_err(ApiError::internal)?;
    loop {
        let chunk = match paced(st, chunks.next()).await {
            Ok(Some(Ok(c))) => c,
            Ok(None) => break,
            Ok(Some(Err(e))) | Err(e) => {
                inc.discard().await;
                return Err(e);
            }
        };
        *total += chunk.len() as u64;
        if inc.size + chunk.len() as u64 > limits.max_file_bytes
            || *total > limits.max_request_bytes
        {
            inc.discard().await;
            let (what, lim) = if *total > limits.max_request_bytes {
                ("the upload request", limits.max_request_bytes)
            } else {
                ("the file", limits.max_file_bytes)
            };
            return Err(ApiError::new(
                ErrorCode::TooLarge,
                format!("{name}: {what} is over the limit of {} bytes", lim),
            )
            .with_hint("Split the document, or ask the operator to raise DOCREADER_MAX_FILE_BYTES / DOCREADER_MAX_REQUEST_BYTES."));
        }
        if let Err(e) = inc.write(&chunk).await {
            inc.discard().await;
            return Err(ApiError::internal(e));
        }
    }
    Ok(inc)
}

/// A read of the upload's body that must make progress within `body_timeout`: a client
/// that stops sending (or trickles) cannot hold the request, its slot and its temp file.
pub(super) async fn paced<T>(
    st: &AppState,
    read: impl std::future::Future<Output = T>,
) -> Result<T, ApiError> {
    tokio::time::timeout(st.body_timeout, read)
        .await
        .map_err(|_| {
            ApiError::new(
                ErrorCode::RequestTimeout,
                format!(
                    "the upload's body stopped arriving for {} ms",
                    st.body_timeout.as_millis()
                ),
            )
        })
}

pub(super) fn multipart_error(e: axum::extract::multipart::MultipartError, limit: u64) -> ApiError {
    if let Some(f) = super::framing::refused(&e) {
        return ApiError::invalid_request(f.to_string()).with_hint(format!(
            "Each part's headers (and any text before the first boundary) must end within {} KiB; \
             send the form as a browser or curl -F does.",
            super::framing::MAX_FRAMING >> 10
        ));
    }
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            ErrorCode::TooLarge,
            format!("the upload request is over the limit of {limit} bytes"),
        )
    } else {
        ApiError::invalid_request(format!("malformed multipart body: {}", e.body_text()))
            .with_hint("Send a multipart/form-data body with one part per file.")
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListParams {
    /// At most this many files (default 100, at most 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
    /// Skip this many files.
    #[param(minimum = 0)]
    pub offset: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileList {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    pub files: Vec<FileRecord>,
}

error_responses!(
    /// The errors `GET /files` answers with.
    ListErrors:
    InvalidOption => "limit or offset out of range",
    Unauthorized,
);

/// The caller's files, newest first.
#[utoipa::path(get, path = "/files", tag = "files", params(ListParams),
    responses((status = 200, body = FileList), ListErrors),
    security((), ("bearer" = [])))]
pub async fn list(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    params: Result<Query<ListParams>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<FileList>, ApiError> {
    let Query(p) = params.map_err(|e| ApiError::invalid_option(e.body_text()))?;
    let limit = p.limit.unwrap_or(100);
    let offset = p.offset.unwrap_or(0);
    if !(1..=1000).contains(&limit) || offset < 0 {
        return Err(ApiError::invalid_option(
            "limit must be 1..1000 and offset ≥ 0",
        ));
    }
    let files = db::list(&st.db, &tenant, limit, offset)
        .await
        .map_err(db::failure)?;
    Ok(Json(FileList {
        status: "ok",
        files,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct FileInfo {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    pub file: FileRecord,
}

error_responses!(
    /// The errors `GET /files/{id}` and `DELETE /files/{id}` answer with.
    FileErrors:
    Unauthorized, NotFound,
);

/// One of the caller's files.
#[utoipa::path(get, path = "/files/{id}", tag = "files", params(("id" = String, Path, description = "file id")),
    responses((status = 200, body = FileInfo), FileErrors),
    security((), ("bearer" = [])))]
pub async fn show(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Json<FileInfo>, ApiError> {
    let file = st.files.get(&tenant, &id).await?;
    Ok(Json(FileInfo { status: "ok", file }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Deleted {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    pub deleted: String,
}

/// Delete one of the caller's files. The bytes go when no other upload references them.
#[utoipa::path(delete, path = "/files/{id}", tag = "files", params(("id" = String, Path, description = "file id")),
    responses((status = 200, body = Deleted), FileErrors),
    security((), ("bearer" = [])))]
pub async fn remove(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, ApiError> {
    if st.files.forget(&tenant, &id).await? {
        Ok(Json(Deleted {
            status: "ok",
            deleted: id,
        }))
    } else {
        Err(ApiError::not_found())
    }
}
