//! `GET /files/{id}/pages/{n}`: a page of a PDF or an image file as PNG or WebP, for a
//! viewer beside the text. Drawn on the same executor and workers as reads; cached by
//! browsers and gateways through its `ETag` (the bytes of a file id never change).

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;
use utoipa::IntoParams;

use super::auth::Tenant;
use super::responses::error_responses;
use super::AppState;
use crate::error::ApiError;
use crate::extract::page_image::{PageImageRequest, PictureFormat};
use crate::read::service::Drawn;

pub fn router() -> Router<AppState> {
    Router::new().route("/files/{id}/pages/{n}", get(page))
}

/// How to draw the page.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PageParams {
    /// `png` (the default) or `webp` (lossless).
    format: Option<PictureFormat>,
    /// PDFs: dots per inch (default 96, at most 1200). Not with `width`.
    #[param(exclusive_minimum = 0.0, maximum = 1200.0)]
    dpi: Option<f32>,
    /// The picture's width in pixels (1 to 20000); the height follows the page.
    #[param(minimum = 1, maximum = 20000)]
    width: Option<u32>,
}

error_responses!(
    /// The errors `GET /files/{id}/pages/{n}` answers with.
    PageErrors:
    InvalidOption, UnsupportedOption, InvalidRange, Unauthorized, NotFound,
    TooLarge => "over the render pixel budget (the hint says what fits)",
    UnsupportedFormat => "not a PDF or an image",
    OutOfRange, Encrypted, Corrupt, ExtractionCrashed, Internal, Unavailable, Timeout,
);

/// A page as a picture: a PDF page, an image's only page or a TIFF's n-th. Past the render
/// pixel budget it is refused with the largest dpi or width that fits (never shrunk
/// quietly). An encrypted PDF's password goes in the `X-Document-Password` header.
#[utoipa::path(get, path = "/files/{id}/pages/{n}", tag = "files",
    params(("id" = String, Path, description = "file id"),
           ("n" = u64, Path, description = "page number, from 1", minimum = 1),
           ("X-Document-Password" = Option<String>, Header, description = "an encrypted PDF's password"),
           ("If-None-Match" = Option<String>, Header, description = "the ETag of a copy held"),
           PageParams),
    responses(
        (status = 200, description = "the page",
            content((Vec<u8> = "image/png"), (Vec<u8> = "image/webp")),
            headers(("ETag" = String), ("Cache-Control" = String))),
        (status = 304, description = "the copy held (If-None-Match) is current"),
        PageErrors),
    security((), ("bearer" = [])))]
pub async fn page(
    State(st): State<AppState>,
    Tenant(tenant): Tenant,
    Path((id, n)): Path<(String, String)>,
    params: Result<Query<PageParams>, axum::extract::rejection::QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Query(params) = params.map_err(|e| {
        ApiError::invalid_option(format!("bad parameter: {}", e.body_text()))
            .with_hint("Parameters are format=png|webp, dpi=N or width=N.")
    })?;
    // A number past the schema's int64 is no page number either (a 400, as the schema
    // says; one inside it but past the end is `out_of_range`).
    let page = n.parse::<i64>().ok().and_then(|n| u64::try_from(n).ok());
    let page = page.ok_or_else(|| {
        ApiError::new(
            crate::error::ErrorCode::InvalidRange,
            format!("{n:?} is not a page number"),
        )
        .with_hint("Pages are numbered from 1: /files/{id}/pages/1.")
    })?;
    let header_text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let req = PageImageRequest {
        page,
        format: params.format.unwrap_or_default(),
        dpi: params.dpi,
        width: params.width,
        password: header_text("x-document-password").map(str::to_string),
    };
    let drawn = st
        .reader
        .draw(&tenant, &id, req, header_text("if-none-match"))
        .await?;
    // Private: behind a key, the picture is the tenant's; immutable: a file id's bytes
    // never change.
    let cache = HeaderValue::from_static("private, max-age=31536000, immutable");
    // The picture depends on the key (tenant) and the password as well as the URL: a browser
    // or gateway cache must not answer a request without the password (or with another
    // key) from a copy drawn with it.
    let vary = HeaderValue::from_static("authorization, x-document-password");
    Ok(match drawn {
        Drawn::NotModified { etag } => (
            StatusCode::NOT_MODIFIED,
            [
                (header::ETAG, etag_value(&etag)),
                (header::CACHE_CONTROL, cache),
                (header::VARY, vary),
            ],
        )
            .into_response(),
        Drawn::Picture { picture, etag } => (
            [
                (
                    header::CONTENT_TYPE,
                    HeaderValue::from_static(picture.format.mime()),
                ),
                (header::ETAG, etag_value(&etag)),
                (header::CACHE_CONTROL, cache),
                (header::VARY, vary),
            ],
            picture.bytes,
        )
            .into_response(),
    })
}

fn etag_value(etag: &str) -> HeaderValue {
    HeaderValue::from_str(etag).unwrap_or_else(|_| HeaderValue::from_static("\"\""))
}
