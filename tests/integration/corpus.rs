//! Every row of tests/corpus/MANIFEST.tsv through the service: each must hold, except
//! the known gaps listed below, each with its reason, printed on every run and required to
//! still fail (so a fix shows up here).

use serde_json::json;
use unicode_normalization::UnicodeNormalization;

use crate::common::*;

/// Rows that fail for a reason found and written down; each must still fail (so a fix
/// shows up here), and is printed on every run.
const KNOWN_GAPS: &[(&str, &str)] = &[];

struct Row {
    path: String,
    expected: String,
    notes: String,
}

fn manifest() -> Vec<Row> {
    let p = corpus_dir().join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "the shared corpus is required at {} (set DOCREADER_CORPUS): {e}",
            p.display()
        )
    });
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (cp, ce, cn) = (col("path"), col("expected"), col("notes"));
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Row {
                path: f[cp].into(),
                expected: f[ce].into(),
                notes: f.get(cn).copied().unwrap_or("").into(),
            }
        })
        .collect()
}

/// The manifest's matching rules: NFKC, no bidi controls or soft hyphens, whitespace collapsed.
pub fn normalize(s: &str, ocr: bool) -> String {
    let nfkc: String = s
        .nfkc()
        .filter(|c| !matches!(*c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{00AD}'))
        .collect();
    if ocr {
        return nfkc
            .chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(|c| c.to_lowercase())
            .collect();
    }
    nfkc.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn error_code_for(kind: &str) -> &'static [&'static str] {
    match kind {
        "encrypted" => &["encrypted"],
        "corrupt" => &["corrupt"],
        "legacy-format" => &["legacy_format"],
        "blocked" => &["blocked_type", "too_large"],
        _ => &[],
    }
}

/// Upload and read one row; `Ok(())` when it holds, `Err(why)` when it does not.
async fn check(app: &TestApp, row: &Row) -> Result<(), String> {
    let bytes =
        std::fs::read(corpus_dir().join(&row.path)).map_err(|e| format!("unreadable: {e}"))?;
    let name = row.path.rsplit('/').next().unwrap();
    let up = app.upload(name, &bytes).await;
    if up.status.is_server_error() {
        return Err(format!("upload answered {}: {}", up.status, up.json));
    }
    let got = if up.status == 200 {
        let id = up.json["files"][0]["file_id"].as_str().unwrap().to_string();
        // The manifest's rule: some OCR rows are read with a language hint.
        let mut body = json!({"file_id": id, "max_chars": 20_000_000});
        if row.notes.contains("needs kor model") {
            body["ocr_lang"] = json!("ko");
        } else if row.notes.contains("needs jpn_vert model") {
            body["ocr_lang"] = json!("ja-vert");
        }
        let r = app.read(body).await;
        if r.status.is_server_error() {
            return Err(format!("read answered {}: {}", r.status, r.json));
        }
        r
    } else {
        up
    };
    if got.json["status"] == "error" {
        for field in ["code", "message", "hint"] {
            if got.json["error"][field].as_str().is_none_or(str::is_empty) {
                return Err(format!("error without {field}: {}", got.json));
            }
        }
    }
    let (kind, snippets) = match row.expected.split_once(": ") {
        Some((k, s)) => (k, s.split(" || ").collect::<Vec<_>>()),
        None => (row.expected.as_str(), vec![]),
    };
    if let Some(err) = kind.strip_prefix("error:") {
        let code = got.json["error"]["code"].as_str().unwrap_or("(success)");
        return if error_code_for(err).contains(&code) {
            Ok(())
        } else {
            Err(format!("expected error {err}, got {code}"))
        };
    }
    if got.json["status"] != "ok" {
        return Err(format!(
            "expected {kind}, got error {}",
            got.json["error"]["code"]
        ));
    }
    let text = got.json["text"].as_str().unwrap_or_default();
    // A document's text holds no control characters but line breaks and tabs (issue #43:
    // PDFium's U+0002 line-end hyphen reached readers); the text family is byte-exact.
    if got.json["format"] != "text" {
        if let Some(c) = text
            .chars()
            .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
        {
            return Err(format!("control character U+{:04X} in the text", c as u32));
        }
    }
    // None of these ordinary documents hides instructions or characters from its reader
    // (issue #21: such a finding here is a false positive). Web pages do hide parts of
    // their interface (menus, captions shown on a click), workbooks sheets, rows and
    // columns, and decks slides; documents carry comments and pictures' descriptions: those
    // are listed as `low` hidden elements, sheets, rows, columns, slides, comments and alt
    // text — facts read from the file's structure rather than alarms — and nothing else
    // may be.
    if let Some(s) = got.json.get("security") {
        let alarming: Vec<&serde_json::Value> = s["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| {
                let structural = [
                    "hidden_element",
                    "hidden_sheet",
                    "hidden_row",
                    "hidden_column",
                    "hidden_slide",
                    "alt_text",
                    "comment",
                ]
                .iter()
                .any(|k| f["kind"] == *k);
                !(structural && f["severity"] == "low")
            })
            .collect();
        if !alarming.is_empty() {
            return Err(format!(
                "hidden-text findings on an ordinary document: {alarming:?}"
            ));
        }
    }
    match kind {
        "empty" if text.trim().is_empty() => Ok(()),
        "empty" => Err(format!("expected no text, got {} chars", text.len())),
        "text" | "ocr" => {
            let ocr = kind == "ocr";
            let hay = normalize(text, ocr);
            let missing: Vec<&str> = snippets
                .into_iter()
                .filter(|s| !hay.contains(&normalize(s, ocr)))
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("missing snippets {missing:?}"))
            }
        }
        other => Err(format!("unknown expectation kind {other}")),
    }
}

#[tokio::test]
async fn corpus_manifest_holds() {
    let rows = manifest();
    assert!(rows.len() >= 150, "the manifest lists {} rows", rows.len());
    let app = TestApp::new().await;
    let mut failures = Vec::new();
    let mut held = 0;
    for row in &rows {
        let result = check(&app, row).await;
        match (KNOWN_GAPS.iter().find(|(p, _)| *p == row.path), result) {
            (Some(_), Ok(())) => failures.push(format!(
                "{}: listed as a known gap but now holds: remove it from KNOWN_GAPS",
                row.path
            )),
            (Some((_, why)), Err(got)) => println!("corpus: KNOWN GAP {}: {why} ({got})", row.path),
            (None, Ok(())) => held += 1,
            (None, Err(why)) => failures.push(format!("{}: {why}", row.path)),
        }
    }
    println!(
        "corpus: {held} of {} rows hold; {} known gaps",
        rows.len(),
        KNOWN_GAPS.len()
    );
    assert!(
        failures.is_empty(),
        "{} corpus rows fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
