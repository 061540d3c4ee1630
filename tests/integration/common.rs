//! Helpers: a fresh service on a temp data dir, multipart uploads, JSON requests.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use docreader::config::ServeArgs;
use docreader::{app, AppState};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

pub struct TestApp {
    pub router: Router,
    pub dir: tempfile::TempDir,
    pub token: Option<String>,
}

pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub json: Value,
    /// The body as sent (for answers that are not JSON, such as page images).
    pub body: Vec<u8>,
}

impl TestApp {
    pub async fn new() -> Self {
        Self::with(|_| {}).await
    }

    pub async fn with(configure: impl FnOnce(&mut ServeArgs)) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut args = ServeArgs::with_data_dir(dir.path().join("data"));
        configure(&mut args);
        let state = AppState::new(&args).await.expect("state");
        Self {
            router: app(state),
            dir,
            token: None,
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Files under the data dir's blob store.
    pub fn stored_blobs(&self) -> usize {
        walk(&self.data_dir().join("blobs"))
    }

    /// Files left in the temp dirs (reads' names in `tmp`, uploads' files in `tmp/in`),
    /// but for the empty spares the store makes ahead of need (`spare-…` in `tmp/in`).
    pub fn temp_files(&self) -> usize {
        let tmp = self.data_dir().join("tmp");
        let incoming = tmp.join(docreader::store::INCOMING);
        // One look at each folder: spares are being made meanwhile.
        let left = |dir: &std::path::Path| {
            std::fs::read_dir(dir)
                .map(|rd| {
                    rd.flatten()
                        .filter(|e| e.path() != incoming)
                        .filter(|e| match e.metadata() {
                            // Gone since the look (taken by an upload, or removed): not left.
                            Err(_) => false,
                            Ok(m) => {
                                !(e.file_name().to_string_lossy().starts_with("spare-")
                                    && m.is_file()
                                    && m.len() == 0)
                            }
                        })
                        .count()
                })
                .unwrap_or(0)
        };
        left(&tmp) + left(&incoming)
    }

    pub async fn send(&self, mut req: Request<Body>) -> Resp {
        if let Some(t) = &self.token {
            if !req.headers().contains_key("authorization") {
                req.headers_mut()
                    .insert("authorization", format!("Bearer {t}").parse().unwrap());
            }
        }
        self.router_send(req).await
    }

    /// Send a request as it is (no key added).
    pub async fn router_send(&self, req: Request<Body>) -> Resp {
        let resp = self.router.clone().oneshot(req).await.expect("infallible");
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        let json = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        Resp {
            status,
            headers,
            json,
            body: bytes.to_vec(),
        }
    }

    pub async fn upload_many(&self, files: &[(&str, &[u8])]) -> Resp {
        let boundary = "----docreader-test-boundary-7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        for (name, bytes) in files {
            body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        let req = Request::post("/upload")
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(body))
            .unwrap();
        self.send(req).await
    }

    pub async fn upload(&self, name: &str, bytes: &[u8]) -> Resp {
        self.upload_many(&[(name, bytes)]).await
    }

    /// Upload and return the file id, failing the test when the upload is refused.
    pub async fn upload_id(&self, name: &str, bytes: &[u8]) -> String {
        let r = self.upload(name, bytes).await;
        assert_eq!(
            r.status,
            StatusCode::OK,
            "upload of {name} failed: {}",
            r.json
        );
        r.json["files"][0]["file_id"]
            .as_str()
            .expect("file_id")
            .to_string()
    }

    pub async fn read(&self, body: Value) -> Resp {
        let req = Request::post("/read")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        self.send(req).await
    }

    /// Upload then read with options; returns the read's response.
    pub async fn upload_and_read(&self, name: &str, bytes: &[u8], opts: Value) -> Resp {
        let id = self.upload_id(name, bytes).await;
        let mut body = json!({ "file_id": id });
        if let Value::Object(o) = opts {
            body.as_object_mut().unwrap().extend(o);
        }
        self.read(body).await
    }

    pub async fn get(&self, uri: &str) -> Resp {
        self.send(Request::get(uri).body(Body::empty()).unwrap())
            .await
    }

    pub async fn delete(&self, uri: &str) -> Resp {
        self.send(Request::delete(uri).body(Body::empty()).unwrap())
            .await
    }
}

fn walk(p: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| {
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                1
            }
        })
        .sum()
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run one of the scripts that build a pinned tool environment once, outside the repo
/// (`scripts/pyenv.py`, `scripts/npmenv.py`), and return what it prints: the environment's
/// path. Paths in `args` are relative to the repository.
pub fn tool_env(script: &str, args: &[&str]) -> String {
    let root = repo();
    let out = std::process::Command::new("python3")
        .arg(root.join(script))
        .args(args)
        .current_dir(&root)
        .output()
        .unwrap_or_else(|e| panic!("python3 runs {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} could not build its environment: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Every block of an `output: "json"` answer's document, unit after unit, that `keep`
/// keeps.
pub fn document_blocks(json: &Value, keep: impl Fn(&Value) -> bool) -> Vec<&Value> {
    json["document"]["units"]
        .as_array()
        .expect("a document's units")
        .iter()
        .flat_map(|u| u["blocks"].as_array().expect("a unit's blocks"))
        .filter(|b| keep(b))
        .collect()
}

pub fn fixture(rel: &str) -> Vec<u8> {
    let p = repo().join("fixtures").join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("missing fixture {}: {e}", p.display()))
}

/// The corpus: `DOCREADER_CORPUS`, or the repository's own copy, `tests/corpus` (real files
/// from other projects' test suites; sources and licences in its README).
pub fn corpus_dir() -> PathBuf {
    std::env::var_os("DOCREADER_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("tests/corpus"))
}

/// Assert an error envelope: status, code, and that message and hint are present.
pub fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(
        r.status.as_u16(),
        status,
        "expected {status} {code}, got {}",
        r.json
    );
    assert_eq!(r.json["status"], "error", "{}", r.json);
    assert_eq!(r.json["error"]["code"], code, "{}", r.json);
    assert!(
        r.json["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        r.json
    );
    assert!(
        r.json["error"]["hint"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{}",
        r.json
    );
}

/// A copy of a real executable of this machine (the `true` binary).
pub fn real_executable() -> Vec<u8> {
    for p in ["/usr/bin/true", "/bin/true"] {
        if let Ok(b) = std::fs::read(p) {
            return b;
        }
    }
    panic!("no /usr/bin/true on this machine to use as a real ELF executable");
}

/// Strip the closing truncation line a cut text carries.
pub fn strip_truncation(text: &str) -> &str {
    match text.rfind("\n... (truncated, total ") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// The real binary serving on a free loopback port (killed when dropped). Its log is
/// collected; `stop_logs` waits for the process and returns what it logged.
pub struct Server {
    pub child: std::process::Child,
    pub addr: String,
    logs: Option<std::thread::JoinHandle<String>>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// `docreader serve` on 127.0.0.1:0 with a fresh data dir, plus `flags` and `env`.
    /// Logs are read where the server writes them: stderr, or stdout for JSON logs.
    pub fn start(flags: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_in(tempfile::tempdir().unwrap(), flags, env)
    }

    /// SIGKILL (no chance to finish anything), then a new server on the same data dir.
    pub fn kill_and_restart(self, flags: &[&str]) -> Self {
        self.kill_and_restart_after(flags, |_| {})
    }

    /// SIGKILL, then `between` on the data dir (what a crash may also have done to it),
    /// then a new server on it.
    pub fn kill_and_restart_after(
        mut self,
        flags: &[&str],
        between: impl FnOnce(&std::path::Path),
    ) -> Self {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        between(&self.data_dir());
        let dir = tempfile::TempDir::new().unwrap();
        let old = std::mem::replace(&mut self._dir, dir);
        Self::start_in(old, flags, &[])
    }

    /// SIGTERM (a graceful stop), then a new server on the same data dir.
    pub fn stop_and_restart(mut self, flags: &[&str]) -> Self {
        self.terminate();
        let (status, logs) = self.stop_logs();
        assert!(status.success(), "exit after SIGTERM: {status}: {logs}");
        let dir = tempfile::TempDir::new().unwrap();
        let old = std::mem::replace(&mut self._dir, dir);
        Self::start_in(old, flags, &[])
    }

    /// The server's data dir.
    pub fn data_dir(&self) -> PathBuf {
        self._dir.path().join("data")
    }

    fn start_in(dir: tempfile::TempDir, flags: &[&str], env: &[(&str, &str)]) -> Self {
        use std::io::{BufRead, Read};
        let json = env.contains(&("DOCREADER_LOG_FORMAT", "json"));
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docreader"))
            .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path().join("data"))
            .args(flags)
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start docreader serve");
        let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        // The stream that is not the log is drained too, so the server never blocks on it.
        let (logs, other): (Box<dyn Read + Send>, Box<dyn Read + Send>) = if json {
            (Box::new(out), Box::new(err))
        } else {
            (Box::new(err), Box::new(out))
        };
        let mut logs = std::io::BufReader::new(logs);
        let mut addr = String::new();
        let mut line = String::new();
        while logs.read_line(&mut line).unwrap() > 0 {
            if json {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"));
                if v["message"] == "docreader listening" {
                    addr = v["addr"].as_str().unwrap().to_string();
                    break;
                }
            } else if let Some(rest) = line.split("listening on http://").nth(1) {
                addr = rest.split_whitespace().next().unwrap().to_string();
                break;
            }
            line.clear();
        }
        assert!(!addr.is_empty(), "the server did not say where it listens");
        let logs = std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = logs.read_to_string(&mut rest);
            let mut other = other;
            let mut ignored = Vec::new();
            let _ = other.read_to_end(&mut ignored);
            rest
        });
        Self {
            child,
            addr,
            logs: Some(logs),
            _dir: dir,
        }
    }

    /// Send SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().to_string();
        assert!(std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
    }

    /// Wait for the process to end; its exit status and everything it logged.
    pub fn stop_logs(&mut self) -> (std::process::ExitStatus, String) {
        let status = self.child.wait().unwrap();
        let logs = self
            .logs
            .take()
            .map(|l| l.join().unwrap())
            .unwrap_or_default();
        (status, logs)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Follow `next` until it is absent; the pieces must rebuild the selection exactly.
pub async fn follow(app: &TestApp, id: &str, first: Value) -> (String, usize) {
    let mut body = first.clone();
    body["file_id"] = json!(id);
    let mut out = String::new();
    let mut reads = 0;
    loop {
        reads += 1;
        assert!(reads < 10_000, "next never ends");
        let r = app.read(body.clone()).await;
        assert_eq!(r.status, 200, "{} for {body}", r.json);
        let text = r.json["text"].as_str().unwrap();
        out.push_str(if r.json["truncated"] == true {
            strip_truncation(text)
        } else {
            text
        });
        let Some(next) = r.json.get("next") else {
            break;
        };
        // The budgets are the caller's to keep; everything else the read needs (its output,
        // how hidden text is treated, raw, the sheets after) must come from `next`.
        let mut b = json!({"file_id": id});
        for budget in ["max_chars", "max_tokens", "max_paragraphs", "max_cells"] {
            if let Some(v) = first.get(budget) {
                b[budget] = v.clone();
            }
        }
        b.as_object_mut()
            .unwrap()
            .extend(next.as_object().unwrap().clone());
        body = b;
    }
    (out, reads)
}

/// A PDF of `objs` (numbered from 1, the first the catalog), with its xref table and trailer
/// written out: for hand-made PDFs whose structure a test is about.
pub fn pdf_of_objects(objs: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{o}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for o in offsets {
        out.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// An OpenDocument package built in a test: `mimetype` first and stored, a manifest, and a
/// `content.xml` whose `office:body` holds `body` (the office, text, table, drawing,
/// presentation, SVG and XLink namespaces declared).
pub fn odf_package(mime: &str, body: &str) -> Vec<u8> {
    use std::io::Write;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = zip::write::SimpleFileOptions::default();
    z.start_file("mimetype", stored).unwrap();
    z.write_all(mime.as_bytes()).unwrap();
    z.start_file("META-INF/manifest.xml", deflated).unwrap();
    z.write_all(format!(r#"<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" manifest:media-type="{mime}"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>"#).as_bytes())
        .unwrap();
    z.start_file("content.xml", deflated).unwrap();
    z.write_all(format!(r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2"><office:body>{body}</office:body></office:document-content>"#).as_bytes())
        .unwrap();
    z.finish().unwrap().into_inner()
}
