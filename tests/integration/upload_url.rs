//! Upload URLs (issue #19): handed out to a tenant with its key, used once without one,
//! bound to that tenant, expiring; a failed upload frees the URL again.

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use crate::common::*;

const ALICE: &str = "alice-key-0123456789";
const BOB: &str = "bob-key-0123456789ab";

/// The gateway in front (`DOCREADER_TRUSTED_PROXIES`): the only peer whose
/// `X-Forwarded-*` headers count.
const GATEWAY: &str = "10.0.0.7:41000";

async fn keyed() -> TestApp {
    let mut app = TestApp::with(|a| {
        a.api_keys = Some(format!("{ALICE}:alice,{BOB}:bob"));
        a.trusted_proxies = Some("10.0.0.0/24".into());
    })
    .await;
    app.token = Some(ALICE.into());
    app
}

/// `POST /uploads` as sent by the peer `from`.
async fn new_url_from(
    app: &TestApp,
    from: &str,
    body: serde_json::Value,
    headers: &[(&str, &str)],
) -> Resp {
    let mut req = Request::post("/uploads").header("content-type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let peer: std::net::SocketAddr = from.parse().unwrap();
    let req = req
        .extension(axum::extract::ConnectInfo(peer))
        .body(Body::from(body.to_string()))
        .unwrap();
    app.send(req).await
}

async fn new_url(app: &TestApp, body: serde_json::Value, headers: &[(&str, &str)]) -> Resp {
    new_url_from(app, GATEWAY, body, headers).await
}

#[tokio::test]
async fn forwarded_headers_count_only_from_a_trusted_gateway() {
    // Issue #41 item 12: a client that is not the gateway cannot choose where upload URLs
    // point; the gateway can.
    let app = keyed().await;
    let forged = [
        ("host", "docs.example.com"),
        ("x-forwarded-host", "evil.example"),
        ("x-forwarded-proto", "https"),
    ];
    let r = new_url_from(&app, "203.0.113.9:5000", json!({"name": "a.pdf"}), &forged).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let url = r.json["upload_url"].as_str().unwrap();
    assert!(url.starts_with("http://docs.example.com/uploads/"), "{url}");
    let r = new_url(&app, json!({"name": "a.pdf"}), &forged).await;
    let url = r.json["upload_url"].as_str().unwrap();
    assert!(url.starts_with("https://evil.example/uploads/"), "{url}");
    // No gateway configured: nobody's forwarded headers count.
    let mut plain = TestApp::with(|a| a.api_keys = Some(format!("{ALICE}:alice"))).await;
    plain.token = Some(ALICE.into());
    let r = new_url_from(&plain, GATEWAY, json!({"name": "a.pdf"}), &forged).await;
    let url = r.json["upload_url"].as_str().unwrap();
    assert!(url.starts_with("http://docs.example.com/uploads/"), "{url}");
}

/// PUT bytes to an upload URL's path, with no key.
async fn put(app: &TestApp, url: &str, bytes: Vec<u8>) -> Resp {
    let path = &url[url.find("/uploads/").expect("an upload path")..];
    let req = Request::put(path).body(Body::from(bytes)).unwrap();
    app.router_send(req).await
}

#[tokio::test]
async fn an_upload_url_stores_one_file_for_its_tenant_once() {
    let app = keyed().await;
    let r = new_url(
        &app,
        json!({"name": "three.pdf"}),
        &[("host", "docs.example.com"), ("x-forwarded-proto", "https")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let url = r.json["upload_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with("https://docs.example.com/uploads/"),
        "{url}"
    );
    assert_eq!(r.json["method"], "PUT");
    let stored = put(&app, &url, fixture("pdf/three_pages.pdf")).await;
    assert_eq!(stored.status, 200, "{}", stored.json);
    let id = stored.json["files"][0]["file_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(stored.json["files"][0]["name"], "three.pdf");
    assert_eq!(stored.json["files"][0]["format"], "pdf");
    // Alice's, read with her key; Bob cannot see it.
    let read = app.read(json!({"file_id": id})).await;
    assert_eq!(read.status, 200, "{}", read.json);
    let as_bob = Request::post("/read")
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {BOB}"))
        .body(Body::from(json!({"file_id": id}).to_string()))
        .unwrap();
    assert_error(&app.send(as_bob).await, 404, "not_found");
    // Once only.
    assert_error(&put(&app, &url, b"hello".to_vec()).await, 404, "not_found");
    // A made-up token, and no key at all for a new URL.
    let fake = format!("/uploads/{}", "ab".repeat(32));
    assert_error(&put(&app, &fake, b"hello".to_vec()).await, 404, "not_found");
    assert_error(
        &put(&app, "/uploads/../files", b"x".to_vec()).await,
        404,
        "not_found",
    );
    let no_key = app
        .router_send(
            Request::post("/uploads")
                .header("content-type", "application/json")
                .body(Body::from(json!({"name": "a.txt"}).to_string()))
                .unwrap(),
        )
        .await;
    assert_error(&no_key, 401, "unauthorized");
}

#[tokio::test]
async fn a_refused_upload_frees_the_url_and_urls_expire() {
    let app = keyed().await;
    let r = new_url(&app, json!({"name": "notes.txt"}), &[]).await;
    let url = r.json["upload_url"].as_str().unwrap().to_string();
    assert_error(
        &put(&app, &url, real_executable()).await,
        415,
        "blocked_type",
    );
    let ok = put(&app, &url, b"plain notes\n".to_vec()).await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    // A multipart form works too (a browser's or curl -F's way).
    let r = new_url(&app, json!({"name": "form.csv"}), &[]).await;
    let url = r.json["upload_url"].as_str().unwrap().to_string();
    let path = &url[url.find("/uploads/").unwrap()..];
    let boundary = "b0undary";
    let body = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.csv\"\r\n\r\na,b\n1,2\n\r\n--{boundary}--\r\n");
    let form = app
        .router_send(
            Request::post(path)
                .header(
                    "content-type",
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(Body::from(body))
                .unwrap(),
        )
        .await;
    assert_eq!(form.status, 200, "{}", form.json);
    assert_eq!(form.json["files"][0]["name"], "form.csv");
    assert_eq!(form.json["files"][0]["size"], 8);
    // Expired.
    let r = new_url(&app, json!({"name": "late.txt", "ttl_seconds": 1}), &[]).await;
    let url = r.json["upload_url"].as_str().unwrap().to_string();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_error(&put(&app, &url, b"late\n".to_vec()).await, 404, "not_found");
    assert_error(
        &new_url(&app, json!({"name": "x.txt", "ttl_seconds": 99999}), &[]).await,
        400,
        "invalid_option",
    );
}
