//! `x-request-id`: accepted from the gateway when it is sane, generated otherwise; carried
//! into the request's tracing span, the response header and every error body.

use std::time::Instant;

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;

pub use crate::request_id::{current, scope};

fn acceptable(v: &HeaderValue) -> Option<String> {
    let s = v.to_str().ok()?;
    (!s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':')))
    .then(|| s.to_string())
}

/// Middleware: assign the id, open the request span, log one line per request
/// (method, path, status, time; never a body).
pub async fn layer(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get("x-request-id")
        .and_then(acceptable)
        .unwrap_or_else(|| format!("req_{}", crate::store::random_hex(12)));
    req.headers_mut().insert(
        "x-request-id",
        HeaderValue::from_str(&id).expect("checked id"),
    );
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path());
    let started = Instant::now();
    let mut resp = scope(id.clone(), next.run(req))
        .instrument(span.clone())
        .await;
    resp.headers_mut().insert(
        "x-request-id",
        HeaderValue::from_str(&id).expect("checked id"),
    );
    span.in_scope(|| {
        tracing::info!(
            status = resp.status().as_u16(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "served"
        )
    });
    resp
}
