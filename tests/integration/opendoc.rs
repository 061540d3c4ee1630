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

/// Issue #43 item 6: what a book states about itself (its package's Dublin Core) is in
/// `metadata`: every creator, the subjects, description, language, publisher, date and
/// identifier. An EPUB 3 package made as epub writers make it.
#[tokio::test]
async fn epub_metadata_is_reported() {
    use std::io::Write;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("mimetype", stored).unwrap();
    z.write_all(b"application/epub+zip").unwrap();
    let parts: [(&str, &str); 3] = [
        (
            "META-INF/container.xml",
            r#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#,
        ),
        (
            "OEBPS/content.opf",
            r#"<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:isbn:9780000000002</dc:identifier>
    <dc:title>Notes on Rivers</dc:title>
    <dc:creator>Ada Field</dc:creator>
    <dc:creator>Ben Stone</dc:creator>
    <dc:subject>Hydrology</dc:subject>
    <dc:subject>Travel</dc:subject>
    <dc:description>A short book about rivers.</dc:description>
    <dc:language>en-GB</dc:language>
    <dc:publisher>Riverside Press</dc:publisher>
    <dc:date>2024-05-01</dc:date>
    <meta property="dcterms:modified">2024-05-02T00:00:00Z</meta>
  </metadata>
  <manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>
  <spine><itemref idref="c1"/></spine>
</package>"#,
        ),
        (
            "OEBPS/c1.xhtml",
            r#"<html xmlns="http://www.w3.org/1999/xhtml"><head><title>One</title></head><body><h1>Sources</h1><p>Rivers begin in hills.</p></body></html>"#,
        ),
    ];
    for (name, body) in parts {
        z.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(body.as_bytes()).unwrap();
    }
    let book = z.finish().unwrap().into_inner();
    let app = TestApp::new().await;
    let r = app.upload_and_read("rivers.epub", &book, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .contains("Rivers begin in hills."));
    assert_eq!(
        r.json["metadata"],
        json!({
            "title": "Notes on Rivers",
            "author": "Ada Field; Ben Stone",
            "subject": "Hydrology, Travel",
            "description": "A short book about rivers.",
            "language": "en-GB",
            "publisher": "Riverside Press",
            "identifier": "urn:isbn:9780000000002",
            "created": "2024-05-01"
        })
    );
}
