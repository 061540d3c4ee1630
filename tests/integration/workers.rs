//! Worker processes: a crash costs one read, the pool recovers; deadlines return the pages
//! finished, with `next` for the rest.

use serde_json::json;

use crate::common::*;

async fn pool(n: usize) -> TestApp {
    TestApp::with(|a| {
        a.workers = n;
        a.worker_bin = Some(env!("CARGO_BIN_EXE_docreader").into());
        // Workers crash or print on two magic file names (src/worker/child.rs), in any build.
        a.worker_test_hooks = true;
    })
    .await
}

#[tokio::test]
async fn a_crashing_worker_fails_only_its_own_read() {
    let app = pool(2).await;
    // With test hooks on, the worker aborts on this name (see src/worker/child.rs).
    let bomb = app
        .upload_id("__docreader_crash_test__.txt", b"boom\n")
        .await;
    let pdf = app
        .upload_id("three.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let txt = app.upload_id("gbk.csv", &fixture("text/gbk.csv")).await;
    let (crash, a, b, c) = tokio::join!(
        app.read(json!({"file_id": bomb})),
        app.read(json!({"file_id": pdf})),
        app.read(json!({"file_id": txt})),
        app.read(json!({"file_id": pdf, "pages": "2"})),
    );
    assert_error(&crash, 500, "extraction_crashed");
    assert!(
        crash.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("died"),
        "{}",
        crash.json
    );
    for r in [&a, &b, &c] {
        assert_eq!(r.status, 200, "{}", r.json);
    }
    assert_eq!(b.json["encoding"], "GBK");
    // The pool replaced the dead worker and goes on.
    for _ in 0..3 {
        let r = app.read(json!({"file_id": pdf, "query": "needle"})).await;
        assert_eq!(r.json["matches"], 3, "{}", r.json);
    }
    assert_error(
        &app.read(json!({"file_id": bomb})).await,
        500,
        "extraction_crashed",
    );
    assert_eq!(app.read(json!({"file_id": txt})).await.status, 200);
    let metrics = app.get("/metrics").await.json.as_str().unwrap().to_string();
    assert!(
        metrics.contains("docreader_worker_restarts_total 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("docreader_reads_total{format=\"text\",outcome=\"extraction_crashed\"} 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn workers_give_the_same_envelope_as_in_process() {
    let inproc = TestApp::new().await;
    let workers = pool(1).await;
    for (name, bytes, opts) in [
        ("report.docx", fixture("office/report.docx"), json!({})),
        (
            "book.xlsx",
            fixture("office/book.xlsx"),
            json!({"max_cells": 20}),
        ),
        (
            "three.pdf",
            fixture("pdf/three_pages.pdf"),
            json!({"pages": "2-3"}),
        ),
        // Every part of the envelope makes the way back from the worker: styles whose
        // empty lists are left out (the server could not read them back, and killed the
        // worker for it: the attack pass of 2026-12-07), a profile, typed blocks, chunks.
        (
            "styles.xlsx",
            fixture("office/styles.xlsx"),
            json!({"include_styles": true, "profile": true}),
        ),
        (
            "book.xlsx",
            fixture("office/book.xlsx"),
            json!({"output": "json", "max_cells": 20}),
        ),
        (
            "figures.pdf",
            fixture("pdf/figures.pdf"),
            json!({"output": "chunks"}),
        ),
    ] {
        let mut a = inproc.upload_and_read(name, &bytes, opts.clone()).await;
        let mut b = workers.upload_and_read(name, &bytes, opts).await;
        assert_eq!(b.status, 200, "{name}: {}", b.json);
        for env in [&mut a.json, &mut b.json] {
            let env = env.as_object_mut().unwrap();
            for volatile in ["elapsed_ms", "file_id", "cached"] {
                env.remove(volatile);
            }
        }
        assert_eq!(a.json, b.json, "{name}");
    }
    // Attachments found by a worker are stored like any other.
    let r = workers
        .upload_and_read(
            "att.msg",
            &std::fs::read(corpus_dir().join("msg/testMSG_att_doc.msg")).unwrap(),
            json!({}),
        )
        .await;
    let txt = r.json["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "pj1.txt")
        .unwrap()
        .clone();
    let read = workers.read(json!({"file_id": txt["file_id"]})).await;
    assert_eq!(read.status, 200, "{}", read.json);
}

/// A read against `deadline_ms` that ends part way: the deadline starts from the
/// measured time of one page (so a busy machine does not turn every page into a
/// `timeout`) and moves when the machine was slower or faster than measured: 504
/// `timeout` (no page finished) doubles it, a whole read halves it (unless
/// `whole_ok`: then a whole read is an answer too).
async fn read_part_way(
    app: &TestApp,
    id: &str,
    pages: &str,
    mut deadline_ms: u64,
    whole_ok: bool,
) -> serde_json::Value {
    for _ in 0..8 {
        let r = app
            .read(
                json!({"file_id": id, "ocr": "force", "deadline_ms": deadline_ms, "pages": pages}),
            )
            .await;
        match r.status.as_u16() {
            // Not one page in time: the error says so, and loses nothing.
            504 => {
                assert_eq!(r.json["error"]["code"], "timeout", "{}", r.json);
                deadline_ms *= 2;
            }
            200 if r.json["partial"] == true => return r.json,
            200 => {
                assert!(r.json["next"].is_null(), "{}", r.json);
                if whole_ok {
                    return r.json;
                }
                deadline_ms = (deadline_ms / 2).max(1);
            }
            s => panic!("{s}: {}", r.json),
        }
    }
    panic!("no deadline ended the read of {pages} part way");
}

#[tokio::test]
async fn a_deadline_returns_finished_pages_and_next() {
    for app in [TestApp::new().await, pool(1).await] {
        let id = app
            .upload_id("thirty.pdf", &fixture("pdf/thirty_short.pdf"))
            .await;
        // One page first: the models are loaded, and its time says how long a page
        // takes on this machine now (0.2-1 s when idle, more when the cores are busy).
        let started = std::time::Instant::now();
        let one = app
            .read(json!({"file_id": id, "ocr": "force", "pages": "1"}))
            .await;
        assert_eq!(one.status, 200, "{}", one.json);
        let page_ms = started.elapsed().as_millis() as u64;
        // About four pages' worth: the deadline falls in the middle of the document.
        let r = read_part_way(&app, &id, "1-30", (page_ms * 4).max(500), false).await;
        let done = r["pages_read"].as_u64().unwrap();
        assert!((1..30).contains(&done), "{r}");
        assert_eq!(r["next"]["pages"], format!("{}-30", done + 1));
        assert!(r["text"]
            .as_str()
            .unwrap()
            .contains(&format!("--- Page {done} ---")));
        assert!(!r["text"]
            .as_str()
            .unwrap()
            .contains(&format!("--- Page {} ---", done + 1)));
        // Nothing finished was thrown away, and next reads on from there.
        let next = r["next"]["pages"].as_str().unwrap().to_string();
        let more = read_part_way(&app, &id, &next, (page_ms * 4).max(500), true).await;
        assert!(more["text"]
            .as_str()
            .unwrap()
            .starts_with(&format!("--- Page {} ---", done + 1)));
    }
}

/// `Accept: text/event-stream`: a progress event per page, then the envelope.
#[tokio::test]
async fn progress_streams_page_by_page_then_the_envelope() {
    use axum::body::Body;
    use axum::http::Request;
    for app in [TestApp::new().await, pool(1).await] {
        let id = app
            .upload_id("thirty.pdf", &fixture("pdf/thirty_short.pdf"))
            .await;
        let req = Request::post("/read")
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(Body::from(
                json!({"file_id": id, "pages": "1-3", "ocr": "force"}).to_string(),
            ))
            .unwrap();
        let r = app.send(req).await;
        assert_eq!(r.status, 200);
        assert!(r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"));
        // Gateways (nginx) pass events on as they come only when told.
        assert_eq!(r.headers["x-accel-buffering"], "no");
        assert_eq!(r.headers["cache-control"], "no-cache");
        let body = r.json.as_str().expect("an event stream").to_string();
        let events: Vec<(String, serde_json::Value)> = body
            .split("\n\n")
            .filter(|e| e.contains("data:"))
            .map(|e| {
                let name = e
                    .lines()
                    .find_map(|l| l.strip_prefix("event:"))
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let data = e
                    .lines()
                    .find_map(|l| l.strip_prefix("data:"))
                    .unwrap()
                    .trim();
                (name, serde_json::from_str(data).unwrap())
            })
            .collect();
        let progress: Vec<_> = events
            .iter()
            .filter(|(n, _)| n == "progress")
            .map(|(_, d)| d.clone())
            .collect();
        assert_eq!(progress.len(), 3, "{body}");
        for (i, p) in progress.iter().enumerate() {
            assert_eq!(p["done"], i as u64 + 1);
            assert_eq!(p["total"], 3);
            assert_eq!(p["stage"], "ocr");
        }
        let (last, env) = events.last().unwrap();
        assert_eq!(last, "envelope");
        assert!(
            env["text"].as_str().unwrap().contains("Short page 3"),
            "{env}"
        );
        // Errors found before reading are ordinary HTTP errors.
        let req = Request::post("/read")
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(Body::from(json!({"file_id": "f_missing"}).to_string()))
            .unwrap();
        assert_error(&app.send(req).await, 404, "not_found");
    }
}

#[tokio::test]
async fn native_chatter_on_stdout_cannot_corrupt_replies() {
    let app = pool(1).await;
    // With test hooks on, the worker prints to stdout while reading this name.
    let id = app
        .upload_id("__docreader_stdout_noise_test__.txt", b"quiet text\n")
        .await;
    for _ in 0..2 {
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["text"], "quiet text\n");
    }
}

#[tokio::test]
async fn a_native_library_that_aborts_at_the_cap_fails_as_too_large() {
    // C code allocates outside Rust's allocator and aborts when the cap refuses it (glibc:
    // "failed to register TLS destructor: out of memory", which once turned the balloon
    // PNG's too_large into extraction_crashed). The magic name mallocs until the cap
    // refuses, then aborts; a plain abort (the crash test) stays extraction_crashed.
    let app = TestApp::with(|a| {
        a.workers = 1;
        a.worker_memory_mb = 512;
        a.worker_bin = Some(env!("CARGO_BIN_EXE_docreader").into());
        a.worker_test_hooks = true;
    })
    .await;
    let hog = app
        .upload_id("__docreader_native_oom_test__.txt", b"hog\n")
        .await;
    let r = app.read(json!({"file_id": hog})).await;
    assert_error(&r, 413, "too_large");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("512 MB"),
        "{}",
        r.json
    );
    let bomb = app
        .upload_id("__docreader_crash_test__.txt", b"boom\n")
        .await;
    assert_error(
        &app.read(json!({"file_id": bomb})).await,
        500,
        "extraction_crashed",
    );
    let r = app
        .upload_and_read("hello.png", &fixture("images/hello.png"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
}

#[tokio::test]
async fn a_read_past_the_memory_cap_fails_as_too_large_and_only_it() {
    // A 46 KB PNG that decodes to 15000 × 15000 pixels (675 MB as RGB): under a 512 MB
    // worker cap it is refused before it is decoded (more than half the cap), naming the
    // cap, and no worker dies (trying it died at the cap, at times inside glibc, which
    // exits without a word: `extraction_crashed`).
    let app = TestApp::with(|a| {
        a.workers = 1;
        a.worker_memory_mb = 512;
        a.worker_bin = Some(env!("CARGO_BIN_EXE_docreader").into());
    })
    .await;
    let balloon = app
        .upload_id("balloon.png", &fixture("images/balloon.png"))
        .await;
    let r = app.read(json!({"file_id": balloon})).await;
    assert_error(&r, 413, "too_large");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("512 MB"),
        "{}",
        r.json
    );
    // The same worker slot serves the next read.
    let r = app
        .upload_and_read("hello.png", &fixture("images/hello.png"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let metrics = app.get("/metrics").await.json.as_str().unwrap().to_string();
    assert!(
        metrics.contains("docreader_worker_restarts_total 0"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_long_text_comes_from_the_worker_apart_and_goes_out_as_it_is_written() {
    // Issue #46 item 5: a worker sends a long text in a frame of its own (raw UTF-8, not a
    // JSON string), and the answer is written into the body as it is serialised (chunked,
    // no whole copy first). Every kind of character JSON must escape, multi-byte text, and
    // a text longer than one frame's chunk of the body.
    let app = pool(1).await;
    let line = "ünïcödé 中文 \"quoted\" back\\slash\ttab €\n";
    let text = line.repeat(3_000_000 / line.len());
    let id = app.upload_id("long.txt", text.as_bytes()).await;
    let r = app
        .read(json!({"file_id": id, "max_chars": 5_000_000}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["status"], "ok");
    assert_eq!(r.json["text"].as_str().unwrap(), text);
    assert_eq!(r.json["truncated"], false);
    assert_eq!(r.headers["content-type"], "application/json");
    assert!(
        !r.headers.contains_key("content-length"),
        "a long envelope is streamed: {:?}",
        r.headers
    );
    // A short one is one body, as before; both through the same worker.
    let small = app.upload_id("short.txt", line.as_bytes()).await;
    let r = app.read(json!({"file_id": small})).await;
    assert_eq!(r.json["text"].as_str().unwrap(), line);
    assert!(r.headers.contains_key("content-length"));
    // Markdown and json outputs of the long text too (their text is long as well).
    let r = app
        .read(json!({"file_id": id, "max_chars": 5_000_000, "output": "markdown"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["text"].as_str().unwrap().len() >= text.len());
}
