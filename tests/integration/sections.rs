//! The outline and `section` reads (issue #44 item 7): the outline of a document's
//! headings (a PDF's by font size and bookmarks, an OpenDocument's and an EPUB's by their
//! markup) in `output: "json"` and MCP's `document_info`; `section` reads exactly one
//! entry — by id, heading path, title or number — in every output, across pages, with
//! budgets and `next`; the errors of a section that is not there or a range beside it.

use serde_json::{json, Value};

use crate::common::*;

async fn read_ok(app: &TestApp, body: Value) -> Value {
    let r = app.read(body.clone()).await;
    assert_eq!(r.status, 200, "{} for {body}", r.json);
    r.json
}

fn entries(v: &Value) -> Vec<(String, u64, String)> {
    v.as_array()
        .unwrap_or_else(|| panic!("no outline: {v}"))
        .iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["level"].as_u64().unwrap(),
                e["title"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_pdfs_outline_names_its_sections() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("survey.pdf", &fixture("pdf/sections.pdf"))
        .await;

    // The outline: by font size, nested by level, each entry on its page.
    let whole = read_ok(&app, json!({"file_id": id, "output": "json"})).await;
    let outline = &whole["outline"];
    let want = [
        ("s1", 1, "Field Survey Report"),
        ("s1.1", 2, "1 Scope"),
        ("s1.1.1", 3, "1.1 Sites"),
        ("s1.1.2", 3, "1.2 Seasons"),
        ("s1.2", 2, "2 Methods"),
        ("s1.3", 2, "3 Results"),
    ];
    assert_eq!(
        entries(outline),
        want.iter()
            .map(|(i, l, t)| (i.to_string(), *l, t.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(outline[3]["unit"], json!({"kind": "page", "number": 2}));
    assert_eq!(
        outline[3]["path"],
        json!(["Field Survey Report", "1 Scope", "1.2 Seasons"])
    );
    // A read from elsewhere than the start numbers no outline of its own.
    let later = read_ok(
        &app,
        json!({"file_id": id, "output": "json", "pages": "2-3"}),
    )
    .await;
    assert!(later.get("outline").is_none(), "{later}");

    // Section 1 runs from its heading over onto page 2, up to "2 Methods"; its
    // subsections with it; nothing of the title above or the sections after.
    let s = read_ok(&app, json!({"file_id": id, "section": "s1.1"})).await;
    let t = s["text"].as_str().unwrap();
    assert!(t.starts_with("--- Page 1 ---\n1 Scope\n"), "{t}");
    for line in [
        "The survey covers three river valleys.",
        "1.1 Sites",
        "Each site was visited twice by the field team.",
        "--- Page 2 ---",
        "Sites were chosen for their access roads.",
        "1.2 Seasons",
        "Visits fell in spring and in autumn.",
    ] {
        assert!(t.contains(line), "{line:?} missing: {t}");
    }
    for outside in [
        "Field Survey Report\n",
        "2 Methods",
        "Birds were",
        "3 Results",
    ] {
        assert!(!t.contains(outside), "{outside:?} is not section 1: {t}");
    }
    assert!(s.get("next").is_none() && s["truncated"] == false, "{s}");
    assert_eq!(
        entries(&s["outline"])
            .iter()
            .map(|e| e.0.as_str())
            .collect::<Vec<_>>(),
        ["s1.1", "s1.1.1", "s1.1.2"]
    );
    assert_eq!(s["char_count"], json!(t.chars().count()));

    // The same section by its heading path, by its title, by its number; a subsection.
    for asked in ["Field Survey Report > 1 Scope", "1 scope", "1", "Scope"] {
        let again = read_ok(&app, json!({"file_id": id, "section": asked})).await;
        assert_eq!(again["text"], s["text"], "{asked}");
    }
    let sub = read_ok(&app, json!({"file_id": id, "section": "1.2"})).await;
    assert_eq!(
        sub["text"],
        json!("--- Page 2 ---\n1.2 Seasons\n\nVisits fell in spring and in autumn.\n")
    );
    // The last section runs to the document's end.
    let last = read_ok(&app, json!({"file_id": id, "section": "s1.3"})).await;
    assert!(last["text"]
        .as_str()
        .unwrap()
        .ends_with("The third valley lost its wetland in a flood.\n"));

    // Markdown: its headings marked, the running header left out (the plain text keeps
    // the one on page 2, as a plain read does).
    assert!(t.contains("Field Survey Report - draft"), "{t}");
    let md = read_ok(
        &app,
        json!({"file_id": id, "section": "s1.1", "output": "markdown"}),
    )
    .await;
    let m = md["text"].as_str().unwrap();
    assert!(
        m.starts_with("--- Page 1 ---\n## 1 Scope\n") && m.contains("### 1.2 Seasons"),
        "{m}"
    );
    assert!(!m.contains("draft"), "{m}");
    assert_eq!(md["next"], Value::Null);

    // json: the section's blocks by page; chunks: under the section's heading path.
    let js = read_ok(
        &app,
        json!({"file_id": id, "section": "s1.1", "output": "json"}),
    )
    .await;
    let units = js["document"]["units"].as_array().unwrap();
    assert_eq!(units.len(), 2, "{js}");
    assert_eq!(
        units[0]["blocks"][0],
        json!({"kind": "heading", "level": 2, "text": "1 Scope", "bbox": units[0]["blocks"][0]["bbox"]})
    );
    assert_eq!(js["text"], s["text"]);
    let ch = read_ok(
        &app,
        json!({"file_id": id, "section": "s1.1", "output": "chunks", "chunk_tokens": 32}),
    )
    .await;
    let chunks = ch["chunks"].as_array().unwrap();
    assert!(chunks.len() >= 2, "{ch}");
    for c in chunks {
        let path = c["heading_path"].as_array().unwrap();
        assert_eq!(
            path[..2],
            [json!("Field Survey Report"), json!("1 Scope")],
            "{c}"
        );
        assert!(!c["text"].as_str().unwrap().contains("2 Methods"));
    }

    // A budget cuts between blocks; `next` reads on in the section, and the pieces join
    // into the whole section exactly.
    for budget in [json!({"max_chars": 60}), json!({"max_tokens": 50})] {
        let mut first = json!({"section": "s1.1"});
        first
            .as_object_mut()
            .unwrap()
            .extend(budget.as_object().unwrap().clone());
        let (joined, reads) = follow(&app, &id, first).await;
        assert!(reads >= 3, "{budget}: {reads} reads");
        assert_eq!(joined, t, "{budget}");
    }
    let cut = read_ok(
        &app,
        json!({"file_id": id, "section": "s1.1", "max_chars": 60}),
    )
    .await;
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["next"]["section"], "s1.1");
    assert!(cut["next"]["section_block"].as_u64().unwrap() >= 1, "{cut}");
    // What was read is the section's pages, not the whole read's.
    assert_eq!(s["page_range_read"], "1-2", "{s}");
    assert_eq!(s["pages_read"], 2, "{s}");
    // Chunks of a read on inside the section stand under the whole section's path.
    let on = read_ok(
        &app,
        json!({"file_id": id, "section": "s1.1", "section_block": 1, "output": "chunks"}),
    )
    .await;
    for c in on["chunks"].as_array().unwrap() {
        let path = c["heading_path"].as_array().unwrap();
        assert_eq!(
            path[..2],
            [json!("Field Survey Report"), json!("1 Scope")],
            "{c}"
        );
    }
    // A block longer than the budget: as much as fits, and the budget that reads it.
    let tiny = read_ok(
        &app,
        json!({"file_id": id, "section": "s1.3", "max_chars": 20}),
    )
    .await;
    assert_eq!(tiny["next"]["section_block"], 0, "{tiny}");
    assert!(tiny["next"]["max_chars"].as_u64().unwrap() > 20, "{tiny}");
}

#[tokio::test]
async fn sections_of_opendocument_and_epub() {
    let app = TestApp::new().await;
    let odt = app.upload_id("memo.odt", &fixture("office/memo.odt")).await;
    let whole = read_ok(&app, json!({"file_id": odt, "output": "json"})).await;
    let titles: Vec<String> = entries(&whole["outline"])
        .into_iter()
        .map(|e| e.2)
        .collect();
    assert_eq!(
        titles,
        [
            "1. Introduction",
            "1.1. Scope",
            "1.2. Figures",
            "2. Closing"
        ]
    );
    let intro = read_ok(&app, json!({"file_id": odt, "section": "Introduction"})).await;
    let t = intro["text"].as_str().unwrap();
    assert!(
        t.starts_with("1. Introduction\n") && t.contains("1.2. Figures"),
        "{t}"
    );
    assert!(!t.contains("2. Closing"), "{t}");

    let epub = app
        .upload_id("voyage.epub", &fixture("office/voyage.epub"))
        .await;
    let harbour = read_ok(&app, json!({"file_id": epub, "section": "s1"})).await;
    let h = harbour["text"].as_str().unwrap();
    // A chapter's heading and the next chapter's subsection under it; not the next
    // chapter of its level.
    assert!(
        h.contains("--- Chapter 1: ") && h.contains("--- Chapter 2: "),
        "{h}"
    );
    assert!(h.contains("They sailed home"), "{h}");
    assert!(!h.contains("Storm"), "{h}");
}

#[tokio::test]
async fn a_section_that_is_not_there_or_beside_a_range_is_an_error() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("survey.pdf", &fixture("pdf/sections.pdf"))
        .await;
    let r = app.read(json!({"file_id": id, "section": "s9"})).await;
    assert_error(&r, 416, "out_of_range");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("s1.1 \"1 Scope\""),
        "{}",
        r.json
    );
    let r = app
        .read(json!({"file_id": id, "section": "s1", "pages": "2"}))
        .await;
    assert_error(&r, 400, "unsupported_option");
    let r = app.read(json!({"file_id": id, "section_block": 2})).await;
    assert_error(&r, 400, "unsupported_option");
    for bad in [String::new(), ">".repeat(2001)] {
        let r = app.read(json!({"file_id": id, "section": bad})).await;
        assert_error(&r, 400, "invalid_option");
    }
    // Blank is a name the schema allows; it names no entry (not one whose title is all
    // punctuation), and the answer lists the outline.
    let r = app.read(json!({"file_id": id, "section": "  "})).await;
    assert_error(&r, 416, "out_of_range");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("s1.1 \"1 Scope\""),
        "{}",
        r.json
    );
    let r = app
        .read(json!({"file_id": id, "section": "s1.1.2", "section_block": 40}))
        .await;
    assert_error(&r, 416, "out_of_range");
    // A document without headings has no outline to name a section of.
    let plain = app
        .upload_id("notes.txt", b"just a line\nand another\n")
        .await;
    let r = app
        .read(json!({"file_id": plain, "section": "Intro"}))
        .await;
    assert_error(&r, 416, "out_of_range");
}
