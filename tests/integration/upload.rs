//! Upload: content decides the type, blocked types leave nothing behind, names never
//! steer paths, dedup by sha256, tenants, CORS, request ids.

use std::process::Command;

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use crate::common::*;

/// A real zip (stored entries) built per the PKWARE format.
pub fn make_zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let crc = crc32(data);
        let off = out.len() as u32;
        let n = name.len() as u16;
        let sz = data.len() as u32;
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&sz.to_le_bytes());
        out.extend_from_slice(&sz.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&sz.to_le_bytes());
        central.extend_from_slice(&sz.to_le_bytes());
        central.extend_from_slice(&n.to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&off.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_off = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06\0\0\0\0");
    let k = entries.len() as u16;
    out.extend_from_slice(&k.to_le_bytes());
    out.extend_from_slice(&k.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_off.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for b in data {
        crc ^= *b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Run a compressor from the machine on some bytes (a real archive, made here).
fn compress(cmd: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{cmd} is needed to make a real archive for this test: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

fn make_tar() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello tar\n").unwrap();
    let out = Command::new("tar")
        .args(["-cf", "-", "-C"])
        .arg(dir.path())
        .arg("a.txt")
        .output()
        .expect("tar");
    assert!(out.status.success());
    out.stdout
}

#[tokio::test]
async fn upload_returns_metadata_decided_by_content() {
    let app = TestApp::new().await;
    let r = app.upload("prices.csv", b"a,b\n1,2\n").await;
    assert_eq!(r.status, 200, "{}", r.json);
    let f = &r.json["files"][0];
    assert_eq!(r.json["status"], "ok");
    assert_eq!(f["name"], "prices.csv");
    assert_eq!(f["size"], 8);
    assert_eq!(f["format"], "text");
    assert_eq!(f["mime"], "text/csv");
    assert_eq!(f["sha256"].as_str().unwrap().len(), 64);
    assert!(f["file_id"].as_str().unwrap().starts_with("f_"));
    assert!(f["created_at"].as_str().unwrap().ends_with('Z'));
}

#[tokio::test]
async fn elf_named_pdf_is_blocked_and_nothing_is_kept() {
    let app = TestApp::new().await;
    let r = app.upload("report.pdf", &real_executable()).await;
    assert_error(&r, 415, "blocked_type");
    assert!(
        r.json["error"]["message"].as_str().unwrap().contains("ELF"),
        "{}",
        r.json
    );
    assert_eq!(app.stored_blobs(), 0);
    assert_eq!(app.temp_files(), 0);
    assert_eq!(app.get("/files").await.json["files"], json!([]));
}

#[tokio::test]
async fn other_executables_are_blocked() {
    let app = TestApp::new().await;
    let mut pe = b"MZ".to_vec();
    pe.resize(0x80, 0);
    pe[60] = 0x40;
    pe[0x40..0x44].copy_from_slice(b"PE\0\0");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("setup.txt", pe),
        ("lib.dylib", vec![0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1]),
        ("Main.class", vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52]),
        ("module.wasm", b"\0asm\x01\0\0\0".to_vec()),
    ];
    for (name, bytes) in cases {
        let r = app.upload(name, &bytes).await;
        assert_error(&r, 415, "blocked_type");
    }
    assert_eq!(app.stored_blobs(), 0);
}

#[tokio::test]
async fn archives_are_blocked_with_extract_hint() {
    let app = TestApp::new().await;
    let payload = b"some document text\n".repeat(50);
    let archives: Vec<(&str, Vec<u8>)> = vec![
        ("notes.zip", make_zip(&[("a.txt", b"hello")])),
        ("notes.docx", make_zip(&[("a.txt", b"hello")])),
        ("a.tar", make_tar()),
        ("a.gz", compress("gzip", &["-c"], &payload)),
        ("a.txt", compress("bzip2", &["-c"], &payload)),
        ("a.xz", compress("xz", &["-c"], &payload)),
    ];
    for (name, bytes) in archives {
        let r = app.upload(name, &bytes).await;
        assert_error(&r, 415, "blocked_type");
        assert!(
            r.json["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("Extract"),
            "{name}: {}",
            r.json
        );
        assert!(
            r.json["error"]["message"]
                .as_str()
                .unwrap()
                .contains("archive"),
            "{name}: {}",
            r.json
        );
    }
    assert_eq!(app.stored_blobs(), 0);
    assert_eq!(app.temp_files(), 0);
}

#[tokio::test]
async fn office_packages_are_accepted_by_their_parts() {
    let app = TestApp::new().await;
    let docx = make_zip(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", b"<w:document/>"),
    ]);
    let r = app.upload("contract.bin", &docx).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["files"][0]["format"], "docx");
    let xlsx = make_zip(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("xl/workbook.xml", b"<workbook/>"),
    ]);
    assert_eq!(
        app.upload("book", &xlsx).await.json["files"][0]["format"],
        "excel"
    );
    let pptx = make_zip(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("ppt/presentation.xml", b"<p/>"),
    ]);
    assert_eq!(
        app.upload("deck", &pptx).await.json["files"][0]["format"],
        "pptx"
    );
}

#[tokio::test]
async fn scripts_with_shebang_are_text() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read("deploy.sh", b"#!/bin/sh\necho hi\n", json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], "#!/bin/sh\necho hi\n");
}

#[tokio::test]
async fn client_names_never_steer_paths() {
    let app = TestApp::new().await;
    let r = app.upload("../../etc/passwd", b"root:x:0:0\n").await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["files"][0]["name"], "passwd");
    // The only file written is the blob, under its hash.
    let sha = r.json["files"][0]["sha256"].as_str().unwrap().to_string();
    assert!(app
        .data_dir()
        .join("blobs")
        .join(&sha[..2])
        .join(&sha)
        .is_file());
    assert_eq!(app.stored_blobs(), 1);
    assert!(!app.dir.path().join("etc").exists());
    assert!(!app.data_dir().join("etc").exists());
}

#[tokio::test]
async fn same_bytes_stored_once_with_distinct_ids() {
    let app = TestApp::new().await;
    let a = app.upload("a.txt", b"same bytes\n").await.json;
    let b = app.upload("b.txt", b"same bytes\n").await.json;
    let (ia, ib) = (&a["files"][0]["file_id"], &b["files"][0]["file_id"]);
    assert_ne!(ia, ib);
    assert_eq!(a["files"][0]["sha256"], b["files"][0]["sha256"]);
    assert_eq!(app.stored_blobs(), 1);
    // Deleting one upload keeps the bytes for the other.
    let d = app
        .delete(&format!("/files/{}", ia.as_str().unwrap()))
        .await;
    assert_eq!(d.status, 200, "{}", d.json);
    assert_eq!(app.stored_blobs(), 1);
    let r = app.read(json!({"file_id": ib})).await;
    assert_eq!(r.json["text"], "same bytes\n");
    // Deleting the last removes them.
    assert_eq!(
        app.delete(&format!("/files/{}", ib.as_str().unwrap()))
            .await
            .status,
        200
    );
    assert_eq!(app.stored_blobs(), 0);
    assert_error(
        &app.delete(&format!("/files/{}", ib.as_str().unwrap()))
            .await,
        404,
        "not_found",
    );
    assert_error(&app.read(json!({"file_id": ib})).await, 404, "not_found");
}

#[tokio::test]
async fn files_list_and_show() {
    let app = TestApp::new().await;
    let id = app.upload_id("one.md", b"# One\n").await;
    app.upload_id("two.md", b"# Two\n").await;
    let list = app.get("/files").await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json["files"].as_array().unwrap().len(), 2);
    let one = app.get(&format!("/files/{id}")).await;
    assert_eq!(one.json["file"]["name"], "one.md");
    assert_eq!(one.json["file"]["mime"], "text/markdown");
    assert_error(&app.get("/files/f_nope").await, 404, "not_found");
    assert_error(&app.get("/files?limit=0").await, 400, "invalid_option");
}

#[tokio::test]
async fn several_files_in_one_request_and_all_or_nothing() {
    let app = TestApp::new().await;
    let ok = app
        .upload_many(&[("a.txt", b"alpha\n"), ("b.json", b"{\"b\": 1}\n")])
        .await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    assert_eq!(ok.json["files"].as_array().unwrap().len(), 2);
    assert_eq!(ok.json["files"][1]["mime"], "application/json");
    let exe = real_executable();
    let bad = app
        .upload_many(&[("c.txt", b"gamma\n"), ("d.pdf", &exe)])
        .await;
    assert_error(&bad, 415, "blocked_type");
    assert!(
        bad.json["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("d.pdf"),
        "{}",
        bad.json
    );
    // c.txt of the failed request was rolled back.
    assert_eq!(
        app.get("/files").await.json["files"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(app.stored_blobs(), 2);
}

#[tokio::test]
async fn size_limits_refuse_and_keep_nothing() {
    let app = TestApp::with(|a| {
        a.limits.max_file_bytes = 1000;
        a.limits.max_request_bytes = 1500;
    })
    .await;
    let big = vec![b'a'; 1001];
    assert_error(&app.upload("big.txt", &big).await, 413, "too_large");
    let half = vec![b'b'; 800];
    let r = app.upload_many(&[("x.txt", &half), ("y.txt", &half)]).await;
    assert_error(&r, 413, "too_large");
    assert_eq!(app.stored_blobs(), 0);
    assert_eq!(app.temp_files(), 0);
    assert_eq!(app.upload("ok.txt", &half).await.status, 200);
}

#[tokio::test]
async fn empty_upload_and_bad_multipart() {
    let app = TestApp::new().await;
    assert_error(&app.upload_many(&[]).await, 400, "invalid_request");
    let req = Request::post("/upload")
        .header("content-type", "application/json")
        .body(Body::from("{}"))
        .unwrap();
    assert_error(&app.send(req).await, 400, "invalid_request");
    let req = Request::post("/upload")
        .header("content-type", "multipart/form-data; boundary=xyz")
        .body(Body::from("--xyz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nunterminated"))
        .unwrap();
    assert_error(&app.send(req).await, 400, "invalid_request");
    assert_eq!(app.temp_files(), 0);
}

#[tokio::test]
async fn tenants_see_only_their_files() {
    let keys = "key-aaaaaaaaaaaaaaaa:alice,key-bbbbbbbbbbbbbbbb:bob";
    let mut app = TestApp::with(|a| a.api_keys = Some(keys.into())).await;
    assert_error(&app.upload("a.txt", b"secret\n").await, 401, "unauthorized");
    app.token = Some("key-aaaaaaaaaaaaaaaa".into());
    let id = app.upload_id("a.txt", b"alice's secret\n").await;
    assert_eq!(app.read(json!({"file_id": id})).await.status, 200);
    app.token = Some("key-bbbbbbbbbbbbbbbb".into());
    assert_error(&app.read(json!({"file_id": id})).await, 404, "not_found");
    assert_error(&app.get(&format!("/files/{id}")).await, 404, "not_found");
    assert_error(&app.delete(&format!("/files/{id}")).await, 404, "not_found");
    assert_eq!(app.get("/files").await.json["files"], json!([]));
    app.token = Some("wrong-key-0000000000".into());
    assert_error(&app.get("/files").await, 401, "unauthorized");
    // Probes need no key.
    app.token = None;
    assert_eq!(app.get("/healthz").await.status, 200);
}

#[tokio::test]
async fn cors_is_closed_unless_origins_are_listed() {
    let preflight = || {
        Request::builder()
            .method("OPTIONS")
            .uri("/read")
            .header("origin", "https://app.example")
            .header("access-control-request-method", "POST")
            .body(Body::empty())
            .unwrap()
    };
    let closed = TestApp::new().await;
    let r = closed.send(preflight()).await;
    assert!(r.headers.get("access-control-allow-origin").is_none());
    // Listed with a trailing slash, as people copy it from the address bar: the same origin.
    let open = TestApp::with(|a| a.cors_origins = Some("https://app.example/".into())).await;
    let r = open.send(preflight()).await;
    assert_eq!(
        r.headers.get("access-control-allow-origin").unwrap(),
        "https://app.example"
    );
    // Issue #45 item 9: the browser flows' methods and headers, and what they read back.
    let put = Request::builder()
        .method("OPTIONS")
        .uri("/uploads/abc")
        .header("origin", "https://app.example")
        .header("access-control-request-method", "PUT")
        .header(
            "access-control-request-headers",
            "x-document-password, prefer",
        )
        .body(Body::empty())
        .unwrap();
    let r = open.send(put).await;
    let allowed = |h: &str| {
        r.headers
            .get(h)
            .map(|v| v.to_str().unwrap().to_ascii_lowercase())
            .unwrap_or_default()
    };
    assert!(
        allowed("access-control-allow-methods").contains("put"),
        "{:?}",
        r.headers
    );
    assert!(
        allowed("access-control-allow-headers").contains("x-document-password"),
        "{:?}",
        r.headers
    );
    assert!(
        allowed("access-control-allow-headers").contains("prefer"),
        "{:?}",
        r.headers
    );
    let get = Request::get("/healthz")
        .header("origin", "https://app.example")
        .body(Body::empty())
        .unwrap();
    let r = open.send(get).await;
    let exposed = r.headers["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for h in ["location", "retry-after", "etag", "x-request-id"] {
        assert!(exposed.contains(h), "{exposed}");
    }
    // `*`: any origin (it panicked at the first request before).
    let any = TestApp::with(|a| a.cors_origins = Some("*".into())).await;
    let r = any.send(preflight()).await;
    assert_eq!(r.headers.get("access-control-allow-origin").unwrap(), "*");
    // Not an origin: refused at start with the setting named, never a panic later.
    for bad in ["app.example", "https://app.example/path", "ftp://x.example"] {
        let dir = tempfile::tempdir().unwrap();
        let mut args = docreader::config::ServeArgs::with_data_dir(dir.path().join("data"));
        args.cors_origins = Some(bad.into());
        let err = docreader::AppState::new(&args).await.err().expect(bad);
        assert!(err.contains("DOCREADER_CORS_ORIGINS"), "{err}");
    }
}

#[tokio::test]
async fn request_ids_are_carried_into_errors() {
    let app = TestApp::new().await;
    let req = Request::post("/read")
        .header("content-type", "application/json")
        .header("x-request-id", "gw-1234")
        .body(Body::from("{\"file_id\": \"f_missing\"}"))
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.headers.get("x-request-id").unwrap(), "gw-1234");
    assert_eq!(r.json["error"]["request_id"], "gw-1234");
    let r = app.get("/healthz").await;
    assert!(r
        .headers
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("req_"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn uploads_and_deletes_at_once_keep_every_row_and_blob_they_need() {
    // Rows are written in groups by one task and bytes are locked by their hash (issue #23):
    // 40 uploads at once (four sets of bytes, ten copies each), then deletes racing reads of
    // the rest and new uploads of the deleted bytes, must leave every kept upload listed and
    // readable, and each blob stored exactly once while an upload references it.
    let app = std::sync::Arc::new(TestApp::new().await);
    let bodies: Vec<Vec<u8>> = (0..4)
        .map(|i| format!("shared text number {i}\n").into_bytes())
        .collect();
    let uploads = (0..40).map(|n| {
        let (app, body) = (app.clone(), bodies[n % 4].clone());
        tokio::spawn(async move { app.upload_id(&format!("t{n}.txt"), &body).await })
    });
    let mut ids = Vec::new();
    for u in uploads {
        ids.push(u.await.unwrap());
    }
    // Delete every upload of bytes 0 and half of those of bytes 1, all at once, while the
    // other uploads are read.
    let (gone, kept): (Vec<_>, Vec<_>) = ids
        .iter()
        .enumerate()
        .partition(|(n, _)| n % 4 == 0 || n % 8 == 1);
    let deletes = gone.iter().map(|(_, id)| {
        let (app, id) = (app.clone(), id.to_string());
        tokio::spawn(async move { app.delete(&format!("/files/{id}")).await.status })
    });
    let reads = kept.iter().map(|(n, id)| {
        let (app, id, n) = (app.clone(), id.to_string(), *n);
        tokio::spawn(async move { (n, app.read(json!({"file_id": id})).await) })
    });
    // And bytes 0 uploaded again meanwhile: a delete must not take them from under these.
    let again = (0..8).map(|n| {
        let (app, body) = (app.clone(), bodies[0].clone());
        tokio::spawn(async move { app.upload_id(&format!("again{n}.txt"), &body).await })
    });
    let again: Vec<_> = again.collect();
    for d in deletes.collect::<Vec<_>>() {
        assert_eq!(d.await.unwrap(), 200);
    }
    let mut fresh = Vec::new();
    for a in again {
        fresh.push(a.await.unwrap());
    }
    for id in &fresh {
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert!(r.json["text"].as_str().unwrap().contains("number 0"));
    }
    for r in reads.collect::<Vec<_>>() {
        let (n, r) = r.await.unwrap();
        assert_eq!(r.status, 200, "{}", r.json);
        assert!(r.json["text"]
            .as_str()
            .unwrap()
            .contains(&format!("number {}", n % 4)));
    }
    let listed = app.get("/files?limit=1000").await.json["files"].clone();
    let mut listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file_id"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = kept.iter().map(|(_, id)| id.as_str()).collect();
    want.extend(fresh.iter().map(String::as_str));
    listed.sort();
    want.sort();
    assert_eq!(listed, want);
    for (_, id) in &gone {
        assert_error(&app.read(json!({"file_id": id})).await, 404, "not_found");
    }
    // Each of the four sets of bytes is still referenced: stored once.
    assert_eq!(app.stored_blobs(), 4);
}

/// A client that goes away mid-upload leaves nothing behind: its request is dropped with
/// the body half received, and the temp file goes with it — a partly written one, or the
/// empty spare the store had made ahead for it (spares stay at most eight).
#[tokio::test]
async fn uploads_dropped_midway_leave_no_temp_files() {
    use futures_util::StreamExt;
    let app = TestApp::new().await;
    assert_eq!(app.upload("a.txt", b"hello").await.status, 200);
    let tmp = app.data_dir().join("tmp").join(docreader::store::INCOMING);
    let all = || std::fs::read_dir(&tmp).unwrap().count();
    // 20 small ones (still in memory when dropped), then one of 600 KB (partly on disk).
    for size in std::iter::repeat_n(10usize, 20).chain([600_000]) {
        let head = "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"\r\nContent-Type: text/plain\r\n\r\n";
        let first = [head.as_bytes(), &vec![b'a'; size]].concat();
        let body = futures_util::stream::once(async move {
            Ok::<_, std::io::Error>(axum::body::Bytes::from(first))
        })
        .chain(futures_util::stream::pending());
        let req = Request::post("/upload")
            .header("content-type", "multipart/form-data; boundary=B")
            .body(Body::from_stream(body))
            .unwrap();
        let sent =
            tokio::time::timeout(std::time::Duration::from_millis(300), app.router_send(req)).await;
        assert!(sent.is_err(), "the upload waits for the rest of its body");
    }
    // Removal happens off the runtime, just after the drop.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while (app.temp_files() > 0 || all() > 8) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(app.temp_files(), 0, "a partly written upload is removed");
    assert!(
        all() <= 8,
        "{} files in tmp: dropped uploads' spares are removed",
        all()
    );
    // And uploads go on as before.
    assert_eq!(app.upload("b.txt", b"world").await.status, 200);
    assert_eq!(app.temp_files(), 0);
}
