//! The real binary on a real port: serve, upload, read, CLI read, graceful shutdown.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::common::*;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_docreader")
}

/// The envelope a `docreader read` printed, after checking it exited as `ok` says.
fn cli_envelope(out: &std::process::Output, ok: bool) -> Value {
    assert_eq!(
        out.status.success(),
        ok,
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).expect("an envelope on stdout")
}

/// One HTTP/1.1 request over a plain socket; returns (status, body).
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status: u16 = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap();
    let body = if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (
        status,
        serde_json::from_str(&body).unwrap_or(Value::String(body)),
    )
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
    out
}

#[test]
fn real_binary_serves_reads_and_stops_gracefully() {
    let mut srv = Server::start(&[], &[("DOCREADER_LOG_FORMAT", "json")]);
    let addr = srv.addr.clone();

    let (status, body) = http(&addr, "GET", "/healthz", "text/plain", b"");
    assert_eq!((status, body["status"].as_str()), (200, Some("ok")));

    let gbk = fixture("text/gbk.csv");
    let boundary = "XyZbOuNdArY";
    let mut form = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"broker.csv\"\r\n\r\n").into_bytes();
    form.extend_from_slice(&gbk);
    form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let (status, up) = http(
        &addr,
        "POST",
        "/upload",
        &format!("multipart/form-data; boundary={boundary}"),
        &form,
    );
    assert_eq!(status, 200, "{up}");
    let id = up["files"][0]["file_id"].as_str().unwrap();
    let (status, env) = http(
        &addr,
        "POST",
        "/read",
        "application/json",
        format!("{{\"file_id\":\"{id}\"}}").as_bytes(),
    );
    assert_eq!(status, 200, "{env}");
    assert_eq!(env["encoding"], "GBK");
    assert!(env["text"].as_str().unwrap().contains("贵州茅台"));

    // SIGTERM: the server finishes and exits cleanly.
    srv.terminate();
    let (status, logs) = srv.stop_logs();
    assert!(status.success(), "exit after SIGTERM: {status}");
    assert!(
        logs.contains("\"request_id\""),
        "json logs carry request ids"
    );
    // JSON logs are on stdout (a container's log stream), one JSON object a line.
    for line in logs.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["level"].is_string() && v["message"].is_string(), "{line}");
    }
    assert!(
        !logs.contains("贵州茅台"),
        "logs must never contain document text"
    );
}

#[test]
fn refuses_public_address_without_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["serve", "--addr", "0.0.0.0:0", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("DOCREADER_API_KEYS"));
}

/// A read's text that the search index's writer is still gathering when the service is
/// told to stop is written before it exits: a search after the restart finds it.
#[test]
fn a_read_just_before_a_stop_is_searchable_after_it() {
    let srv = Server::start(&[], &[]);
    let boundary = "XyZbOuNdArY";
    let form = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"birds.txt\"\r\n\r\nzebra finches and quokkas\r\n--{boundary}--\r\n"
    );
    let multipart = format!("multipart/form-data; boundary={boundary}");
    let (status, up) = http(&srv.addr, "POST", "/upload", &multipart, form.as_bytes());
    assert_eq!(status, 200, "{up}");
    let id = up["files"][0]["file_id"].as_str().unwrap().to_string();
    let read = format!("{{\"file_id\":\"{id}\"}}");
    let (status, env) = http(
        &srv.addr,
        "POST",
        "/read",
        "application/json",
        read.as_bytes(),
    );
    assert_eq!(status, 200, "{env}");
    // At once: the writer gathers a read's text for up to 25 ms before it writes it.
    let srv = srv.stop_and_restart(&[]);
    let (status, found) = http(
        &srv.addr,
        "POST",
        "/search",
        "application/json",
        br#"{"query":"quokkas"}"#,
    );
    assert_eq!(status, 200, "{found}");
    assert!(
        found.to_string().contains(&id),
        "not found after the restart: {found}"
    );
}

/// A data dir the process cannot write is one line at start naming the path and the user.
#[test]
fn an_unwritable_data_dir_is_said_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, b"x").unwrap();
    let data = file.join("data");
    let out = Command::new(bin())
        .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(&data.display().to_string()) && err.contains("uid "),
        "{err}"
    );
}

/// `docreader healthcheck` (for containers without curl): 0 when /readyz answers 200, 1
/// with a reason otherwise.
#[test]
fn healthcheck_asks_readyz() {
    let mut srv = Server::start(&[], &[]);
    let ok = Command::new(bin())
        .args(["healthcheck", "--addr", &srv.addr])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // The same port as 0.0.0.0 (a container's listen address) is asked on loopback.
    let port = srv.addr.rsplit(':').next().unwrap();
    let any = Command::new(bin())
        .args(["healthcheck", "--addr", &format!("0.0.0.0:{port}")])
        .output()
        .unwrap();
    assert!(
        any.status.success(),
        "{}",
        String::from_utf8_lossy(&any.stderr)
    );
    srv.terminate();
    let (status, logs) = srv.stop_logs();
    assert!(status.success());
    // Text logs to a pipe or file: plain lines, no terminal colour codes in them.
    assert!(logs.contains("docreader stopped"), "{logs}");
    assert!(
        !logs.contains('\u{1b}'),
        "colour codes in a log file: {logs}"
    );
    let down = Command::new(bin())
        .args(["healthcheck", "--addr", &srv.addr, "--timeout-ms", "2000"])
        .output()
        .unwrap();
    assert_eq!(down.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&down.stderr).contains("cannot reach"));
}

#[test]
fn cli_read_prints_the_same_envelope() {
    let p = repo().join("fixtures/text/tabs_crlf.py");
    let out = Command::new(bin())
        .args(["read", "--json"])
        .arg(&p)
        .args(["--offset", "1", "--limit", "2"])
        .output()
        .unwrap();
    let env = cli_envelope(&out, true);
    assert_eq!(env["text"], "\tif x:  \r\n\t\treturn 1\t# tab\r\n");
    assert_eq!(env["format"], "text");
    let out = Command::new(bin())
        .args(["read", "--json"])
        .arg(&p)
        .args(["--pages", "1"])
        .output()
        .unwrap();
    let env = cli_envelope(&out, false);
    assert_eq!(env["error"]["code"], "unsupported_option");
    // The deadline is checked where the server checks it (before, the CLI took a negative
    // one as "the default").
    for bad in ["-5", "0"] {
        let out = Command::new(bin())
            .args(["read", "--json"])
            .arg(&p)
            .args(["--deadline-ms", bad])
            .output()
            .unwrap();
        let env = cli_envelope(&out, false);
        assert_eq!(env["error"]["code"], "invalid_option", "{bad}: {env}");
    }
}

#[test]
fn missing_pdfium_is_a_clear_error_not_a_crash() {
    let pdf = repo().join("fixtures/pdf/three_pages.pdf");
    let out = Command::new(bin())
        .args(["read", "--json"])
        .arg(&pdf)
        .env("DOCREADER_PDFIUM_LIB", "/nonexistent/libpdfium.so")
        .output()
        .unwrap();
    let env = cli_envelope(&out, false);
    assert_eq!(env["error"]["code"], "unavailable", "{env}");
    assert!(env["error"]["message"].as_str().unwrap().contains("PDFium"));
    // The path it looked at is the operator's business (the log, stderr), not the client's.
    assert!(
        !env.to_string().contains("/nonexistent"),
        "a server path leaked: {env}"
    );
    assert!(env["error"]["hint"]
        .as_str()
        .unwrap()
        .contains("make native"));
    // Other formats are unaffected.
    let txt = repo().join("fixtures/text/gbk.csv");
    let out = Command::new(bin())
        .args(["read", "--json"])
        .arg(&txt)
        .env("DOCREADER_PDFIUM_LIB", "/nonexistent/libpdfium.so")
        .output()
        .unwrap();
    assert!(out.status.success());
}

#[test]
fn without_an_ocr_engine_scans_say_so() {
    let run = |rel: &str| {
        let out = Command::new(bin())
            .args(["read", "--json"])
            .arg(repo().join(rel))
            .env("DOCREADER_ORT_LIB", "/nonexistent/libonnxruntime.so")
            .env("DOCREADER_TESSERACT_LIB", "/nonexistent/libtesseract.so.5")
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).expect("an envelope")
    };
    // With PP-OCR missing but Tesseract installed, scans are read by Tesseract.
    let out = Command::new(bin())
        .args(["read", "--json"])
        .arg(repo().join("fixtures/images/hello.png"))
        .env("DOCREADER_ORT_LIB", "/nonexistent/libonnxruntime.so")
        .output()
        .unwrap();
    let env: Value = serde_json::from_slice(&out.stdout).expect("an envelope");
    assert_eq!(env["ocr_engine"], "tesseract", "{env}");
    assert!(
        env["text"].as_str().unwrap().contains("Hello OCR world"),
        "{env}"
    );
    // Every page needs OCR: a clear error with the install command.
    let env = run("fixtures/pdf/image_only.pdf");
    assert_eq!(env["error"]["code"], "no_ocr_engine", "{env}");
    assert!(env["error"]["hint"]
        .as_str()
        .unwrap()
        .contains("make native"));
    // Some pages do: their text is missing, and the envelope says which and why.
    let env = run("fixtures/pdf/scan_page.pdf");
    assert_eq!(env["skipped_pages"], serde_json::json!([2]), "{env}");
    assert_eq!(env["ocr_quality"]["quality_flag"], "no_ocr_engine");
    assert_eq!(env["pages_ocr"][0]["reason"], "no_text_layer");
    // Images need OCR.
    let env = run("fixtures/images/hello.png");
    assert_eq!(env["error"]["code"], "no_ocr_engine", "{env}");
}

/// ONNX Runtime's own builds (1.29 on) record usage events in ~/.cache/Microsoft for upload
/// to Microsoft. An OCR read must leave nothing there, nor anywhere else in the home folder.
#[test]
fn an_ocr_read_records_nothing_for_upload() {
    let native = docreader::native::find("libonnxruntime.so", Some("DOCREADER_ORT_LIB"))
        .expect("ONNX Runtime is installed (make native)");
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["read", "--json"])
        .arg(repo().join("fixtures/images/hello.png"))
        .env("HOME", home.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("ORT_DISABLE_TELEMETRY")
        .env("DOCREADER_NATIVE_DIR", native.parent().unwrap())
        .output()
        .unwrap();
    let env = cli_envelope(&out, true);
    assert_eq!(env["ocr_engine"], "ppocr", "{env}");
    assert!(env["text"].as_str().unwrap().contains("Hello"), "{env}");
    let left: Vec<_> = walk(home.path());
    assert!(left.is_empty(), "an OCR read wrote {left:?} under HOME");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.push(e.path());
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// An upload answered 200 is on disk: a server killed with SIGKILL right after the answers
/// (no graceful stop, nothing flushed on the way out) serves every one of them, byte for
/// byte, after a restart on the same data dir. A small upload (written in one piece when it
/// ends) and one larger than what is kept in memory (written as it arrives).
/// Upload `bytes` as `name` over a plain socket; the upload's record.
fn upload_plain(addr: &str, name: &str, bytes: &[u8]) -> Value {
    let boundary = "PlAiNuPlOaD";
    let mut form = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\r\n").into_bytes();
    form.extend_from_slice(bytes);
    form.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let (status, up) = http(
        addr,
        "POST",
        "/upload",
        &format!("multipart/form-data; boundary={boundary}"),
        &form,
    );
    assert_eq!(status, 200, "{up}");
    up["files"][0].clone()
}

/// Run `work` on a connection to a data dir's database (written only with its server
/// stopped).
fn on_db<T>(data: &std::path::Path, work: impl AsyncFnOnce(&mut sqlx::SqliteConnection) -> T) -> T {
    use sqlx::ConnectOptions;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut c = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(data.join("docreader.db"))
                .connect()
                .await
                .unwrap();
            work(&mut c).await
        })
}

/// The rows of a data dir's database: sha256 and the bytes kept with the row, if any.
fn rows_kept_bytes(data: &std::path::Path) -> Vec<(String, Option<Vec<u8>>)> {
    on_db(data, async |c| {
        sqlx::query_as(
            "SELECT f.sha256, u.bytes FROM files f LEFT JOIN unsynced_blobs u ON u.file_id = f.id",
        )
        .fetch_all(c)
        .await
        .unwrap()
    })
}

/// Run one SQL statement on a data dir's database (its server stopped).
fn db_exec(data: &std::path::Path, statement: &str) {
    on_db(data, async |c| {
        sqlx::query(statement).execute(c).await.unwrap();
    })
}

fn blob_file(data: &std::path::Path, sha256: &str) -> std::path::PathBuf {
    data.join("blobs").join(&sha256[..2]).join(sha256)
}

/// A small upload waits for one sync before its answer: its bytes are committed with its
/// row, and its blob file is synced after. A crash before that sync (the blob file lost,
/// or cut short, as a power cut can leave it) loses nothing: the service rewrites the blob
/// from the row when it starts, and lets go of the row's copy.
#[test]
fn small_uploads_blobs_lost_before_their_sync_are_rewritten_at_start() {
    // The blob files would wait an hour for their sync: the kill comes first.
    let srv = Server::start(&["--blob-sync-delay-ms", "3600000"], &[]);
    let csv = fixture("text/gbk.csv");
    let pdf = fixture("pdf/three_pages.pdf");
    let csv_up = upload_plain(&srv.addr, "prices.csv", &csv);
    let pdf_up = upload_plain(&srv.addr, "three.pdf", &pdf);
    let sha = |up: &Value| up["sha256"].as_str().unwrap().to_string();
    let (csv_sha, pdf_sha) = (sha(&csv_up), sha(&pdf_up));
    let srv = srv.kill_and_restart_after(&[], |data| {
        // Each row holds its upload's bytes until the blob file is synced.
        let mut rows = rows_kept_bytes(data);
        let mut want = vec![
            (csv_sha.clone(), Some(csv.clone())),
            (pdf_sha.clone(), Some(pdf.clone())),
        ];
        rows.sort();
        want.sort();
        assert!(rows == want, "the rows do not hold their uploads' bytes");
        // What a power cut can leave: one blob file gone, the other cut short.
        std::fs::remove_file(blob_file(data, &csv_sha)).unwrap();
        std::fs::write(blob_file(data, &pdf_sha), &pdf[..100]).unwrap();
    });
    let data = srv.data_dir();
    assert_eq!(std::fs::read(blob_file(&data, &csv_sha)).unwrap(), csv);
    assert_eq!(std::fs::read(blob_file(&data, &pdf_sha)).unwrap(), pdf);
    assert!(
        rows_kept_bytes(&data)
            .iter()
            .all(|(_, kept)| kept.is_none()),
        "the rows' copies are let go once the blobs are back"
    );
    let read = |id: &Value| {
        let (status, env) = http(
            &srv.addr,
            "POST",
            "/read",
            "application/json",
            format!("{{\"file_id\":{id}}}").as_bytes(),
        );
        assert_eq!(status, 200, "{env}");
        env
    };
    let env = read(&csv_up["file_id"]);
    assert_eq!(env["text"], encoding_rs::GBK.decode(&csv).0.as_ref());
    assert_eq!(read(&pdf_up["file_id"])["pages_read"], 3);
}

/// A small upload's blob file is placed before its row is committed and synced after: one
/// whose row never was committed (the service stopped in between) may be left cut short
/// with no row to rewrite it from. It must not become the bytes of the next upload of the
/// same content: a small upload finding its bytes stored compares them, and replaces a
/// file that differs.
#[test]
fn a_small_blob_left_cut_short_without_a_row_is_replaced_by_the_next_upload() {
    let srv = Server::start(&["--blob-sync-delay-ms", "3600000"], &[]);
    let csv = fixture("text/gbk.csv");
    let sha = upload_plain(&srv.addr, "prices.csv", &csv)["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let srv = srv.kill_and_restart_after(&[], |data| {
        // As if the row had never been committed, and the blob file were cut short.
        db_exec(data, "DELETE FROM files");
        std::fs::write(blob_file(data, &sha), &csv[..50]).unwrap();
    });
    assert_eq!(
        std::fs::read(blob_file(&srv.data_dir(), &sha)).unwrap(),
        &csv[..50]
    );
    let again = upload_plain(&srv.addr, "prices.csv", &csv);
    assert_eq!(
        std::fs::read(blob_file(&srv.data_dir(), &sha)).unwrap(),
        csv,
        "the cut blob was kept for the new upload"
    );
    let (status, env) = http(
        &srv.addr,
        "POST",
        "/read",
        "application/json",
        format!("{{\"file_id\":{}}}", again["file_id"]).as_bytes(),
    );
    assert_eq!(status, 200, "{env}");
    assert_eq!(env["text"], encoding_rs::GBK.decode(&csv).0.as_ref());
}

/// Small uploads' blob files are synced after their answer and the rows' copies of their
/// bytes let go (here after 300 ms).
#[test]
fn small_uploads_rows_let_go_of_their_bytes_once_the_blob_is_synced() {
    let srv = Server::start(&["--blob-sync-delay-ms", "300"], &[]);
    let csv = fixture("text/gbk.csv");
    upload_plain(&srv.addr, "prices.csv", &csv);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let rows = rows_kept_bytes(&srv.data_dir());
        assert_eq!(rows.len(), 1);
        if rows[0].1.is_none() {
            break;
        }
        assert_eq!(rows[0].1.as_deref(), Some(&csv[..]));
        assert!(
            std::time::Instant::now() < deadline,
            "the row still holds its bytes after 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Larger uploads (past 64 KiB; this one still under the 256 KiB kept in memory, the
    // next past it) are synced before their answer and never kept in a row.
    for lines in [2_000, 8_000] {
        let big: Vec<u8> = (0..lines)
            .flat_map(|i| format!("line {i} of a file too big to keep in a row\n").into_bytes())
            .collect();
        assert!(big.len() > 64 * 1024);
        upload_plain(&srv.addr, "big.txt", &big);
    }
    assert!(rows_kept_bytes(&srv.data_dir())
        .iter()
        .all(|(_, kept)| kept.is_none()));
}

/// The bytes kept until a blob file is synced live apart from the `files` rows: once let
/// go, the pages they took are reused, so the rows stay packed (kept in the row, as at
/// first, each 4 KiB page held one or two rows for good); and a row deleted before its
/// blob is synced takes its kept bytes with it.
#[test]
fn small_uploads_kept_bytes_leave_the_files_rows_packed_and_go_with_a_deleted_row() {
    let text = |i: usize| -> Vec<u8> {
        (0..80)
            .flat_map(|line| format!("file {i}, line {line}: some words to fill it\n").into_bytes())
            .collect()
    };
    assert!(text(0).len() > 2_500);
    let srv = Server::start(&["--blob-sync-delay-ms", "100"], &[]);
    for i in 0..60 {
        upload_plain(&srv.addr, &format!("notes-{i}.txt"), &text(i));
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while rows_kept_bytes(&srv.data_dir())
        .iter()
        .any(|(_, kept)| kept.is_some())
    {
        assert!(
            std::time::Instant::now() < deadline,
            "bytes still kept after 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pages: i64 = on_db(&srv.data_dir(), async |c| {
        sqlx::query_scalar("SELECT count(*) FROM dbstat WHERE name = 'files'")
            .fetch_one(c)
            .await
            .unwrap()
    });
    // 60 rows of ~200 bytes fill 3-4 pages; with the bytes in the row it took 60.
    assert!(
        pages <= 12,
        "the files table takes {pages} pages for 60 rows"
    );
    drop(srv);

    let srv = Server::start(&["--blob-sync-delay-ms", "3600000"], &[]);
    let a = upload_plain(&srv.addr, "a.txt", &text(1000));
    upload_plain(&srv.addr, "b.txt", &text(1001));
    let rows = rows_kept_bytes(&srv.data_dir());
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter().all(|(_, kept)| kept.is_some()),
        "both keep their bytes"
    );
    let (status, body) = http(
        &srv.addr,
        "DELETE",
        &format!("/files/{}", a["file_id"].as_str().unwrap()),
        "application/json",
        b"",
    );
    assert_eq!(status, 200, "{body}");
    let kept: i64 = on_db(&srv.data_dir(), async |c| {
        sqlx::query_scalar("SELECT count(*) FROM unsynced_blobs")
            .fetch_one(c)
            .await
            .unwrap()
    });
    assert_eq!(kept, 1, "the deleted upload's kept bytes are still there");
    assert_eq!(
        rows_kept_bytes(&srv.data_dir())[0].1.as_deref(),
        Some(&text(1001)[..])
    );
}

#[test]
fn uploads_answered_200_survive_a_kill_9() {
    let srv = Server::start(&[], &[]);
    let small = fixture("text/gbk.csv");
    let mut big = Vec::new();
    let mut i = 0u64;
    while big.len() < 700_000 {
        big.extend_from_slice(format!("row {i}, some words to fill the line\n").as_bytes());
        i += 1;
    }
    let mut ids = Vec::new();
    for (name, bytes) in [("small.csv", &small), ("big.txt", &big)] {
        let up = upload_plain(&srv.addr, name, bytes);
        assert_eq!(up["size"], bytes.len() as u64);
        ids.push((up["file_id"].as_str().unwrap().to_string(), bytes));
    }
    let srv = srv.kill_and_restart(&[]);
    for (id, bytes) in ids {
        let (status, env) = http(
            &srv.addr,
            "POST",
            "/read",
            "application/json",
            format!("{{\"file_id\":\"{id}\",\"max_chars\":2000000}}").as_bytes(),
        );
        assert_eq!(status, 200, "{env}");
        let want = match env["encoding"].as_str() {
            Some("GBK") => encoding_rs::GBK.decode(bytes).0.into_owned(),
            _ => String::from_utf8(bytes.clone()).unwrap(),
        };
        assert_eq!(env["text"].as_str().unwrap(), want, "{id} after kill -9");
    }
}

/// `docreader serve` with `args` that should not start: its exit status and what it said.
fn refused_start(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(bin());
    cmd.arg("serve").args(args).envs(env.iter().copied());
    if !args.contains(&"--addr") {
        cmd.args(["--addr", "127.0.0.1:0"]);
    }
    for v in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "DOCREADER_LOG_FORMAT",
    ] {
        if !env.iter().any(|(k, _)| *k == v) {
            cmd.env_remove(v);
        }
    }
    // A server that starts after all would serve forever: it gets 60 s to refuse.
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run docreader serve");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut said = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut said);
    assert!(
        status.is_some_and(|s| !s.success()),
        "{args:?} started and served: {said}"
    );
    said
}

/// Configuration that says what is wrong (issue #45 item 14): sizes with units, a closed
/// log format, a data dir that is a file, a port in use said before the database is
/// touched, S3 with no credentials.
#[test]
fn settings_say_what_is_wrong() {
    // Sizes as the README writes them: a 1 KiB cap refuses a 2 KB file, takes a 500 B one.
    let srv = Server::start(&["--max-file-bytes", "1KiB"], &[]);
    let boundary = "XyZbOuNdArY";
    let form = |n: usize| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n{}\r\n--{boundary}--\r\n",
            "a".repeat(n)
        )
    };
    let multipart = format!("multipart/form-data; boundary={boundary}");
    let (status, body) = http(
        &srv.addr,
        "POST",
        "/upload",
        &multipart,
        form(2000).as_bytes(),
    );
    assert_eq!(status, 413, "{body}");
    let (status, body) = http(
        &srv.addr,
        "POST",
        "/upload",
        &multipart,
        form(500).as_bytes(),
    );
    assert_eq!(status, 200, "{body}");
    drop(srv);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data_s = data.to_str().unwrap();
    let said = refused_start(
        &["--max-file-bytes", "100 parsecs", "--data-dir", data_s],
        &[],
    );
    assert!(said.contains("not a size"), "{said}");
    // A closed choice.
    let said = refused_start(&["--log-format", "yaml", "--data-dir", data_s], &[]);
    assert!(said.contains("text") && said.contains("json"), "{said}");
    // A data dir that is a file.
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let said = refused_start(&["--data-dir", file.to_str().unwrap()], &[]);
    assert!(said.contains("is a file, not a folder"), "{said}");
    // A port in use: said, and the data dir left as it was (no database made).
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().to_string();
    let said = refused_start(&["--addr", &port, "--data-dir", data_s], &[]);
    assert!(said.contains("cannot listen on"), "{said}");
    let made: Vec<_> = std::fs::read_dir(&data)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        !made.iter().any(|n| n.to_string_lossy().contains(".db")),
        "{made:?}"
    );
    // S3 with no credentials, at an endpoint that is not AWS: said at once.
    let said = refused_start(
        &["--data-dir", data_s],
        &[
            ("DOCREADER_BLOB_STORE", "s3://bucket"),
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
        ],
    );
    assert!(said.contains("no S3 credentials"), "{said}");
}

/// `docreader read FILE` as a command-line tool (issue #45 item 8): the whole text on
/// stdout like `pdftotext`, the same text `--json` carries; a budget that cuts says so on
/// stderr with the command line that reads on (which runs and goes on); errors as a
/// message and a hint in command-line words, exit 1; a directory is "is a directory";
/// boolean flags bare; findings summed up on stderr; `openapi` into a closed pipe ends
/// quietly.
#[test]
fn cli_read_prints_the_text_and_speaks_cli() {
    let run = |args: &[&str]| Command::new(bin()).args(args).output().unwrap();
    let text = |o: &std::process::Output| String::from_utf8(o.stdout.clone()).unwrap();
    let err = |o: &std::process::Output| String::from_utf8(o.stderr.clone()).unwrap();
    let pdf = repo().join("fixtures/pdf/three_pages.pdf");
    let pdf = pdf.to_str().unwrap();

    let whole = run(&["read", pdf]);
    assert!(whole.status.success(), "{}", err(&whole));
    assert!(err(&whole).is_empty(), "{}", err(&whole));
    let env = cli_envelope(
        &run(&["read", "--json", pdf, "--max-chars", "50000000"]),
        true,
    );
    assert_eq!(text(&whole), env["text"].as_str().unwrap());
    assert!(
        text(&whole).contains("--- Page 3 ---\nGamma page three"),
        "{}",
        text(&whole)
    );

    // Cut by a budget: said on stderr, with the command that reads on.
    let cut = run(&["read", pdf, "--max-chars", "60"]);
    assert!(cut.status.success());
    let said = err(&cut);
    assert!(said.contains("the text is cut here"), "{said}");
    let line = said
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("docreader read "))
        .unwrap_or_else(|| panic!("no command line: {said}"));
    assert!(!line.contains("--json"), "{line}");
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    let on = run(&words);
    assert!(on.status.success(), "{line}: {}", err(&on));
    assert!(
        text(&on)
            .contains("Alpha page one\nThe quick brown fox jumps over the lazy dog.\nPack my box"),
        "{line}: {}",
        text(&on)
    );

    // Errors: message and hint on stderr in command-line words, nothing on stdout.
    let locked = repo().join("tests/corpus/pdf/libreoffice-writer-password.pdf");
    let e = run(&["read", locked.to_str().unwrap()]);
    assert_eq!(e.status.code(), Some(1));
    assert!(e.stdout.is_empty());
    assert!(err(&e).contains("password-protected"), "{}", err(&e));
    assert!(
        err(&e).contains("hint: Send the document's password in the --password option"),
        "{}",
        err(&e)
    );
    let dir = run(&["read", repo().join("fixtures").to_str().unwrap()]);
    assert_eq!(dir.status.code(), Some(1));
    assert!(
        err(&dir).contains("fixtures: is a directory"),
        "{}",
        err(&dir)
    );
    let missing = run(&["read", "no-such-file.pdf"]);
    assert!(
        err(&missing).contains("hint: Check the path"),
        "{}",
        err(&missing)
    );
    assert!(!err(&missing).contains("POST /upload"), "{}", err(&missing));

    // Boolean flags bare, or with a value.
    let csv = repo().join("fixtures/text/gbk.csv");
    let csv = csv.to_str().unwrap();
    let bare = cli_envelope(&run(&["read", "--json", csv, "--profile"]), true);
    assert!(bare["profile"].is_object(), "{bare}");
    let off = cli_envelope(&run(&["read", "--json", csv, "--profile", "false"]), true);
    assert!(off.get("profile").is_none(), "{off}");

    // Hidden text summed up on stderr; the text itself as the read gives it.
    let hidden = repo().join("fixtures/pdf/hidden_text.pdf");
    let h = run(&[
        "read",
        hidden.to_str().unwrap(),
        "--pages",
        "1",
        "--ocr",
        "none",
    ]);
    assert!(
        err(&h).contains("hidden text:") && err(&h).contains("injection_pattern"),
        "{}",
        err(&h)
    );

    // `docreader openapi | head`: the pipe closed early ends it quietly.
    let mut child = Command::new(bin())
        .arg("openapi")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success(), "{done:?}");
    assert!(
        done.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
}

/// `GET path` with a Bearer key over a plain socket: (status, body).
fn get_with_key(addr: &str, path: &str, key: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, dechunk_if(&text, body))
}

fn dechunk_if(text: &str, body: &str) -> String {
    let head = text
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if head.contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_string()
    }
}

/// Wait (at most 20 s) until `GET /files` with `key` answers `status`.
fn until_files_answer(addr: &str, key: &str, status: u16) {
    let start = std::time::Instant::now();
    loop {
        let (got, _) = get_with_key(addr, "/files", key);
        if got == status {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "GET /files with a key: {got}, not {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// #45 item 15: API keys are read again from their file on SIGHUP (a bad file keeps the
/// keys in use and says why); `/metrics` counts answers by route template and status, and
/// tells the job queue and the process memory.
#[test]
fn keys_reload_on_sighup_and_metrics_say_routes_jobs_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys");
    let (old, new) = ("old-key-0123456789abcdef", "new-key-0123456789abcdef");
    std::fs::write(&file, format!("# the tenants\n{old}:alice\n")).unwrap();
    let mut srv = Server::start(&[], &[("DOCREADER_API_KEYS_FILE", file.to_str().unwrap())]);
    let hangup = |srv: &Server| {
        assert!(std::process::Command::new("kill")
            .args(["-HUP", &srv.child.id().to_string()])
            .status()
            .unwrap()
            .success());
    };
    until_files_answer(&srv.addr, old, 200);
    until_files_answer(&srv.addr, new, 401);

    // A new key for alice, the old one gone.
    std::fs::write(&file, format!("{new}:alice\n")).unwrap();
    hangup(&srv);
    until_files_answer(&srv.addr, new, 200);
    until_files_answer(&srv.addr, old, 401);

    // A file that lists nothing, then one that is malformed: the keys in use stay.
    std::fs::write(&file, "# emptied by mistake\n").unwrap();
    hangup(&srv);
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&file, "short:alice\n").unwrap();
    hangup(&srv);
    std::thread::sleep(Duration::from_millis(500));
    // An entry without its tenant is all key: the log names its place, never its text.
    let leaked = "no-colon-secret-0123456789abcdef";
    std::fs::write(&file, format!("{new}:alice\n{leaked}\n")).unwrap();
    hangup(&srv);
    std::thread::sleep(Duration::from_millis(500));
    until_files_answer(&srv.addr, new, 200);
    // The server is still there after three hangups (SIGHUP does not end it).
    assert!(srv.child.try_wait().unwrap().is_none());

    let (status, metrics) = get_with_key(&srv.addr, "/metrics", new);
    assert_eq!(status, 200, "{metrics}");
    for want in [
        "docreader_http_requests_total{method=\"GET\",route=\"/files\",status=\"200\"}",
        "docreader_http_requests_total{method=\"GET\",route=\"/files\",status=\"401\"}",
        "docreader_jobs{state=\"queued\"} 0",
        "docreader_jobs{state=\"running\"} 0",
    ] {
        assert!(metrics.contains(want), "no {want} in:\n{metrics}");
    }
    let (_, missing) = get_with_key(&srv.addr, "/no/such/route/123", new);
    let _ = missing;
    // Any token is a method to the server: one label value for all that are not HTTP's.
    for m in ["FOO1", "FOO2"] {
        let mut s = TcpStream::connect(&srv.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(
            format!(
                "{m} /files HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                srv.addr
            )
            .as_bytes(),
        )
        .unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
    }
    let (_, metrics) = get_with_key(&srv.addr, "/metrics", new);
    assert!(
        metrics.contains("route=\"unmatched\",status=\"404\"") && !metrics.contains("/no/such"),
        "{metrics}"
    );
    assert!(
        metrics.contains("method=\"other\"") && !metrics.contains("FOO"),
        "{metrics}"
    );
    let server_bytes: u64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("docreader_resident_memory_bytes{process=\"server\"} "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        server_bytes > 1 << 20,
        "server memory {server_bytes}:\n{metrics}"
    );

    srv.terminate();
    let (_, logs) = srv.stop_logs();
    assert!(logs.contains("SIGHUP: API keys reloaded keys=1"), "{logs}");
    assert!(
        logs.contains("lists no key now") && logs.contains("at least 16 characters"),
        "{logs}"
    );
    assert!(logs.contains("entry 2") && !logs.contains(leaked), "{logs}");

    // Without keys a SIGHUP is said to have nothing to reload, and does not end the service.
    let mut keyless = Server::start(&[], &[]);
    hangup(&keyless);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        keyless.child.try_wait().unwrap().is_none(),
        "SIGHUP ended a keyless server"
    );
    keyless.terminate();
    let (_, logs) = keyless.stop_logs();
    assert!(logs.contains("nothing to reload"), "{logs}");
}

/// `docreader read` holds to the caps the server reads under, from the same `DOCREADER_*`
/// variables (it used the defaults whatever they said), and says plainly when one is wrong.
#[test]
fn the_cli_reads_under_the_servers_limits() {
    let file = repo().join("fixtures/text/gbk.csv");
    let run = |env: &[(&str, &str)]| {
        let mut c = Command::new(bin());
        c.args(["read", "--json"]).arg(&file);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let ok = cli_envelope(&run(&[]), true);
    assert_eq!(ok["status"], "ok", "{ok}");
    let capped = cli_envelope(&run(&[("DOCREADER_MAX_FILE_BYTES", "10")]), false);
    assert_eq!(capped["error"]["code"], "too_large", "{capped}");
    let budget = cli_envelope(&run(&[("DOCREADER_MAX_CHARS", "20")]), true);
    assert_eq!(budget["truncated"], true, "{budget}");
    assert!(budget["next"].is_object(), "{budget}");
    let wrong = run(&[("DOCREADER_MAX_FILE_BYTES", "lots")]);
    assert!(!wrong.status.success());
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("DOCREADER_MAX_FILE_BYTES") || err.contains("max-file-bytes"),
        "{err}"
    );
}
