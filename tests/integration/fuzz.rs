//! What the fuzz harness (examples/fuzz.rs, `make fuzz`) found, fixed, and kept: every file
//! in fixtures/fuzz/ is read through the service with extractors in a worker under the
//! memory cap the harness uses, and must come back as an envelope or a typed refusal,
//! never a crash, an overrun, a hit memory cap or an internal error.

use serde_json::json;

use crate::common::{repo, TestApp};

#[tokio::test]
async fn every_fuzz_finding_reads_or_is_refused_plainly() {
    let app = TestApp::with(|a| {
        a.workers = 1;
        a.worker_bin = Some(env!("CARGO_BIN_EXE_docreader").into());
        a.worker_memory_mb = 2048;
    })
    .await;
    let dir = repo().join("fixtures/fuzz");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/fuzz")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".md"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "fixtures/fuzz holds the findings");
    for name in names {
        let bytes = std::fs::read(dir.join(&name)).unwrap();
        let up = app.upload(&name, &bytes).await;
        if up.status != 200 {
            assert!(
                !up.status.is_server_error(),
                "{name}: upload {} {}",
                up.status,
                up.json
            );
            continue;
        }
        let id = up.json["files"][0]["file_id"].as_str().unwrap().to_string();
        let r = app.read(json!({"file_id": id, "deadline_ms": 60000})).await;
        let code = r.json["error"]["code"].as_str().unwrap_or("");
        let message = r.json["error"]["message"].as_str().unwrap_or("");
        assert!(
            r.status == 200
                || (!r.status.is_server_error() && !message.contains("memory than a worker")),
            "{name}: {} {code}: {message}",
            r.status
        );
        // A typed `timeout` in time (OCR stopping at the deadline on a loaded machine) is
        // an answer; the executor's own overrun is not.
        assert!(
            !matches!(code, "extraction_crashed" | "internal")
                && !message.starts_with("the read did not finish"),
            "{name}: {code}: {message}"
        );
    }
}
