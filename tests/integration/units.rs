//! The document's units as structure (issue #42): `include_units` on every format family,
//! and a line of the document that reads like a `--- Page N ---` marker is text, not a
//! page, for pages, `next`, findings, search and Markdown.

use axum::body::Body;
use axum::http::Request;
use serde_json::{json, Value};

use crate::common::*;

/// A unit's own text, from the envelope's character offsets.
fn unit_text(env: &Value, u: &Value) -> String {
    let (s, e) = (u["start"].as_u64().unwrap(), u["end"].as_u64().unwrap());
    env["text"]
        .as_str()
        .unwrap()
        .chars()
        .skip(s as usize)
        .take((e - s) as usize)
        .collect()
}

/// The text before a unit's own text (its marker line ends there).
fn before(env: &Value, u: &Value) -> String {
    let s = u["start"].as_u64().unwrap() as usize;
    env["text"].as_str().unwrap().chars().take(s).collect()
}

fn units(r: &Resp) -> Vec<Value> {
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["units"]
        .as_array()
        .unwrap_or_else(|| panic!("no units: {}", r.json))
        .clone()
}

async fn search(app: &TestApp, q: &str, id: &str) -> Vec<Value> {
    let r = app
        .send(
            Request::post("/search")
                .header("content-type", "application/json")
                .body(Body::from(
                    json!({"query": q, "file_ids": [id]}).to_string(),
                ))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["hits"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_line_that_reads_like_a_page_marker_is_text_not_a_page() {
    let app = TestApp::new().await;
    let pdf = app
        .upload_id("minutes.pdf", &fixture("pdf/forged_marker.pdf"))
        .await;
    let r = app
        .read(json!({"file_id": pdf, "include_units": true}))
        .await;
    let u = units(&r);
    let env = &r.json;
    assert_eq!(u.len(), 1, "one page, one unit: {u:?}");
    assert_eq!(
        (u[0]["kind"].as_str(), u[0]["number"].as_u64()),
        (Some("page"), Some(1))
    );
    let page = unit_text(env, &u[0]);
    assert!(page.contains("--- Page 3 ---\nQuillfeather"), "{page}");
    assert!(page.contains("approve the payment"), "{page}");
    assert_eq!(before(env, &u[0]), "--- Page 1 ---\n");
    assert_eq!(
        (env["total_pages"].as_u64(), env["pages_read"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(env["page_range_read"], "1");
    assert!(env.get("next").is_none(), "{env}");
    // Findings: the instruction on page 1 (line 5 of it), and the look-alike marker line.
    let findings = env["security"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f["page"] == 1),
        "every finding on page 1: {findings:?}"
    );
    let kind = |k: &str| findings.iter().find(|f| f["kind"] == k).cloned();
    let inj = kind("injection_pattern").expect("the instruction is found");
    assert_eq!(inj["line"], 5, "{inj}");
    let look = kind("marker_lookalike").expect("the marker-like line is a finding");
    assert_eq!(
        (look["line"].as_u64(), look["severity"].as_str()),
        (Some(3), Some("medium"))
    );
    // Search: the word after the line is on page 1, line 4.
    let h = search(&app, "Quillfeather", &pdf).await;
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(
        (h[0]["page"].as_u64(), h[0]["line"].as_u64()),
        (Some(1), Some(4)),
        "{h:?}"
    );
    // A budget that cuts inside the page: `next` reads page 1 again whole, never a page 3.
    let r = app
        .read(json!({"file_id": pdf, "max_chars": 60, "include_units": true}))
        .await;
    assert_eq!(r.json["next"]["pages"], "1", "{}", r.json);
    assert_eq!(units(&r).len(), 1);
    // Markdown: one page, the line kept as the document's text.
    let r = app
        .read(json!({"file_id": pdf, "output": "markdown", "include_units": true}))
        .await;
    let u = units(&r);
    assert_eq!(u.len(), 1, "{u:?}");
    assert!(unit_text(&r.json, &u[0]).contains("--- Page 3 ---"));
    assert!(r.json.get("next").is_none());

    // A text file: one document unit, no page anywhere.
    let txt = app
        .upload_id("minutes.txt", &fixture("text/forged_marker.txt"))
        .await;
    let r = app
        .read(json!({"file_id": txt, "include_units": true}))
        .await;
    let u = units(&r);
    assert_eq!(u.len(), 1);
    assert_eq!(u[0]["kind"], "document");
    assert!(u[0].get("number").is_none());
    assert_eq!(unit_text(&r.json, &u[0]), r.json["text"].as_str().unwrap());
    let findings = r.json["security"]["findings"].as_array().unwrap();
    assert!(
        findings.iter().all(|f| f.get("page").is_none()),
        "{findings:?}"
    );
    let inj = findings
        .iter()
        .find(|f| f["kind"] == "injection_pattern")
        .unwrap();
    assert_eq!(inj["line"], 5);
    let h = search(&app, "Quillfeather", &txt).await;
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(h[0].get("page").is_none(), "{h:?}");
    assert_eq!(h[0]["line"], 4);
}

/// What each family's units are: (file, kind, whether the marker line names the unit).
#[tokio::test]
async fn every_format_family_gives_its_units() {
    let app = TestApp::new().await;
    let cases: &[(&str, Vec<u8>, &str, usize)] = &[
        (
            "notes.txt",
            fixture("text/forged_marker.txt"),
            "document",
            1,
        ),
        ("hidden.html", fixture("html/hidden.html"), "document", 1),
        ("three.pdf", fixture("pdf/three_pages.pdf"), "page", 3),
        ("report.docx", fixture("office/report.docx"), "document", 1),
        ("deck.pptx", fixture("office/deck.pptx"), "slide", 0),
        ("memo.odt", fixture("office/memo.odt"), "document", 1),
        ("plan.odp", fixture("office/plan.odp"), "slide", 0),
        ("contract.rtf", fixture("rtf/contract.rtf"), "document", 1),
        ("voyage.epub", fixture("office/voyage.epub"), "chapter", 0),
        ("book.xlsx", fixture("office/book.xlsx"), "sheet", 0),
        ("prices.ods", fixture("office/prices.ods"), "sheet", 0),
        (
            "mail.eml",
            std::fs::read(corpus_dir().join("eml/testRFC822-multipart.eml")).unwrap(),
            "document",
            1,
        ),
        ("hello.png", fixture("images/hello.png"), "document", 1),
    ];
    for (name, bytes, kind, count) in cases {
        let r = app
            .upload_and_read(name, bytes, json!({"include_units": true}))
            .await;
        let u = units(&r);
        let env = &r.json;
        let text = strip_truncation(env["text"].as_str().unwrap());
        let chars = text.chars().count() as u64;
        assert!(!u.is_empty(), "{name}: no units");
        if *count > 0 {
            assert_eq!(u.len(), *count, "{name}: {u:?}");
        }
        let mut last = 0;
        for unit in &u {
            assert_eq!(unit["kind"], *kind, "{name}: {unit}");
            let (s, e) = (
                unit["start"].as_u64().unwrap(),
                unit["end"].as_u64().unwrap(),
            );
            assert!(
                last <= s && s <= e && e <= chars,
                "{name}: {unit} in {chars} chars"
            );
            last = e;
            // Each unit's marker line stands just before its text and names it.
            let head = before(env, unit);
            let marker = head
                .trim_end_matches('\n')
                .rsplit('\n')
                .next()
                .unwrap_or("");
            match *kind {
                "page" | "slide" => {
                    let n = unit["number"].as_u64().unwrap();
                    let label = if *kind == "page" { "Page" } else { "Slide" };
                    assert!(
                        marker.starts_with(&format!("--- {label} {n}")),
                        "{name}: {marker}"
                    );
                }
                "chapter" => {
                    let n = unit["number"].as_u64().unwrap();
                    assert!(
                        marker.starts_with(&format!("--- Chapter {n}")),
                        "{name}: {marker}"
                    );
                }
                "sheet" => {
                    let sheet = unit["name"].as_str().unwrap();
                    assert!(
                        marker.starts_with(&format!("--- Sheet: {sheet} ("))
                            || marker.starts_with(&format!("--- Chart sheet: {sheet}")),
                        "{name}: {marker}"
                    );
                }
                _ => {
                    assert_eq!((s, e), (0, chars), "{name}: the document is the whole text");
                }
            }
        }
        // Without the option, no units.
        let plain = app.upload_and_read(name, bytes, json!({})).await;
        assert!(plain.json.get("units").is_none(), "{name}");
        // Markdown: the same units.
        let md = app
            .upload_and_read(
                name,
                bytes,
                json!({"include_units": true, "output": "markdown"}),
            )
            .await;
        let same = |v: &[Value]| {
            v.iter()
                .map(|u| (u["kind"].clone(), u["number"].clone(), u["name"].clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(same(&units(&md)), same(&u), "{name}: markdown units");
    }
    // A cut read: the units of what was shown, none past the cut.
    let r = app
        .upload_and_read(
            "thirty.pdf",
            &fixture("pdf/thirty_pages.pdf"),
            json!({"include_units": true, "max_chars": 7000}),
        )
        .await;
    let u = units(&r);
    assert_eq!(
        u.len() as u64,
        r.json["pages_read"].as_u64().unwrap(),
        "{u:?}"
    );
    assert!(r.json["next"]["pages"].is_string());
    let chars = strip_truncation(r.json["text"].as_str().unwrap())
        .chars()
        .count() as u64;
    assert!(u.last().unwrap()["end"].as_u64().unwrap() <= chars);
}
