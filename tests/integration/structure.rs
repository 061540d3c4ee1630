//! Structure of a PDF's pages (issue #44): paragraphs from the lines' boxes (item 1) in
//! Markdown, `output: "json"` and chunks, plain text line-faithful; running headers,
//! footers and page numbers found across pages (item 2) — header/footer blocks in json,
//! left out of Markdown and chunks unless `furniture: "keep"`, kept in plain text.

use serde_json::{json, Value};

use crate::common::*;

const HEADER: &str = "Northwind Traders - Annual Review 2025";

/// Each block's `bbox` (`[left, top, right, bottom]`); a block without one fails the test.
fn boxes_of(blocks: &[Value]) -> Vec<[f64; 4]> {
    blocks
        .iter()
        .map(|b| {
            let v: Vec<f64> = b["bbox"]
                .as_array()
                .unwrap_or_else(|| panic!("no bbox: {b}"))
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect()
}

#[tokio::test]
async fn running_headers_and_page_numbers_are_furniture() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("report.pdf", &fixture("pdf/running_heads.pdf"))
        .await;
    let read = |opts: Value| {
        let mut body = json!({"file_id": id});
        body.as_object_mut()
            .unwrap()
            .extend(opts.as_object().unwrap().clone());
        let app = &app;
        async move {
            let r = app.read(body).await;
            assert_eq!(r.status, 200, "{}", r.json);
            r
        }
    };
    // Plain text keeps every line.
    let text = read(json!({})).await;
    let t = text.json["text"].as_str().unwrap();
    assert_eq!(t.matches(HEADER).count(), 4, "{t}");
    assert!(t.contains("Page 3 of 4"), "{t}");

    // Markdown leaves them out, and says so; `furniture: "keep"` keeps them.
    let md = read(json!({"output": "markdown"})).await;
    let m = md.json["text"].as_str().unwrap();
    assert!(!m.contains(HEADER) && !m.contains(" of 4"), "{m}");
    for body in [
        "Sales rose in every region",
        "Margins widened",
        "Training hours",
        "Shareholders vote",
    ] {
        assert!(m.contains(body), "{body} lost: {m}");
    }
    assert!(
        md.json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("furniture: \"keep\"")),
        "{}",
        md.json["warnings"]
    );
    let kept = read(json!({"output": "markdown", "furniture": "keep"})).await;
    let k = kept.json["text"].as_str().unwrap();
    assert_eq!(k.matches(HEADER).count(), 4, "{k}");
    assert!(k.contains("Page 4 of 4"), "{k}");

    // JSON: the same lines as header and footer blocks, the text as plain text gives it.
    let js = read(json!({"output": "json"})).await;
    assert_eq!(js.json["text"], text.json["text"]);
    for (n, u) in js.json["document"]["units"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let blocks = u["blocks"].as_array().unwrap();
        let kinds: Vec<&str> = blocks.iter().map(|b| b["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            ["header", "paragraph", "footer"],
            "page {}: {u}",
            n + 1
        );
        assert_eq!(blocks[0]["text"], HEADER);
        assert_eq!(blocks[2]["text"], format!("Page {} of 4", n + 1));
        // Each placed on its page (points from the top-left of an A4 page): the
        // header above the paragraph above the footer, every box inside the page.
        let boxes = boxes_of(blocks);
        for [l, t, r, b] in &boxes {
            assert!(
                0.0 <= *l && l < r && *r <= 595.0 && 0.0 <= *t && t < b && *b <= 842.0,
                "{boxes:?}"
            );
        }
        assert!(
            boxes[0][3] <= boxes[1][1] && boxes[1][3] <= boxes[2][1],
            "{boxes:?}"
        );
        assert!(boxes[0][1] < 100.0 && boxes[2][3] > 742.0, "{boxes:?}");
    }

    // Chunks: the body of the four pages, no furniture (kept, each its own chunk).
    let ch = read(json!({"output": "chunks"})).await;
    let all: String = ch.json["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert!(!all.contains(HEADER) && !all.contains(" of 4"), "{all}");
    assert!(
        all.contains("Sales rose") && all.contains("Shareholders vote"),
        "{all}"
    );
    let ch = read(json!({"output": "chunks", "furniture": "keep"})).await;
    let texts: Vec<&str> = ch.json["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts.iter().filter(|t| **t == HEADER).count(),
        4,
        "{texts:?}"
    );
    assert!(texts.contains(&"Page 2 of 4"), "{texts:?}");

    // A page read alone has no other page to repeat: its lines stay (nothing is guessed).
    let one = read(json!({"output": "markdown", "pages": "2"})).await;
    assert!(one.json["text"].as_str().unwrap().contains(HEADER));
}

/// Furniture without Markdown or chunks says what it needs.
#[tokio::test]
async fn furniture_needs_markdown_or_chunks() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("report.pdf", &fixture("pdf/running_heads.pdf"))
        .await;
    for output in [json!(null), json!("text"), json!("json")] {
        let r = app
            .read(json!({"file_id": id, "furniture": "drop", "output": output}))
            .await;
        assert_error(&r, 400, "unsupported_option");
    }
}

/// Paragraphs: a page's lines joined where they are one paragraph (right under each other,
/// in one size, the line before running to the column's edge), a word broken by a hyphen
/// joined, a new paragraph at a gap, an indented first line or a list item.
#[tokio::test]
async fn lines_of_a_paragraph_are_one_paragraph() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("notes.pdf", &fixture("pdf/paragraphs.pdf"))
        .await;
    let first = "The survey team reached the northern ridge early in the morning and set up their instruments before the wind picked up. Readings were taken every hour until the light failed, and the results were checked against the old information from the archive.";
    let second = "A second paragraph follows after a gap. It is long enough to wrap onto the next line of the page, where it ends.";
    let third = "An indented first line starts a third paragraph without any gap before it, and its second line returns to the margin like the others.";

    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let all = js.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap();
    // Every block placed on the page, one under the other, the first paragraph's box
    // spanning its four lines.
    let boxes = boxes_of(all);
    for pair in boxes.windows(2) {
        assert!(pair[0][3] <= pair[1][1] + 0.5, "{boxes:?}");
    }
    let height = |b: &[f64; 4]| b[3] - b[1];
    assert!(height(&boxes[1]) > 3.0 * height(&boxes[6]), "{boxes:?}");
    let blocks: Vec<Value> = all
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b.as_object_mut().unwrap().remove("level");
            b.as_object_mut().unwrap().remove("bbox");
            b
        })
        .collect();
    assert_eq!(
        blocks,
        [
            json!({"kind": "heading", "text": "Field Notes"}),
            json!({"kind": "paragraph", "text": first}),
            json!({"kind": "paragraph", "text": second}),
            json!({"kind": "paragraph", "text": third}),
            json!({"kind": "list_item", "label": "-", "text": "Water samples from the lake"}),
            json!({"kind": "list_item", "label": "-", "text": "Soil cores from the ridge"}),
            json!({"kind": "paragraph", "text": "Signed, the survey lead."}),
        ]
    );

    // Markdown: paragraphs apart by a blank line, the list's items a line each.
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(
        md.json["text"],
        format!("--- Page 1 ---\n# Field Notes\n\n{first}\n\n{second}\n\n{third}\n\n- Water samples from the lake\n- Soil cores from the ridge\n\nSigned, the survey lead.\n")
    );

    // Plain text keeps the page's lines (query line numbers keep their meaning).
    let text = app.read(json!({"file_id": id})).await;
    let t = text.json["text"].as_str().unwrap();
    assert!(
        t.contains("early in the morning and set up\ntheir instruments"),
        "{t}"
    );
    // (PDFium itself joins a word broken by a hyphen at a line's end.)
    assert_eq!(t.lines().count(), 12, "{t}");

    // Chunks hold the paragraphs, each placed where its lines stand in the text.
    let ch = app
        .read(json!({"file_id": id, "output": "chunks", "chunk_tokens": 64}))
        .await;
    let chunks = ch.json["chunks"].as_array().unwrap();
    let chars: Vec<char> = t.chars().collect();
    let placed = chunks
        .iter()
        .find(|c| {
            c["text"]
                .as_str()
                .unwrap()
                .starts_with("A second paragraph")
        })
        .unwrap_or_else(|| panic!("{chunks:?}"));
    let (s, e) = (
        placed["start"].as_u64().unwrap() as usize,
        placed["end"].as_u64().unwrap() as usize,
    );
    let place: String = chars[s..e].iter().collect();
    assert!(place.starts_with("A second paragraph"), "{place:?}");
    assert!(place.contains("\nnext line of the page"), "{place:?}");
}

/// A page shown turned a quarter clockwise through a crop box away from the origin
/// (`/Rotate 90`, `/CropBox [30 40 565 822]`): every block's box is given from the top-left
/// of the page as shown (782 × 535 points), so the title, at the top of the page's own
/// space, stands at the right, and the blocks after it follow leftwards.
#[tokio::test]
async fn boxes_are_placed_on_the_page_as_shown() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("turned.pdf", &fixture("pdf/rotated.pdf"))
        .await;
    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let blocks = js.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap();
    let boxes = boxes_of(blocks);
    for b in &boxes {
        assert!(
            0.0 <= b[0]
                && b[0] < b[2]
                && b[2] <= 782.0
                && 0.0 <= b[1]
                && b[1] < b[3]
                && b[3] <= 535.0,
            "{boxes:?}"
        );
    }
    // The text is drawn upright in the page's own space, so it is read as written: the
    // same blocks, in the same order, as the page unturned (PDFium alone orders a turned
    // page's text by the turned page, and ran its lines together out of order).
    let kinds: Vec<&str> = blocks.iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "heading",
            "paragraph",
            "paragraph",
            "paragraph",
            "list_item",
            "list_item",
            "paragraph"
        ],
        "{blocks:?}"
    );
    for pair in boxes.windows(2) {
        assert!(pair[1][2] <= pair[0][0] + 0.5, "{boxes:?}");
    }
    let text = app.read(json!({"file_id": id})).await;
    let t = text.json["text"].as_str().unwrap();
    assert!(
        t.starts_with("--- Page 1 ---\nField Notes\nThe survey team reached the northern ridge early in the morning and set up\ntheir instruments"),
        "{t}"
    );
    // The title: its line ran from x 50 (20 into the crop box) at y 790 (750 above its
    // bottom edge).
    let at = |start: &str| {
        let i = blocks
            .iter()
            .position(|b| b["text"].as_str().unwrap_or("").starts_with(start))
            .unwrap_or_else(|| panic!("no block {start:?}: {blocks:?}"));
        &boxes[i]
    };
    let title = at("Field Notes");
    assert!(title[0] > 740.0 && title[2] < 775.0, "{title:?}");
    assert!((title[1] - 20.0).abs() < 3.0, "{title:?}");
    // Lines further down the page's own space stand further left, each line 12 points on.
    let first = at("The survey team");
    let signed = at("Signed");
    assert!(first[2] <= title[0], "{first:?} {title:?}");
    assert!(
        (first[2] - signed[2] - 156.0).abs() < 1.0,
        "{first:?} {signed:?}"
    );
    // The first paragraph's four lines: 3 × 12 points and a line's height across.
    assert!((first[2] - first[0] - 35.7).abs() < 1.0, "{first:?}");
    assert!((signed[1] - 20.0).abs() < 3.0, "{signed:?}");
}

/// Pages whose whole text repeats (a scan of one sheet per page, docling's
/// nemotron_multipage.pdf) keep it in Markdown: furniture frames a page's text, it is
/// never all of it.
#[tokio::test]
async fn a_pages_whole_text_is_never_furniture() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "repeated.pdf",
            &fixture("pdf/repeated_pages.pdf"),
            json!({"output": "markdown"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let m = r.json["text"].as_str().unwrap();
    assert_eq!(
        m.matches("JSON and Markdown in an easy self contained")
            .count(),
        3,
        "{m}"
    );
    assert_eq!(m.matches("package").count(), 3, "{m}");
    let js = app
        .upload_and_read(
            "repeated.pdf",
            &fixture("pdf/repeated_pages.pdf"),
            json!({"output": "json"}),
        )
        .await;
    for u in js.json["document"]["units"].as_array().unwrap() {
        for b in u["blocks"].as_array().unwrap() {
            assert!(b["kind"] != "header" && b["kind"] != "footer", "{b}");
        }
    }
}

/// Headings in the body's size (#44 item 6): a bold line of its own, a bold line a little
/// larger, an italic Title Case line of its own — in Markdown and json alike; a bold
/// phrase starting a line, a bold paragraph, a bold sentence and an italic caption stay
/// text.
#[tokio::test]
async fn bold_and_italic_lines_of_their_own_are_headings() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("bold.pdf", &fixture("pdf/bold_headings.pdf"))
        .await;
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    let m = md.json["text"].as_str().unwrap();
    let heads: Vec<&str> = m.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        heads,
        [
            "#### The Evolution of the Word Processor",
            "### Pre-Digital Era (19th - Early 20th Century)",
            "#### Boots Self-Locking Nut"
        ],
        "{m}"
    );
    for text in [
        "IBM MT/ST: a machine of 1964 with tape storage.",
        "Warning: this bold paragraph runs over",
        "Bold sentences end with a full stop.",
        "a figure of the nut in its housing",
    ] {
        assert!(m.lines().any(|l| l == text), "{text:?} is text: {m}");
    }
    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    let titles: Vec<(u64, String)> = js.json["document"]["units"][0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "heading")
        .map(|b| {
            (
                b["level"].as_u64().unwrap(),
                b["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(titles.len(), 3, "{titles:?}");
    assert_eq!(
        titles[1],
        (3, "Pre-Digital Era (19th - Early 20th Century)".to_string())
    );
}

/// Headings as other projects' PDFs set them (#44 item 6): a section heading in TeX's bold
/// face (`SFBX1000`, named by its letter code, not `Bold`); a chapter's title with a small
/// `Chapter 1.` label first on its line (one heading over two lines, the label text); an
/// issue number in a large size (no heading); a kicker and a title in two sizes (two
/// headings, not one); a syntax diagram's boxes, each with its note above and beside it
/// (labels, no headings), a statement's last keyword set larger and ending in `;` (no
/// heading: a line that goes on), while a résumé's headings over one line of body each stay
/// headings. In `json` the same headings are heading blocks.
#[tokio::test]
async fn headings_in_tex_faces_after_labels_and_not_of_numbers_or_diagrams() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("classes.pdf", &fixture("pdf/heading_classes.pdf"))
        .await;
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    let m = md.json["text"].as_str().unwrap();
    let heads: Vec<&str> = m.lines().filter(|l| l.starts_with('#')).collect();
    let want = [
        "#### 5.1 Hyper Parameter Optimization",
        "# Securing and protecting your data",
        "# Issues and Points",
        "# Insurance Claims in a Pandemic",
        "## Experience",
        "## Education",
        "## Languages",
    ];
    assert_eq!(heads, want, "{m}");
    for text in [
        "Chapter 1.",
        "No. 1695",
        "CREATE PERMISSION <name>",
        "ON <table name>",
        "AS <correlation name>",
        "FOR ROWS",
        "ENABLE;",
        "Names the row permission for access control",
    ] {
        assert!(m.lines().any(|l| l == text), "{text:?} is text: {m}");
    }
    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let titles: Vec<String> = document_blocks(&js.json, |b| b["kind"] == "heading")
        .iter()
        .map(|b| {
            format!(
                "{} {}",
                "#".repeat(b["level"].as_u64().unwrap() as usize),
                b["text"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(titles, want, "{titles:?}");
}

/// Two columns of prose drawn row by row (#44 item 3): PDFium's text reads them across;
/// Markdown and `json` read the left column, then the right, each one paragraph (the
/// title above and the line below run across the page from the left column's edge, and
/// do not make the left column's lines look short); plain text stays line-faithful.
#[tokio::test]
async fn two_prose_columns_drawn_row_by_row_are_read_column_after_column() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("columns.pdf", &fixture("pdf/two_columns.pdf"))
        .await;
    let left = "The survey team reached the northern ridge early in the morning and set up their \
                instruments before the wind picked up. Readings were taken every hour until the light \
                failed in the late afternoon, and the team walked back down to the camp by the river.";
    let right = "Back at the camp the readings were copied into the log book and checked against the \
                 ones of the day before. Two of them were taken again on the next morning, and both \
                 agreed with the first reading to the second decimal.";
    let foot = "A line across the whole page under both columns closes the report and says where \
                its data are kept.";
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    assert_eq!(
        md.json["text"],
        format!(
            "--- Page 1 ---\n# Field Notes From the Northern Ridge\n\n{left}\n\n{right}\n\n{foot}\n"
        )
    );
    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let blocks = document_blocks(&js.json, |_| true);
    let kinds: Vec<(&str, &str)> = blocks
        .iter()
        .map(|b| (b["kind"].as_str().unwrap(), b["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("heading", "Field Notes From the Northern Ridge"),
            ("paragraph", left),
            ("paragraph", right),
            ("paragraph", foot)
        ]
    );
    // Each column's paragraph where the column stands: the right one starts at x = 320.
    assert!(
        blocks[1]["bbox"][2].as_f64().unwrap() < 300.0,
        "{}",
        blocks[1]
    );
    assert_eq!(
        blocks[2]["bbox"][0].as_f64().unwrap(),
        320.0,
        "{}",
        blocks[2]
    );
    // Plain text: PDFium's lines, across the columns.
    let text = app.read(json!({"file_id": id})).await;
    assert!(
        text.json["text"].as_str().unwrap().contains(
            "The survey team reached the northern ridge early in Back at the camp the readings \
             were copied into the\n"
        ),
        "{}",
        text.json["text"]
    );
}

/// A page whose stream draws its two columns first and the title and abstract above them
/// last (#44 item 3), its lines set wide (#44 item 1: 18 points apart at 10 points, as CJK
/// text often is; paragraphs told apart by an indented first line): Markdown and `json`
/// read the title, the abstract, the left column, the right one and the line below them,
/// each paragraph's lines joined; plain text stays in the stream's order.
#[tokio::test]
async fn columns_drawn_before_the_title_above_them_are_read_as_they_stand() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("drawn_first.pdf", &fixture("pdf/columns_drawn_first.pdf"))
        .await;
    let paragraphs = [
        "A short account of the move, written for the harbour's newsletter by its keeper of records.",
        "The harbour office opened its new hall on a wet morning in spring, and the first ships \
         were booked in before noon.",
        "By the evening the old hall across the water was closed, its records carried over by \
         boat and shelved in the new reading room.",
        "The reading room keeps the records of every ship that called at the harbour since the \
         first survey, open to anyone who asks.",
        "A second room for maps is planned for the autumn, when the builders have finished the \
         roof and the stairs to the upper floor.",
        "Printed for the friends of the harbour office; copies are kept at the front desk.",
    ];
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    assert_eq!(
        md.json["text"],
        format!(
            "--- Page 1 ---\n# The Harbour Office Moves House\n\n{}\n",
            paragraphs.join("\n\n")
        )
    );
    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    assert_eq!(js.status, 200, "{}", js.json);
    let blocks = document_blocks(&js.json, |_| true);
    let kinds: Vec<(&str, &str)> = blocks
        .iter()
        .map(|b| (b["kind"].as_str().unwrap(), b["text"].as_str().unwrap()))
        .collect();
    let mut want = vec![("heading", "The Harbour Office Moves House")];
    want.extend(paragraphs.iter().map(|p| ("paragraph", *p)));
    assert_eq!(kinds, want);
    // Chunks: each placed in the text, though the text has the blocks in another order
    // (it placed none of the columns' chunks before, and one at its first word alone).
    let ch = app
        .read(json!({"file_id": id, "output": "chunks", "chunk_tokens": 40}))
        .await;
    assert_eq!(ch.status, 200, "{}", ch.json);
    let all: Vec<char> = ch.json["text"].as_str().unwrap().chars().collect();
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace() && *c != '#')
            .collect()
    };
    let chunks = ch.json["chunks"].as_array().unwrap();
    assert!(chunks.len() >= 6, "{}", ch.json);
    for c in chunks {
        let (Some(a), Some(b)) = (c["start"].as_u64(), c["end"].as_u64()) else {
            panic!("a chunk without its place: {c}");
        };
        let placed: String = all[a as usize..b as usize].iter().collect();
        assert_eq!(squash(&placed), squash(c["text"].as_str().unwrap()), "{c}");
    }
    // Plain text: the stream's order, a line each.
    let text = app.read(json!({"file_id": id})).await;
    let text = text.json["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "--- Page 1 ---\nThe harbour office opened its new hall on a wet\nmorning in spring,"
        ),
        "{text}"
    );
    assert!(
        text.contains("stairs to the upper floor.\nThe Harbour Office Moves House\n"),
        "{text}"
    );
}

/// A Chinese paragraph over three lines (#44 item 1): Markdown and `json` join its lines
/// without a space (Chinese is written without; a space at each line end was inserted
/// before), plain text keeps its three lines.
#[tokio::test]
async fn chinese_lines_of_a_paragraph_are_joined_without_spaces() {
    let app = TestApp::new().await;
    let id = app
        .upload_id("cjk.pdf", &fixture("pdf/cjk_paragraph.pdf"))
        .await;
    let lines = [
        "我们在北方的山脊上进行了为期三天的测量工作，",
        "每小时记录一次读数，直到天黑为止。随后所有的",
        "读数都被抄写到日志中，并与前一天的记录核对。",
    ];
    let md = app.read(json!({"file_id": id, "output": "markdown"})).await;
    assert_eq!(md.status, 200, "{}", md.json);
    assert_eq!(
        md.json["text"],
        format!("--- Page 1 ---\n{}\n", lines.concat())
    );
    let js = app.read(json!({"file_id": id, "output": "json"})).await;
    let paragraphs: Vec<&str> = document_blocks(&js.json, |b| b["kind"] == "paragraph")
        .iter()
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    assert_eq!(paragraphs, [lines.concat()]);
    let text = app.read(json!({"file_id": id})).await;
    assert_eq!(
        text.json["text"],
        format!("--- Page 1 ---\n{}\n", lines.join("\n"))
    );
}

/// Ruled tables as documents draw them (#44 item 5): no rules down the outer sides, a
/// header over two columns and two headers over two rows (in Markdown an HTML table with
/// `colspan`/`rowspan`, as a pipe table cannot span; in `json` the text in the merged
/// cell's top-left place, the others empty, and `spans`), a note beside the table, a
/// second table on the page (a pipe table: no spans);
/// each stands where its text did, with the text around it in order and nothing lost. A
/// framed paragraph (one box) and two text columns between three rules (one row) stay
/// lines. Page 3: a table ruled only across (above, under its header, below; columns from
/// the gaps every row leaves) is a table, prose between two rules of one width is not.
/// The same tables are `table` blocks in `json` (two header rows for the first).
#[tokio::test]
async fn ruled_tables_with_spans_and_open_sides_are_tables() {
    let app = TestApp::new().await;
    let pdf = fixture("pdf/ruled_tables.pdf");
    let r = app
        .upload_and_read("ruled_tables.pdf", &pdf, json!({"output": "markdown"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["text"],
        "--- Page 1 ---\n## Quarterly results by region\n\n\
         <table>\n<tr><th rowspan=\"2\">Region</th><th colspan=\"2\">Sales</th><th rowspan=\"2\">Staff</th></tr>\n\
         <tr><th>Q1</th><th>Q2</th></tr>\n<tr><td>North</td><td>120</td><td>135</td><td>14</td></tr>\n\
         <tr><td>South</td><td>98</td><td>101</td><td>9</td></tr>\n</table>\n\n\
         Figures in thousands.\n\nStaff counts are at year end.\n\n\
         | Term | Meaning |\n|---|---|\n| Q1 | January to March |\n| Q2 | April to June |\n\n\
         End of the report.\n\
         --- Page 2 ---\nA framed note is one box, not a table.\n\nIts words stay lines of text.\n\n\
         Left column words run here\n\nand carry on below.\n\n\
         Right column words run here and end the page.\n\
         --- Page 3 ---\nTable 2: Results on the test set\n\n\
         | Model | Precision | Recall | F1 |\n|---|---|---|---|\n| Baseline | 0.71 | 0.65 | 0.68 |\n\
         | Ours | 0.84 | 0.80 | 0.82 |\n| Ours with rules | 0.86 | 0.81 | 0.83 |\n\n\
         The model improves on every measure.\n\n\
         A quoted passage set between two rules reads as prose and\n\n\
         never as a table, whatever the gaps between its words may\n\n\
         happen to be on one line or another of the passage.\n"
    );
    let r = app
        .upload_and_read("ruled_tables.pdf", &pdf, json!({"output": "json"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let tables = document_blocks(&r.json, |b| b["kind"] == "table");
    assert_eq!(tables.len(), 3, "{}", r.json["document"]);
    assert_eq!(tables[0]["header_rows"], 2);
    assert_eq!(
        tables[0]["rows"],
        json!([
            ["Region", "Sales", "", "Staff"],
            ["", "Q1", "Q2", ""],
            ["North", "120", "135", "14"],
            ["South", "98", "101", "9"]
        ])
    );
    assert_eq!(
        tables[0]["spans"],
        json!([{"row": 0, "column": 0, "rows": 2, "columns": 1}, {"row": 0, "column": 1, "rows": 1, "columns": 2}, {"row": 0, "column": 3, "rows": 2, "columns": 1}])
    );
    assert_eq!(tables[1]["header_rows"], 1);
    assert!(tables[1].get("spans").is_none(), "{}", tables[1]);
    // Where each table stands: points from the page's top-left (an A4 page, 842 high: the
    // first table's rules run from x 50 to 410 and y 700 down to 620).
    let bbox: Vec<f64> = tables[0]["bbox"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (got, want) in bbox.iter().zip([50.0, 142.0, 410.0, 222.0]) {
        assert!((got - want).abs() <= 1.0, "{bbox:?}");
    }
    assert_eq!(tables[2]["header_rows"], 1);
    assert_eq!(
        tables[2]["rows"][3],
        json!(["Ours with rules", "0.86", "0.81", "0.83"])
    );
    assert_eq!(tables[1]["rows"][2], json!(["Q2", "April to June"]));
    // Plain text keeps the page's lines.
    let r = app
        .upload_and_read("ruled_tables.pdf", &pdf, json!({}))
        .await;
    let t = r.json["text"].as_str().unwrap();
    assert!(!t.contains('|') && t.contains("North 120 135 14"), "{t}");
}

/// Tables without any rule (#44 item 5), found where three lines or more stand in clear
/// columns: a sparse table (rows filling some columns, as inventory reports set them) keeps
/// each value in its column, a wrapped cell at its own line spacing stays in its row; a
/// bulleted list, a fixed-width listing with comments set apart, a form's lines with dot
/// leaders and the labels of a drawn figure stay lines. The same tables are `table`
/// blocks in `json`; plain text keeps the page's lines.
#[tokio::test]
async fn tables_without_rules_are_tables_where_their_columns_are_clear() {
    let app = TestApp::new().await;
    let pdf = fixture("pdf/borderless_tables.pdf");
    let r = app
        .upload_and_read("borderless.pdf", &pdf, json!({"output": "markdown"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["text"],
        "--- Page 1 ---\n## Inventory variance\n\n\
         | Product Code | Location | Expected | Actual | Status |\n|---|---|---|---|---|\n\
         | SKU-8847 | A-12 | 450 |  |  |\n|  | B-07 |  | 289 |  |\n\
         | SKU-9201 |  | 780 | 778 | OK |\n|  | C-15 |  |  | CHECK |\n\
         | SKU-4563 | D-22 |  | 156 | CRITICAL |\n\n\
         Counted on the morning of the audit.\n\n\
         | Step | What is done | Owner |\n|---|---|---|\n\
         | 1 | Count every shelf twice over | Team A |\n| 2 | Compare with stock | Team B |\n\
         | 3 | Report the variance | Auditor |\n\n\
         The checks that follow:\n\n\
         \u{2022} Shelves\n\u{2022} Loading bays\n\u{2022} Returns cage\n\u{2022} Office\n\
         --- Page 2 ---\n\
         mov ecx, ebx ; keep the count\n\nadd esp, 8 ; drop two words\n\n\
         call set_item ; store the item\n\njmp done ; leave the loop\n\n\
         7 Wages and salaries . . . . . . . . . 7\n\n8a Taxable interest . . . . . . . . . 8a\n\n\
         9 Dividends . . . . . . . . . 9\n\n\
         a0 b1 c2\n\na0 b1 c2\n\na0 b1 c2\n"
    );
    let r = app
        .upload_and_read("borderless.pdf", &pdf, json!({"output": "json"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let tables = document_blocks(&r.json, |b| b["kind"] == "table");
    assert_eq!(tables.len(), 2, "{}", r.json["document"]);
    assert_eq!(tables[0]["header_rows"], 1);
    assert_eq!(tables[0]["rows"][2], json!(["", "B-07", "", "289", ""]));
    assert_eq!(
        tables[1]["rows"][1],
        json!(["1", "Count every shelf twice over", "Team A"])
    );
    let r = app.upload_and_read("borderless.pdf", &pdf, json!({})).await;
    let t = r.json["text"].as_str().unwrap();
    assert!(!t.contains('|') && t.contains("SKU-9201 780 778 OK"), "{t}");
}

/// Subheads in another typeface a little larger than the body (#44 item 6): a sans line of
/// its own over a serif body is a heading, a numbered one right under a section heading
/// too; a line as large in the body's own typeface, and a sans sentence, stay text.
#[tokio::test]
async fn subheads_in_another_typeface_are_headings() {
    let app = TestApp::new().await;
    let r = app
        .upload_and_read(
            "typeface.pdf",
            &fixture("pdf/typeface_headings.pdf"),
            json!({"output": "markdown"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let m = r.json["text"].as_str().unwrap();
    let heads: Vec<&str> = m.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        heads,
        [
            "## 2 Methods",
            "### (1) Scope of the survey",
            "### Field Procedure"
        ],
        "{m}"
    );
    for text in [
        "A Larger Line In The Body Font",
        "Sans lines that are sentences end with a stop.",
    ] {
        assert!(m.lines().any(|l| l == text), "{text:?} is text: {m}");
    }
}
