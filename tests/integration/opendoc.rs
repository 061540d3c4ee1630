//! OpenDocument text and presentations and EPUB through `POST /read` (issue #17 item 4):
//! recognised from the package, never the name; each its own `format` and mime; read with
//! the options of their kind (Word's, PowerPoint's, `chapters`), with `next` that covers
//! everything once. The fixtures and the text each must give are made by
//! fixtures/make_office_fixtures.py.

use serde_json::json;

use crate::common::*;

fn want(name: &str) -> String {
    String::from_utf8(fixture(&format!("office/{name}.txt"))).unwrap()
}

#[tokio::test]
async fn odt_is_read_as_word_is() {
    let app = TestApp::new().await;
    // Named .docx: what it is comes from its package, and it says so.
    let id = app
        .upload_id("memo.docx", &fixture("office/memo.odt"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "odt");
    assert_eq!(r.json["mime"], "application/vnd.oasis.opendocument.text");
    assert_eq!(r.json["text"], want("memo.odt"));
    assert!(!r.json["text"].as_str().unwrap().contains("DELETED"));
    assert_eq!(r.json["tables"], 1);
    // Word's options: a paragraph budget followed with `next` gives it all, once.
    let r = app.read(json!({"file_id": id, "max_paragraphs": 3})).await;
    assert_eq!(r.json["next"]["paragraph_offset"], 3, "{}", r.json);
    let (got, reads) = follow(&app, &id, json!({"max_paragraphs": 3})).await;
    assert_eq!(got, want("memo.odt"));
    assert!(reads >= 2);
    let r = app.read(json!({"file_id": id, "mode": "text"})).await;
    assert!(!r.json["text"].as_str().unwrap().contains("Apples | 12"));
    let r = app.read(json!({"file_id": id, "query": "step"})).await;
    assert_eq!(r.json["matches"], 2, "{}", r.json);
    // An option of another kind reads nothing.
    assert_error(
        &app.read(json!({"file_id": id, "pages": "1"})).await,
        400,
        "unsupported_option",
    );
}

#[tokio::test]
async fn odp_is_read_as_powerpoint_is() {
    let app = TestApp::new().await;
    let id = app.upload_id("plan.odp", &fixture("office/plan.odp")).await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "odp");
    assert_eq!(
        r.json["mime"],
        "application/vnd.oasis.opendocument.presentation"
    );
    assert_eq!(r.json["text"], want("plan.odp"));
    assert_eq!(r.json["total_slides"], 3);
    let r = app.read(json!({"file_id": id, "pages": "2"})).await;
    assert_eq!(
        r.json["text"],
        "--- Slide 2 ---\nBudget\nTeam | Cost\nBuild | 40k\n"
    );
    assert_error(
        &app.read(json!({"file_id": id, "pages": "4"})).await,
        416,
        "out_of_range",
    );
    let (got, reads) = follow(&app, &id, json!({"max_chars": 110})).await;
    assert_eq!(got, want("plan.odp"));
    assert!(reads >= 2);
    assert_error(
        &app.read(json!({"file_id": id, "max_paragraphs": 2})).await,
        400,
        "unsupported_option",
    );
}

#[tokio::test]
async fn epub_chapters_in_spine_order_with_their_titles() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("voyage.zip", &fixture("office/voyage.epub"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "epub");
    assert_eq!(r.json["mime"], "application/epub+zip");
    assert_eq!(r.json["text"], want("voyage.epub"));
    assert_eq!(r.json["total_chapters"], 3);
    assert_eq!(r.json["title"], "A Small Voyage");
    let r = app.read(json!({"file_id": id, "chapters": "2-3"})).await;
    assert_eq!(r.json["chapter_range_read"], "2-3");
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .starts_with("--- Chapter 2: 3. Home ---\n"));
    assert!(!r.json["text"].as_str().unwrap().contains("Boats"));
    // A budget stops between chapters; `next` names the rest and covers them once.
    let r = app.read(json!({"file_id": id, "max_chars": 120})).await;
    assert_eq!(r.json["truncated"], true);
    assert_eq!(r.json["next"]["chapters"], "2-3", "{}", r.json);
    let (got, _) = follow(&app, &id, json!({"max_chars": 120})).await;
    assert_eq!(got, want("voyage.epub"));
    let r = app.read(json!({"file_id": id, "query": "harbour"})).await;
    assert_eq!(r.json["matches"], 3, "{}", r.json);
    assert_error(
        &app.read(json!({"file_id": id, "chapters": "4"})).await,
        416,
        "out_of_range",
    );
    assert_error(
        &app.read(json!({"file_id": id, "pages": "1"})).await,
        400,
        "unsupported_option",
    );
    // EPUB 2: titles from the NCX, and a `mimetype` entry that is not first.
    let r = app
        .upload_and_read("parts.epub", &fixture("office/parts.epub"), json!({}))
        .await;
    assert_eq!(r.json["format"], "epub", "{}", r.json);
    assert_eq!(r.json["text"], want("parts.epub"));
}

/// Other OpenDocument kinds are documents, but not read: `unsupported_format`, not "an
/// archive".
#[tokio::test]
async fn other_opendocument_kinds_are_unsupported() {
    let app = TestApp::new().await;
    let r = app
        .upload("sketch.odg", &fixture("office/sketch.odg"))
        .await;
    assert_error(&r, 415, "unsupported_format");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("opendocument.graphics"),
        "{}",
        r.json
    );
}
