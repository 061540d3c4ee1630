//! `/mcp` driven by the official MCP Python SDK against the real binary (issue #19): the
//! checks are in tests/mcp/client.py; the SDK and its dependencies come pinned from
//! tests/mcp/requirements.txt, in a venv scripts/pyenv.py builds once outside the repo.

use crate::common::*;

/// The Python with the official MCP SDK (pinned in tests/mcp/requirements.txt, built once
/// outside the repository by scripts/pyenv.py).
fn sdk_python() -> String {
    tool_env(
        "scripts/pyenv.py",
        &[
            "--name",
            "venv-mcp",
            "--requirements",
            "tests/mcp/requirements.txt",
        ],
    )
}

/// Run one of tests/mcp's SDK scripts against a server, stop the server, and fail with the
/// script's output and the server log's tail unless the script passed; the server's log.
fn run_sdk_script(mut srv: Server, script: &str, args: &[&std::ffi::OsStr]) -> String {
    let out = std::process::Command::new(sdk_python())
        .arg(repo().join("tests/mcp").join(script))
        .arg(format!("http://{}", srv.addr))
        .args(args)
        .output()
        .expect("run the MCP client");
    srv.terminate();
    let (_, logs) = srv.stop_logs();
    assert!(
        out.status.success(),
        "{script} failed:\n{}{}\nserver log:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        logs.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    logs
}

#[test]
fn an_mcp_client_lists_reads_and_pages_through_documents() {
    let (alice, bob) = ("alice-key-0123456789", "bob-key-0123456789ab");
    let srv = Server::start(
        &[],
        &[("DOCREADER_API_KEYS", &format!("{alice}:alice,{bob}:bob"))],
    );
    let pdf = repo().join("fixtures/pdf/thirty_short.pdf");
    let logs = run_sdk_script(
        srv,
        "client.py",
        &[alice.as_ref(), bob.as_ref(), pdf.as_os_str()],
    );
    // An MCP call logs what a REST call does (#45 item 15): its read, if any, and the
    // answer; not the SDK's session chatter (three more lines a call before).
    let mut per_request = std::collections::HashMap::<&str, Vec<&str>>::new();
    for line in logs.lines().filter(|l| l.contains("path=/mcp")) {
        if let Some(id) = line
            .split("request_id=")
            .nth(1)
            .and_then(|r| r.split(' ').next())
        {
            per_request.entry(id).or_default().push(line);
        }
    }
    assert!(
        per_request.len() > 10,
        "MCP requests were not logged:\n{logs}"
    );
    for lines in per_request.values() {
        // A one-shot read (the file in the call) also logs its file stored, as
        // `POST /read` with a file does.
        let stored = lines
            .iter()
            .filter(|l| l.contains("stored file_id"))
            .count();
        assert!(
            lines.len() <= 2 + stored.min(1) && lines.iter().all(|l| !l.contains("rmcp")),
            "one MCP call logged:\n{}",
            lines.join("\n")
        );
    }
}

/// Long reads over MCP (#45 item 3): with a server MCP deadline too short for one OCR page,
/// read_document answers in time (partial, or a timeout naming start_read), and the
/// start_read/read_result pair reads the same scan whole as a job; the checks are in
/// tests/mcp/long_reads.py.
#[test]
fn an_mcp_client_outlasts_its_timeout_with_a_read_job() {
    let key = "carol-key-0123456789";
    let srv = Server::start(
        &[],
        &[
            ("DOCREADER_API_KEYS", &format!("{key}:carol")),
            ("DOCREADER_MCP_DEADLINE_MS", "1"),
        ],
    );
    let scan = repo().join("fixtures/pdf/scan_page.pdf");
    run_sdk_script(srv, "long_reads.py", &[key.as_ref(), scan.as_os_str()]);
}

/// `docreader mcp` over stdio, started by the official SDK's stdio client as a desktop
/// host starts it (issue #45 item 5): local files by `path` under the allowed root, the
/// same tools as `/mcp`; the checks are in tests/mcp/stdio_client.py.
#[test]
fn an_mcp_host_reads_local_files_over_stdio() {
    let root = repo();
    let python = sdk_python();
    let data = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(python)
        .arg(root.join("tests/mcp/stdio_client.py"))
        .arg(env!("CARGO_BIN_EXE_docreader"))
        .arg(data.path())
        .arg(root.join("fixtures"))
        .output()
        .expect("run the MCP stdio client");
    assert!(
        out.status.success(),
        "MCP stdio client failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
}

/// Over stdio, stdout is the protocol: with JSON logs, nothing but JSON-RPC messages reaches
/// it — not the server's log lines, nor a worker's (a worker logs a read that fails with a
/// cause: here a spreadsheet calamine panics on, read by path).
#[test]
fn mcp_over_stdio_keeps_logs_off_stdout() {
    use std::io::{BufRead, Write};
    let root = repo();
    let data = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docreader"))
        .args(["mcp", "--allowed-roots"])
        .arg(root.join("fixtures"))
        .env("DOCREADER_DATA_DIR", data.path())
        .env("DOCREADER_LOG_FORMAT", "json")
        .env("DOCREADER_WORKERS", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("docreader mcp");
    let mut stdin = child.stdin.take().unwrap();
    let bad = root.join("fixtures/fuzz/xls_formula_length_past_record.xls");
    for msg in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "read_document", "arguments": {"path": bad}}}),
    ] {
        writeln!(stdin, "{msg}").unwrap();
    }
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answered = false;
    while let Some(Ok(line)) = lines.next() {
        let v: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("not JSON on the protocol's stream: {line}"));
        assert_eq!(
            v["jsonrpc"], "2.0",
            "not a JSON-RPC message on stdout: {line}"
        );
        if v["id"] == 2 {
            assert_eq!(v["result"]["isError"], true, "{v}");
            answered = true;
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(answered, "no answer to the read");
}

/// Behind a gateway the `Host` is the public name: refused unless listed
/// (`DOCREADER_MCP_ALLOWED_HOSTS`), as rmcp guards against DNS rebinding; listed, answered.
#[tokio::test]
async fn mcp_answers_only_the_hosts_it_is_told() {
    use axum::body::Body;
    use axum::http::Request;
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let request = || {
        Request::post("/mcp")
            .header("host", "docs.example.com")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(Body::from(init.to_string()))
            .unwrap()
    };
    let app = TestApp::new().await;
    let r = app.send(request()).await;
    assert!(r.status.is_client_error(), "{}: {}", r.status, r.json);
    // With keys, the host is /mcp's own check: refused in JSON, naming the setting (it was
    // rmcp's plain-text "Forbidden: Host header is not allowed").
    let mut keyed = TestApp::with(|a| a.api_keys = Some("key-aaaaaaaaaaaaaaaa:alice".into())).await;
    keyed.token = Some("key-aaaaaaaaaaaaaaaa".into());
    let r = keyed.send(request()).await;
    assert_eq!(r.status, 403, "{}", r.json);
    assert_eq!(r.json["error"]["code"], "forbidden", "{}", r.json);
    assert!(
        r.json["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("DOCREADER_MCP_ALLOWED_HOSTS"),
        "{}",
        r.json
    );
    let app = TestApp::with(|a| a.mcp_allowed_hosts = Some("docs.example.com".into())).await;
    let r = app.send(request()).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["result"]["serverInfo"]["name"], "docreader",
        "{}",
        r.json
    );
}

#[tokio::test]
async fn malformed_mcp_messages_get_json_rpc_errors() {
    use axum::body::Body;
    use axum::http::Request;
    // Attack pass of 2026-12-07: rmcp answered these with plain text and 415.
    let app = TestApp::new().await;
    let post = |ct: &str, body: &str| {
        Request::post("/mcp")
            .header("host", "127.0.0.1")
            .header("content-type", ct)
            .header("accept", "application/json, text/event-stream")
            .body(Body::from(body.to_string()))
            .unwrap()
    };
    let r = app.send(post("application/json", "{not json")).await;
    assert_eq!(r.status, 400, "{}", r.json);
    assert_eq!(r.json["jsonrpc"], "2.0", "{}", r.json);
    assert_eq!(r.json["error"]["code"], -32700, "{}", r.json);
    let r = app
        .send(post(
            "text/plain",
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ))
        .await;
    assert_eq!(r.status, 415, "{}", r.json);
    assert_eq!(r.json["error"]["code"], -32600, "{}", r.json);
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("application/json"),
        "{}",
        r.json
    );
    // A well-formed message with parameters on its type is still served.
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = app
        .send(post("application/json; charset=utf-8", &init.to_string()))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
}
