//! `max_tokens` (issue #19): the estimate is an upper bound of real tokenizers. Texts read
//! from real files (English prose and Latin filler, code, Chinese, Korean, Russian, Arabic)
//! are counted by OpenAI's cl100k_base and o200k_base (npm `gpt-tokenizer`, its encodings
//! shipped in the package, pinned in tests/tokens and installed once by
//! scripts/npmenv.py); every budgeted read must hold its budget by both, and the estimate
//! of every whole text must be at least both counts.

use serde_json::{json, Value};

use crate::common::*;

/// Real token counts of `texts`: (cl100k, o200k) each.
fn real_counts(texts: &[String]) -> Vec<(u64, u64)> {
    let root = repo();
    let dir = tool_env(
        "scripts/npmenv.py",
        &["--name", "npm-tokens", "--dir", "tests/tokens"],
    );
    let mut child = std::process::Command::new("node")
        .arg(root.join("tests/tokens/count.cjs"))
        .env("NODE_PATH", format!("{dir}/node_modules"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("node runs (Debian: apt-get install nodejs)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(texts).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "count.cjs failed");
    let counts: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    counts
        .iter()
        .map(|c| (c["cl100k"].as_u64().unwrap(), c["o200k"].as_u64().unwrap()))
        .collect()
}

const SAMPLES: &[(&str, &str)] = &[
    ("English", "pdf/testPDFVarious.pdf"),
    ("English (Latin filler)", "pdf/multicolumn.pdf"),
    ("code", "json/openapi_spec.json"),
    ("code", "xml/plant_catalog.xml"),
    ("Chinese", "text/sample-chinese.txt"),
    ("Chinese", "xml/cnblog.org.xml"),
    ("Chinese + English", "msg/testMSG_chinese.msg"),
    ("Korean", "text/EUC-KR_ude_euc2.txt"),
    ("Russian", "text/sample-russian.txt"),
    ("Arabic", "text/sample-arabic-1.txt"),
];

#[tokio::test]
async fn token_budgets_hold_by_real_tokenizers() {
    let app = TestApp::new().await;
    let mut texts = Vec::new();
    // (label, budget or None for a whole read, our estimate)
    let mut reads: Vec<(String, Option<u64>, u64)> = Vec::new();
    let code_py = std::fs::read(repo().join("fixtures/pdfgen.py")).unwrap();
    let mut files: Vec<(String, String, Vec<u8>)> = SAMPLES
        .iter()
        .map(|(label, rel)| {
            let bytes = std::fs::read(corpus_dir().join(rel)).unwrap();
            (
                label.to_string(),
                rel.rsplit('/').next().unwrap().to_string(),
                bytes,
            )
        })
        .collect();
    files.push(("code".into(), "pdfgen.py".into(), code_py));
    for (label, name, bytes) in &files {
        let id = app.upload_id(name, bytes).await;
        let whole = app
            .read(json!({"file_id": id, "max_chars": 10_000_000}))
            .await;
        assert_eq!(whole.status, 200, "{name}: {}", whole.json);
        let text = whole.json["text"].as_str().unwrap().to_string();
        reads.push((
            format!("{label}: {name}"),
            None,
            docreader::tokens::estimate(&text),
        ));
        texts.push(text);
        for budget in [50u64, 150, 600] {
            let r = app.read(json!({"file_id": id, "max_tokens": budget})).await;
            assert_eq!(r.status, 200, "{name} max_tokens {budget}: {}", r.json);
            let text = r.json["text"].as_str().unwrap().to_string();
            let est = r.json["tokens"]
                .as_u64()
                .expect("a read by max_tokens says its tokens");
            assert!(
                est <= budget,
                "{name}: estimate {est} over max_tokens {budget}"
            );
            assert_eq!(est, docreader::tokens::estimate(&text));
            if let Some(next) = r.json.get("next") {
                assert!(
                    next.get("max_chars").is_none(),
                    "{name}: next mixes budgets: {next}"
                );
                assert!(
                    next["max_tokens"].as_u64().is_some(),
                    "{name}: next carries the budget: {next}"
                );
            }
            reads.push((format!("{label}: {name}"), Some(budget), est));
            texts.push(text);
        }
    }
    let counts = real_counts(&texts);
    let mut table = String::from("sample | tokens (cl100k / o200k) | estimate | ratio\n");
    for ((label, budget, est), (cl, o2)) in reads.iter().zip(&counts) {
        let real = (*cl).max(*o2);
        assert!(
            *est >= real,
            "{label} (budget {budget:?}): estimate {est} under the real count {real} (cl100k {cl}, o200k {o2})"
        );
        if let Some(b) = budget {
            assert!(
                real <= *b,
                "{label}: {real} real tokens over max_tokens {b}"
            );
        } else {
            table.push_str(&format!(
                "{label} | {cl} / {o2} | {est} | {:.2}\n",
                *est as f64 / real.max(1) as f64
            ));
        }
    }
    println!("{table}");
}

/// `max_tokens` with `max_chars` is refused; following `next` by tokens rebuilds the text.
#[tokio::test]
async fn max_tokens_pages_through_a_document() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_short.pdf"))
        .await;
    let r = app
        .read(json!({"file_id": id, "max_tokens": 100, "max_chars": 100}))
        .await;
    assert_error(&r, 400, "invalid_option");
    let r = app.read(json!({"file_id": id, "max_tokens": 0})).await;
    assert_error(&r, 400, "invalid_option");
    let whole = app
        .read(json!({"file_id": id, "max_chars": 10_000_000}))
        .await;
    let (text, reads) = follow(&app, &id, json!({"max_tokens": 120})).await;
    assert!(reads > 3, "{reads} reads");
    assert_eq!(text, whole.json["text"].as_str().unwrap());
}
