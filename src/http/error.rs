//! The one place an `ApiError` becomes an HTTP response: status from its code, the body
//! with the request id, `Retry-After` / `WWW-Authenticate` where they belong, and the log
//! line that keeps an internal failure's cause under the request id.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::{ApiError, ErrorBody, ErrorCode};

/// The error body as this request's client sees it (with the request id).
pub fn body(e: &ApiError) -> ErrorBody {
    e.body(super::request_id::current())
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            // The request span carries the id; the cause never reaches the client.
            tracing::warn!(
                code = self.code.as_str(),
                cause = self.cause.as_deref().unwrap_or(""),
                "request failed"
            );
        }
        let mut resp = (status, axum::Json(body(&self))).into_response();
        if self.code == ErrorCode::Unavailable {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        if self.code == ErrorCode::Unauthorized {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}
