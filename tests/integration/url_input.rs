//! URL inputs (issue #19): off by default; only listed hosts; every refusal its own code —
//! scheme, host, internal address (loopback without the operator's say-so, the metadata
//! address always), a redirect to an unlisted host; size and time limits while streaming;
//! the bytes checked like an upload; the fetched file becomes an upload of the tenant.
//! A local HTTP server on loopback plays the web.

use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::json;

use crate::common::*;

/// A web server on loopback; its base URL.
async fn web() -> String {
    let pdf = fixture("pdf/three_pages.pdf");
    let elf = real_executable();
    let app = axum::Router::new()
        .route("/docs/three.pdf", get(move || async move { pdf.clone() }))
        .route("/docs/elf.txt", get(move || async move { elf.clone() }))
        .route("/docs/big.txt", get(|| async { "x".repeat(2 << 20) }))
        .route(
            "/docs/slow.txt",
            get(|| async {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                "late"
            }),
        )
        .route("/docs/missing.pdf", get(|| async { StatusCode::NOT_FOUND }))
        .route("/go/here", get(|| async { redirect("/docs/three.pdf") }))
        .route(
            "/go/away",
            get(|| async { redirect("http://elsewhere.example/x.pdf") }),
        )
        .route(
            "/go/metadata",
            get(|| async { redirect("http://169.254.169.254/latest/meta-data/") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn redirect(to: &'static str) -> axum::response::Response {
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

#[tokio::test]
async fn a_listed_url_is_fetched_and_read_as_an_upload() {
    let base = web().await;
    let app = TestApp::with(|a| {
        a.url_allowlist = Some("127.0.0.1, 169.254.169.254".into());
        a.url_allow_addresses = Some("127.0.0.0/8".into());
        a.url_timeout_ms = 800;
        a.limits.max_file_bytes = 1 << 20;
    })
    .await;
    let r = app
        .read(json!({"url": format!("{base}/docs/three.pdf")}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "pdf");
    assert_eq!(r.json["file"], "three.pdf");
    assert!(r.json["text"].as_str().unwrap().contains("needle"));
    // It is an upload now: read again by id, listed.
    let id = r.json["file_id"].as_str().unwrap().to_string();
    assert_eq!(
        app.read(json!({"file_id": id, "pages": "2"})).await.status,
        200
    );
    assert_eq!(app.get(&format!("/files/{id}")).await.status, 200);
    // A redirect within the listed host is followed.
    let r = app.read(json!({"url": format!("{base}/go/here")})).await;
    assert_eq!(r.status, 200, "{}", r.json);

    let err = |r: Resp, status: u16, code: &str| assert_error(&r, status, code);
    err(
        app.read(json!({"url": "file:///etc/passwd"})).await,
        400,
        "url_scheme_not_allowed",
    );
    err(
        app.read(json!({"url": "ftp://127.0.0.1/x.pdf"})).await,
        400,
        "url_scheme_not_allowed",
    );
    err(
        app.read(json!({"url": "http://localhost:9/x.pdf"})).await,
        403,
        "url_host_not_allowed",
    );
    err(
        app.read(json!({"url": format!("{base}/go/away")})).await,
        403,
        "url_redirect_blocked",
    );
    // Listed by the operator, but the metadata address is internal and not allowed.
    err(
        app.read(json!({"url": format!("{base}/go/metadata")}))
            .await,
        403,
        "url_address_blocked",
    );
    err(
        app.read(json!({"url": "http://169.254.169.254/latest/"}))
            .await,
        403,
        "url_address_blocked",
    );
    err(
        app.read(json!({"url": format!("{base}/docs/big.txt")}))
            .await,
        413,
        "too_large",
    );
    err(
        app.read(json!({"url": format!("{base}/docs/slow.txt")}))
            .await,
        504,
        "timeout",
    );
    err(
        app.read(json!({"url": format!("{base}/docs/elf.txt")}))
            .await,
        415,
        "blocked_type",
    );
    err(
        app.read(json!({"url": format!("{base}/docs/missing.pdf")}))
            .await,
        502,
        "fetch_failed",
    );
    err(
        app.read(json!({"url": "not a url"})).await,
        400,
        "invalid_option",
    );
    err(
        app.read(json!({"url": format!("{base}/docs/three.pdf"), "file_id": id}))
            .await,
        400,
        "invalid_request",
    );
    // Nothing of the refused fetches was kept.
    let files = app.get("/files").await;
    assert_eq!(
        files.json["files"].as_array().unwrap().len(),
        2,
        "{}",
        files.json
    );
    assert_eq!(app.temp_files(), 0);
}

#[tokio::test]
async fn urls_are_off_unless_listed_and_loopback_needs_the_operators_say_so() {
    let base = web().await;
    let off = TestApp::new().await;
    let r = off
        .read(json!({"url": format!("{base}/docs/three.pdf")}))
        .await;
    assert_error(&r, 403, "url_not_allowed");
    let listed = TestApp::with(|a| a.url_allowlist = Some("127.0.0.1".into())).await;
    let r = listed
        .read(json!({"url": format!("{base}/docs/three.pdf")}))
        .await;
    assert_error(&r, 403, "url_address_blocked");
}
