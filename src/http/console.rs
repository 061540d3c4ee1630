//! The web console at `/`: one HTML page, its script and its style sheet, compiled into
//! the binary (no CDN, no build step). Public like `/docs`: it holds no data; every call it
//! makes goes through the API with the key the person gives it. The Content-Security-Policy
//! of these paths (`security_headers`) lets only the console's own script and style run.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::AppState;

const INDEX: &str = include_str!("console/index.html");
const SCRIPT: &str = include_str!("console/app.js");
const STYLE: &str = include_str!("console/app.css");
const ICON: &str = include_str!("console/favicon.svg");

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/console/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/console/app.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        // Browsers ask for `/favicon.ico` whatever the page says: the same small SVG.
        .route(
            "/console/favicon.svg",
            get(|| async { asset("image/svg+xml", ICON) }),
        )
        .route(
            "/favicon.ico",
            get(|| async { asset("image/svg+xml", ICON) }),
        )
}

/// Whether a path is the console's (it gets the console's Content-Security-Policy).
pub fn is_console(path: &str) -> bool {
    path == "/" || path == "/favicon.ico" || path.starts_with("/console/")
}

fn asset(mime: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, mime),
            // A new binary may serve a new console: browsers ask again (cheap, small files).
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}
