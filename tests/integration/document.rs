//! The typed document (issue #42): `output: "json"` on every format family — units as
//! `include_units` gives them, each with typed blocks whose text is the text's; budgets
//! and `next` as in a text read; what it does not combine with refused plainly.

use serde_json::{json, Value};

use crate::common::*;

/// Whitespace runs one space, for comparing a block's text with the envelope's.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn document(r: &Resp) -> Vec<Value> {
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["document"]["units"]
        .as_array()
        .unwrap_or_else(|| panic!("no document: {}", r.json))
        .clone()
}

/// Every text a block holds (a table's cells one by one).
fn texts(b: &Value) -> Vec<String> {
    let s = |k: &str| b[k].as_str().map(str::to_string);
    match b["kind"].as_str().unwrap() {
        "table" => b["rows"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter())
            .filter_map(|c| c.as_str().map(str::to_string))
            .filter(|c| !c.trim().is_empty())
            .collect(),
        "field" => vec![s("value").unwrap()],
        "figure" => s("caption").or(s("alt")).into_iter().collect(),
        // A chart's text is its series, as the text gives them.
        _ => s("text").into_iter().collect(),
    }
}

#[tokio::test]
async fn every_format_family_gives_its_blocks() {
    let app = TestApp::new().await;
    // (name, bytes, unit kind, block kinds that must be there)
    let cases: &[(&str, Vec<u8>, &str, &[&str])] = &[
        (
            "notes.txt",
            fixture("text/forged_marker.txt"),
            "document",
            &["paragraph"],
        ),
        (
            "prices.csv",
            fixture("text/gbk.csv"),
            "document",
            &["table"],
        ),
        (
            "hidden.html",
            fixture("html/hidden.html"),
            "document",
            &["paragraph"],
        ),
        (
            "table.pdf",
            fixture("pdf/table.pdf"),
            "page",
            &["table", "paragraph"],
        ),
        (
            "headings.pdf",
            fixture("pdf/headings.pdf"),
            "page",
            &["heading", "paragraph"],
        ),
        (
            "note.pdf",
            fixture("pdf/hidden_note.pdf"),
            "page",
            &["note"],
        ),
        (
            "lists.docx",
            fixture("office/lists.docx"),
            "document",
            &["heading", "list_item"],
        ),
        (
            "side.docx",
            fixture("office/side_stories.docx"),
            "document",
            &["header", "footer"],
        ),
        (
            "deck.pptx",
            fixture("office/deck.pptx"),
            "slide",
            &["paragraph", "table", "note"],
        ),
        (
            "memo.odt",
            fixture("office/memo.odt"),
            "document",
            &["heading", "list_item"],
        ),
        (
            "plan.odp",
            fixture("office/plan.odp"),
            "slide",
            &["list_item", "table", "note"],
        ),
        (
            "contract.rtf",
            fixture("rtf/contract.rtf"),
            "document",
            &["paragraph"],
        ),
        (
            "voyage.epub",
            fixture("office/voyage.epub"),
            "chapter",
            &["heading", "paragraph"],
        ),
        (
            "book.xlsx",
            fixture("office/book.xlsx"),
            "sheet",
            &["table"],
        ),
        (
            "comments.xlsx",
            fixture("office/comments.xlsx"),
            "sheet",
            &["table", "note"],
        ),
        (
            "prices.ods",
            fixture("office/prices.ods"),
            "sheet",
            &["table"],
        ),
        (
            "mail.eml",
            std::fs::read(corpus_dir().join("eml/testRFC822-multipart.eml")).unwrap(),
            "document",
            &["field", "paragraph"],
        ),
        (
            "newsletter.eml",
            HTML_MAIL.as_bytes().to_vec(),
            "document",
            &["field", "heading", "paragraph", "list_item", "table"],
        ),
        (
            "hello.png",
            fixture("images/hello.png"),
            "document",
            &["line"],
        ),
        (
            "scan.pdf",
            std::fs::read(corpus_dir().join("pdf/testOCR.pdf")).unwrap(),
            "page",
            &["line"],
        ),
    ];
    for (name, bytes, kind, kinds) in cases {
        let id = app.upload_id(name, bytes).await;
        let r = app
            .read(json!({"file_id": id, "output": "json", "include_units": true, "max_chars": 200000}))
            .await;
        let doc = document(&r);
        let env = &r.json;
        // The text is the plain text read's, unchanged by the blocks beside it.
        let plain = app.read(json!({"file_id": id, "max_chars": 200000})).await;
        assert_eq!(
            env["text"], plain.json["text"],
            "{name}: text differs from a text read"
        );
        assert!(env.get("next").is_none(), "{name}: cut: {}", env["next"]);
        // The same units as `include_units` lists, in order.
        let units = env["units"].as_array().unwrap();
        let key = |u: &Value| (u["kind"].clone(), u["number"].clone(), u["name"].clone());
        let with_text: Vec<_> = units.iter().map(key).collect();
        let typed: Vec<_> = doc.iter().map(key).collect();
        assert_eq!(typed, with_text, "{name}: units");
        let text = squash(env["text"].as_str().unwrap());
        let mut seen = std::collections::BTreeSet::new();
        for u in &doc {
            assert_eq!(u["kind"], *kind, "{name}: {u}");
            assert_eq!(u["complete"], true, "{name}: {u}");
            for b in u["blocks"].as_array().unwrap() {
                let k = b["kind"].as_str().unwrap().to_string();
                // Every text a block holds is in the text, as the text shows it.
                for t in texts(b) {
                    let t = squash(&t);
                    assert!(
                        text.contains(&t),
                        "{name}: {k} block text {t:?} is not in the text"
                    );
                }
                if k == "line" && matches!(*name, "hello.png" | "scan.pdf") {
                    let bx = b["box"].as_array().expect("an OCR line has its box");
                    assert_eq!(bx.len(), 4, "{name}: {b}");
                    assert!(
                        b["confidence"].as_f64().is_some_and(|c| c > 0.5),
                        "{name}: {b}"
                    );
                }
                seen.insert(k);
            }
        }
        for k in *kinds {
            assert!(
                seen.contains(*k),
                "{name}: no {k} block in {seen:?}: {doc:?}"
            );
        }
    }
}

/// What the blocks say of structure: levels, labels, cells and header rows, parts.
#[tokio::test]
async fn blocks_carry_levels_labels_cells_and_parts() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "lists.docx",
            &fixture("office/lists.docx"),
            json!({"output": "json"}),
        )
        .await;
    let blocks = document(&r)[0]["blocks"].as_array().unwrap().clone();
    let item = |text: &str| {
        blocks
            .iter()
            .find(|b| b["kind"] == "list_item" && b["text"] == text)
            .unwrap_or_else(|| panic!("no item {text}: {blocks:?}"))
            .clone()
    };
    assert_eq!(item("Renewal")["label"], "1.2.1.");
    assert_eq!(item("Renewal")["level"], 2);
    assert_eq!(item("Parties")["level"], 1);
    assert!(blocks.iter().any(|b| b["kind"] == "heading"
        && b["level"] == 2
        && b["text"] == "Article I Definitions"));

    // Word's `mode: "text"` leaves tables out of the text, and so of the blocks.
    let id = app
        .upload_id("report.docx", &fixture("office/report.docx"))
        .await;
    let kinds = |r: &Resp| -> Vec<String> {
        document(r)[0]["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let with = app.read(json!({"file_id": id, "output": "json"})).await;
    let without = app
        .read(json!({"file_id": id, "output": "json", "mode": "text"}))
        .await;
    assert!(kinds(&with).contains(&"table".to_string()));
    assert!(!kinds(&without).contains(&"table".to_string()));

    // A PDF's ruled table as cells (a pipe inside a cell is a character of it).
    let r = app
        .upload_and_read(
            "table.pdf",
            &fixture("pdf/table.pdf"),
            json!({"output": "json"}),
        )
        .await;
    let page = &document(&r)[0];
    let table = page["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["kind"] == "table")
        .unwrap()
        .clone();
    assert_eq!(
        table["rows"],
        json!([
            ["Item", "Qty", "Price"],
            ["Apples", "3", "1.20"],
            ["Pears | ripe", "12", "0.80"]
        ])
    );

    // A CSV's first record is its header when the read starts there, not otherwise.
    let id = app.upload_id("prices.csv", &fixture("text/gbk.csv")).await;
    let first = app.read(json!({"file_id": id, "output": "json"})).await;
    let t = &document(&first)[0]["blocks"][0];
    assert_eq!(t["kind"], "table");
    assert_eq!(t["header_rows"], 1, "{t}");
    let later = app
        .read(json!({"file_id": id, "output": "json", "offset": 1}))
        .await;
    let t2 = &document(&later)[0]["blocks"][0];
    assert_eq!(t2["header_rows"], 0, "{t2}");
    assert_eq!(
        t2["rows"][0], t["rows"][1],
        "offset 1 starts at the second record"
    );

    // HTML: a table's header row from `th`, a list's numbers, a figure's caption.
    let html = br#"<html><head><title>T</title></head><body><h2>Menu</h2>
<ol start="3"><li>Soup</li><li>Bread<ul><li>rye</li></ul></li></ol>
<table><tr><th>Dish</th><th>Price</th></tr><tr><td>Soup</td><td>4</td></tr></table>
<figure><img alt="soup.png"><figcaption>A bowl of soup</figcaption></figure><pre>line one
line two</pre></body></html>"#;
    let r = app
        .upload_and_read("menu.html", html, json!({"output": "json"}))
        .await;
    let blocks = document(&r)[0]["blocks"].clone();
    let kinds: Vec<&str> = blocks
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "heading",
            "heading",
            "list_item",
            "list_item",
            "list_item",
            "table",
            "figure",
            "code"
        ],
        "{blocks}"
    );
    assert_eq!(blocks[1]["level"], 2);
    assert_eq!(blocks[2]["label"], "3.");
    assert_eq!(blocks[3]["label"], "4.");
    assert_eq!(blocks[4]["level"], 1);
    assert_eq!(blocks[5]["header_rows"], 1);
    assert_eq!(blocks[5]["rows"], json!([["Dish", "Price"], ["Soup", "4"]]));
    // A caption is the figure's (a picture's alt text is not in the text: no block).
    assert_eq!(blocks[6]["caption"], "A bowl of soup");

    // A PowerPoint's speaker notes and comments are notes of their parts.
    let r = app
        .upload_and_read(
            "comments.pptx",
            &fixture("office/comments.pptx"),
            json!({"output": "json"}),
        )
        .await;
    let slide = &document(&r)[0];
    assert!(slide["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["kind"] == "note"
            && b["part"] == "comments"
            && b["text"]
                .as_str()
                .unwrap()
                .contains("Check the revenue figure")));
    assert!(slide["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["kind"] == "note" && b["part"] == "notes"));
}

/// Every block of a document read on with `next` from `first` to the end (`next` keeps
/// `output`), and how many reads that took.
async fn read_on(app: &TestApp, id: &str, name: &str, budget: u64) -> (Vec<Value>, usize) {
    let mut got: Vec<Value> = Vec::new();
    let mut body = json!({"file_id": id, "output": "json", "max_chars": budget});
    let mut reads = 0;
    loop {
        reads += 1;
        assert!(reads < 300, "{name}: no end");
        let r = app.read(body.clone()).await;
        for u in &document(&r) {
            got.extend(u["blocks"].as_array().unwrap().clone());
        }
        let Some(next) = r.json.get("next").cloned() else {
            break;
        };
        assert_eq!(r.json["truncated"], true, "{name}");
        assert_eq!(next["output"], "json", "{name}: next keeps the output");
        body = json!({"file_id": id});
        body.as_object_mut()
            .unwrap()
            .extend(next.as_object().unwrap().clone());
        if body.get("max_chars").is_none() {
            body["max_chars"] = json!(budget);
        }
    }
    (got, reads)
}

/// A cut read gives the blocks its text shows, and `next` gives the rest: read on to the
/// end in small reads, the blocks are those of large reads, none twice, none lost.
#[tokio::test]
async fn json_reads_on_with_next_to_the_whole_document() {
    let app = TestApp::new().await;
    for (name, rel, budget) in [
        ("long.docx", "office/long.docx", 600),
        ("thirty.pdf", "pdf/thirty_short.pdf", 400),
        ("deck.pptx", "office/deck.pptx", 60),
        ("book.xlsx", "office/book.xlsx", 300),
    ] {
        let id = app.upload_id(name, &fixture(rel)).await;
        let (all, _) = read_on(&app, &id, name, 1_000_000).await;
        assert!(all.len() > 2, "{name}: {all:?}");
        let (got, reads) = read_on(&app, &id, name, budget).await;
        assert!(reads > 1, "{name}: the budget did not cut");
        if name == "book.xlsx" {
            // A sheet read on in parts is several tables: the same rows, in order.
            let rows = |bs: &[Value]| -> Vec<Value> {
                bs.iter()
                    .flat_map(|b| b["rows"].as_array().cloned().unwrap_or_default())
                    .collect()
            };
            assert_eq!(rows(&got), rows(&all), "{name}: rows read on differ");
            continue;
        }
        assert_eq!(got, all, "{name}: blocks read on differ from large reads");
    }
}

#[tokio::test]
async fn json_is_refused_with_a_query_or_a_byte_window() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("notes.txt", &fixture("text/forged_marker.txt"))
        .await;
    let r = app
        .read(json!({"file_id": id, "output": "json", "query": "page"}))
        .await;
    assert_error(&r, 400, "unsupported_option");
    let r = app
        .read(json!({"file_id": id, "output": "json", "byte_offset": 0, "byte_length": 10}))
        .await;
    assert_error(&r, 400, "unsupported_option");
    // Without `output: "json"` there is no document.
    let r = app.read(json!({"file_id": id})).await;
    assert!(r.json.get("document").is_none(), "{}", r.json);
}

/// A line of the document that reads like a page marker is a line of its one page.
#[tokio::test]
async fn a_forged_marker_is_a_block_not_a_unit() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "forged.pdf",
            &fixture("pdf/forged_marker.pdf"),
            json!({"output": "json"}),
        )
        .await;
    let doc = document(&r);
    assert_eq!(doc.len(), 1, "{doc:?}");
    assert_eq!(doc[0]["number"], 1);
    assert!(doc[0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["text"]
            .as_str()
            .is_some_and(|t| t.contains("--- Page 3 ---"))));
}

/// A line longer than the budget: with blocks, `next` reads it again whole by lines (a
/// byte window would be refused), its part shown is no block; an image's text cut short
/// comes again whole, so none of its lines is a block of the cut read.
#[tokio::test]
async fn a_unit_read_again_whole_gives_its_blocks_once() {
    let app = TestApp::new().await;
    let long = format!(
        "first paragraph\n\n{}\n\nlast paragraph\n",
        "word ".repeat(200)
    );
    let id = app.upload_id("long.txt", long.as_bytes()).await;
    let r = app
        .read(json!({"file_id": id, "output": "json", "max_chars": 100}))
        .await;
    let doc = document(&r);
    assert_eq!(doc[0]["complete"], false, "{}", r.json);
    assert_eq!(doc[0]["blocks"].as_array().unwrap().len(), 1, "{}", r.json);
    let next = r.json["next"].clone();
    assert!(next.get("byte_offset").is_none(), "{next}");
    assert_eq!(next["offset"], 2, "{next}");
    let mut body = json!({"file_id": id});
    body.as_object_mut()
        .unwrap()
        .extend(next.as_object().unwrap().clone());
    let r2 = app.read(body).await;
    let blocks = document(&r2)[0]["blocks"].as_array().unwrap().clone();
    assert!(
        blocks[0]["text"].as_str().unwrap().starts_with("word word"),
        "{blocks:?}"
    );
    assert_eq!(
        blocks[0]["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count(),
        200
    );

    let r = app
        .upload_and_read(
            "hello.png",
            &fixture("images/hello.png"),
            json!({"output": "json", "max_chars": 5}),
        )
        .await;
    let doc = document(&r);
    assert!(r.json["next"]["max_chars"].is_u64(), "{}", r.json);
    assert_eq!(doc[0]["complete"], false, "{}", r.json);
    assert!(
        doc[0]["blocks"].as_array().unwrap().is_empty(),
        "{}",
        r.json
    );
}

/// An e-mail whose only body is HTML, with a heading, a list and a table.
const HTML_MAIL: &str = "From: Ops <ops@example.com>\r\nTo: team@example.com\r\nSubject: Weekly numbers\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<html><body><h1>Weekly numbers</h1><p>Orders rose again this week.</p><ul><li>North up</li><li>South flat</li></ul><table><tr><th>Region</th><th>Orders</th></tr><tr><td>North</td><td>120</td></tr><tr><td>South</td><td>80</td></tr></table><p>See you Monday.</p></body></html>\r\n";

/// An HTML body gives its own blocks (heading, list items, a table with its header row),
/// not paragraphs of its lines; a line window gives the blocks of the lines it shows.
#[tokio::test]
async fn an_html_mail_body_gives_its_blocks() {
    let app = TestApp::new().await;
    let id = app.upload_id("weekly.eml", HTML_MAIL.as_bytes()).await;
    let r = app.read(json!({"file_id": id, "output": "json"})).await;
    let blocks = document(&r)[0]["blocks"].as_array().unwrap().clone();
    let kinds: Vec<&str> = blocks.iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "field",
            "field",
            "field",
            "heading",
            "paragraph",
            "list_item",
            "list_item",
            "table",
            "paragraph"
        ],
        "{blocks:?}"
    );
    let table = &blocks[7];
    assert_eq!(
        table["rows"],
        json!([["Region", "Orders"], ["North", "120"], ["South", "80"]])
    );
    assert_eq!(table["header_rows"], 1);
    assert_eq!(blocks[3]["text"], "Weekly numbers");
    assert_eq!(blocks[5]["text"], "North up");

    // The body's lines from the list on: the blocks that start there, nothing before.
    let text = app.read(json!({"file_id": id})).await;
    // The headers, a blank line, then the body's lines (`offset` counts those).
    let lines: Vec<&str> = text.json["text"].as_str().unwrap().lines().collect();
    let body_from = lines.iter().position(|l| l.is_empty()).unwrap() + 1;
    let at = lines.iter().position(|l| l.contains("North up")).unwrap() - body_from;
    let r = app
        .read(json!({"file_id": id, "output": "json", "offset": at}))
        .await;
    let kinds: Vec<String> = document(&r)[0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "field",
            "field",
            "field",
            "list_item",
            "list_item",
            "table",
            "paragraph"
        ]
    );
}

/// A text body's paragraphs are those of the lines a window shows (never text the window
/// leaves out), beside an HTML part's own blocks.
#[tokio::test]
async fn a_text_mail_body_gives_the_paragraphs_a_window_shows() {
    let app = TestApp::new().await;
    let mail = "From: a@example.com\r\nSubject: Lines\r\n\r\nA1\r\nA2\r\nA3\r\n\r\nB1\r\n";
    let id = app.upload_id("lines.eml", mail.as_bytes()).await;
    let body = |r: &Resp| -> Vec<Value> {
        document(r)[0]["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["kind"] != "field")
            .cloned()
            .collect()
    };
    let all = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(
        body(&all),
        [
            json!({"kind": "paragraph", "text": "A1\nA2\nA3"}),
            json!({"kind": "paragraph", "text": "B1"})
        ]
    );
    let mid = app
        .read(json!({"file_id": id, "output": "json", "offset": 1, "limit": 2}))
        .await;
    assert_eq!(body(&mid), [json!({"kind": "paragraph", "text": "A2\nA3"})]);
    let one = app
        .read(json!({"file_id": id, "output": "json", "offset": 0, "limit": 1}))
        .await;
    assert_eq!(body(&one), [json!({"kind": "paragraph", "text": "A1"})]);
}
