//! The committed OpenAPI description is the one the code generates; /docs works offline.

use crate::common::*;

#[tokio::test]
async fn committed_openapi_matches_the_code() {
    let generated = docreader::http::openapi_json();
    let path = repo().join("openapi/openapi.json");
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).expect("openapi/openapi.json is committed");
    assert!(
        committed == generated,
        "openapi/openapi.json drifted from the code: run `make openapi` (or UPDATE_OPENAPI=1 make test) and commit it"
    );
    // Every error code is published.
    for code in docreader::error::ErrorCode::ALL {
        assert!(
            generated.contains(&format!("\"{}\"", code.as_str())),
            "{} missing",
            code.as_str()
        );
    }
}

#[tokio::test]
async fn served_description_and_docs_page() {
    let app = TestApp::new().await;
    let r = app.get("/openapi.json").await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json,
        serde_json::from_str::<serde_json::Value>(&docreader::http::openapi_json()).unwrap()
    );
    let r = app.get("/docs/").await;
    assert_eq!(r.status, 200);
    assert!(r.json.as_str().unwrap().contains("swagger-ui"));
    // The page's script is served by us, not a CDN.
    let r = app.get("/docs/swagger-ui-bundle.js").await;
    assert_eq!(r.status, 200);
    // And it loads the description from /openapi.json (made on its first request).
    let r = app.get("/docs/swagger-initializer.js").await;
    assert_eq!(r.status, 200);
    let script = r.json.as_str().unwrap_or_default().to_string();
    assert!(script.contains("\"/openapi.json\""), "{script}");
}

#[tokio::test]
async fn probes() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/healthz").await.json["status"], "ok");
    let ready = app.get("/readyz").await;
    assert_eq!(ready.json["status"], "ok");
    // make test installs PDFium first (make native), so it must be found.
    assert_eq!(ready.json["engines"]["pdf"], true, "{}", ready.json);
    assert_eq!(ready.json["engines"]["ocr"], "ppocr", "{}", ready.json);
    let langs = ready.json["engines"]["tesseract"].as_array().unwrap();
    assert!(langs.iter().any(|l| l == "kor"), "{}", ready.json);
}

#[tokio::test]
async fn metrics_count_reads_by_format_and_outcome() {
    let app = TestApp::new().await;
    let id = app.upload_id("a.txt", b"one\ntwo\n").await;
    assert_eq!(
        app.read(serde_json::json!({"file_id": id})).await.status,
        200
    );
    assert_eq!(
        app.read(serde_json::json!({"file_id": id, "offset": 9}))
            .await
            .status,
        416
    );
    let r = app.get("/metrics").await;
    assert_eq!(r.status, 200);
    assert!(r.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let text = r.json.as_str().unwrap();
    for line in [
        "docreader_reads_total{format=\"text\",outcome=\"ok\"} 1",
        "docreader_reads_total{format=\"text\",outcome=\"out_of_range\"} 1",
        "docreader_read_seconds_count{format=\"text\"} 2",
        "docreader_uploads_total{outcome=\"ok\"} 1",
        "docreader_reads_in_flight 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

/// Every key a read answers with is described in the OpenAPI `Envelope` (its own keys and
/// the typed per-format `Report`), for every format: a key added to an extractor without a
/// type fails here.
#[tokio::test]
async fn every_envelope_key_is_in_the_schema() {
    let doc: serde_json::Value = serde_json::from_str(&docreader::http::openapi_json()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let mut described: Vec<String> = Vec::new();
    for part in schemas["Envelope"]["allOf"].as_array().unwrap() {
        let props = match part.get("$ref").and_then(|r| r.as_str()) {
            Some(r) => &schemas[r.rsplit('/').next().unwrap()]["properties"],
            None => &part["properties"],
        };
        described.extend(props.as_object().unwrap().keys().cloned());
    }
    let app = TestApp::new().await;
    let msg = std::fs::read(corpus_dir().join("msg/testMSG_att_doc.msg")).unwrap();
    for (name, bytes, opts) in [
        (
            "three.pdf",
            fixture("pdf/three_pages.pdf"),
            serde_json::json!({"max_chars": 40}),
        ),
        (
            "scan.pdf",
            fixture("pdf/scan_page.pdf"),
            serde_json::json!({"include_boxes": true}),
        ),
        ("blank.pdf", fixture("pdf/blank.pdf"), serde_json::json!({})),
        (
            "report.docx",
            fixture("office/report.docx"),
            serde_json::json!({}),
        ),
        (
            "deck.pptx",
            fixture("office/deck.pptx"),
            serde_json::json!({}),
        ),
        (
            "book.xlsx",
            fixture("office/book.xlsx"),
            serde_json::json!({"max_cells": 5}),
        ),
        (
            "hello.png",
            fixture("images/hello.png"),
            serde_json::json!({"include_boxes": true}),
        ),
        (
            "gbk.csv",
            fixture("text/gbk.csv"),
            serde_json::json!({"byte_offset": 0, "byte_length": 10}),
        ),
        ("att.msg", msg, serde_json::json!({})),
    ] {
        let r = app.upload_and_read(name, &bytes, opts).await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        for key in r.json.as_object().unwrap().keys() {
            assert!(
                described.contains(key),
                "{name}: `{key}` is not in the Envelope schema"
            );
        }
    }
}
