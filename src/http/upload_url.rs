//! Upload URLs: `POST /uploads` (with an API key) hands out a short-lived, single-use URL
//! bound to the caller's tenant; `PUT /uploads/{token}` (or `POST`, raw bytes or a
//! multipart form) stores a file there with no key. It is how an agent gets a large file
//! in: its MCP host sends the bytes with plain HTTP instead of base64 through the model
//! (MCP has no file transfer). Only the token's sha256 is kept; a claimed token cannot be
//! claimed twice, and a failed upload frees it again until it expires.

use axum::extract::{FromRequest, Multipart, Path, Request, State};
use axum::http::{header, HeaderMap};
use axum::routing::post;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use utoipa::ToSchema;

use super::auth::Tenant;
use super::files::{receive_stream, UploadResponse};
use super::responses::error_responses;
use super::AppState;
use crate::db::{self, FileRecord};
use crate::error::{ApiError, ErrorCode};
use crate::store::{clean_name, random_hex};

/// How long an upload URL lives unless asked otherwise, and at most.
pub const DEFAULT_TTL_SECONDS: i64 = 900;
pub const MAX_TTL_SECONDS: i64 = 3600;

/// The routes; a multipart body sent to an upload URL may be as large as the one file it
/// carries (`max_file_bytes`) and its framing — the limit the URL's answer states.
pub fn router(max_file_bytes: u64) -> Router<AppState> {
    Router::new().route("/uploads", post(create)).route(
        "/uploads/{token}",
        post(receive_post)
            .put(receive)
            .layer(axum::extract::DefaultBodyLimit::max(
                (max_file_bytes as usize).saturating_add(64 * 1024),
            )),
    )
}

/// Body of `POST /uploads`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadUrlRequest {
    /// The file's name, with its extension (e.g. `report.pdf`); not only white space.
    // The pattern names Rust's white space (what `str::trim` takes away) character by
    // character: `\s` means another set in each regex engine (U+0085 is white space to Rust
    // and Python, not to JavaScript).
    #[schema(
        min_length = 1,
        pattern = "[^\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
    )]
    pub name: String,
    /// Seconds the URL stays valid (default 900, at most 3600).
    #[serde(default, deserialize_with = "crate::options::whole_number")]
    #[schema(minimum = 1, maximum = 3600)]
    pub ttl_seconds: Option<i64>,
}

/// A URL to send one file's bytes to.
#[derive(Debug, Serialize, ToSchema)]
pub struct UploadUrl {
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
    /// Send the file's bytes here with `PUT` (or `POST`; raw bytes or a multipart form),
    /// without an API key; the answer is that of `POST /upload`.
    pub upload_url: String,
    /// `PUT`.
    pub method: &'static str,
    /// RFC 3339 UTC; the URL works once, until then.
    pub expires_at: String,
    /// The largest file it takes.
    pub max_bytes: u64,
}

error_responses!(
    /// The errors `POST /uploads` answers with.
    UploadUrlErrors:
    InvalidRequest, InvalidOption, Unauthorized,
);

/// Get a single-use URL to upload one file to without an API key (for an agent's host,
/// or a browser): valid for `ttl_seconds`, bound to the caller's tenant.
#[utoipa::path(post, path = "/uploads", tag = "files", request_body = UploadUrlRequest,
    responses(
        (status = 200, description = "the URL", body = UploadUrl),
        UploadUrlErrors),
    security((), ("bearer" = [])))]
pub async fn create(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    headers: HeaderMap,
    body: Result<Json<UploadUrlRequest>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<UploadUrl>, ApiError> {
    let Json(req) = body.map_err(|e| {
        ApiError::invalid_request(format!(
            "the body is not a valid request: {}",
            e.body_text()
        ))
        .with_hint("Send {\"name\": \"report.pdf\"} (and optionally \"ttl_seconds\").")
    })?;
    issue(&st, &tenant, &req.name, req.ttl_seconds, &headers)
        .await
        .map(Json)
}

/// Hand out an upload URL for `name` to `tenant` (also the MCP tool's way).
pub async fn issue(
    st: &AppState,
    tenant: &str,
    name: &str,
    ttl_seconds: Option<i64>,
    headers: &HeaderMap,
) -> Result<UploadUrl, ApiError> {
    let ttl = ttl_seconds.unwrap_or(DEFAULT_TTL_SECONDS);
    if !(1..=MAX_TTL_SECONDS).contains(&ttl) {
        return Err(ApiError::invalid_option(format!(
            "ttl_seconds must be between 1 and {MAX_TTL_SECONDS}, got {ttl}"
        )));
    }
    if name.trim().is_empty() {
        return Err(ApiError::invalid_option("name is empty")
            .with_hint("Give the file's name with its extension, e.g. report.pdf."));
    }
    let name = clean_name(name);
    let token = random_hex(32);
    let expires = chrono::Utc::now() + chrono::Duration::seconds(ttl);
    db::token_insert(&st.db, &digest(&token), tenant, &name, expires.timestamp())
        .await
        .map_err(db::failure)?;
    Ok(UploadUrl {
        status: "ok",
        upload_url: format!("{}/uploads/{token}", base_url(st, headers)),
        method: "PUT",
        expires_at: expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        max_bytes: st.limits.max_file_bytes,
    })
}

error_responses!(
    /// The errors `PUT /uploads/{token}` and `POST /uploads/{token}` answer with.
    TokenUploadErrors:
    NotFound => "unknown, expired or already used",
    RequestTimeout, TooLarge, BlockedType, BinaryContent, LegacyFormat, UnsupportedFormat,
);

/// Store a file sent to an upload URL.
#[utoipa::path(put, path = "/uploads/{token}", tag = "files",
    params(("token" = String, Path, description = "from POST /uploads")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "the file's bytes (or a multipart form with one file part)"),
    responses(
        (status = 200, description = "stored", body = UploadResponse),
        TokenUploadErrors))]
pub async fn receive(
    State(st): State<AppState>,
    Path(token): Path<String>,
    req: Request,
) -> Result<Json<UploadResponse>, ApiError> {
    let gone = || {
        ApiError::new(
            ErrorCode::NotFound,
            "this upload URL is unknown, expired or already used",
        )
        .with_hint("Ask for a new one: POST /uploads, or the MCP tool upload_document without content_base64.")
    };
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(gone());
    }
    let key = digest(&token);
    let Some((tenant, name)) = db::token_claim(&st.db, &key).await.map_err(db::failure)? else {
        return Err(gone());
    };
    let stored = receive_body(&st, &tenant, &name, req).await;
    let settled = db::token_settle(
        &st.db,
        &key,
        stored.as_ref().ok().map(|r| r.file_id.as_str()),
    )
    .await;
    st.metrics.upload_done(match &stored {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    });
    let rec = stored?;
    settled.map_err(db::failure)?;
    Ok(Json(UploadResponse {
        status: "ok",
        files: vec![rec],
    }))
}

/// Store a file sent to an upload URL with `POST` (raw bytes, or a multipart form with
/// one file part, as a browser form or `curl -F` sends it).
#[utoipa::path(post, path = "/uploads/{token}", tag = "files",
    params(("token" = String, Path, description = "from POST /uploads")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "the file's bytes (or a multipart form with one file part)"),
    responses(
        (status = 200, description = "stored", body = UploadResponse),
        TokenUploadErrors))]
pub async fn receive_post(
    st: State<AppState>,
    token: Path<String>,
    req: Request,
) -> Result<Json<UploadResponse>, ApiError> {
    receive(st, token, req).await
}

/// The body as the file: raw bytes, or the first file part of a multipart form.
async fn receive_body(
    st: &AppState,
    tenant: &str,
    name: &str,
    req: Request,
) -> Result<FileRecord, ApiError> {
    use futures_util::StreamExt;
    let mut total = 0;
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    if !multipart {
        let chunks = req
            .into_body()
            .into_data_stream()
            .map(|c| c.map_err(|e| ApiError::invalid_request(format!("the body broke off: {e}"))));
        return receive_stream(st, tenant, name, chunks, &mut total).await;
    }
    // One file, so the file's limit is the one that holds (the framing is not counted).
    let limit = st.limits.max_file_bytes;
    let mut form = Multipart::from_request(req, st)
        .await
        .map_err(|e| ApiError::invalid_request(format!("malformed multipart body: {e}")))?;
    loop {
        match super::files::paced(st, form.next_field()).await? {
            Ok(Some(field)) if field.file_name().is_some() => {
                let chunks =
                    field.map(move |c| c.map_err(|e| super::files::multipart_error(e, limit)));
                return receive_stream(st, tenant, name, chunks, &mut total).await;
            }
            Ok(Some(_)) => continue,
            Ok(None) => {
                return Err(
                    ApiError::invalid_request("the form holds no file part").with_hint(
                        "Send the bytes as the body, or one multipart part with a file name.",
                    ),
                )
            }
            Err(e) => return Err(super::files::multipart_error(e, limit)),
        }
    }
}

fn digest(token: &str) -> String {
    hex::encode(sha2::Sha256::digest(token.as_bytes()))
}

/// The address clients reach the service at: the configured one, else what a trusted
/// gateway says (`X-Forwarded-Proto`, `X-Forwarded-Host`; `guard::forwarded` drops them from
/// anyone else), else the `Host` the client used.
pub fn base_url(st: &AppState, headers: &HeaderMap) -> String {
    if let Some(u) = &st.public_url {
        return u.clone();
    }
    let first = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let proto = first("x-forwarded-proto")
        .filter(|p| p == "http" || p == "https")
        .unwrap_or_else(|| "http".into());
    let host = first("x-forwarded-host")
        .or_else(|| first("host"))
        .filter(|h| {
            h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        })
        .unwrap_or_else(|| "localhost".into());
    format!("{proto}://{host}")
}
