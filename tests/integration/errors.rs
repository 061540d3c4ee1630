//! Snapshots of every error envelope the service can be driven to (message, hint, status),
//! and the server-path rules.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::Request;
use serde_json::{json, Value};

use crate::common::*;

async fn scenarios() -> BTreeMap<&'static str, Resp> {
    let mut out = BTreeMap::new();
    let app = TestApp::new().await;
    let id = app
        .upload_id("notes.txt", &"line\n".repeat(97).into_bytes())
        .await;
    let raw = |body: &'static str| {
        Request::post("/read")
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap()
    };
    out.insert("invalid_request_bad_json", app.send(raw("{not json")).await);
    out.insert(
        "invalid_request_missing_file_id",
        app.read(json!({"offset": 1})).await,
    );
    out.insert(
        "invalid_request_both_inputs",
        app.read(json!({"file_id": id, "path": "/etc/hosts"})).await,
    );
    out.insert(
        "invalid_option_unknown",
        app.read(json!({"file_id": id, "colour": "red"})).await,
    );
    out.insert(
        "invalid_option_negative",
        app.read(json!({"file_id": id, "limit": -5})).await,
    );
    out.insert(
        "invalid_option_regex",
        app.read(json!({"file_id": id, "query": "(", "query_mode": "regex"}))
            .await,
    );
    out.insert(
        "invalid_option_exclusive",
        app.read(json!({"file_id": id, "offset": 1, "byte_offset": 2}))
            .await,
    );
    out.insert(
        "unsupported_option",
        app.read(json!({"file_id": id, "pages": "1-2", "sheet": "x"}))
            .await,
    );
    out.insert(
        "out_of_range_offset",
        app.read(json!({"file_id": id, "offset": 120})).await,
    );
    out.insert(
        "out_of_range_bytes",
        app.read(json!({"file_id": id, "byte_offset": 485})).await,
    );
    out.insert("not_found", app.read(json!({"file_id": "f_0000"})).await);
    out.insert("not_found_endpoint", app.get("/nope").await);
    out.insert("method_not_allowed", app.get("/read").await);
    out.insert(
        "outside_allowed_roots_disabled",
        app.read(json!({"path": "/etc/hosts"})).await,
    );
    let small = TestApp::with(|a| a.limits.max_file_bytes = 4096).await;
    out.insert("too_large", small.upload("big.txt", &[b'a'; 5000]).await);
    out.insert(
        "blocked_type_executable",
        app.upload("report.pdf", &real_executable()).await,
    );
    out.insert(
        "blocked_type_archive",
        app.upload("a.zip", &crate::upload::make_zip(&[("a", b"b")]))
            .await,
    );
    out.insert(
        "binary_content",
        app.upload("data.txt", &[0u8, 1, 2, 3, 0, 0, 7, 8, 9, 0, 0, 0, 4])
            .await,
    );
    let doc =
        std::fs::read(corpus_dir().join("doc/testWORD.doc")).expect("corpus doc/testWORD.doc");
    out.insert("legacy_format", app.upload("old.doc", &doc).await);
    // An OpenDocument drawing: a document kind that is not read.
    let odg = crate::upload::make_zip(&[
        ("mimetype", b"application/vnd.oasis.opendocument.graphics"),
        ("content.xml", b"<office:document-content/>"),
    ]);
    out.insert("unsupported_format", app.upload("a.odg", &odg).await);
    let mut keyed = TestApp::with(|a| a.api_keys = Some("key-aaaaaaaaaaaaaaaa:alice".into())).await;
    out.insert("unauthorized_missing", keyed.get("/files").await);
    keyed.token = Some("not-a-key-at-all-xx".into());
    out.insert("unauthorized_unknown", keyed.get("/files").await);
    out
}

#[tokio::test]
async fn error_envelopes_match_snapshots() {
    let mut got = BTreeMap::new();
    for (name, r) in scenarios().await {
        assert_eq!(r.json["status"], "error", "{name}: {}", r.json);
        let code = r.json["error"]["code"].as_str().unwrap();
        assert!(
            name.starts_with(code),
            "scenario {name} answered {code}: {}",
            r.json
        );
        let mut body = r.json.clone();
        body["error"].as_object_mut().unwrap().remove("request_id");
        got.insert(
            name.to_string(),
            json!({"http": r.status.as_u16(), "body": body}),
        );
    }
    let path = repo().join("tests/snapshots/errors.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
    }
    let want: BTreeMap<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .expect("tests/snapshots/errors.json (UPDATE_SNAPSHOTS=1 writes it)"),
    )
    .unwrap();
    for (name, v) in &got {
        assert_eq!(
            Some(v),
            want.get(name),
            "snapshot {name} differs (UPDATE_SNAPSHOTS=1 to accept)"
        );
    }
    assert_eq!(got.len(), want.len(), "snapshots list other scenarios");
}

#[tokio::test]
async fn server_paths_only_under_allowed_roots() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("ok.txt"), "readable\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        root.path().join("link.txt"),
    )
    .unwrap();
    let root_s = root.path().to_str().unwrap().to_string();
    let app = TestApp::with(|a| a.allowed_roots = Some(root_s.clone())).await;

    let r = app.read(json!({"path": format!("{root_s}/ok.txt")})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], "readable\n");
    assert_eq!(r.json["file_id"], Value::Null);
    assert_error(
        &app.read(json!({"path": format!("{root_s}/ok.txt"), "pages": "1"}))
            .await,
        400,
        "unsupported_option",
    );

    let escapes = [
        format!("{root_s}/link.txt"),
        format!(
            "{root_s}/../{}/secret.txt",
            outside.path().file_name().unwrap().to_str().unwrap()
        ),
        outside
            .path()
            .join("secret.txt")
            .to_str()
            .unwrap()
            .to_string(),
        "//server/share/x.txt".to_string(),
        "\\\\server\\share\\x.txt".to_string(),
        "file:///etc/passwd".to_string(),
        "https://example.com/a.pdf".to_string(),
    ];
    for p in escapes {
        let r = app.read(json!({"path": p})).await;
        assert_error(&r, 403, "outside_allowed_roots");
    }
    assert_error(
        &app.read(json!({"path": format!("{root_s}/missing.txt")}))
            .await,
        404,
        "not_found",
    );
}

/// Every cap is a field of `Limits` that reaches the extractors (before, the OCR pixel
/// budget, the TIFF page count and the package caps were constants in their files).
#[tokio::test]
async fn limits_configured_reach_the_extractors() {
    let app = TestApp::with(|a| {
        a.limits.max_ocr_pixels = 20_000;
        a.limits.package.max_entries = 3;
    })
    .await;
    let r = app
        .upload_and_read(
            "hello.png",
            &fixture("images/hello.png"),
            serde_json::json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["warnings"].to_string().contains("scaled"),
        "{}",
        r.json
    );
    let r = app
        .upload_and_read(
            "report.docx",
            &fixture("office/report.docx"),
            serde_json::json!({}),
        )
        .await;
    assert_error(&r, 413, "too_large");
}
