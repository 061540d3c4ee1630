//! One-shot reads (#46 item 2): `POST /read` with a multipart body — the file and an
//! `options` part — read in one round trip, limited, sniffed and blocked as an upload is,
//! and kept only with `"keep": true`.

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use crate::common::*;

/// A part of a one-shot form.
enum Part<'a> {
    Options(&'a str),
    File(&'a str, &'a [u8]),
}

/// A multipart `POST /read` of these parts, in this order.
async fn form(app: &TestApp, parts: &[Part<'_>]) -> Resp {
    let boundary = "----docreader-one-shot-7MA4YWxk";
    let mut body = Vec::new();
    for part in parts {
        match part {
            Part::Options(o) => body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{o}\r\n"
                )
                .as_bytes(),
            ),
            Part::File(name, bytes) => {
                body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
                body.extend_from_slice(bytes);
                body.extend_from_slice(b"\r\n");
            }
        }
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    let req = Request::post("/read")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap();
    app.send(req).await
}

/// A one-shot read: the `options` part (when given), then the files (name, bytes).
async fn one_shot(app: &TestApp, files: &[(&str, &[u8])], options: Option<&str>) -> Resp {
    let mut parts: Vec<Part> = options.map(Part::Options).into_iter().collect();
    parts.extend(files.iter().map(|(n, b)| Part::File(n, b)));
    form(app, &parts).await
}

/// The file part before the options part (as `curl -F file=@… -F options=…` sends it).
async fn one_shot_file_first(app: &TestApp, file: (&str, &[u8]), options: &str) -> Resp {
    form(app, &[Part::File(file.0, file.1), Part::Options(options)]).await
}

async fn files_listed(app: &TestApp) -> usize {
    let r = app.get("/files").await;
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["files"].as_array().map_or(0, Vec::len)
}

/// What the service holds of files when a one-shot read has answered: files listed, blobs
/// stored, and files left in its temp space. A read that is not kept never stores its
/// file, and its temp file is gone before the answer: no waiting.
async fn held(app: &TestApp) -> (usize, usize, usize) {
    (
        files_listed(app).await,
        app.stored_blobs(),
        app.temp_files(),
    )
}

#[tokio::test]
async fn a_file_is_read_in_one_round_trip_and_not_kept() {
    let app = TestApp::new().await;
    let pdf = fixture("pdf/three_pages.pdf");

    // The file and its options in one request; nothing of it stays.
    let r = one_shot(&app, &[("three.pdf", &pdf)], Some(r#"{"pages": "2"}"#)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "pdf");
    assert_eq!(r.json["file"], "three.pdf");
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.starts_with("--- Page 2 ---\nBeta page two\n"),
        "{text}"
    );
    assert!(
        !text.contains("Page 1") && !text.contains("Page 3"),
        "{text}"
    );
    assert!(r.json["file_id"].is_null(), "{}", r.json);
    assert_eq!(held(&app).await, (0, 0, 0));

    // An empty or `null` options part is no options.
    let r = one_shot(&app, &[("three.pdf", &pdf)], Some("null")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    // Without options: the whole file, as a read by file_id would.
    let r = one_shot(&app, &[("gbk.csv", &fixture("text/gbk.csv"))], None).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["encoding"], "GBK", "{}", r.json);

    // An e-mail's attachments, which a read stores as uploads, are not kept either.
    let msg = std::fs::read(corpus_dir().join("msg/attachment_msg_pdf.msg")).unwrap();
    let r = one_shot(&app, &[("mail.msg", &msg)], None).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let atts = r.json["attachments"]
        .as_array()
        .expect("attachments listed");
    assert!(!atts.is_empty(), "{}", r.json);
    // Listed with their types (checked as an upload would be), not kept.
    assert!(
        atts.iter().all(|a| a["file_id"].is_null()),
        "{}",
        r.json["attachments"]
    );
    assert_eq!(atts[0]["format"], "pdf", "{}", r.json["attachments"]);
    assert!(
        atts[0]["note"].as_str().unwrap().starts_with("not kept"),
        "{}",
        r.json["attachments"]
    );
    // One that an upload would refuse is listed with the same refusal.
    let eml = std::fs::read(corpus_dir().join("eml/mailgun_pdf_attachment.eml")).unwrap();
    let r = one_shot(&app, &[("mail.eml", &eml)], None).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["attachments"][0]["error"]["code"], "corrupt");
    assert_eq!(held(&app).await, (0, 0, 0));

    // `keep: true`: an upload like any other, read again by its id.
    let r = one_shot(
        &app,
        &[("three.pdf", &pdf)],
        Some(r#"{"keep": true, "max_chars": 20}"#),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let id = r.json["file_id"].as_str().expect("kept").to_string();
    assert!(r.json["next"].is_object(), "{}", r.json);
    assert_eq!(files_listed(&app).await, 1);
    let again = app.read(json!({"file_id": id, "pages": "3"})).await;
    assert!(
        again.json["text"]
            .as_str()
            .unwrap()
            .starts_with("--- Page 3 ---\nGamma page three\n"),
        "{}",
        again.json
    );

    // What a read refuses is refused, and nothing is kept.
    let r = one_shot(&app, &[("three.pdf", &pdf)], Some(r#"{"colour": "red"}"#)).await;
    assert_error(&r, 400, "invalid_option");
    let r = one_shot(&app, &[("three.pdf", &pdf)], Some(r#"{"sheet": "A"}"#)).await;
    assert_error(&r, 400, "unsupported_option");
    let r = one_shot(&app, &[("three.pdf", &pdf)], Some(r#"{"pages": "9"}"#)).await;
    assert_error(&r, 416, "out_of_range");
    assert_eq!(held(&app).await, (1, 1, 0));
}

#[tokio::test]
async fn a_one_shot_read_is_guarded_like_an_upload() {
    let app = TestApp::with(|a| a.limits.max_file_bytes = 100_000).await;
    let pdf = fixture("pdf/three_pages.pdf");
    // An executable is blocked by its bytes, whatever its name.
    let r = one_shot(&app, &[("report.pdf", &real_executable())], None).await;
    assert_error(&r, 415, "blocked_type");
    // Over the file limit.
    let big = vec![b'a'; 200_000];
    let r = one_shot(&app, &[("big.txt", &big)], None).await;
    assert_error(&r, 413, "too_large");
    // One file a request; a file it carries, not one it names.
    let r = one_shot(&app, &[("a.pdf", &pdf), ("b.pdf", &pdf)], None).await;
    assert_error(&r, 400, "invalid_request");
    let r = one_shot(&app, &[], Some("{}")).await;
    assert_error(&r, 400, "invalid_request");
    let r = one_shot(&app, &[("a.pdf", &pdf)], Some(r#"{"file_id": "f_x"}"#)).await;
    assert_error(&r, 400, "invalid_option");
    let r = one_shot(&app, &[("a.pdf", &pdf)], Some("[1]")).await;
    assert_error(&r, 400, "invalid_request");
    // Two options parts: one would go unread.
    let two = "{\"pages\": \"1\"}\r\n------docreader-one-shot-7MA4YWxk\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n{\"pages\": \"2\"}";
    let r = one_shot(&app, &[("a.pdf", &pdf)], Some(two)).await;
    assert_error(&r, 400, "invalid_request");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than one options part"),
        "{}",
        r.json
    );
    let r = one_shot(&app, &[("a.pdf", &pdf)], Some(r#"{"keep": "yes"}"#)).await;
    assert_error(&r, 400, "invalid_option");
    // The options after the file: the file waits for them, and goes with the refusal.
    let r = one_shot_file_first(&app, ("a.pdf", &pdf), r#"{"url": "http://x"}"#).await;
    assert_error(&r, 400, "invalid_option");
    let r = one_shot_file_first(&app, ("a.pdf", &pdf), r#"{"pages": "3"}"#).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"]
            .as_str()
            .unwrap()
            .starts_with("--- Page 3 ---"),
        "{}",
        r.json
    );
    // Larger than what is written out on the request's own thread (64 KiB) and than what
    // is held in memory (256 KiB): written out as it comes, read, then removed.
    let mut text = Vec::new();
    while text.len() < 90_000 {
        text.extend_from_slice(b"a line of text that goes on for a while\n");
    }
    let r = one_shot(&app, &[("long.txt", &text)], Some(r#"{"max_chars": 10}"#)).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["next"].is_object(), "{}", r.json);
    assert_eq!(held(&app).await, (0, 0, 0));
}
