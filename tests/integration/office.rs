//! Word, PowerPoint, Excel and e-mail through `POST /read`: content in reading order,
//! each option and its errors, `next` cursors, bombs, and attachments stored as uploads.

use std::io::Write;

use serde_json::{json, Value};

use crate::common::*;

async fn read_office(app: &TestApp, name: &str, opts: Value) -> Resp {
    app.upload_and_read(name, &fixture(&format!("office/{name}")), opts)
        .await
}

fn corpus(rel: &str) -> Vec<u8> {
    std::fs::read(corpus_dir().join(rel)).unwrap_or_else(|e| panic!("corpus {rel}: {e}"))
}

#[tokio::test]
async fn docx_body_in_reading_order_then_side_stories() {
    let app = TestApp::new().await;
    let r = read_office(&app, "report.docx", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let expected = "Contract between Alpha and Beta\n• First bullet\n• Second bullet\n1. Step one\n  a. Sub step\n2. Step two\n\
--- Table 1 ---\nName | Amount\nLine one line two | 1,200.50\ninner a | inner b | nested\n\
After the table\nSigned by the needle holder\n--- Headers ---\nConfidential header\n--- Footers ---\nPage footer text\n\
--- Footnotes ---\nA footnote about the table\n--- Comments ---\nReviewer comment here\n";
    assert_eq!(r.json["text"], expected);
    assert_eq!(r.json["format"], "docx");
    assert_eq!(r.json["tables"], 1);
    assert_eq!(r.json["paragraphs"], 8);
    // mode text leaves tables out.
    let r = read_office(&app, "report.docx", json!({"mode": "text"})).await;
    assert!(!r.json["text"].as_str().unwrap().contains("Table 1"));
    assert_error(
        &read_office(&app, "report.docx", json!({"mode": "html"})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &read_office(&app, "report.docx", json!({"pages": "1"})).await,
        400,
        "unsupported_option",
    );
    let r = read_office(
        &app,
        "report.docx",
        json!({"query": "needle", "context_lines": 0}),
    )
    .await;
    assert_eq!(r.json["matches"], 1);
    assert_eq!(r.json["text"], "12:Signed by the needle holder\n");
}

#[tokio::test]
async fn docx_paragraph_budget_and_next_cover_everything_once() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("long.docx", &fixture("office/long.docx"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.json["truncated"], true);
    assert_eq!(r.json["next"], json!({"paragraph_offset": 200}));
    assert_eq!(
        r.json["text"]
            .as_str()
            .unwrap()
            .matches("Paragraph number")
            .count(),
        200
    );
    let mut body = json!({"file_id": id, "max_paragraphs": 170, "max_chars": 5000});
    let mut seen = String::new();
    for _ in 0..100 {
        let r = app.read(body.clone()).await;
        assert_eq!(r.status, 200, "{}", r.json);
        seen.push_str(strip_truncation(r.json["text"].as_str().unwrap()));
        let Some(next) = r.json.get("next") else {
            break;
        };
        body = json!({"file_id": id, "max_paragraphs": 170, "max_chars": 5000, "paragraph_offset": next["paragraph_offset"]});
    }
    for i in 0..450 {
        assert_eq!(
            seen.matches(&format!("Paragraph number {i} of")).count(),
            1,
            "paragraph {i}"
        );
    }
    assert_error(
        &app.read(json!({"file_id": id, "paragraph_offset": 450}))
            .await,
        416,
        "out_of_range",
    );
}

#[tokio::test]
async fn pptx_slides_in_presentation_order_with_notes() {
    let app = TestApp::new().await;
    let r = read_office(&app, "deck.pptx", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["text"],
        "--- Slide 1 ---\nOpening slide\nGrouped shape text\n[Notes]\nSpeaker note for the opening\n--- Slide 2 ---\nMiddle slide\nQ1 | Q2\n10 | 20\n--- Slide 3 ---\nClosing slide\n"
    );
    assert_eq!(r.json["total_slides"], 3);
    assert_eq!(r.json["slides"], 3);
    let r = read_office(&app, "deck.pptx", json!({"pages": "2"})).await;
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .starts_with("--- Slide 2 ---\nMiddle slide"));
    let r = read_office(&app, "deck.pptx", json!({"page_range": "4-9"})).await;
    assert_error(&r, 416, "out_of_range");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("presentation has 3 slides"));
    assert_error(
        &read_office(&app, "deck.pptx", json!({"pages": "3-1"})).await,
        400,
        "inverted_range",
    );
    assert_error(
        &read_office(&app, "deck.pptx", json!({"offset": 1})).await,
        400,
        "unsupported_option",
    );
    // next names the slides still to read.
    let r = read_office(&app, "deck.pptx", json!({"max_chars": 90})).await;
    assert_eq!(r.json["next"]["pages"], "2-3");
}

#[tokio::test]
async fn xlsx_sheet_list_first_and_cells_as_shown() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("book.xlsx", &fixture("office/book.xlsx"))
        .await;
    let r = app.read(json!({"file_id": id, "max_cells": 100000})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(text.starts_with("## Sheets\n- Data (52 rows × 4 cols): full\n- Hidden (1 rows × 1 cols), hidden: full\n- Phantom (3 rows × 2 cols): full\n--- Sheet: Data"), "{text}");
    assert!(
        text.contains("Id\tValue\tLabel\tDate\n1\t1.5\titem\t2024-01-03\n"),
        "{text}"
    );
    assert!(
        text.contains("\n0.3\t1912.5\n"),
        "0.1+0.2 and cached formula values: {text}"
    );
    assert!(
        text.contains("--- Sheet: Phantom (3 rows × 2 cols) ---\nphantom header\n\n\t42\n"),
        "{text}"
    );
    assert_eq!(
        r.json["sheets"][0],
        json!({"name": "Data", "rows": 52, "cols": 4, "read": "full", "hidden": false})
    );
    assert_eq!(r.json["sheets"][1]["hidden"], true);
    assert!(r.json.get("next").is_none());
}

#[tokio::test]
async fn xlsx_budget_sheet_and_range_options() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("book.xlsx", &fixture("office/book.xlsx"))
        .await;
    let r = app.read(json!({"file_id": id, "max_cells": 20})).await;
    assert_eq!(r.json["sheets"][0]["read"], "partial");
    assert_eq!(r.json["sheets"][0]["last_cell"], "D5");
    assert_eq!(r.json["sheets"][1]["read"], "not_read");
    assert_eq!(
        r.json["next"],
        json!({"sheet": "Data", "range": "A6:D52", "sheets_after": true})
    );
    let r = app
        .read(json!({"file_id": id, "sheet": "Data", "range": "A6:D52", "max_cells": 1000}))
        .await;
    assert_eq!(r.json["sheets"][0]["read"], "full", "{}", r.json);
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .contains("\n5\t7.5\titem\t2024-01-07\n"));
    assert!(r.json.get("next").is_none(), "{}", r.json);
    let r = app.read(json!({"file_id": id, "sheet": "Phantom"})).await;
    assert_eq!(r.json["sheets"][2]["read"], "full");
    assert_eq!(r.json["sheets"][0]["read"], "not_selected");
    let r = app.read(json!({"file_id": id, "sheet": "Nope"})).await;
    assert_error(&r, 400, "invalid_option");
    assert!(r.json["error"]["hint"]
        .as_str()
        .unwrap()
        .contains("\"Phantom\""));
    assert_error(
        &app.read(json!({"file_id": id, "range": "A1:B2"})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "sheet": "Data", "range": "A1:B"}))
            .await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "sheet": "Data", "range": "C3:A1"}))
            .await,
        400,
        "inverted_range",
    );
    assert_error(
        &app.read(json!({"file_id": id, "max_cells": 0})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "offset": 3})).await,
        400,
        "unsupported_option",
    );
}

#[tokio::test]
async fn xlsx_following_next_reads_every_row_once() {
    let app = TestApp::new().await;
    // book.xlsx: rows shorter than a sheet heading; log.xlsx: rows longer than one.
    for (file, marker, total) in [("book.xlsx", "\titem\t", 50), ("log.xlsx", "\tentry ", 30)] {
        let id = app
            .upload_id(file, &fixture(&format!("office/{file}")))
            .await;
        // Cell budgets and character budgets (small ones stop on rows the reader did not keep).
        for budget in [
            json!({"max_cells": 37}),
            json!({"max_cells": 13, "max_chars": 400}),
            json!({"max_cells": 100000, "max_chars": 300}),
            json!({"max_cells": 100000, "max_chars": 700}),
            json!({"max_cells": 100000, "max_chars": 1500}),
        ] {
            let with = |extra: Option<&Value>| {
                let mut b = json!({"file_id": id});
                let o = b.as_object_mut().unwrap();
                o.extend(budget.as_object().unwrap().clone());
                if let Some(e) = extra {
                    o.extend(e.as_object().unwrap().clone());
                }
                b
            };
            let mut body = with(None);
            let mut rows = Vec::new();
            for _ in 0..200 {
                let r = app.read(body.clone()).await;
                assert_eq!(r.status, 200, "{file} {budget}: {}", r.json);
                let text = strip_truncation(r.json["text"].as_str().unwrap());
                rows.extend(
                    text.lines()
                        .filter(|l| l.contains(marker))
                        .map(str::to_string),
                );
                let Some(next) = r.json.get("next") else {
                    break;
                };
                body = with(Some(next));
            }
            assert_eq!(rows.len(), total, "{file} {budget}: {rows:?}");
            for i in 1..=total {
                assert_eq!(
                    rows.iter()
                        .filter(|l| l.starts_with(&format!("{i}\t")))
                        .count(),
                    1,
                    "{file} {budget}: row {i}"
                );
            }
        }
    }
}

/// A zip whose document.xml inflates to 1.5 GB of 'A' (a few MB on disk).
fn zip_bomb() -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(9))
        .large_file(true);
    z.start_file("[Content_Types].xml", opts).unwrap();
    z.write_all(b"<Types/>").unwrap();
    z.start_file("word/document.xml", opts).unwrap();
    z.write_all(b"<w:document><w:body><w:p><w:r><w:t>").unwrap();
    let chunk = vec![b'A'; 1 << 20];
    for _ in 0..1536 {
        z.write_all(&chunk).unwrap();
    }
    z.write_all(b"</w:t></w:r></w:p></w:body></w:document>")
        .unwrap();
    z.finish().unwrap();
    buf.into_inner()
}

#[tokio::test]
async fn bombs_fail_their_own_read_and_nothing_else() {
    let app = TestApp::new().await;
    let bomb = zip_bomb();
    assert!(
        bomb.len() < 10 << 20,
        "the bomb is small on disk: {}",
        bomb.len()
    );
    let r = app.upload_and_read("bomb.docx", &bomb, json!({})).await;
    assert_error(&r, 413, "too_large");
    let r = read_office(&app, "billion_laughs.docx", json!({})).await;
    assert_error(&r, 413, "too_large");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("entit"));
    for (name, code) in [
        ("xlsx/poc-xmlbomb.xlsx", "too_large"),
        ("xlsx/poc-shared-strings.xlsx", "too_large"),
    ] {
        let r = app
            .upload_and_read(name.rsplit('/').next().unwrap(), &corpus(name), json!({}))
            .await;
        assert_error(&r, 413, code);
    }
    // The service is fine afterwards.
    assert_eq!(
        read_office(&app, "report.docx", json!({})).await.status,
        200
    );
    assert_eq!(app.get("/readyz").await.status, 200);
}

#[tokio::test]
async fn eml_attachments_become_uploads_of_the_same_tenant() {
    let keys = "key-aaaaaaaaaaaaaaaa:alice,key-bbbbbbbbbbbbbbbb:bob";
    let mut app = TestApp::with(|a| a.api_keys = Some(keys.into())).await;
    app.token = Some("key-aaaaaaaaaaaaaaaa".into());
    // This message's "test.pdf" is really 557 bytes of text: listed with its error, not stored.
    let r = app
        .upload_and_read(
            "mail.eml",
            &corpus("eml/mailgun_pdf_attachment.eml"),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "email");
    assert_eq!(r.json["subject"], "Test message with PDF attachment");
    assert_eq!(r.json["from"], "test@mailgun.com");
    assert_eq!(r.json["attachments"][0]["error"]["code"], "corrupt");
    let id = app
        .upload_id("mail.msg", &corpus("msg/attachment_msg_pdf.msg"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    let att = &r.json["attachments"][0];
    assert!(att["error"].is_null(), "{}", r.json["attachments"]);
    assert_eq!(att["name"], "smbprn.00009008.KdcPjl.pdf");
    assert_eq!(
        r.json["attachments"][1]["note"],
        "embedded Outlook item; not extracted"
    );
    let att_id = att["file_id"].as_str().expect("stored").to_string();
    assert_eq!(att["format"], "pdf");
    // The attachment is the tenant's file, readable like any upload.
    let pdf = app.read(json!({"file_id": att_id})).await;
    assert_eq!(pdf.json["format"], "pdf", "{}", pdf.json);
    // Reading again does not store it twice.
    let again = app.read(json!({"file_id": id})).await;
    assert_eq!(again.json["attachments"][0]["file_id"], att_id);
    // Another tenant cannot see it.
    app.token = Some("key-bbbbbbbbbbbbbbbb".into());
    assert_error(
        &app.read(json!({"file_id": att_id})).await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn msg_attachments_that_are_refused_say_why() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read("att.msg", &corpus("msg/testMSG_att_doc.msg"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["subject"], "test pièce jointe 1");
    let atts = r.json["attachments"].as_array().unwrap();
    let doc = atts
        .iter()
        .find(|a| a["name"] == "test-unicode.doc")
        .unwrap();
    assert_eq!(doc["error"]["code"], "legacy_format");
    assert!(doc["file_id"].is_null());
    let txt = atts.iter().find(|a| a["name"] == "pj1.txt").unwrap();
    assert!(txt["file_id"].is_string());
}

#[tokio::test]
async fn mail_body_lines_with_offset_and_limit() {
    let app = TestApp::new().await;
    let id = app.upload_id("m.msg", &corpus("msg/testMSG.msg")).await;
    let full = app.read(json!({"file_id": id})).await;
    let total = full.json["total_lines"].as_u64().unwrap();
    assert!(total > 5);
    let r = app
        .read(json!({"file_id": id, "offset": 2, "limit": 1}))
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.starts_with("Subject: MIME registry use cases\n"),
        "headers always come first: {text}"
    );
    assert_eq!(text.split("\n\n").nth(1).unwrap().lines().count(), 1);
    let r = app.read(json!({"file_id": id, "offset": total}));
    assert_error(&r.await, 416, "out_of_range");
    assert_error(
        &app.read(json!({"file_id": id, "pages": "1"})).await,
        400,
        "unsupported_option",
    );
}

#[tokio::test]
async fn cut_results_always_say_how_to_read_on() {
    let app = TestApp::new().await;
    // A mail whose headers and first body line pass the budget.
    let id = app.upload_id("m.msg", &corpus("msg/testMSG.msg")).await;
    let r = app.read(json!({"file_id": id, "max_chars": 60})).await;
    assert_eq!(r.json["truncated"], true);
    assert!(
        strip_truncation(r.json["text"].as_str().unwrap())
            .chars()
            .count()
            <= 60,
        "{}",
        r.json["text"]
    );
    let next = r.json["next"].as_object().expect("next").clone();
    let mut body = json!({"file_id": id});
    body.as_object_mut().unwrap().extend(next);
    assert_eq!(app.read(body).await.status, 200);
    // A Word query whose matches pass the budget.
    let id = app
        .upload_id("long.docx", &fixture("office/long.docx"))
        .await;
    let r = app
        .read(json!({"file_id": id, "query": "Paragraph", "context_lines": 0, "max_chars": 200}))
        .await;
    assert_eq!(r.json["truncated"], true);
    let all = app.read(json!({"file_id": id, "query": "Paragraph", "context_lines": 0, "max_chars": r.json["next"]["max_chars"]})).await;
    assert_eq!(all.json["truncated"], false, "{}", all.json);
    assert_eq!(all.json["matches"], 450);
}

/// A real message rewritten without its plain-text and HTML bodies, so that the body
/// exists only as compressed RTF (PR_RTF_COMPRESSED), as some Outlook exports have it.
fn rtf_only(msg: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut src = cfb::CompoundFile::open(std::io::Cursor::new(msg.to_vec())).unwrap();
    let entries: Vec<(std::path::PathBuf, bool)> = src
        .walk()
        .filter(|e| !e.is_root())
        .map(|e| (e.path().to_path_buf(), e.is_storage()))
        .collect();
    let mut dst = cfb::CompoundFile::create(std::io::Cursor::new(Vec::new())).unwrap();
    let mut had_rtf = false;
    for (path, storage) in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let top = path.parent() == Some(std::path::Path::new("/"));
        if storage {
            dst.create_storage(&path).unwrap();
            continue;
        }
        if top && (name.starts_with("__substg1.0_1000") || name.starts_with("__substg1.0_1013")) {
            continue;
        }
        had_rtf |= top && name == "__substg1.0_10090102";
        let mut bytes = Vec::new();
        src.open_stream(&path)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        dst.create_stream(&path).unwrap().write_all(&bytes).unwrap();
    }
    assert!(had_rtf, "the message has a compressed RTF body");
    dst.flush().unwrap();
    dst.into_inner().into_inner()
}

#[tokio::test]
async fn msg_body_only_in_compressed_rtf_is_decompressed_and_read() {
    let app = TestApp::new().await;
    for (file, want) in [
        (
            "msg/testMSG.msg",
            "As discussed, I've been working on making the type detection code more",
        ),
        (
            "msg/cyrillic_message.msg",
            "было успешно получено брокером подсистемы обмена данными",
        ),
        ("msg/fake_email.msg", "Roses are red"),
    ] {
        let bytes = rtf_only(&corpus(file));
        let id = app.upload_id("rtf-only.msg", &bytes).await;
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{file}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(want), "{file}: {text}");
        assert!(
            !text.contains("\\rtf") && !text.contains("{\\"),
            "{file}: RTF markup leaked: {text}"
        );
    }
}

/// Issue #43: an OpenDocument spreadsheet's numbers show as their number format shows them
/// (the text ODF keeps beside the value: `1,599.99`, `2.50%`, `$3.00`, `(12.00)`), for
/// repeated cells too and inside `range`; a number whose text is its value, a date (ISO, as
/// every workbook's) and a comment's text stay as before. calamine's issues.ods: its cell of
/// 0.5 in a whole-number format shows `1`. Before: `1599.99`, `0.025`, `3`, `-12`, `0.5`.
#[tokio::test]
async fn ods_numbers_show_as_their_format_does() {
    let app = TestApp::new().await;
    let cell = |t: &str, v: &str, shown: &str, extra: &str| {
        format!(
            r#"<table:table-cell office:value-type="{t}" office:value="{v}"{extra}><text:p>{shown}</text:p></table:table-cell>"#
        )
    };
    let rows = [
        format!(
            "{}{}{}",
            cell("float", "1599.99", "1,599.99", ""),
            cell("percentage", "0.025", "2.50%", ""),
            cell("currency", "3", "$3.00", r#" office:currency="USD""#)
        ),
        format!(
            "{}{}",
            cell(
                "float",
                "-12",
                "(12.00)",
                r#" table:number-columns-repeated="2""#
            ),
            cell("float", "7", "7", "")
        ),
        format!(
            r#"<table:table-cell office:value-type="date" office:date-value="2024-03-01"><text:p>03/01/24</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="0.5"><office:annotation><text:p>a note</text:p></office:annotation><text:p>50.0%</text:p></table:table-cell>"#
        ),
    ];
    let body: String = rows
        .iter()
        .map(|r| format!("<table:table-row>{r}</table:table-row>"))
        .collect();
    let ods = odf_package(
        "application/vnd.oasis.opendocument.spreadsheet",
        &format!(
            r#"<office:spreadsheet><table:table table:name="Money">{body}</table:table></office:spreadsheet>"#
        ),
    );
    let id = app.upload_id("money.ods", &ods).await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("1,599.99\t2.50%\t$3.00\n(12.00)\t(12.00)\t7\n2024-03-01\t50.0%\n"),
        "{text}"
    );
    let r = app
        .read(json!({"file_id": id, "sheet": "Money", "range": "B1:C2"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"]
            .as_str()
            .unwrap()
            .contains("2.50%\t$3.00\n(12.00)\t7\n"),
        "{}",
        r.json
    );

    let id = app
        .upload_id("issues.ods", &fixture("office/calamine/issues.ods"))
        .await;
    let r = app.read(json!({"file_id": id, "sheet": "issue5"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"].as_str().unwrap().ends_with("---\n1\n"),
        "{}",
        r.json["text"]
    );
}

#[tokio::test]
async fn ods_sheets_cells_dates_and_budget() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("prices.ods", &fixture("office/prices.ods"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["mime"], "application/vnd.oasis.opendocument.spreadsheet",
        "{}",
        r.json
    );
    let text = r.json["text"].as_str().unwrap();
    // The million repeated empty rows of the first sheet cost nothing and show nowhere.
    assert!(
        text.starts_with(
            "## Sheets\n- Prices (4 rows × 3 cols): full\n- Notes (1 rows × 3 cols): full\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "Item\tPrice\tSince\nÄpfel\t1.25\t2024-03-01\nBirnen\t2.5\t2023-12-24\nTotal\t3.75\n"
        ),
        "{text}"
    );
    assert!(text.contains("Räumung\t\tnach Ostern\n"), "{text}");
    // The cell budget cuts inside the first sheet and says where to go on.
    let r = app.read(json!({"file_id": id, "max_cells": 6})).await;
    assert_eq!(r.json["sheets"][0]["read"], "partial", "{}", r.json);
    assert_eq!(r.json["sheets"][0]["last_cell"], "C2");
    assert_eq!(r.json["sheets"][1]["read"], "not_read");
    // The rest of this sheet, then the sheets after it: following `next` reads them all.
    assert_eq!(
        r.json["next"],
        json!({"sheet": "Prices", "range": "A3:C4", "sheets_after": true})
    );
    let r = app
        .read(json!({"file_id": id, "sheet": "Prices", "range": "A3:C4", "sheets_after": true}))
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("Birnen\t2.5\t2023-12-24\nTotal\t3.75\n")
            && text.contains("Räumung\t\tnach Ostern\n"),
        "{}",
        r.json
    );
    assert_eq!(r.json["sheets"][1]["read"], "full");
    assert!(r.json.get("next").is_none(), "{}", r.json);
    // Without it, `sheet` is that sheet alone, as before.
    let r = app
        .read(json!({"file_id": id, "sheet": "Prices", "range": "A3:C4"}))
        .await;
    assert_eq!(r.json["sheets"][1]["read"], "not_selected");
    assert_error(
        &app.read(json!({"file_id": id, "sheets_after": true})).await,
        400,
        "invalid_option",
    );
    assert_error(
        &app.read(json!({"file_id": id, "pages": "1"})).await,
        400,
        "unsupported_option",
    );
}

/// An xlsx whose rows come out of order, with cells at A1 and XFD1048576: before, the
/// out-of-order path asked calamine for the dense grid of the used area (17 billion cells).
fn far_apart_unordered_xlsx() -> Vec<u8> {
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default();
    for (name, body) in [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Far" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        (
            "xl/worksheets/sheet1.xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1048576"><c r="XFD1048576"><v>42</v></c></row><row r="1"><c r="A1"><v>7</v></c></row></sheetData></worksheet>"#,
        ),
    ] {
        z.start_file(name, opts).unwrap();
        z.write_all(body.as_bytes()).unwrap();
    }
    z.finish().unwrap();
    buf.into_inner()
}

#[tokio::test]
async fn unordered_xlsx_rows_do_not_allocate_the_used_area() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "far.xlsx",
            &far_apart_unordered_xlsx(),
            json!({"max_chars": 2000}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(text.contains("--- Sheet: Far"), "{text}");
    assert!(text.contains('7'), "{text}");
}

/// Word list numbers as Word shows them (fixtures/office/lists.txt): multi-level patterns
/// (`1.2.1.`), headings numbered through their styles (`Article II`, `2.1` with isLgl), a
/// list style and numId 0 taking it away, decimalZero, letters, roman numerals, Symbol
/// bullets, a startOverride restart and lvlRestart 0. Before, each item showed only its own
/// level's counter (`1.` for `1.1.`) and styled headings had no number.
#[tokio::test]
async fn word_list_numbers_are_what_word_shows() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read("lists.docx", &fixture("office/lists.docx"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let want = String::from_utf8(fixture("office/lists.txt")).unwrap();
    assert_eq!(r.json["text"].as_str().unwrap().trim_end(), want.trim_end());
}

/// PowerPoint comments, legacy and modern (with a reply), after each slide's notes, as
/// `author: text` (before: dropped).
#[tokio::test]
async fn pptx_comments_follow_each_slides_notes() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("comments.pptx", &fixture("office/comments.pptx"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let want = String::from_utf8(fixture("office/comments.pptx.txt")).unwrap();
    assert_eq!(r.json["text"], want);
    let r = app.read(json!({"file_id": id, "pages": "2"})).await;
    assert_eq!(
        r.json["text"],
        "--- Slide 2 ---\nLaunch date\n[Comments]\nCleo Diaz: Is the date final?\nDev Rao: Done, moved to March.\n"
    );
}

/// Excel notes and threaded comments after each sheet's rows, `CELL (author): text`, only
/// for cells of what was read, each counted as a cell of the budget; a row waits for
/// `next` with its comments (before: dropped).
#[tokio::test]
async fn xlsx_comments_follow_the_rows_they_belong_to() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("comments.xlsx", &fixture("office/comments.xlsx"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains(
            "Washers\t7\n[Comments]\nB2 (Ann Lee): Counted twice, please recheck.\n\
             A3 (Cleo Diaz): Supplier changed?\nA3 (Dev Rao): Yes, since May.\n"
        ),
        "{text}"
    );
    // Excel's stand-in note for the thread, and a note on an empty far cell: not shown.
    assert!(
        !text.contains("Threaded comment") && !text.contains("Far away"),
        "{text}"
    );
    // A range shows the comments of its cells only.
    let r = app
        .read(json!({"file_id": id, "sheet": "Stock", "range": "A1:B2"}))
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("B2 (Ann Lee)") && !text.contains("A3 ("),
        "{text}"
    );
    // Rows 1–2 and B2's comment are 5 cells; row 3 with its two comments does not fit.
    let r = app
        .read(json!({"file_id": id, "sheet": "Stock", "max_cells": 5}))
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("Bolts\t40\n[Comments]\nB2 (Ann Lee)") && !text.contains("Nuts"),
        "{text}"
    );
    assert_eq!(r.json["next"]["range"], "A3:B4", "{}", r.json);
    let r = app
        .read(json!({"file_id": id, "sheet": "Stock", "range": "A3:B4"}))
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("A3 (Dev Rao): Yes, since May.") && !text.contains("B2 ("),
        "{text}"
    );
}

/// Charts where they stand: `[Chart: TITLE]`, then the category and series as
/// tab-separated rows, in a slide, in a Word body (a block, like a table) and in a
/// workbook (after a worksheet's last row; a chart sheet listed as `kind: chart` and read
/// as its chart). Before, none of it was read and a chart sheet was not listed. A legacy
/// workbook's charts (BIFF chart substreams) the same: charts.xls, as LibreOffice writes
/// it, caches none of its series, which are read from the cells they refer to (a pie's
/// on another sheet than the one it is drawn on). An OpenDocument spreadsheet's charts
/// (embedded chart objects, from their own table of data) the same, and an OpenDocument
/// text's or presentation's (a chart block where its frame stands, not its table of data
/// as a table).
#[tokio::test]
async fn charts_are_read_where_they_stand() {
    let app = TestApp::new().await;
    for name in [
        "charts.pptx",
        "charts.docx",
        "charts.xlsx",
        "charts.xls",
        "charts.ods",
        "charts.odt",
        "charts.odp",
    ] {
        let r = app
            .upload_and_read(name, &fixture(&format!("office/{name}")), json!({}))
            .await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        let want = String::from_utf8(fixture(&format!("office/{name}.txt"))).unwrap();
        assert_eq!(r.json["text"], want, "{name}");
    }
    // Workbooks Excel wrote (calamine's test suite): a chart whose series stand on
    // another sheet, read from Excel's cache after the rows of the sheet it is drawn on;
    // a chart sheet, listed as one and read as its chart.
    let r = app
        .upload_and_read(
            "cross.xls",
            &fixture("office/calamine/xls_cross_sheet_chart.xls"),
            json!({}),
        )
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("VALUE C8\n[Chart]\nCategory\tSeries 1\tSeries 2\n1\t1\t1.75\n")
            && text.contains("8\t8\t12.25\n--- Sheet: Data "),
        "{text}"
    );
    let r = app
        .upload_and_read(
            "any.xls",
            &fixture("office/calamine/any_sheets.xls"),
            json!({}),
        )
        .await;
    assert_eq!(r.json["sheets"][3]["name"], "Chart", "{}", r.json);
    assert_eq!(r.json["sheets"][3]["kind"], "chart", "{}", r.json);
    assert!(
        r.json["text"]
            .as_str()
            .unwrap()
            .ends_with("--- Chart sheet: Chart ---\n[Chart]\nCategory\tSeries 1\tSeries 2\n1\t1\t2\n2\t3\t4\n3\t5\t6\n"),
        "{}",
        r.json
    );
    // In Markdown a chart is a block of its own: one blank line after the table, or after
    // the heading of a sheet without rows (a chart sheet), never two.
    for name in ["charts.xlsx", "charts.xls", "charts.ods"] {
        let r = app
            .upload_and_read(
                name,
                &fixture(&format!("office/{name}")),
                json!({"output": "markdown"}),
            )
            .await;
        let text = r.json["text"].as_str().unwrap();
        assert!(
            text.contains("|\n\n[Chart: Units sold]\n"),
            "{name}: {text}"
        );
        assert!(
            text.contains("---\n\n[Chart") && !text.contains("\n\n\n"),
            "{name}: {text}"
        );
    }
    let id = app
        .upload_id("charts.xlsx", &fixture("office/charts.xlsx"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.json["sheets"][1]["kind"], "chart", "{}", r.json);
    assert!(r.json["sheets"][0].get("kind").is_none());
    // The chart waits with the last row; `next` shows it once.
    let r = app.read(json!({"file_id": id, "max_cells": 5})).await;
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("Quarter\tNorth\n") && !text.contains("[Chart"),
        "{text}"
    );
    assert_eq!(r.json["next"]["range"], "A2:B2", "{}", r.json);
    let r = app
        .read(json!({"file_id": id, "sheet": "Data", "range": "A2:B2", "max_cells": 5}))
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert_eq!(text.matches("[Chart: Units sold]").count(), 1, "{text}");
    let r = app
        .read(json!({"file_id": id, "sheet": "Share chart"}))
        .await;
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .contains("[Chart]\nCategory\tShare\nAlpha\t60\n"));
    // In an OpenDocument text a chart is one `chart` block, as in Word.
    let r = app
        .upload_and_read(
            "charts.odt",
            &fixture("office/charts.odt"),
            json!({"output": "json"}),
        )
        .await;
    let kinds: Vec<&str> = r.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["paragraph", "chart", "paragraph"], "{}", r.json);
    // In Word a chart is a block: `mode: text` leaves it out, as it does tables.
    let id = app
        .upload_id("charts.docx", &fixture("office/charts.docx"))
        .await;
    let r = app.read(json!({"file_id": id, "mode": "text"})).await;
    assert!(!r.json["text"].as_str().unwrap().contains("[Chart"));
}

/// `include_styles` (xlsx): merged ranges, hidden rows and columns, number formats by
/// range and the header's bold and fill, for the cells read — not in the text; refused on
/// other formats, Excel 97-2003 and OpenDocument spreadsheets included.
#[tokio::test]
async fn xlsx_styles_on_request() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("styles.xlsx", &fixture("office/styles.xlsx"))
        .await;
    let plain = app.read(json!({"file_id": id})).await;
    assert!(plain.json["sheets"][0].get("styles").is_none());
    let r = app
        .read(json!({"file_id": id, "include_styles": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], plain.json["text"], "styles are not text");
    assert_eq!(
        r.json["sheets"][0]["styles"],
        json!({
            "merged": ["A1:D1"],
            "hidden_rows": [5],
            "hidden_cols": ["E"],
            "number_formats": [
                {"range": "C3:C6", "format": "#,##0.00"},
                {"range": "D3:D6", "format": "yyyy-mm-dd"}
            ],
            "header": {"row": 2, "rows": 1, "bold": true, "fill": "FFFFFF00"}
        })
    );
    // Only what was read: rows 1–3 (the cell budget) reach neither the hidden row nor
    // the formats' full runs.
    let r = app
        .read(json!({"file_id": id, "include_styles": true, "max_cells": 15}))
        .await;
    let st = &r.json["sheets"][0]["styles"];
    assert!(st.get("hidden_rows").is_none(), "{st}");
    assert_eq!(st["number_formats"][0]["range"], "C3", "{st}");
    for (name, file) in [
        ("report.docx", "office/report.docx"),
        ("prices.ods", "office/prices.ods"),
    ] {
        let r = app
            .upload_and_read(name, &fixture(file), json!({"include_styles": true}))
            .await;
        assert_error(&r, 400, "unsupported_option");
    }
}

/// Following `next` through a workbook of several sheets with small budgets reads every
/// sheet's every row once: `next` of a read that stops in (or before) one sheet says
/// `sheets_after`, so the sheets after it are read on too (before, following `next` ended
/// with the sheet it named). Every piece's cells, without the sheet lists, are the cells
/// of one whole read.
#[tokio::test]
async fn following_next_reads_every_sheet() {
    let app = TestApp::new().await;
    for (name, budget) in [
        ("book.xlsx", json!({"max_cells": 30})),
        ("book.xlsx", json!({"max_chars": 700})),
        ("prices.ods", json!({"max_cells": 4})),
        // Fewer cells than a row has: `next` says a budget that shows one (it asked for
        // the same again forever).
        ("book.xlsx", json!({"max_cells": 2})),
    ] {
        let id = app
            .upload_id(name, &fixture(&format!("office/{name}")))
            .await;
        let whole = app
            .read(json!({"file_id": id, "max_cells": 1000000, "max_chars": 1000000}))
            .await;
        let rows = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| {
                    !l.starts_with("## Sheets")
                        && !l.starts_with("- ")
                        && !l.starts_with("--- Sheet")
                })
                .filter(|l| !l.starts_with("... (truncated"))
                .map(str::to_string)
                .collect()
        };
        let (joined, reads) = follow(&app, &id, budget.clone()).await;
        assert!(reads >= 2, "{name} {budget}: read in one go");
        assert_eq!(
            rows(&joined),
            rows(whole.json["text"].as_str().unwrap()),
            "{name} {budget}"
        );
    }
}

/// Issue #43 item 5: Excel's binary workbook is read (calamine reads it; it was sniffed as
/// xlsx and refused as `corrupt`), an OLE stream named `WORKBOOK` is a workbook, and
/// password-protected packages of every kind say `encrypted` (OpenDocument ones were
/// `corrupt`). Real files of calamine's and Tika's test suites
/// (fixtures/office/calamine/SOURCES.md).
#[tokio::test]
async fn binary_workbooks_and_encrypted_packages() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "issues.xlsb",
            &fixture("office/calamine/issues.xlsb"),
            json!({"sheet": "issue2"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "excel");
    assert_eq!(
        r.json["mime"],
        "application/vnd.ms-excel.sheet.binary.macroEnabled.12"
    );
    assert!(
        r.json["text"]
            .as_str()
            .unwrap()
            .ends_with("--- Sheet: issue2 (3 rows × 2 cols) ---\n1\ta\n2\tb\n3\tc\n"),
        "{}",
        r.json["text"]
    );
    let r = app
        .upload_and_read(
            "issues.xlsb",
            &fixture("office/calamine/issues.xlsb"),
            json!({"sheet": "spc_chrs"}),
        )
        .await;
    let text = r.json["text"].as_str().unwrap();
    for s in ["&\n<\n>\n", "☺", "àâéêèçöïî«»"] {
        assert!(text.contains(s), "{s:?} in {text}");
    }
    // Workbook options only (the strict rule names the kind).
    let r = app
        .upload_and_read(
            "issues.xlsb",
            &fixture("office/calamine/issues.xlsb"),
            json!({"include_styles": true}),
        )
        .await;
    assert_error(&r, 400, "unsupported_option");
    assert!(r.json["error"]["message"]
        .as_str()
        .unwrap()
        .contains("xlsb"));

    // Stream names compare without case, as the compound file format compares them.
    for (name, want) in [
        (
            "office/workbook_stream_uppercase.xls",
            "Sample Excel Worksheet",
        ),
        ("office/calamine/capitalized_wbook_stream.xls", "Sheet1"),
    ] {
        let r = app
            .upload_and_read("book.xls", &fixture(name), json!({}))
            .await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        assert_eq!(r.json["format"], "excel");
        assert!(
            r.json["text"].as_str().unwrap().contains(want) || r.json["sheets"][0]["name"] == want,
            "{name}: {}",
            r.json
        );
    }

    for name in [
        "office/calamine/pass_protected.xlsb",
        "office/calamine/pass_protected.ods",
        "office/tika/testODTEncrypted.odt",
    ] {
        let up = app
            .upload(name.rsplit('/').next().unwrap(), &fixture(name))
            .await;
        assert_error(&up, 422, "encrypted");
    }
}

/// Binary workbooks are read by docreader itself (#43 item 5), not calamine, which
/// panicked on writers' variations: Tika's testEXCEL.xlsb (four bytes more before a
/// sheet's relationship id; it was `corrupt`) is a corpus row; here calamine's own test
/// files. A part named in another case than its workbook names it is found (part names
/// compare without case: calamine found issue_419's `Hello` itself, docreader's own
/// reading needs the package to), sheets keep their states, a chart sheet is read as its
/// chart (it was left out), and the 1904 date system holds.
#[tokio::test]
async fn binary_workbooks_are_read_by_docreader_itself() {
    let app = TestApp::new().await;
    let read = |name: &'static str| {
        let app = &app;
        async move {
            let r = app
                .upload_and_read(
                    name,
                    &fixture(&format!("office/calamine/{name}")),
                    json!({}),
                )
                .await;
            assert_eq!(r.status, 200, "{name}: {}", r.json);
            assert_eq!(r.json["format"], "excel", "{name}");
            r.json
        }
    };
    let j = read("issue_419.xlsb").await;
    assert!(
        j["text"]
            .as_str()
            .unwrap()
            .ends_with("--- Sheet: Sheet1 (1 rows × 1 cols) ---\nHello\n"),
        "{j}"
    );

    let j = read("any_sheets.xlsb").await;
    let sheets: Vec<(String, bool, Option<String>)> = j["sheets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["hidden"] == true,
                s["kind"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        sheets,
        [
            ("Visible".into(), false, None),
            ("Hidden".into(), true, None),
            ("VeryHidden".into(), true, None),
            ("Chart".into(), false, Some("chart".into())),
        ],
        "{j}"
    );
    let t = j["text"].as_str().unwrap();
    assert!(
        t.ends_with("--- Chart sheet: Chart ---\n[Chart]\nCategory\tSeries 1\tSeries 2\n1\t1\t2\n2\t3\t4\n3\t5\t6\n"),
        "{t}"
    );

    let j = read("date_1904.xlsb").await;
    let t = j["text"].as_str().unwrap();
    assert!(
        t.contains("\n2021-01-01\t15\n2021-01-02\t16\n255.169444444445h\t17\n"),
        "{t}"
    );
}

/// Where a sheet's hyperlinks lead (#43, content outside the main flow): a cell shows only
/// its text, so the addresses of links that leave the workbook are listed under `[Links]`
/// after the sheet's rows and shapes (`B12: https://…`), for xlsx (Tika's
/// testEXCEL_hyperlinks.xlsx: a web page, a mail address, a linked file) and xlsb (Tika's
/// testEXCEL_various.xlsb). A `range` lists only the links inside it. Before, the
/// addresses were nowhere in the answer.
#[tokio::test]
async fn where_a_sheets_links_lead() {
    let app = TestApp::new().await;
    let id = app
        .upload_id(
            "links.xlsx",
            &fixture("office/tika/testEXCEL_hyperlinks.xlsx"),
        )
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let t = r.json["text"].as_str().unwrap();
    let links = &t[t.find("[Links]\n").expect(t)..];
    for url in [
        "http://tika.apache.org/\n",
        "mailto:user@tika.apache.org?subject=help\n",
        "linked_file.txt.htm\n",
    ] {
        assert!(links.contains(url), "{url:?} in {t}");
    }
    // The text box's link (on the shape itself), after the cells', by the shape's name.
    assert!(
        links.ends_with("TextBox 1: http://tika.apache.org/1.12/gettingstarted.html\n"),
        "{t}"
    );
    let first = links.lines().nth(1).unwrap();
    let (cell, _) = first.split_once(": ").expect(first);
    // Only the links inside a range.
    let r = app
        .read(json!({"file_id": id, "range": format!("{cell}:{cell}")}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let t = r.json["text"].as_str().unwrap();
    assert!(t.ends_with(&format!("[Links]\n{first}\n")), "{t}");
    // In `output: "json"`, a block of the `links` part.
    let r = app.read(json!({"file_id": id, "output": "json"})).await;
    let blocks = r.json["document"]["units"][0]["blocks"].as_array().unwrap();
    assert!(
        blocks.iter().any(|b| b["part"] == "links"
            && b["text"]
                .as_str()
                .is_some_and(|t| t.contains("http://tika.apache.org/"))),
        "{}",
        r.json["document"]
    );

    let bytes = std::fs::read(corpus_dir().join("xlsb/testEXCEL_various.xlsb")).unwrap();
    let r = app.upload_and_read("various.xlsb", &bytes, json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let t = r.json["text"].as_str().unwrap();
    assert!(
        t.contains("test WordArt\n[Links]\nB12: http://tika.apache.org/\n"),
        "{t}"
    );
}

/// Issue #43 item 6: a message's recipients come from its recipient table with their
/// addresses (`Name <addr>`), To and Cc apart; the display strings had names only.
/// Messages of Unstructured's and Tika's test suites (tests/corpus/msg).
#[tokio::test]
async fn msg_recipients_carry_their_addresses() {
    let app = TestApp::new().await;
    for (name, to, cc) in [
        (
            "fake_email.msg",
            json!("Matthew Robinson <mrobinson@unstructured.io>"),
            Value::Null,
        ),
        (
            "cyrillic_message.msg",
            json!("Свиридов Дмитрий Владимирович <sviridov@niips.ru>"),
            json!("Свиридов Дмитрий Владимирович <sviridov@niips.ru>"),
        ),
        (
            "testMSG_chinese.msg",
            json!("Tests Chang@FT (張毓倫) <tests.chang@fengttt.com>"),
            Value::Null,
        ),
        // A name that only repeats the address is not written twice.
        (
            "testMSG_att_doc.msg",
            json!("nicolas1.23456@free.fr"),
            Value::Null,
        ),
    ] {
        let bytes = std::fs::read(corpus_dir().join("msg").join(name)).unwrap();
        let r = app.upload_and_read(name, &bytes, json!({})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        assert_eq!(r.json["to"], to, "{name}");
        assert_eq!(r.json["cc"], cc, "{name}");
        let text = r.json["text"].as_str().unwrap();
        assert!(
            text.contains(&format!("To: {}", to.as_str().unwrap())),
            "{name}: {text}"
        );
    }
}

/// Content outside the main flow (#43 item 4), on Tika's own test files
/// (fixtures/office/tika/SOURCES.md) and masters.pptx: SmartArt in Word, PowerPoint and
/// Excel; the text of a slide's layout and master shapes (not their placeholders' prompts),
/// once a slide where it shows; Excel text boxes after the sheet's cells; print headers and
/// footers on request.
#[tokio::test]
async fn content_outside_the_main_flow() {
    let app = TestApp::new().await;
    let read = |name: &'static str, opts: Value| {
        let app = &app;
        async move {
            let r = app
                .upload_and_read(name, &fixture(&format!("office/{name}")), opts)
                .await;
            assert_eq!(r.status, 200, "{name}: {}", r.json);
            r.json
        }
    };
    let text = |v: &Value| v["text"].as_str().unwrap().to_string();

    // SmartArt, where the diagram stands (Word: before the body's own paragraph).
    let t = text(&read("tika/testWORD_diagramData.docx", json!({})).await);
    let from = t.find("From here\nTo here\nAnd then here.\n").expect(&t);
    assert!(
        from < t.find("This is a regular text in document body.").unwrap(),
        "{t}"
    );
    let t = text(&read("tika/testPPT_diagramData.pptx", json!({})).await);
    assert!(t.contains("President\nVP – HR\nManager 1\n"), "{t}");
    let t = text(&read("tika/testEXCEL_diagramData.xlsx", json!({})).await);
    assert!(
        t.contains("[Shapes]\nSmartArt text#1.\nSmartArt text#2.\nSmartArt text#3.\n"),
        "{t}"
    );

    // A layout's own text box shows on the slide; the placeholders' prompts do not.
    for name in [
        "tika/testPPT_masterText.pptx",
        "tika/testPPT_masterText2.pptx",
    ] {
        let t = text(&read(name, json!({})).await);
        assert!(
            t.contains("[Layout and master]\nText that I added to the master slide\n"),
            "{name}: {t}"
        );
        assert!(!t.contains("Click to edit"), "{name}: {t}");
        assert_eq!(t.matches("Text that I added").count(), 1, "{t}");
    }
    // Where it shows: not on a slide that hides background graphics, not the master's on a
    // layout that hides them.
    let v = read("masters.pptx", json!({})).await;
    assert_eq!(
        text(&v),
        String::from_utf8(fixture("office/masters.pptx.txt")).unwrap()
    );
    let v = read("masters.pptx", json!({"pages": "3", "output": "markdown"})).await;
    assert!(text(&v).contains("Appendix"), "{}", v["text"]);
    assert!(!text(&v).contains("ACME"), "{}", v["text"]);

    // An Excel text box, after the sheet's cells (a workbook of no cells but a text box is
    // not "no cell values").
    let v = read("tika/testEXCEL_textbox.xlsx", json!({})).await;
    assert!(
        text(&v).contains(
            "--- Sheet: Sheet1 (0 rows × 0 cols) ---\n[Shapes]\nthis is some autoshape text\n"
        ),
        "{}",
        v["text"]
    );
    assert!(v["note"].is_null(), "{}", v["note"]);

    // Print headers and footers only on request, each section a line, after the rows.
    let v = read("tika/testEXCEL_headers_footers.xlsx", json!({})).await;
    assert!(!text(&v).contains("Header - "), "{}", v["text"]);
    let v = read(
        "tika/testEXCEL_headers_footers.xlsx",
        json!({"include_headers_footers": true, "max_cells": 1000}),
    )
    .await;
    let t = text(&v);
    let rows_end = t.find("John Smith82\t82 Corporate HQ\n").expect(&t);
    let head = t
        .find("[Headers]\nHeader - Corporate Spreadsheet\nHeader - For Internal Use Only\nHeader - Author: John Smith\n[Footers]\nFooter - Corporate Spreadsheet\nFooter - For Internal Use Only\nFooter - Author: John Smith\n")
        .expect(&t);
    assert!(head > rows_end, "{t}");
    assert!(t.contains("John Smith1\t"), "{t}");
    // Read on with `next`: shown once, with the sheet's end.
    let v = read(
        "tika/testEXCEL_headers_footers.xlsx",
        json!({"include_headers_footers": true, "max_cells": 40}),
    )
    .await;
    assert!(!text(&v).contains("[Headers]"), "{}", v["text"]);
    let next = v["next"].clone();
    assert!(next.is_object(), "{v}");
    assert_eq!(next["include_headers_footers"], true, "{next}");
    // An .xls's own (HEADER and FOOTER records), after the rows, only on request.
    let v = read("tika/testEXCEL_headers_footers.xls", json!({})).await;
    assert!(text(&v).contains("John Smith1\t"), "{}", v["text"]);
    assert!(!text(&v).contains("Header - "), "{}", v["text"]);
    let v = read(
        "tika/testEXCEL_headers_footers.xls",
        json!({"include_headers_footers": true, "max_cells": 1000}),
    )
    .await;
    let t = text(&v);
    let rows_end = t.find("1 Corporate HQ").expect(&t);
    let head = t
        .find("[Headers]\nHeader - Corporate Spreadsheet\nHeader - For Internal Use Only\nHeader - Author: John Smith\n[Footers]\nFooter - Corporate Spreadsheet\nFooter - For Internal Use Only\nFooter - Author: John Smith\n")
        .expect(&t);
    assert!(head > rows_end, "{t}");
    // Only workbooks take it.
    let r = app
        .upload_and_read(
            "report.docx",
            &fixture("office/report.docx"),
            json!({"include_headers_footers": true}),
        )
        .await;
    assert_error(&r, 400, "unsupported_option");
}

/// An Outlook message's 8-bit strings in the message's code page, not the body's (#43 item
/// 6). Two corpus messages with one property changed each (fixtures/office/SOURCES.md): a
/// German message (locale 1031, no PR_MESSAGE_CODEPAGE) whose internet code page says
/// windows-1251 keeps its windows-1252 subject; a Russian one whose locale says English still
/// reads its windows-1251 strings, as chardetng finds them.
#[tokio::test]
async fn msg_strings_in_the_message_code_page() {
    let app = TestApp::new().await;
    for (name, want) in [
        ("msg_cp1252_strings.msg", "Subject: Subject öäü Subject\n"),
        (
            "msg_cp1251_english_locale.msg",
            "Subject: Автоматический ответ подсистемы обмена данными ФГУП \"Почта России\".\n",
        ),
    ] {
        let r = app
            .upload_and_read(name, &fixture(&format!("office/{name}")), json!({}))
            .await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        assert!(text.starts_with(want), "{name}: {text}");
    }
}

/// Numbers as their cells show them (#43 item 5): .xls BIFF FORMAT and XF records, xlsx
/// cell styles, and Excel's built-in formats applied, on Tika's testEXCEL-formats.xls and
/// .xlsx with Tika's own assertions (dates stay ISO, as every workbook's do here).
#[tokio::test]
async fn numbers_as_their_format_shows_them() {
    let app = TestApp::new().await;
    let xlsx = std::fs::read(corpus_dir().join("xlsx/testEXCEL-formats.xlsx")).unwrap();
    for (name, bytes) in [
        (
            "testEXCEL-formats.xls",
            fixture("office/tika/testEXCEL-formats.xls"),
        ),
        ("testEXCEL-formats.xlsx", xlsx),
    ] {
        let r = app.upload_and_read(name, &bytes, json!({})).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let text = r.json["text"].as_str().unwrap();
        for row in [
            "Number #,##0.00\t1,599.99\t-1,599.99\n",
            "Currency $#,##0.00;[Red]($#,##0.00)\t$1,599.99\t($1,599.99)\n",
            "Scientific 0.00E+00\t1.98E+08\t-1.98E+08\n",
            "Percentage (0.025)\t3%\t2.50%\n",
            "Fraction (2.5)\t2 1/2\n",
            "Custom Number:\t19 dollars and .99 cents\n",
            "Date Format: d-mmm-yy\t2007-05-17T20:21:00\n",
        ] {
            assert!(text.contains(row), "{name}: {row:?} in {text}");
        }
        // Markdown shows the same.
        let r = app
            .upload_and_read(name, &bytes, json!({"output": "markdown"}))
            .await;
        assert!(
            r.json["text"]
                .as_str()
                .unwrap()
                .contains("| $1,599.99 | ($1,599.99) |"),
            "{name}: {}",
            r.json["text"]
        );
    }
}

/// ODT frames, shapes and embedded objects (#43 item 4): words on either side of a drawing
/// set in the line stay apart, a drawing's alt text is words of its own, a floating line
/// between two CJK words leaves them touching, and an embedded spreadsheet's table is read
/// where its frame stands (in json too: a table block) — one outside the package is not.
/// Before, the words were glued (`Before the frame.After the frame.`, `Wordapart`) and the
/// embedded table was not read at all.
#[tokio::test]
async fn odt_frames_stand_apart_and_embedded_objects_are_read() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("frames.odt", &fixture("office/frames.odt"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let want = String::from_utf8(fixture("office/frames.odt.txt")).unwrap();
    assert_eq!(r.json["text"], want);

    let r = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let blocks = r.json["document"]["units"][0]["blocks"].as_array().unwrap();
    let tables: Vec<&Value> = blocks.iter().filter(|b| b["kind"] == "table").collect();
    assert_eq!(tables.len(), 1, "{blocks:?}");
    assert_eq!(
        tables[0]["rows"],
        json!([["Region", "Sales"], ["North", "4,200"]]),
        "{blocks:?}"
    );
}

/// What an ODP's master page draws besides its placeholders (#43 item 4), as PowerPoint's
/// layouts and masters are read: under `[Layout and master]` on each slide that shows it
/// (a shape's text, `Slide N` with the slide's own number, the text written into the
/// footer placeholder), never the placeholders' prompt text, fields or the notes master;
/// not on a slide that hides its master's objects, nor the footer where a slide hides it;
/// json's blocks in the `layout_and_master` part. Before, none of it was read.
#[tokio::test]
async fn odp_master_pages_show_on_their_slides() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("masters.odp", &fixture("office/masters.odp"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let want = String::from_utf8(fixture("office/masters.odp.txt")).unwrap();
    assert_eq!(r.json["text"], want);
    for prompt in ["Click to edit", "<number>", "Notes master", "Logo shape"] {
        assert!(!want.contains(prompt), "{prompt}");
    }

    let r = app
        .read(json!({"file_id": id, "output": "json", "pages": "4"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let blocks = r.json["document"]["units"][0]["blocks"].as_array().unwrap();
    let behind: Vec<&str> = blocks
        .iter()
        .filter(|b| b["part"] == "layout_and_master")
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        behind,
        [
            "ACME Corp. Confidential",
            "Draft — do not distribute",
            "Slide 4"
        ],
        "{blocks:?}"
    );
}

/// Shapes on an ODS's sheets (#43 item 4, "ODS the same" as xlsx): a text box and a shape
/// anchored in a cell, after the sheet's rows under `[Shapes]`, in json a block of the
/// `shapes` part; a cell's comment and a shape's alt text are not shapes, a sheet without
/// any has none; print headers and footers with `include_headers_footers`. Before,
/// calamine's cells were all an ODS gave, and the option was refused for ods.
#[tokio::test]
async fn ods_shapes_are_read_after_their_sheet() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("shapes.ods", &fixture("office/shapes.ods"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains(
            "Rent\t1200\n[Shapes]\nFigures are provisional\nuntil the audit\nUp 5 %\n--- Sheet: Plain"
        ),
        "{text}"
    );
    assert!(!text.contains("Callout box"), "{text}");
    // A shape in a string cell is in the cell's text (calamine's), and only there.
    assert_eq!(text.matches("Shape in a text cell").count(), 1, "{text}");
    assert_eq!(text.matches("[Shapes]").count(), 1, "{text}");

    let r = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let shapes = document_blocks(&r.json, |b| b["part"] == "shapes");
    assert_eq!(shapes.len(), 1, "{}", r.json["document"]);
    assert!(
        shapes[0].to_string().contains("Figures are provisional"),
        "{}",
        shapes[0]
    );

    // Print headers and footers on request, from each sheet's master page, fields read
    // (the Plain sheet's header is not printed); not without the option.
    let r = app
        .read(json!({"file_id": id, "include_headers_footers": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("Up 5 %\n[Headers]\nBudget 2025\nBudget\n[Footers]\nPage [Page] of [Pages]\n--- Sheet: Plain"),
        "{text}"
    );
    assert!(
        text.ends_with("No shapes here\n[Footers]\nInternal\n"),
        "{text}"
    );
    assert!(!text.contains("Not printed"), "{text}");
}

/// A binary workbook (.xlsb) reads what an xlsx does besides its cells (#43 item 5): numbers
/// in their cells' formats, comments, its drawing's chart and text boxes, and on request its
/// print headers and footers (odd, even and first pages: Tika's testXLSBVarious). Before,
/// numbers were General (`0.2`, `3.03`), and the rest was missing. Its cells are read by
/// docreader itself: a formula's error shows as Excel shows it (it read empty through
/// calamine).
#[tokio::test]
async fn xlsb_numbers_comments_drawings_and_print_headers() {
    let app = TestApp::new().await;
    let bytes = std::fs::read(corpus_dir().join("xlsb/testEXCEL_various.xlsb")).unwrap();
    let id = app.upload_id("various.xlsb", &bytes).await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "excel", "{}", r.json);
    let t = r.json["text"].as_str().unwrap();
    for line in [
        "String\tThis is a string\n",
        "integer\t13\n",
        "float\t13.1211231321\n",
        "currency\t$3.03\n",
        "percent\t20%\n",
        "long int\t123456789012345\n",
        "date\t2017-03-09\n",
        "formula\t4\t2\n",
        "formulaErr\t#NAME?\n",
        "customFormat2\t  3/128\tmerchant2\t2\t4\n",
        "float 2\t13.12\n",
        "fraction\t1/4\n",
        "[Comments]\nC8 (Allison, Timothy B.): test comment2\n",
        "C30 (Allison, Timothy B.): comment4 (end of row)\n",
        "[Chart: myChartTitle]\nCategory\tmerchant1\tmerchant2\nMarch\t1\t2\n",
        "[Shapes]\ntest textbox\ntest WordArt\n",
    ] {
        assert!(t.contains(line), "{line:?} in {t}");
    }
    assert!(!t.contains("[Headers]"), "{t}");
    let r = app
        .read(json!({"file_id": id, "include_headers_footers": true}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let t = r.json["text"].as_str().unwrap();
    let heads = t
        .find("[Headers]\nOddLeftHeader\nOddCenterHeader\nOddRightHeader\nEvenLeftHeader\n")
        .expect(t);
    let feet = t.find("[Footers]\nOddLeftFooter\n").expect(t);
    assert!(t.find("[Shapes]").unwrap() < heads && heads < feet, "{t}");
    assert!(t.contains("FirstPageRightFooter\n"), "{t}");
}

/// Word 2003 XML (#43): one XML file, named .doc as Word offers it or .xml, read as Word is
/// (fixtures/office/word2003.doc, from make_office_fixtures.py). Before, a .doc name was
/// refused as "plain text", and an .xml name gave the raw XML with its base64 pictures.
#[tokio::test]
async fn word_2003_xml_is_read_as_word() {
    let app = TestApp::new().await;
    let bytes = fixture("office/word2003.doc");
    let want = "Terms of the lease\nThe tenant pays nothing at all on the first day.\n\
        1. Rent\n2. Deposit\n  a) Monthly\n• Keys\n• Parking\n\n\
        --- Table 1 ---\nItem | Amount\nRent | 900\n\
        --- Headers ---\nLease header\n--- Footnotes ---\nOr the next working day.\n\
        --- Comments ---\nCheck the rent.\n";
    for name in ["lease.doc", "lease.xml"] {
        let id = app.upload_id(name, &bytes).await;
        let r = app.read(json!({"file_id": id})).await;
        assert_eq!(r.status, 200, "{name}: {}", r.json);
        assert_eq!(r.json["format"], "docx", "{name}");
        assert_eq!(r.json["mime"], "application/vnd.ms-wordml", "{name}");
        assert_eq!(r.json["text"], want, "{name}");
        // The hidden run is a finding; dropped on request.
        assert!(
            r.json["security"]["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["kind"] == "hidden_run" && f["snippet"] == "nothing at all"),
            "{}",
            r.json["security"]
        );
        let r = app
            .read(json!({"file_id": id, "hidden_text": "drop", "output": "markdown"}))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        let md = r.json["text"].as_str().unwrap();
        assert!(md.starts_with("## Terms of the lease\n\nThe tenant pays on the first day.\n\n1. Rent\n2. Deposit\n"), "{md}");
        assert!(
            md.contains("| Item | Amount |\n|---|---|\n| Rent | 900 |"),
            "{md}"
        );
        // The picture's base64 never shows.
        assert!(!md.contains("iVBOR"), "{md}");
    }
    // Word's options fit; a workbook's do not.
    let id = app.upload_id("lease.doc", &bytes).await;
    let r = app.read(json!({"file_id": id, "sheet": "A"})).await;
    assert_error(&r, 400, "unsupported_option");
    // One XML file is held to the cap of one package part, Word's and Excel's alike.
    let small = TestApp::with(|a| a.limits.package.max_entry_bytes = 1000).await;
    let book = std::fs::read(corpus_dir().join("xml/testEXCEL2003.xml")).unwrap();
    for (name, bytes) in [("lease.doc", &bytes), ("book.xml", &book)] {
        let r = small.upload_and_read(name, bytes, json!({})).await;
        assert_error(&r, 413, "too_large");
        let msg = r.json["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("over the 1000 bytes one document part may hold"),
            "{msg}"
        );
    }
}

/// Excel 2003 XML (#43): one XML file read as a workbook, with its sheets, budgets and
/// options (Tika's testEXCEL2003.xml from the corpus). Before, it came back as raw XML.
#[tokio::test]
async fn excel_2003_xml_is_read_as_a_workbook() {
    let app = TestApp::new().await;
    let bytes = std::fs::read(corpus_dir().join("xml/testEXCEL2003.xml")).unwrap();
    let id = app.upload_id("book.xml", &bytes).await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["format"], "excel");
    assert_eq!(r.json["mime"], "application/vnd.ms-spreadsheetml");
    assert_eq!(
        r.json["text"],
        "## Sheets\n- Sheet1 (6 rows × 6 cols): full\n--- Sheet: Sheet1 (6 rows × 6 cols) ---\n\
         Col1\tCol2\tCol3\tCol4\nstring\t1\t1.1\t2016-04-27\n\t2\t2.2\n\t3\t3.3\t\t\ttika_hyperlink\n\
         \t4\t4.4\n\t5\t5.5\n"
    );
    // A cell budget reads on with `next`.
    let r = app.read(json!({"file_id": id, "max_cells": 12})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(r.json["next"].is_object(), "{}", r.json);
    // An xlsx's styles option does not fit it.
    let r = app
        .read(json!({"file_id": id, "include_styles": true}))
        .await;
    assert_error(&r, 400, "unsupported_option");
}

/// An xlsb whose cells refer to a long shared string is refused as an output bomb before
/// calamine copies it into each cell, as an xlsx is: Tika's test-columnar.xlsb with its
/// shared strings replaced by one of 16 KB, read under a 100 KB cap on the text (its
/// eleven string cells would make 180 KB).
#[tokio::test]
async fn xlsb_cells_repeating_a_long_shared_string_are_an_output_bomb() {
    use std::io::{Read, Write};
    let src = std::fs::read(corpus_dir().join("xlsb/test-columnar.xlsb")).unwrap();
    let mut zin = zip::ZipArchive::new(std::io::Cursor::new(src)).unwrap();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // BrtBeginSst, one BrtSSTItem (a RichStr: flags, then 8,192 UTF-16 units), BrtEndSst.
    let record = |kind: &[u8], payload: &[u8]| {
        let mut out = kind.to_vec();
        let mut n = payload.len() as u32;
        loop {
            let b = (n & 0x7F) as u8;
            n >>= 7;
            out.push(if n > 0 { b | 0x80 } else { b });
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(payload);
        out
    };
    let mut item = vec![0u8];
    item.extend(8192u32.to_le_bytes());
    item.extend("x".repeat(8192).encode_utf16().flat_map(u16::to_le_bytes));
    let mut sst = record(&[0x9F, 0x01], &[1, 0, 0, 0, 1, 0, 0, 0]);
    sst.extend(record(&[0x13], &item));
    sst.extend(record(&[0xA0, 0x01], &[]));
    for i in 0..zin.len() {
        let mut f = zin.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let mut data = Vec::new();
        f.read_to_end(&mut data).unwrap();
        if name == "xl/sharedStrings.bin" {
            data = sst.clone();
        }
        z.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        z.write_all(&data).unwrap();
    }
    let bytes = z.finish().unwrap().into_inner();
    let app = TestApp::with(|a| a.limits.max_expanded_text_bytes = 100_000).await;
    let r = app.upload_and_read("bomb.xlsb", &bytes, json!({})).await;
    assert_error(&r, 413, "too_large");
    let msg = r.json["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("cells reference a shared string of 16389 bytes"),
        "{msg}"
    );
}
