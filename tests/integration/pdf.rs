//! PDFs through `POST /read`: page markers, ranges, queries, passwords, corrupt files,
//! pages that need OCR (no text layer, garbled layer), and the `next` property.

use serde_json::{json, Value};

use crate::common::*;

async fn read_fixture(app: &TestApp, name: &str, opts: Value) -> Resp {
    app.upload_and_read(name, &fixture(&format!("pdf/{name}")), opts)
        .await
}

fn corpus_pdf(name: &str) -> Vec<u8> {
    std::fs::read(corpus_dir().join("pdf").join(name))
        .unwrap_or_else(|e| panic!("corpus pdf/{name}: {e}"))
}

#[tokio::test]
async fn pages_come_with_markers_and_metadata() {
    let app = TestApp::new().await;
    let r = read_fixture(&app, "three_pages.pdf", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.starts_with("--- Page 1 ---\nAlpha page one\n"),
        "{text}"
    );
    assert!(text.contains("\n--- Page 2 ---\nBeta page two\n"));
    assert!(text.contains("\n--- Page 3 ---\nGamma page three\n"));
    assert_eq!(r.json["format"], "pdf");
    assert_eq!(r.json["mime"], "application/pdf");
    assert_eq!(r.json["total_pages"], 3);
    assert_eq!(r.json["pages_read"], 3);
    assert_eq!(r.json["skipped_pages"], json!([]));
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "no_ocr_needed");
    let m = &r.json["metadata"];
    assert_eq!(m["title"], "docreader fixture");
    assert_eq!(m["author"], "docreader tests");
    assert_eq!(m["producer"], "fixtures/pdfgen.py");
    assert_eq!(m["created"], "2024-01-02T03:04:05Z");
    assert_eq!(
        m["page_size"],
        json!({"width_pt": 595.0, "height_pt": 842.0})
    );
    assert_eq!(r.json["char_count"], text.chars().count());
}

#[tokio::test]
async fn page_ranges() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("three_pages.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let read = |spec: &str| app.read(json!({"file_id": id, "pages": spec}));
    let r = read("2").await;
    assert!(r.json["text"]
        .as_str()
        .unwrap()
        .starts_with("--- Page 2 ---\nBeta"));
    assert!(!r.json["text"].as_str().unwrap().contains("Page 1 ---"));
    let r = read("3,1").await;
    let t = r.json["text"].as_str().unwrap();
    assert!(t.find("--- Page 1 ---").unwrap() < t.find("--- Page 3 ---").unwrap());
    assert_eq!(r.json["page_range_read"], "1,3");
    let r = app
        .read(json!({"file_id": id, "page_range": "2\u{2013}3"}))
        .await;
    assert_eq!(r.json["page_range_read"], "2-3");
    let r = read("2-9").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["page_range_read"], "2-3");
    assert!(
        r.json["warnings"][0].as_str().unwrap().contains("clipped"),
        "{}",
        r.json
    );
    let r = read("5").await;
    assert_error(&r, 416, "out_of_range");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has 3 pages"),
        "{}",
        r.json
    );
    assert_error(&read("3-1").await, 400, "inverted_range");
    for bad in ["abc", "2-", ""] {
        assert_error(&read(bad).await, 400, "invalid_range");
    }
}

#[tokio::test]
async fn queries_are_grouped_by_page() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("three_pages.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    let r = app
        .read(json!({"file_id": id, "query": "needle", "context_lines": 0}))
        .await;
    assert_eq!(r.json["matches"], 3);
    assert_eq!(
        r.json["text"],
        "--- Page 2 ---\n2:The needle is on this line.\n3:Another line after the needle.\n--- Page 3 ---\n2:A second NEEDLE, in capitals.\n"
    );
    let r = app
        .read(json!({"file_id": id, "query": "^Beta", "query_mode": "regex", "context_lines": 1}))
        .await;
    assert_eq!(
        r.json["text"],
        "--- Page 2 ---\n1:Beta page two\n2-The needle is on this line.\n"
    );
    let r = app.read(json!({"file_id": id, "query": "zebra"})).await;
    assert_eq!(
        (
            r.status.as_u16(),
            r.json["matches"].clone(),
            r.json["text"].clone()
        ),
        (200, json!(0), json!(""))
    );
    assert_error(
        &app.read(json!({"file_id": id, "query": "[", "query_mode": "regex"}))
            .await,
        400,
        "invalid_option",
    );
}

#[tokio::test]
async fn options_that_do_not_fit_pdf() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("three_pages.pdf", &fixture("pdf/three_pages.pdf"))
        .await;
    for opt in ["offset", "limit", "byte_offset", "max_cells"] {
        let r = app.read(json!({"file_id": id, opt: 1})).await;
        assert_error(&r, 400, "unsupported_option");
        assert!(r.json["error"]["hint"].as_str().unwrap().contains("pages"));
    }
    assert_error(
        &app.read(json!({"file_id": id, "ocr": "cloud-magic"})).await,
        400,
        "invalid_option",
    );
}

#[tokio::test]
async fn passwords() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("locked.pdf", &corpus_pdf("libreoffice-writer-password.pdf"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_error(&r, 422, "encrypted");
    assert!(r.json["error"]["hint"]
        .as_str()
        .unwrap()
        .contains("password"));
    let r = app.read(json!({"file_id": id, "password": "nope"})).await;
    assert_error(&r, 422, "encrypted");
    assert!(
        r.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("wrong"),
        "{}",
        r.json
    );
    let r = app
        .read(json!({"file_id": id, "password": "openpassword"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(!r.json["text"].as_str().unwrap().trim().is_empty());
    // AES-256 (R6) with a password that needs SASLprep.
    let id = app
        .upload_id("r6.pdf", &corpus_pdf("saslprep-r6.pdf"))
        .await;
    let r = app
        .read(json!({"file_id": id, "password": "S\u{AA}SL\u{AD}prep"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let id = app.upload_id("rc4.pdf", &corpus_pdf("pr6531_1.pdf")).await;
    assert_error(&app.read(json!({"file_id": id})).await, 422, "encrypted");
    // The right password opens it; its only page is a scan, read by OCR.
    let r = app
        .read(json!({"file_id": id, "password": "asdfasdf"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_pages"], 1);
    assert!(
        r.json["text"].as_str().unwrap().contains("memecrunch.com"),
        "{}",
        r.json["text"]
    );
}

#[tokio::test]
async fn corrupt_files_are_corrupt() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "broken.pdf",
            b"%PDF-1.7\nthis is not really a pdf at all\n",
            json!({}),
        )
        .await;
    assert_error(&r, 422, "corrupt");
    let r = app
        .upload_and_read("bug.pdf", &corpus_pdf("bug1020226.pdf"), json!({}))
        .await;
    assert_error(&r, 422, "corrupt");
    // The service is still fine afterwards.
    assert_eq!(
        read_fixture(&app, "three_pages.pdf", json!({}))
            .await
            .status,
        200
    );
}

/// A page of code is two thirds symbols, which the garbled-layer verdict takes for glyph
/// soup; OCR read it worse (`0xOF`, `'\0'` as `10`, `[#;J`). OCR runs, reads the same words,
/// and the text layer stays the page's text, exact, in every output (#43 item 2: never a
/// worse OCR reading in place of a text layer).
#[tokio::test]
async fn a_layer_ocr_confirms_is_kept() {
    let app = TestApp::new().await;
    let lines = [
        "*p++ = (c >= 'a' && c <= 'z') ? c - 32 : c;",
        "if (!(f & 0x0F)) { *q-- = '\\0'; }",
        "$$ref{key}[0] =~ s/(\\w+)/<$1>/g;",
        "while (<>) { chomp; print \"$.: $_\\n\" if /^[#;]/; }",
    ];
    let r = read_fixture(&app, "symbol_code.pdf", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    for l in lines {
        assert!(text.contains(l), "{l:?} in {text}");
    }
    assert_eq!(r.json["ocr_pages"], 0, "{}", r.json);
    assert_eq!(r.json["pages_ocr"], json!([]));
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "no_ocr_needed");
    assert!(
        r.json["warnings"]
            .to_string()
            .contains("OCR read the same words"),
        "{}",
        r.json["warnings"]
    );
    // The same lines as Markdown and as json blocks.
    let md = read_fixture(&app, "symbol_code.pdf", json!({"output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    let md_text = md.json["text"].as_str().unwrap();
    assert!(md_text.contains("0x0F"), "{md_text}");
    let js = read_fixture(&app, "symbol_code.pdf", json!({"output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let blocks = js.json["document"]["units"][0]["blocks"].to_string();
    assert!(blocks.contains("chomp; print"), "{blocks}");
    // Forced OCR still gives OCR's reading.
    let forced = read_fixture(&app, "symbol_code.pdf", json!({"ocr": "force"})).await;
    assert_eq!(forced.json["ocr_pages"], 1, "{}", forced.json);
}

#[tokio::test]
async fn garbled_layers_are_replaced_by_ocr() {
    let app = TestApp::new().await;
    let r = read_fixture(&app, "garbled_layer.pdf", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["pages_ocr"][0]["page"], 2);
    assert_eq!(r.json["pages_ocr"][0]["reason"], "garbled_text");
    assert_eq!(r.json["pages_ocr"][0]["status"], "done");
    assert!(r.json["pages_ocr"][0]["confidence"].as_f64().unwrap() > 0.8);
    assert_eq!(r.json["skipped_pages"], json!([]));
    assert_eq!(r.json["ocr_pages"], 1);
    assert_eq!(r.json["ocr_engine"], "ppocr");
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "good");
    let text = r.json["text"].as_str().unwrap();
    assert!(
        !text.chars().any(|c| ('\u{E000}'..='\u{F8FF}').contains(&c)),
        "private-use garbage leaked: {text}"
    );
    // The glyphs render as the words the text layer hid.
    let page2 = text.split("--- Page 2 ---").nth(1).unwrap();
    assert!(page2.contains("quick brown fox"), "{page2}");
    // With ocr none: flagged and skipped, never passed through.
    let r = read_fixture(&app, "garbled_layer.pdf", json!({"ocr": "none"})).await;
    assert_eq!(r.json["skipped_pages"], json!([2]));
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "no_ocr_engine");
    assert!(!r.json["text"]
        .as_str()
        .unwrap()
        .chars()
        .any(|c| ('\u{E000}'..='\u{F8FF}').contains(&c)));
    assert!(r.json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("none")));
}

#[tokio::test]
async fn scanned_pdfs_are_ocrd() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "scan.pdf",
            &corpus_pdf("testOCR.pdf"),
            json!({"include_boxes": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "good");
    assert_eq!(
        r.json["pages_ocr"],
        json!([{"page": 1, "reason": "no_text_layer", "confidence": r.json["pages_ocr"][0]["confidence"], "status": "done"}])
    );
    assert!(
        r.json["text"]
            .as_str()
            .unwrap()
            .contains("Happy New Year 2003!"),
        "{}",
        r.json["text"]
    );
    assert!(r.json["boxes"][0]["lines"][0]["box"].is_array());
    // ocr none: no text and the flags that say why.
    let r = app
        .upload_and_read(
            "scan.pdf",
            &corpus_pdf("testOCR.pdf"),
            json!({"ocr": "none"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["skipped_pages"], json!([1]));
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "no_ocr_engine");
    assert_eq!(r.json["text"], "");
    // A page of images without text (an 8×8 gradient): OCR ran, found nothing: degraded.
    let r = read_fixture(&app, "scan_page.pdf", json!({})).await;
    assert_eq!(r.json["pages_ocr"][0]["reason"], "no_text_layer");
    assert_eq!(r.json["pages_ocr"][0]["status"], "done");
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "degraded");
    // ocr force: every page OCR'd, with the reason said.
    let r = read_fixture(
        &app,
        "three_pages.pdf",
        json!({"ocr": "force", "pages": "1"}),
    )
    .await;
    assert_eq!(r.json["pages_ocr"][0]["reason"], "forced");
    assert!(
        r.json["text"].as_str().unwrap().contains("Alpha page one"),
        "{}",
        r.json["text"]
    );
    // A blank page is not a scan: empty text, said plainly.
    let r = read_fixture(&app, "blank.pdf", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], "");
    assert_eq!(r.json["ocr_quality"]["quality_flag"], "no_ocr_needed");
    assert!(r.json["note"].is_string());
    assert_error(
        // A language no installed engine reads (Klingon), even where no page needs OCR.
        &read_fixture(&app, "three_pages.pdf", json!({"ocr_lang": "tlh"})).await,
        400,
        "unsupported_option",
    );
}

#[tokio::test]
async fn following_next_covers_every_page_once() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    let whole = app
        .read(json!({"file_id": id, "max_chars": 1_000_000}))
        .await;
    let whole_text = whole.json["text"].as_str().unwrap().to_string();
    assert_eq!(whole.json["truncated"], false);
    for (first, expect_from) in [
        (json!({"max_chars": 5000}), 1),
        (json!({"max_chars": 9000, "pages": "4-27"}), 4),
    ] {
        let mut body = first.clone();
        body["file_id"] = json!(id);
        let mut got = String::new();
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds < 50);
            let r = app.read(body.clone()).await;
            assert_eq!(r.status, 200, "{}", r.json);
            assert_eq!(
                r.json["char_count"].as_u64().unwrap() as usize
                    >= strip_truncation(r.json["text"].as_str().unwrap())
                        .chars()
                        .count(),
                true
            );
            got.push_str(strip_truncation(r.json["text"].as_str().unwrap()));
            let Some(next) = r.json.get("next") else {
                break;
            };
            body = json!({"file_id": id, "max_chars": first["max_chars"], "pages": next["pages"]});
        }
        assert!(rounds > 2);
        let last = if expect_from == 1 { 30 } else { 27 };
        for n in expect_from..=last {
            assert_eq!(
                got.matches(&format!("--- Page {n} ---\n")).count(),
                1,
                "page {n}"
            );
        }
        if expect_from == 1 {
            assert_eq!(got, whole_text);
        }
    }
}

#[tokio::test]
async fn a_page_longer_than_the_budget_says_how_to_read_it_whole() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("thirty.pdf", &fixture("pdf/thirty_pages.pdf"))
        .await;
    let r = app
        .read(json!({"file_id": id, "pages": "3-4", "max_chars": 100}))
        .await;
    assert_eq!(r.json["truncated"], true);
    let next = &r.json["next"];
    assert_eq!(next["pages"], "3-4");
    let r2 = app
        .read(json!({"file_id": id, "pages": "3", "max_chars": next["max_chars"]}))
        .await;
    assert_eq!(r2.json["truncated"], false, "{}", r2.json);
}

/// OCR'd pages come back in order, each with its own text: a page renders while the one
/// before it is recognised, and each recognition must land on its own page.
#[tokio::test]
async fn ocr_pages_keep_their_own_text_and_order() {
    let app = TestApp::new().await;
    let r = read_fixture(
        &app,
        "thirty_short.pdf",
        json!({"pages": "2-5", "ocr": "force"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["ocr_pages"], 4, "{}", r.json);
    let text = r.json["text"].as_str().unwrap();
    let mut at = 0;
    for n in 2..=5 {
        let marker = format!("--- Page {n} ---\n");
        let start = text[at..]
            .find(&marker)
            .unwrap_or_else(|| panic!("no {marker:?} after byte {at}: {text}"))
            + at
            + marker.len();
        let end = text[start..]
            .find("--- Page ")
            .map_or(text.len(), |e| start + e);
        let page = &text[start..end];
        assert!(
            page.contains(&format!("Short page {n}")) && page.contains("Alpha beta gamma"),
            "page {n} reads {page:?}"
        );
        for other in (2..=5).filter(|&o| o != n) {
            assert!(
                !page.contains(&format!("Short page {other}")),
                "page {n} reads {page:?}"
            );
        }
        at = end;
    }
}

/// The expected text of fixtures/pdf/font_*.pdf (fixtures/make_font_fixtures.py).
fn font_case(file: &str) -> String {
    let cases: Value = serde_json::from_slice(&fixture("pdf/font_cases.json")).unwrap();
    let case = cases
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["file"] == file)
        .unwrap_or_else(|| panic!("{file} in font_cases.json"));
    case["text"].as_str().unwrap().to_string()
}

/// Identity-H fonts without a ToUnicode map: PDFium gives glyph ids as characters
/// (Latin shifted into control characters, CJK into unrelated CJK); the embedded font's own
/// cmap, inverted and checked against the glyph shapes on the page, gives the text back
/// exactly, from the text layer (no OCR). Before: garbled → OCR with wrong diacritics
/// (Czech), and unrelated CJK characters reported as `no_ocr_needed` (CJK).
#[tokio::test]
async fn fonts_without_a_unicode_map_read_through_their_own_cmap() {
    let app = TestApp::new().await;
    for file in [
        "font_czech_no_tounicode.pdf",
        "font_cjk_no_tounicode.pdf",
        "font_czech_tounicode.pdf",
        "font_cjk_tounicode.pdf",
    ] {
        let r = read_fixture(&app, file, json!({"ocr": "none"})).await;
        assert_eq!(r.status, 200, "{file}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        let want = format!("--- Page 1 ---\n{}\n", font_case(file));
        assert_eq!(text, want, "{file}");
        assert_eq!(r.json["pages_ocr"], json!([]), "{file}: {}", r.json);
    }
}

/// Where the font cannot give the text back (a CIDToGIDMap stream makes codes that are not
/// glyph ids, a font with no cmap, a simple TrueType font whose codes go through a Mac
/// cmap), the page is never served as wrong text: it goes to OCR as `garbled_text`. Before:
/// the simple font's page came back as `P\u{1}\u{2}li\u{3}…ZaÄÅ` with `no_ocr_needed`.
#[tokio::test]
async fn fonts_that_cannot_be_recovered_go_to_ocr() {
    let app = TestApp::new().await;
    for file in [
        "font_czech_cidtogidmap_no_tounicode.pdf",
        "font_czech_nocmap_no_tounicode.pdf",
        "font_czech_simple_no_tounicode.pdf",
    ] {
        let r = read_fixture(&app, file, json!({"ocr": "none"})).await;
        assert_eq!(r.status, 200, "{file}: {}", r.json);
        assert_eq!(
            r.json["pages_ocr"],
            json!([{"page": 1, "reason": "garbled_text", "confidence": null, "status": "skipped"}]),
            "{file}: {}",
            r.json
        );
        let r = read_fixture(&app, file, json!({})).await;
        let text = r.json["text"].as_str().unwrap();
        assert!(
            text.contains("Faktura č. 2024/0815") && text.contains("Příliš"),
            "{file}: {text}"
        );
        assert_eq!(r.json["pages_ocr"][0]["status"], "done", "{file}");
    }
}

/// Issue #44 item 3: a page's pictures are `figure` blocks in `json`, where they stand in
/// the reading order (in their column), with their caption taken in: a figure's under it
/// (after the labels inside it), a table's over it. An image, a drawing in a form, a
/// drawing made on the page itself; a small icon and a page-sized background are no
/// figures, and plain text is as it was. Page 3's one line over a background went to OCR
/// as sparse text and OCR read nothing: the layer's line is kept (before: the page came
/// back empty).
#[tokio::test]
async fn figures_stand_in_the_reading_order_with_their_captions() {
    let app = TestApp::new().await;
    let r = read_fixture(&app, "figures.pdf", json!({"output": "json"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let units = r.json["document"]["units"].as_array().unwrap();
    let shown: Vec<Vec<String>> = units
        .iter()
        .map(|u| {
            u["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| match b["kind"].as_str().unwrap() {
                    "figure" => format!("[figure: {}]", b["caption"].as_str().unwrap_or("")),
                    _ => b["text"].as_str().unwrap().to_string(),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            vec![
                "Field Notes",
                "The survey team reached the northern ridge early in the morning and set up their instruments before the wind picked up.",
                "[figure: Figure 1: Wind speed over the ridge, by hour.]",
                "The readings were copied into the log book at the camp.",
                "[figure: Figure 2. Readings against the archive.]",
                "km/h",
                "After the chart the notes go on to the next day.",
            ],
            vec![
                "Left column first line of the notes and its second line, read before the right column starts at the top.",
                "[figure: Table 4. Cores kept at the camp.]",
                "[figure: Figure 5. Drawn on the page itself.]",
                "Right column first line of text above the picture of the cores.",
                "[figure: Fig. 3. Soil cores by depth.]",
                "Below the picture the right column goes on to its end.",
            ],
            vec!["Text over a background that fills the page."],
        ],
        "{}",
        r.json["document"]
    );
    // The image's box, from the page's top-left corner (drawn at 50,590 240×140 on A4).
    let figure = &units[0]["blocks"][2];
    assert_eq!(figure["bbox"], json!([50.0, 112.0, 290.0, 252.0]));
    // Plain text keeps every line, captions included, where they stand.
    let text = r.json["text"].as_str().unwrap();
    assert!(
        text.contains("set up\ntheir instruments before the wind picked up.\nFigure 1: Wind"),
        "{text}"
    );
    assert!(text.ends_with("--- Page 3 ---\nText over a background that fills the page.\n"));
    assert_eq!(r.json["pages_ocr"], json!([]), "{}", r.json);
    assert!(r.json["warnings"]
        .to_string()
        .contains("page 3: little text over pictures went to OCR"));
    // Markdown marks each figure where json places it (`<!-- image -->`, as docling
    // writes it), its caption the paragraph beside it: under it, or over it for a table's.
    let r = read_fixture(&app, "figures.pdf", json!({"output": "markdown"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let md = r.json["text"].as_str().unwrap();
    for part in [
        "picked up.\n\n<!-- image -->\n\nFigure 1: Wind speed over the ridge, by hour.\n\nThe readings",
        "at the camp.\n\n<!-- image -->\n\nFigure 2. Readings against the archive.\n\nkm/h\n\n",
        "right column starts at the top.\n\nTable 4. Cores kept at the camp.\n\n<!-- image -->\n\n<!-- image -->\n\nFigure 5. Drawn on the page itself.\n\nRight column",
        "above the picture of the cores.\n\n<!-- image -->\n\nFig. 3. Soil cores by depth.\n\nBelow",
    ] {
        assert!(md.contains(part), "{part:?} in {md}");
    }
    assert_eq!(md.matches("<!-- image -->").count(), 5, "{md}");
    // Chunks carry the figure by its caption, once.
    let r = read_fixture(&app, "figures.pdf", json!({"output": "chunks"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let chunks = r.json["chunks"].to_string();
    assert_eq!(
        chunks.matches("Figure 1: Wind speed").count(),
        1,
        "{chunks}"
    );
    assert!(
        chunks.contains("[Figure: Fig. 3. Soil cores by depth.]"),
        "{chunks}"
    );
}

/// Issue #43: a Type3 font without a Unicode map (its codes given in order of use, names
/// in `/Encoding /Differences`) reads through its glyph names: the Adobe Glyph List,
/// `uniXXXX`, ligature components, a suffix; code 32 named `H` is an H. Two fonts on one
/// page with the same codes are told apart (by their widths), a third is drawn in a form,
/// and every font dictionary is in an object stream. From the text layer, no OCR, in
/// every output and with hidden text marked. Before: PDFium's codes (`\u{1}+1%8#…`),
/// judged garbled, and OCR of the glyphs (`“ quot ed" … caf é A`).
#[tokio::test]
async fn type3_fonts_read_through_their_glyph_names() {
    let app = TestApp::new().await;
    let want = String::from_utf8(fixture("pdf/type3_differences.txt")).unwrap();
    let pages: Vec<&str> = want.trim_end().split("\n\n").collect();
    let expected = format!(
        "--- Page 1 ---\n{}\n--- Page 2 ---\n{}\n",
        pages[0], pages[1]
    );
    for opts in [
        json!({}),
        json!({"ocr": "none"}),
        json!({"hidden_text": "mark"}),
    ] {
        let r = read_fixture(&app, "type3_differences.pdf", opts.clone()).await;
        assert_eq!(r.status, 200, "{opts}: {}", r.json);
        assert_eq!(r.json["text"], expected, "{opts}");
        assert_eq!(r.json["pages_ocr"], json!([]), "{opts}: {}", r.json);
    }
    for output in ["markdown", "json"] {
        let r = read_fixture(&app, "type3_differences.pdf", json!({"output": output})).await;
        assert_eq!(r.status, 200, "{output}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        for line in pages.iter().flat_map(|p| p.lines()) {
            assert!(text.contains(line), "{output}: {line:?} in {text}");
        }
    }
    // A query finds the words, on their page.
    let r = read_fixture(&app, "type3_differences.pdf", json!({"query": "café"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"].as_str().unwrap().contains("café"),
        "{}",
        r.json
    );
}

/// Issue #43: CID fonts without a Unicode map in Adobe's collections read their
/// supplementary characters (PDFium's 16-bit tables give a look-alike, or the code): an
/// Adobe-Japan1 CID 13706 is 𠮷 while CID 1634 beside it stays 吉; an Adobe-CNS1 CID
/// 14000 in a form, its font set inside `q … Q`, is U+200CC. Before: `吉田 and 吉田`,
/// `香港 㚰`. In every output, and a query finds the character.
#[tokio::test]
async fn cid_fonts_without_a_unicode_map_read_supplementary_characters() {
    let app = TestApp::new().await;
    let line1 = "Family names: 吉田 and \u{20BB7}田";
    let line2 = "香港 \u{200CC} - Hong Kong";
    let r = read_fixture(&app, "cid_supplementary.pdf", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["text"],
        format!("--- Page 1 ---\n{line1}\n{line2}\n"),
        "{}",
        r.json
    );
    for output in ["markdown", "json"] {
        let r = read_fixture(&app, "cid_supplementary.pdf", json!({"output": output})).await;
        assert_eq!(r.status, 200, "{output}: {}", r.json);
        let text = r.json["text"].as_str().unwrap();
        for line in [line1, line2] {
            assert!(text.contains(line), "{output}: {line:?} in {text}");
        }
    }
    let r = read_fixture(
        &app,
        "cid_supplementary.pdf",
        json!({"query": "\u{20BB7}田"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        r.json["text"].as_str().unwrap().contains(line1),
        "{}",
        r.json
    );
}

/// Issue #43: PDFium's U+0002 line-end hyphen never reaches a reader; the word it split is
/// whole again, a real hyphen stays, in the text, Markdown and a query alike.
#[tokio::test]
async fn line_end_hyphens_are_joined_and_no_control_character_is_returned() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("tracemonkey.pdf", &corpus_pdf("tracemonkey.pdf"))
        .await;
    for output in ["text", "markdown"] {
        let r = app
            .read(json!({"file_id": id, "pages": "1", "output": output}))
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        let text = r.json["text"].as_str().unwrap();
        assert!(
            text.contains("more difficult to compile than"),
            "{output}: {text}"
        );
        assert!(text.contains("an alternative compilation"), "{output}");
        assert!(!text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\n' | '\t')));
    }
    let r = app
        .read(json!({"file_id": id, "query": "compile than"}))
        .await;
    assert_eq!(r.json["matches"], 1, "{}", r.json);
    // German compounds with a real hyphen at the line end keep it.
    let r = app
        .upload_and_read(
            "GeoTopo.pdf",
            &corpus_pdf("GeoTopo-komprimiert.pdf"),
            json!({"pages": "1-20"}),
        )
        .await;
    let text = r.json["text"].as_str().unwrap();
    assert!(text.contains("(Schwarz-Weiß, Ringbindung)"), "{text}");
    assert!(text.contains("Übungsaufgaben"));
}

/// PDFium's lines mended where its text layer gets them wrong (#43 item 2), on a page
/// made to show each fault: text after a superscript went on a line of its own (`mc2` /
/// `, and water`), a heading letter-spaced glyph by glyph got invented spaces
/// (`Quarterl y`), a row drawn in one TJ right column first read `Revenue 4,200Region
/// North`. Plain text, Markdown and json's blocks (with their boxes) all get the mended
/// lines; lines with nothing to mend (a capital inside a word) stay as written.
#[tokio::test]
async fn the_text_layer_keeps_lines_whole_spaced_and_in_order() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("text_layer.pdf", &fixture("pdf/text_layer.pdf"))
        .await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let lines: Vec<&str> = r.json["text"].as_str().unwrap().lines().collect();
    let expected = [
        "Einstein wrote E = mc2, and water is H2O on every page.",
        "A line after the formula.",
        "Quarterly results in brief",
        "Region North Revenue 4,200",
        "JavaScript and McDonald stay as they are written.",
    ];
    assert_eq!(lines[1..], expected, "{lines:?}");

    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    let md = md.json["text"].as_str().unwrap();
    for line in expected {
        assert!(md.contains(line), "{line:?} in {md}");
    }

    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let blocks = js.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap();
    let texts: Vec<&str> = blocks
        .iter()
        .map(|b| b["text"].as_str().unwrap_or(""))
        .collect();
    for line in expected {
        let b = blocks
            .iter()
            .find(|b| b["text"] == line)
            .unwrap_or_else(|| panic!("no block {line:?} in {texts:?}"));
        // Found on the page's lines as mended: its box is there.
        assert!(b["bbox"].is_array(), "{b}");
    }
}

/// A PDF whose page tree claims `count` pages and holds one, then loops back on itself.
fn looping_page_tree(count: u32) -> Vec<u8> {
    let content = "BT /F1 12 Tf 72 720 Td (The only page there is) Tj ET";
    let objs = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!("<< /Type /Pages /Kids [3 0 R 2 0 R] /Count {count} >>"),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".into(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into(),
    ];
    pdf_of_objects(&objs)
}

/// A page tree that loops claims pages it does not hold. The read gives the pages that can
/// be found and says what is missing; a page past them is past the end, and the message
/// says why the count differs from the tree's claim. (Before, a whole read failed as
/// `corrupt` on page 2, and `pages: "3"` was said to be inside a 5-page document.)
#[tokio::test]
async fn a_page_tree_that_loops_reads_the_pages_it_holds_and_says_so() {
    let app = TestApp::new().await;
    let id = app.upload_id("loop.pdf", &looping_page_tree(5)).await;
    let r = app.read(json!({"file_id": id})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["text"], "--- Page 1 ---\nThe only page there is\n");
    assert_eq!(r.json["total_pages"], 1, "{}", r.json);
    let warnings = r.json["warnings"].to_string();
    assert!(
        warnings.contains("claims 5 pages, but only 1 can be found")
            && warnings.contains("pages 2-5 are missing"),
        "{warnings}"
    );
    assert!(r.json["next"].is_null(), "{}", r.json["next"]);

    let past = app.read(json!({"file_id": id, "pages": "3"})).await;
    assert_error(&past, 416, "out_of_range");
    let msg = past.json["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("page 3 is past the end: the document has 1 page;")
            && msg.contains("claims 5 pages"),
        "{msg}"
    );
    assert_eq!(past.json["error"]["hint"], "Ask for page 1.");

    // The page pictures count the same way.
    let ok = app.get(&format!("/files/{id}/pages/1?dpi=20")).await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    let drawn = app.get(&format!("/files/{id}/pages/3")).await;
    assert_error(&drawn, 416, "out_of_range");
    let msg = drawn.json["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("the document has 1 page;") && msg.contains("claims 5 pages"),
        "{msg}"
    );
}
