//! Guards every request passes before its handler (issue #41):
//!
//! - **Bodies arrive whole, in time, within their cap.** Every request body but an upload's
//!   (`POST /upload`, `PUT`/`POST /uploads/{token}`, which stream to disk with their own
//!   pause timeout) is read here, whole, within `body_timeout` (408 `request_timeout`) and
//!   within its route's cap (413 `too_large`, refused from `Content-Length` before a byte is
//!   read). A client that sends complete headers and then stalls holds its connection no
//!   longer than that.
//! - **`/mcp` bodies are a tool call, not a bomb.** Capped to what a tool call needs (an
//!   8 MiB file as base64 plus its envelope) and checked for the number of JSON values before
//!   rmcp parses them into a tree (a 10 MB array of small numbers would take ~30× its size as
//!   `serde_json::Value`s): refusals are JSON-RPC errors with HTTP 413 / 400.
//! - **No DNS rebinding on the keyless default.** Without API keys, every route but the
//!   probes answers only `Host` names that are loopback, `DOCREADER_PUBLIC_URL`'s host, or
//!   listed in `DOCREADER_ALLOWED_HOSTS` / `DOCREADER_MCP_ALLOWED_HOSTS`; and a browser's
//!   state-changing request from another site (`Sec-Fetch-Site: cross-site`, or an `Origin`
//!   that is neither this service nor in `DOCREADER_CORS_ORIGINS`) is refused. With keys a
//!   browser page cannot borrow the caller's credentials, so neither check is needed.

use std::net::IpAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;

use super::AppState;
use crate::error::{ApiError, ErrorCode};

/// The largest JSON body of an ordinary route (`/read`, `/search`, `POST /uploads`, …).
pub const MAX_JSON_BODY: u64 = 2 << 20;

/// The largest `/mcp` body: `upload_document`'s 8 MiB file as base64 (4/3 of it) and the
/// JSON-RPC envelope around it.
pub const MAX_MCP_BODY: u64 = (crate::http::mcp::MAX_UPLOAD_BYTES as u64 / 3 + 1) * 4 + (256 << 10);

/// The most JSON values (numbers, strings, arrays, objects…) one MCP message may hold: a
/// tool call's arguments are a handful; thousands are an attack on the parser's memory.
pub const MAX_MCP_VALUES: usize = 10_000;

/// Whether the route streams its body itself (uploads, and a one-shot read: `POST /read`
/// with a multipart body).
fn streams_itself(method: &Method, path: &str, headers: &axum::http::HeaderMap) -> bool {
    (method == Method::POST && path == "/upload")
        || (method == Method::POST && path == "/read" && super::read::is_multipart(headers))
        || ((method == Method::PUT || method == Method::POST)
            && path
                .strip_prefix("/uploads/")
                .is_some_and(|t| !t.is_empty()))
}

/// Read every non-upload body whole, within the body timeout and its route's cap.
pub async fn bodies(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    if streams_itself(req.method(), path, req.headers()) {
        // Uploads stream to disk; what multer would buffer of their framing is bounded.
        return next.run(super::framing::guard(req)).await;
    }
    let mcp = path == "/mcp" || path.starts_with("/mcp/");
    let cap = if mcp { MAX_MCP_BODY } else { MAX_JSON_BODY };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // No body (hyper knows it: no Content-Length, no chunked transfer) is left as it is.
    let empty = axum::body::HttpBody::size_hint(req.body()).exact() == Some(0);
    if declared == Some(0) || empty {
        return next.run(req).await;
    }
    if declared.is_some_and(|n| n > cap) {
        return too_large(mcp, cap);
    }
    if mcp && req.method() == Method::POST && !is_json(req.headers()) {
        return rpc_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            -32600,
            "an MCP message is JSON: send it with Content-Type: application/json",
        );
    }
    let (parts, body) = req.into_parts();
    let limited = http_body_util::Limited::new(body, cap as usize);
    let bytes = match tokio::time::timeout(st.body_timeout, limited.collect()).await {
        Err(_) => return body_timeout(mcp, st.body_timeout),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return too_large(mcp, cap),
        Ok(Err(e)) => {
            return ApiError::invalid_request("the request body could not be read")
                .with_cause(e)
                .into_response()
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    if mcp {
        if let Err(n) = count_values(&bytes, MAX_MCP_VALUES) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                -32600,
                &format!("the message holds more than {n} JSON values; a tool call needs a few"),
            );
        }
        // JSON-RPC's parse error, not rmcp's plain-text 415.
        if parts.method == Method::POST {
            if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    &format!("parse error: the message is not JSON ({e})"),
                );
            }
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether a request says its body is JSON (`application/json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Count JSON values (scalars and containers) outside strings, up to `max`: `Err(max)` past
/// it. A linear scan of bytes, no allocation; malformed JSON is left to the parser.
fn count_values(json: &[u8], max: usize) -> Result<usize, usize> {
    let mut n = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut in_scalar = false;
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        let starts = match b {
            b'"' => {
                in_string = true;
                in_scalar = false;
                true
            }
            b'{' | b'[' => {
                in_scalar = false;
                true
            }
            b',' | b':' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t' => {
                in_scalar = false;
                false
            }
            _ => !std::mem::replace(&mut in_scalar, true),
        };
        if starts {
            n += 1;
            if n > max {
                return Err(max);
            }
        }
    }
    Ok(n)
}

fn too_large(mcp: bool, cap: u64) -> Response {
    let message = format!(
        "the request body is over {} ({} bytes), the most this endpoint takes",
        human(cap),
        cap
    );
    if mcp {
        return rpc_error(StatusCode::PAYLOAD_TOO_LARGE, -32600, &format!(
            "{message}; upload_document takes files up to 8 MiB as base64 — send larger ones to the upload_url it hands out"
        ));
    }
    let mut r = ApiError::new(ErrorCode::TooLarge, message)
        .with_hint(
            "Send a smaller body; files go to POST /upload, which takes up to the file size limit.",
        )
        .into_response();
    close(&mut r);
    r
}

fn body_timeout(mcp: bool, limit: Duration) -> Response {
    let message = format!(
        "the request body did not arrive within {} ms",
        limit.as_millis()
    );
    let mut r = if mcp {
        rpc_error(StatusCode::REQUEST_TIMEOUT, -32600, &message)
    } else {
        ApiError::new(ErrorCode::RequestTimeout, message).into_response()
    };
    close(&mut r);
    r
}

/// A JSON-RPC error answer (MCP clients read these, not the service's error envelope).
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": null,
        "error": {"code": code, "message": message}
    });
    let mut r = (status, axum::Json(body)).into_response();
    close(&mut r);
    r
}

/// A body left unread: the connection cannot be reused.
fn close(r: &mut Response) {
    r.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// The `Host` names a keyless service answers: loopback, the public URL's host, and the
/// operator's lists. `None`: any (`*` listed).
pub fn allowed_hosts(st: &AppState) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for h in st.allowed_hosts.iter().chain(st.mcp_hosts.iter()) {
        if h == "*" {
            return None;
        }
        out.push(host_only(h).to_ascii_lowercase());
    }
    if let Some(u) = st
        .public_url
        .as_deref()
        .and_then(|u| url::Url::parse(u).ok())
    {
        if let Some(h) = u.host_str() {
            out.push(host_only(h).to_ascii_lowercase());
        }
    }
    Some(out)
}

/// A `Host` value without its port (`[::1]:8080` → `::1`).
fn host_only(h: &str) -> &str {
    let h = h.trim();
    if let Some(rest) = h.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match h.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => h,
    }
}

fn is_loopback_host(h: &str) -> bool {
    let h = h.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost"
        || h.ends_with(".localhost")
        || h.parse::<IpAddr>().is_ok_and(|ip| match ip {
            IpAddr::V6(v6) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
            v4 => v4.is_loopback(),
        })
}

/// `X-Forwarded-Host`/`-Proto` are believed only from a gateway listed in
/// `DOCREADER_TRUSTED_PROXIES`: from anyone else they are dropped before a handler sees them
/// (a client would otherwise choose the address upload URLs point to).
pub async fn forwarded(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<super::serve::Peer>()
        .map(|p| p.0.ip());
    let trusted = peer.is_some_and(|ip| crate::fetch::in_ranges(ip, &st.trusted_proxies));
    if !trusted {
        let h = req.headers_mut();
        for name in ["x-forwarded-host", "x-forwarded-proto", "forwarded"] {
            h.remove(name);
        }
    }
    next.run(req).await
}

/// Keyless: refuse foreign `Host` names and cross-site browser writes.
pub async fn keyless(State(st): State<AppState>, req: Request, next: Next) -> Response {
    if st.api_keys.is_some() {
        return next.run(req).await;
    }
    let path = req.uri().path();
    if path == "/healthz" || path == "/readyz" {
        return next.run(req).await;
    }
    if let Err(e) = check_host(&st, req.headers(), req.uri()) {
        return e.into_response();
    }
    if let Err(e) = check_site(&st, req.method(), req.headers()) {
        return e.into_response();
    }
    next.run(req).await
}

fn check_host(st: &AppState, headers: &HeaderMap, uri: &axum::http::Uri) -> Result<(), ApiError> {
    let given = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| uri.authority().map(|a| a.to_string()));
    // A request without a Host (HTTP/1.0, or built in-process) was not sent by a browser.
    let Some(given) = given else { return Ok(()) };
    let host = host_only(&given).to_ascii_lowercase();
    if is_loopback_host(&host) {
        return Ok(());
    }
    match allowed_hosts(st) {
        None => Ok(()),
        Some(list) if list.iter().any(|h| *h == host) => Ok(()),
        Some(_) => Err(ApiError::new(
            ErrorCode::Forbidden,
            format!("this service, running without API keys, does not answer requests for the host {host:?}"),
        )
        .with_hint("Reach it as localhost / 127.0.0.1, or have the operator list the name in DOCREADER_ALLOWED_HOSTS (or set DOCREADER_PUBLIC_URL), or configure DOCREADER_API_KEYS.")),
    }
}

fn check_site(st: &AppState, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let origin = text(header::ORIGIN).map(|o| o.trim_end_matches('/').to_string());
    let listed = |o: &str| {
        st.cors_origins
            .iter()
            .any(|c| c == "*" || c.eq_ignore_ascii_case(o))
    };
    if origin.as_deref().is_some_and(listed) {
        return Ok(());
    }
    let cross = text(HeaderName::from_static("sec-fetch-site")) == Some("cross-site");
    let foreign_origin = match (&origin, text(header::HOST)) {
        (Some(o), Some(host)) => {
            let authority = o.split_once("://").map_or(o.as_str(), |(_, a)| a);
            o == "null" || !authority.eq_ignore_ascii_case(host)
        }
        (Some(_), None) => true,
        (None, _) => false,
    };
    if cross || foreign_origin {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "a {method} from another site ({}) is refused: this service runs without API keys",
                origin.as_deref().unwrap_or("a cross-site page")
            ),
        )
        .with_hint(
            "List the page's origin in DOCREADER_CORS_ORIGINS, or configure DOCREADER_API_KEYS.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        assert_eq!(
            count_values(br#"{"a": [1, 2, "x,y[]"], "b": true}"#, 100),
            Ok(8)
        );
        assert_eq!(count_values(br#""a\"b""#, 100), Ok(1));
        let many = format!("[{}]", vec!["1"; 20_000].join(","));
        assert_eq!(
            count_values(many.as_bytes(), MAX_MCP_VALUES),
            Err(MAX_MCP_VALUES)
        );
        let b64 = format!(r#"{{"content_base64": "{}"}}"#, "QUJD".repeat(1_000_000));
        assert_eq!(count_values(b64.as_bytes(), MAX_MCP_VALUES), Ok(3));
    }

    #[test]
    fn hosts_lose_their_ports() {
        assert_eq!(host_only("[::1]:8080"), "::1");
        assert_eq!(host_only("127.0.0.1:80"), "127.0.0.1");
        assert_eq!(host_only("example.com"), "example.com");
        assert!(is_loopback_host("localhost"));
        assert!(is_loopback_host("127.0.0.2"));
        assert!(is_loopback_host("::1"));
        assert!(!is_loopback_host("attacker.example"));
        assert!(!is_loopback_host("127.0.0.1.nip.io"));
    }
}
