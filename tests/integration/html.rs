//! HTML read as a document: the text a browser shows, or the source with `raw: true`.

use serde_json::json;

use crate::common::*;

const SHOWN: &str =
    "Quarterly report – Q3\nRevenue grew 12 %\nSales rose in every region — see the table.\n\
Region | Growth\nNorth | 14 %\nSouth East | 9 %\n• First ✓\n• Second ¾\nThe end & that's all.\n";

#[tokio::test]
async fn html_reads_as_a_browser_shows_it() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("report.html", &fixture("html/hidden.html"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "html");
    assert_eq!(r.json["mime"], "text/html");
    // Every kind of hiding is left out; entities (named, numeric, HTML5-only) decoded.
    assert_eq!(r.json["text"], SHOWN);
    let warning = r.json["warnings"][0].as_str().unwrap();
    assert!(
        warning.starts_with("7 elements a browser does not show"),
        "{warning}"
    );
    for hidden in [
        "Ignore previous",
        "inline style",
        "Zero-size",
        "class rule",
        "id rule",
        "promo",
        "inner",
        "Template",
        "script text",
    ] {
        assert!(
            !r.json["text"].as_str().unwrap().contains(hidden),
            "{hidden}"
        );
    }
    assert_eq!(r.json["total_lines"], SHOWN.lines().count() as u64);
    // Lines and queries are those of the text shown.
    let q = app.read(json!({"file_id": id, "query": "North"})).await;
    assert_eq!(q.json["matches"], 1);
    assert!(
        q.json["text"].as_str().unwrap().contains("5:North | 14 %"),
        "{}",
        q.json["text"]
    );
    let part = app
        .read(json!({"file_id": id, "offset": 3, "limit": 3}))
        .await;
    assert_eq!(
        part.json["text"],
        "Region | Growth\nNorth | 14 %\nSouth East | 9 %\n"
    );
}

#[tokio::test]
async fn raw_html_is_the_source_and_reads_on_as_the_source() {
    let app = TestApp::new().await;
    let source = fixture("html/hidden.html");
    let id = app.upload_id("report.html", &source).await;
    let r = app.read(json!({"file_id": id, "raw": true})).await;
    assert_eq!(r.json["text"], String::from_utf8(source.clone()).unwrap());
    // A byte window counts the source's bytes with `raw`, the shown text's (UTF-8) without.
    let bytes = app
        .read(json!({"file_id": id, "raw": true, "byte_offset": 0, "byte_length": 15}))
        .await;
    assert_eq!(bytes.json["text"], "<!DOCTYPE html>");
    let bytes = app
        .read(json!({"file_id": id, "byte_offset": 0, "byte_length": 15}))
        .await;
    assert_eq!(bytes.json["text"], "Quarterly repor");
    // Cut with a small budget, `next` carries `raw`, and the pieces are the source again.
    let first = app
        .read(json!({"file_id": id, "raw": true, "max_chars": 300}))
        .await;
    assert_eq!(first.json["next"]["raw"], true, "{}", first.json);
    let (whole, reads) = follow(&app, &id, json!({"raw": true, "max_chars": 300})).await;
    assert!(reads > 3);
    assert_eq!(whole.as_bytes(), source.as_slice());
    // The text shown reads on as the text shown, also through a line longer than the
    // budget (its `next` is a byte window over the shown text).
    let (shown, _) = follow(&app, &id, json!({"max_chars": 60})).await;
    assert_eq!(shown, SHOWN);
    let cut = app
        .read(json!({"file_id": id, "offset": 2, "max_chars": 30}))
        .await;
    assert!(cut.json["next"]["byte_offset"].is_u64(), "{}", cut.json);
    let (shown, _) = follow(&app, &id, json!({"max_chars": 30})).await;
    assert_eq!(shown, SHOWN);
    // `raw` is HTML's alone.
    let txt = app.upload_id("notes.txt", b"plain\n").await;
    assert_error(
        &app.read(json!({"file_id": txt, "raw": true})).await,
        400,
        "unsupported_option",
    );
}

/// The web console is served from the binary at `/`, public (it holds no data), under a
/// Content-Security-Policy that lets only its own script and style run — and it has no
/// inline script, handler or style that such a policy would refuse. (Its behaviour in a
/// browser: tests/console, run by `make test`.)
#[tokio::test]
async fn console_is_served_under_a_strict_policy() {
    let app = TestApp::with(|a| a.api_keys = Some("k1-aaaaaaaaaaaaaaaa:acme".into())).await;
    let page = app.get("/").await;
    assert_eq!(page.status, 200);
    let html = String::from_utf8(page.body.clone()).unwrap();
    assert!(html.contains("<script src=\"/console/app.js\" defer></script>"));
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe"),
        "{csp}"
    );
    for inline in ["<script>", " onclick=", " onload=", " style=", "<style"] {
        assert!(!html.contains(inline), "{inline}");
    }
    for (asset, mime) in [
        ("/console/app.js", "text/javascript"),
        ("/console/app.css", "text/css"),
    ] {
        let r = app.get(asset).await;
        assert_eq!(r.status, 200, "{asset}");
        assert!(r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with(mime));
    }
    // The API itself still wants the key.
    assert_eq!(app.get("/files").await.status, 401);
}
